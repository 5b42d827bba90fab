//! A fuzz-style test of `dmlsched pcip`: the built binary runs on generated
//! packing–covering programs and on mutations of `examples/pcip/*.json`
//! (extreme coefficients and right-hand sides, bounds 0/1/2^31/null,
//! non-numbers, wrong list lengths, kind mixes), with random flags
//! (`--exact`, `--no-neighbourhood`, tiny or short `--time-limit`, trials,
//! seeds). Seeded and deterministic.
//!
//! Oracle: the exit code is 0 or 2 and nothing else; an exit 2 prints
//! exactly one `error:` line; an exit-0 answer has a finite objective, a
//! point within every bound and row of the input (tolerance 1e-6 relative)
//! and certificate bounds on the right side of the objective
//! (`tests/pcip_check`). Every run is under the watchdog (time, 1 GiB).
//!
//! `DMLSCHED_FUZZ_CASES=N` runs N cases (default 400);
//! `DMLSCHED_FUZZ_SEED=S` changes the seed.
#![cfg(feature = "cli")]

mod common;
mod pcip_check;

use common::*;
use serde_json::{Value, json};

/// Default number of cases (a debug build runs them in well under 40 s).
const DEFAULT_CASES: u64 = 400;
/// Watchdog ceiling per run (hangs only; not a timing target).
const HANG_S: f64 = 30.0;

/// SplitMix64: small, seeded, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
    fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }
}

/// Text spliced in raw where JSON has no value for it (non-numbers,
/// out-of-range literals); written as a marker string, replaced at the end.
const RAW: &[&str] = &[
    "1e400", "-1e400", "NaN", "\"inf\"", "\"1\"", "true", "{}", "[]",
];

fn raw(i: usize) -> Value {
    Value::String(format!("__RAW{i}__"))
}

fn to_text(v: &Value) -> String {
    let mut s = v.to_string();
    for (i, r) in RAW.iter().enumerate() {
        s = s.replace(&format!("\"__RAW{i}__\""), r);
    }
    s
}

fn coefficient(r: &mut Rng, wild: bool) -> Value {
    match if wild { r.below(10) } else { 2 + r.below(8) } {
        0 => json!(r.pick(&[1e-9, 2e-9, 1e-8, 0.0])),
        1 => json!(r.pick(&[1e9, 4294967295.0, 1e14, 9.9e14, 1e15])),
        2 => json!(r.pick(&[0.5, 2.5, 4.58, 1.0 / 3.0])),
        _ => json!(1 + r.below(6)),
    }
}

fn rhs(r: &mut Rng, wild: bool) -> Value {
    match if wild { r.below(10) } else { 2 + r.below(8) } {
        0 => json!(r.pick(&[1e15, 1e18, 9.9e19, 1e20, 9007199254740993.0])),
        1 => json!(r.pick(&[1e-9, 1e-12, 0.0, -1.0])),
        2 => json!(r.pick(&[0.5, 2.5, 7.25])),
        _ if wild => json!(1 + r.below(8)),
        _ => json!(1 + r.below(3)),
    }
}

fn upper(r: &mut Rng, wild: bool) -> Value {
    match if wild { r.below(10) } else { 3 + r.below(7) } {
        0 => Value::Null,
        1 => json!(r.pick(&[1073741824.0, 2147483648.0, 4294967295.0, 1e19])),
        2 => json!(r.pick(&[0.0, 1.5, -1.0])),
        // Mostly at least 1, so that covering rows stay reachable.
        _ => json!(r.pick(&[0, 1, 1, 2, 3, 5])),
    }
}

fn row(r: &mut Rng, n: usize, linking: bool, wild: bool) -> Value {
    let k = 1 + r.below(n.min(4));
    let mut cols: Vec<usize> = (0..n).collect();
    let mut entries = Vec::new();
    for _ in 0..k {
        let j = cols.swap_remove(r.below(cols.len()));
        let mut a = coefficient(r, wild);
        if linking && r.chance(0.5) {
            a = json!(-a.as_f64().unwrap_or(1.0));
        }
        entries.push(json!([j, a]));
    }
    let mut row = json!({"entries": entries, "rhs": rhs(r, wild)});
    if linking {
        row["sense"] = json!(r.pick(&["le", "ge"]));
        row["rhs"] = json!(r.below(4) as f64 - 1.0);
    }
    row
}

/// A random small program.
fn generated(r: &mut Rng) -> Value {
    let n = 1 + r.below(6);
    // Most generated programs are valid, with ordinary magnitudes; the
    // others draw from the extreme palettes too.
    let wild = r.chance(0.3);
    let general = r.chance(0.15);
    let objective: Vec<Value> = (0..n)
        .map(|_| match r.below(8) {
            0 => json!(0),
            1 if wild => json!(r.pick(&[0.5, 1e6, 1e19, 1e-12])),
            2 if general => json!(-(1.0 + r.below(3) as f64)),
            _ => json!(1 + r.below(9)),
        })
        .collect();
    let mut v = json!({
        "format_version": 1,
        "sense": r.pick(&["minimise", "maximise"]),
        "n_vars": n,
        "objective": objective,
    });
    if general {
        v["general"] = json!(true);
    }
    let kinds: Vec<&str> = (0..n)
        .map(|_| r.pick(&["integer", "integer", "binary", "continuous"]))
        .collect();
    if r.chance(0.5) {
        v["kinds"] = json!(kinds);
    }
    if r.chance(0.8) {
        let given_kinds = v.get("kinds").is_some();
        let ups: Vec<Value> = (0..n)
            .map(|j| match (given_kinds && !wild, kinds[j]) {
                (true, "binary") => json!(r.pick(&[0, 1, 1])),
                _ => upper(r, wild),
            })
            .collect();
        v["upper"] = Value::Array(ups);
    }
    for (class, most) in [("packing", 3), ("covering", 3), ("linking", 2)] {
        let m = r.below(most + 1);
        if m > 0 {
            let rows: Vec<Value> = (0..m)
                .map(|_| row(r, n, class == "linking", wild))
                .collect();
            v[class] = Value::Array(rows);
        }
    }
    v
}

/// Every numeric leaf's path (object keys and array indices).
fn numeric_paths(v: &Value, path: &mut Vec<Value>, out: &mut Vec<Vec<Value>>) {
    match v {
        Value::Number(_) | Value::Null => out.push(path.clone()),
        Value::Array(xs) => {
            for (i, x) in xs.iter().enumerate() {
                path.push(json!(i));
                numeric_paths(x, path, out);
                path.pop();
            }
        }
        Value::Object(m) => {
            for (k, x) in m {
                path.push(json!(k));
                numeric_paths(x, path, out);
                path.pop();
            }
        }
        _ => {}
    }
}

fn at<'a>(v: &'a mut Value, path: &[Value]) -> Option<&'a mut Value> {
    path.iter().try_fold(v, |v, k| match k {
        Value::String(s) => v.get_mut(s.as_str()),
        Value::Number(i) => v.get_mut(i.as_u64()? as usize),
        _ => None,
    })
}

/// One mutation of a program.
fn mutate(r: &mut Rng, v: &mut Value) {
    let mut paths = Vec::new();
    numeric_paths(v, &mut Vec::new(), &mut paths);
    match r.below(8) {
        // An extreme or odd number (or a non-number) somewhere.
        0..=3 if !paths.is_empty() => {
            let p = r.pick(&paths);
            let new = match r.below(6) {
                0 => raw(r.below(RAW.len())),
                1 => Value::Null,
                2 => coefficient(r, true),
                3 => rhs(r, true),
                4 => upper(r, true),
                _ => json!(r.pick(&[-0.0, -1.0, 1e308, 5e-324, 2147483648.0])),
            };
            if let Some(slot) = at(v, &p) {
                *slot = new;
            }
        }
        // A per-column list of the wrong length, or a kind mix.
        4 => {
            let n = v["n_vars"].as_u64().unwrap_or(1).min(8) as usize;
            let field = r.pick(&["upper", "kinds", "objective", "col_labels"]);
            let len = r.pick(&[0, n.saturating_sub(1), n + 1, n]);
            let item = |r: &mut Rng| match field {
                "kinds" => json!(r.pick(&["integer", "binary", "continuous"])),
                "col_labels" => json!("c"),
                "upper" => upper(r, true),
                _ => json!(1 + r.below(4)),
            };
            v[field] = Value::Array((0..len).map(|_| item(r)).collect());
        }
        // n_vars off by one, or huge.
        5 => {
            let n = v["n_vars"].as_u64().unwrap_or(1);
            v["n_vars"] = json!(r.pick(&[n + 1, n.saturating_sub(1), 1 << 40]));
        }
        // A row dropped or added.
        6 => {
            let class = r.pick(&["packing", "covering", "linking"]);
            let n = v["n_vars"].as_u64().unwrap_or(1).clamp(1, 8) as usize;
            let new = row(r, n, class == "linking", true);
            match v.get_mut(class).and_then(Value::as_array_mut) {
                Some(rows) if !rows.is_empty() && r.chance(0.5) => {
                    rows.remove(r.below(rows.len()));
                }
                Some(rows) => rows.push(new),
                None => v[class] = json!([new]),
            }
        }
        // A field removed or an unknown one added.
        _ => {
            if r.chance(0.5) {
                let key = r.pick(&["upper", "kinds", "packing", "sense", "objective"]);
                if let Some(m) = v.as_object_mut() {
                    m.remove(key);
                }
            } else {
                v["unknown_field"] = json!(1);
            }
        }
    }
}

fn flags(r: &mut Rng) -> Vec<String> {
    let mut f = Vec::new();
    if r.chance(0.25) {
        f.push("--exact".to_string());
    }
    if r.chance(0.25) {
        f.push("--no-neighbourhood".to_string());
    }
    if r.chance(0.35) {
        f.push("--time-limit".to_string());
        let t = if r.chance(0.05) {
            "-1"
        } else {
            r.pick(&["1e-9", "1e-6", "0.01", "1", "5e-324"])
        };
        f.push(t.to_string());
    }
    if r.chance(0.2) {
        f.push("--trials".to_string());
        f.push((1 + r.below(4)).to_string());
    }
    if r.chance(0.2) {
        f.push("--seed".to_string());
        f.push(r.below(1000).to_string());
    }
    if r.chance(0.05) {
        f.push("--bound-budget".to_string());
        f.push(r.pick(&["0.01", "0.01", "0"]).to_string());
    }
    f
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

#[test]
fn pcip_answers_every_input_with_a_checked_answer_or_one_error_line() {
    let cases = env_u64("DMLSCHED_FUZZ_CASES", DEFAULT_CASES);
    let mut r = Rng(env_u64("DMLSCHED_FUZZ_SEED", 30));
    let examples: Vec<Value> = ["ka1", "ka2", "ka2b", "ka3", "ka4", "ka5", "ka6"]
        .iter()
        .map(|k| {
            let text = std::fs::read_to_string(format!("examples/pcip/{k}.json")).unwrap();
            serde_json::from_str(&text).unwrap()
        })
        .collect();
    let dir = std::env::temp_dir().join(format!("dmlsched-fuzz-pcip-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (mut solved, mut refused) = (0u64, 0u64);
    for case in 0..cases {
        let mut v = if r.chance(0.6) {
            generated(&mut r)
        } else {
            let mut v = r.pick(&examples);
            for _ in 0..1 + r.below(3) {
                mutate(&mut r, &mut v);
            }
            v
        };
        if r.chance(0.15) {
            mutate(&mut r, &mut v);
        }
        let text = to_text(&v);
        let file = dir.join(format!("case{}.json", case % 8));
        std::fs::write(&file, &text).unwrap();
        let file = file.to_string_lossy().into_owned();
        let fl = flags(&mut r);
        let mut args = vec!["pcip", file.as_str()];
        args.extend(fl.iter().map(String::as_str));
        let what = format!(
            "case {case}: pcip <program> {}\nprogram: {text}",
            fl.join(" ")
        );
        let run = dmlsched_within(HANG_S, &args);
        match run.code {
            Some(0) => {
                pcip_check::check_answer(&text, &run.stdout, &what);
                solved += 1;
            }
            Some(2) => {
                let line = run.one_error_line(&what);
                if std::env::var_os("DMLSCHED_FUZZ_VERBOSE").is_some() {
                    eprintln!(
                        "case {case}: {}",
                        line.chars().take(200).collect::<String>()
                    );
                }
                refused += 1;
            }
            _ => panic!("{what}\nexit code {:?}: {}", run.code, run.stderr),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("fuzz_pcip: {cases} cases, {solved} answered, {refused} refused (exit 2)");
    assert_eq!(solved + refused, cases);
    if cases >= 100 {
        assert!(solved >= cases / 5, "only {solved} of {cases} answered");
    }
}

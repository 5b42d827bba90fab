//! An independent checker of `dmlsched pcip` answers, shared by
//! `tests/repro_pcip.rs` and `tests/fuzz_pcip.rs`: it reads the program
//! from its JSON text (not through the crate) and the answer from the
//! command's stdout, and checks the point against every bound and row, the
//! objective against the point, and the certificate's bounds against the
//! objective.

use serde_json::Value;

/// Relative tolerance of the checks (`tol · max(1, |value|)`).
pub const TOL: f64 = 1e-6;

/// A row: entries, right-hand side, and whether it is `≤` (else `≥`).
pub type Row = (Vec<(usize, f64)>, f64, bool);

/// A program as its JSON file states it.
#[derive(Debug, Clone)]
pub struct Program {
    /// Minimise (else maximise).
    pub minimise: bool,
    /// Objective coefficients.
    pub objective: Vec<f64>,
    /// Upper bounds (`inf` for null).
    pub upper: Vec<f64>,
    /// Whether each column must be integral.
    pub integer: Vec<bool>,
    /// Every row of every class.
    pub rows: Vec<Row>,
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) if s == "inf" => Some(f64::INFINITY),
        Value::String(s) if s == "-inf" => Some(f64::NEG_INFINITY),
        _ => None,
    }
}

fn entries(row: &Value) -> Vec<(usize, f64)> {
    row["entries"]
        .as_array()
        .map(|es| {
            es.iter()
                .filter_map(|e| Some((e[0].as_u64()? as usize, num(&e[1])?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Reads a program the command accepted (so a well-formed one).
pub fn parse_program(text: &str) -> Program {
    let v: Value = serde_json::from_str(text).expect("the program is JSON");
    let n = v["n_vars"].as_u64().expect("n_vars") as usize;
    let objective: Vec<f64> = v["objective"]
        .as_array()
        .expect("objective")
        .iter()
        .map(|c| num(c).expect("objective coefficient"))
        .collect();
    let kinds: Vec<String> = (0..n)
        .map(|j| {
            v["kinds"]
                .get(j)
                .and_then(Value::as_str)
                .unwrap_or("integer")
                .to_string()
        })
        .collect();
    let upper = (0..n)
        .map(|j| {
            let given = match v.get("upper") {
                Some(Value::Array(u)) => u.get(j).cloned(),
                _ => None,
            };
            match (given, kinds[j].as_str()) {
                (None, _) => 1.0,
                (Some(Value::Null), "binary") => 1.0,
                (Some(Value::Null), _) => f64::INFINITY,
                (Some(u), _) => num(&u).expect("upper bound"),
            }
        })
        .collect();
    let mut rows = Vec::new();
    for (class, le) in [
        ("packing", Some(true)),
        ("covering", Some(false)),
        ("linking", None),
    ] {
        for r in v[class].as_array().into_iter().flatten() {
            let le = le.unwrap_or_else(|| r["sense"].as_str() == Some("le"));
            rows.push((entries(r), num(&r["rhs"]).expect("rhs"), le));
        }
    }
    Program {
        minimise: v["sense"].as_str() == Some("minimise"),
        objective,
        upper,
        integer: kinds.iter().map(|k| k != "continuous").collect(),
        rows,
    }
}

/// What an exit-0 answer said, once checked.
#[allow(dead_code)]
#[derive(Debug, Clone)]
pub struct Answer {
    /// The point.
    pub x: Vec<f64>,
    /// Its objective.
    pub objective: f64,
    /// The certificate's relaxation bound.
    pub bound: f64,
    /// The whole output.
    pub json: Value,
}

fn slack(v: f64) -> f64 {
    TOL * v.abs().max(1.0)
}

/// Checks an exit-0 answer of `dmlsched pcip` on the program `text`:
/// a finite objective equal to `c·x`; `x` within every bound (integral on
/// integer columns) and every row (tolerance [`TOL`] relative); the
/// certificate's relaxation bound and any exact dual bound on the right side
/// of the objective; guarantee values not beyond the relaxation bound.
/// Panics with `what` and the reason otherwise.
pub fn check_answer(text: &str, stdout: &str, what: &str) -> Answer {
    let p = parse_program(text);
    let json: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{what}: stdout is not one JSON object ({e}): {stdout:.300}"));
    let x: Vec<f64> = json["x"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: no x"))
        .iter()
        .map(|v| num(v).unwrap_or(f64::NAN))
        .collect();
    assert_eq!(x.len(), p.objective.len(), "{what}: length of x");
    let objective = num(&json["objective"]).unwrap_or(f64::NAN);
    assert!(objective.is_finite(), "{what}: objective {objective}");
    let cx: f64 = p.objective.iter().zip(&x).map(|(c, v)| c * v).sum();
    let scale: f64 = p.objective.iter().zip(&x).map(|(c, v)| (c * v).abs()).sum();
    assert!(
        (cx - objective).abs() <= slack(scale),
        "{what}: objective {objective} but c·x = {cx}"
    );
    for (j, &v) in x.iter().enumerate() {
        let u = p.upper[j];
        assert!(
            v.is_finite() && v >= -TOL && v <= u + slack(u.min(1e300)),
            "{what}: x[{j}] = {v} outside [0, {u}]"
        );
        if p.integer[j] {
            assert!(
                (v - v.round()).abs() <= TOL,
                "{what}: x[{j}] = {v} not integral"
            );
        }
    }
    for (i, (es, rhs, le)) in p.rows.iter().enumerate() {
        let lhs: f64 = es.iter().map(|&(j, a)| a * x[j]).sum();
        let size: f64 = es
            .iter()
            .map(|&(j, a)| (a * x[j]).abs())
            .sum::<f64>()
            .max(rhs.abs());
        let deficit = if *le { lhs - rhs } else { rhs - lhs };
        assert!(
            deficit <= slack(size),
            "{what}: row {i} ({}) broken: lhs {lhs}, rhs {rhs}",
            if *le { "≤" } else { "≥" }
        );
    }
    let cert = &json["certificate"];
    let bound = num(&cert["relaxation_bound"]["value"])
        .unwrap_or_else(|| panic!("{what}: no relaxation bound"));
    let right_side = |b: f64| {
        if p.minimise {
            b <= objective + slack(objective)
        } else {
            b >= objective - slack(objective)
        }
    };
    assert!(
        !bound.is_nan() && right_side(bound),
        "{what}: relaxation bound {bound} on the wrong side of the objective {objective}"
    );
    if let Some(d) = num(&cert["exact"]["dual_bound"]).filter(|d| d.is_finite()) {
        assert!(
            right_side(d),
            "{what}: exact dual bound {d} on the wrong side of the objective {objective}"
        );
    }
    for g in cert["guarantees"].as_array().into_iter().flatten() {
        let (Some(v), Some("InExpectation")) = (num(&g["value"]), g["kind"].as_str()) else {
            continue;
        };
        let beyond = if p.minimise {
            v < bound - slack(bound)
        } else {
            v > bound + slack(bound)
        };
        assert!(
            !beyond,
            "{what}: guarantee value {v} beyond the proven bound {bound}: {}",
            g["expression"]
        );
    }
    Answer {
        x,
        objective,
        bound,
        json,
    }
}

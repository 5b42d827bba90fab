//! The crate's layer order, checked on its sources: a module imports only
//! modules of lower layers or of its own layer, and the modules of layer 3
//! (the algorithms, the baselines, the reports), side by side, import none
//! of the others.
//!
//! | layer | modules |
//! |---|---|
//! | 0 | `model`, `exact` (crate-private whole-number tests) |
//! | 1 | `certificate`, `schedule`, `lp`, `timing` |
//! | 2 | `pcip`, `online`, `sim`, `trace`, `calibrate`, `placement`, `state` (infrastructure) |
//! | 3 | `algorithms`, `allocate` (the allocation policies' LPs), `baselines`, `report` (CSV tables and SVG plots of runs) |
//! | 4 | `experiments`, `registry` |
//! | 5 | `replay` (the command line's replay pipeline, on the registry), `protocol` (the session protocol's driver, on the registry), `sweep` (grids of replays, resumable and sharded, on `replay`) |
//!
//! `lib.rs`, `error.rs` (the crate's facade) and `src/bin` are exempt.
//! Every `crate::…` path outside comments, strings and a file's trailing
//! `#[cfg(test)]` module counts. The imports that break the order today
//! are listed in [`KNOWN`]: the list may only shrink (a listed import that
//! is gone fails the test too, so the list stays true).

use std::collections::BTreeSet;
use std::path::Path;

/// Known breaks of the order, `(file under src/, imported module)`, to be
/// removed by moving the shared placement engine below both algorithms and
/// baselines and the policy registry above them.
const KNOWN: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<u32> {
    Some(match module {
        "model" | "exact" => 0,
        "certificate" | "schedule" | "lp" | "timing" => 1,
        "pcip" | "online" | "sim" | "trace" | "calibrate" | "placement" | "state" => 2,
        "algorithms" | "allocate" | "baselines" | "report" => 3,
        "experiments" | "registry" => 4,
        "replay" | "protocol" | "sweep" => 5,
        _ => return None,
    })
}

/// The source without comments, string literals and a trailing test
/// module.
fn code(src: &str) -> String {
    // A test module at the top level of the file: `#[cfg(test)]` (or
    // `#[cfg(all(test, …))]`) at the start of a line, followed by a `mod`
    // line.
    let cut = src.match_indices("\n#[cfg(").find_map(|(i, _)| {
        let mut lines = src[i + 1..].lines();
        let attr = lines.next().unwrap_or("");
        let test = attr == "#[cfg(test)]" || attr.starts_with("#[cfg(all(test,");
        let next = lines.next().unwrap_or("");
        (test && next.contains("mod ") && next.trim_end().ends_with('{')).then_some(i)
    });
    let src = cut.map_or(src, |i| &src[..i]);
    let mut out = String::with_capacity(src.len());
    let b = src.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            i = src[i + 2..].find("*/").map_or(b.len(), |j| i + 2 + j + 2);
        } else if b[i] == b'\'' && (b.get(i + 2) == Some(&b'\'') || b.get(i + 1) == Some(&b'\\')) {
            // A char literal ('"', '\n', '\''); a lifetime has no closing quote.
            let close = src[i + 2..].find('\'').map_or(b.len(), |j| i + 2 + j + 1);
            i = close;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The top-level modules a source names through `crate::`.
fn imports(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + 7..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            visit(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

#[test]
fn every_import_follows_the_layer_order() {
    let mut files = Vec::new();
    visit(Path::new("src"), &mut files);
    files.sort();
    let mut found = BTreeSet::new();
    for f in &files {
        let rel = f
            .strip_prefix("src")
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let top = rel
            .split('/')
            .next()
            .unwrap()
            .trim_end_matches(".rs")
            .to_string();
        let Some(own) = layer(&top) else {
            assert!(
                ["lib", "error", "bin"].contains(&top.as_str()),
                "{rel}: a top-level module without a layer ({top}): add it to the table"
            );
            continue;
        };
        let src = std::fs::read_to_string(f).unwrap();
        for m in imports(&code(&src)) {
            let Some(theirs) = layer(&m) else { continue };
            let side_by_side = own == 3 && theirs == 3 && m != top;
            if theirs > own || side_by_side {
                found.insert((rel.clone(), m));
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|(f, m)| (f.to_string(), m.to_string()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(new.is_empty(), "imports against the layer order: {new:?}");
    assert!(
        gone.is_empty(),
        "no longer imported, remove from KNOWN: {gone:?}"
    );
}

//! JSON input of packing–covering programs (`docs/pcip-format.md`).

use super::error::PcError;
use super::problem::{MAX_VARS, PcBuilder, PcProblem, RowLabels, RowSense};
use crate::certificate::Sense;

/// The JSON format version read by [`PcProblem::from_json`].
pub const PC_FORMAT_VERSION: u32 = 1;

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PcFile {
    format_version: u32,
    sense: FileSense,
    n_vars: usize,
    objective: Vec<f64>,
    #[serde(default)]
    upper: Option<Vec<Option<f64>>>,
    #[serde(default)]
    kinds: Option<Vec<FileKind>>,
    #[serde(default)]
    packing: Vec<FileRow>,
    #[serde(default)]
    covering: Vec<FileRow>,
    #[serde(default)]
    linking: Vec<FileLinkingRow>,
    #[serde(default)]
    col_labels: Option<Vec<String>>,
    #[serde(default)]
    general: bool,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum FileSense {
    Minimise,
    Maximise,
}

#[derive(serde::Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum FileKind {
    Integer,
    Binary,
    Continuous,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileRow {
    #[serde(default)]
    label: Option<String>,
    entries: Vec<(usize, f64)>,
    rhs: f64,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct FileLinkingRow {
    #[serde(default)]
    label: Option<String>,
    entries: Vec<(usize, f64)>,
    sense: FileRowSense,
    rhs: f64,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "lowercase")]
enum FileRowSense {
    Le,
    Ge,
}

impl PcProblem {
    /// Reads a program from JSON (`docs/pcip-format.md`) and validates it.
    ///
    /// ```
    /// use dmlsched::pcip::PcProblem;
    /// let p = PcProblem::from_json(r#"{"format_version": 1, "sense": "minimise", "n_vars": 2,
    ///     "objective": [1, 2], "upper": [3, null],
    ///     "covering": [{"label": "demand", "entries": [[0, 1], [1, 1]], "rhs": 4}]}"#).unwrap();
    /// assert_eq!(p.upper(1), f64::INFINITY);
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::Error::Json`] for malformed JSON or unknown fields;
    /// [`crate::Error::Pc`] for an unsupported `format_version`
    /// ([`PcError::InvalidOption`]), an `n_vars` above
    /// [`MAX_VARS`](super::MAX_VARS) ([`PcError::TooLarge`]) or different
    /// from the objective's length ([`PcError::DimensionMismatch`], checked
    /// before anything of size `n_vars` is allocated), or an invalid program
    /// (V1–V11).
    pub fn from_json(text: &str) -> crate::Result<PcProblem> {
        let f: PcFile = crate::error::json_from_str(text)?;
        Ok(f.into_problem()?)
    }
}

impl PcFile {
    fn into_problem(self) -> Result<PcProblem, PcError> {
        if self.format_version != PC_FORMAT_VERSION {
            return Err(PcError::InvalidOption {
                option: "format_version",
                reason: format!(
                    "{} is not supported (this crate reads {PC_FORMAT_VERSION})",
                    self.format_version
                ),
            });
        }
        let sense = match self.sense {
            FileSense::Minimise => Sense::Minimise,
            FileSense::Maximise => Sense::Maximise,
        };
        let n = self.n_vars;
        // Sizes first, against what the file holds: `n_vars` alone must not
        // drive an allocation (a huge value would abort the process).
        if n > MAX_VARS {
            return Err(PcError::TooLarge {
                what: "n_vars (number of variables)",
                size: n,
                limit: MAX_VARS,
            });
        }
        if self.objective.len() != n {
            return Err(PcError::DimensionMismatch {
                what: "objective (one entry per variable, n_vars)",
                expected: n,
                got: self.objective.len(),
            });
        }
        let mut b = if self.general {
            PcBuilder::general(sense, n)
        } else {
            PcBuilder::new(sense, n)
        };
        b = b.objective(self.objective);
        // Every per-column list, when given, has exactly n entries (an empty
        // list for n > 0 is a mismatch like any other length).
        check_len("kinds", self.kinds.as_ref().map(Vec::len), n)?;
        check_len("upper", self.upper.as_ref().map(Vec::len), n)?;
        check_len("col_labels", self.col_labels.as_ref().map(Vec::len), n)?;
        let kinds = self.kinds.unwrap_or_default();
        let upper = self.upper.unwrap_or_default();
        for j in 0..n {
            let kind = kinds.get(j).copied().unwrap_or(FileKind::Integer);
            // Without `upper`, every bound is 1 (a 0/1 program).
            let u = upper.get(j).copied().unwrap_or(Some(1.0));
            b = match kind {
                // A binary column's own bound is 1; a given bound of 0 fixes
                // it at 0 and `null` or 1 keeps it at 1; any other bound is
                // refused rather than ignored.
                FileKind::Binary => match u {
                    None | Some(1.0) => b.binary(j),
                    Some(0.0) => b.binary(j).upper(j, Some(0)),
                    Some(v) => return Err(PcError::InvalidUpper { col: j, value: v }),
                },
                FileKind::Continuous => b.continuous(j, u.unwrap_or(f64::INFINITY)),
                FileKind::Integer => match u {
                    None => b.upper(j, None),
                    Some(v) if v >= 0.0 && v.fract() == 0.0 && v <= f64::from(u32::MAX) => {
                        b.upper(j, Some(v as u32))
                    }
                    Some(v) => return Err(PcError::InvalidUpper { col: j, value: v }),
                },
            };
        }
        let mut labels = RowLabels::default();
        let any_label = self
            .packing
            .iter()
            .chain(&self.covering)
            .any(|r| r.label.is_some())
            || self.linking.iter().any(|r| r.label.is_some());
        let name = |l: &Option<String>, class: &str, i: usize| {
            l.clone().unwrap_or_else(|| format!("{class}[{i}]"))
        };
        for (i, r) in self.packing.iter().enumerate() {
            b = b.packing_row(&r.entries, r.rhs);
            labels.packing.push(name(&r.label, "packing", i));
        }
        for (i, r) in self.covering.iter().enumerate() {
            b = b.covering_row(&r.entries, r.rhs);
            labels.covering.push(name(&r.label, "covering", i));
        }
        for (i, r) in self.linking.iter().enumerate() {
            let s = match r.sense {
                FileRowSense::Le => RowSense::Le,
                FileRowSense::Ge => RowSense::Ge,
            };
            b = b.linking_row(&r.entries, s, r.rhs);
            labels.linking.push(name(&r.label, "linking", i));
        }
        if any_label || self.col_labels.is_some() {
            b = b.labels(
                if any_label {
                    labels
                } else {
                    RowLabels::default()
                },
                self.col_labels.unwrap_or_default(),
            );
        }
        b.build()
    }
}

/// A per-column list, when given, must hold one entry per variable.
fn check_len(what: &'static str, len: Option<usize>, n: usize) -> Result<(), PcError> {
    match len {
        Some(got) if got != n => Err(PcError::DimensionMismatch {
            what,
            expected: n,
            got,
        }),
        _ => Ok(()),
    }
}

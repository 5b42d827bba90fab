//! Shared reading and field parsing for every loader: one CSV/TSV reader
//! setup, header checks, and typed field accessors that turn every bad value
//! into a [`TraceError::Format`] naming the line and column.

use std::io::{Cursor, Read};
use std::rc::Rc;

use csv::{ReaderBuilder, StringRecord, Trim};

use super::{TraceError, TraceWarning, shown};
use crate::model::units::Num;

/// A `Format` error without a path (the path wrappers add it).
pub(crate) fn format_error(
    line: u64,
    column: Option<&str>,
    reason: impl Into<String>,
) -> TraceError {
    TraceError::Format {
        path: None,
        line,
        column: column.map(str::to_string),
        reason: reason.into(),
    }
}

/// The records of a delimited input, each with the 1-based line of the file
/// where it starts.
///
/// The input is read into memory first: the csv crate's own line counter
/// skips blank lines and miscounts CRLF files, so lines are computed here
/// from the records' byte positions.
pub(crate) struct Records {
    inner: csv::StringRecordsIntoIter<Cursor<Rc<[u8]>>>,
    data: Rc<[u8]>,
    newlines: Vec<usize>,
    /// The column names, once the layout is known (to name the column of a
    /// field that is not UTF-8).
    columns: Option<&'static [&'static str]>,
}

impl Records {
    /// The line of the first byte at or after `byte` that is not a line
    /// terminator (a record's position may point at the previous record's
    /// terminator or at skipped blank lines).
    fn line_at(&self, byte: u64) -> u64 {
        let mut b = usize::try_from(byte)
            .unwrap_or(usize::MAX)
            .min(self.data.len());
        while b < self.data.len() && matches!(self.data[b], b'\r' | b'\n') {
            b += 1;
        }
        1 + self.newlines.partition_point(|&o| o < b) as u64
    }

    /// Names the columns of the records that follow (and of the current
    /// one, for an error).
    pub(crate) fn set_columns(&mut self, columns: &'static [&'static str]) {
        self.columns = Some(columns);
    }

    /// A reading error as a `Format` error on the file's line where the
    /// record starts, naming the column when the layout is known. The csv
    /// crate's own message is not used: it carries its own record and line
    /// counts, which differ from the file's lines.
    fn error(&self, e: csv::Error) -> TraceError {
        let line = e.position().map_or(0, |p| self.line_at(p.byte()));
        match e.into_kind() {
            csv::ErrorKind::Io(source) => TraceError::Io { path: None, source },
            csv::ErrorKind::Utf8 { err, .. } => {
                let column = self.columns.and_then(|c| c.get(err.field())).copied();
                format_error(
                    line,
                    column,
                    format!(
                        "field {} is not valid UTF-8 (after {} valid bytes)",
                        err.field() + 1,
                        err.valid_up_to()
                    ),
                )
            }
            csv::ErrorKind::UnequalLengths {
                expected_len, len, ..
            } => format_error(
                line,
                None,
                format!("found {len} fields, expected {expected_len}"),
            ),
            _ => format_error(line, None, "the record cannot be read as CSV"),
        }
    }
}

impl Iterator for Records {
    type Item = Result<(u64, StringRecord), TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        Some(match self.inner.next()? {
            Ok(rec) => {
                let line = self.line_at(rec.position().map_or(0, csv::Position::byte));
                Ok((line, rec))
            }
            Err(e) => Err(self.error(e)),
        })
    }
}

/// Reads `reader` and splits it into records.
///
/// No header handling (loaders check it themselves), flexible field counts
/// (checked per row by [`Row::new`]), fields trimmed, empty lines skipped.
/// Quoting is on for commas and off for tabs (Gavel commands may contain
/// quotes but never tabs).
///
/// # Errors
///
/// `Io` if reading fails.
pub(crate) fn records<R: Read>(mut reader: R, delimiter: u8) -> Result<Records, TraceError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|source| TraceError::Io { path: None, source })?;
    let newlines = bytes
        .iter()
        .enumerate()
        .filter_map(|(i, &b)| (b == b'\n').then_some(i))
        .collect();
    let data: Rc<[u8]> = bytes.into();
    let inner = ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(Trim::All)
        .delimiter(delimiter)
        .quoting(delimiter != b'\t')
        .from_reader(Cursor::new(Rc::clone(&data)))
        .into_records();
    Ok(Records {
        inner,
        data,
        newlines,
        columns: None,
    })
}

/// Reads the header record and checks it against `expected`; returns the
/// records that follow.
///
/// # Errors
///
/// `Empty` for an input without records, `Format` on line 1 naming the first
/// mismatching column.
pub(crate) fn with_header<R: Read>(
    reader: R,
    expected: &'static [&'static str],
) -> Result<Records, TraceError> {
    let mut it = records(reader, b',')?;
    it.set_columns(expected);
    let (line, header) = it.next().ok_or(TraceError::Empty { path: None })??;
    let found: Vec<&str> = header_fields(&header);
    check_header(line, &found, expected)?;
    Ok(it)
}

/// The header's fields, without a UTF-8 byte-order mark.
pub(crate) fn header_fields(header: &StringRecord) -> Vec<&str> {
    header
        .iter()
        .enumerate()
        .map(|(i, f)| {
            if i == 0 {
                f.trim_start_matches('\u{feff}')
            } else {
                f
            }
        })
        .collect()
}

/// Checks a header; the error names the first expected column that is
/// missing or misspelt.
pub(crate) fn check_header(line: u64, found: &[&str], expected: &[&str]) -> Result<(), TraceError> {
    for (i, want) in expected.iter().enumerate() {
        match found.get(i) {
            Some(got) if got == want => {}
            Some(got) => {
                return Err(format_error(
                    line,
                    Some(want),
                    format!(
                        "wrong header: column {} should be `{want}`, found `{}` (expected `{}`)",
                        i + 1,
                        shown(got),
                        expected.join(",")
                    ),
                ));
            }
            None => {
                return Err(format_error(
                    line,
                    Some(want),
                    format!(
                        "wrong header: column `{want}` is missing (expected `{}`)",
                        expected.join(",")
                    ),
                ));
            }
        }
    }
    if found.len() > expected.len() {
        return Err(format_error(
            line,
            None,
            format!(
                "wrong header: unexpected extra column `{}` (expected `{}`)",
                shown(found[expected.len()]),
                expected.join(",")
            ),
        ));
    }
    Ok(())
}

/// One data row with named columns and typed accessors.
pub(crate) struct Row<'a> {
    line: u64,
    fields: Vec<&'a str>,
    columns: &'static [&'static str],
}

impl<'a> Row<'a> {
    /// Wraps a record, checking that it has exactly one field per column.
    pub(crate) fn new(
        line: u64,
        record: &'a StringRecord,
        columns: &'static [&'static str],
    ) -> Result<Row<'a>, TraceError> {
        let fields: Vec<&str> = record.iter().collect();
        if fields.len() < columns.len() {
            return Err(format_error(
                line,
                Some(columns[fields.len()]),
                format!(
                    "missing field: expected {} fields, found {}",
                    columns.len(),
                    fields.len()
                ),
            ));
        }
        if fields.len() > columns.len() {
            return Err(format_error(
                line,
                None,
                format!(
                    "too many fields: expected {}, found {}",
                    columns.len(),
                    fields.len()
                ),
            ));
        }
        Ok(Row {
            line,
            fields,
            columns,
        })
    }

    /// A `Format` error about `column` of this row.
    pub(crate) fn error(&self, column: &str, reason: impl Into<String>) -> TraceError {
        format_error(self.line, Some(column), reason)
    }

    /// A warning about `column` of this row.
    pub(crate) fn warning(&self, column: &str, message: impl Into<String>) -> TraceWarning {
        TraceWarning {
            line: self.line,
            column: Some(column.to_string()),
            message: message.into(),
        }
    }

    /// The raw (trimmed) text of a column, possibly empty.
    pub(crate) fn text(&self, column: &str) -> Result<&'a str, TraceError> {
        match self.columns.iter().position(|c| *c == column) {
            Some(i) => Ok(self.fields[i]),
            None => Err(self.error(column, "internal error: no such column in this format")),
        }
    }

    /// A non-empty text field.
    pub(crate) fn required(&self, column: &str) -> Result<&'a str, TraceError> {
        let t = self.text(column)?;
        if t.is_empty() {
            Err(self.error(column, "missing value"))
        } else {
            Ok(t)
        }
    }

    /// A finite number.
    pub(crate) fn number(&self, column: &str) -> Result<f64, TraceError> {
        let t = self.required(column)?;
        parse_finite(t).map_err(|reason| self.error(column, reason))
    }

    /// A finite number ≥ 0.
    pub(crate) fn non_negative(&self, column: &str) -> Result<f64, TraceError> {
        let v = self.number(column)?;
        if v < 0.0 {
            Err(self.error(column, format!("must be ≥ 0, found {}", Num(v))))
        } else {
            Ok(v)
        }
    }

    /// An optional finite number ≥ 0 (`None` for an empty field).
    pub(crate) fn optional_non_negative(&self, column: &str) -> Result<Option<f64>, TraceError> {
        if self.text(column)?.is_empty() {
            Ok(None)
        } else {
            self.non_negative(column).map(Some)
        }
    }

    /// A whole number ≥ `min` (written `8` or `8.0`).
    pub(crate) fn count(&self, column: &str, min: u64) -> Result<u64, TraceError> {
        let t = self.required(column)?;
        let v = parse_count(t).map_err(|reason| self.error(column, reason))?;
        if v < min {
            Err(self.error(column, format!("must be ≥ {min}, found {t}")))
        } else {
            Ok(v)
        }
    }

    /// A whole number ≥ `min` that fits in `u32` (GPU counts, batch sizes).
    pub(crate) fn count_u32(&self, column: &str, min: u32) -> Result<u32, TraceError> {
        let v = self.count(column, u64::from(min))?;
        u32::try_from(v).map_err(|_| self.error(column, format!("{v} is too large")))
    }
}

/// Parses a finite `f64`; the error is a reason for a `Format` error.
pub(crate) fn parse_finite(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        Ok(v) => Err(format!(
            "not a finite number: `{}` ({})",
            shown(text),
            Num(v)
        )),
        Err(_) => Err(format!("not a number: `{}`", shown(text))),
    }
}

/// Parses a non-negative whole number written as an integer or as a float
/// with no fractional part.
pub(crate) fn parse_count(text: &str) -> Result<u64, String> {
    if let Ok(v) = text.parse::<u64>() {
        return Ok(v);
    }
    let v = parse_finite(text)?;
    if v < 0.0 {
        Err(format!("must be ≥ 0, found {}", shown(text)))
    } else if v.fract() != 0.0 {
        Err(format!("not a whole number: `{}`", shown(text)))
    } else if v >= u64::MAX as f64 {
        Err(format!("{} is too large", shown(text)))
    } else {
        Ok(v as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: &[&str] = &["a", "b", "c"];

    fn rows(text: &str) -> Vec<(u64, StringRecord)> {
        records(text.as_bytes(), b',')
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap()
    }

    #[test]
    fn lines_are_file_lines_and_blank_lines_are_skipped() {
        let r = rows("a,b,c\r\n1,2,3\r\n\r\n4, 5 ,6\n\n\n7,8,9");
        let lines: Vec<u64> = r.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![1, 2, 4, 7]);
        assert_eq!(&r[2].1[1], "5");
        let r = rows("\n\na,\"b\nb\",c\n1,2,3\n");
        let lines: Vec<u64> = r.iter().map(|(l, _)| *l).collect();
        assert_eq!(lines, vec![3, 5]);
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_finite("1e3"), Ok(1000.0));
        assert!(parse_finite("NaN").is_err());
        assert!(parse_finite("inf").is_err());
        assert!(parse_finite("x").is_err());
        assert_eq!(parse_count("8"), Ok(8));
        assert_eq!(parse_count("8.0"), Ok(8));
        assert!(parse_count("8.5").is_err());
        assert!(parse_count("-1").is_err());
    }

    #[test]
    fn row_accessors_name_columns() {
        let r = rows("1,-2,\n1,2\n");
        let row = Row::new(r[0].0, &r[0].1, COLS).unwrap();
        assert_eq!(row.count("a", 1).unwrap(), 1);
        let e = row.non_negative("b").unwrap_err();
        assert!(matches!(e, TraceError::Format { line: 1, column: Some(ref c), .. } if c == "b"));
        assert_eq!(row.optional_non_negative("c").unwrap(), None);
        let e = Row::new(r[1].0, &r[1].1, COLS).err().unwrap();
        assert!(matches!(e, TraceError::Format { line: 2, column: Some(ref c), .. } if c == "c"));
    }

    #[test]
    fn header_errors() {
        assert!(check_header(1, &["a", "b", "c"], COLS).is_ok());
        let e = check_header(1, &["a", "x", "c"], COLS).unwrap_err();
        assert!(matches!(e, TraceError::Format { column: Some(ref c), .. } if c == "b"));
        let e = check_header(1, &["a", "b"], COLS).unwrap_err();
        assert!(matches!(e, TraceError::Format { column: Some(ref c), .. } if c == "c"));
        let e = check_header(1, &["a", "b", "c", "d"], COLS).unwrap_err();
        assert!(matches!(e, TraceError::Format { column: None, .. }));
    }
}

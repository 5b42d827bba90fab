//! Python objects ⇄ JSON, and the arguments that may be a dict, JSON text
//! or a file path.
//!
//! A dict goes to the library as JSON text, so that the library parses it
//! exactly as it parses a file (the same checks, the same messages, the
//! field's path in them). A float that JSON cannot hold (NaN, ±∞) is
//! written as the string `"nan"`, `"inf"` or `"-inf"`, the crate's own
//! convention for non-finite numbers: fields that accept them (the
//! certificates') read them back, and any other field refuses them with
//! the library's message.

use std::path::{Path, PathBuf};

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyMapping, PyString, PyTuple};
use serde_json::{Map, Number, Value};

use crate::errors;

/// `obj` as a JSON value; `what` names the argument in errors.
pub fn to_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    to_json_at(obj, what, 0)
}

/// Deeper than this is refused (a cycle, or nothing an input needs).
const MAX_DEPTH: usize = 256;

fn to_json_at(obj: &Bound<'_, PyAny>, what: &str, depth: usize) -> PyResult<Value> {
    if depth > MAX_DEPTH {
        return Err(errors::input(format!(
            "{what}: nested deeper than {MAX_DEPTH} levels (a cycle?)"
        )));
    }
    if obj.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = obj.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if obj.is_instance_of::<PyInt>() {
        return int_json(obj, what);
    }
    if let Ok(f) = obj.cast::<PyFloat>() {
        return Ok(float_json(f.value()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Value::String(s.to_cow()?.into_owned()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        let mut map = Map::new();
        for (k, v) in d.iter() {
            let key = key_text(&k, what)?;
            let value = to_json_at(&v, what, depth + 1)?;
            map.insert(key, value);
        }
        return Ok(Value::Object(map));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut out = Vec::new();
        for item in obj.try_iter()? {
            out.push(to_json_at(&item?, what, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    if let Ok(m) = obj.cast::<PyMapping>() {
        let dict = PyDict::new(obj.py());
        for item in m.items()?.iter() {
            let (k, v): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item.extract()?;
            dict.set_item(k, v)?;
        }
        return to_json_at(dict.as_any(), what, depth);
    }
    // Numbers of other kinds (NumPy scalars, say).
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(x) = obj.extract::<f64>() {
        return Ok(float_json(x));
    }
    Err(errors::input(format!(
        "{what}: a {} is not JSON (expected a dict, list, str, number, bool or None)",
        type_name(obj)
    )))
}

/// An int as JSON: within `i64` or `u64`, else refused.
fn int_json(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Value> {
    if let Ok(i) = obj.extract::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(u) = obj.extract::<u64>() {
        return Ok(Value::from(u));
    }
    Err(errors::input(format!(
        "{what}: the integer {} is beyond 64 bits",
        obj.str()?
    )))
}

/// A float as JSON: a number when finite, else the crate's string form.
fn float_json(x: f64) -> Value {
    match Number::from_f64(x) {
        Some(n) => Value::Number(n),
        None if x.is_nan() => Value::String("nan".into()),
        None if x > 0.0 => Value::String("inf".into()),
        None => Value::String("-inf".into()),
    }
}

/// A dict key as JSON's string key: a str as is, an int in decimal (as
/// Python's `json.dumps` writes it).
fn key_text(k: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    if let Ok(s) = k.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if k.is_instance_of::<PyInt>() && !k.is_instance_of::<PyBool>() {
        return Ok(k.str()?.to_cow()?.into_owned());
    }
    Err(errors::input(format!(
        "{what}: a dict key must be a str or an int, not a {}",
        type_name(k)
    )))
}

/// The name of `obj`'s type, for messages.
pub fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map_or_else(|_| "object".to_string(), |n| n.to_string())
}

/// A JSON value as Python objects (dicts, lists, str, int, float, bool,
/// None).
pub fn to_py<'py>(py: Python<'py>, value: &Value) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any()
            } else {
                n.as_f64().unwrap_or(f64::NAN).into_pyobject(py)?.into_any()
            }
        }
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// Any serializable value as Python objects (through JSON).
pub fn serialize_to_py<'py>(
    py: Python<'py>,
    value: &impl serde::Serialize,
) -> PyResult<Bound<'py, PyAny>> {
    let v = serde_json::to_value(value).map_err(|e| errors::RunError::new_err(e.to_string()))?;
    to_py(py, &v)
}

/// JSON text given as an argument: the text, and the file it was read
/// from (for messages).
#[derive(Debug)]
pub struct JsonArg {
    /// The JSON text.
    pub text: String,
    /// The file it was read from, if any.
    pub path: Option<PathBuf>,
}

impl JsonArg {
    /// `obj` as JSON text: a dict or list (serialized), a str that holds
    /// JSON (its first character `{` or `[`), or a path (a str or an
    /// `os.PathLike`) whose file is read.
    pub fn from_py(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Self> {
        if let Ok(s) = obj.cast::<PyString>() {
            let s = s.to_cow()?;
            if s.trim_start().starts_with(['{', '[']) {
                return Ok(JsonArg {
                    text: s.to_string(),
                    path: None,
                });
            }
            return JsonArg::from_file(Path::new(&*s));
        }
        if obj.hasattr("__fspath__")? {
            let path: PathBuf = obj.extract()?;
            return JsonArg::from_file(&path);
        }
        let value = to_json(obj, what)?;
        Ok(JsonArg {
            text: value.to_string(),
            path: None,
        })
    }

    /// The text of the file `path`.
    pub fn from_file(path: &Path) -> PyResult<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| errors::input(format!("{}: {e}", path.display())))?;
        Ok(JsonArg {
            text,
            path: Some(path.to_path_buf()),
        })
    }

    /// `message` about this argument: prefixed by the file's path when it
    /// came from a file, as the command line writes it.
    pub fn message(&self, message: impl std::fmt::Display) -> String {
        match &self.path {
            Some(p) => format!("{}: {message}", p.display()),
            None => message.to_string(),
        }
    }

    /// The file's name, if the text came from a file.
    pub fn file_name(&self) -> Option<String> {
        self.path
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
    }
}

/// The parameters of algorithm `name` as JSON text, from a dict, JSON text
/// or a file; a file whose JSON the algorithm cannot read is named in the
/// message, as the command line names a `--params` file.
pub fn algorithm_params(name: &str, value: &Bound<'_, PyAny>) -> PyResult<String> {
    let arg = JsonArg::from_py(value, "params")?;
    if arg.path.is_some()
        && let Err(e @ dmlsched::Error::Json(_)) = dmlsched::registry::check_params(name, &arg.text)
    {
        return Err(errors::input(arg.message(e)));
    }
    Ok(arg.text)
}

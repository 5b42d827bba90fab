//! The package's exceptions, and how the library's errors become them.
//!
//! The library decides what is bad input ([`dmlsched::Error::is_input`],
//! [`AllocationError::is_input`]); the messages are the library's
//! `Display` text. The command line prefixes a context (`gadget: …`, a
//! file's path); the bindings add only a file's path, for an error about a
//! file.

use dmlsched::allocate::AllocationError;
use pyo3::PyErr;
use pyo3::create_exception;
use pyo3::exceptions::PyException;

create_exception!(
    dmlsched,
    DmlschedError,
    PyException,
    "The base of every error dmlsched raises."
);
create_exception!(
    dmlsched,
    InputError,
    DmlschedError,
    "Bad input: an invalid instance, parameter or option, a job or cluster outside an \
     algorithm's model, an unreadable file or malformed JSON (the command line's exit code 2)."
);
create_exception!(
    dmlsched,
    RunError,
    DmlschedError,
    "A run that failed on valid input: a solver failure, a violated certificate, a bug \
     (the command line's exit code 1)."
);

/// The interrupt (Ctrl-C's `KeyboardInterrupt`) that stopped a replay or a
/// simulation between two runs, told how far it got: attributes
/// `runs_done` and `runs_total`, and on Python 3.11 and later a note
/// (`dmlsched stopped after 3 of 20 runs`) shown under the traceback.
pub fn stopped(err: PyErr, done: usize, total: usize) -> PyErr {
    stopped_after(err, done, total, "runs")
}

/// [`stopped`], counting `what` (a sweep counts "cells"): the attributes
/// are still `runs_done` and `runs_total`.
pub fn stopped_after(err: PyErr, done: usize, total: usize, what: &str) -> PyErr {
    use pyo3::types::PyAnyMethods;
    pyo3::Python::attach(|py| {
        let value = err.value(py);
        // Attributes and notes are best effort: an exception class that
        // refuses them is raised as it is.
        let _ = value.setattr("runs_done", done);
        let _ = value.setattr("runs_total", total);
        if value.hasattr("add_note").unwrap_or(false) {
            let note = format!("dmlsched stopped after {done} of {total} {what}");
            let _ = value.call_method1("add_note", (note,));
        }
    });
    err
}

/// A failure inside a run, before it becomes a Python exception: it
/// crosses [`pyo3::Python::detach`] as plain data (or as a Python
/// exception a policy raised).
#[derive(Debug)]
pub enum Failure {
    /// Bad input ([`InputError`]).
    Input(String),
    /// A failed run ([`RunError`]).
    Run(String),
    /// An exception raised by Python code (a policy), raised again as is.
    Python(PyErr),
}

impl Failure {
    /// A library error, bad input when the library says so.
    pub fn lib(e: &dmlsched::Error) -> Self {
        if e.is_input() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.to_string())
        }
    }

    /// An allocation error, bad input when the library says so.
    pub fn allocation(e: &AllocationError) -> Self {
        if e.is_input() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.to_string())
        }
    }
}

impl From<dmlsched::Error> for Failure {
    fn from(e: dmlsched::Error) -> Self {
        Failure::lib(&e)
    }
}

impl From<Failure> for PyErr {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Input(m) => InputError::new_err(m),
            Failure::Run(m) => RunError::new_err(m),
            Failure::Python(e) => e,
        }
    }
}

/// [`InputError`] with `message`.
pub fn input(message: impl Into<String>) -> PyErr {
    InputError::new_err(message.into())
}

/// A library error as [`InputError`] or [`RunError`].
pub fn lib(e: &dmlsched::Error) -> PyErr {
    Failure::lib(e).into()
}

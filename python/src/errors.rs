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

//! The known-answer instances of `specs/packing-covering.md` §14 live in
//! the library (`dmlsched::pcip::known_answers`); re-exported for the tests.
#![allow(unused_imports)]

pub use dmlsched::pcip::known_answers::*;

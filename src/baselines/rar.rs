//! The offline ring-all-reduce baselines of the SJF-BCO paper by name:
//! `rar-ff`, `rar-ls` and `rar-rand` ([`RarFf`], [`RarLs`], [`RarRand`]).
//! They place a batch of jobs present at slot 0 and return a
//! [`Solved`] schedule with its certificate, so they are not simulator
//! policies and are listed apart from [`NAMES`](super::NAMES).

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::algorithms::Solved;
use crate::algorithms::sjf_bco::{RarFf, RarLs, RarRand, SjfBcoParams, SjfBcoReport};
use crate::model::Instance;

/// Names accepted by [`offline_by_name`], in a stable order.
pub const OFFLINE_NAMES: &[&str] = &["rar-ff", "rar-ls", "rar-rand"];

/// An offline ring-all-reduce baseline chosen by name.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum OfflineBaseline {
    /// `rar-ff`: first fit.
    FirstFit(RarFf),
    /// `rar-ls`: list scheduling (least accumulated load).
    ListScheduling(RarLs),
    /// `rar-rand`: a random subset of the candidates.
    Random(RarRand),
}

impl OfflineBaseline {
    /// The baseline's name.
    pub fn name(&self) -> &'static str {
        match self {
            OfflineBaseline::FirstFit(_) => "rar-ff",
            OfflineBaseline::ListScheduling(_) => "rar-ls",
            OfflineBaseline::Random(_) => "rar-rand",
        }
    }

    /// Runs the baseline; `seed` seeds RAND's ChaCha8 generator (the others
    /// ignore it).
    ///
    /// # Errors
    ///
    /// As [`SjfBco::solve`](crate::algorithms::sjf_bco::SjfBco::solve).
    pub fn solve(&self, instance: &Instance, seed: u64) -> crate::Result<Solved<SjfBcoReport>> {
        match self {
            OfflineBaseline::FirstFit(b) => b.solve(instance),
            OfflineBaseline::ListScheduling(b) => b.solve(instance),
            OfflineBaseline::Random(b) => b.solve(instance, &mut ChaCha8Rng::seed_from_u64(seed)),
        }
    }
}

/// An offline ring-all-reduce baseline by name with `params`; `None` for
/// an unknown name (see [`OFFLINE_NAMES`]).
///
/// ```
/// use dmlsched::baselines::{OFFLINE_NAMES, offline_by_name};
/// use dmlsched::algorithms::sjf_bco::SjfBcoParams;
/// for name in OFFLINE_NAMES {
///     assert_eq!(offline_by_name(name, SjfBcoParams::default()).unwrap().name(), *name);
/// }
/// assert!(offline_by_name("ff-bandwidth", SjfBcoParams::default()).is_none());
/// ```
pub fn offline_by_name(name: &str, params: SjfBcoParams) -> Option<OfflineBaseline> {
    Some(match name {
        "rar-ff" => OfflineBaseline::FirstFit(RarFf::new(params)),
        "rar-ls" => OfflineBaseline::ListScheduling(RarLs::new(params)),
        "rar-rand" => OfflineBaseline::Random(RarRand::new(params)),
        _ => return None,
    })
}

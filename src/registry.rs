//! Every policy and algorithm by name: the one table the simulator's
//! users, the command line and the experiments look names up in.
//!
//! It sits above both the baselines and the algorithms (which import
//! neither the other), so a name can stand for either.
//!
//! - [`BASELINES`] and [`RING_BASELINES`]: the simulator policies the
//!   papers compare against ([`by_name`], [`by_name_with`]), including the
//!   online ring-embedding comparators of the GADGET-style scheduler and of
//!   SJF-BCO.
//! - [`OFFLINE_NAMES`]: SJF-BCO's offline comparators ([`offline_by_name`]).

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::algorithms::Solved;
use crate::algorithms::gadget::GadgetNoPrice;
use crate::algorithms::sjf_bco::{
    RarFf, RarLs, RarOnlineRandom, RarRand, SjfBcoOnline, SjfBcoParams, SjfBcoReport,
};
use crate::baselines::{
    BaselineParams, Drf, Fifo, FifoFirstFitBandwidth, Optimus, ProportionalShare, Rrh, RrhParams,
    Sjf, Tetris, Tiresias,
};
#[cfg(feature = "highs")]
use crate::baselines::{DormLike, DormParams};
use crate::model::Instance;

/// Names accepted by [`by_name`] for instances of any job kind, in a
/// stable order (see also [`RING_BASELINES`]).
pub const BASELINES: &[&str] = &[
    "fifo",
    "fifo-backfill",
    "sjf",
    "drf",
    "tetris",
    "tiresias",
    "ff-bandwidth",
    "ff-bandwidth-backfill",
    "proportional",
    "optimus",
    "rrh",
    "dorm",
];

/// Names accepted by [`by_name`] for policies that schedule ring-all-reduce
/// jobs only (their runs end with a typed error on an instance with a
/// parameter-server job), in a stable order: the online baselines of the
/// GADGET-style scheduler.
pub const RING_BASELINES: &[&str] = &["sjf-bco-online", "rar-online-random", "gadget-noprice"];

/// A baseline by name, with default parameters (see [`BASELINES`] and
/// [`RING_BASELINES`]; `rar-online-random` has seed 0); `None` for an unknown
/// name, and for `dorm` without the `highs` feature. The same as
/// [`by_name_with`] with [`BaselineParams::default`].
///
/// ```
/// use dmlsched::registry::{BASELINES, RING_BASELINES, by_name};
/// for name in BASELINES.iter().chain(RING_BASELINES) {
///     if let Some(p) = by_name(name) {
///         assert!(!p.name().is_empty());
///     }
/// }
/// assert!(by_name("sjf-bco-online").is_some());
/// assert!(by_name("no-such-policy").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn crate::sim::Policy>> {
    by_name_with(name, &BaselineParams::default())
}

/// A baseline by name (as [`by_name`]) with `params`: the placement rule on
/// every baseline that takes one, and Tiresias's queues. Invalid Tiresias
/// parameters are reported by the run ([`Tiresias::validate`]).
///
/// ```
/// use dmlsched::baselines::BaselineParams;
/// use dmlsched::registry::by_name_with;
/// use dmlsched::placement::PlacementRule;
/// let first_fit = BaselineParams { placement: PlacementRule::FirstFit, ..BaselineParams::default() };
/// assert_eq!(by_name_with("fifo", &first_fit).unwrap().name(), "fifo");
/// assert!(by_name_with("nope", &first_fit).is_none());
/// ```
pub fn by_name_with(name: &str, params: &BaselineParams) -> Option<Box<dyn crate::sim::Policy>> {
    let placement = params.placement;
    Some(match name {
        "fifo" | "fifo-backfill" => Box::new(Fifo {
            backfill: name == "fifo-backfill",
            placement,
            ..Fifo::default()
        }),
        "sjf" => Box::new(Sjf {
            placement,
            ..Sjf::default()
        }),
        "drf" => Box::new(Drf {
            placement,
            ..Drf::default()
        }),
        "tetris" => Box::new(Tetris { placement }),
        "tiresias" => {
            let mut t = Tiresias::default();
            t.thresholds.clone_from(&params.tiresias_thresholds);
            t.starve_factor = params.tiresias_starve_factor;
            t.placement = placement;
            Box::new(t)
        }
        "ff-bandwidth" => Box::new(FifoFirstFitBandwidth::default()),
        "ff-bandwidth-backfill" => Box::new(FifoFirstFitBandwidth { backfill: true }),
        "sjf-bco-online" => Box::new(SjfBcoOnline::default()),
        "rar-online-random" => Box::new(RarOnlineRandom::default()),
        "gadget-noprice" => Box::new(GadgetNoPrice::default()),
        "proportional" => Box::new(ProportionalShare {
            placement,
            ..ProportionalShare::default()
        }),
        "optimus" => Box::new(Optimus {
            placement,
            ..Optimus::default()
        }),
        "rrh" => Box::new(Rrh::new(RrhParams {
            placement,
            ..RrhParams::default()
        })),
        #[cfg(feature = "highs")]
        "dorm" => Box::new(DormLike::new(DormParams {
            placement,
            ..DormParams::default()
        })),
        _ => return None,
    })
}

/// The baselines that need no solver and suit ring-all-reduce jobs
/// (`ring = true`) or parameter-server jobs: the default set of
/// `dmlsched replay`.
pub fn cheap_baselines(ring: bool) -> Vec<&'static str> {
    BASELINES
        .iter()
        .copied()
        .filter(|n| *n != "dorm" && (ring || !n.starts_with("ff-bandwidth")))
        .collect()
}

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
/// use dmlsched::registry::{OFFLINE_NAMES, offline_by_name};
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

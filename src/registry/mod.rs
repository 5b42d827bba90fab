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
//! - [`ALGORITHMS`]: every algorithm of [`crate::algorithms`] by its
//!   [`Algorithm::NAME`](crate::algorithms::Algorithm::NAME), run by
//!   [`solve`] with parameters from JSON; [`ALGORITHM_POLICIES`], those
//!   that are also simulator policies ([`policy`]).
//! - [`SESSION_ALGORITHMS`]: those that decide job by job as a session over
//!   a shared cluster state ([`session`], [`restore_session`]).
//!
//! This is the one place that names algorithms one by one: the command
//! line and the experiments go through it.

use crate::algorithms::gadget::GadgetNoPrice;
use crate::algorithms::sjf_bco::{RarOnlineRandom, SjfBcoOnline};
use crate::allocate::{RoundParams, Rounds};
use crate::baselines::{
    BaselineParams, Drf, Fifo, FifoFirstFitBandwidth, Optimus, ProportionalShare, Rrh, RrhParams,
    Sjf, Tetris,
};
#[cfg(feature = "highs")]
use crate::baselines::{DormLike, DormParams};

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

/// Names accepted by [`by_name`] for the allocation policies run in
/// round-based leases ([`Rounds`]): `gavel-` and
/// the name of each [`AllocationPolicy`](crate::allocate::AllocationPolicy),
/// in the order of [`AllocationPolicy::ALL`](crate::allocate::AllocationPolicy::ALL).
///
/// ```
/// use dmlsched::registry::{ROUND_POLICIES, by_name};
/// assert_eq!(ROUND_POLICIES[0], "gavel-max-min-fairness");
/// assert_eq!(by_name("gavel-min-makespan").unwrap().name(), "gavel-min-makespan");
/// ```
pub const ROUND_POLICIES: &[&str] = &[
    "gavel-max-min-fairness",
    "gavel-max-min-fairness-perf",
    "gavel-finish-time-fairness",
    "gavel-max-sum-throughput",
    "gavel-max-throughput-per-cost",
    "gavel-min-makespan",
    "gavel-fifo",
    "gavel-fifo-perf",
];

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
/// every baseline that takes one, and `tiresias` as
/// [`params.tiresias`](BaselineParams::tiresias) (with that placement).
/// Invalid Tiresias parameters are reported by the run
/// ([`Tiresias::validate`](crate::baselines::Tiresias::validate)).
///
/// ```
/// use dmlsched::baselines::BaselineParams;
/// use dmlsched::registry::by_name_with;
/// use dmlsched::placement::PlacementRule;
/// let mut first_fit = BaselineParams::default();
/// first_fit.placement = PlacementRule::FirstFit;
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
            let mut t = params.tiresias.clone();
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
        round if ROUND_POLICIES.contains(&round) => {
            let policy = round.strip_prefix("gavel-")?.parse().ok()?;
            let mut p = RoundParams::new(policy).with_round_s(params.round_s);
            p.placement = placement;
            p.prices.clone_from(&params.gpu_prices);
            Box::new(Rounds::new(p))
        }
        _ => return None,
    })
}

/// The baselines that need no solver and suit ring-all-reduce jobs
/// (`ring = true`) or parameter-server jobs: the default set of
/// `dmlsched replay`.
///
/// ```
/// use dmlsched::registry::cheap_baselines;
///
/// let ps = cheap_baselines(false);
/// assert!(ps.contains(&"fifo") && ps.contains(&"tiresias"));
/// assert!(!ps.contains(&"dorm")); // solves LPs
/// assert!(!ps.contains(&"ff-bandwidth")); // embeds rings
/// let ring = cheap_baselines(true);
/// assert!(ring.contains(&"ff-bandwidth") && !ring.contains(&"dorm"));
/// ```
pub fn cheap_baselines(ring: bool) -> Vec<&'static str> {
    BASELINES
        .iter()
        .copied()
        .filter(|n| *n != "dorm" && (ring || !n.starts_with("ff-bandwidth")))
        .collect()
}

mod algorithms;

pub use algorithms::{
    ALGORITHM_POLICIES, ALGORITHMS, Needs, SESSION_ALGORITHMS, architecture, is_policy,
    known_policies, needs, practical_params,
};
#[cfg(feature = "serde")]
pub use algorithms::{
    Outcome, check_params, needs_ps_only_machines, policy, restore_session, session, solve,
};

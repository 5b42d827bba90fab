//! The policies the papers compare against, as simulator [`Policy`]s.
//!
//! | policy | source | kind |
//! |---|---|---|
//! | `DormLike` | Sun et al., SmartComp 2017 (the crate's reconstruction as a MILP, from the OASiS paper's description) | utilisation-maximising MILP at every event, fairness and adjustment rows; only with the `highs` feature |
//! | [`Drf`] | Ghodsi et al., NSDI 2011 (the YARN/Mesos default in the OASiS and Optimus evaluations) | elastic, progressive filling from scratch at every event |
//! | [`Fifo`] | Hadoop/Spark default; the FIFO baseline of the OASiS and Optimus evaluations | fixed size, non-preemptive, optional backfill |
//! | [`FifoFirstFitBandwidth`] (`ff-bandwidth`, `ff-bandwidth-backfill`) | FIFO-FF, the crate's baseline for online ring embedding (after GADGET, Yu, Tian, Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022) | fixed size, first-fit ring embedding with reserved NIC bandwidth, GPU ids |
//! | [`Optimus`] | Peng et al., EuroSys 2018 (and its public code) | elastic, marginal gain of remaining time per dominant share, timing oracle |
//! | [`ProportionalShare`] | budget proportional share (crate rules) | elastic, GPUs split by fixed budgets at every event, paid workers placed by the placement rule |
//! | [`Rrh`] | Irwin et al., HPDC 2004 (the crate's reading of the risk–reward heuristic the OASiS paper compares with) | fixed size, admission by reward − risk, urgency ranking, preemptive |
//! | [`Sjf`] | shortest job first with an oracle (crate rules) | fixed size, non-preemptive, backfill by default |
//! | [`Tetris`] | Grandl et al., SIGCOMM 2014 (alignment score only) | fixed size, non-preemptive, packs by alignment |
//! | [`Tiresias`] | Gu et al., NSDI 2019 | fixed size, preemptive, discretised 2D-LAS, wakes itself at threshold crossings |
//!
//! The comparators built on an algorithm's own machinery live beside that
//! algorithm: `gadget-noprice` ([`GadgetNoPrice`], the GADGET-style
//! oracle with every price 0), the online ring embeddings
//! `sjf-bco-online` and `rar-online-random` ([`SjfBcoOnline`],
//! [`RarOnlineRandom`]) and SJF-BCO's offline `rar-ff`, `rar-ls` and
//! `rar-rand` ([`RarFf`], [`RarLs`], [`RarRand`]). The
//! [`registry`](crate::registry) names every baseline and comparator.
//!
//! Every policy sizes jobs with [`requested_tasks`] unless it says
//! otherwise, and places tasks with a [`Placer`] by a [`PlacementRule`]
//! that is one of its parameters, [`PlacementRule::BestFit`] (the fewest
//! machines that fit) by default. The exceptions place by their own rule:
//! FIFO-FF (first fit, its definition) and the online ring-embedding
//! baselines. The
//! [`Placer`] charges a
//! reserving ring's bandwidth on every machine it spans exactly as the
//! simulator does (so no baseline's allocation is refused for it). Policies that recompute
//! allocations from scratch ([`Drf`], [`ProportionalShare`], [`Tiresias`],
//! [`Optimus`], [`Rrh`], the Dorm-like MILP)
//! state the target allocation of every job whose allocation changes (a
//! `SetAllocation`, empty to pause). The simulator applies one answer as a
//! transaction — every changed job's old allocation released, then all new
//! ones checked together — so no order is needed, and jobs that trade
//! machines count one reconfiguration each and no preemption, the same for
//! every baseline.
//!
//! [`Policy`]: crate::sim::Policy
//! [`Placer`]: crate::placement::Placer
//! [`GadgetNoPrice`]: crate::algorithms::gadget::GadgetNoPrice
//! [`SjfBcoOnline`]: crate::algorithms::sjf_bco::SjfBcoOnline
//! [`RarOnlineRandom`]: crate::algorithms::sjf_bco::RarOnlineRandom
//! [`RarFf`]: crate::algorithms::sjf_bco::RarFf
//! [`RarLs`]: crate::algorithms::sjf_bco::RarLs
//! [`RarRand`]: crate::algorithms::sjf_bco::RarRand

mod common;
#[cfg(feature = "highs")]
mod dorm;
mod drf;
mod ff_bandwidth;
mod fifo;
#[cfg(test)]
mod fixtures;
mod optimus;
mod proportional;
mod rrh;
mod sjf;
mod solo;
mod tetris;
mod tiresias;

#[cfg(feature = "highs")]
pub use dorm::{DormLike, DormParams, DormReport};
pub use drf::Drf;
pub use ff_bandwidth::FifoFirstFitBandwidth;
pub use fifo::Fifo;
pub use optimus::Optimus;
pub use proportional::ProportionalShare;
pub use rrh::{Rrh, RrhParams};
pub use sjf::Sjf;
pub use solo::solo_runs;
pub use tetris::Tetris;
pub use tiresias::Tiresias;

pub use crate::placement::{ps_for, requested_tasks};

use std::collections::BTreeMap;

use crate::model::{Architecture, Job, JobId};
use crate::placement::PlacementRule;

/// Requested sizes `(workers, PSs)` per job, for the fixed-size baselines
/// that take them ([`Fifo::requests`], [`Tiresias::requests`]): a job in
/// the table runs at its entry, any other at [`requested_tasks`]. A
/// requested configuration `k^req` usually comes from a trace or a workload
/// generator (for example
/// [`SmdJobDraw::requested`](crate::algorithms::smd::workload::SmdJobDraw::requested)).
pub type RequestedSizes = BTreeMap<JobId, (u32, u32)>;

/// The size a fixed-size policy named `policy` runs `job` at: its entry in
/// `requests`, checked, or else [`requested_tasks`].
///
/// ```
/// use dmlsched::baselines::{RequestedSizes, requested_size};
/// use dmlsched::model::{Job, JobId, PsJob};
/// let job = Job::new(JobId(3), 0.0, PsJob { max_workers: 8, max_ps: 4, ..PsJob::default() });
/// let mut req = RequestedSizes::new();
/// assert_eq!(requested_size(&job, &req, "fifo")?.0, 8);
/// req.insert(JobId(3), (2, 1));
/// assert_eq!(requested_size(&job, &req, "fifo")?, (2, 1));
/// req.insert(JobId(3), (9, 1));
/// assert!(requested_size(&job, &req, "fifo").is_err());
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// [`SimError::BadParams`](crate::sim::SimError::BadParams) for an entry
/// the job cannot run at: a parameter-server job needs
/// `1 ≤ w ≤ max_workers`, `1 ≤ p ≤ max_ps` (and `p ≤ w` under its PS
/// rule); a ring-all-reduce job `w ≥ 1` and `p = 0`.
pub fn requested_size(
    job: &Job,
    requests: &RequestedSizes,
    policy: &str,
) -> crate::Result<(u32, u32)> {
    let Some(&(w, p)) = requests.get(&job.id) else {
        return Ok(requested_tasks(job));
    };
    let ok = match &job.architecture {
        Architecture::ParameterServer(ps) => {
            (1..=ps.max_workers).contains(&w)
                && (1..=ps.max_ps).contains(&p)
                && (!ps.ps_at_most_workers || p <= w)
        }
        Architecture::RingAllReduce(_) => w >= 1 && p == 0,
    };
    if ok {
        Ok((w, p))
    } else {
        Err(crate::sim::SimError::BadParams {
            policy: policy.into(),
            reason: format!(
                "{}: requested size ({w} workers, {p} PSs) is not a configuration of the job",
                job.id
            ),
        }
        .into())
    }
}

/// The parameters the registry's
/// [`by_name_with`](crate::registry::by_name_with) sets on the baselines it
/// builds.
///
/// ```
/// use dmlsched::baselines::BaselineParams;
/// let mut params = BaselineParams::default();
/// // Two queues and a one-GPU-hour threshold, and the starvation guard.
/// params.tiresias.thresholds = vec![3600.0];
/// params.tiresias.starve_factor = Some(2.0);
/// assert!(params.tiresias.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BaselineParams {
    /// The placement rule of every baseline that takes one (FIFO, SJF,
    /// Tetris, Tiresias, DRF, proportional share, Optimus, RRH, Dorm-like);
    /// default [`PlacementRule::BestFit`].
    pub placement: PlacementRule,
    /// The Tiresias policy handed out for `tiresias`, with its own settings
    /// (queue thresholds, starvation guard, requested sizes) and its
    /// placement replaced by [`placement`](Self::placement); default
    /// [`Tiresias::default`].
    pub tiresias: Tiresias,
    /// Round length, seconds, of the round-based allocation policies
    /// (`gavel-…`, [`crate::registry::ROUND_POLICIES`]); default 360.
    pub round_s: f64,
    /// Price of one GPU of each type per hour, for
    /// `gavel-max-throughput-per-cost`; default none.
    pub gpu_prices: BTreeMap<String, f64>,
}

impl Default for BaselineParams {
    fn default() -> Self {
        BaselineParams {
            placement: PlacementRule::BestFit,
            tiresias: Tiresias::default(),
            round_s: 360.0,
            gpu_prices: BTreeMap::new(),
        }
    }
}

//! A discrete-event simulator that runs any [`Policy`] over arriving jobs.
//!
//! Time is continuous, in seconds; the simulator jumps from event to event
//! (arrivals, completions, slot boundaries where a plan changes), so idle
//! stretches cost nothing. At each event the policy sees a [`SimView`] and
//! answers with [`Action`]s:
//!
//! * [`Action::SetAllocation`]: run a job with a placement until further
//!   notice (FIFO, DRF, Tiresias, …); an empty placement pauses it;
//! * [`Action::Reserve`]: commit a multi-slot plan at once (OASiS, GADGET,
//!   locality-aware placement); the plan's allocations switch at slot
//!   boundaries;
//! * [`Action::Preempt`] and [`Action::Reject`].
//!
//! An allocation (an action's, or a plan segment's) may name a
//! communication [`Configuration`](crate::schedule::Configuration). LOCAL on
//! machine `h` — one PS and at least one worker, all on `h`, checked like
//! every other rule — keeps the gradient traffic on the machine: its tasks
//! are charged their per-task demand with NIC bandwidth 0, in the current
//! use and in the plans' future slots alike, and a parameter-server job runs
//! at `τ^L = t_c + 2S/b_int` with `h`'s intra-machine bandwidth under either
//! [`PsTiming`]. DISTRIBUTED and no configuration charge every task its full
//! demand.
//!
//! A ring-all-reduce job with a reserved bandwidth `b`
//! ([`RarJob::reserved_bandwidth_bps`](crate::model::RarJob::reserved_bandwidth_bps))
//! whose workers span two or more machines is charged, on each of them,
//! its workers' demand plus `b` of NIC bandwidth per direction — the rule of
//! [`crate::schedule::verify`] — in the current use and in the plans'
//! future slots alike, and the charge goes when the allocation does
//! (completion, preemption, a move). An allocation that would over-commit
//! a NIC because of reservations is refused like any other
//! ([`SimError::OverAllocation`]). Such a ring runs at `b` without
//! contention and is no contender for the other rings; on one machine it
//! reserves nothing and runs at the machine's internal bandwidth.
//! [`SimView::free`] shows what is left after tasks and reservations.
//!
//! The actions of one answer form one transaction: every changed job's old
//! allocation is released, then all the new ones are checked together by
//! the same per-allocation rules as [`crate::schedule::verify`]
//! ([`crate::schedule::check_allocation`] and, for plans,
//! [`crate::schedule::check_job_schedule`]) plus capacities per machine and
//! resource (now, and in every future slot against the committed plans),
//! GPU ids, rigidity and non-preemption. So jobs may swap machines, or move
//! in a cycle, in one answer, in any order; a job moved in one answer
//! counts one reconfiguration and no preemption. A broken rule ends the run
//! with a [`SimError`] naming the job (the first, in action order, whose
//! addition breaks it), and for capacities the machine, resource and slot —
//! nothing of the answer is applied and nothing is clipped. The plans'
//! switches at a slot boundary are one transaction of the same kind.
//!
//! # Progress
//!
//! Jobs progress by the timing models of [`crate::timing`] given their
//! allocation and the jobs around them ([`PsTiming`]; ring-all-reduce
//! contention is recounted whenever a multi-server ring without a
//! reservation starts or stops).
//! Work is counted in mini-batches for parameter-server jobs (`w` per
//! iteration) and in iterations for ring-all-reduce jobs: the iterations
//! requested, or with [`SimOptions::stop_at_convergence`] the convergence
//! estimate of a job that has one ([`work_to_train`]). With
//! [`ProgressMode::Fractional`](crate::timing::ProgressMode) a job finishes
//! at the exact time its work runs out; with `Floor` (which needs
//! [`Decisions::SlotBoundaries`]) it gains `⌊Δ/τ⌋` whole iterations per slot
//! and finishes at the end of a slot. A changed allocation, or a resume after
//! a pause, costs the job's `reconfiguration_s` of zero progress while it
//! holds the new resources (the first start is free).
//!
//! Decisions follow [`Decisions`]: at every event, or only at slot
//! boundaries (events inside a slot are delivered at the next boundary).
//! A job completing in slot `t̂` earns `utility.value(t̂ − a)`.
//!
//! # Time
//!
//! Time stays exact at every magnitude: arrivals, wakeups and completions
//! happen when `now` reaches them (no tolerance that grows with `now`), a
//! time counts as a slot boundary when it is one up to `10⁻⁹` slot, and the
//! next boundary is always strictly after `now`. A job finishes at the time
//! its work runs out; when that time is not representably after `now` (an
//! iteration time of 0, or one far below the resolution of `now`), it
//! finishes at `now`. So every turn of the event loop either moves time
//! forward or consumes an event (a completion, an arrival, a wakeup, a
//! buffered batch, a plan switch), and delivered events are bounded by
//! [`SimOptions::max_events`]: the loop always ends. Should no event
//! follow and nothing happen, the run stops with [`SimError::Stalled`]
//! instead of spinning. An iteration time that is NaN or infinite is a
//! typed error. Sizes cost what is used, not what is declared: GPU owners
//! are kept only for GPUs handed out, and the plans' ledger only where the
//! reserved use changes, so a machine of `10³⁰⁰` GPUs or a horizon of
//! `2³²−1` slots costs nothing up front.
//!
//! # Reports
//!
//! A run returns a [`SimResult`] (one [`JobRecord`] per job, utilization
//! over time, [`SimResult::summary`]); the engine writes no files. CSV
//! tables and SVG plots of results are the top-level `report` module's,
//! behind the crate's `report` feature (which the `cli` feature turns on).
//!
//! # Example
//!
//! ```
//! use dmlsched::model::*;
//! use dmlsched::schedule::Tasks;
//! use dmlsched::sim::{simulate, Action, Event, Policy, SimOptions, SimView};
//!
//! /// Runs every job on machine 0 with one worker and one PS, if it fits.
//! struct Greedy;
//! impl Policy for Greedy {
//!     fn name(&self) -> String { "greedy".into() }
//!     fn on_event(&mut self, view: &SimView<'_>, _e: &Event) -> dmlsched::Result<Vec<Action>> {
//!         let mut free = *view.free(0);
//!         let mut out = Vec::new();
//!         for j in view.active().filter(|j| !j.is_running()) {
//!             let need = j.job().min_demand();
//!             if need.fits_in(&free, 1e-9) {
//!                 free = free.minus(&need);
//!                 out.push(Action::run(j.id(), vec![(MachineId(0), Tasks::new(1, 1))]));
//!             }
//!         }
//!         Ok(out)
//!     }
//! }
//!
//! let cap = Resources::zero().gpus(1.0).cpu_cores(8.0).memory(32e9).nic(10e9);
//! let cluster = Cluster::homogeneous(1, cap, 1e10);
//! let ps = PsJob {
//!     epochs: 1, data_chunks: 1, minibatches_per_chunk: 100,
//!     minibatch_compute_s: 0.5, gradient_bytes: 0.0,
//!     worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
//!     ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
//!     max_workers: 1, max_ps: 1, ps_at_most_workers: true,
//!     sync: SyncMode::Synchronous, layers: None,
//! };
//! let jobs = vec![
//!     Job::new(JobId(0), 0.0, Architecture::ParameterServer(ps.clone())),
//!     Job::new(JobId(1), 10.0, Architecture::ParameterServer(ps)),
//! ];
//! let inst = Instance::new(cluster, jobs, 60.0, 100).unwrap();
//! let result = simulate(&inst, &mut Greedy, &SimOptions::default()).unwrap();
//! // 100 mini-batches of 0.5 s each: job 0 runs 0–50 s, job 1 waits for the GPU.
//! assert_eq!(result.jobs[0].finish_s, Some(50.0));
//! assert_eq!(result.jobs[1].start_s, Some(50.0));
//! assert_eq!(result.jobs[1].finish_s, Some(100.0));
//! ```

mod batch;
mod engine;
mod error;
mod fairness;
mod ledger;
mod policy;
mod result;
mod room;
mod state;
mod view;
mod work;

pub use engine::{Decisions, SimOptions, StopAt, simulate};
pub use error::SimError;
pub use fairness::{Fairness, Solo, jain_index};
pub use policy::{Action, Event, Policy, Rejection};
pub use result::{
    AllocationRecord, JobEnd, JobRecord, ResourceUse, RunSummary, SimResult, Unfinished,
    UnfinishedCounts, UtilizationPoint, fits_empty_cluster, percentile,
};
pub use state::JobStatus;
pub use view::{JobView, SimView};
pub use work::{PsTiming, total_work, work_to_train};

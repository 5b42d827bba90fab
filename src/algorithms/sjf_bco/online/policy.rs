//! SJF-BCO as an online ring baseline: place on arrival with FA-FFP or
//! LBSGF.

use crate::algorithms::gadget::GadgetError;
use crate::algorithms::sjf_bco::FaFfpStrategy;
use crate::algorithms::sjf_bco::choice::{Choice, GpuLoad};
use crate::model::units::ceil_tol;
use crate::model::{Job, JobId, RarJob};
use crate::sim::{Action, Event, JobView, Policy, Rejection, SimView};

use super::{Misfits, RingLayout, Room, RunKey, parts, ring_of};

/// SJF-BCO-online: the GPU choice of SJF-BCO (Yu, Ji, Rajan, Liu, ACM
/// MobiHoc 2022) run online on ring-all-reduce jobs with reserved
/// bandwidth, a baseline of the crate's GADGET-style scheduler (after the
/// abstract of GADGET, Yu, Tian, Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022;
/// the crate's own design).
///
/// # Rule
///
/// Jobs waiting for a start are ordered by `(G, arrival, id)`, `G` the
/// largest worker count a job allows (every job runs at it). At each event
/// the policy walks that queue and places each job on `G` free GPUs with
/// SJF-BCO's rule for its size:
///
/// * **FA-FFP** when `G ≤ κ`: the candidates of least accumulated load
///   `U` (ties by server, then local index), or with
///   [`FaFfpStrategy::PackOccupied`] servers already running a job first,
///   then best fit;
/// * **LBSGF** when `G > κ`: the servers of least average `U` until their
///   GPUs reach `λ·G`, then the least-`U` candidates among them.
///
/// The changes from the offline algorithm: `U[g]` accumulates the duration
/// `d = ⌈τ·F/slot⌉` in slots of every job placed on GPU `g` (the
/// simulator's iteration time on the chosen GPUs), the budget is `θ = ∞`,
/// and a candidate GPU must be **free now** (no waiting for completions: a
/// job that does not fit waits for a later event). A server's candidates
/// are its free GPUs of least `U`, as many as its other resources allow
/// workers. A choice on several servers must keep the ring's reserved
/// bandwidth `b` per direction on each of them (`2b` of the
/// both-directions pool): when the rule spans servers, the servers without
/// that room lose their candidates and the rule chooses again. Strict
/// order by default (head-of-line blocking, as in the offline algorithm:
/// the first job that does not fit stops the walk); with `backfill`, later
/// jobs may start. Non-preemptive. A ring that fits nowhere on the empty
/// cluster is rejected on arrival, with the reason
/// ([`Rejection::Unschedulable`](crate::sim::Rejection::Unschedulable)).
///
/// The policy keeps `U` across the events of one run and starts afresh
/// when it sees another instance or time going backwards.
///
/// # Parameters
///
/// Public fields, set on a [`Default`] value:
///
/// * `kappa` (default 8): jobs with `G ≤ κ` use FA-FFP;
/// * `lambda` (default 1): LBSGF's spreading factor, `≥ 1`;
/// * `faffp` (default [`FaFfpStrategy::LeastAccumulated`]);
/// * `backfill` (default `false`).
///
/// # Errors
///
/// [`GadgetError::UnsupportedJob`] when the instance has a
/// parameter-server job, [`GadgetError::TooLarge`] above `2²⁰` usable
/// GPUs, [`GadgetError::InvalidOption`] for `κ = 0` or `λ < 1`; timing
/// errors of the simulator's rate.
///
/// # Complexity
///
/// `O(N log N)` per event for `N` usable GPUs, plus `O(N log N)` per job
/// the walk reaches.
///
/// # Example
///
/// ```
/// use dmlsched::algorithms::sjf_bco::SjfBcoOnline;
/// use dmlsched::model::*;
/// use dmlsched::sim::{simulate, SimOptions};
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(8.0).nic(5.0), 20.0);
/// let ring = |w| RarJob {
///     workers: WorkerCounts::Fixed(w),
///     iterations: 2,
///     reserved_bandwidth_bps: Some(2.0),
///     ..RarJob::default()
/// };
/// // The 2-GPU job goes first (smallest G), then the 6-GPU ring across
/// // both servers, reserving 2 per direction on each.
/// let jobs = vec![Job::new(JobId(0), 0.0, ring(6)), Job::new(JobId(1), 0.0, ring(2))];
/// let inst = Instance::new(cluster, jobs, 1.0, 20)?;
/// let r = simulate(&inst, &mut SjfBcoOnline::default(), &SimOptions::default())?;
/// assert!(r.jobs.iter().all(|j| j.start_s == Some(0.0)));
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct SjfBcoOnline {
    /// Jobs with `G ≤ κ` use FA-FFP, the others LBSGF.
    pub kappa: u32,
    /// LBSGF's spreading factor `λ ≥ 1`.
    pub lambda: f64,
    /// FA-FFP's GPU choice.
    pub faffp: FaFfpStrategy,
    /// Let later jobs start when one does not fit.
    pub backfill: bool,
    run: Option<OnlineState>,
    key: RunKey,
    misfits: Misfits,
}

impl Default for SjfBcoOnline {
    fn default() -> Self {
        SjfBcoOnline {
            kappa: 8,
            lambda: 1.0,
            faffp: FaFfpStrategy::LeastAccumulated,
            backfill: false,
            run: None,
            key: RunKey::default(),
            misfits: Misfits::default(),
        }
    }
}

/// The state of one run: the layout and `U` per flat GPU.
#[derive(Debug, Clone, PartialEq)]
struct OnlineState {
    layout: RingLayout,
    u: Vec<f64>,
}

impl SjfBcoOnline {
    /// The rule of a job of `g` workers.
    fn rule(&self, g: u32) -> Choice {
        if g <= self.kappa {
            Choice::FaFfp(self.faffp)
        } else {
            Choice::Lbsgf(self.lambda)
        }
    }

    fn validate(&self) -> Result<(), GadgetError> {
        if self.kappa == 0 {
            return Err(GadgetError::InvalidOption {
                name: "kappa",
                reason: "κ must be ≥ 1".into(),
            });
        }
        if !(self.lambda.is_finite() && self.lambda >= 1.0) {
            return Err(GadgetError::InvalidOption {
                name: "lambda",
                reason: format!("λ = {} is not finite and ≥ 1", self.lambda),
            });
        }
        Ok(())
    }
}

/// The candidates of the ring `r` of `job`: on every server, its free GPUs
/// of least `U` (ties by index), as many as the server can take workers
/// (keeping `b` for the ring when `multi`); flat GPUs, ascending.
fn candidates(
    st: &OnlineState,
    room: &Room,
    view: &SimView<'_>,
    (job, r): (&Job, &RarJob),
    multi: bool,
) -> Vec<usize> {
    let mut out = Vec::new();
    for s in 0..st.layout.servers.len() {
        let cap = room.workers_on(view, job, r, s, multi) as usize;
        if cap == 0 {
            continue;
        }
        let mut free: Vec<usize> = room.free_of(&st.layout, s).collect();
        if cap < free.len() {
            free.sort_by(|&a, &b| st.u[a].total_cmp(&st.u[b]).then(a.cmp(&b)));
            free.truncate(cap);
            free.sort_unstable();
        }
        out.extend(free);
    }
    out
}

/// `rule`'s choice of `w` GPUs for `job` now: on all candidates, and when
/// that spans servers of a reserving ring, again on the servers with room
/// for the reservation.
fn place(
    st: &OnlineState,
    room: &Room,
    view: &SimView<'_>,
    (job, r, w): (&Job, &RarJob, u32),
    rule: Choice,
) -> Option<Vec<usize>> {
    let layout = &st.layout;
    let occupied = |s: u32| layout.gpus_of(s as usize).any(|g| !room.gpu_free[g]);
    let load = GpuLoad {
        servers: &layout.servers,
        gpu_server: &layout.gpu_server,
        u: &st.u,
        occupied: &occupied,
    };
    let g = w as usize;
    let first = load.choose(rule, &candidates(st, room, view, (job, r), false), g, None)?;
    if r.reserved_nic_bps(2) <= 0.0 || parts(layout, &first).len() < 2 {
        return Some(first);
    }
    load.choose(rule, &candidates(st, room, view, (job, r), true), g, None)
}

impl Policy for SjfBcoOnline {
    fn name(&self) -> String {
        if self.backfill {
            "sjf-bco-online-backfill".into()
        } else {
            "sjf-bco-online".into()
        }
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.misfits.rejection(job)
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.validate()?;
        if self.key.is_new_run(view) || self.run.is_none() {
            let layout = RingLayout::new(view.instance(), "sjf-bco-online")?;
            let u = vec![0.0; layout.gpu_server.len()];
            self.run = Some(OnlineState { layout, u });
            self.misfits = Misfits::default();
        }
        let mut q: Vec<JobView<'_>> = view.active().filter(JobView::is_queued).collect();
        let mut actions = self.misfits.reject(view, &mut q);
        let rules: Vec<(JobView<'_>, Choice)> = {
            q.sort_by(|a, b| {
                let g = |j: &JobView<'_>| ring_of(j.job()).map_or(0, |(_, w)| w);
                g(a).cmp(&g(b))
                    .then(a.job().arrival_s.total_cmp(&b.job().arrival_s))
                    .then(a.id().cmp(&b.id()))
            });
            q.into_iter()
                .map(|j| {
                    let w = ring_of(j.job()).map_or(0, |(_, w)| w);
                    (j, self.rule(w))
                })
                .collect()
        };
        let Some(st) = self.run.as_mut() else {
            return Ok(actions);
        };
        let mut room = Room::now(&st.layout, view);
        for (j, rule) in rules {
            let job = j.job();
            let Some((r, w)) = ring_of(job) else { continue };
            match place(st, &room, view, (job, r, w), rule) {
                Some(sel) => {
                    let action = room.start(&st.layout, view, job, &sel);
                    if let Action::SetAllocation { placement, .. } = &action {
                        let secs = view.remaining_time_s(job, placement)?;
                        let d = ceil_tol(secs / view.instance().slot_length_s());
                        // Only an order: a NaN or infinite duration counts
                        // as the longest.
                        let d = if d.is_nan() {
                            1e300
                        } else {
                            d.clamp(1.0, 1e300)
                        };
                        for &g in &sel {
                            st.u[g] += d;
                        }
                    }
                    actions.push(action);
                }
                None if self.backfill => {}
                None => break,
            }
        }
        Ok(actions)
    }
}

//! RRH: the risk–reward heuristic.

use std::borrow::Cow;
use std::collections::BTreeMap;

use crate::model::{Elasticity, JobId, units};
use crate::schedule::Placement;
use crate::sim::{Action, Event, JobView, Policy, Rejection, SimView};

use super::common::Standalone;
use super::requested_tasks;
use crate::placement::realloc::Realloc;
use crate::placement::{PlacementRule, Placer};

/// The risk–reward heuristic (Irwin, Grit, Chase, "Balancing Risk and
/// Reward in a Market-Based Task Service", HPDC 2004), in the crate's
/// interpretation (the OASiS paper, Bao, Peng, Wu, Li, IEEE INFOCOM 2018,
/// compares with it and describes it in one sentence).
///
/// Every job runs at a fixed size `n_i`, its [`requested_tasks`] (all its
/// workers, with [`ps_for`](super::ps_for) PSs; the OASiS reproduction
/// passes its drawn sizes through the jobs' `max_workers`).
///
/// **Slots.** The rule is stated in slots of the instance's slot length
/// `Δ`. A job's duration at its fixed size, `⌈Wr_i/n_i⌉` slots, is
/// `⌈ρ_i/Δ⌉` where `ρ_i` is the simulator's timing oracle
/// [`SimView::remaining_time_s`] on the job's current placement (running
/// jobs) or on its canonical placement — the placement rule [`RrhParams::placement`]
/// gives it alone on the empty cluster (other jobs). A job started at time
/// `s` completes in slot `c(s) = ⌈(s + ρ_i)/Δ⌉ − 1` (the slot in which its
/// work runs out, as the simulator counts it); with decisions on slot
/// boundaries this is the slot formula `s + ⌈Wr_i/n_i⌉ − 1`. `δ_j^run = c(now) −
/// a_j` is the elapsed time of job `j` if it ran from now at its size.
///
/// **Admission,** at the job's arrival event only:
///
/// * start: now if its allocation can be placed now; otherwise the slot
///   after the earliest projected completion slot `c_j(now)` of a running
///   job;
/// * reward `R_i = f_i(c_i(start) − a_i)`;
/// * risk `C_i = Σ_j [f_j(δ_j^run) − f_j(δ_j^run + ⌈ρ_i/Δ⌉)]` over the
///   admitted jobs that are not running;
/// * admit if `R_i − C_i > θ` ([`RrhParams::theta`], 0 by default), otherwise
///   reject for good ([`Action::Reject`]). A job whose fixed size does not
///   fit the empty cluster is always rejected.
///
/// **At every event,** after admission: admitted jobs with
/// `f_j(δ_j^run) = 0` are dropped (rejected); the others are ranked by
/// urgency `u_j = f_j(δ_j^run) − f_j(δ_j^run + 1)`, largest first (ties:
/// running jobs first, then earlier arrival), and in that order each gets
/// its fixed allocation if it can be placed. A running job keeps its
/// current placement when its capacity is still unused; otherwise a rigid
/// gang is not served and an elastic job is placed anew. Jobs not served
/// are paused. A running job that is not preemptible is never paused or
/// dropped: it keeps its allocation ahead of the ranking.
///
/// New allocations go on free capacity before capacity that paused jobs
/// give up, by [`RrhParams::placement`] (default [`PlacementRule::BestFit`]);
/// the pointer of [`PlacementRule::RoundRobin`] is kept between decisions
/// in the policy's private run state.
///
/// # Complexity
///
/// `O(J log J)` to rank `J` active jobs, one oracle call per job, and
/// `O(J · (n + p) · H)` to place them on `H` machines, per event.
///
/// # Example
///
/// One GPU, 10 s slots. A (100 s of work, utility 1) runs; B (50 s,
/// utility `100 − δ`) arrives at 1 s and is admitted: its reward at the
/// earliest start (slot 10, after A) is `f(14) = 86` and nothing admitted
/// waits. Its urgency `f(5) − f(6) = 1` beats A's 0, so A pauses while B
/// runs.
///
/// ```
/// use dmlsched::baselines::Rrh;
/// use dmlsched::placement::PlacementRule;
/// use dmlsched::model::*;
/// use dmlsched::sim::{simulate, SimOptions};
///
/// let job = |id, t, minibatches| {
///     let ps = PsJob {
///         epochs: 1, data_chunks: 1, minibatches_per_chunk: minibatches,
///         minibatch_compute_s: 0.1, gradient_bytes: 0.0,
///         worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
///         ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
///         max_workers: 1, max_ps: 1, ps_at_most_workers: true,
///         sync: SyncMode::Asynchronous, layers: None,
///     };
///     Job::new(JobId(id), t, Architecture::ParameterServer(ps))
/// };
/// let b = job(1, 1.0, 500).with_utility(Utility::Linear { g1: 100.0, slope: 1.0 });
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(1.0).cpu_cores(64.0).memory(64e9).nic(1e12), 1e11);
/// let inst = Instance::new(cluster, vec![job(0, 0.0, 1000), b], 10.0, 100)?;
/// let mut rrh = Rrh::default();
/// assert_eq!((rrh.params().theta, rrh.params().placement), (0.0, PlacementRule::BestFit));
/// let r = simulate(&inst, &mut rrh, &SimOptions::default())?;
/// assert_eq!(r.jobs[0].preemptions, 1);
/// assert!((r.jobs[1].finish_s.unwrap() - 51.0).abs() < 1e-9);
/// assert!((r.jobs[0].finish_s.unwrap() - 150.0).abs() < 1e-9);
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Rrh {
    /// The settings.
    params: RrhParams,
    /// What the policy remembers between the events of a run.
    state: RrhState,
}

/// The settings of [`Rrh`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RrhParams {
    /// Admission threshold `θ` on reward minus risk (default 0).
    pub theta: f64,
    /// How tasks are spread over machines (default best fit).
    pub placement: PlacementRule,
}

impl Default for RrhParams {
    fn default() -> Self {
        RrhParams {
            theta: 0.0,
            placement: PlacementRule::BestFit,
        }
    }
}

/// The state [`Rrh`] carries between events (admission tests done,
/// round-robin pointer); a new run with the same policy value starts
/// afresh.
#[derive(Debug, Clone, PartialEq, Default)]
struct RrhState {
    /// Whether the job at each position of the instance's job list had
    /// its admission test (positions past the end: not yet).
    tested: Vec<bool>,
    pointer: usize,
    last_now_s: Option<f64>,
    /// Why each rejected job was rejected.
    rejections: BTreeMap<JobId, Rejection>,
}

impl RrhState {
    /// Whether `j` had its admission test.
    fn tested(&self, j: &JobView<'_>) -> bool {
        self.tested.get(j.position()).copied().unwrap_or(false)
    }

    /// Records that `j` had its admission test.
    fn set_tested(&mut self, j: &JobView<'_>) {
        let p = j.position();
        if self.tested.len() <= p {
            self.tested.resize(p + 1, false);
        }
        self.tested[p] = true;
    }
}

impl Rrh {
    /// RRH with `params` and an empty run state.
    pub fn new(params: RrhParams) -> Self {
        Rrh {
            params,
            state: RrhState::default(),
        }
    }

    /// The settings.
    pub fn params(&self) -> &RrhParams {
        &self.params
    }
}

/// What RRH knows about one active job at a decision.
struct Estimate {
    /// Remaining seconds at the fixed size (`None`: does not fit the empty
    /// cluster).
    rho_s: Option<f64>,
    arrival_slot: u32,
}

/// The slot in which work of `rho_s` seconds started at `start_s` runs out.
fn completion_slot(start_s: f64, rho_s: f64, slot_s: f64) -> u32 {
    units::slots_covering(start_s + rho_s, slot_s).saturating_sub(1)
}

impl Rrh {
    fn estimate(
        &self,
        view: &SimView<'_>,
        j: &JobView<'_>,
        placements: &mut Standalone,
    ) -> crate::Result<Estimate> {
        let job = j.job();
        let placement: Option<Cow<'_, Placement>> = if j.is_running() {
            Some(Cow::Borrowed(j.placement()))
        } else {
            let (w, p) = requested_tasks(job);
            placements.get(view.instance(), job, w, p, self.params.placement)
        };
        let rho_s = match placement {
            Some(p) => Some(view.remaining_time_s(job, &p)?),
            None => None,
        };
        Ok(Estimate {
            rho_s,
            arrival_slot: view.instance().arrival_slot(job),
        })
    }

    /// `δ^run` of a job: elapsed slots if it ran from now.
    fn delta_run(view: &SimView<'_>, est: &Estimate) -> Option<u32> {
        let slot_s = view.instance().slot_length_s();
        est.rho_s
            .map(|rho| completion_slot(view.now_s(), rho, slot_s).saturating_sub(est.arrival_slot))
    }

    /// The admission test of `i` (`Some(true)`: admit).
    fn admit(
        &self,
        view: &SimView<'_>,
        i: &JobView<'_>,
        est: &[(JobView<'_>, Estimate)],
        placements: &mut Standalone,
    ) -> crate::Result<bool> {
        let slot_s = view.instance().slot_length_s();
        let job = i.job();
        let mine = self.estimate(view, i, placements)?;
        let Some(rho) = mine.rho_s else {
            return Ok(false);
        };
        let (w, p) = requested_tasks(job);
        let fits_now = Placer::new(view.instance(), view.free_all(), self.params.placement)
            .place(job, w, p)
            .is_some();
        let start_s = if fits_now {
            view.now_s()
        } else {
            let earliest = est
                .iter()
                .filter(|(j, _)| j.is_running())
                .filter_map(|(_, e)| e.rho_s)
                .map(|r| completion_slot(view.now_s(), r, slot_s))
                .min();
            let slot = earliest.map_or(view.slot(), |c| c.saturating_add(1));
            f64::from(slot) * slot_s
        };
        let reward = job
            .utility
            .value(completion_slot(start_s, rho, slot_s).saturating_sub(mine.arrival_slot));
        let d = units::slots_covering(rho, slot_s);
        let mut risk = 0.0;
        for (j, e) in est {
            if j.id() == i.id() || j.is_running() || !self.state.tested(j) {
                continue;
            }
            if let Some(delta) = Self::delta_run(view, e) {
                let f = &j.job().utility;
                risk += f.value(delta) - f.value(delta.saturating_add(d));
            }
        }
        Ok(reward - risk > self.params.theta)
    }
}

impl Policy for Rrh {
    fn name(&self) -> String {
        "rrh".into()
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.state.rejections.get(&job).cloned()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        let now = view.now_s();
        if self.state.last_now_s.is_some_and(|t| now < t) {
            // A new run with the same policy value.
            self.state = RrhState::default();
        }
        self.state.last_now_s = Some(now);

        let mut est: Vec<(JobView<'_>, Estimate)> = Vec::new();
        let mut placements = Standalone::default();
        for j in view.active() {
            let e = self.estimate(view, &j, &mut placements)?;
            est.push((j, e));
        }
        let mut actions = Vec::new();
        let mut gone: Vec<JobView<'_>> = Vec::new();
        let closed = |j: &JobView<'_>| j.is_running() && !j.job().discipline.preemptible;

        // 1. Admission of the arriving job.
        if let Event::Arrival { job } = *event
            && let Some((i, _)) = est.iter().find(|(j, _)| j.id() == job)
            && !self.state.tested(i)
        {
            let i = *i;
            let admit = self.admit(view, &i, &est, &mut placements)?;
            self.state.set_tested(&i);
            if !admit && !closed(&i) {
                actions.push(Action::Reject { job });
                self.state.rejections.insert(
                    job,
                    Rejection::Other {
                        why: "RRH's admission test: its reward minus the risk it brings to the admitted \
                              jobs is at most the threshold (or it has no standalone run time)"
                            .into(),
                    },
                );
                gone.push(i);
            }
        }

        // 2. Drop admitted jobs whose utility reached 0.
        for (j, e) in &est {
            if !self.state.tested(j) || gone.iter().any(|g| g.id() == j.id()) || closed(j) {
                continue;
            }
            let zero = Self::delta_run(view, e).is_none_or(|d| j.job().utility.value(d) <= 0.0);
            if zero {
                actions.push(Action::Reject { job: j.id() });
                self.state.rejections.insert(
                    j.id(),
                    Rejection::Other {
                        why: "its utility would be 0 by the time it could finish".into(),
                    },
                );
                gone.push(*j);
            }
        }

        // 3. Rank and serve.
        let mut ranked: Vec<(usize, f64)> = est
            .iter()
            .enumerate()
            .filter(|(_, (j, _))| {
                self.state.tested(j)
                    && !gone.iter().any(|g| g.id() == j.id())
                    && !closed(j)
                    && !j.has_plan()
            })
            .map(|(k, (j, e))| {
                let u = Self::delta_run(view, e).map_or(0.0, |d| {
                    let f = &j.job().utility;
                    f.value(d) - f.value(d.saturating_add(1))
                });
                (k, u)
            })
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then(est[b.0].0.is_running().cmp(&est[a.0].0.is_running()))
                .then(a.0.cmp(&b.0))
        });
        let managed: Vec<JobView<'_>> = ranked.iter().map(|&(k, _)| est[k].0).collect();
        let mut r = Realloc::new(
            view,
            self.params.placement,
            self.state.pointer,
            &managed,
            &gone,
        );
        for (e, j) in managed.iter().enumerate() {
            if j.is_running() && r.keep(e) {
                continue;
            }
            if j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid {
                continue;
            }
            let (w, p) = requested_tasks(j.job());
            r.add(e, w, p);
        }
        self.state.pointer = r.pointer();
        actions.extend(r.into_actions());
        Ok(actions)
    }
}

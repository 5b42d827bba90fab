//! Optimus-style marginal-gain allocation.

use std::collections::HashMap;

use crate::model::{Architecture, Elasticity, Job};
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::common::Standalone;
use crate::placement::PlacementRule;
use crate::placement::dominant_share;
use crate::placement::realloc::Realloc;
use rustc_hash::FxBuildHasher;

/// Optimus-style marginal gain (Peng et al., "Optimus: An Efficient Dynamic
/// Resource Scheduler for Deep Learning Clusters", EuroSys 2018, and its
/// public code).
///
/// At every event the sizes of all active jobs are recomputed from
/// scratch:
///
/// 1. in arrival order, every job gets its smallest allocation — 1 worker
///    and 1 PS for an elastic parameter-server job, its full gang for a
///    rigid one, its smallest allowed worker count for a ring-all-reduce
///    job — if that can be placed; jobs that cannot wait (later jobs are
///    still tried);
/// 2. each job with an allocation `(w, p)` proposes two actions, with the
///    gain of the remaining time per unit of dominant share:
///    `gain_W = (ρ(w,p) − ρ(w+1,p)) / s^W` and
///    `gain_S = (ρ(w,p) − ρ(w,p+1)) / s^S`, where `s^W`, `s^S` are the
///    dominant shares of one worker and one PS against the cluster's total
///    capacity. An action is not allowed past `max_workers` or `max_ps`,
///    past `p ≤ w` when the job has that rule, or if the larger allocation
///    does not fit the empty cluster. Ring-all-reduce jobs only add workers,
///    from one allowed count to the next (the gain is divided by the share
///    of all added workers); rigid parameter-server gangs do not grow;
/// 3. the action with the largest gain among those that can be placed now
///    is applied, and the gains of its job are recomputed; ties go to the
///    earlier arrival, then worker before PS, then the smaller job id. The
///    loop stops when the best gain among placeable actions is ≤ 0 or none
///    can be placed. With [`Optimus::stop_at_first_misfit`] (the public
///    code's behaviour) it stops as soon as the best action overall cannot
///    be placed.
///
/// **Remaining time.** `ρ(w, p)` is the simulator's timing oracle,
/// [`SimView::remaining_time_s`] (the "oracle" speed source, and
/// the only one here: fitting Optimus's OPT-S speed function online,
/// from observed (workers, PSs, speed) points, is out of scope). Because `ρ` may depend
/// on where tasks run, it is evaluated on a *canonical placement* of
/// `(w, p)`: the placement [`Optimus::placement`] gives the job alone on the
/// empty cluster (or, for a size that does not fit even there, all workers
/// on the first machine that may host them and all PSs on the first that
/// may host PSs, ignoring capacity: such an action has a gain but never
/// fits). It therefore does not change while the other jobs are
/// placed, and "recompute that job's gains" is exact. (With the layered
/// model or `PsTiming::NoLocality` the placement does not matter.)
///
/// **Placement.** Tasks go first onto the machines the job already uses
/// (so unchanged jobs keep their placement), the rest by
/// [`Optimus::placement`] — on free capacity before capacity that other
/// jobs give up in the same decision; the round-robin pointer starts at
/// machine 0 at every decision. Jobs that get nothing are paused.
///
/// **Disciplines.** Running rigid gangs and jobs holding a plan keep their
/// allocation and take no part. A running job that is not preemptible
/// first gets its smallest allocation on its own machines (before step 1),
/// so it is never paused.
///
/// # Complexity
///
/// Each decision applies at most `Σ_j (W_j + P_j)` actions and meets at
/// most `2J` misfits (a misfit stays one until its job grows); each step
/// scans the `J` active jobs and tests one placement (`O(H)` for `H`
/// machines): `O((Σ_j (W_j + P_j) + J) · (J + H))` per event, plus one
/// oracle call per distinct `(job, w, p)` evaluated. A job with no growth
/// action (a fixed-size ring, a rigid gang, a job at its caps) needs no
/// `ρ`, and the oracle is not asked for it (nor can its timing errors
/// stop the decision).
///
/// # Example
///
/// Two jobs on 4 GPUs, 0.1 s per mini-batch, no gradient traffic (so a
/// PS adds nothing): after one worker each, X (2400 mini-batches) gains
/// most from a second worker, then Y (1200); Y ends at 60 s and X, alone,
/// grows to its cap of 4 workers and ends at 90 s.
///
/// ```
/// use dmlsched::baselines::Optimus;
/// use dmlsched::model::*;
/// use dmlsched::sim::{simulate, SimOptions};
///
/// let job = |id, minibatches| {
///     let ps = PsJob {
///         epochs: 1, data_chunks: 1, minibatches_per_chunk: minibatches,
///         minibatch_compute_s: 0.1, gradient_bytes: 0.0,
///         worker: Resources::zero().gpus(1.0).cpu_cores(1.0).memory(1e9).nic(1e9),
///         ps: Resources::zero().cpu_cores(1.0).memory(1e9).nic(1e9),
///         max_workers: 4, max_ps: 2, ps_at_most_workers: true,
///         sync: SyncMode::Asynchronous, layers: None,
///     };
///     Job::new(JobId(id), 0.0, Architecture::ParameterServer(ps))
/// };
/// let cluster = Cluster::homogeneous(1, Resources::zero().gpus(4.0).cpu_cores(64.0).memory(64e9).nic(1e12), 1e11);
/// let inst = Instance::new(cluster, vec![job(0, 2400), job(1, 1200)], 10.0, 100)?;
/// let r = simulate(&inst, &mut Optimus::default(), &SimOptions::default())?;
/// assert!((r.jobs[1].finish_s.unwrap() - 60.0).abs() < 1e-9);
/// assert!((r.jobs[0].finish_s.unwrap() - 90.0).abs() < 1e-9);
///
/// let public_code = Optimus { stop_at_first_misfit: true, ..Optimus::default() };
/// assert_eq!(public_code.placement, dmlsched::placement::PlacementRule::BestFit);
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Optimus {
    /// Stop at the first step whose best action cannot be placed, instead of
    /// skipping it (default `false`).
    pub stop_at_first_misfit: bool,
    /// How new tasks are spread over machines, and the canonical placement
    /// the remaining time is evaluated on (default best fit).
    pub placement: PlacementRule,
}

impl Default for Optimus {
    fn default() -> Self {
        Optimus {
            stop_at_first_misfit: false,
            placement: PlacementRule::BestFit,
        }
    }
}

/// One growth action of one job: the allocation after it and its gain.
#[derive(Debug, Clone, Copy)]
struct Step {
    workers: u32,
    ps: u32,
    gain: f64,
}

/// The next allocation a job may grow to by `kind` (0: worker, 1: PS).
fn grown(job: &Job, w: u32, p: u32, kind: usize) -> Option<(u32, u32)> {
    match &job.architecture {
        Architecture::ParameterServer(ps) => {
            if job.discipline.elasticity == Elasticity::Rigid {
                return None;
            }
            if kind == 0 {
                (w < ps.max_workers).then_some((w + 1, p))
            } else {
                let ok = p < ps.max_ps && (!ps.ps_at_most_workers || p < w);
                ok.then_some((w, p + 1))
            }
        }
        Architecture::RingAllReduce(r) => {
            if kind != 0 {
                return None;
            }
            let next = match &r.workers {
                crate::model::WorkerCounts::Fixed(_) => None,
                crate::model::WorkerCounts::Allowed(v) => {
                    v.iter().copied().filter(|&c| c > w).min()
                }
            };
            next.map(|c| (c, 0))
        }
    }
}

/// Remaining times per `(entry, w, p)`, on canonical placements.
struct Oracle<'v, 'a> {
    view: &'v SimView<'a>,
    rule: PlacementRule,
    cache: HashMap<(usize, u32, u32), f64, FxBuildHasher>,
    placements: Standalone,
}

impl Oracle<'_, '_> {
    /// `ρ(w, p)` on the canonical placement.
    fn rho(&mut self, e: usize, job: &Job, w: u32, p: u32) -> crate::Result<f64> {
        if let Some(&r) = self.cache.get(&(e, w, p)) {
            return Ok(r);
        }
        let placement = self
            .placements
            .oracle(self.view.instance(), job, w, p, self.rule);
        let r = self.view.remaining_time_s(job, &placement)?;
        self.cache.insert((e, w, p), r);
        Ok(r)
    }
}

impl Policy for Optimus {
    fn name(&self) -> String {
        if self.stop_at_first_misfit {
            "optimus-stop".into()
        } else {
            "optimus".into()
        }
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        let total = view.instance().cluster().total_capacity();
        let managed: Vec<JobView<'_>> = view
            .active()
            .filter(|j| {
                !(j.has_plan()
                    || j.is_running() && j.job().discipline.elasticity == Elasticity::Rigid)
            })
            .collect();
        let mut r = Realloc::new(view, self.placement, 0, &managed, &[]);
        // Step 0: running non-preemptible jobs keep their minimum in place.
        for (e, j) in managed.iter().enumerate() {
            if j.is_running() && !j.job().discipline.preemptible {
                let (w, p) = j.job().min_tasks();
                r.add(e, w, p);
            }
        }
        // Step 1: the smallest allocation, in arrival order.
        for (e, j) in managed.iter().enumerate() {
            if r.total(e).workers == 0 {
                let (w, p) = j.job().min_tasks();
                r.add(e, w, p);
            }
        }
        // Steps 2–3: marginal gains.
        let mut oracle = Oracle {
            view,
            rule: self.placement,
            cache: HashMap::with_capacity_and_hasher(3 * managed.len(), FxBuildHasher),
            placements: Standalone::default(),
        };
        let mut steps: Vec<[Option<Step>; 2]> = Vec::with_capacity(managed.len());
        for e in 0..managed.len() {
            steps.push(self.steps(&mut oracle, &r, e, &total)?);
        }
        // A step that does not fit never fits later in the decision (the
        // scratch capacity only shrinks), until its job changes size.
        let mut misfit: Vec<[bool; 2]> = vec![[false; 2]; managed.len()];
        let key = |e: usize, k: usize| {
            let j = managed[e].job();
            (j.arrival_s, k, j.id)
        };
        loop {
            let mut best: Option<(usize, usize, Step)> = None;
            for (e, s) in steps.iter().enumerate() {
                for (k, st) in s.iter().enumerate() {
                    let Some(st) = *st else { continue };
                    if st.gain <= 0.0 || (misfit[e][k] && !self.stop_at_first_misfit) {
                        continue;
                    }
                    let better = best.is_none_or(|(be, bk, bst)| {
                        let (a, b) = (key(e, k), key(be, bk));
                        st.gain
                            .total_cmp(&bst.gain)
                            .then(b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)))
                            == std::cmp::Ordering::Greater
                    });
                    if better {
                        best = Some((e, k, st));
                    }
                }
            }
            let Some((e, k, st)) = best else { break };
            let now = r.total(e);
            let (dw, dp) = (
                st.workers.saturating_sub(now.workers),
                st.ps.saturating_sub(now.ps),
            );
            if !misfit[e][k] && r.add(e, dw, dp) {
                steps[e] = self.steps(&mut oracle, &r, e, &total)?;
                misfit[e] = [false; 2];
            } else if self.stop_at_first_misfit {
                break;
            } else {
                misfit[e][k] = true;
            }
        }
        Ok(r.into_actions())
    }
}

impl Optimus {
    /// The two growth actions of entry `e` at its current new size.
    fn steps(
        &self,
        oracle: &mut Oracle<'_, '_>,
        r: &Realloc<'_>,
        e: usize,
        total: &crate::model::Resources,
    ) -> crate::Result<[Option<Step>; 2]> {
        let job = r.job(e);
        let now = r.total(e);
        let mut out = [None, None];
        if now.workers == 0 {
            return Ok(out);
        }
        // `ρ(w, p)` of the current size, evaluated only once a growth
        // action needs it: a job that cannot grow (a fixed-size ring, a
        // rigid gang, a job at its caps) has no step, whatever its
        // remaining time, so the oracle is not asked.
        let mut rho = None;
        for (kind, slot) in out.iter_mut().enumerate() {
            let Some((w, p)) = grown(job, now.workers, now.ps, kind) else {
                continue;
            };
            let rho = match rho {
                Some(r) => r,
                None => *rho.insert(oracle.rho(e, job, now.workers, now.ps)?),
            };
            let next = oracle.rho(e, job, w, p)?;
            let added = job.demand_for(w.saturating_sub(now.workers), p.saturating_sub(now.ps));
            let s = dominant_share(&added, total).max(1e-12);
            let gain = (rho - next) / s;
            if gain.is_finite() {
                *slot = Some(Step {
                    workers: w,
                    ps: p,
                    gain,
                });
            }
        }
        Ok(out)
    }
}

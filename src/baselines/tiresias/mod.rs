//! Tiresias: discretised two-dimensional least attained service.
//!
//! The rule is in `rule.rs`, the exact-arithmetic shortcut in `fast.rs`.

use std::collections::BTreeMap;

use crate::model::JobId;
use crate::schedule::Placement;
use crate::sim::{Action, Event, Policy, SimView};

use super::RequestedSizes;
use super::common::{Shortcut, ShortcutUse, WithShortcut, to_actions};
use crate::placement::PlacementRule;

mod fast;
mod rule;

use fast::Shapes;

/// Least attained service over a few priority queues, after Tiresias (Gu
/// et al., "Tiresias: A GPU Cluster Manager for Distributed Deep
/// Learning", NSDI 2019): discretised two-dimensional least attained
/// service (attained GPU-seconds). It needs no knowledge of remaining work — its main practical
/// advantage, to be stated in any comparison with oracle policies.
///
/// # Rule
///
/// * **Attained service** `S_j` is the job's GPU-seconds so far,
///   [`JobView::attained_gpu_s`](crate::sim::JobView::attained_gpu_s) (GPUs held × time, the "2D" of 2D-LAS).
/// * **Queues** `Q_0 … Q_{K−1}` with thresholds `0 = T_0 < T_1 < … <
///   T_{K−1}`: the job is in the queue of the largest `T_k ≤ S_j`, that is
///   queue `#{k ≥ 1 : T_k ≤ S_j}`. [`Tiresias::thresholds`] lists `T_1 …
///   T_{K−1}` in increasing order (default `[3250, 7200]`: K = 3 queues,
///   the defaults of the Tiresias authors' public simulator,
///   `SymbioticLab/Tiresias`, whose queue limits are 3,250 and 7,200
///   GPU-seconds for its three queues).
/// * **Order**: lower queue first, then arrival order (ties by instance
///   order).
/// * At each event, walk that order and keep or start every job whose
///   requested size fits what is left (backfilling): its entry in
///   [`Tiresias::requests`] (a requested configuration `k^req` from a trace
///   or a generator), else [`requested_tasks`](super::requested_tasks).
///   A running job that stays selected keeps its placement; one whose
///   resources went to jobs ahead of it is preempted (the simulator charges
///   `reconfiguration_s` when it resumes). A starting job is placed with
///   [`Tiresias::placement`] on room that the running jobs behind it do
///   not hold if possible, and only otherwise on their resources, so a
///   start preempts only when it must. Jobs are never resized.
/// * **Starvation guard** (off by default): with `starve_factor = Some(f)`,
///   a paused job that has waited at least `f ×` its last run
///   ([`JobView::last_run_s`](crate::sim::JobView::last_run_s)) moves back to `Q_0`: its attained service is
///   counted again from that moment (the policy remembers the offset).
///
/// **What is never preempted.** Running jobs that are not preemptible keep
/// their allocation and are not part of the order; jobs holding a plan are
/// left alone. A rigid preemptible gang resumes only on the placement it
/// ran on (the gang rule of [`crate::schedule::verify`]: the same placement
/// in every slot it runs), which the policy remembers.
///
/// **Wake-ups.** Service grows while jobs run; the policy asks the
/// simulator ([`Policy::next_wakeup_s`]) to wake it when the next running
/// job crosses a threshold (or a paused job becomes due under the
/// starvation guard), so demotions happen exactly on time with plain
/// event-driven decisions. It also re-decides at ticks if they are on.
///
/// # Parameters
///
/// * `thresholds` (default `[3250.0, 7200.0]` GPU-seconds): `T_1 …
///   T_{K−1}` ([`Tiresias::SIMULATOR_THRESHOLDS`]);
/// * `starve_factor` (default `None`): the starvation guard;
/// * `requests` (default empty): requested sizes per job;
/// * `placement` (default [`PlacementRule::BestFit`], the consolidated
///   placement of the Tiresias simulator's default scheme).
///
/// # Complexity
///
/// `O(J + K + W·P)` per event for `J` candidate jobs, `K` queues, `W`
/// waiting jobs and `P` one placement or take (`O((w + p)·H)`) when every
/// free capacity, demand and reservation is a whole number (and their sums
/// stay below 2⁵²): then the arithmetic is exact and the running jobs need
/// no bookkeeping until a start would have to preempt. Otherwise, or from
/// such a start on, `O(J·(R·P + P))` for `R ≤ J` running jobs: each start
/// first tries the room that the running jobs behind it leave.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Tiresias;
/// let mut t = Tiresias::default();
/// assert_eq!(t.thresholds, vec![3250.0, 7200.0]);
/// assert_eq!(t.starve_factor, None);
/// // Two queues and a one-GPU-hour threshold, and the starvation guard.
/// t.thresholds = vec![3600.0];
/// t.starve_factor = Some(2.0);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Tiresias {
    /// Queue thresholds `T_1 … T_{K−1}` in GPU-seconds, increasing.
    pub thresholds: Vec<f64>,
    /// Starvation guard: a paused job that waited `≥ f ×` its last run
    /// moves back to the first queue.
    pub starve_factor: Option<f64>,
    /// How starting jobs are spread over machines.
    pub placement: PlacementRule,
    /// Requested sizes per job (default empty: every job at
    /// [`requested_tasks`](super::requested_tasks)). A run with an entry a
    /// job cannot run at ends with
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams).
    pub requests: RequestedSizes,
    /// Bookkeeping across events of one run.
    memory: Memory,
}

/// What the policy remembers between events: service offsets of jobs the
/// starvation guard promoted, and where rigid gangs ran. Entries of jobs
/// that neither run nor are paused are dropped at every event, which also
/// forgets a previous run when the policy is reused.
#[derive(Debug, Clone, PartialEq, Default)]
struct Memory {
    promoted: BTreeMap<JobId, f64>,
    pins: BTreeMap<JobId, Placement>,
    shapes: Shapes,
}

impl Default for Tiresias {
    fn default() -> Self {
        Tiresias {
            thresholds: Tiresias::SIMULATOR_THRESHOLDS.to_vec(),
            starve_factor: None,
            placement: PlacementRule::BestFit,
            requests: RequestedSizes::new(),
            memory: Memory::default(),
        }
    }
}

impl Tiresias {
    /// The queue thresholds of the Tiresias authors' public simulator
    /// (three queues, limits 3,250 and 7,200 GPU-seconds): the default.
    pub const SIMULATOR_THRESHOLDS: [f64; 2] = [3250.0, 7200.0];

    /// Checks the parameters: thresholds finite, > 0 and strictly
    /// increasing; a starvation factor finite and > 0. [`Policy::on_event`]
    /// calls it, so a run with bad parameters ends with this error.
    ///
    /// ```
    /// use dmlsched::baselines::Tiresias;
    /// let mut t = Tiresias::default();
    /// assert!(t.validate().is_ok());
    /// t.thresholds = vec![7200.0, 3250.0];
    /// assert!(t.validate().is_err());
    /// ```
    ///
    /// # Errors
    ///
    /// [`SimError::BadParams`](crate::sim::SimError::BadParams) naming the
    /// bad value.
    pub fn validate(&self) -> crate::Result<()> {
        let bad = |reason: String| {
            Err(crate::sim::SimError::BadParams {
                policy: "tiresias".into(),
                reason,
            }
            .into())
        };
        for (k, &t) in self.thresholds.iter().enumerate() {
            if !(t.is_finite() && t > 0.0) {
                return bad(format!(
                    "threshold {} is {t}: thresholds must be finite and > 0 GPU-seconds",
                    k + 1
                ));
            }
            if k > 0 && t <= self.thresholds[k - 1] {
                return bad(format!(
                    "thresholds must increase, found {} then {t}",
                    self.thresholds[k - 1]
                ));
            }
        }
        if let Some(f) = self.starve_factor
            && !(f.is_finite() && f > 0.0)
        {
            return bad(format!(
                "the starvation factor must be finite and > 0, found {f}"
            ));
        }
        Ok(())
    }
}

impl Policy for Tiresias {
    fn name(&self) -> String {
        "tiresias".into()
    }

    /// The next time a running job's service crosses a queue threshold, or
    /// (with the starvation guard) a paused job becomes due for promotion:
    /// demotions and promotions then happen exactly when they are due, with
    /// no need for slot ticks.
    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        self.next_wakeup(view)
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        self.decide(view, Shortcut::Allowed, &mut ShortcutUse::default())
    }
}

impl WithShortcut for Tiresias {
    /// The rule ([`Tiresias::rule`]), or its exact shortcut
    /// ([`Tiresias::walk_spare`]) when that is allowed and
    /// [`fast::ExactRoom`] holds.
    fn decide(
        &mut self,
        view: &SimView<'_>,
        shortcut: Shortcut,
        used: &mut ShortcutUse,
    ) -> crate::Result<Vec<Action>> {
        self.validate()?;
        self.refresh(view);
        let waiting = (shortcut.taken())
            .then(|| self.waiting_if_exact(view))
            .flatten();
        used.taken += u64::from(waiting.is_some());
        let changes = match waiting {
            Some(waiting) => self.walk_spare(view, &waiting, used)?,
            None => self.rule(view)?,
        };
        Ok(to_actions(changes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::fixtures::{Busy, busy_workload};
    use crate::sim::{SimOptions, simulate};

    /// A policy reused on other instances decides as a fresh one: what it
    /// keeps of a run's jobs is kept under the run's stamp.
    #[test]
    fn a_reused_policy_decides_as_a_fresh_one() {
        let opts = SimOptions::default();
        let tiresias = || Tiresias {
            thresholds: vec![300.0, 3000.0],
            ..Tiresias::default()
        };
        let mut reused = tiresias();
        for (seed, fraction) in [(0, false), (3, false), (3, true), (0, false)] {
            let busy = Busy {
                fraction,
                ..Busy::default()
            };
            let instance = busy_workload(seed, 4, busy);
            let again = simulate(&instance, &mut reused, &opts).expect("reused");
            let fresh = simulate(&instance, &mut tiresias(), &opts).expect("fresh");
            assert_eq!(again.jobs, fresh.jobs, "seed {seed}");
            assert_eq!(again.allocations, fresh.allocations, "seed {seed}");
            assert_eq!(again.utilization, fresh.utilization, "seed {seed}");
        }
    }
}

//! Tetris: multi-resource packing by alignment score.

use crate::model::Resources;
use crate::schedule::Placement;
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::requested_tasks;
use crate::placement::normalised;
use crate::placement::{PlacementRule, Placer};

/// Multi-resource packing in the style of Tetris (Grandl et al., "Multi-
/// resource packing for cluster schedulers", SIGCOMM 2014), reduced to its
/// alignment heuristic at the cluster level (without the paper's
/// remaining-time term), so the rules are the crate's, stated here.
///
/// # Rule
///
/// At each event, among the jobs waiting for a start (never started, or
/// paused) whose [`requested_tasks`] allocation can be placed now, start
/// the one with the largest **alignment score**
///
/// `score(j) = Σ_r (d_j^r / C^r) · (F^r / C^r)`
///
/// over the resource kinds `r` with positive total capacity `C^r`, where
/// `d_j` is the job's whole demand at its requested size and `F` the free
/// capacity summed over the cluster (after the jobs started earlier in the
/// same decision). Place it with [`Tetris::placement`], then repeat until
/// no waiting job fits. Ties go to the earlier arrival, then instance
/// order. Non-preemptive: a started job runs to completion.
///
/// The paper scores each (task, machine) pair against that machine's free
/// resources and adds a shortest-remaining-time term; this baseline keeps
/// only the job-level alignment (cluster-wide free vector) and knows
/// nothing about durations.
///
/// # Parameters
///
/// * `placement` (default [`PlacementRule::BestFit`]).
///
/// # Complexity
///
/// `O(s·q·P)` per event for `q` waiting jobs and `s ≤ q` starts, where `P`
/// is one trial placement (`O((w + p)·H)`, plus an `O(H)` copy of the free
/// capacities). Jobs that do not fit are dropped from later rounds, since
/// free capacity only shrinks within a decision.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::Tetris;
/// use dmlsched::placement::PlacementRule;
/// let t = Tetris::default();
/// assert_eq!(t.placement, PlacementRule::BestFit);
/// let rr = Tetris { placement: PlacementRule::RoundRobin };
/// assert_ne!(t, rr);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tetris {
    /// How tasks are spread over machines.
    pub placement: PlacementRule,
}

impl Policy for Tetris {
    fn name(&self) -> String {
        "tetris".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let total = instance.cluster().total_capacity();
        let mut placer = Placer::new(instance, view.free_all(), self.placement);
        let mut candidates: Vec<_> = view
            .active()
            .filter(JobView::is_queued)
            .map(|j| {
                let (w, p) = requested_tasks(j.job());
                (j, w, p, normalised(&j.job().demand_for(w, p), &total))
            })
            .collect();
        let mut actions = Vec::new();
        loop {
            let free = placer
                .free()
                .iter()
                .fold(Resources::zero(), |a, f| a.plus(f));
            let free = normalised(&free, &total);
            let mut best: Option<(usize, f64, Placement, Placer<'_>)> = None;
            let mut fitting = Vec::with_capacity(candidates.len());
            for (i, &(j, w, p, ref d)) in candidates.iter().enumerate() {
                let mut trial = placer.clone();
                let Some(placement) = trial.place(j.job(), w, p) else {
                    continue;
                };
                fitting.push(i);
                let score: f64 = d.iter().zip(&free).map(|(a, b)| a * b).sum();
                if best.as_ref().is_none_or(|b| score > b.1) {
                    best = Some((i, score, placement, trial));
                }
            }
            let Some((i, _, placement, trial)) = best else {
                break;
            };
            actions.push(Action::run(candidates[i].0.id(), placement));
            placer = trial;
            candidates = fitting
                .into_iter()
                .filter(|&k| k != i)
                .map(|k| candidates[k])
                .collect();
        }
        Ok(actions)
    }
}

//! The rule of [`Drf`], as its docs state it: progressive filling (the
//! job with the smallest dominant share takes the next step, until every
//! job is saturated), then the final placement that keeps what it can of
//! each running job's placement. The shortcut that finds the same counts
//! by counting free GPUs is in [`fast`](super::fast).

use crate::model::{Architecture, Elasticity, Job, Resources, WorkerCounts};
use crate::placement::{Placer, dominant_share};
use crate::schedule::Placement;
use crate::sim::JobView;

use super::super::common::trim;
use super::super::{ps_for, requested_tasks};
use super::Drf;
use super::queue::FillQueue;

/// The next size `(w, p)` with the PSs of bundles of `wps` workers per PS
/// for an elastic parameter-server job that has `now` PSs: `⌈w/wps⌉`, at
/// most `max_ps`, at least `now`.
fn bundled(job: &Job, (w, p): (u32, u32), now: u32, wps: Option<u32>) -> (u32, u32) {
    match (&job.architecture, wps) {
        (Architecture::ParameterServer(ps), Some(b))
            if job.discipline.elasticity != Elasticity::Rigid =>
        {
            (w, w.div_ceil(b.max(1)).clamp(1, ps.max_ps.max(1)).max(now))
        }
        _ => (w, p),
    }
}

/// The job's next size `(w, p)` after `w` workers and `p` PSs, or `None`
/// when it cannot grow.
fn next_size(job: &Job, w: u32, p: u32, step: u32) -> Option<(u32, u32)> {
    if job.discipline.elasticity == Elasticity::Rigid {
        return (w == 0).then(|| requested_tasks(job));
    }
    match &job.architecture {
        Architecture::ParameterServer(ps) => {
            if w >= ps.max_workers {
                return None;
            }
            let w2 = w.saturating_add(step).min(ps.max_workers);
            Some((w2, ps_for(job, w2).max(p)))
        }
        Architecture::RingAllReduce(r) => {
            let want = w.saturating_add(step);
            let w2 = match &r.workers {
                WorkerCounts::Fixed(g) => (*g > w).then_some(*g),
                WorkerCounts::Allowed(v) => v
                    .iter()
                    .copied()
                    .filter(|&c| c >= want)
                    .min()
                    .or_else(|| v.iter().copied().filter(|&c| c > w).max()),
            }?;
            Some((w2, 0))
        }
    }
}

/// One job's state during progressive filling.
pub(super) struct Fill {
    pub(super) workers: u32,
    pub(super) ps: u32,
    pub(super) placement: Placement,
}

impl Drf {
    /// The rule at one event on `scratch` (the free room plus what `jobs`
    /// hold): each job's counts by progressive filling, then its final
    /// placement.
    pub(super) fn rule<'v>(
        &self,
        jobs: &[JobView<'v>],
        scratch: &Placer<'v>,
        total: &Resources,
    ) -> Vec<Placement> {
        // Many increments go on the filling's placer: keep it indexed.
        let fill = self.fill(jobs, scratch.clone().indexed(), total);
        let counts: Vec<(u32, u32)> = fill.iter().map(|f| (f.workers, f.ps)).collect();
        match sticky(jobs, &counts, scratch.clone().indexed()) {
            Some(placements) => placements,
            None => fill.into_iter().map(|f| f.placement).collect(),
        }
    }

    /// The step job `job` takes from `w` workers and `p` PSs, or `None`
    /// when it cannot grow (its cap is reached).
    pub(super) fn next_step(&self, job: &Job, w: u32, p: u32) -> Option<(u32, u32)> {
        next_size(job, w, p, self.step.max(1))
            .map(|size| bundled(job, size, p, self.workers_per_ps))
            .filter(|&(w2, _)| w2 > w)
    }

    /// Progressive filling on `placer`, placing every step: each job's
    /// counts and placement.
    pub(super) fn fill(
        &self,
        jobs: &[JobView<'_>],
        mut placer: Placer<'_>,
        total: &Resources,
    ) -> Vec<Fill> {
        let mut fill: Vec<Fill> = jobs
            .iter()
            .map(|_| Fill {
                workers: 0,
                ps: 0,
                placement: Placement::new(),
            })
            .collect();
        // The job with the smallest dominant share next (ties: the earlier
        // in `jobs`, i.e. arrival order), a job's entry pushed again after
        // each step it takes.
        let mut queue = FillQueue::new(jobs.len());
        while let Some(i) = queue.pop() {
            let job = jobs[i].job();
            let f = &mut fill[i];
            let grown = self.next_step(job, f.workers, f.ps).and_then(|(w, p)| {
                placer
                    .grow(job, &f.placement, w - f.workers, p.saturating_sub(f.ps))
                    .map(|part| (w, p.max(f.ps), part))
            });
            // A job that cannot grow is saturated: it takes no further step.
            if let Some((w, p, part)) = grown {
                f.workers = w;
                f.ps = p;
                f.placement.merge(&part);
                let share = dominant_share(&job.demand_for(w, f.ps), total);
                queue.push(share, i);
            }
        }
        fill
    }
}

/// The final placement of `jobs` at `counts` (workers, PSs) on `placer`:
/// every running job first keeps the part of its current placement
/// within its new counts, then, in arrival order, the tasks a job gains
/// are placed on what is left. `None` if some job's new tasks do not
/// place.
pub(super) fn sticky(
    jobs: &[JobView<'_>],
    counts: &[(u32, u32)],
    mut placer: Placer<'_>,
) -> Option<Vec<Placement>> {
    let mut placements: Vec<Placement> = jobs
        .iter()
        .zip(counts)
        .map(|(j, &(w, p))| trim(j.placement(), w, p))
        .collect();
    for (j, kept) in jobs.iter().zip(&placements) {
        if !placer.take(j.job(), kept) {
            return None;
        }
    }
    for ((j, &(w, p)), placement) in jobs.iter().zip(counts).zip(placements.iter_mut()) {
        let kept = placement.total();
        let (dw, dp) = (w.saturating_sub(kept.workers), p.saturating_sub(kept.ps));
        if dw == 0 && dp == 0 {
            continue;
        }
        placement.merge(&placer.grow(j.job(), placement, dw, dp)?);
    }
    Some(placements)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::drf::tests::ring;
    use crate::model::Discipline;

    #[test]
    fn ring_jobs_step_through_allowed_counts() {
        let j = ring(WorkerCounts::Allowed(vec![1, 2, 4, 8]), Discipline::ELASTIC);
        assert_eq!(next_size(&j, 0, 0, 1), Some((1, 0)));
        assert_eq!(next_size(&j, 2, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&j, 2, 0, 3), Some((8, 0)));
        // No allowed count ≥ 4 + 5: the largest above 4.
        assert_eq!(next_size(&j, 4, 0, 5), Some((8, 0)));
        assert_eq!(next_size(&j, 8, 0, 1), None);
        let fixed = ring(WorkerCounts::Fixed(4), Discipline::ELASTIC);
        assert_eq!(next_size(&fixed, 0, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&fixed, 4, 0, 1), None);
        // A rigid gang: its requested size in one step, then nothing.
        let gang = ring(WorkerCounts::Allowed(vec![2, 4]), Discipline::RIGID_GANG);
        assert_eq!(next_size(&gang, 0, 0, 1), Some((4, 0)));
        assert_eq!(next_size(&gang, 4, 0, 1), None);
    }
}

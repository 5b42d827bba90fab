//! The policies the papers compare against, as simulator [`Policy`]s.
//!
//! | policy | source | kind |
//! |---|---|---|
//! | [`Fifo`] | Hadoop/Spark default; `oasis.md` §12, `sum-of-ratios.md` §7.1 | fixed size, non-preemptive, optional backfill |
//!
//! Every policy sizes jobs with [`requested_tasks`] unless it says
//! otherwise, and places tasks with a [`Placer`].
//!
//! [`Policy`]: crate::sim::Policy

mod fifo;
mod placement;

pub use fifo::Fifo;
pub use placement::{PlacementRule, Placer};

use crate::model::{Architecture, Job};

/// PSs for `workers` workers of a parameter-server job:
/// `z = ⌈w·b/B⌉` (worker over PS bandwidth, so the PSs' NICs carry the
/// workers' traffic; `oasis.md` §12), at least 1, at most the job's PS cap
/// and, under the PS ≤ workers rule, at most `w`. 0 for ring-all-reduce
/// jobs.
pub fn ps_for(job: &Job, workers: u32) -> u32 {
    match &job.architecture {
        Architecture::RingAllReduce(_) => 0,
        Architecture::ParameterServer(p) => {
            let ratio = if p.ps.nic_bps > 0.0 {
                p.worker.nic_bps / p.ps.nic_bps
            } else {
                0.0
            };
            let z = crate::model::units::ceil_tol(f64::from(workers) * ratio).max(1.0);
            let mut z = if z >= f64::from(u32::MAX) {
                u32::MAX
            } else {
                z as u32
            };
            z = z.min(p.max_ps);
            if p.ps_at_most_workers {
                z = z.min(workers.max(1));
            }
            z.max(1)
        }
    }
}

/// The size a fixed-size policy runs a job at: all its workers (the largest
/// allowed count of a ring job, `max_workers` of a PS job) with
/// [`ps_for`] PSs — or `max_ps` for a rigid PS job, whose gang size is
/// fixed.
pub fn requested_tasks(job: &Job) -> (u32, u32) {
    match &job.architecture {
        Architecture::RingAllReduce(r) => (r.workers.max(), 0),
        Architecture::ParameterServer(p) => {
            if job.discipline.elasticity == crate::model::Elasticity::Rigid {
                (p.max_workers, p.max_ps)
            } else {
                (p.max_workers, ps_for(job, p.max_workers))
            }
        }
    }
}

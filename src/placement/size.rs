//! The size a fixed-size policy runs a job at, shared by the baselines and
//! the allocation policies' round-based leases.

use crate::model::{Architecture, Job};

/// PSs for `workers` workers of a parameter-server job:
/// [`PsJob::ps_needed`](crate::model::PsJob::ps_needed), `z = ⌈w·b/B⌉`
/// (worker over PS bandwidth, so the PSs' NICs carry the workers' traffic,
/// as in the OASiS paper's constraints), at least 1, at most the job's PS cap
/// and, under the PS ≤ workers rule, at most `w`. 0 for ring-all-reduce
/// jobs.
pub fn ps_for(job: &Job, workers: u32) -> u32 {
    match &job.architecture {
        Architecture::RingAllReduce(_) => 0,
        Architecture::ParameterServer(p) => {
            let mut z = p.ps_needed(workers).max(1).min(p.max_ps);
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

//! How much work a job has and how fast an allocation does it: the bridge
//! from the job model to the timing models of [`crate::timing`].
//!
//! * A parameter-server job's work is its `E·N·M` mini-batches; one
//!   iteration of `w` workers processes `w` of them. Its iteration time is
//!   the layered model PS-W when the job has a layer profile, otherwise PS-L
//!   (placement-level, or the locality-free OASiS form, per [`PsTiming`]).
//! * A ring-all-reduce job's work is its requested iterations (its
//!   convergence iterations under
//!   [`SimOptions::stop_at_convergence`](super::SimOptions::stop_at_convergence)); its iteration
//!   time is RAR-C with the contention count of the running jobs, except
//!   that a ring with a reserved bandwidth `b` spanning several machines
//!   runs at `b` without contention
//!   ([`RarTiming::iteration_time_reserved_s`]) and is charged `b` of NIC
//!   per direction on each of its machines (by the charging rule it shares
//!   with [`crate::schedule::verify`]).
//! * An allocation run in a LOCAL [`Configuration`] (one PS and its workers
//!   on one machine) is charged no NIC bandwidth and
//!   runs at `τ^L = t_c + 2S/b_int` whatever the [`PsTiming`].

use crate::model::{Architecture, Instance, Job, PsJob};
use crate::schedule::{Configuration, Tasks};
use crate::timing::{
    IterationTime, PsLayered, PsLocality, PsPlacement, RarTiming, TimingError, effective_contenders,
};

/// Which parameter-server timing model the simulator charges.
///
/// An allocation run in a LOCAL [`Configuration`] runs at the same rate under
/// both: `τ^L = t_c + 2S/b_int` with the machine's intra-machine bandwidth
/// ([`PsLocality::tau_local`]), which is what `Locality` gives a placement of
/// all workers and one PS on one machine; it reserves no NIC bandwidth, so
/// the NIC cannot slow it. A job with a layer profile runs at the layered
/// model in every configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum PsTiming {
    /// PS-L's placement-level form ([algorithms guide, section
    /// 3.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-ps-locality)):
    /// co-located workers and PSs talk at the machine's internal bandwidth.
    #[default]
    Locality,
    /// `t_c + 2S/b_w` whatever the placement: OASiS's work model, in which
    /// every worker processes one mini-batch per `τ + 2e/b`.
    NoLocality,
}

/// Total work of a job: mini-batches (PS) or iterations (ring-all-reduce).
///
/// The parameter-server product `E·N·M` is taken in floating point, so it
/// never overflows (up to `(2³²−1)³ ≈ 7.9·10²⁸`; exact below `2⁵³`).
///
/// ```
/// use dmlsched::model::{Job, JobId, PsJob, RarJob};
/// use dmlsched::sim::total_work;
///
/// // 2 epochs of 3 chunks of 50 mini-batches.
/// let ps = PsJob { epochs: 2, data_chunks: 3, minibatches_per_chunk: 50, ..PsJob::default() };
/// assert_eq!(total_work(&Job::new(JobId(0), 0.0, ps)), 300.0);
/// // A ring's requested iterations, whatever its convergence estimate.
/// let ring = RarJob { iterations: 1000, convergence_iterations: Some(800), ..RarJob::default() };
/// assert_eq!(total_work(&Job::new(JobId(1), 0.0, ring)), 1000.0);
/// ```
pub fn total_work(job: &Job) -> f64 {
    match &job.architecture {
        Architecture::ParameterServer(p) => {
            f64::from(p.epochs) * f64::from(p.data_chunks) * f64::from(p.minibatches_per_chunk)
        }
        Architecture::RingAllReduce(r) => r.iterations as f64,
    }
}

/// The work the simulator trains `job` for: [`total_work`], except that a
/// ring-all-reduce job with a convergence estimate trains only those
/// iterations under `stop_at_convergence`
/// ([`SimOptions::stop_at_convergence`](super::SimOptions::stop_at_convergence)).
///
/// ```
/// use dmlsched::model::{Job, JobId, RarJob};
/// use dmlsched::sim::work_to_train;
/// let ring = RarJob { iterations: 100, convergence_iterations: Some(80), ..RarJob::default() };
/// let job = Job::new(JobId(0), 0.0, ring);
/// assert_eq!(work_to_train(&job, false), 100.0);
/// assert_eq!(work_to_train(&job, true), 80.0);
/// ```
pub fn work_to_train(job: &Job, stop_at_convergence: bool) -> f64 {
    match &job.architecture {
        Architecture::RingAllReduce(r) if stop_at_convergence => {
            r.convergence_iterations.unwrap_or(r.iterations) as f64
        }
        _ => total_work(job),
    }
}

/// Whether `job` with workers on `machines` machines is a ring that counts
/// in, and suffers from, contention: a ring-all-reduce job on two or more
/// machines without a reserved bandwidth. A reserving ring runs at its
/// reserved rate whatever the other rings do, and slows none of them.
pub(crate) fn contends(job: &Job, machines: usize) -> bool {
    matches!(&job.architecture, Architecture::RingAllReduce(r) if r.reserved_bandwidth_bps.is_none())
        && machines >= 2
}

/// Whether `config` is LOCAL.
pub(crate) fn is_local(config: Option<Configuration>) -> bool {
    config.is_some_and(|c| c.local_machine().is_some())
}

/// Speed of one allocation: iteration time and work done per iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Speed {
    /// Seconds per iteration.
    pub(crate) tau_s: f64,
    /// Work units per iteration.
    pub(crate) work_per_iteration: f64,
}

impl Speed {
    /// Work units per second.
    pub fn rate(&self) -> f64 {
        self.work_per_iteration / self.tau_s
    }
}

/// The speed of `job` with `placement` (machine positions and tasks, no
/// zero entries), where `contenders` is the RAR contention count `p_j` of
/// the job (ignored for PS jobs, single-server rings and rings with a
/// reserved bandwidth, which run at that bandwidth), and `local`
/// whether the allocation runs LOCAL (a checked single-machine placement of
/// one PS and its workers: `τ^L` whatever `ps_timing`).
///
/// The iteration time is finite and `≥ 0`: zero (nothing to compute or
/// send) is a job that finishes at once; an iteration time that is NaN or
/// overflows to infinity is a [`TimingError::NonFinite`], never a rate that
/// silently vanishes.
pub(crate) fn speed(
    instance: &Instance,
    job: &Job,
    placement: &[(usize, Tasks)],
    contenders: u32,
    ps_timing: PsTiming,
    local: bool,
) -> Result<Speed, TimingError> {
    let s = raw_speed(instance, job, placement, contenders, ps_timing, local)?;
    if !(s.tau_s.is_finite() && s.tau_s >= 0.0) {
        return Err(TimingError::NonFinite {
            field: "iteration time",
        });
    }
    Ok(s)
}

fn raw_speed(
    instance: &Instance,
    job: &Job,
    placement: &[(usize, Tasks)],
    contenders: u32,
    ps_timing: PsTiming,
    local: bool,
) -> Result<Speed, TimingError> {
    let machines = &instance.cluster().machines;
    let intra = placement
        .iter()
        .map(|&(m, _)| machines[m].intra_bandwidth_bps)
        .fold(f64::INFINITY, f64::min);
    let total = Tasks::new(
        placement.iter().map(|(_, t)| t.workers).sum(),
        placement.iter().map(|(_, t)| t.ps).sum(),
    );
    // The pace of the slowest GPU type among the workers' machines.
    let pace = job.pace(
        placement
            .iter()
            .filter(|(_, t)| t.workers > 0)
            .map(|&(m, _)| machines[m].gpu_type.as_deref()),
    );
    match &job.architecture {
        Architecture::ParameterServer(p) => {
            ps_speed(&p.at_speed(pace), placement, total, intra, ps_timing, local)
        }
        Architecture::RingAllReduce(r) => {
            let r = &*r.at_speed(pace);
            let ring = &instance.cluster().ring;
            let servers = placement.iter().filter(|(_, t)| t.workers > 0).count() as u32;
            let model = RarTiming::from_job(r, total.workers, intra, ring)?;
            let tau_s = match r.reserved_bandwidth_bps {
                Some(b) => model.iteration_time_reserved_s(servers, b),
                None => {
                    let k = effective_contenders(contenders, ring.contender_ratio);
                    model.iteration_time_s(servers, k)
                }
            };
            Ok(Speed {
                tau_s,
                work_per_iteration: 1.0,
            })
        }
    }
}

fn ps_speed(
    job: &PsJob,
    placement: &[(usize, Tasks)],
    total: Tasks,
    intra: f64,
    ps_timing: PsTiming,
    local: bool,
) -> Result<Speed, TimingError> {
    let w = f64::from(total.workers);
    if let Some(layered) = PsLayered::from_job(job, 1)? {
        return Ok(Speed {
            tau_s: layered.iteration_time_s(&(total.workers, total.ps))?,
            work_per_iteration: w,
        });
    }
    if job.gradient_bytes == 0.0 {
        // Nothing to communicate: the iteration is the compute (and the NIC
        // reservations, possibly zero, do not matter).
        return Ok(Speed {
            tau_s: job.minibatch_time_s(),
            work_per_iteration: w,
        });
    }
    let model = PsLocality::from_job(job, intra)?;
    let tau_s = match ps_timing {
        // All workers and one PS on one machine: the traffic runs at the
        // machine's intra-machine bandwidth (the placement-level form gives
        // the same for such a placement).
        _ if local => model.tau_local(),
        PsTiming::NoLocality => model.tau_distributed(),
        PsTiming::Locality => {
            let cfg = PsPlacement {
                machines: placement.iter().map(|&(_, t)| (t.workers, t.ps)).collect(),
            };
            model.placement_level().iteration_time_s(&cfg)?
        }
    };
    Ok(Speed {
        tau_s,
        work_per_iteration: w,
    })
}

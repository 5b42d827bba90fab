//! OASiS-like parameter-server workloads: jobs drawn from the simulation
//! ranges of the OASiS paper (Bao, Peng, Wu, Li, INFOCOM 2018), with Poisson
//! or diurnal arrivals.

use rand::{Rng, RngExt};

use dmlsched::model::units::{GB, MB, Num, ceil_tol, gbps};
use dmlsched::model::{Architecture, Job, JobId, PsJob, Resources, SyncMode, Utility};
use dmlsched::trace::TraceError;
use dmlsched::trace::catalog;
use dmlsched::trace::synth::{
    check_rate, diurnal_arrivals, poisson_arrivals, uniform_f64, uniform_u32,
};

/// Parameters of [`oasis_like_ps_jobs`].
#[derive(Debug, Clone, PartialEq)]
pub struct OasisWorkload {
    /// Jobs to generate (fewer if arrivals pass the horizon).
    pub jobs: usize,
    /// Horizon `T`, slots (OASiS: 100–300).
    pub horizon_slots: u32,
    /// Slot length, seconds (default 1200 s, the OASiS testbed's 20 min).
    pub slot_length_s: f64,
    /// Mean arrivals per slot of the Poisson arrival process.
    pub arrivals_per_slot: f64,
    /// Diurnal amplitude `A ∈ [0, 1]` of the arrival rate (0: plain
    /// Poisson); see [`diurnal_arrivals`].
    pub diurnal_amplitude: f64,
    /// Period of the diurnal cycle, slots (default 72 = one day of 20-min
    /// slots).
    pub diurnal_period_slots: f64,
    /// Range of the utility priority `γ1` (OASiS: [1, 100]; its small study
    /// also used [50, 100], [75, 100], [25, 100]).
    pub gamma1: (f64, f64),
    /// Redraw a job until its fastest possible duration fits before the
    /// horizon.
    pub feasible_only: bool,
    /// Most redraws per job before giving up.
    pub max_redraws: u32,
}

impl Default for OasisWorkload {
    /// 100 jobs, `T = 200` slots of 1200 s, one arrival per slot on
    /// average, no diurnal cycle, `γ1 ∈ [1, 100]`, feasible only, up to
    /// 100,000 redraws.
    fn default() -> Self {
        OasisWorkload {
            jobs: 100,
            horizon_slots: 200,
            slot_length_s: catalog::oasis::SLOT_LENGTH_S,
            arrivals_per_slot: 1.0,
            diurnal_amplitude: 0.0,
            diurnal_period_slots: 72.0,
            gamma1: catalog::oasis::GAMMA1,
            feasible_only: true,
            max_redraws: 100_000,
        }
    }
}

/// The fastest possible duration of an OASiS job in slots: with one worker
/// per data chunk, each worker processes `E·M` mini-batches, each taking
/// `τ + 2e/b` (compute, then push and pull of the gradient:
/// [`PsJob::minibatch_time_s`]).
pub fn oasis_fastest_slots(ps: &PsJob, slot_length_s: f64) -> f64 {
    f64::from(ps.epochs) * f64::from(ps.minibatches_per_chunk) * ps.minibatch_time_s()
        / slot_length_s
}

/// The workload and demands of one OASiS job, drawn uniformly from the
/// [`catalog::oasis`] ranges in this order: worker demand (GPUs, vCPUs,
/// memory, storage, bandwidth `b`), PS demand (vCPUs, memory, storage,
/// bandwidth `B`), chunks `N` from `chunks`, epochs `E`, mini-batches per
/// chunk `M`, compute `τ` (slots, converted with `slot_length_s`) and
/// gradient size `e`. `N` is also the worker and PS cap; asynchronous, no
/// layer profile.
pub(crate) fn oasis_ps_job(rng: &mut impl Rng, slot_length_s: f64, chunks: (u32, u32)) -> PsJob {
    use catalog::oasis as o;
    let worker = Resources::zero()
        .gpus(f64::from(uniform_u32(rng, o::WORKER_GPUS)))
        .cpu_cores(f64::from(uniform_u32(rng, o::VCPUS)))
        .memory(uniform_f64(rng, o::MEMORY_GB) * GB)
        .storage(uniform_f64(rng, o::STORAGE_GB) * GB)
        .nic(gbps(uniform_f64(rng, o::WORKER_GBPS)));
    let ps = Resources::zero()
        .cpu_cores(f64::from(uniform_u32(rng, o::VCPUS)))
        .memory(uniform_f64(rng, o::MEMORY_GB) * GB)
        .storage(uniform_f64(rng, o::STORAGE_GB) * GB)
        .nic(gbps(uniform_f64(rng, o::PS_GBPS)));
    let chunks = uniform_u32(rng, chunks);
    PsJob {
        epochs: uniform_u32(rng, o::EPOCHS),
        data_chunks: chunks,
        minibatches_per_chunk: uniform_u32(rng, o::MINIBATCHES),
        minibatch_compute_s: uniform_f64(rng, o::TAU_SLOTS) * slot_length_s,
        gradient_bytes: uniform_f64(rng, o::GRADIENT_MB) * MB,
        worker,
        ps,
        max_workers: chunks,
        max_ps: chunks,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    }
}

/// The sigmoid's `γ2` of one OASiS job: its class drawn with the shares
/// time-insensitive 10% (`γ2 = 0`), time-sensitive 55% (`γ2 ∈ [0.01, 1]`),
/// time-critical 35% (`γ2 ∈ [4, 6]`), then `γ2` uniformly in the class's
/// range.
pub(crate) fn oasis_gamma2(rng: &mut impl Rng) -> f64 {
    use catalog::oasis as o;
    let (insensitive, sensitive, _) = o::CLASS_SHARES;
    let class: f64 = rng.random();
    if class < insensitive {
        0.0
    } else if class < insensitive + sensitive {
        uniform_f64(rng, o::GAMMA2_SENSITIVE)
    } else {
        uniform_f64(rng, o::GAMMA2_CRITICAL)
    }
}

fn oasis_job(rng: &mut impl Rng, p: &OasisWorkload) -> (PsJob, Utility) {
    use catalog::oasis as o;
    let job = oasis_ps_job(rng, p.slot_length_s, o::CHUNKS);
    let g2 = oasis_gamma2(rng);
    let utility = Utility::Sigmoid {
        g1: uniform_f64(rng, p.gamma1),
        g2,
        g3: uniform_f64(rng, o::GAMMA3),
    };
    (job, utility)
}

/// OASiS-style parameter-server jobs, with the simulation ranges of Bao et
/// al. (INFOCOM 2018).
///
/// Arrivals: Poisson with `arrivals_per_slot` (optionally diurnal), the
/// first at 0; generation stops early at the first arrival at or after the
/// horizon, so fewer than `jobs` jobs may come back. Each job then draws,
/// uniformly (integers for counts), from the paper's ranges: worker demand
/// (0–4 GPUs, 1–10 vCPUs, 2–32 GB memory, 5–10 GB storage, bandwidth
/// 0.1–5 Gbit/s), PS demand (no GPU, 1–10 vCPUs, 2–32 GB, 5–10 GB, 5–20
/// Gbit/s), epochs `E` 50–200, chunks `N` 5–100 (also the worker and PS
/// cap), mini-batches per chunk `M` 10–100, compute `τ` 0.001–0.1 slots and
/// gradient `e` 30–575 MB; and a sigmoid utility `γ1 / (1 + exp(γ2(δ −
/// γ3)))` with `γ1` from [`OasisWorkload::gamma1`], `γ3 ∈ [1, 15]` slots and
/// `γ2` by class: 0 (10%), `[0.01, 1]` (55%), `[4, 6]` (35%). Jobs are
/// asynchronous, elastic and preemptible, ids `0..`.
///
/// With `feasible_only`, a job is redrawn (everything but its arrival)
/// until `⌈E·M·(τ + 2e/b)⌉ ≤ T − a` slots ([`oasis_fastest_slots`] with one
/// worker per chunk).
///
/// # Errors
///
/// [`TraceError::InvalidArgument`] for invalid parameters, or when
/// `max_redraws` draws in a row are infeasible.
pub fn oasis_like_ps_jobs(rng: &mut impl Rng, p: &OasisWorkload) -> Result<Vec<Job>, TraceError> {
    if p.horizon_slots == 0 {
        return Err(invalid("horizon_slots", "must be ≥ 1"));
    }
    check_rate("slot_length_s", p.slot_length_s)?;
    let (g_lo, g_hi) = p.gamma1;
    if !(g_lo.is_finite() && g_hi.is_finite() && 0.0 <= g_lo && g_lo <= g_hi) {
        return Err(invalid(
            "gamma1",
            format!("need 0 ≤ low ≤ high, got [{}, {}]", Num(g_lo), Num(g_hi)),
        ));
    }
    let rate = p.arrivals_per_slot / p.slot_length_s;
    let arrivals = if p.diurnal_amplitude == 0.0 {
        poisson_arrivals(rng, p.jobs, rate)?
    } else {
        diurnal_arrivals(
            rng,
            p.jobs,
            rate,
            p.diurnal_amplitude,
            p.diurnal_period_slots * p.slot_length_s,
        )?
    };
    let horizon_s = f64::from(p.horizon_slots) * p.slot_length_s;
    let mut jobs = Vec::new();
    for (i, arrival_s) in arrivals.into_iter().enumerate() {
        if arrival_s >= horizon_s {
            break;
        }
        let arrival_slot = (arrival_s / p.slot_length_s).floor();
        let left = f64::from(p.horizon_slots) - arrival_slot;
        let mut draws = 0u32;
        let (ps, utility) = loop {
            let (ps, utility) = oasis_job(rng, p);
            draws += 1;
            if !p.feasible_only || ceil_tol(oasis_fastest_slots(&ps, p.slot_length_s)) <= left {
                break (ps, utility);
            }
            if draws >= p.max_redraws {
                return Err(invalid(
                    "OASiS parameters",
                    format!(
                        "no feasible job for arrival slot {arrival_slot} after {draws} draws (horizon {} slots)",
                        p.horizon_slots
                    ),
                ));
            }
        };
        let id = u32::try_from(i).map_err(|_| invalid("jobs", "too many jobs"))?;
        jobs.push(
            Job::new(JobId(id), arrival_s, Architecture::ParameterServer(ps)).with_utility(utility),
        );
    }
    Ok(jobs)
}

/// An invalid-argument error naming the option `name`.
fn invalid(name: &str, reason: impl Into<String>) -> TraceError {
    TraceError::InvalidArgument {
        name: name.to_string(),
        reason: reason.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    #[test]
    fn oasis_jobs_are_feasible_and_valid() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let p = OasisWorkload {
            jobs: 60,
            horizon_slots: 150,
            ..OasisWorkload::default()
        };
        let jobs = oasis_like_ps_jobs(&mut rng, &p).unwrap();
        assert!(!jobs.is_empty());
        for j in &jobs {
            let Architecture::ParameterServer(ps) = &j.architecture else {
                panic!("not a PS job")
            };
            let a = (j.arrival_s / p.slot_length_s).floor();
            assert!(ceil_tol(oasis_fastest_slots(ps, p.slot_length_s)) <= 150.0 - a);
            assert!((50..=200).contains(&ps.epochs));
            assert!(ps.worker.gpus <= 4.0 && ps.ps.gpus == 0.0);
            assert!(matches!(j.utility, Utility::Sigmoid { .. }));
            assert!(j.utility.check().is_ok());
        }
    }
}

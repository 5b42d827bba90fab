//! The default set-up of the locality-aware scheduler's experiments: a
//! homogeneous GPU cluster and parameter-server jobs whose models are drawn
//! from a measured table, with OASiS-style sigmoid utilities whose targets
//! are reachable without locality.
//!
//! Every value is a field of [`LocalityWorkload`]; [`generate`] draws one
//! instance from a seeded RNG (use a portable one such as `ChaCha8Rng`, so
//! that a seed gives the same instance everywhere). The intra-machine
//! bandwidth factor `κ` is a scheduler option:
//! [`LocalityWorkload::params`] returns the scheduler's parameters
//! (`intra_factor = κ`, the plan window).
//!
//! The rounding-quality experiment (L-E5), which needs the library's
//! internals, is [`dmlsched::experiments::locality_quality`].

use rand::{Rng, RngExt};

use dmlsched::algorithms::locality::{LocalityError, LocalityParams};
use dmlsched::model::units::{ceil_tol, gb, gbps, mb};
use dmlsched::model::{
    Cluster, Instance, Job, JobId, Machine, MachineId, PsJob, Resources, SyncMode, Utility,
};
use dmlsched::trace::synth::{poisson_arrivals, uniform_f64, uniform_u32};

use super::oasis::workload::oasis_gamma2;

/// The model table of the set-up: the Optimus (Peng et al., EuroSys 2018)
/// parameter-server testbed values of the library's trace catalogue.
pub use dmlsched::trace::catalog::{OPTIMUS_MODELS as MODELS, OptimusModel as ModelProfile};

/// Parameters of [`generate`]. Integer ranges `(lo, hi)` are inclusive
/// (`U{lo..hi}`); real ranges are uniform on `[lo, hi]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalityWorkload {
    /// Jobs (default 100).
    pub jobs: usize,
    /// Machines `H` (default 16).
    pub machines: u32,
    /// GPUs per machine (default 8).
    pub machine_gpus: f64,
    /// vCPUs per machine (default 64).
    pub machine_vcpus: f64,
    /// Memory per machine, GB (default 512).
    pub machine_memory_gb: f64,
    /// NIC bandwidth per machine, Gbit/s (default 25).
    pub machine_nic_gbps: f64,
    /// Slot length `Δ`, seconds (default 1800).
    pub slot_length_s: f64,
    /// Horizon `T`, slots (default 200).
    pub horizon_slots: u32,
    /// Plan window, slots from the arrival (default 64).
    pub window_slots: u32,
    /// `κ`: intra-machine bandwidth `b_int = κ·b_i` (default 10); every
    /// machine's own intra-machine bandwidth is set to `κ` times its NIC.
    pub intra_factor: f64,
    /// The model table each job draws from uniformly (default [`MODELS`]).
    pub models: Vec<ModelProfile>,
    /// Epochs `E` (default `U{20..100}`).
    pub epochs: (u32, u32),
    /// Data chunks `N`, also the worker and PS caps (default `U{2..16}`).
    pub chunks: (u32, u32),
    /// Mini-batches per chunk `M` (default `U{100..500}`).
    pub minibatches: (u32, u32),
    /// GPUs per worker (default 1).
    pub worker_gpus: f64,
    /// vCPUs per worker and per PS (default `U{2..8}`, drawn separately).
    pub vcpus: (u32, u32),
    /// Memory per worker and per PS, GB (default `U[8, 32]`, drawn
    /// separately).
    pub memory_gb: (f64, f64),
    /// Worker bandwidth `b`, Gbit/s (default `U[1, 5]`).
    pub worker_gbps: (f64, f64),
    /// PS bandwidth `B`, Gbit/s (default `U[5, 20]`); raised to `b` when a
    /// draw is below it (never with the defaults), so `B ≥ b` always.
    pub ps_gbps: (f64, f64),
    /// Utility priority `γ1`, also the job's weight (default `U[1, 100]`).
    pub gamma1: (f64, f64),
    /// Target factor: `γ3 = ⌈d^D·U[lo, hi]⌉` with the no-locality
    /// full-width duration `d^D = ⌈Q/(N·r^D)⌉` (default `[1, 2]`).
    pub target_factor: (f64, f64),
    /// Slots kept free of arrivals at the end: arrivals fall in
    /// `[1, T − tail]` (default 40).
    pub arrival_tail_slots: u32,
}

impl Default for LocalityWorkload {
    fn default() -> Self {
        LocalityWorkload {
            jobs: 100,
            machines: 16,
            machine_gpus: 8.0,
            machine_vcpus: 64.0,
            machine_memory_gb: 512.0,
            machine_nic_gbps: 25.0,
            slot_length_s: 1800.0,
            horizon_slots: 200,
            window_slots: 64,
            intra_factor: 10.0,
            models: MODELS.to_vec(),
            epochs: (20, 100),
            chunks: (2, 16),
            minibatches: (100, 500),
            worker_gpus: 1.0,
            vcpus: (2, 8),
            memory_gb: (8.0, 32.0),
            worker_gbps: (1.0, 5.0),
            ps_gbps: (5.0, 20.0),
            gamma1: (1.0, 100.0),
            target_factor: (1.0, 2.0),
            arrival_tail_slots: 40,
        }
    }
}

impl LocalityWorkload {
    /// The scheduler's parameters for this set-up: default options with
    /// the plan window and `intra_factor = κ`.
    pub fn params(&self) -> LocalityParams {
        let mut p = LocalityParams::default();
        p.horizon = self.window_slots;
        p.intra_factor = Some(self.intra_factor);
        p
    }

    /// Checks the parameters.
    ///
    /// # Errors
    ///
    /// [`LocalityError::InvalidOption`] naming the first bad field: no
    /// job, machine or model, a range with `lo > hi`, a non-finite or
    /// non-positive size, rate, factor or bandwidth, or a horizon that
    /// leaves no arrival slot.
    pub fn validate(&self) -> Result<(), LocalityError> {
        let bad = |name: &'static str, reason: &str| {
            Err(LocalityError::InvalidOption {
                name,
                reason: reason.into(),
            })
        };
        let pos = |v: f64| v.is_finite() && v > 0.0;
        let real = |(lo, hi): (f64, f64)| pos(lo) && hi.is_finite() && lo <= hi;
        let int = |(lo, hi): (u32, u32)| lo >= 1 && lo <= hi;
        if self.jobs == 0 || self.machines == 0 || self.models.is_empty() {
            return bad("jobs", "jobs, machines and models must be non-empty");
        }
        let sizes = [
            self.machine_gpus,
            self.machine_vcpus,
            self.machine_memory_gb,
            self.machine_nic_gbps,
            self.slot_length_s,
            self.intra_factor,
            self.worker_gpus,
        ];
        if !sizes.into_iter().all(pos) {
            return bad("machine", "sizes, Δ, κ and worker GPUs must be positive");
        }
        if !self
            .models
            .iter()
            .all(|m| pos(m.compute_s) && m.size_mb.is_finite() && m.size_mb >= 0.0)
        {
            return bad("models", "τ must be positive and e non-negative");
        }
        let ints = [self.epochs, self.chunks, self.minibatches, self.vcpus];
        let reals = [
            self.memory_gb,
            self.worker_gbps,
            self.ps_gbps,
            self.gamma1,
            self.target_factor,
        ];
        if !ints.into_iter().all(int) || !reals.into_iter().all(real) {
            return bad("ranges", "every range needs 0 < lo ≤ hi, finite");
        }
        if self.window_slots == 0 || self.horizon_slots <= self.arrival_tail_slots.saturating_add(1)
        {
            return bad("horizon_slots", "arrivals need T − tail ≥ 2 and a window");
        }
        Ok(())
    }
}

/// Draws one instance: the cluster, then `jobs` Poisson arrivals over the
/// slots `[1, T − tail]` (rate `jobs/(T − tail − 1)` per slot, the first at
/// slot 1; an arrival past slot `T − tail` is clamped to its start), then
/// every job in arrival order: a model, `E`, `N`, `M`, worker demand
/// `[g, U{vcpus}, U[memory], b]`, PS demand `[0, U{vcpus}, U[memory], B]`
/// with `B = max(B, b)`, `γ1`, `γ2` by the OASiS classes, and
/// `γ3 = ⌈d^D·U[target_factor]⌉`. Jobs are asynchronous, elastic and
/// preemptible, with `max_workers = max_ps = N`, weight `γ1` and ids
/// `0..jobs` in arrival order.
///
/// # Errors
///
/// [`LocalityWorkload::validate`]'s errors; the instance's validation
/// errors.
pub fn generate(rng: &mut impl Rng, w: &LocalityWorkload) -> dmlsched::Result<Instance> {
    w.validate()?;
    let cap = Resources::zero()
        .gpus(w.machine_gpus)
        .cpu_cores(w.machine_vcpus)
        .memory(gb(w.machine_memory_gb))
        .nic(gbps(w.machine_nic_gbps));
    let machines = (0..w.machines)
        .map(|i| Machine::new(MachineId(i), cap, gbps(w.machine_nic_gbps * w.intra_factor)))
        .collect();
    let last = w.horizon_slots - w.arrival_tail_slots;
    let span_s = f64::from(last - 1) * w.slot_length_s;
    let times = poisson_arrivals(rng, w.jobs, w.jobs as f64 / span_s)?;
    let jobs = times
        .into_iter()
        .enumerate()
        .map(|(i, t)| {
            let arrival = (w.slot_length_s + t).min(f64::from(last) * w.slot_length_s);
            draw_job(rng, w, JobId(i as u32), arrival)
        })
        .collect();
    Ok(Instance::new(
        Cluster::new(machines),
        jobs,
        w.slot_length_s,
        w.horizon_slots,
    )?)
}

/// An offline batch (experiment L-E4): the instance [`generate`] draws,
/// with every job arriving at time 0, so that all are present in the first
/// slot, as the offline batch scheduler
/// ([`LocalityBatch`](dmlsched::algorithms::locality::LocalityBatch))
/// requires. The draws are [`generate`]'s (the same seed gives the same
/// jobs, arrivals aside).
///
/// # Errors
///
/// [`generate`]'s errors.
pub fn generate_batch(rng: &mut impl Rng, w: &LocalityWorkload) -> dmlsched::Result<Instance> {
    let drawn = generate(rng, w)?;
    let jobs = drawn
        .jobs()
        .iter()
        .cloned()
        .map(|mut j| {
            j.arrival_s = 0.0;
            j
        })
        .collect();
    Ok(Instance::new(
        drawn.cluster().clone(),
        jobs,
        drawn.slot_length_s(),
        drawn.horizon_slots(),
    )?)
}

/// One job's model, sizes, demands and utility.
fn draw_job(rng: &mut impl Rng, w: &LocalityWorkload, id: JobId, arrival_s: f64) -> Job {
    let model = w.models[rng.random_range(0..w.models.len())];
    let (e, n, m) = (
        uniform_u32(rng, w.epochs),
        uniform_u32(rng, w.chunks),
        uniform_u32(rng, w.minibatches),
    );
    let worker_vcpus = uniform_u32(rng, w.vcpus);
    let worker_mem = uniform_f64(rng, w.memory_gb);
    let b = uniform_f64(rng, w.worker_gbps);
    let ps_vcpus = uniform_u32(rng, w.vcpus);
    let ps_mem = uniform_f64(rng, w.memory_gb);
    let big_b = uniform_f64(rng, w.ps_gbps).max(b);
    let ps = PsJob {
        epochs: e,
        data_chunks: n,
        minibatches_per_chunk: m,
        minibatch_compute_s: model.compute_s,
        gradient_bytes: mb(model.size_mb),
        worker: Resources::zero()
            .gpus(w.worker_gpus)
            .cpu_cores(f64::from(worker_vcpus))
            .memory(gb(worker_mem))
            .nic(gbps(b)),
        ps: Resources::zero()
            .cpu_cores(f64::from(ps_vcpus))
            .memory(gb(ps_mem))
            .nic(gbps(big_b)),
        max_workers: n,
        max_ps: n,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    };
    let rate_dist = w.slot_length_s / ps.minibatch_time_s();
    let d_dist = ceil_tol(ps.total_minibatches() as f64 / (f64::from(n) * rate_dist)).max(1.0);
    let g1 = uniform_f64(rng, w.gamma1);
    let g2 = oasis_gamma2(rng);
    let g3 = (d_dist * uniform_f64(rng, w.target_factor)).ceil();
    Job::new(id, arrival_s, ps)
        .with_utility(Utility::Sigmoid { g1, g2, g3 })
        .with_weight(g1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use dmlsched::algorithms::Algorithm;
    use dmlsched::model::Architecture;
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    fn run(seed: u64, w: &LocalityWorkload) -> Instance {
        generate(&mut ChaCha8Rng::seed_from_u64(seed), w).unwrap()
    }

    #[test]
    fn locality_workload_ranges_hold() {
        let w = LocalityWorkload::default();
        let inst = run(11, &w);
        assert_eq!(inst.jobs().len(), 100);
        assert_eq!(inst.cluster().machines.len(), 16);
        assert_eq!((inst.slot_length_s(), inst.horizon_slots()), (1800.0, 200));
        let in_r = |v: f64, (lo, hi): (f64, f64)| v >= lo - 1e-9 && v <= hi + 1e-9;
        let in_u = |v: u32, (lo, hi): (u32, u32)| v >= lo && v <= hi;
        for job in inst.jobs() {
            let Architecture::ParameterServer(p) = &job.architecture else {
                panic!("a PS job")
            };
            let slot = inst.arrival_slot(job);
            assert!((1..=160).contains(&slot), "arrival slot {slot}");
            assert!(in_u(p.epochs, w.epochs) && in_u(p.data_chunks, w.chunks));
            assert!(in_u(p.minibatches_per_chunk, w.minibatches));
            assert_eq!((p.max_workers, p.max_ps), (p.data_chunks, p.data_chunks));
            assert!(
                MODELS
                    .iter()
                    .any(|m| m.compute_s == p.minibatch_compute_s
                        && mb(m.size_mb) == p.gradient_bytes)
            );
            let (wk, ps) = (&p.worker, &p.ps);
            assert_eq!((wk.gpus, ps.gpus), (1.0, 0.0));
            assert!(in_u(wk.cpu_cores as u32, w.vcpus) && in_u(ps.cpu_cores as u32, w.vcpus));
            assert!(in_r(wk.memory_bytes / gb(1.0), w.memory_gb));
            assert!(in_r(ps.memory_bytes / gb(1.0), w.memory_gb));
            assert!(in_r(wk.nic_bps / gbps(1.0), w.worker_gbps));
            assert!(in_r(ps.nic_bps / gbps(1.0), w.ps_gbps) && ps.nic_bps >= wk.nic_bps);
            let Utility::Sigmoid { g1, g2, g3 } = job.utility else {
                panic!("a sigmoid")
            };
            assert!(in_r(g1, w.gamma1) && job.weight == g1);
            assert!(g2 == 0.0 || in_r(g2, (0.01, 1.0)) || in_r(g2, (4.0, 6.0)));
            let r_d = 1800.0 / p.minibatch_time_s();
            let d = (p.total_minibatches() as f64 / (f64::from(p.data_chunks) * r_d))
                .ceil()
                .max(1.0);
            assert!(g3 == g3.ceil() && g3 >= d - 1e-9 && g3 <= 2.0 * d + 1.0);
        }
        // Every job is in the locality model.
        let sched = dmlsched::algorithms::locality::Locality::new(w.params()).unwrap();
        let (_, jobs) = sched
            .engine(&inst, &mut ChaCha8Rng::seed_from_u64(0))
            .unwrap();
        assert_eq!(jobs.len(), 100);
    }

    #[test]
    fn locality_batch_is_the_drawn_instance_at_time_zero() {
        let w = LocalityWorkload {
            jobs: 7,
            ..LocalityWorkload::default()
        };
        let drawn = run(4, &w);
        let batch = generate_batch(&mut ChaCha8Rng::seed_from_u64(4), &w).unwrap();
        assert_eq!(batch.jobs().len(), 7);
        for (a, b) in drawn.jobs().iter().zip(batch.jobs()) {
            assert_eq!(b.arrival_s, 0.0);
            assert_eq!(a.architecture, b.architecture);
        }
    }

    #[test]
    fn locality_workload_same_seed_same_instance() {
        let w = LocalityWorkload {
            jobs: 20,
            ..LocalityWorkload::default()
        };
        assert_eq!(run(5, &w), run(5, &w));
        assert_ne!(run(5, &w), run(6, &w));
        assert_eq!(w.params().intra_factor, Some(10.0));
        assert_eq!(w.params().horizon, 64);
    }

    #[test]
    fn locality_workload_b_never_exceeds_ps_bandwidth_and_bad_input_is_typed() {
        let w = LocalityWorkload {
            jobs: 30,
            worker_gbps: (4.0, 9.0),
            ps_gbps: (5.0, 6.0),
            ..LocalityWorkload::default()
        };
        for job in run(3, &w).jobs() {
            let Architecture::ParameterServer(p) = &job.architecture else {
                panic!("a PS job")
            };
            assert!(p.ps.nic_bps >= p.worker.nic_bps);
        }
        for bad in [
            LocalityWorkload {
                jobs: 0,
                ..LocalityWorkload::default()
            },
            LocalityWorkload {
                chunks: (5, 2),
                ..LocalityWorkload::default()
            },
            LocalityWorkload {
                slot_length_s: f64::NAN,
                ..LocalityWorkload::default()
            },
            LocalityWorkload {
                horizon_slots: 40,
                ..LocalityWorkload::default()
            },
        ] {
            let err = generate(&mut ChaCha8Rng::seed_from_u64(1), &bad).unwrap_err();
            assert!(matches!(
                err,
                dmlsched::Error::Locality(LocalityError::InvalidOption { .. })
            ));
        }
    }
}

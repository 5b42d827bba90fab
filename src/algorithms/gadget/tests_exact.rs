//! The exact offline optimum of the GADGET-style model: a hand-checked
//! instance (with an independent brute force over schedule subsets), the
//! tiny-instance checks of the online scheduler against it on 50 seeded
//! instances (weak duality, the bookkeeping, the ratio with the exhaustive
//! oracle and headroom prices, greedy = exhaustive on two servers, the
//! certificate with the optimum attached), fixed fairness weights, and
//! typed errors, with and without the solver. Moved here from
//! `tests/gadget_exact.rs` when the model (which the brute force reads) and
//! the oracle's own API became crate-private.

#[cfg(feature = "highs")]
use crate::algorithms::Algorithm;
use std::collections::BTreeMap;

#[cfg(feature = "highs")]
use super::model::GadgetModel;
use super::*;
use crate::model::*;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// Bytes per second in one ledger data unit per 1-s slot (10⁶).
const MB: f64 = 1e6;

/// A server with `gpus` GPUs (and cores), `nic` bytes/s per direction and
/// internal bandwidth `intra` bytes/s.
fn server(id: u32, gpus: f64, nic: f64, intra: f64) -> Machine {
    let capacity = Resources::zero().gpus(gpus).cpu_cores(gpus).nic(nic);
    Machine::new(MachineId(id), capacity, intra)
}

/// The hand-checked instance: two 4-GPU servers whose NIC pools hold
/// `2·nic_mb` data units per 1-s slot, three slots, four jobs arriving at 0
/// that reserve 6 MB/s (`2b = 12` data units on every server of a
/// multi-server ring), durations from tables:
///
/// | job | w | shapes `(w, n) → d` | utility of the elapsed slots `t̂` |
/// |---|---|---|---|
/// | 0 | 6 | `(6,2) → 2` | 12 |
/// | 1 | 4 | `(4,1) → 2`, `(4,2) → 1` | `10 − 2t̂` |
/// | 2 | 4 | `(4,1) → 3` | 5 |
/// | 3 | 2 | `(2,1) → 2`, `(2,2) → 1` | `6 − t̂` |
///
/// With `nic_mb = 10` (pools of 20) two rings never share a slot. Job 2
/// holds a whole server for all three slots, which leaves job 0 no room;
/// without job 0 the others are worth at most 15 (with job 2 no ring runs:
/// 5 + 8; without it 10 + 5). With job 0 in `[1, 3)` on `(4, 2)`:
/// job 1 as a ring in slot 0 (10), job 3 on the free GPUs of the second
/// server in `[0, 2)` (5; as a ring in slot 0 it would meet job 1's ring):
/// `OPT = 27`. With job 0 in `[0, 2)` at most `12 + 6 + 5 = 23`. With
/// `nic_mb = 12` (pools of 24) job 3's ring joins job 1's in slot 0:
/// `OPT = 12 + 10 + 6 = 28`.
fn hand_instance(nic_mb: f64) -> (Instance, GadgetParams) {
    let cluster = Cluster::new(
        (0..2)
            .map(|i| server(i, 4.0, nic_mb * MB, 100.0 * MB))
            .collect(),
    );
    let ring = |w| RarJob {
        workers: WorkerCounts::Fixed(w),
        reserved_bandwidth_bps: Some(6.0 * MB),
        ..RarJob::default()
    };
    let utilities = [
        Utility::Constant { value: 12.0 },
        Utility::Linear {
            g1: 10.0,
            slope: 2.0,
        },
        Utility::Constant { value: 5.0 },
        Utility::Linear {
            g1: 6.0,
            slope: 1.0,
        },
    ];
    let workers = [6, 4, 4, 2];
    let jobs = (0..4)
        .map(|i| {
            Job::new(JobId(i), 0.0, ring(workers[i as usize]))
                .with_utility(utilities[i as usize].clone())
        })
        .collect();
    let tables = [
        vec![((6, 2), 2)],
        vec![((4, 1), 2), ((4, 2), 1)],
        vec![((4, 1), 3)],
        vec![((2, 1), 2), ((2, 2), 1)],
    ];
    let params = GadgetParams {
        durations: tables
            .into_iter()
            .enumerate()
            .map(|(i, t)| (JobId(i as u32), DurationTable::new(t)))
            .collect(),
        ..GadgetParams::default()
    };
    (Instance::new(cluster, jobs, 1.0, 3).unwrap(), params)
}

/// A family of random tiny instances: servers of `gpus` GPUs with NICs
/// of `nic_mb` MB/s per direction, worker counts drawn from `counts`.
#[derive(Debug, Clone, Copy)]
struct Family {
    gpus: f64,
    nic_mb: f64,
    counts: [u32; 3],
    /// Range of the reservation `b`, MB/s.
    reserve_mb: (u32, u32),
}

/// The tiny family: 4-GPU servers, NICs of 8 MB/s per direction (pools of
/// 16 data units per slot), `W ⊆ {1, 2, 4}`.
const TINY: Family = Family {
    gpus: 4.0,
    nic_mb: 8.0,
    counts: [1, 2, 4],
    reserve_mb: (3, 7),
};

/// Instance `seed` of `family`: 2–3 servers (internal bandwidth 50 or
/// 100 MB/s), 6–12 slots of 1 s, 2–6 jobs with a non-empty subset of the
/// family's worker counts (all allowed), 2–12 iterations, up to 1 MB of
/// model, 0.1–0.7 s of compute, mostly a reservation of 3–7 MB/s, arrivals
/// in the first third, constant, linear, sigmoid or deadline utilities;
/// work counted in iterations or samples, energy price 0 or 0.05, jobs in
/// two tenants.
fn family_instance(seed: u64, family: Family) -> (Instance, GadgetParams) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let servers = rng.random_range(2..=3u32);
    let horizon = rng.random_range(6..=12u32);
    let mut cluster = Cluster::new(
        (0..servers)
            .map(|i| {
                let intra = if rng.random_bool(0.3) { 50.0 } else { 100.0 };
                server(i, family.gpus, family.nic_mb * MB, intra * MB)
            })
            .collect(),
    );
    cluster.ring = RingParams {
        external_bandwidth_bps: 10.0 * MB,
        reduction_speed_bps: 100.0 * MB,
        overhead_per_server_s: 0.01,
        contender_ratio: 1.0,
        degradation: Degradation::default(),
    };
    let jobs = (0..rng.random_range(2..=6u32))
        .map(|i| {
            let mask = rng.random_range(1..8u32);
            let mut counts: Vec<u32> = family
                .counts
                .into_iter()
                .enumerate()
                .filter(|(bit, _)| mask & (1 << bit) != 0)
                .map(|(_, w)| w)
                .collect();
            counts.dedup();
            let ring = RarJob {
                workers: WorkerCounts::Allowed(counts),
                iterations: rng.random_range(2..=12u64),
                model_bytes: rng.random_range(0.0..1.0) * MB,
                backward_per_iteration_s: rng.random_range(0.1..0.7),
                reserved_bandwidth_bps: rng.random_bool(0.85).then(|| {
                    f64::from(rng.random_range(family.reserve_mb.0..=family.reserve_mb.1)) * MB
                }),
                ..RarJob::default()
            };
            let g1 = rng.random_range(1.0..50.0);
            let utility = match rng.random_range(0..4u32) {
                0 => Utility::Constant { value: g1 },
                1 => Utility::Linear {
                    g1,
                    slope: g1 / f64::from(rng.random_range(3..=12u32)),
                },
                2 => Utility::Sigmoid {
                    g1,
                    g2: rng.random_range(0.2..3.0),
                    g3: f64::from(rng.random_range(1..=6u32)),
                },
                _ => Utility::DeadlineStep {
                    value: g1,
                    deadline_slots: rng.random_range(1..=8u32),
                },
            };
            let arrival = f64::from(rng.random_range(0..horizon / 3));
            let mut job = Job::new(JobId(i), arrival, ring).with_utility(utility);
            job.tenant = Some(format!("t{}", i % 2));
            job
        })
        .collect();
    // The fields are evaluated in the order written: the draws' order.
    let params = GadgetParams {
        worker_choice: WorkerChoice::Allowed,
        work_unit: if rng.random_bool(0.5) {
            WorkUnit::Samples
        } else {
            WorkUnit::Iterations
        },
        energy_price: if rng.random_bool(0.3) { 0.05 } else { 0.0 },
        ..GadgetParams::default()
    };
    (Instance::new(cluster, jobs, 1.0, horizon).unwrap(), params)
}

#[test]
fn inputs_are_checked_before_any_solve() {
    let (instance, params) = hand_instance(10.0);
    let invalid = |e: crate::Error, option: &str| matches!(e, crate::Error::Gadget(GadgetError::InvalidOption { name, .. }) if name == option);
    let d = OFFLINE_LIMITS;
    let solver = |f: fn(&mut crate::lp::ExactMipLimits)| {
        let mut l = d;
        f(&mut l);
        l
    };
    for (limits, option) in [
        (solver(|s| s.time_limit_s = 0.0), "time_limit_s"),
        (solver(|s| s.mip_rel_gap = 1.0), "mip_rel_gap"),
        (solver(|s| s.threads = Some(0)), "threads"),
        (solver(|s| s.max_columns = Some(0)), "max_columns"),
    ] {
        let e = offline_optimum(&instance, &params, &limits).unwrap_err();
        assert!(invalid(e, option), "{option}");
    }
    // The hand instance has 28 columns: job 0 two starts × three
    // embeddings (2+4, 3+3, 4+2); job 1 two starts × two servers alone and
    // three starts × three embeddings as a ring; job 2 one start × two
    // servers; job 3 two starts × two servers alone and three starts as a
    // 1+1 ring: 6 + 13 + 2 + 7.
    let small = OFFLINE_LIMITS.with_max_columns(27);
    match offline_optimum(&instance, &params, &small) {
        Err(crate::Error::Gadget(GadgetError::TooLarge { value, limit, .. })) => {
            assert_eq!((value, limit), (28.0, 27.0));
        }
        other => panic!("{other:?}"),
    }
    // Fairness weights frozen by an online run define no offline problem.
    let mut fair = params.clone();
    fair.fairness = FairnessWeighting::TenantShare { beta: 1.0 };
    let e = offline_optimum(&instance, &fair, &OFFLINE_LIMITS).unwrap_err();
    assert!(invalid(e, "fairness"));
    for weights in [
        BTreeMap::from([(JobId(9), 1.0)]),
        BTreeMap::from([(JobId(0), -1.0)]),
        BTreeMap::from([(JobId(0), f64::NAN)]),
    ] {
        let e = offline_optimum_weighted(&instance, &fair, &weights, &OFFLINE_LIMITS).unwrap_err();
        assert!(invalid(e, "weights"), "{weights:?}");
    }
    // The model's own errors come first: a parameter-server job.
    let mut jobs = instance.jobs().to_vec();
    jobs.push(Job::new(JobId(7), 0.0, PsJob::default()));
    let mixed = Instance::new(instance.cluster().clone(), jobs, 1.0, 3).unwrap();
    assert!(matches!(
        offline_optimum(&mixed, &params, &OFFLINE_LIMITS),
        Err(crate::Error::Gadget(GadgetError::UnsupportedJob { .. }))
    ));
    // A cluster far beyond the program: refused before enumerating (C(64,
    // 8) server sets alone are 4.4·10⁹).
    let big = Cluster::new(
        (0..64)
            .map(|i| server(i, 8.0, 100.0 * MB, 100.0 * MB))
            .collect(),
    );
    let ring = RarJob {
        workers: WorkerCounts::Allowed((1..=16).collect()),
        reserved_bandwidth_bps: Some(MB),
        ..RarJob::default()
    };
    let jobs = (0..20)
        .map(|i| Job::new(JobId(i), 0.0, ring.clone()))
        .collect();
    let big = Instance::new(big, jobs, 1.0, 500).unwrap();
    let all = GadgetParams {
        worker_choice: WorkerChoice::Allowed,
        ..GadgetParams::default()
    };
    let started = std::time::Instant::now();
    match offline_optimum(&big, &all, &OFFLINE_LIMITS) {
        Err(crate::Error::Gadget(GadgetError::TooLarge { value, limit, .. })) => {
            assert!(value > limit && limit == OFFLINE_MAX_COLUMNS as f64);
        }
        other => panic!("{other:?}"),
    }
    eprintln!(
        "large instance refused in {:.3} s",
        started.elapsed().as_secs_f64()
    );
    // The whole tiny family fits the default column limit.
    for seed in 0..50 {
        let (instance, params) = family_instance(seed, TINY);
        let tight = OFFLINE_LIMITS.with_max_columns(1);
        if let Err(crate::Error::Gadget(GadgetError::TooLarge { value, .. })) =
            offline_optimum(&instance, &params, &tight)
        {
            assert!(value <= OFFLINE_MAX_COLUMNS as f64, "seed {seed}: {value}");
        }
    }
}

#[cfg(not(feature = "highs"))]
#[test]
fn without_the_solver_the_error_is_typed() {
    use crate::lp::LpError;
    let (instance, params) = hand_instance(10.0);
    assert!(matches!(
        offline_optimum(&instance, &params, &OFFLINE_LIMITS),
        Err(crate::Error::Lp(LpError::SolverUnavailable))
    ));
    let (instance, params) = family_instance(0, TINY);
    let weights = BTreeMap::from([(JobId(0), 0.5)]);
    assert!(matches!(
        offline_optimum_weighted(&instance, &params, &weights, &OFFLINE_LIMITS),
        Err(crate::Error::Lp(LpError::SolverUnavailable))
    ));
}

#[cfg(feature = "highs")]
mod exact {
    use super::*;
    use crate::algorithms::Solved;
    use crate::online::{OnlineError, PriceView};
    use crate::schedule::verify;

    /// Rings only: 3-GPU servers, `W = {4}` (every job a ring), reservations
    /// of 5–8 MB/s (`2b ≥ 10` of pools of 16: two rings never share a
    /// server, and on three servers two rings always would).
    const RINGS: Family = Family {
        gpus: 3.0,
        nic_mb: 8.0,
        counts: [4, 4, 4],
        reserve_mb: (5, 8),
    };

    // ----- An independent brute force over schedule subsets.

    /// One schedule: its value and the cells it takes, `(server, slot,
    /// GPUs, NIC)`.
    struct Choice {
        value: f64,
        cells: Vec<(usize, u32, u32, f64)>,
    }

    /// Every schedule of positive value of every job, best first: every
    /// shape, every vector `y ∈ [0, O_h]^H` with exactly `n` non-zero
    /// entries summing to `w` (an odometer over all servers), every start.
    fn schedules(model: &GadgetModel) -> Vec<Vec<Choice>> {
        let servers = &model.cluster.servers;
        let horizon = model.cluster.horizon;
        let mut all = Vec::new();
        for job in &model.jobs {
            let mut out = Vec::new();
            for shape in &job.shapes {
                let mut y = vec![0u32; servers.len()];
                'odometer: loop {
                    let used: Vec<usize> = (0..y.len()).filter(|&k| y[k] > 0).collect();
                    let ok = y.iter().sum::<u32>() == shape.workers
                        && used.len() == shape.servers as usize
                        && used.iter().all(|&k| job.may_use(k))
                        && if shape.servers == 1 {
                            shape.class.is_none_or(|c| servers[used[0]].class == c)
                        } else {
                            used.iter().all(|&k| job.ring_nic <= servers[k].nic)
                        };
                    let nic = if shape.servers >= 2 {
                        job.ring_nic
                    } else {
                        0.0
                    };
                    for s in job.earliest..=horizon.saturating_sub(shape.slots) {
                        let value = job.value(s, shape);
                        if ok && value > 0.0 && s + shape.slots <= horizon {
                            let cells = (s..s + shape.slots)
                                .flat_map(|t| used.iter().map(move |&k| (k, t)))
                                .map(|(k, t)| (k, t, y[k], nic))
                                .collect();
                            out.push(Choice { value, cells });
                        }
                    }
                    for k in 0..=y.len() {
                        if k == y.len() {
                            break 'odometer;
                        }
                        y[k] += 1;
                        if y[k] <= servers[k].gpus {
                            break;
                        }
                        y[k] = 0;
                    }
                }
            }
            out.sort_by(|a, b| b.value.total_cmp(&a.value));
            all.push(out);
        }
        all
    }

    /// Depth-first search over the jobs: each job takes one of its
    /// schedules that fits the GPUs and NIC pools left, or none; branches
    /// that cannot beat the best found (its value plus every later job's
    /// best value) are cut.
    struct Brute<'a> {
        options: &'a [Vec<Choice>],
        /// `Σ_{j ≥ i}` of job j's best value.
        rest: Vec<f64>,
        gpus: Vec<u32>,
        nic: Vec<f64>,
        used_gpus: Vec<Vec<u32>>,
        used_nic: Vec<Vec<f64>>,
        best: f64,
        nodes: u64,
    }

    impl Brute<'_> {
        fn fits(&self, o: &Choice) -> bool {
            o.cells.iter().all(|&(k, t, y, r)| {
                let t = t as usize;
                self.used_gpus[k][t] + y <= self.gpus[k]
                    && self.used_nic[k][t] + r <= self.nic[k] * (1.0 + 1e-12)
            })
        }

        fn take(&mut self, o: &Choice, sign: f64) {
            for &(k, t, y, r) in &o.cells {
                let t = t as usize;
                if sign > 0.0 {
                    self.used_gpus[k][t] += y;
                } else {
                    self.used_gpus[k][t] -= y;
                }
                self.used_nic[k][t] += sign * r;
            }
        }

        fn search(&mut self, i: usize, value: f64) {
            self.nodes += 1;
            if value > self.best {
                self.best = value;
            }
            if i == self.options.len() || value + self.rest[i] <= self.best {
                return;
            }
            let options = self.options;
            for o in &options[i] {
                if value + o.value + self.rest[i + 1] <= self.best {
                    break; // sorted: no later option does better
                }
                if self.fits(o) {
                    self.take(o, 1.0);
                    self.search(i + 1, value + o.value);
                    self.take(o, -1.0);
                }
            }
            self.search(i + 1, value);
        }
    }

    /// `OPT` by brute force, with the nodes searched.
    fn brute_force(model: &GadgetModel) -> (f64, u64) {
        let options = schedules(model);
        let mut rest = vec![0.0; options.len() + 1];
        for i in (0..options.len()).rev() {
            rest[i] = rest[i + 1] + options[i].first().map_or(0.0, |o| o.value);
        }
        let servers = &model.cluster.servers;
        let t = model.cluster.horizon as usize;
        let mut b = Brute {
            options: &options,
            rest,
            gpus: servers.iter().map(|s| s.gpus).collect(),
            nic: servers.iter().map(|s| s.nic).collect(),
            used_gpus: vec![vec![0; t]; servers.len()],
            used_nic: vec![vec![0.0; t]; servers.len()],
            best: 0.0,
            nodes: 0,
        };
        b.search(0, 0.0);
        (b.best, b.nodes)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
    }

    /// The optimum, checked: proven optimal, its schedule verified, its
    /// plans' values summing to the objective.
    fn optimum(instance: &Instance, params: &GadgetParams) -> GadgetOptimum {
        let opt = offline_optimum(instance, params, &OFFLINE_LIMITS).unwrap();
        assert!(opt.optimal, "{:?}", opt.status);
        assert!(opt.upper_bound >= opt.objective);
        assert!(opt.rel_gap <= 1e-9);
        assert!(opt.columns as f64 <= opt.estimated_columns);
        verify(instance, &opt.schedule).unwrap();
        let sum: f64 = opt
            .plans
            .iter()
            .filter_map(|(_, p)| p.as_ref())
            .map(|p| p.value)
            .sum();
        assert!(close(sum, opt.objective));
        for ((id, plan), js) in opt.plans.iter().zip(&opt.schedule.jobs) {
            assert_eq!(*id, js.job);
            assert_eq!(plan.is_some(), js.admitted);
        }
        opt
    }

    #[test]
    fn hand_checked_instance() {
        for (nic, want, admitted) in [(10.0, 27.0, [0, 1, 3]), (12.0, 28.0, [0, 1, 3])] {
            let (instance, params) = hand_instance(nic);
            let opt = optimum(&instance, &params);
            assert!(close(opt.objective, want), "NIC {nic}: {}", opt.objective);
            assert_eq!(opt.columns, 28);
            let model = GadgetModel::new(&instance, &params).unwrap();
            let (brute, _) = brute_force(&model);
            assert!(close(brute, want), "brute force {brute}");
            let chosen: Vec<u32> = opt
                .plans
                .iter()
                .filter(|(_, p)| p.is_some())
                .map(|(id, _)| id.0)
                .collect();
            assert_eq!(chosen, admitted);
            let plan = |j: usize| opt.plans[j].1.as_ref().unwrap();
            // Job 0 in [1, 3) on both servers, job 1 a ring in slot 0.
            assert_eq!((plan(0).plan.start, plan(0).plan.servers()), (1, 2));
            assert_eq!((plan(1).plan.start, plan(1).value), (0, 10.0));
            // Job 3: on one server in [0, 2) for 5, or beside job 1's ring
            // in slot 0 for 6 when the pools hold two rings.
            let three = &plan(3).plan;
            if nic == 10.0 {
                assert_eq!((three.start, three.servers(), plan(3).value), (0, 1, 5.0));
            } else {
                assert_eq!((three.start, three.servers(), plan(3).value), (0, 2, 6.0));
            }
            // Every online run lies below the optimum, and its certificate
            // accepts it as the comparison point.
            for oracle in [EmbeddingOracle::Greedy, EmbeddingOracle::Exhaustive] {
                let mut params = params.clone();
                params.oracle = oracle;
                let solved = Gadget::new(params)
                    .and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
                    .unwrap();
                assert!(solved.report.total_value() <= opt.objective + 1e-9);
                exact_certificate(&solved, &opt);
            }
        }
    }

    /// The run's certificate with the optimum attached passes
    /// `check(1e-9)`.
    fn exact_certificate(solved: &Solved<GadgetReport>, opt: &GadgetOptimum) {
        let c = solved.certificate.clone().with_exact(opt.exact_info());
        if let Err(e) = c.check(1e-9) {
            panic!("{e}\n{c}");
        }
    }

    /// `D_end` of a greedy run recomputed exactly: the greedy run replayed
    /// job by job, then every job's best payoff over all of its schedules at
    /// the final prices (the exhaustive oracle on the full cluster) plus the
    /// price mass `Σ c·p`. A valid bound on `OPT` whatever oracle set the
    /// prices.
    fn exact_final_dual(instance: &Instance, params: &GadgetParams) -> f64 {
        let (mut engine, jobs) = Gadget::new(params.clone())
            .unwrap()
            .engine(instance)
            .unwrap();
        for job in &jobs {
            engine.step(job).unwrap();
        }
        let cluster = engine.oracle().cluster().clone();
        let view = PriceView::with_full_capacity(engine.ledger(), engine.bounds());
        let mut exact = GadgetOracle::new(cluster.clone(), EmbeddingOracle::Exhaustive);
        let mu: f64 = jobs
            .iter()
            .map(|j| {
                exact
                    .best_plan(j, &view)
                    .map_or(0.0, |(_, v, c)| (v - c).max(0.0))
            })
            .sum();
        let mut mass = 0.0;
        for k in 0..cluster.servers.len() {
            let m = MachineId(k as u32);
            for r in [GPU, NIC] {
                for t in 0..cluster.horizon {
                    mass += view.capacity(m, r) * view.price(m, r, t);
                }
            }
        }
        mu + mass
    }

    /// Ratios `OPT/ALG` seen, for the summary.
    #[derive(Default)]
    struct Ratios(Vec<f64>);

    impl Ratios {
        fn push(&mut self, opt: f64, alg: f64) {
            if opt > 0.0 {
                self.0
                    .push(if alg > 0.0 { opt / alg } else { f64::INFINITY });
            }
        }

        fn summary(&self) -> String {
            let n = self.0.len() as f64;
            let mean = self.0.iter().sum::<f64>() / n;
            let max = self.0.iter().copied().fold(1.0, f64::max);
            let at_one = self.0.iter().filter(|r| **r <= 1.0 + 1e-9).count();
            format!(
                "mean {mean:.4}, max {max:.4}, OPT = ALG on {at_one}/{}",
                self.0.len()
            )
        }
    }

    /// What every run must satisfy against the optimum: `ALG ≤ OPT ≤` the
    /// certificate's bound, `OPT ≤ D_end` when valid, the bookkeeping
    /// `ALG ≥ (D_final − D_0)/α_eff`, and the certificate with the optimum
    /// attached.
    fn sandwich(case: &str, solved: &Solved<GadgetReport>, opt: &GadgetOptimum) {
        let run = &solved.report.run;
        let alg = run.total_utility;
        let o = opt.objective;
        let tol = 1e-9 * o.max(1.0);
        assert!(alg <= o + tol, "{case}: ALG {alg} > OPT {o}");
        let bound = solved.certificate.relaxation_bound.value;
        assert!(
            o <= bound + tol,
            "{case}: OPT {o} > certificate bound {bound}"
        );
        if run.dual_end_valid {
            let d = run.dual_end.unwrap();
            assert!(o <= d + tol, "{case}: OPT {o} > D_end {d}");
        }
        let book = (run.dual_running - run.dual_initial) / run.alpha_eff;
        assert!(
            alg >= book - 1e-9 * book.abs().max(1.0),
            "{case}: ALG {alg} < (D_final − D_0)/α_eff = {book}"
        );
        exact_certificate(solved, opt);
    }

    /// With the exhaustive oracle and headroom prices (either bounds rule):
    /// `OPT ≤ D_final` (recorded µ) and `ALG ≥ OPT/(2·max(1, α_eff))`.
    fn headroom_ratio(case: &str, solved: &Solved<GadgetReport>, opt: &GadgetOptimum) -> f64 {
        let run = &solved.report.run;
        let o = opt.objective;
        let tol = 1e-9 * o.max(1.0);
        assert_eq!(run.running_dual_feasible, Some(true), "{case}");
        assert!(
            o <= run.dual_running + tol,
            "{case}: OPT {o} > D_final {}",
            run.dual_running
        );
        assert!(run.d0_condition_verified, "{case}");
        let factor = 2.0 * run.alpha_eff.max(1.0);
        assert!(
            run.total_utility >= o / factor - tol,
            "{case}: ALG {} < OPT/(2·max(1, α_eff)) = {o}/{factor}",
            run.total_utility
        );
        factor
    }

    fn admitted(solved: &Solved<GadgetReport>) -> Vec<bool> {
        solved.report.jobs.iter().map(JobRecord::admitted).collect()
    }

    /// What the checks saw over a family, for the summary.
    #[derive(Default)]
    struct Seen {
        greedy: Ratios,
        exhaustive: Ratios,
        headroom: Ratios,
        positive: usize,
        nic_binds: usize,
        two_servers: usize,
        differ_three: usize,
        eta_runs: usize,
        infeasible_running: usize,
        largest: (usize, usize),
        nodes: u64,
        /// `2·max(1, α_eff)` of the headroom runs.
        factors: Vec<f64>,
        /// Exhaustive runs without headroom where `OPT > D_final`.
        opt_above_running: usize,
    }

    impl Seen {
        fn print(&self, family: &str, instances: usize) {
            eprintln!(
                "{family}: {}/{instances} with OPT > 0, {} where the NIC pools lower it; largest program {} columns, {} rows; brute force ≤ {} nodes",
                self.positive, self.nic_binds, self.largest.0, self.largest.1, self.nodes
            );
            eprintln!("  OPT/ALG greedy: {}", self.greedy.summary());
            eprintln!("  OPT/ALG exhaustive: {}", self.exhaustive.summary());
            eprintln!(
                "  OPT/ALG exhaustive + headroom (value floor): {}",
                self.headroom.summary()
            );
            eprintln!(
                "  two-server instances: {} (greedy = exhaustive on all); three-server instances where they differ: {}; η-rule headroom runs: {}",
                self.two_servers, self.differ_three, self.eta_runs
            );
            eprintln!(
                "  exhaustive without headroom: running dual infeasible in {} runs, OPT > D_final in {}",
                self.infeasible_running, self.opt_above_running
            );
            let mut finite: Vec<f64> = self
                .factors
                .iter()
                .copied()
                .filter(|f| f.is_finite())
                .collect();
            finite.sort_by(f64::total_cmp);
            eprintln!(
                "  2·max(1, α_eff) under headroom: {} runs, {} infinite (a NIC exponent capacity of 0), finite ones from {:.3} (median {:.3e}) to {:.3e}",
                self.factors.len(),
                self.factors.len() - finite.len(),
                finite.first().copied().unwrap_or(f64::NAN),
                finite.get(finite.len() / 2).copied().unwrap_or(f64::NAN),
                finite.last().copied().unwrap_or(f64::NAN)
            );
        }
    }

    /// Every check of one instance of `family`: the optimum (and the brute
    /// force, and the optimum with ample NIC pools); the greedy and the
    /// exhaustive runs ([`sandwich`], the greedy's `D_end` recomputed
    /// exactly, equal admissions on two servers); the exhaustive runs with
    /// headroom prices under both bounds rules ([`headroom_ratio`]).
    fn check_instance(seed: u64, family: Family, seen: &mut Seen) {
        let (instance, params) = family_instance(seed, family);
        let opt = optimum(&instance, &params);
        let model = GadgetModel::new(&instance, &params).unwrap();
        let (brute, n) = brute_force(&model);
        assert!(
            close(brute, opt.objective),
            "seed {seed}: brute force {brute} ≠ OPT {}",
            opt.objective
        );
        seen.nodes = seen.nodes.max(n);
        seen.largest = seen.largest.max((opt.columns, opt.rows));
        seen.positive += usize::from(opt.objective > 0.0);
        // Ample NIC pools: the optimum can only grow.
        let ample = Family {
            nic_mb: 1000.0,
            ..family
        };
        let wide = optimum(&family_instance(seed, ample).0, &params).objective;
        assert!(wide >= opt.objective - 1e-9 * wide.max(1.0), "seed {seed}");
        seen.nic_binds += usize::from(wide > opt.objective * (1.0 + 1e-9));
        let run = |p: GadgetParams| {
            Gadget::new(p)
                .and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        };
        let case = |what: &str| format!("seed {seed} ({what})");

        let g = run(params.clone()).unwrap();
        sandwich(&case("greedy"), &g, &opt);
        let d = exact_final_dual(&instance, &params);
        assert!(
            opt.objective <= d + 1e-9 * d.max(1.0),
            "seed {seed}: OPT {} > greedy's exact D_end {d}",
            opt.objective
        );
        seen.greedy.push(opt.objective, g.report.total_value());

        let mut ex_params = params.clone();
        ex_params.oracle = EmbeddingOracle::Exhaustive;
        let e = run(ex_params.clone()).unwrap();
        sandwich(&case("exhaustive"), &e, &opt);
        // The framework's D_end is the exact re-pricing.
        let d = exact_final_dual(&instance, &ex_params);
        assert!(close(d, e.report.run.dual_end.unwrap()), "seed {seed}");
        seen.exhaustive.push(opt.objective, e.report.total_value());
        if e.report.run.running_dual_feasible == Some(false) {
            seen.infeasible_running += 1;
        }
        if opt.objective > e.report.run.dual_running * (1.0 + 1e-9) {
            seen.opt_above_running += 1;
        }
        if model.cluster.servers.len() == 2 {
            seen.two_servers += 1;
            assert_eq!(
                admitted(&g),
                admitted(&e),
                "seed {seed}: greedy ≠ exhaustive on two servers"
            );
            assert_eq!(g.schedule, e.schedule, "seed {seed}");
        } else if admitted(&g) != admitted(&e) {
            seen.differ_three += 1;
        }

        for bounds in [GadgetBounds::default(), GadgetBounds::FrameworkEta] {
            let mut p = ex_params.clone();
            p.headroom = true;
            p.bounds = bounds;
            let h = match run(p) {
                Ok(h) => h,
                // The η rule needs a job with a positive late value.
                Err(crate::Error::Online(OnlineError::CannotDeriveBounds { .. }))
                    if bounds == GadgetBounds::FrameworkEta =>
                {
                    continue;
                }
                Err(e) => panic!("seed {seed}: {e}"),
            };
            let what = format!("exhaustive, headroom, {}", bounds.name());
            sandwich(&case(&what), &h, &opt);
            seen.factors.push(headroom_ratio(&case(&what), &h, &opt));
            if bounds == GadgetBounds::default() {
                seen.headroom.push(opt.objective, h.report.total_value());
            } else {
                seen.eta_runs += 1;
            }
        }
    }

    /// The tiny-instance checks on 50 seeded instances of the tiny family.
    #[test]
    fn tiny_instances() {
        let started = std::time::Instant::now();
        let mut seen = Seen::default();
        for seed in 0..50 {
            check_instance(seed, TINY, &mut seen);
        }
        seen.print("tiny family", 50);
        eprintln!("  {:.2} s", started.elapsed().as_secs_f64());
        assert!(seen.positive >= 45 && seen.two_servers >= 10 && seen.eta_runs >= 10);
    }

    /// The same checks where rings are the rule: 3-GPU servers and worker
    /// counts `{2, 3, 4}` (four workers always form a ring, and two such
    /// rings on at most three servers share one), so the NIC pools bind.
    #[test]
    fn ring_heavy_instances() {
        let mut seen = Seen::default();
        for seed in 0..20 {
            check_instance(seed, RINGS, &mut seen);
        }
        seen.print("ring-heavy family", 20);
        assert!(seen.positive >= 18 && seen.nic_binds > 0);
    }

    /// Fixed weights: the weights a tenant-share run froze give the
    /// offline problem its certificate refers to.
    #[test]
    fn weights_frozen_by_a_run() {
        let mut lowered = 0;
        for seed in 0..12 {
            let (instance, params) = family_instance(seed, TINY);
            let mut fair = params;
            fair.oracle = EmbeddingOracle::Exhaustive;
            fair.fairness = FairnessWeighting::TenantShare { beta: 1.0 };
            let solved = Gadget::new(fair.clone())
                .and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
                .unwrap();
            let weights: BTreeMap<JobId, f64> = solved
                .report
                .jobs
                .iter()
                .map(|j| (j.job, j.omega))
                .collect();
            lowered += weights.values().filter(|w| **w < 1.0).count();
            let opt =
                offline_optimum_weighted(&instance, &fair, &weights, &OFFLINE_LIMITS).unwrap();
            assert!(opt.optimal);
            verify(&instance, &opt.schedule).unwrap();
            sandwich(&format!("seed {seed} (tenant share)"), &solved, &opt);
            // With unit weights the weighted optimum is the plain one.
            let ones: BTreeMap<JobId, f64> = weights.keys().map(|&j| (j, 1.0)).collect();
            let mut plain = fair.clone();
            plain.fairness = FairnessWeighting::None;
            let a = offline_optimum_weighted(&instance, &fair, &ones, &OFFLINE_LIMITS).unwrap();
            let b = offline_optimum(&instance, &plain, &OFFLINE_LIMITS).unwrap();
            assert!(close(a.objective, b.objective));
            assert!(opt.objective <= b.objective + 1e-9);
        }
        assert!(lowered > 0, "no run lowered a weight");
    }

    /// A limit stop is reported as such, with a valid bound, never as
    /// optimal.
    #[test]
    fn a_limit_is_not_an_optimum() {
        let (instance, params) = family_instance(3, TINY);
        let opt = optimum(&instance, &params);
        let mut limits = OFFLINE_LIMITS;
        limits.time_limit_s = 1e-9;
        let stopped = offline_optimum(&instance, &params, &limits).unwrap();
        eprintln!(
            "time limit 1e-9 s: status {:?}, incumbent {}, bound {} (OPT {})",
            stopped.status, stopped.objective, stopped.upper_bound, opt.objective
        );
        if stopped.optimal {
            // Solved before the clock was read: nothing to see.
            assert!(close(stopped.objective, opt.objective));
            return;
        }
        assert!(stopped.status.is_limit(), "{:?}", stopped.status);
        assert!(stopped.upper_bound >= opt.objective - 1e-9);
        assert!(stopped.objective <= opt.objective + 1e-9);
        verify(&instance, &stopped.schedule).unwrap();
        let info = stopped.exact_info();
        assert!(!info.status.proves_optimality());
        assert_eq!(info.optimum(), None);
        assert!(stopped.ratio_bound_over(opt.objective) >= 1.0 - 1e-9);
    }
}

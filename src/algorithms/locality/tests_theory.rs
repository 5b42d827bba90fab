//! Unit tests of the locality scheduler against theory that read its
//! crate-private oracle and job model (moved from `tests/locality_theory.rs`
//! when the oracle's constructor, its per-deadline solve and the job model
//! became crate-private): admission of the first job at an empty cluster
//! (L10), the reduction to OASiS's per-job oracle (L5), and a case where LP
//! rounding once found no plan at small uniform prices.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use super::{InnerSolver, Locality, LocalityCluster, LocalityJob, LocalityOracle, LocalityParams};
use crate::algorithms::Algorithm;
use crate::algorithms::oasis::{OasisCluster, OasisJob, OasisOracle};
use crate::model::units::{gb, gbps, mb};
use crate::model::*;
use crate::online::{BoundsChoice, Decision, PriceView, PricingOracle, RejectReason};

/// Runs `f` on a thread and waits at most `secs` seconds for its answer:
/// a hang fails the case (as `tests/common`'s watchdog of the same name).
fn within<T: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: no answer within {secs} s (a hang)")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            let cause = handle
                .join()
                .err()
                .and_then(|e| {
                    e.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                })
                .unwrap_or_default();
            panic!("{what}: panicked: {cause}")
        }
    }
}

/// The watchdog of every case, in seconds.
const WATCHDOG_S: u64 = 60;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/locality_theory.txt",
        ))),
        ..ProptestConfig::default()
    }
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * a.abs().max(b.abs()).max(1.0)
}

/// One job of a tiny instance: arrival slot, `N`, `M`, `τ` (s), gradient
/// MB, worker and PS memory (GB), `f(0)`, utility slope as a fraction of
/// `f(0)`.
#[derive(Debug, Clone)]
struct TinyJob {
    arrival: u32,
    n: u32,
    m: u32,
    tau: f64,
    e_mb: f64,
    mem: (f64, f64),
    g1: f64,
    slope: f64,
}

fn tiny_job() -> impl Strategy<Value = TinyJob> {
    (
        0u32..3,
        1u32..5,
        20u32..200,
        0.1f64..1.0,
        1.0f64..200.0,
        (4.0f64..30.0, 4.0f64..30.0),
        10.0f64..200.0,
        prop::sample::select(vec![0.0, 0.1, 0.25, 0.5]),
    )
        .prop_map(|(arrival, n, m, tau, e_mb, mem, g1, slope)| TinyJob {
            arrival,
            n,
            m,
            tau,
            e_mb,
            mem,
            g1,
            slope,
        })
}

/// A tiny instance: machines `[4 GPU, 16 vCPU, 64 GB, nic]` with
/// `(intra-machine Gbit/s, role, NIC Gbit/s)`, jobs with worker
/// `[1, 2, mem_w, 1 Gbit/s]` and PS `[0, 2, mem_s, 2 Gbit/s]`, linear
/// utilities, 100-s slots.
fn tiny_instance(machines: &[(f64, u8, f64)], jobs: &[TinyJob], slots: u32) -> Instance {
    let ms = machines
        .iter()
        .enumerate()
        .map(|(i, &(b_int, role, nic))| {
            let hosts = match role {
                0 => Hosting::Workers,
                1 => Hosting::ParameterServers,
                _ => Hosting::Both,
            };
            let cap = Resources::zero()
                .gpus(4.0)
                .cpu_cores(16.0)
                .memory(gb(64.0))
                .nic(gbps(nic));
            Machine::new(MachineId(i as u32), cap, gbps(b_int)).hosting(hosts)
        })
        .collect();
    let js = jobs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            Job::new(
                JobId(i as u32),
                100.0 * f64::from(t.arrival.min(slots - 1)),
                PsJob {
                    epochs: 1,
                    data_chunks: t.n,
                    minibatches_per_chunk: t.m,
                    minibatch_compute_s: t.tau,
                    gradient_bytes: mb(t.e_mb),
                    worker: Resources::zero()
                        .gpus(1.0)
                        .cpu_cores(2.0)
                        .memory(gb(t.mem.0))
                        .nic(gbps(1.0)),
                    ps: Resources::zero()
                        .cpu_cores(2.0)
                        .memory(gb(t.mem.1))
                        .nic(gbps(2.0)),
                    max_workers: t.n,
                    max_ps: t.n,
                    ..PsJob::default()
                },
            )
            .with_utility(Utility::Linear {
                g1: t.g1,
                slope: t.g1 * t.slope,
            })
        })
        .collect();
    Instance::new(Cluster::new(ms), js, 100.0, slots).unwrap()
}

/// Machines of a tiny instance, some hosting workers and some PSs:
/// intra-machine bandwidth at least the workers' 1 Gbit/s (so `r^L ≥ r^D`).
fn tiny_machines(max: usize) -> impl Strategy<Value = Vec<(f64, u8, f64)>> {
    prop::collection::vec(
        (
            1.0f64..20.0,
            0u8..4,
            prop::sample::select(vec![5.0, 10.0, 1000.0]),
        ),
        1..=max,
    )
    .prop_filter("some machine hosts workers and some PSs", |m| {
        m.iter().any(|x| x.1 != 1) && m.iter().any(|x| x.1 != 0)
    })
}

fn exact_params() -> LocalityParams {
    LocalityParams {
        inner: InnerSolver::exact_mip(),
        ..LocalityParams::default()
    }
}

fn lp_round_params() -> LocalityParams {
    LocalityParams {
        seed: Some(5),
        ..LocalityParams::default()
    }
}

/// `params` with the price bounds of the η rule (derived from the job
/// list).
fn eta(params: LocalityParams) -> LocalityParams {
    let mut built = params;
    built.bounds = BoundsChoice::Eta;
    built
}

proptest! {
    #![proptest_config(config(48))]

    /// The first arriving job on the empty cluster, with η-rule bounds
    /// from the job list: when it is schedulable (a LOCAL or DISTRIBUTED
    /// witness plan on the empty cluster finishes in its window) and its
    /// latest utility is positive, it is admitted. The witness uses at
    /// most `W^D = ⌈Q/r^D⌉` worker-slots and as many PS-slots (`r^L ≥ r^D`
    /// here), so it consumes at most the normaliser `m`, and at the empty
    /// cluster every cell costs `L ≤ f(end − a)/(4ηm)`: with the exact
    /// oracle the payoff is at least `(1 − 1/(4η))·f(t̂_w − a) ≥
    /// f(t̂_w − a)·3/4` for the witness's completion slot `t̂_w`. LP
    /// rounding admits whenever it finds a plan (any plan costs at most
    /// `f(end − a)/4` at the empty cluster), but it may find none.
    #[test]
    fn l10_first_job_is_admitted_on_the_empty_cluster(
        machines in tiny_machines(3),
        jobs in prop::collection::vec(tiny_job(), 1..=3),
        slots in 1u32..=6,
        allow_local in prop::bool::weighted(0.8),
    ) {
        let inst = tiny_instance(&machines, &jobs, slots);
        within(WATCHDOG_S, "L10", move || -> Result<(), TestCaseError> {
            for base in [exact_params(), lp_round_params()] {
                let params = eta({ let mut built = base; built.allow_local = allow_local; built });
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                let (mut engine, ljobs) = match Locality::new(params.clone()).unwrap().engine(&inst, &mut rng) {
                    Ok(e) => e,
                    // No schedulable job with positive late utility.
                    Err(crate::Error::Online(_)) => return Ok(()),
                    Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
                };
                let first = &ljobs[0];
                let inputs = engine.oracle().bound_inputs(first, inst.horizon_slots()).unwrap();
                if !(inputs.schedulable && inputs.ln_u_min.is_finite()) {
                    continue;
                }
                // The witness: a simple plan on the empty cluster
                // (`schedulable` is only "not provably without a plan").
                let cl = engine.oracle().cluster().clone();
                let pace = first.empty_cluster_pace(&cl);
                if pace <= 0.0 {
                    continue;
                }
                let needed = (first.minibatches / pace - 1e-9).ceil().max(1.0) as u32;
                let t_w = first.arrival + needed - 1;
                if t_w > first.end {
                    continue;
                }
                let outcome = engine.step(first).unwrap();
                let payoff = match outcome.decision {
                    Decision::Admitted { payoff, .. } => payoff,
                    // LP rounding has no guarantee of finding a plan (the
                    // case `lp_rounding_finds_a_plan_at_small_uniform_prices`
                    // it once missed is fixed); any plan it finds has a
                    // positive payoff. When it misses at the prices but
                    // finds a plan at price 0, the engine reports that
                    // plan's payoff at the prices, capped at 0.
                    Decision::Rejected(
                        RejectReason::NoFeasiblePlan | RejectReason::NonPositivePayoff { .. },
                    ) if params.inner != InnerSolver::exact_mip() => continue,
                    ref other => {
                        return Err(TestCaseError::fail(format!("{:?}: first schedulable job rejected: {other:?}", params.inner)));
                    }
                };
                prop_assert!(payoff > 0.0);
                if params.inner == InnerSolver::exact_mip() {
                    let bound = 0.75 * first.utility_at(t_w);
                    prop_assert!(payoff >= bound * (1.0 - 1e-9), "payoff {payoff} < 3/4·f(t̂_w) = {bound}");
                }
            }
            Ok(())
        })?;
    }
}

// ---------------------------------------------------------------------------
// L5: the reduction to OASiS
// ---------------------------------------------------------------------------

/// Slot length of the reduction, s.
const L5_SLOT: f64 = 100.0;

/// One job on a split cluster (worker-only and PS-only machines; vCPU and
/// NIC used), with injected prices and residuals per machine and slot.
#[derive(Debug, Clone)]
struct SplitCase {
    /// `(vCPU, Gbit/s)` of the worker machines, then of the PS machines.
    workers: Vec<(f64, f64)>,
    ps: Vec<(f64, f64)>,
    horizon: u32,
    arrival: u32,
    /// `E`, `N`, `M` (`M` a power of two, so `r^D = M` exactly).
    e: u32,
    n: u32,
    m: u32,
    max_ps: u32,
    /// `b`, `B` in Gbit/s.
    b: f64,
    big_b: f64,
    /// Non-increasing utility table.
    utility: Vec<f64>,
    /// Price per unit of vCPU and of Gbit/s, per machine and slot.
    price: Vec<Vec<f64>>,
    /// Residual in units of the machine's task (worker or PS), per machine
    /// and slot.
    residual: Vec<Vec<u32>>,
}

fn split_case() -> impl Strategy<Value = SplitCase> {
    (
        1u32..=4,
        1usize..=2,
        1usize..=2,
        (
            1u32..=2,
            1u32..=3,
            prop::sample::select(vec![1u32, 2, 4, 8]),
        ),
        prop::sample::select(vec![(1.0, 1.0), (1.0, 2.0), (1.0, 3.0), (2.0, 3.0)]),
        prop::bool::weighted(0.2),
    )
        .prop_flat_map(|(t, h, k, (e, n, m), (b, big_b), cheap)| {
            let machines = h + k;
            // Utilities in [5, 40] exceed every unit price (≤ 1·(1 + 3))
            // unless `cheap` makes them small.
            let (lo, hi) = if cheap { (0.5, 4.0) } else { (5.0, 40.0) };
            (
                Just((t, h, k, e, n, m, b, big_b)),
                0..t,
                1u32..=n,
                prop::collection::vec(lo..hi, t as usize),
                prop::collection::vec(
                    prop::collection::vec(
                        prop::sample::select(vec![0.05, 0.1, 0.25, 0.5, 1.0]),
                        t as usize,
                    ),
                    machines,
                ),
                prop::collection::vec(prop::collection::vec(0u32..=5, t as usize), machines),
            )
        })
        .prop_map(
            |((t, h, k, e, n, m, b, big_b), arrival, max_ps, mut utility, price, residual): (
                _,
                _,
                _,
                Vec<f64>,
                _,
                _,
            )| {
                utility.sort_by(|a, b| b.total_cmp(a));
                SplitCase {
                    workers: vec![(4.0, 4.0 * b); h],
                    ps: vec![(4.0, 4.0 * big_b); k],
                    horizon: t,
                    arrival,
                    e,
                    n,
                    m,
                    max_ps,
                    b,
                    big_b,
                    utility,
                    price,
                    residual,
                }
            },
        )
}

impl SplitCase {
    /// The instance: worker demand `[0, 1 vCPU, 0, 0, b]`, PS demand
    /// `[0, 1 vCPU, 0, 0, B]`, no gradient traffic and `τ = Δ/M`, so
    /// `r^D = M` mini-batches per worker-slot (OASiS: `ω = 1/M` slots per
    /// mini-batch, `ρ = M·ω = 1` worker-slot per chunk).
    fn instance(&self) -> Instance {
        let server = |id: usize, (cpu, nic): (f64, f64), hosts| {
            Machine::new(
                MachineId(id as u32),
                Resources::zero().cpu_cores(cpu).nic(gbps(nic)),
                gbps(nic),
            )
            .hosting(hosts)
        };
        let h = self.workers.len();
        let machines = self
            .workers
            .iter()
            .enumerate()
            .map(|(i, &c)| server(i, c, Hosting::Workers))
            .chain(
                self.ps
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| server(h + i, c, Hosting::ParameterServers)),
            )
            .collect();
        let job = Job::new(
            JobId(0),
            f64::from(self.arrival) * L5_SLOT,
            PsJob {
                epochs: self.e,
                data_chunks: self.n,
                minibatches_per_chunk: self.m,
                minibatch_compute_s: L5_SLOT / f64::from(self.m),
                gradient_bytes: 0.0,
                worker: Resources::zero().cpu_cores(1.0).nic(gbps(self.b)),
                ps: Resources::zero().cpu_cores(1.0).nic(gbps(self.big_b)),
                max_workers: self.n,
                max_ps: self.max_ps,
                ..PsJob::default()
            },
        )
        .with_utility(Utility::Table {
            values: self.utility.clone(),
        });
        Instance::new(Cluster::new(machines), vec![job], L5_SLOT, self.horizon).unwrap()
    }

    /// The injected prices (vCPU and NIC) and residuals of slots
    /// `0..horizon`, the same on both sides.
    fn view(&self, horizon: u32) -> PriceView<'static> {
        let h = self.workers.len();
        let (price, residual) = (self.price.clone(), self.residual.clone());
        let (b, big_b) = (self.b, self.big_b);
        PriceView::from_explicit(
            h + self.ps.len(),
            5,
            horizon,
            move |m, r, t| match r.0 {
                1 | 4 => price[m.0 as usize][t as usize],
                _ => 0.0,
            },
            move |m, r, t| {
                let units = f64::from(residual[m.0 as usize][t as usize]);
                match r.0 {
                    1 => units,
                    4 => units * if (m.0 as usize) < h { b } else { big_b },
                    _ => 0.0,
                }
            },
        )
    }
}

/// Largest unit price of a task at the case's prices.
fn max_unit_price(case: &SplitCase) -> f64 {
    let h = case.workers.len();
    case.price
        .iter()
        .enumerate()
        .flat_map(|(m, p)| {
            let nic = if m < h { case.b } else { case.big_b };
            p.iter().map(move |p| p * (1.0 + nic))
        })
        .fold(0.0, f64::max)
}

proptest! {
    #![proptest_config(config(64))]

    /// The locality model on OASiS's split cluster with LOCAL disabled and
    /// `r^D = M` is OASiS's per-job problem: at the same injected prices and
    /// residuals, the locality oracle's exact minimum cost at every
    /// deadline `t̂` equals OASiS's `G_t̂(D)` (its forward DP's minimum cost
    /// to train all `D = E·N` chunks within `[a, t̂]`, read off as the cost
    /// of the best plan of the job with a constant utility over slots
    /// `0..=t̂`) whenever every unit price is at most `f(0)`, and is never
    /// below it otherwise (the locality program drops units priced above
    /// `f(0)`); the best payoffs are equal in every case.
    #[test]
    fn l5_reduction_to_oasis(case in split_case()) {
        let inst = case.instance();
        let cl = LocalityCluster::from_instance(&inst).unwrap();
        let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap().without_local();
        prop_assert!((lj.rate_dist - f64::from(case.m)).abs() < 1e-12);
        let ocl = OasisCluster::from_instance(&inst).unwrap();
        let oj = OasisJob::from_job(&inst, &inst.jobs()[0]).unwrap();
        prop_assert!((oj.rho - 1.0).abs() < 1e-12);
        let mut loc = LocalityOracle::new(cl, InnerSolver::exact_mip());
        let mut oasis = OasisOracle::new(ocl, false);
        let pruned = max_unit_price(&case) > case.utility[0];
        let constant = OasisJob { utility: Utility::Constant { value: 1e6 }, ..oj.clone() };
        for t in case.arrival..case.horizon {
            let d = loc.solve_deadline(&lj, &case.view(case.horizon), t).unwrap();
            prop_assert!(d.proven);
            let g = oasis.best_plan(&constant, &case.view(t + 1)).map(|(_, _, c)| c);
            match (d.plan.map(|p| p.1), g) {
                (Some(c), Some(g)) if pruned => prop_assert!(c >= g * (1.0 - 1e-7) - 1e-9, "t̂ {t}: {c} < G {g}"),
                (Some(c), Some(g)) => prop_assert!(close(c, g, 1e-7), "t̂ {t}: locality {c} vs G {g}"),
                (None, Some(_)) if pruned => {}
                (None, None) => {}
                other => prop_assert!(false, "t̂ {t}: {other:?}"),
            }
        }
        let view = case.view(case.horizon);
        let (best, _, proven) = loc.best_plan(&lj, &view).unwrap();
        prop_assert!(proven);
        let ours = best.map(|(_, u, c)| u - c);
        let theirs = oasis.best_plan(&oj, &view).map(|(_, u, c)| u - c);
        match (ours, theirs) {
            (Some(a), Some(b)) => prop_assert!(close(a, b, 1e-7), "payoff {a} vs {b}"),
            (None, None) => {}
            other => prop_assert!(false, "payoffs disagree: {other:?}"),
        }
    }
}

/// A case L10 found: one job (`Q = 386`, `N = 2`,
/// `r^L = r^D ≈ 96.3`, so deadline 2 needs 5 worker-slots over 3 slots) on
/// a machine hosting both roles (LOCAL fits only 1 worker beside the PS:
/// memory) and a worker-only machine (2 workers). The exact solver finds a
/// plan at deadline 2 (LOCAL 1, then DISTRIBUTED 2 and 2); at the same
/// uniform price per unit of every resource LP rounding used to find one at
/// 0.01 but none at 0.005 or below — every draw and the greedy fallback
/// failed — so on the empty cluster (η-rule prices ≈ 0.0047) the first job
/// was rejected with `NoFeasiblePlan`. The repair's whole-slot switches
/// (a LOCAL slot becomes a wider DISTRIBUTED one) find it now.
#[test]
fn lp_rounding_finds_a_plan_at_small_uniform_prices() {
    let machines = [(1.0, 2u8, 5.0), (1.0, 0u8, 5.0)];
    let jobs = [TinyJob {
        arrival: 0,
        n: 2,
        m: 193,
        tau: 0.8659492424488556,
        e_mb: 10.803479588200716,
        mem: (28.568048570934664, 8.996543806128946),
        g1: 10.0,
        slope: 0.0,
    }];
    let inst = tiny_instance(&machines, &jobs, 3);
    let cl = LocalityCluster::from_instance(&inst).unwrap();
    let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 64, None).unwrap();
    for price in [0.01, 0.005, 0.001] {
        let cap = cl.capacity.clone();
        let view = PriceView::from_explicit(
            2,
            5,
            3,
            move |_, _, _| price,
            move |m, r, _| cap[m.0 as usize][r.0 as usize],
        );
        for inner in [InnerSolver::exact_mip(), InnerSolver::lp_round()] {
            let mut oracle = LocalityOracle::new(cl.clone(), inner).with_seed(5);
            let d = oracle.solve_deadline(&lj, &view, 2).unwrap();
            assert!(
                d.plan.is_some(),
                "{inner:?} at price {price}: no plan ({:?})",
                d.rounding
            );
        }
    }
}

//! The reduction of the locality-aware model to OASiS's per-job problem
//! (L5 of the locality scheduler's theory tests): at the same injected
//! prices and residuals the locality oracle's exact costs and best payoff
//! match OASiS's forward DP. Moved here from `tests/locality_theory.rs`
//! when OASiS's job and cluster models and its oracle's own API became
//! crate-private.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use super::model::{OasisCluster, OasisJob};
use super::oracle::OasisOracle;
use crate::algorithms::locality::{InnerSolver, LocalityCluster, LocalityJob, LocalityOracle};
use crate::model::units::gbps;
use crate::model::*;
use crate::online::PriceView;

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

//! Unit tests of OASiS's Algorithm 2 on its own (the forward DP at
//! injected prices, hand-computed examples B and C, and property tests of
//! the forward DP against the paper's DP and exhaustive search), moved here
//! from `tests/oasis.rs` when the job and cluster models and the oracle's
//! own API became crate-private. The builders are those of the integration
//! tests.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use super::model::{OasisCluster, OasisJob};
use super::oracle::{OasisOracle, paper_best_response};
use super::tests_support::{SLOT, best_payoff, close, job, server, table};
use crate::model::*;
use crate::online::{PriceView, ResourceId};

const CPU: usize = 1;
const NIC: usize = 4;

// ---------------------------------------------------------------------------
// Builders (resources used: vCPU and NIC; the other three stay 0)
// ---------------------------------------------------------------------------

/// Worker servers `(cpu, nic)` first, then PS servers.
fn cluster(workers: &[(f64, f64)], ps: &[(f64, f64)]) -> Cluster {
    let mut machines = Vec::new();
    for &(c, n) in workers {
        machines.push(server(machines.len() as u32, c, n, Hosting::Workers));
    }
    for &(c, n) in ps {
        machines.push(server(
            machines.len() as u32,
            c,
            n,
            Hosting::ParameterServers,
        ));
    }
    Cluster::new(machines)
}

/// `cases` proptest cases, failures kept in `proptest-regressions/oasis.txt`.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/oasis.txt",
        ))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------
// Example B (hand-computed): Algorithm 2 alone with injected prices
// ---------------------------------------------------------------------------

/// Per-worker prices π = (1, 3, 0.5), per-PS σ = 1, full residuals.
fn example_b(
    f: &[f64],
    early_stop: bool,
) -> Option<(crate::algorithms::oasis::OasisPlan, f64, f64)> {
    let inst = Instance::new(
        cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]),
        vec![job(0, 0, (2, 2, 1), 1.0, (1.0, 1.0), (1.0, 2.0), table(f))],
        SLOT,
        3,
    )
    .unwrap();
    let cl = OasisCluster::from_instance(&inst).unwrap();
    let j = OasisJob::from_job(&inst, &inst.jobs()[0]).unwrap();
    let caps = [[0.0, 4.0, 0.0, 0.0, 4.0], [0.0, 4.0, 0.0, 0.0, 8.0]];
    let view = PriceView::from_explicit(
        2,
        5,
        3,
        |m, r, t| match (m.0, r.0 as usize) {
            (0, CPU | NIC) => [0.5, 1.5, 0.25][t as usize],
            (1, CPU) => 0.5,
            (1, NIC) => 0.25,
            _ => 1.0,
        },
        |m, r, _| caps[m.0 as usize][r.0 as usize],
    );
    let mut oracle = OasisOracle::new(cl.clone(), early_stop);
    let got = oracle.best_plan(&j, &view);
    // The paper's DP agrees.
    let paper = paper_best_response(&cl, &j, &view);
    match (&got, paper) {
        (Some((plan, u, c)), Some((payoff, t, cost))) => {
            assert!(close(u - c, payoff, 1e-12));
            assert_eq!(plan.slots.last().unwrap().slot, t);
            assert!(close(*c, cost, 1e-12));
        }
        (None, None) => {}
        other => panic!("forward DP and paper DP disagree: {other:?}"),
    }
    got
}

fn counts(plan: &crate::algorithms::oasis::OasisPlan, t_max: u32) -> (Vec<u32>, Vec<u32>) {
    let mut y = vec![0; t_max as usize];
    let mut z = vec![0; t_max as usize];
    for s in &plan.slots {
        y[s.slot as usize] = s.worker_count();
        z[s.slot as usize] = s.ps_count();
    }
    (y, z)
}

#[test]
fn example_b1_skips_the_expensive_slot() {
    for early in [true, false] {
        let (plan, u, c) = example_b(&[12.0, 10.5, 6.0], early).unwrap();
        assert_eq!(counts(&plan, 3), (vec![2, 0, 2], vec![1, 0, 1]));
        assert!(close(u, 6.0, 1e-12) && close(c, 5.0, 1e-12));
    }
}

#[test]
fn example_b2_prefers_the_earlier_deadline() {
    let (plan, u, c) = example_b(&[12.0, 10.5, 5.4], true).unwrap();
    assert_eq!(counts(&plan, 3), (vec![2, 2, 0], vec![1, 1, 0]));
    assert!(close(u - c, 0.5, 1e-12));
}

#[test]
fn example_b3_zero_payoff_is_no_plan() {
    assert!(example_b(&[12.0, 10.0, 5.0], true).is_none());
    assert!(example_b(&[12.0, 10.0, 5.0], false).is_none());
}

// ---------------------------------------------------------------------------
// Example C (hand-computed): tolerant rounding
// ---------------------------------------------------------------------------

#[test]
fn example_c_tolerant_rounding() {
    let inst = Instance::new(
        cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]),
        vec![job(
            0,
            0,
            (1, 10, 1),
            0.1 * 3.0,
            (1.0, 1.0),
            (1.0, 2.0),
            table(&[1.0]),
        )],
        SLOT,
        2,
    )
    .unwrap();
    let j = OasisJob::from_job(&inst, &inst.jobs()[0]).unwrap();
    assert_eq!(j.rho, 0.1 * 3.0);
    assert_eq!(j.workers_for(10), 3);
    assert_eq!(j.chunks_for(1), 3);
    assert_eq!(j.chunks_for(2), 6);
    let k = OasisJob { rho: 2.5, ..j };
    assert_eq!(k.workers_for(1), 3);
    assert_eq!(k.workers_for(2), 5);
    assert_eq!(k.chunks_for(6), 2);
}

// ---------------------------------------------------------------------------
// Forward DP = paper DP = brute force
// ---------------------------------------------------------------------------

/// A random single-job oracle input: cluster, job and explicit prices and
/// residuals.
#[derive(Debug, Clone)]
struct OracleCase {
    workers: Vec<(f64, f64)>,
    ps: Vec<(f64, f64)>,
    horizon: u32,
    arrival: u32,
    e: u32,
    n: u32,
    rho: f64,
    b: f64,
    big_b: f64,
    utility: Vec<f64>,
    /// price[m][t] of CPU and NIC (the same for both).
    price: Vec<Vec<f64>>,
    /// residual fraction numerators per machine and slot (units of demand).
    residual: Vec<Vec<u32>>,
}

fn oracle_case(max_t: u32, max_servers: usize) -> impl Strategy<Value = OracleCase> {
    (
        1..=max_t,
        1..=max_servers,
        1..=max_servers,
        1u32..=3,
        1u32..=4,
        prop::sample::select(vec![0.3, 0.5, 1.0, 1.5, 2.5]),
        prop::sample::select(vec![(1.0, 1.0), (1.0, 2.0), (1.0, 3.0), (2.0, 3.0)]),
    )
        .prop_flat_map(move |(t, h, k, e, n, rho, (b, big_b))| {
            let m = h + k;
            (
                Just((t, h, k, e, n.min(12 / e).max(1), rho, b, big_b)),
                0..t,
                prop::collection::vec(1.0f64..20.0, t as usize),
                prop::collection::vec(
                    prop::collection::vec(
                        prop::sample::select(vec![0.05, 0.1, 0.25, 0.5, 1.0]),
                        t as usize,
                    ),
                    m,
                ),
                prop::collection::vec(prop::collection::vec(0u32..=4, t as usize), m),
            )
        })
        .prop_map(
            |((t, h, k, e, n, rho, b, big_b), arrival, mut utility, price, residual)| {
                utility.sort_by(|a, b| b.total_cmp(a));
                OracleCase {
                    workers: vec![(4.0, 4.0 * b); h],
                    ps: vec![(4.0, 4.0 * big_b); k],
                    horizon: t,
                    arrival,
                    e,
                    n,
                    rho,
                    b,
                    big_b,
                    utility,
                    price,
                    residual,
                }
            },
        )
}

impl OracleCase {
    fn build(&self) -> (OasisCluster, OasisJob, Vec<Vec<f64>>, Vec<Vec<f64>>) {
        let inst = Instance::new(
            cluster(&self.workers, &self.ps),
            vec![job(
                0,
                self.arrival,
                (self.e, self.n, 1),
                self.rho,
                (1.0, self.b),
                (1.0, self.big_b),
                table(&self.utility),
            )],
            SLOT,
            self.horizon,
        )
        .unwrap();
        let cl = OasisCluster::from_instance(&inst).unwrap();
        let j = OasisJob::from_job(&inst, &inst.jobs()[0]).unwrap();
        let h = self.workers.len();
        // residual[m][t] in CPU units (NIC scaled by the demand).
        let res_cpu: Vec<Vec<f64>> = self
            .residual
            .iter()
            .map(|r| r.iter().map(|&u| f64::from(u)).collect())
            .collect();
        let res_nic: Vec<Vec<f64>> = self
            .residual
            .iter()
            .enumerate()
            .map(|(m, r)| {
                let d = if m < h { self.b } else { self.big_b };
                r.iter().map(|&u| f64::from(u) * d).collect()
            })
            .collect();
        (cl, j, res_cpu, res_nic)
    }

    fn view(&self, res_cpu: &[Vec<f64>], res_nic: &[Vec<f64>]) -> PriceView<'static> {
        let price = self.price.clone();
        let (rc, rn) = (res_cpu.to_vec(), res_nic.to_vec());
        PriceView::from_explicit(
            self.workers.len() + self.ps.len(),
            5,
            self.horizon,
            move |m, r, t| match r.0 as usize {
                CPU | NIC => price[m.0 as usize][t as usize],
                _ => 0.0,
            },
            move |m, r, t| match r.0 as usize {
                CPU => rc[m.0 as usize][t as usize],
                NIC => rn[m.0 as usize][t as usize],
                _ => 0.0,
            },
        )
    }
}

/// Exhaustive search: every per-server worker and PS count in every slot.
fn brute_force(
    case: &OracleCase,
    cl: &OasisCluster,
    j: &OasisJob,
    view: &PriceView<'_>,
) -> Option<f64> {
    let slots: Vec<u32> = (j.earliest..case.horizon).collect();
    // Per slot: min cost for each total worker count Y (with a feasible PS
    // choice), by enumerating every per-server vector.
    let mut per_slot: Vec<Vec<f64>> = Vec::new();
    for &t in &slots {
        let caps = |servers: &[u32], d: &[f64; 5]| -> Vec<(u32, f64)> {
            servers
                .iter()
                .map(|&m| {
                    let id = MachineId(m);
                    let cap =
                        OasisJob::units_fitting(d, |r| view.residual(id, ResourceId(r as u8), t));
                    let price: f64 = (0..5)
                        .map(|r| view.price(id, ResourceId(r as u8), t) * d[r])
                        .sum();
                    (cap, price)
                })
                .collect()
        };
        let wk = caps(&cl.worker_servers, &j.worker_demand);
        let pk = caps(&cl.ps_servers, &j.ps_demand);
        let enumerate = |list: &[(u32, f64)]| -> Vec<(u32, f64)> {
            let mut out = vec![(0u32, 0.0f64)];
            for &(cap, price) in list {
                let mut next = Vec::new();
                for &(n, c) in &out {
                    for k in 0..=cap {
                        next.push((n + k, c + price * f64::from(k)));
                    }
                }
                out = next;
            }
            out
        };
        let ws = enumerate(&wk);
        let zs = enumerate(&pk);
        let mut best = vec![f64::INFINITY; j.max_workers as usize + 1];
        for &(y, cy) in &ws {
            if y > j.max_workers {
                continue;
            }
            for &(z, cz) in &zs {
                let ok6 = f64::from(y) * j.worker_gbps <= f64::from(z) * j.ps_gbps + 1e-9;
                if ok6 && z <= y && z <= j.max_ps && cy + cz < best[y as usize] {
                    best[y as usize] = cy + cz;
                }
            }
        }
        per_slot.push(best);
    }
    best_payoff(j, &slots, &per_slot)
}

proptest! {
    #![proptest_config(config(64))]

    /// The forward DP equals the paper's DP (payoff to 1e-12,
    /// same deadline), with and without early stop.
    #[test]
    fn forward_dp_equals_paper_dp(case in oracle_case(5, 3)) {
        let (cl, j, rc, rn) = case.build();
        let view = case.view(&rc, &rn);
        let paper = paper_best_response(&cl, &j, &view);
        for early in [true, false] {
            let mut oracle = OasisOracle::new(cl.clone(), early);
            let got = oracle.best_plan(&j, &view);
            match (&got, paper) {
                (Some((plan, u, c)), Some((payoff, t, _))) => {
                    prop_assert!(close(u - c, payoff, 1e-12), "{} vs {payoff}", u - c);
                    prop_assert_eq!(plan.slots.last().unwrap().slot, t);
                    prop_assert!(plan.chunks() == j.total_chunks);
                    // The plan's cost recomputed from the view.
                    let recomputed = view.cost_of(crate::online::Reservation::consumption(plan));
                    prop_assert!(close(recomputed, *c, 1e-9));
                }
                (None, None) => {}
                other => prop_assert!(false, "disagree: {other:?}"),
            }
        }
    }

    /// Both equal exhaustive search on the smallest instances.
    #[test]
    fn forward_dp_equals_brute_force(case in oracle_case(3, 2)) {
        let (cl, j, rc, rn) = case.build();
        let view = case.view(&rc, &rn);
        let brute = brute_force(&case, &cl, &j, &view);
        let got = OasisOracle::new(cl.clone(), true).best_plan(&j, &view).map(|(_, u, c)| u - c);
        match (got, brute) {
            (Some(a), Some(b)) => prop_assert!(close(a, b, 1e-9), "{a} vs {b}"),
            (None, None) => {}
            other => prop_assert!(false, "disagree: {other:?}"),
        }
    }
}

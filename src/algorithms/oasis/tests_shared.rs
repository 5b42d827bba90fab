//! Unit tests of OASiS on machines that host workers and PSs that read its
//! crate-private model: the shared cluster's pools, the oracle against
//! exhaustive search on mixed clusters, and the exact MIP against
//! enumeration over every plan. Moved here from `tests/oasis_shared.rs`
//! when the job and cluster models and the oracle's own API became
//! crate-private; its builders and exhaustive search are in `tests_support`.

use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;

use super::model::{OasisCluster, OasisJob};
use super::oracle::OasisOracle;
use super::tests_support::{SLOT, best_payoff, close, job, server, table};
use super::{Oasis, OasisError, OasisParams, OasisReport};
use crate::algorithms::{Algorithm, Solved};
use crate::model::*;
use crate::online::{PriceView, Reservation, ResourceId};

const CPU: usize = 1;
const NIC: usize = 4;

fn solve(inst: &Instance, params: OasisParams) -> crate::Result<Solved<OasisReport>> {
    Oasis::new(params)?.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
}

/// `cases` proptest cases, failures kept in
/// `proptest-regressions/oasis_shared.txt`.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/oasis_shared.txt",
        ))),
        ..ProptestConfig::default()
    }
}

// ---------------------------------------------------------------------------

/// One shared server `(4 vCPU, 4 Gbit/s)`, two slots, three identical jobs:
/// `E = 1`, `N = 2`, `ω = 1` slot, worker `(1 vCPU, 1 Gbit/s)`, PS
/// `(1 vCPU, 2 Gbit/s)`, `f(0) = 10`, `f(1) = 4`.
///
/// By hand (one pool, `P = 1`): `U^cpu = max(10/1, 10/1) = 10`,
/// `U^nic = max(10/1, 10/2) = 10`; `W = 2`, `m_S = 2·((1 + 1) + (1 + 2)) =
/// 10`, `C_S = 4 + 4 = 8`, `η = 2·8/10 = 1.6`, `L = (4/10)/(4·1.6) =
/// 1/16`, so `ln(U/L) = ln 160`. Job 0 trains both chunks in slot 0 with 2
/// workers and `zreq(2) = 1` PS, all on the machine (`2 + 1 = 3` vCPU,
/// `2 + 2 = 4` Gbit/s): cost `2·2L + 3L = 7/16`, payoff `10 − 7/16`. The
/// NIC of slot 0 is then full, so job 1 runs in slot 1 (utility 4) and job 2
/// finds no room.
fn s1() -> Instance {
    let jobs = (0..3)
        .map(|i| {
            job(
                i,
                0,
                (1, 2, 1),
                1.0,
                (1.0, 1.0),
                (1.0, 2.0),
                table(&[10.0, 4.0]),
            )
        })
        .collect();
    Instance::new(
        Cluster::new(vec![server(0, 4.0, 4.0, Hosting::Both)]),
        jobs,
        SLOT,
        2,
    )
    .unwrap()
}

#[test]
fn s1_the_default_is_the_papers_split_model() {
    assert!(matches!(
        solve(&s1(), OasisParams::default()),
        Err(crate::Error::Oasis(OasisError::UnsupportedCluster { .. }))
    ));
    assert!(OasisCluster::from_instance(&s1()).is_err());
    let cl = OasisCluster::from_instance_with(&s1(), true).unwrap();
    assert_eq!(cl.shared_servers, vec![0]);
    assert!(cl.worker_servers.is_empty() && cl.ps_servers.is_empty());
    assert_eq!(cl.shared_pool(), Some(crate::online::PoolId(0)));
    assert_eq!((cl.worker_pool(), cl.ps_pool()), (None, None));
}

// ---------------------------------------------------------------------------
// The oracle against exhaustive search
// ---------------------------------------------------------------------------

/// A random single-job oracle input on a mixed cluster: the hosting of
/// every machine, the job, and explicit prices and residuals per machine,
/// resource (vCPU, NIC) and slot.
#[derive(Debug, Clone)]
struct OracleCase {
    hosts: Vec<Hosting>,
    horizon: u32,
    arrival: u32,
    e: u32,
    n: u32,
    rho: f64,
    b: f64,
    big_b: f64,
    utility: Vec<f64>,
    /// price[m][t] = (vCPU, NIC).
    price: Vec<Vec<(f64, f64)>>,
    /// residual[m][t] = (vCPU, NIC) in demand units.
    residual: Vec<Vec<(u32, u32)>>,
}

fn hosting() -> impl Strategy<Value = Hosting> {
    prop::sample::select(vec![
        Hosting::Workers,
        Hosting::ParameterServers,
        Hosting::Both,
    ])
}

fn oracle_case(max_t: u32) -> impl Strategy<Value = OracleCase> {
    (
        1..=max_t,
        prop::collection::vec(hosting(), 1..=3),
        1u32..=2,
        1u32..=3,
        prop::sample::select(vec![0.5, 0.5, 1.0, 1.5]),
        prop::sample::select(vec![(1.0, 1.0), (1.0, 2.0), (1.0, 3.0)]),
    )
        .prop_flat_map(move |(t, mut hosts, e, n, rho, (b, big_b))| {
            // A shared server always, so that the case is mixed.
            hosts[0] = Hosting::Both;
            let m = hosts.len();
            let cell = (
                prop::sample::select(vec![0.05, 0.2, 0.5, 1.0]),
                prop::sample::select(vec![0.05, 0.2, 0.5, 1.0]),
            );
            (
                Just((t, hosts, e, n, rho, b, big_b)),
                0..t,
                prop::collection::vec(5.0f64..40.0, t as usize),
                prop::collection::vec(prop::collection::vec(cell, t as usize), m),
                prop::collection::vec(
                    prop::collection::vec(
                        (prop::sample::select(vec![0u32, 1, 2, 3, 4, 4]), 1u32..=8),
                        t as usize,
                    ),
                    m,
                ),
            )
        })
        .prop_map(
            |((t, hosts, e, n, rho, b, big_b), arrival, mut utility, price, residual)| {
                utility.sort_by(|a, b| b.total_cmp(a));
                OracleCase {
                    hosts,
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
    fn build(&self) -> (OasisCluster, OasisJob) {
        let machines = self
            .hosts
            .iter()
            .enumerate()
            .map(|(m, &h)| server(m as u32, 4.0, 8.0, h))
            .collect();
        let inst = Instance::new(
            Cluster::new(machines),
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
        let cl = OasisCluster::from_instance_with(&inst, true).unwrap();
        let j = OasisJob::from_job(&inst, &inst.jobs()[0]).unwrap();
        (cl, j)
    }

    fn view(&self) -> PriceView<'static> {
        let (price, residual) = (self.price.clone(), self.residual.clone());
        PriceView::from_explicit(
            self.hosts.len(),
            5,
            self.horizon,
            move |m, r, t| {
                let (c, n) = price[m.0 as usize][t as usize];
                match r.0 as usize {
                    CPU => c,
                    NIC => n,
                    _ => 0.0,
                }
            },
            move |m, r, t| {
                let (c, n) = residual[m.0 as usize][t as usize];
                match r.0 as usize {
                    CPU => f64::from(c),
                    NIC => f64::from(n),
                    _ => 0.0,
                }
            },
        )
    }
}

/// Every `(tasks, cost)` a server can take in one slot, as
/// `(workers, PSs, cost)`: `k` tasks of the roles it hosts, jointly fitting
/// its residual.
fn server_choices(
    case: &OracleCase,
    view: &PriceView<'_>,
    m: usize,
    t: u32,
) -> Vec<(u32, u32, f64)> {
    let id = MachineId(m as u32);
    let res = |r: usize| view.residual(id, ResourceId(r as u8), t);
    let price = |r: usize| view.price(id, ResourceId(r as u8), t);
    let (w, s) = ([1.0, case.b], [1.0, case.big_b]);
    let (workers_ok, ps_ok) = match case.hosts[m] {
        Hosting::Workers => (true, false),
        Hosting::ParameterServers => (false, true),
        Hosting::Both => (true, true),
    };
    let mut out = Vec::new();
    for a in 0..=8u32 {
        for b in 0..=8u32 {
            if (a > 0 && !workers_ok) || (b > 0 && !ps_ok) {
                continue;
            }
            let fits = [CPU, NIC]
                .iter()
                .enumerate()
                .all(|(k, &r)| f64::from(a) * w[k] + f64::from(b) * s[k] <= res(r) + 1e-9);
            if fits {
                let cost = [CPU, NIC]
                    .iter()
                    .enumerate()
                    .map(|(k, &r)| price(r) * (f64::from(a) * w[k] + f64::from(b) * s[k]))
                    .sum();
                out.push((a, b, cost));
            }
        }
    }
    out
}

/// Exhaustive search: every per-server worker and PS count in every slot,
/// the best payoff of a plan that trains every chunk (strictly positive).
fn brute_force(case: &OracleCase, j: &OasisJob, view: &PriceView<'_>) -> Option<f64> {
    let slots: Vec<u32> = (j.earliest..case.horizon).collect();
    let mut per_slot: Vec<Vec<f64>> = Vec::new();
    for &t in &slots {
        // (y, z) → least cost, over every combination of server choices.
        let mut sums: Vec<(u32, u32, f64)> = vec![(0, 0, 0.0)];
        for m in 0..case.hosts.len() {
            let choices = server_choices(case, view, m, t);
            let mut next = Vec::new();
            for &(y, z, c) in &sums {
                for &(a, b, d) in &choices {
                    next.push((y + a, z + b, c + d));
                }
            }
            sums = next;
        }
        let mut best = vec![f64::INFINITY; j.max_workers as usize + 1];
        for &(y, z, c) in &sums {
            let ok6 = f64::from(y) * j.worker_gbps <= f64::from(z) * j.ps_gbps + 1e-9;
            if y <= j.max_workers && ok6 && z <= y && z <= j.max_ps && c < best[y as usize] {
                best[y as usize] = c;
            }
        }
        per_slot.push(best);
    }
    best_payoff(j, &slots, &per_slot)
}

proptest! {
    #![proptest_config(config(96))]

    /// The oracle's payoff equals exhaustive search on mixed clusters, and
    /// its plan fits every cell's residual with the workers' and PSs'
    /// demands added up, trains every chunk and pays the view's prices.
    #[test]
    fn oracle_equals_brute_force_on_mixed_clusters(case in oracle_case(3)) {
        let (cl, j) = case.build();
        let view = case.view();
        let brute = brute_force(&case, &j, &view);
        for early in [true, false] {
            let got = OasisOracle::new(cl.clone(), early).best_plan(&j, &view);
            match (&got, brute) {
                (Some((plan, u, c)), Some(b)) => {
                    prop_assert!(close(u - c, b, 1e-9), "{} vs {b}", u - c);
                    prop_assert_eq!(plan.chunks(), j.total_chunks);
                    let recomputed = view.cost_of(plan.consumption());
                    prop_assert!(close(recomputed, *c, 1e-9), "{recomputed} vs {c}");
                    let mut used = std::collections::BTreeMap::new();
                    for q in plan.consumption() {
                        *used.entry((q.machine.0, q.resource.0, q.slot)).or_insert(0.0) += q.amount;
                    }
                    for ((m, r, t), q) in used {
                        let res = view.residual(MachineId(m), ResourceId(r), t);
                        prop_assert!(q <= res * (1.0 + 1e-9) + 1e-12, "m{m} r{r} t{t}: {q} > {res}");
                    }
                    // zreq(y) = ⌈y·b/B⌉ PSs (b, B integers here).
                    let (b, big_b) = (case.b as u32, case.big_b as u32);
                    for s in &plan.slots {
                        let y = s.worker_count();
                        prop_assert_eq!(s.ps_count(), (y * b).div_ceil(big_b).min(y));
                    }
                }
                (None, None) => {}
                other => prop_assert!(false, "disagree: {other:?}"),
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The exact MIP against enumeration (feature `highs`)
// ---------------------------------------------------------------------------

#[cfg(feature = "highs")]
mod exact {
    use super::*;
    use crate::algorithms::oasis::{ExactOptions, offline_optimum};
    use crate::model::units::gbps;
    use crate::schedule::verify;

    /// The parameters with shared servers.
    fn shared_params() -> OasisParams {
        OasisParams {
            shared_machines: true,
            ..OasisParams::default()
        }
    }

    /// OASiS on a random instance; `None` when no bounds can be derived (no
    /// schedulable job with positive late utility, or no default value floor).
    /// Any other error, an oracle's plan the framework refuses included, fails.
    fn solve_or_skip(
        inst: &Instance,
        params: &OasisParams,
    ) -> Result<Option<Solved<OasisReport>>, TestCaseError> {
        use crate::online::OnlineError;
        match solve(inst, params.clone()) {
            Ok(s) => Ok(Some(s)),
            Err(crate::Error::Online(
                OnlineError::CannotDeriveBounds { .. } | OnlineError::ValueFloorTooLarge { .. },
            ))
            | Err(crate::Error::Oasis(OasisError::InvalidOption { .. })) => Ok(None),
            Err(e) => Err(TestCaseError::fail(format!("{e}"))),
        }
    }

    /// A tiny instance: a shared server and maybe one more server of any
    /// kind, one or two slots, two jobs with at most two workers.
    fn tiny() -> impl Strategy<Value = Instance> {
        (
            1u32..=2,
            (2u32..=3, 2u32..=5),
            prop::option::of((hosting(), 1u32..=2, 2u32..=4)),
            prop::collection::vec(
                (
                    0u32..2,
                    1u32..=2,
                    prop::sample::select(vec![0.5, 1.0]),
                    prop::sample::select(vec![1.0, 2.0]),
                    prop::collection::vec(1.0f64..10.0, 2),
                ),
                2,
            ),
        )
            .prop_filter_map(
                "every task fits some machine",
                |(t, (sc, sn), other, jobs)| {
                    let mut machines = vec![server(0, f64::from(sc), f64::from(sn), Hosting::Both)];
                    if let Some((h, c, n)) = other {
                        machines.push(server(1, f64::from(c), f64::from(n), h));
                    }
                    let mut js: Vec<Job> = jobs
                        .iter()
                        .enumerate()
                        .map(|(i, (a, n, rho, big_b, u))| {
                            let mut u = u.clone();
                            u.sort_by(|a, b| b.total_cmp(a));
                            job(
                                i as u32,
                                (*a).min(t - 1),
                                (1, *n, 1),
                                *rho,
                                (1.0, 1.0),
                                (1.0, *big_b),
                                table(&u),
                            )
                        })
                        .collect();
                    js.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
                    Instance::new(Cluster::new(machines), js, SLOT, t).ok()
                },
            )
    }

    /// Every plan of one job on the empty cluster with a positive utility:
    /// its use of every (slot, machine) cell as `(vCPU, Gbit/s)` and its
    /// utility (workers and PSs per server, `(6)`, `(7)`, the caps, whole
    /// chunks per slot).
    fn plans(inst: &Instance, j: &OasisJob) -> Vec<(Vec<[f64; 2]>, f64)> {
        let ms = &inst.cluster().machines;
        let t_len = inst.horizon_slots() as usize;
        let (w, s) = (
            [j.worker_demand[CPU], j.worker_demand[NIC]],
            [j.ps_demand[CPU], j.ps_demand[NIC]],
        );
        // Per slot: every (per-machine (a, b)) assignment allowed alone.
        let per_machine: Vec<Vec<(u32, u32)>> = ms
            .iter()
            .map(|m| {
                let cap = [m.capacity.cpu_cores, m.capacity.nic_bps / gbps(1.0)];
                let mut out = Vec::new();
                for a in 0..=j.max_workers {
                    for b in 0..=j.max_ps {
                        let role_ok = (a == 0 || m.hosts != Hosting::ParameterServers)
                            && (b == 0 || m.hosts != Hosting::Workers);
                        let fits = (0..2)
                            .all(|r| f64::from(a) * w[r] + f64::from(b) * s[r] <= cap[r] + 1e-9);
                        if role_ok && fits {
                            out.push((a, b));
                        }
                    }
                }
                out
            })
            .collect();
        let mut slot_configs: Vec<Vec<(u32, u32)>> = vec![Vec::new()];
        for choices in &per_machine {
            slot_configs = slot_configs
                .iter()
                .flat_map(|c| {
                    choices.iter().map(move |&ab| {
                        let mut c = c.clone();
                        c.push(ab);
                        c
                    })
                })
                .collect();
        }
        slot_configs.retain(|c| {
            let y: u32 = c.iter().map(|p| p.0).sum();
            let z: u32 = c.iter().map(|p| p.1).sum();
            y <= j.max_workers
                && z <= y
                && z <= j.max_ps
                && f64::from(y) * j.worker_gbps <= f64::from(z) * j.ps_gbps + 1e-9
        });
        // Every sequence of slot configurations from the job's first slot.
        let first = j.earliest as usize;
        let mut seqs: Vec<Vec<&Vec<(u32, u32)>>> = vec![Vec::new()];
        for _ in first..t_len {
            seqs = seqs
                .iter()
                .flat_map(|q| {
                    slot_configs.iter().map(move |c| {
                        let mut q = q.clone();
                        q.push(c);
                        q
                    })
                })
                .collect();
        }
        let mut out = Vec::new();
        for q in seqs {
            let ys: Vec<u32> = q.iter().map(|c| c.iter().map(|p| p.0).sum()).collect();
            let chunks: u64 = ys.iter().map(|&y| j.chunks_for(u64::from(y))).sum();
            let Some(last) = ys.iter().rposition(|&y| y > 0) else {
                continue;
            };
            let u = j.utility_at((first + last) as u32);
            if chunks < j.total_chunks || u <= 0.0 {
                continue;
            }
            let mut usage = vec![[0.0; 2]; t_len * ms.len()];
            for (k, c) in q.iter().enumerate() {
                for (m, &(a, b)) in c.iter().enumerate() {
                    let cell = &mut usage[(first + k) * ms.len() + m];
                    for (u, (wr, sr)) in cell.iter_mut().zip(w.iter().zip(&s)) {
                        *u += f64::from(a) * wr + f64::from(b) * sr;
                    }
                }
            }
            out.push((usage, u));
        }
        out
    }

    /// The optimum by enumeration over both jobs' plans (or none).
    fn brute_opt(inst: &Instance) -> f64 {
        let jobs: Vec<OasisJob> = inst
            .jobs()
            .iter()
            .map(|j| OasisJob::from_job(inst, j).unwrap())
            .collect();
        let caps: Vec<[f64; 2]> = inst
            .cluster()
            .machines
            .iter()
            .map(|m| [m.capacity.cpu_cores, m.capacity.nic_bps / gbps(1.0)])
            .collect();
        let (p0, p1) = (plans(inst, &jobs[0]), plans(inst, &jobs[1]));
        let mut best = p0.iter().chain(&p1).map(|p| p.1).fold(0.0_f64, f64::max);
        for (u0, f0) in &p0 {
            for (u1, f1) in &p1 {
                if f0 + f1 <= best {
                    continue;
                }
                let fits = u0.iter().zip(u1).enumerate().all(|(i, (a, b))| {
                    let cap = caps[i % caps.len()];
                    (0..2).all(|r| a[r] + b[r] <= cap[r] + 1e-9)
                });
                if fits {
                    best = f0 + f1;
                }
            }
        }
        best
    }

    proptest! {
        #![proptest_config(config(32))]

        /// The exact MIP's optimum equals enumeration on tiny instances
        /// with shared servers, and `ALG ≤ OPT ≤` the online certificate's
        /// bound.
        #[test]
        fn exact_mip_equals_enumeration(inst in tiny()) {
            let opt = offline_optimum(&inst, &ExactOptions::default()).unwrap();
            prop_assert!(opt.optimal);
            verify(&inst, &opt.schedule).unwrap();
            let brute = brute_opt(&inst);
            prop_assert!(close(opt.objective, brute, 1e-9), "MIP {} vs enumeration {brute}", opt.objective);
            let Some(solved) = solve_or_skip(&inst, &shared_params())? else { return Ok(()) };
            prop_assert!(solved.certificate.objective <= brute + 1e-9);
            prop_assert!(brute <= solved.certificate.relaxation_bound.value + 1e-9);
            let mut cert = solved.certificate.clone();
            cert.exact = Some(opt.exact_info());
            cert.check(1e-6).unwrap();
        }
    }
}

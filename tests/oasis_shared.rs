//! OASiS on machines that host workers and PSs
//! (`OasisParams::shared_machines`): hand-computed cases (one shared
//! machine; a cluster with all three kinds of server), property tests on
//! random mixed clusters, the split model unchanged, and the locality-aware
//! scheduler on machines hosting both roles. (The shared cluster's pools,
//! the oracle against exhaustive search and the exact MIP against
//! enumeration read OASiS's crate-private model: they are the unit tests
//! `algorithms::oasis::tests_shared`.)

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::Solved;
use dmlsched::algorithms::oasis::{Oasis, OasisError, OasisParams, OasisPolicy, OasisReport};
use dmlsched::model::units::gbps;
use dmlsched::model::*;
use dmlsched::online::{BoundsChoice, Decision, RejectReason, ResourceId};
use dmlsched::schedule::{Tasks, verify};
use dmlsched::sim::{PsTiming, SimOptions, simulate};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use rand::SeedableRng;

mod common;

const SLOT: f64 = 3600.0;
const CPU: usize = 1;
const NIC: usize = 4;

// ---------------------------------------------------------------------------
// Builders (resources used: vCPU and NIC; the other three stay 0)
// ---------------------------------------------------------------------------

fn server(id: u32, cpu: f64, nic_gbps: f64, hosts: Hosting) -> Machine {
    Machine::new(
        MachineId(id),
        Resources::zero().cpu_cores(cpu).nic(gbps(nic_gbps)),
        gbps(nic_gbps),
    )
    .hosting(hosts)
}

/// A job arriving at the start of 0-based slot `a` with `E, N, M`,
/// `ω = omega` slots (all compute), worker demand `(cpu, b)` and PS demand
/// `(cpu, B)`, at most `N` workers and PSs.
#[allow(clippy::too_many_arguments)]
fn job(
    id: u32,
    a: u32,
    (e, n, m): (u32, u32, u32),
    omega: f64,
    w: (f64, f64),
    s: (f64, f64),
    utility: Utility,
) -> Job {
    Job::new(
        JobId(id),
        f64::from(a) * SLOT,
        Architecture::ParameterServer(PsJob {
            epochs: e,
            data_chunks: n,
            minibatches_per_chunk: m,
            minibatch_compute_s: omega * SLOT,
            gradient_bytes: 0.0,
            worker: Resources::zero().cpu_cores(w.0).nic(gbps(w.1)),
            ps: Resources::zero().cpu_cores(s.0).nic(gbps(s.1)),
            max_workers: n,
            max_ps: n,
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        }),
    )
    .with_utility(utility)
}

fn table(v: &[f64]) -> Utility {
    Utility::Table { values: v.to_vec() }
}

fn shared_params() -> OasisParams {
    let mut built = OasisParams::default();
    built.shared_machines = true;
    built
}

fn solve(inst: &Instance, params: OasisParams) -> dmlsched::Result<Solved<OasisReport>> {
    Oasis::new(params)?.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
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

/// The tasks of `job` on `machine` in slot `t` of a schedule.
fn tasks_at(s: &dmlsched::schedule::Schedule, job: u32, machine: u32, t: u32) -> Tasks {
    s.job(JobId(job))
        .into_iter()
        .flat_map(|j| &j.segments)
        .filter(|seg| seg.slots.contains(&t))
        .flat_map(|seg| seg.placement.iter())
        .filter(|(m, _)| *m == MachineId(machine))
        .fold(Tasks::new(0, 0), |acc, (_, t)| {
            Tasks::new(acc.workers + t.workers, acc.ps + t.ps)
        })
}

// ---------------------------------------------------------------------------
// Hand case S1: one machine hosting both roles
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
fn s1_workers_and_ps_share_one_machine() {
    let inst = s1();
    let solved = solve(&inst, shared_params()).unwrap();
    let run = &solved.report.run;
    let utilities: Vec<f64> = run.outcomes.iter().map(|o| o.utility()).collect();
    assert_eq!(utilities, vec![10.0, 4.0, 0.0]);
    assert!(matches!(
        run.outcomes[2].decision,
        Decision::Rejected(RejectReason::NoFeasiblePlan)
    ));
    assert_eq!(solved.certificate.objective, 14.0);
    // Job 0: two workers and its PS on machine 0 in slot 0; job 1 in slot 1.
    assert_eq!(tasks_at(&solved.schedule, 0, 0, 0), Tasks::new(2, 1));
    assert_eq!(tasks_at(&solved.schedule, 1, 0, 1), Tasks::new(2, 1));
    verify(&inst, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
    // The bounds by hand: only the shared row of ln(U/L) exists.
    let ln = solved.report.ln_u_over_l;
    assert!(close(ln[2][CPU].unwrap(), 160f64.ln(), 1e-12));
    assert!(close(ln[2][NIC].unwrap(), 160f64.ln(), 1e-12));
    assert!(ln[0].iter().chain(&ln[1]).all(Option::is_none));
    assert!(close(run.alpha, 160f64.ln(), 1e-12));
    // The certificate says which model it covers.
    let scope = solved.certificate.scope.as_deref().unwrap();
    assert!(scope.contains("shared servers"), "{scope}");
    assert!(
        solved
            .certificate
            .guarantees
            .iter()
            .all(|g| g.source.contains("shared servers: crate"))
    );
}

#[test]
fn s1_consumption_adds_up_on_the_shared_cells() {
    let inst = s1();
    let (mut engine, jobs) = Oasis::new(shared_params()).unwrap().engine(&inst).unwrap();
    let outcome = engine.step(&jobs[0]).unwrap().clone();
    let Decision::Admitted {
        plan, cost, payoff, ..
    } = outcome.decision
    else {
        panic!("job 0 is admitted");
    };
    assert_eq!(plan.slots.len(), 1);
    assert_eq!(plan.slots[0].workers, vec![(0, 2)]);
    assert_eq!(plan.slots[0].ps, vec![(0, 1)]);
    assert!(close(cost, 7.0 / 16.0, 1e-12), "{cost}");
    assert!(close(payoff, 10.0 - 7.0 / 16.0, 1e-12));
    // Workers' plus PSs' demand: 2·1 + 1·1 vCPU, 2·1 + 1·2 Gbit/s.
    let (m, l) = (MachineId(0), engine.ledger());
    assert!(close(l.committed(m, ResourceId(CPU as u8), 0), 3.0, 1e-12));
    assert!(close(l.committed(m, ResourceId(NIC as u8), 0), 4.0, 1e-12));
    assert_eq!(l.committed(m, ResourceId(CPU as u8), 1), 0.0);
    // One price per cell, by its total fill: L·(U/L)^(g/c).
    let v = engine.view();
    let l_price = 1.0 / 16.0;
    assert!(close(v.price(m, ResourceId(NIC as u8), 0), 10.0, 1e-12));
    let cpu = l_price * 160f64.powf(0.75);
    assert!(close(v.price(m, ResourceId(CPU as u8), 0), cpu, 1e-12));
    assert!(close(v.price(m, ResourceId(CPU as u8), 1), l_price, 1e-12));
}

#[test]
fn s1_in_the_simulator_admitted_jobs_finish() {
    let inst = s1();
    let mut policy = OasisPolicy::new(&inst, &shared_params()).unwrap();
    let mut opts = SimOptions::default();
    opts.ps_timing = PsTiming::NoLocality;
    let result = simulate(&inst, &mut policy, &opts).unwrap();
    assert_eq!(policy.decisions().iter().filter(|d| d.admitted).count(), 2);
    assert_eq!(
        result.jobs.iter().filter(|j| j.finish_s.is_some()).count(),
        2
    );
}

/// Two shared servers `(2 vCPU, 2 Gbit/s)` and S1's jobs: a server holds
/// `(a, b)` with `a + b ≤ 2` and `a + 2b ≤ 2`, so two workers and their PS
/// fit only as `(2, 0)` on one server and `(0, 1)` on the other. By hand:
/// `C_S = 8`, `m_S = 10`, `η = 1.6`, `L = 1/16` as in S1, the slot costs
/// `7/16`; slot 0 is then full (every NIC), job 1 takes slot 1.
#[test]
fn s3_only_shared_servers_split_a_job_when_it_must() {
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
    let cluster = Cluster::new(vec![
        server(0, 2.0, 2.0, Hosting::Both),
        server(1, 2.0, 2.0, Hosting::Both),
    ]);
    let inst = Instance::new(cluster, jobs, SLOT, 2).unwrap();
    let solved = solve(&inst, shared_params()).unwrap();
    let run = &solved.report.run;
    let utilities: Vec<f64> = run.outcomes.iter().map(|o| o.utility()).collect();
    assert_eq!(utilities, vec![10.0, 4.0, 0.0]);
    let Decision::Admitted { cost, .. } = &run.outcomes[0].decision else {
        panic!("job 0 is admitted");
    };
    assert!(close(*cost, 7.0 / 16.0, 1e-12), "{cost}");
    for (j, t) in [(0, 0), (1, 1)] {
        let mut on: Vec<Tasks> = (0..2)
            .map(|m| tasks_at(&solved.schedule, j, m, t))
            .collect();
        on.sort_by_key(|x| (x.workers, x.ps));
        assert_eq!(on, vec![Tasks::new(0, 1), Tasks::new(2, 0)], "job {j}");
    }
    verify(&inst, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
}

// ---------------------------------------------------------------------------
// Hand case S2: worker-only, PS-only and shared servers
// ---------------------------------------------------------------------------

/// A worker server `(2 vCPU, 2 Gbit/s)`, a PS server `(1 vCPU, 2 Gbit/s)`
/// and a shared server `(3 vCPU, 4 Gbit/s)`; two slots; three identical jobs
/// with `E = 1`, `N = 4`, `ω = 1`, worker `(1, 1)`, PS `(1, 2)`,
/// `f(0) = 10`, `f(1) = 1`.
///
/// Four workers need `zreq(4) = 2` PSs. The worker server holds 2 workers,
/// the PS server 1 PS, and the shared server `(a, b)` with `a + b ≤ 3`,
/// `a + 2b ≤ 4`: the only placement of 4 workers and 2 PSs in one slot puts
/// 2 workers and 1 PS on the shared server. By hand (`P = 3`, divisor 6,
/// `W = 4`, `f(T − 1 − a) = 1`): `m_H = 8`, `m_K = 12`, `m_S = 20`;
/// `C_H = 4`, `C_K = 3`, `C_S = 7`; every `η = 1`; `L_H = 1/48`,
/// `L_K = 1/72`, `L_S = 1/120`; `U_H = (10, 10)`, `U_K = (10, 5)`,
/// `U_S = (10, 10)` for (vCPU, NIC). A job's slot costs
/// `2·2/48 + 3/72 + (2·2 + 3)/120 = 11/60` at the initial prices, and fills
/// every NIC of the slot: job 0 runs in slot 0 (10), job 1 in slot 1 (1),
/// job 2 finds no room. `OPT = 11`: each slot holds one job.
fn s2() -> Instance {
    let jobs = (0..3)
        .map(|i| {
            job(
                i,
                0,
                (1, 4, 1),
                1.0,
                (1.0, 1.0),
                (1.0, 2.0),
                table(&[10.0, 1.0]),
            )
        })
        .collect();
    let cluster = Cluster::new(vec![
        server(0, 2.0, 2.0, Hosting::Workers),
        server(1, 1.0, 2.0, Hosting::ParameterServers),
        server(2, 3.0, 4.0, Hosting::Both),
    ]);
    Instance::new(cluster, jobs, SLOT, 2).unwrap()
}

#[test]
fn s2_a_job_spans_all_three_pools() {
    let inst = s2();
    let solved = solve(&inst, shared_params()).unwrap();
    let run = &solved.report.run;
    let utilities: Vec<f64> = run.outcomes.iter().map(|o| o.utility()).collect();
    assert_eq!(utilities, vec![10.0, 1.0, 0.0]);
    let Decision::Admitted { plan, cost, .. } = &run.outcomes[0].decision else {
        panic!("job 0 is admitted");
    };
    assert!(close(*cost, 11.0 / 60.0, 1e-12), "{cost}");
    let mut workers = plan.slots[0].workers.clone();
    let mut ps = plan.slots[0].ps.clone();
    workers.sort_unstable();
    ps.sort_unstable();
    assert_eq!(workers, vec![(0, 2), (2, 2)]);
    assert_eq!(ps, vec![(1, 1), (2, 1)]);
    assert_eq!(tasks_at(&solved.schedule, 0, 2, 0), Tasks::new(2, 1));
    assert_eq!(tasks_at(&solved.schedule, 1, 2, 1), Tasks::new(2, 1));
    verify(&inst, &solved.schedule).unwrap();
    solved.certificate.check(1e-9).unwrap();
    // The bounds by hand, per kind of server.
    let ln = solved.report.ln_u_over_l;
    for (row, cpu, nic) in [
        (0, 480.0_f64, 480.0_f64),
        (1, 720.0, 360.0),
        (2, 1200.0, 1200.0),
    ] {
        assert!(close(ln[row][CPU].unwrap(), cpu.ln(), 1e-12), "row {row}");
        assert!(close(ln[row][NIC].unwrap(), nic.ln(), 1e-12), "row {row}");
    }
    assert!(close(run.alpha, 1200f64.ln(), 1e-12));
    // D_0 = T·Σ_κ L_κ·C_κ = 2·(4/48 + 3/72 + 7/120) = 11/30.
    assert!(close(run.dual_initial, 11.0 / 30.0, 1e-12));
    assert!(run.d0_condition_verified);
}

#[cfg(feature = "highs")]
#[test]
fn s2_the_exact_mip_shares_the_machine_too() {
    use dmlsched::algorithms::oasis::{ExactOptions, offline_optimum};
    let inst = s2();
    let opt = offline_optimum(&inst, &ExactOptions::default()).unwrap();
    assert!(opt.optimal);
    assert!(close(opt.objective, 11.0, 1e-9));
    verify(&inst, &opt.schedule).unwrap();
    // The online run reaches the optimum, inside its own bound.
    let solved = solve(&inst, shared_params()).unwrap();
    assert!(solved.certificate.objective <= opt.upper_bound + 1e-9);
    assert!(opt.objective <= solved.certificate.relaxation_bound.value + 1e-9);
}

// ---------------------------------------------------------------------------
// Random mixed clusters: feasible, certified, and the split model unchanged
// ---------------------------------------------------------------------------

fn hosting() -> impl Strategy<Value = Hosting> {
    prop::sample::select(vec![
        Hosting::Workers,
        Hosting::ParameterServers,
        Hosting::Both,
    ])
}

/// A cluster of 1–4 machines `(hosting, vCPU, Gbit/s)`.
fn machines(force_shared: bool) -> impl Strategy<Value = Vec<Machine>> {
    prop::collection::vec((hosting(), 2u32..=6, 2u32..=8), 1..=4).prop_map(move |ms| {
        let mut hosts: Vec<Hosting> = ms.iter().map(|m| m.0).collect();
        if force_shared {
            hosts[0] = Hosting::Both;
        } else {
            // The paper's split: worker servers first, then PS servers.
            let k = hosts.len().div_ceil(2);
            for (i, h) in hosts.iter_mut().enumerate() {
                *h = if i < k {
                    Hosting::Workers
                } else {
                    Hosting::ParameterServers
                };
            }
            if hosts.len() == 1 {
                hosts.push(Hosting::ParameterServers);
            }
        }
        hosts
            .iter()
            .enumerate()
            .map(|(i, &h)| {
                let (c, n) = ms.get(i).map_or((4, 8), |m| (m.1, m.2));
                server(i as u32, f64::from(c), f64::from(n), h)
            })
            .collect()
    })
}

/// Random parameter-server jobs on `cluster` over `2..=5` slots.
fn instance_on(cluster: impl Strategy<Value = Vec<Machine>>) -> impl Strategy<Value = Instance> {
    (
        2u32..=5,
        cluster,
        prop::collection::vec(
            (
                0u32..4,
                1u32..=3,
                1u32..=4,
                prop::sample::select(vec![0.3, 0.5, 1.0, 1.5]),
                1u32..=2,
                prop::sample::select(vec![1.0, 2.0, 3.0]),
                1.0f64..30.0,
                0.0f64..1.0,
                1u32..4,
            ),
            1..=6,
        ),
    )
        .prop_filter_map("every task fits some machine", |(t, machines, jobs)| {
            let mut js: Vec<Job> = jobs
                .iter()
                .enumerate()
                .map(|(i, &(a, e, n, rho, cpu, big_b, g1, g2, g3))| {
                    job(
                        i as u32,
                        a.min(t - 1),
                        (e, n, 1),
                        rho,
                        (f64::from(cpu), 1.0),
                        (1.0, big_b),
                        Utility::Sigmoid {
                            g1,
                            g2,
                            g3: f64::from(g3),
                        },
                    )
                })
                .collect();
            js.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            Instance::new(Cluster::new(machines), js, SLOT, t).ok()
        })
}

fn bounds_for(floor: bool) -> BoundsChoice {
    if floor {
        BoundsChoice::ValueFloor { v_floor: None }
    } else {
        BoundsChoice::Eta
    }
}

/// OASiS on a random instance; `None` when no bounds can be derived (no
/// schedulable job with positive late utility, or no default value floor).
/// Any other error, an oracle's plan the framework refuses included, fails.
fn solve_or_skip(
    inst: &Instance,
    params: &OasisParams,
) -> Result<Option<Solved<OasisReport>>, TestCaseError> {
    use dmlsched::online::OnlineError;
    match solve(inst, params.clone()) {
        Ok(s) => Ok(Some(s)),
        Err(dmlsched::Error::Online(
            OnlineError::CannotDeriveBounds { .. } | OnlineError::ValueFloorTooLarge { .. },
        ))
        | Err(dmlsched::Error::Oasis(OasisError::InvalidOption { .. })) => Ok(None),
        Err(e) => Err(TestCaseError::fail(format!("{e}"))),
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// On random mixed clusters: `verify` accepts the schedule, the
    /// certificate checks, the framework's invariants hold, prices never
    /// fall and no cell is over capacity decision by decision, the run is
    /// deterministic, and the simulator replays it.
    #[test]
    fn mixed_clusters_are_feasible_and_certified(
        inst in instance_on(machines(true)),
        floor in any::<bool>(),
    ) {
        let mut params = shared_params();
        params.bounds = bounds_for(floor);
        let Some(solved) = solve_or_skip(&inst, &params)? else { return Ok(()) };
        verify(&inst, &solved.schedule).unwrap();
        solved.certificate.check(1e-9).unwrap();
        let run = &solved.report.run;
        common::check_run_invariants(run)?;
        prop_assert!(run.dual_end_valid);
        prop_assert!(solved.certificate.scope.as_deref().unwrap().contains("shared servers"));
        let again = solve(&inst, params.clone()).unwrap();
        prop_assert_eq!(&again.schedule, &solved.schedule);

        let (mut engine, jobs) = Oasis::new(params.clone()).unwrap().engine(&inst).unwrap();
        common::step_checking_prices_and_capacity(&mut engine, &jobs)?;

        let mut policy = OasisPolicy::new(&inst, &params).unwrap();
        let mut opts = SimOptions::default();
        opts.ps_timing = PsTiming::NoLocality;
        let result = simulate(&inst, &mut policy, &opts).unwrap();
        let sim_utility: f64 = result.jobs.iter().map(|j| j.utility).sum();
        prop_assert!(sim_utility + 1e-9 >= run.total_utility, "{sim_utility} < {}", run.total_utility);
    }

    /// On split clusters `shared_machines` changes nothing, bit for bit:
    /// schedule, certificate and the framework's report.
    #[test]
    fn split_clusters_are_unchanged(
        inst in instance_on(machines(false)),
        floor in any::<bool>(),
    ) {
        let mut paper = OasisParams::default();
        paper.bounds = bounds_for(floor);
        let Some(a) = solve_or_skip(&inst, &paper)? else { return Ok(()) };
        let b = solve(&inst, { let mut built = paper; built.shared_machines = true; built }).unwrap();
        prop_assert_eq!(&a.schedule, &b.schedule);
        let (mut ca, mut cb) = (a.certificate.clone(), b.certificate.clone());
        ca.run.stage_seconds.clear();
        cb.run.stage_seconds.clear();
        prop_assert_eq!(ca, cb);
        prop_assert_eq!(&a.report.run, &b.report.run);
        prop_assert_eq!(a.report.ln_u_over_l, b.report.ln_u_over_l);
        prop_assert!(a.report.ln_u_over_l[2].iter().all(Option::is_none));
    }
}

#[cfg(feature = "serde")]
#[test]
fn shared_machines_reads_from_json() {
    let p: OasisParams = serde_json::from_str(r#"{"shared_machines": true}"#).unwrap();
    assert_eq!(p, shared_params());
    p.validate().unwrap();
    let d: OasisParams = serde_json::from_str("{}").unwrap();
    assert!(!d.shared_machines);
}

// ---------------------------------------------------------------------------
// The locality-aware scheduler on machines hosting both roles
// ---------------------------------------------------------------------------

/// The locality-aware scheduler has one pool of all machines and lets a
/// machine that hosts both roles hold a job's workers and its PS (LOCAL or
/// DISTRIBUTED): on a cluster with a shared, a worker-only and a PS-only
/// machine its schedules pass both checkers and its certificate checks, and
/// some job runs workers and PS together on the shared machine.
#[cfg(feature = "highs")]
#[test]
fn locality_places_workers_and_ps_on_a_shared_machine() {
    use dmlsched::algorithms::locality::{Locality, LocalityParams, verify_locality};
    let machines = vec![
        common::l1_machine(0, 4.0, Hosting::Both),
        common::l1_machine(1, 4.0, Hosting::Workers),
        common::l1_machine(2, 4.0, Hosting::ParameterServers),
    ];
    let jobs = (0..4)
        .map(|i| {
            common::l1_job(i, 100.0 * f64::from(i / 2), 8.0, 8.0).with_utility(Utility::Linear {
                g1: 100.0,
                slope: 10.0,
            })
        })
        .collect();
    let inst = Instance::new(Cluster::new(machines), jobs, 100.0, 6).unwrap();
    for bounds in [
        BoundsChoice::Eta,
        BoundsChoice::ValueFloor { v_floor: None },
    ] {
        let mut params = LocalityParams::default();
        params.bounds = bounds;
        let solved = Locality::new(params.clone())
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(1)))
            .unwrap();
        verify(&inst, &solved.schedule).unwrap();
        verify_locality(&inst, &params, &solved.schedule).unwrap();
        solved.certificate.check(1e-9).unwrap();
        let together = solved
            .schedule
            .jobs
            .iter()
            .flat_map(|j| &j.segments)
            .flat_map(|seg| seg.placement.iter())
            .any(|(m, t)| *m == MachineId(0) && t.workers > 0 && t.ps > 0);
        assert!(together, "no job ran workers and PS on the shared machine");
        // No task of the wrong role on the dedicated machines.
        for seg in solved.schedule.jobs.iter().flat_map(|j| &j.segments) {
            for (m, t) in seg.placement.iter() {
                assert!(*m != MachineId(1) || t.ps == 0);
                assert!(*m != MachineId(2) || t.workers == 0);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// The command line: a replay whose oasis parameters share machines
// ---------------------------------------------------------------------------

/// By default (and with `"shared_machines": true` in oasis's parameters)
/// `dmlsched replay` adds no PS-only machines: OASiS runs on the GPU
/// machines, which host both roles, and earns utility there. With
/// `"shared_machines": false` (the paper's model) it adds one PS-only
/// machine per GPU machine.
#[cfg(feature = "cli")]
#[test]
fn replay_with_shared_machines_adds_no_ps_only_machines() {
    let dir = std::env::temp_dir().join(format!("dmlsched-oasis-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // 30 Philly-format jobs, one every 10 minutes, of 1, 2 or 4 GPUs.
    let mut csv = String::from("timestamp,duration,num_gpus,gpu_time,cluster\n");
    for i in 0..30 {
        let (h, m) = (i / 6, (i % 6) * 10);
        let duration = 1200 + 600 * (i % 10);
        let gpus = [1, 2, 4][i % 3];
        csv.push_str(&format!(
            "2017-10-09 {h:02}:{m:02}:00,{duration}.0,{gpus},{}.0,abc\n",
            duration * gpus
        ));
    }
    let trace = dir.join("philly.csv");
    std::fs::write(&trace, csv).unwrap();
    let run_with = |params: Option<&str>| {
        let mut args = vec![
            "replay".to_string(),
            trace.to_str().unwrap().to_string(),
            "--jobs".into(),
            "30".into(),
            "--gpus".into(),
            "16".into(),
            "--policies".into(),
            "fifo,oasis".into(),
        ];
        if let Some(text) = params {
            let file = dir.join("oasis.json");
            std::fs::write(&file, text).unwrap();
            args.push("--params".into());
            args.push(format!("oasis={}", file.display()));
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        common::dmlsched_within(300.0, &args)
            .ok("replay")
            .to_string()
    };
    for params in [None, Some(r#"{"shared_machines": true}"#)] {
        let stdout = run_with(params);
        let header = stdout.lines().next().unwrap();
        assert!(!header.contains("PS-only"), "{params:?}: {header}");
        assert!(header.contains("parameter-server recipe"), "{header}");
        let oasis = stdout
            .lines()
            .find(|l| l.starts_with("oasis "))
            .unwrap_or_else(|| panic!("no oasis row: {stdout}"));
        let done: u32 = oasis.split_whitespace().nth(3).unwrap().parse().unwrap();
        assert!(done > 0, "{oasis}");
    }
    let paper = run_with(Some(r#"{"shared_machines": false, "u_scale": 1.0}"#));
    let header = paper.lines().next().unwrap();
    assert!(header.contains("+ 2 PS-only machines"), "{header}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// S1 with a fourth job of `E·N = 2²⁸` chunk-trainings: its exact chunk
/// program would need `2·(2²⁸ + 1)` DP cells, beyond the supported 2²⁸.
/// `solve` refuses it with the typed error; the simulator rejects that job
/// alone, with the reason, and decides the others as on S1.
#[test]
fn s1_with_a_job_beyond_the_chunk_program_size_rejects_that_job_only() {
    let base = s1();
    let mut jobs = base.jobs().to_vec();
    jobs.push(job(
        3,
        0,
        (1 << 27, 2, 1),
        1.0,
        (1.0, 1.0),
        (1.0, 2.0),
        table(&[10.0, 4.0]),
    ));
    let inst = Instance::new(base.cluster().clone(), jobs, SLOT, 2).unwrap();
    match solve(&inst, shared_params()) {
        Err(dmlsched::Error::Oasis(OasisError::JobTooLarge {
            job, cells, limit, ..
        })) => {
            assert_eq!(job, JobId(3));
            assert_eq!(cells, 2 * ((1u64 << 28) + 1));
            assert_eq!(limit, 1 << 28);
        }
        other => panic!("expected JobTooLarge, got {other:?}"),
    }
    let mut policy = OasisPolicy::new(&inst, &shared_params()).unwrap();
    let mut opts = SimOptions::default();
    opts.ps_timing = PsTiming::NoLocality;
    let result = simulate(&inst, &mut policy, &opts).unwrap();
    let big = policy
        .decisions()
        .iter()
        .find(|d| d.job == JobId(3))
        .expect("job 3 is decided");
    assert!(!big.admitted);
    let why = big.rejection.as_ref().expect("a reason").to_string();
    assert!(why.contains("DP cells") && why.contains("job 3"), "{why}");
    assert_eq!(policy.decisions().iter().filter(|d| d.admitted).count(), 2);
    assert_eq!(
        result.jobs.iter().filter(|j| j.finish_s.is_some()).count(),
        2
    );
}

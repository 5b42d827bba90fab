//! OASiS: the hand-computed examples A–E, the forward DP against the
//! paper's DP and brute force (property tests), and the
//! framework invariants on random instances.

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::oasis::{
    Oasis, OasisCluster, OasisError, OasisJob, OasisOracle, OasisParams, OasisPolicy,
    paper_best_response,
};
use dmlsched::model::units::gbps;
use dmlsched::model::*;
use dmlsched::online::{BoundsChoice, Decision, PriceView, RejectReason, ResourceId};
use dmlsched::schedule::verify;
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

fn table(v: &[f64]) -> Utility {
    Utility::Table { values: v.to_vec() }
}

/// Example A's instance (plus `extra` jobs).
fn example_a(extra: Vec<Job>) -> Instance {
    let mut jobs: Vec<Job> = (0..5)
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
    jobs.extend(extra);
    Instance::new(cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]), jobs, SLOT, 2).unwrap()
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

// ---------------------------------------------------------------------------
// Example A (hand-computed): the end-to-end known answer
// ---------------------------------------------------------------------------

fn run_a(
    early_stop: bool,
) -> dmlsched::algorithms::Solved<dmlsched::algorithms::oasis::OasisReport> {
    let mut params = OasisParams::default();
    params.early_stop = early_stop;
    Oasis::new(params)
        .and_then(|a| {
            a.solve(
                &example_a(vec![]),
                &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
            )
        })
        .unwrap()
}

#[test]
fn example_a_decisions_constants_and_certificate() {
    let solved = run_a(true);
    let run = &solved.report.run;
    let payoffs: Vec<Option<f64>> = run
        .outcomes
        .iter()
        .map(|o| match &o.decision {
            Decision::Admitted { payoff, .. } => Some(*payoff),
            Decision::Rejected(_) => None,
        })
        .collect();
    let expected = [9.625, 6.397911, 3.625, 0.397911];
    for (k, e) in expected.iter().enumerate() {
        let p = payoffs[k].expect("admitted");
        assert!((p - e).abs() < 1e-6, "job {k}: payoff {p}, expected {e}");
    }
    assert_eq!(payoffs[4], None);
    assert!(matches!(
        run.outcomes[4].decision,
        Decision::Rejected(RejectReason::NoFeasiblePlan)
    ));
    // Completion slots: jobs 1, 2 in slot 0; jobs 3, 4 in slot 1.
    let done: Vec<u32> = run
        .outcomes
        .iter()
        .filter_map(|o| match &o.decision {
            Decision::Admitted { plan, .. } => plan.slots.last().map(|s| s.slot),
            Decision::Rejected(_) => None,
        })
        .collect();
    assert_eq!(done, vec![0, 0, 1, 1]);
    assert_eq!(run.total_utility, 28.0);
    assert!(close(run.alpha, 240f64.ln(), 1e-12));
    assert!(close(2.0 * run.alpha, 10.961278, 1e-6));
    assert!(close(run.dual_initial, 2.0, 1e-12));
    assert!(
        close(run.dual_running, 192.512766, 1e-6),
        "{}",
        run.dual_running
    );
    assert!(close(run.alpha_eff, 23.298221, 1e-6), "{}", run.alpha_eff);
    assert!(run.total_utility >= (run.dual_running - run.dual_initial) / run.alpha_eff);
    // D_end bounds OPT = 28 and is valid.
    assert!(run.dual_end_valid);
    assert!(run.dual_end.unwrap() >= 28.0 - 1e-9);
    // α_eff ≫ α: demands are not small, so the plain 2α is not claimed.
    assert!(!run.assumption_small_demands);
    let paper = solved
        .certificate
        .guarantees
        .iter()
        .find(|g| {
            g.ratio_bound
                .is_some_and(|r| close(r, 2.0 * run.alpha, 1e-12))
        })
        .expect("the 2α guarantee is kept");
    assert!(!paper.valid);
    solved.certificate.check(1e-9).unwrap();
    verify(&example_a(vec![]), &solved.schedule).unwrap();
    // U and L (hand-computed for Example A): ln(U/L) for the PS CPU is ln 240.
    let ln = solved.report.ln_u_over_l;
    assert!(close(ln[1][CPU].unwrap(), 240f64.ln(), 1e-12));
    assert!(close(ln[0][CPU].unwrap(), 160f64.ln(), 1e-12));
    assert!(close(ln[1][NIC].unwrap(), 120f64.ln(), 1e-12));
}

#[test]
fn example_a_slot_prices_after_job_one() {
    // Re-run job 1 alone through the framework and read the slot-0 prices.
    let inst = example_a(vec![]);
    let (mut engine, jobs) = Oasis::new(OasisParams::default())
        .unwrap()
        .engine(&inst)
        .unwrap();
    engine.step(&jobs[0]).unwrap();
    let v = engine.view();
    let p = |m: u32, r: usize| v.price(MachineId(m), ResourceId(r as u8), 0);
    assert!(close(p(0, CPU), 0.790569, 1e-6));
    assert!(close(p(0, NIC), 0.790569, 1e-6));
    assert!(close(p(1, CPU), 0.163999, 1e-5));
    assert!(close(p(1, NIC), 0.137906, 1e-5));
    engine.step(&jobs[1]).unwrap();
    let v = engine.view();
    let p = |m: u32, r: usize| v.price(MachineId(m), ResourceId(r as u8), 0);
    assert!(close(p(0, CPU), 10.0, 1e-12));
    assert!(close(p(1, CPU), 0.645497, 1e-6));
    assert!(close(p(1, NIC), 0.456435, 1e-6));
}

#[test]
fn example_a_without_early_stop_decides_identically() {
    let a = run_a(true);
    let b = run_a(false);
    assert_eq!(a.schedule, b.schedule);
    assert_eq!(a.report.run.outcomes, b.report.run.outcomes);
}

#[test]
fn example_a_in_the_simulator_completes_the_admitted_jobs() {
    let inst = example_a(vec![]);
    let mut policy = OasisPolicy::new(&inst, &OasisParams::default()).unwrap();
    let mut opts = SimOptions::default();
    opts.ps_timing = PsTiming::NoLocality;
    let result = simulate(&inst, &mut policy, &opts).unwrap();
    assert_eq!(policy.session().snapshot().alg, 28.0);
    let utility: f64 = result.jobs.iter().map(|j| j.utility).sum();
    assert!(close(utility, 28.0, 1e-12), "{utility}");
    verify(&inst, &result.to_schedule(&inst)).unwrap();
}

// ---------------------------------------------------------------------------
// Example B (hand-computed): Algorithm 2 alone with injected prices
// ---------------------------------------------------------------------------

/// Per-worker prices π = (1, 3, 0.5), per-PS σ = 1, full residuals.
fn example_b(
    f: &[f64],
    early_stop: bool,
) -> Option<(dmlsched::algorithms::oasis::OasisPlan, f64, f64)> {
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

fn counts(plan: &dmlsched::algorithms::oasis::OasisPlan, t_max: u32) -> (Vec<u32>, Vec<u32>) {
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
// Example D (hand-computed): the PS server limits the worker count
// ---------------------------------------------------------------------------

/// Per-slot worker and PS counts of a plan.
type Counts = (Vec<u32>, Vec<u32>);

fn example_d(s: (f64, f64)) -> Result<Option<Counts>, dmlsched::Error> {
    let inst = Instance::new(
        cluster(&[(4.0, 4.0)], &[(4.0, 2.0)]),
        vec![job(
            0,
            0,
            (1, 4, 1),
            1.0,
            (1.0, 1.0),
            s,
            table(&[10.0, 4.0]),
        )],
        SLOT,
        2,
    )?;
    let solved = Oasis::default().solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))?;
    Ok(match &solved.report.run.outcomes[0].decision {
        Decision::Admitted { plan, .. } => Some(counts(plan, 2)),
        Decision::Rejected(_) => None,
    })
}

#[test]
fn example_d_ps_bandwidth_limits_workers() {
    assert_eq!(
        example_d((1.0, 2.0)).unwrap(),
        Some((vec![2, 2], vec![1, 1]))
    );
    // B = b: every worker needs its own PS; capP = min(4, 2) = 2.
    assert_eq!(
        example_d((1.0, 1.0)).unwrap(),
        Some((vec![2, 2], vec![2, 2]))
    );
    // B < b: rejected as outside the model (the paper's constraints (6) and
    // (7) are infeasible together when the PS bandwidth is below the worker's).
    let err = example_d((1.0, 0.5)).unwrap_err();
    assert!(
        matches!(
            err,
            dmlsched::Error::Oasis(OasisError::UnsupportedJob { .. })
        ),
        "{err}"
    );
}

// ---------------------------------------------------------------------------
// Example E (hand-computed): an unschedulable job
// ---------------------------------------------------------------------------

#[test]
fn example_e_unschedulable_job_is_rejected_and_ignored_by_the_bounds() {
    let sixth = job(
        5,
        1,
        (2, 2, 1),
        1.0,
        (1.0, 1.0),
        (1.0, 2.0),
        table(&[10.0, 4.0]),
    );
    let with = Oasis::default()
        .solve(
            &example_a(vec![sixth]),
            &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
    let without = run_a(true);
    let run = &with.report.run;
    assert!(matches!(
        run.outcomes[5].decision,
        Decision::Rejected(RejectReason::Unschedulable)
    ));
    assert_eq!(run.alpha, without.report.run.alpha);
    assert_eq!(run.dual_initial, without.report.run.dual_initial);
    assert_eq!(run.outcomes[..5], without.report.run.outcomes[..]);
    with.certificate.check(1e-9).unwrap();
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

#[test]
fn clusters_and_jobs_outside_the_model_are_errors() {
    // A machine hosting both kinds.
    let mut c = cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]);
    c.machines[0].hosts = Hosting::Both;
    let inst = Instance::new(
        c,
        vec![job(
            0,
            0,
            (1, 2, 1),
            1.0,
            (1.0, 1.0),
            (1.0, 2.0),
            table(&[1.0]),
        )],
        SLOT,
        2,
    )
    .unwrap();
    assert!(matches!(
        Oasis::default().solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::Oasis(
            OasisError::UnsupportedCluster { .. }
        ))
    ));
    // A rigid job.
    let rigid = job(0, 0, (1, 2, 1), 1.0, (1.0, 1.0), (1.0, 2.0), table(&[1.0]))
        .with_discipline(Discipline::RIGID_GANG);
    let inst = Instance::new(cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]), vec![rigid], SLOT, 2).unwrap();
    assert!(matches!(
        Oasis::default().solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::Oasis(OasisError::UnsupportedJob { .. }))
    ));
    // A job whose DP would not fit in memory is refused up front.
    let huge = job(
        0,
        0,
        (1_000_000, 1_000, 1),
        1.0,
        (1.0, 1.0),
        (1.0, 2.0),
        table(&[1.0]),
    );
    let inst = Instance::new(cluster(&[(4.0, 4.0)], &[(4.0, 8.0)]), vec![huge], SLOT, 2).unwrap();
    assert!(matches!(
        Oasis::default().solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)),
        Err(dmlsched::Error::Oasis(OasisError::JobTooLarge { .. }))
    ));
    // A bad u_scale.
    let mut params = OasisParams::default();
    params.u_scale = -1.0;
    assert!(
        Oasis::new(params)
            .and_then(|a| a.solve(
                &example_a(vec![]),
                &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)
            ))
            .is_err()
    );
}

#[test]
fn value_floor_bounds_run_and_certify() {
    let mut params = OasisParams::default();
    params.bounds = BoundsChoice::ValueFloor { v_floor: None };
    let solved = Oasis::new(params)
        .and_then(|a| {
            a.solve(
                &example_a(vec![]),
                &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
            )
        })
        .unwrap();
    let v = solved.report.v_floor.unwrap();
    // max(1e-3·median f(δ_min), min f(T − 1 − a)) = max(0.01, 4) = 4.
    assert_eq!(v, 4.0);
    assert!(solved.report.run.d0_condition_verified);
    solved.certificate.check(1e-9).unwrap();
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
    // Every combination of per-slot worker totals.
    let mut best: Option<f64> = None;
    let choices = j.max_workers as usize + 1;
    let combos = choices.pow(slots.len() as u32);
    for mut code in 0..combos {
        let (mut cost, mut chunks, mut last) = (0.0, 0u64, None);
        for (k, &t) in slots.iter().enumerate() {
            let y = code % choices;
            code /= choices;
            cost += per_slot[k][y];
            chunks += j.chunks_for(y as u64);
            if y > 0 {
                last = Some(t);
            }
        }
        if let Some(t) = last
            && cost.is_finite()
            && chunks >= j.total_chunks
        {
            let payoff = j.utility_at(t) - cost;
            if payoff > 0.0 && best.is_none_or(|b| payoff > b) {
                best = Some(payoff);
            }
        }
    }
    best
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
                    let recomputed = view.cost_of(dmlsched::online::Reservation::consumption(plan));
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

// ---------------------------------------------------------------------------
// Framework invariants on random instances (property tests)
// ---------------------------------------------------------------------------

fn random_instance() -> impl Strategy<Value = Instance> {
    (
        2u32..=6,
        prop::collection::vec((2u32..=6, 2u32..=6), 1..=3),
        prop::collection::vec((2u32..=6, 4u32..=12), 1..=3),
        prop::collection::vec(
            (
                0u32..4,
                1u32..=3,
                1u32..=4,
                prop::sample::select(vec![0.3, 0.5, 1.0, 1.5]),
                1u32..=2,
                1.0f64..30.0,
                0.0f64..1.0,
                1u32..4,
            ),
            1..=6,
        ),
    )
        .prop_map(|(t, ws, ps, jobs)| {
            let workers: Vec<(f64, f64)> = ws
                .iter()
                .map(|&(c, n)| (f64::from(c), f64::from(n)))
                .collect();
            let pss: Vec<(f64, f64)> = ps
                .iter()
                .map(|&(c, n)| (f64::from(c), f64::from(n)))
                .collect();
            let mut js: Vec<Job> = jobs
                .iter()
                .enumerate()
                .map(|(i, &(a, e, n, rho, cpu, g1, g2, g3))| {
                    job(
                        i as u32,
                        a.min(t - 1),
                        (e, n, 1),
                        rho,
                        (f64::from(cpu), 1.0),
                        (1.0, 2.0),
                        Utility::Sigmoid {
                            g1,
                            g2,
                            g3: f64::from(g3),
                        },
                    )
                })
                .collect();
            js.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s));
            Instance::new(cluster(&workers, &pss), js, SLOT, t).unwrap()
        })
}

/// The default parameters under the η rule or the default value floor.
fn params_for(floor: bool) -> OasisParams {
    let mut built_ = OasisParams::default();
    built_.bounds = if floor {
        BoundsChoice::ValueFloor { v_floor: None }
    } else {
        BoundsChoice::Eta
    };
    built_
}

/// OASiS on a random instance; `None` when no bounds can be derived (no
/// schedulable job with positive late utility).
fn solve_or_skip(
    inst: &Instance,
    params: &OasisParams,
) -> Result<
    Option<dmlsched::algorithms::Solved<dmlsched::algorithms::oasis::OasisReport>>,
    TestCaseError,
> {
    match Oasis::new(params.clone())?.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)) {
        Ok(s) => Ok(Some(s)),
        Err(dmlsched::Error::Online(_))
        | Err(dmlsched::Error::Oasis(OasisError::InvalidOption { .. })) => Ok(None),
        Err(e) => Err(TestCaseError::fail(format!("{e}"))),
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// Reservations never exceed capacity (`verify` passes), prices never
    /// fall, `ALG ≥ (D − D_0)/α_eff`, `D_end ≥ ALG`, the certificate checks,
    /// the run is deterministic, and the simulator replays it.
    #[test]
    fn oasis_runs_are_feasible_and_certified(inst in random_instance(), floor in any::<bool>()) {
        let params = params_for(floor);
        let Some(solved) = solve_or_skip(&inst, &params)? else { return Ok(()) };
        verify(&inst, &solved.schedule).unwrap();
        let run = &solved.report.run;
        common::check_run_invariants(run)?;
        prop_assert!(run.dual_end_valid);
        prop_assert!(run.dual_end.is_some());
        solved.certificate.check(1e-9).unwrap();
        let again = Oasis::new(params.clone()).and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))).unwrap();
        prop_assert_eq!(&again.schedule, &solved.schedule);

        // Prices never fall and no cell is over capacity, decision by
        // decision.
        let (mut engine, jobs) = Oasis::new(params.clone()).unwrap().engine(&inst).unwrap();
        let admitted = common::step_checking_prices_and_capacity(&mut engine, &jobs)?;
        // First-job admission: a schedulable job (a chunk-model plan exists)
        // with positive late utility is admitted on the empty cluster (η
        // rule).
        if !floor && let Some(j) = jobs.first() {
            let inputs = dmlsched::online::PricingOracle::bound_inputs(engine.oracle(), j, inst.horizon_slots()).unwrap();
            if inputs.schedulable && inputs.ln_u_min.is_finite() {
                prop_assert!(admitted[0], "first schedulable job rejected on the empty cluster");
            }
        }

        // The simulator replays the plans: admitted jobs finish by their
        // completion slots, with at least their planned utility.
        let mut policy = OasisPolicy::new(&inst, &params).unwrap();
        let mut opts = SimOptions::default();
        opts.ps_timing = PsTiming::NoLocality;
        let result = simulate(&inst, &mut policy, &opts).unwrap();
        let sim_utility: f64 = result.jobs.iter().map(|j| j.utility).sum();
        // A job that finished before its plan's end released the rest, and
        // later jobs were decided on more room than the offline run had:
        // the decisions may differ (the session says so). Otherwise they
        // are the offline run's.
        let snapshot = policy.session().snapshot();
        if !snapshot.guarantee_lost.iter().any(|w| w.contains("released")) {
            prop_assert!(close(snapshot.alg, run.total_utility, 1e-12));
            prop_assert!(sim_utility + 1e-9 >= run.total_utility, "{sim_utility} < {}", run.total_utility);
        }
    }
}

// ---------------------------------------------------------------------------
// Against the exact chunk-model optimum (the model Algorithm 2 searches;
// feature `highs`)
// ---------------------------------------------------------------------------

#[cfg(feature = "highs")]
mod exact {
    use super::*;
    use dmlsched::algorithms::oasis::{ExactOptions, offline_optimum};

    proptest! {
        #![proptest_config(config(32))]

        /// `ALG ≤ OPT ≤ D_end` (weak duality for the chunk model), and the
        /// certificate with the optimum attached still checks: the crate's
        /// `2α_eff` is checked against `OPT` whenever it is valid.
        #[test]
        fn online_exact_dual_sandwich(inst in random_instance(), floor in any::<bool>()) {
            let opt = offline_optimum(&inst, &ExactOptions::default()).unwrap();
            prop_assert!(opt.optimal);
            verify(&inst, &opt.schedule).unwrap();
            let Some(solved) = solve_or_skip(&inst, &params_for(floor))? else { return Ok(()) };
            let run = &solved.report.run;
            prop_assert!(run.total_utility <= opt.objective + 1e-6, "ALG {} > OPT {}", run.total_utility, opt.objective);
            prop_assert!(opt.objective <= run.dual_end.unwrap() + 1e-6, "OPT {} > D_end {:?}", opt.objective, run.dual_end);
            prop_assert!(opt.objective <= run.trivial_bound + 1e-6);
            let mut cert = solved.certificate.clone();
            cert.exact = Some(opt.exact_info());
            cert.check(1e-6).unwrap();
        }
    }

    /// HiGHS's MIP presolve once reported 0.859 as optimal (dual bound
    /// 0.859) on this instance, whose optimum is `f_0(1) + 0.5 = 1.1409`
    /// (job 0 on two workers in slots 0–1, job 1 on two in slot 2), the
    /// schedule OASiS itself finds. A proptest found it; the exact solve now
    /// runs without presolve.
    #[test]
    fn presolve_regression() {
        let f0 = Utility::Sigmoid {
            g1: 1.0,
            g2: 0.5791307141043194,
            g3: 2.0,
        };
        let inst = Instance::new(
            cluster(&[(5.0, 2.0)], &[(2.0, 4.0), (2.0, 4.0)]),
            vec![
                job(0, 0, (2, 2, 1), 1.0, (1.0, 1.0), (1.0, 2.0), f0.clone()),
                job(
                    1,
                    1,
                    (1, 3, 1),
                    0.5,
                    (1.0, 1.0),
                    (1.0, 2.0),
                    Utility::Constant { value: 0.5 },
                ),
            ],
            SLOT,
            4,
        )
        .unwrap();
        let expected = f0.value(1) + 0.5;
        let opt = offline_optimum(&inst, &ExactOptions::default()).unwrap();
        assert!(opt.optimal);
        assert!(
            close(opt.objective, expected, 1e-9),
            "OPT {}",
            opt.objective
        );
        assert_eq!(
            opt.completion,
            vec![(JobId(0), Some(1)), (JobId(1), Some(2))]
        );
        let alg = Oasis::default()
            .solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
            .unwrap();
        assert!(close(alg.report.run.total_utility, expected, 1e-9));
    }

    /// The plain `2α` is claimed only under small demands (`α_eff ≤ 1.5·α`). A
    /// purpose-built family of many jobs, each tiny against the servers,
    /// makes the assumption hold; the paper's `OPT ≤ 2α·ALG` is then valid,
    /// and `check()` tests it against the exact optimum.
    #[test]
    fn small_demand_family_claims_and_meets_two_alpha() {
        let mut checked = 0;
        for seed in 0..6u32 {
            let workers = [(64.0, 64.0), (64.0, 64.0)];
            let ps = [(64.0, 128.0)];
            let jobs: Vec<Job> = (0..6)
                .map(|i| {
                    let a = (i + seed) % 3;
                    let g1 = 5.0 + f64::from((i * 7 + seed * 3) % 11);
                    job(
                        i,
                        a,
                        (1, 2, 1),
                        1.0,
                        (1.0, 1.0),
                        (1.0, 2.0),
                        Utility::Sigmoid {
                            g1,
                            g2: 0.5,
                            g3: 1.0 + f64::from(i % 3),
                        },
                    )
                })
                .collect();
            let inst = Instance::new(cluster(&workers, &ps), jobs, SLOT, 4).unwrap();
            let solved = Oasis::default()
                .solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))
                .unwrap();
            let run = &solved.report.run;
            assert!(
                run.assumption_small_demands,
                "α_eff {} vs α {}",
                run.alpha_eff, run.alpha
            );
            let two_alpha = solved
                .certificate
                .guarantees
                .iter()
                .find(|g| {
                    g.ratio_bound
                        .is_some_and(|r| close(r, 2.0 * run.alpha, 1e-12))
                })
                .unwrap();
            assert!(two_alpha.valid, "{:?}", two_alpha.reasons);
            let opt = offline_optimum(&inst, &ExactOptions::default()).unwrap();
            assert!(opt.optimal);
            assert!(opt.objective <= 2.0 * run.alpha * run.total_utility + 1e-9);
            let mut cert = solved.certificate.clone();
            cert.exact = Some(opt.exact_info());
            cert.check(1e-9).unwrap();
            checked += 1;
        }
        assert_eq!(checked, 6);
    }
}

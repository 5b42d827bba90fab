//! Rounding quality of the locality oracle's LP rounding (experiment
//! L-E5): LP rounding against the exact MIP on random small single-job
//! LOC-SUB programs, each at one deadline.
//!
//! Case `k` is drawn from a `ChaCha8Rng` seeded with
//! `seed_base + (k << 8) + a`, `a = 0, 1, …` until a draw has a deadline
//! whose LP relaxation is feasible:
//!
//! * `H ∈ {2, 3, 4}` machines of the default set-up's size `[8 GPU,
//!   64 vCPU, 512 GB, 25 Gbit/s]`, hosting both roles; `Δ = 1800 s`; the
//!   window is the whole horizon of 2–6 slots; `κ = 10`;
//! * one job drawn from the default workload's ranges: a model of the
//!   table, `N ~ U{2..16}` (also the worker and PS caps), worker
//!   `[1, U{2..8}, U[8, 32], b ~ U[1, 5]]`, PS `[0, U{2..8}, U[8, 32],
//!   B ~ U[5, 20]]`, `M ~ U{100..500}`; the epochs are scaled to the
//!   window (not drawn from `U{20..100}`, which needs tens of slots):
//!   `E = max(1, round(φ·W·N·r^D/(N·M)))` with `φ ~ U[0.2, 1]` and `W` the
//!   window length, so the job's work is `φ` times what `N` DISTRIBUTED
//!   workers do over the window;
//! * residuals `ĉ = c·U[0.2, 1]` per machine, resource and slot, and unit
//!   prices `p = μ^{1 − ĉ/c}·U[0.5, 1.5]/c` (`μ = 50`): random, higher on
//!   fuller cells, comparable across resources;
//! * the deadline drawn uniformly among the window's slots whose LP
//!   relaxation is feasible.
//!
//! [`measure`] solves every case with the exact MIP and with each rounding
//! variant, checks `LB ≤ OPT_MIP ≤ cost` wherever both find a plan
//! (relative tolerance 10⁻⁷) and that rounding never finds a plan the MIP
//! proves impossible, and tallies `cost/LB`, `cost/OPT_MIP`, fallbacks and
//! misses (no plan from rounding where the MIP found one). Cases the MIP
//! does not prove optimal within its limit are skipped and counted.

use std::fmt;
use std::time::Instant;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::algorithms::locality::{
    DEFAULT_LAMBDAS, InnerSolver, LocalityCluster, LocalityJob, LocalityOracle, RESOURCES, sub,
};
use crate::model::units::{gb, gbps, mb};
use crate::model::{
    Cluster, Instance, Job, JobId, Machine, MachineId, PsJob, Resources, SyncMode, Utility,
};
use crate::online::{PriceView, ResourceId};
use crate::pcip::{PcError, PcProblem, solve_lp};

use crate::trace::catalog::OPTIMUS_MODELS as MODELS;

/// Stream base of the recorded L-E5 measurement.
pub const DEFAULT_SEED_BASE: u64 = 0x1E5_0000;
/// Relative tolerance of the sandwich `LB ≤ OPT_MIP ≤ cost`.
pub const SANDWICH_TOL: f64 = 1e-7;
/// The default locality set-up's machine size and the ranges of its
/// parameter-server jobs that a case draws from (the module docs list them).
struct SetUp {
    machine_gpus: f64,
    machine_vcpus: f64,
    machine_memory_gb: f64,
    machine_nic_gbps: f64,
    slot_length_s: f64,
    intra_factor: f64,
    chunks: (u32, u32),
    minibatches: (u32, u32),
    worker_gpus: f64,
    vcpus: (u32, u32),
    memory_gb: (f64, f64),
    worker_gbps: (f64, f64),
    ps_gbps: (f64, f64),
}

/// The set-up: machines `[8 GPU, 64 vCPU, 512 GB, 25 Gbit/s]`, 1800 s
/// slots, `κ = 10`, and the default workload's job ranges.
const SET_UP: SetUp = SetUp {
    machine_gpus: 8.0,
    machine_vcpus: 64.0,
    machine_memory_gb: 512.0,
    machine_nic_gbps: 25.0,
    slot_length_s: 1800.0,
    intra_factor: 10.0,
    chunks: (2, 16),
    minibatches: (100, 500),
    worker_gpus: 1.0,
    vcpus: (2, 8),
    memory_gb: (8.0, 32.0),
    worker_gbps: (1.0, 5.0),
    ps_gbps: (5.0, 20.0),
};

/// Draws of one case tried before giving up on it (`a < 256`).
const MAX_REDRAWS: u64 = 256;

/// One program: the job, the cluster, the prices and the deadline.
pub(crate) struct RoundingCase {
    /// The cluster (`H` machines).
    pub(crate) cluster: LocalityCluster,
    /// The job, its window the whole horizon.
    pub(crate) job: LocalityJob,
    /// Random prices and residuals.
    pub(crate) view: PriceView<'static>,
    /// The deadline (0-based slot) with a feasible LP relaxation.
    pub(crate) deadline: u32,
}

/// A uniform draw on `[lo, hi]`.
fn real(rng: &mut ChaCha8Rng, (lo, hi): (f64, f64)) -> f64 {
    rng.random_range(lo..=hi)
}

/// A uniform draw on `{lo, …, hi}`.
fn int(rng: &mut ChaCha8Rng, (lo, hi): (u32, u32)) -> u32 {
    rng.random_range(lo..=hi)
}

/// The one-job instance of a case: `h` machines, `slots` slots.
fn case_instance(rng: &mut ChaCha8Rng, h: usize, slots: u32) -> crate::Result<Instance> {
    let w = &SET_UP;
    let cap = Resources::zero()
        .gpus(w.machine_gpus)
        .cpu_cores(w.machine_vcpus)
        .memory(gb(w.machine_memory_gb))
        .nic(gbps(w.machine_nic_gbps));
    let machines = (0..h)
        .map(|i| {
            Machine::new(
                MachineId(i as u32),
                cap,
                gbps(w.machine_nic_gbps * w.intra_factor),
            )
        })
        .collect();
    let model = MODELS[rng.random_range(0..MODELS.len())];
    let n = int(rng, w.chunks);
    let m = int(rng, w.minibatches);
    let b = real(rng, w.worker_gbps);
    let big_b = real(rng, w.ps_gbps).max(b);
    let mut ps = PsJob {
        epochs: 1,
        data_chunks: n,
        minibatches_per_chunk: m,
        minibatch_compute_s: model.compute_s,
        gradient_bytes: mb(model.size_mb),
        worker: Resources::zero()
            .gpus(w.worker_gpus)
            .cpu_cores(f64::from(int(rng, w.vcpus)))
            .memory(gb(real(rng, w.memory_gb)))
            .nic(gbps(b)),
        ps: Resources::zero()
            .cpu_cores(f64::from(int(rng, w.vcpus)))
            .memory(gb(real(rng, w.memory_gb)))
            .nic(gbps(big_b)),
        max_workers: n,
        max_ps: n,
        ps_at_most_workers: true,
        sync: SyncMode::Asynchronous,
        layers: None,
    };
    let rate_dist = w.slot_length_s / ps.minibatch_time_s();
    let phi = real(rng, (0.2, 1.0));
    let work = phi * f64::from(slots) * f64::from(n) * rate_dist;
    ps.epochs = ((work / f64::from(n * m)).round() as u32).max(1);
    let job = Job::new(JobId(0), 0.0, ps).with_utility(Utility::Constant { value: 1e6 });
    Ok(Instance::new(
        Cluster::new(machines),
        vec![job],
        w.slot_length_s,
        slots,
    )?)
}

/// Random prices and residuals over `h` machines and `slots` slots.
fn case_view(rng: &mut ChaCha8Rng, h: usize, slots: u32) -> PriceView<'static> {
    let w = &SET_UP;
    let cap_vec = [
        w.machine_gpus,
        w.machine_vcpus,
        w.machine_memory_gb,
        0.0,
        w.machine_nic_gbps,
    ];
    let cells = h * slots as usize * RESOURCES;
    let fill: Vec<f64> = (0..cells).map(|_| rng.random_range(0.2..=1.0)).collect();
    let noise: Vec<f64> = (0..cells).map(|_| rng.random_range(0.5..=1.5)).collect();
    let s = slots as usize;
    let at = move |mm: MachineId, r: ResourceId, t: u32| {
        (mm.0 as usize * s + t as usize) * RESOURCES + usize::from(r.0)
    };
    let fill2 = fill.clone();
    PriceView::from_explicit(
        h,
        RESOURCES,
        slots,
        move |mm, r, t| {
            let c = cap_vec[usize::from(r.0)].max(1.0);
            50f64.powf(1.0 - fill[at(mm, r, t)]) * noise[at(mm, r, t)] / c
        },
        move |mm, r, t| cap_vec[usize::from(r.0)] * fill2[at(mm, r, t)],
    )
}

/// LOC-SUB of `job` on `oracle`'s cluster under `view`'s prices and
/// residuals at the middle deadline of the job's range
/// `[a + d_min − 1, min(end, horizon − 1)]`: the program the oracle's inner
/// solver takes at that deadline (its LP relaxation gives the oracle's
/// bound) and the deadline (0-based slot), or `None` when the job has no
/// column by it. For benchmarks of the program (a job and an oracle from
/// [`Locality::engine`](crate::algorithms::locality::Locality::engine)).
///
/// # Errors
///
/// A program the packing–covering engine rejects (none from a valid job).
pub fn middle_loc_sub(
    oracle: &LocalityOracle,
    job: &LocalityJob,
    view: &PriceView<'_>,
) -> crate::Result<Option<(PcProblem, u32)>> {
    let cluster = oracle.cluster();
    let first = job.arrival + job.delta_min(cluster);
    let last = job.end.min(view.horizon().saturating_sub(1));
    let t = first + (last.max(first) - first) / 2;
    let cells = sub::cells(job, cluster, view);
    Ok(sub::build(job, &cells, t)?.map(|s| (s.problem, t)))
}

/// The case drawn from `seed`; `Ok(None)` when no deadline of its window
/// has a feasible LP relaxation.
///
/// # Errors
///
/// Solver failures other than infeasibility (among them a missing solver
/// without the `highs` feature); model errors (none with these ranges).
pub(crate) fn rounding_case(seed: u64) -> crate::Result<Option<RoundingCase>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let h = rng.random_range(2..=4usize);
    let slots = rng.random_range(2..=6u32);
    let inst = case_instance(&mut rng, h, slots)?;
    let intra = SET_UP.intra_factor;
    let cluster = LocalityCluster::from_instance(&inst)?;
    let job = LocalityJob::from_job(&inst, &cluster, &inst.jobs()[0], slots, Some(intra))?;
    let view = case_view(&mut rng, h, slots);
    let cells = sub::cells(&job, &cluster, &view);
    let mut feasible = Vec::new();
    for t in job.arrival..=job.end {
        let Some(p) = sub::build(&job, &cells, t)? else {
            continue;
        };
        match solve_lp(&p.problem, &Default::default()) {
            Ok(_) => feasible.push(t),
            Err(PcError::LpInfeasible | PcError::LpUnboundedOrInfeasible) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if feasible.is_empty() {
        return Ok(None);
    }
    let deadline = feasible[rng.random_range(0..feasible.len())];
    Ok(Some(RoundingCase {
        cluster,
        job,
        view,
        deadline,
    }))
}

/// A rounding variant measured: a name and the inner solver.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Printed name.
    pub(crate) name: &'static str,
    /// The LP rounding solver.
    pub(crate) solver: InnerSolver,
}

/// The default inner solver first, then the variants that show the effect
/// of the draws and the scalings: one draw with `λ = 1`, 8 draws with
/// `λ = 1`, 32 draws with the default scalings.
pub fn default_variants() -> Vec<Variant> {
    let lp = |draws, lambdas| InnerSolver::LpRound { draws, lambdas };
    vec![
        Variant {
            name: "default (8 draws, λ 1–1.3)",
            solver: InnerSolver::lp_round(),
        },
        Variant {
            name: "1 draw, λ = 1",
            solver: lp(1, [1.0; 8]),
        },
        Variant {
            name: "8 draws, λ = 1",
            solver: lp(8, [1.0; 8]),
        },
        Variant {
            name: "32 draws, λ 1–1.3",
            solver: lp(32, DEFAULT_LAMBDAS),
        },
    ]
}

/// What the measurement covers.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct QualityOptions {
    /// Cases (default 200).
    pub cases: u64,
    /// Stream base (default [`DEFAULT_SEED_BASE`]).
    pub seed_base: u64,
    /// The exact MIP's time limit per case, seconds (default 10).
    pub mip_time_limit_s: f64,
}

impl Default for QualityOptions {
    fn default() -> Self {
        QualityOptions {
            cases: 200,
            seed_base: DEFAULT_SEED_BASE,
            mip_time_limit_s: 10.0,
        }
    }
}

/// One measured case of a variant where both solvers found a plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CaseRatio {
    /// Case number.
    pub case: u64,
    /// Window length, slots.
    pub(crate) slots: u32,
    /// Machines.
    pub(crate) machines: usize,
    /// The job's width `N`.
    pub(crate) width: u32,
    /// `cost/LB`.
    pub vs_lb: f64,
    /// `cost/OPT_MIP`.
    pub vs_opt: f64,
}

/// What one rounding variant did over the cases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// The cases where both solvers found a plan.
    pub ratios: Vec<CaseRatio>,
    /// Cases where every draw failed (the greedy fallback ran).
    pub fallbacks: u32,
    /// Fallbacks that found a plan.
    pub(crate) fallback_plans: u32,
    /// Cases (number) where the MIP found a plan and rounding did not.
    pub missed: Vec<u64>,
}

/// Mean, p95 (nearest rank) and maximum of `v` (NaN when empty).
pub fn mean_p95_max(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    let p95 = s[((0.95 * n as f64).ceil() as usize).clamp(1, n) - 1];
    (s.iter().sum::<f64>() / n as f64, p95, s[n - 1])
}

impl Tally {
    /// Mean, p95 and maximum of `cost/LB`.
    pub fn vs_lb(&self) -> (f64, f64, f64) {
        mean_p95_max(&self.ratios.iter().map(|r| r.vs_lb).collect::<Vec<_>>())
    }

    /// Mean, p95 and maximum of `cost/OPT_MIP`.
    pub fn vs_opt(&self) -> (f64, f64, f64) {
        mean_p95_max(&self.ratios.iter().map(|r| r.vs_opt).collect::<Vec<_>>())
    }
}

/// The measurement: per variant, its tally; the cases' counts; and every
/// broken sandwich (empty when the solvers are consistent).
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct QualityReport {
    /// Cases measured.
    pub cases: u64,
    /// Draws without a feasible LP, redrawn.
    pub(crate) redraws: u64,
    /// Cases the MIP did not prove optimal (skipped).
    pub unproven: u32,
    /// Proven cases where the MIP found a plan.
    pub mip_plans: u32,
    /// Proven cases the MIP proved integer infeasible.
    pub(crate) mip_infeasible: u32,
    /// The variants, in the order given.
    pub variants: Vec<(&'static str, Tally)>,
    /// Broken sandwiches or plans where the MIP proved none (each a
    /// readable sentence).
    pub violations: Vec<String>,
    /// Wall-clock time, seconds.
    pub seconds: f64,
}

impl QualityReport {
    /// Proven cases.
    pub fn proven(&self) -> u32 {
        (self.cases as u32).saturating_sub(self.unproven)
    }
}

/// Draws case `k`, skipping draws without a feasible LP; `None` after
/// [`MAX_REDRAWS`] draws.
fn draw(seed_base: u64, k: u64, redraws: &mut u64) -> crate::Result<Option<RoundingCase>> {
    for a in 0..MAX_REDRAWS {
        if let Some(c) = rounding_case(seed_base.wrapping_add(k << 8).wrapping_add(a))? {
            return Ok(Some(c));
        }
        *redraws += 1;
    }
    Ok(None)
}

/// Measures `variants` on `opts.cases` cases (see the module's text).
///
/// # Errors
///
/// Solver failures (among them a missing solver without the `highs`
/// feature).
pub fn measure(opts: &QualityOptions, variants: &[Variant]) -> crate::Result<QualityReport> {
    let start = Instant::now();
    let mut rep = QualityReport {
        cases: opts.cases,
        variants: variants
            .iter()
            .map(|v| (v.name, Tally::default()))
            .collect(),
        ..QualityReport::default()
    };
    for k in 0..opts.cases {
        let Some(case) = draw(opts.seed_base, k, &mut rep.redraws)? else {
            rep.violations
                .push(format!("case {k}: no draw with a feasible LP"));
            continue;
        };
        measure_case(k, &case, opts, variants, &mut rep)?;
    }
    rep.seconds = start.elapsed().as_secs_f64();
    Ok(rep)
}

/// One case under the MIP and every variant.
fn measure_case(
    k: u64,
    case: &RoundingCase,
    opts: &QualityOptions,
    variants: &[Variant],
    rep: &mut QualityReport,
) -> crate::Result<()> {
    let exact_solver = InnerSolver::ExactMip {
        time_limit_s: opts.mip_time_limit_s,
    };
    let mut exact = LocalityOracle::new(case.cluster.clone(), exact_solver);
    let e = exact.solve_deadline(&case.job, &case.view, case.deadline)?;
    if !e.proven {
        rep.unproven += 1;
        return Ok(());
    }
    match e.plan {
        Some(_) => rep.mip_plans += 1,
        None => rep.mip_infeasible += 1,
    }
    let (slots, machines) = (
        case.deadline - case.job.arrival + 1,
        case.cluster.machines(),
    );
    let width = case.job.max_workers;
    for (v, (_, tally)) in variants.iter().zip(&mut rep.variants) {
        let mut round = LocalityOracle::new(case.cluster.clone(), v.solver).with_seed(k);
        let r = round.solve_deadline(&case.job, &case.view, case.deadline)?;
        if let Some(counts) = r.rounding {
            tally.fallbacks += u32::from(counts.fallback);
            tally.fallback_plans += u32::from(counts.fallback_plan);
        }
        let lb = r.lower_bound;
        let close = |a: f64, b: f64| a <= b + SANDWICH_TOL * b.abs().max(1.0);
        if !(close(e.lower_bound, lb) && close(lb, e.lower_bound)) {
            let msg = format!("case {k}: LP bounds differ: {lb} vs {}", e.lower_bound);
            rep.violations.push(msg);
        }
        match (&e.plan, &r.plan) {
            (Some((_, opt)), Some((_, cost))) => {
                if !close(lb, *opt) || !close(*opt, *cost) {
                    let msg = format!("case {k}: not LB {lb} ≤ OPT {opt} ≤ cost {cost}");
                    rep.violations.push(msg);
                }
                tally.ratios.push(CaseRatio {
                    case: k,
                    slots,
                    machines,
                    width,
                    vs_lb: cost / lb,
                    vs_opt: cost / opt,
                });
            }
            (Some(_), None) => tally.missed.push(k),
            (None, Some(_)) => rep.violations.push(format!(
                "case {k}: rounding found a plan the MIP proved impossible"
            )),
            (None, None) => {}
        }
    }
    Ok(())
}

impl fmt::Display for QualityReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let proven = self.proven();
        writeln!(
            f,
            "L-E5: {} cases ({} redraws without a feasible LP); the MIP proved {proven} optimal ({} skipped), with a plan in {}, integer infeasible in {}; {:.1} s",
            self.cases,
            self.redraws,
            self.unproven,
            self.mip_plans,
            self.mip_infeasible,
            self.seconds
        )?;
        for (name, t) in &self.variants {
            let (lb_mean, lb_p95, lb_max) = t.vs_lb();
            let (opt_mean, opt_p95, opt_max) = t.vs_opt();
            writeln!(
                f,
                "L-E5 [{name}]: {} cases with both plans; cost/LB mean {lb_mean:.4}, p95 {lb_p95:.4}, max {lb_max:.4}; cost/OPT mean {opt_mean:.4}, p95 {opt_p95:.4}, max {opt_max:.4}",
                t.ratios.len()
            )?;
            writeln!(
                f,
                "L-E5 [{name}]: every draw failed in {} of {proven} ({:.1} %), the fallback found a plan in {}; no plan where the MIP found one in {} of {} ({:.1} %): cases {:?}",
                t.fallbacks,
                100.0 * f64::from(t.fallbacks) / f64::from(proven.max(1)),
                t.fallback_plans,
                t.missed.len(),
                self.mip_plans,
                100.0 * t.missed.len() as f64 / f64::from(self.mip_plans.max(1)),
                t.missed,
            )?;
        }
        for v in &self.violations {
            writeln!(f, "L-E5 violation: {v}")?;
        }
        Ok(())
    }
}

#[cfg(all(test, feature = "highs"))]
mod tests {
    use super::*;

    #[test]
    fn cases_are_deterministic_and_small() {
        let a = rounding_case(DEFAULT_SEED_BASE).unwrap();
        let b = rounding_case(DEFAULT_SEED_BASE).unwrap();
        match (a, b) {
            (Some(a), Some(b)) => {
                assert_eq!(
                    (a.deadline, a.job.max_workers),
                    (b.deadline, b.job.max_workers)
                );
                assert!((2..=4).contains(&a.cluster.machines()));
                assert!(a.deadline <= a.job.end && a.job.end < 6);
            }
            (None, None) => {}
            _ => panic!("the same seed drew different cases"),
        }
    }

    #[test]
    fn a_few_cases_measure_consistently() {
        let opts = QualityOptions {
            cases: 3,
            ..QualityOptions::default()
        };
        let rep = measure(&opts, &default_variants()[..1]).unwrap();
        assert!(rep.violations.is_empty(), "{rep}");
        assert_eq!(rep.proven() + rep.unproven, 3);
        let t = &rep.variants[0].1;
        assert_eq!(
            t.ratios.len() + t.missed.len(),
            rep.mip_plans as usize,
            "{rep}"
        );
        assert!(
            t.ratios
                .iter()
                .all(|r| r.vs_opt >= 1.0 - 1e-7 && r.vs_lb >= r.vs_opt - 1e-7)
        );
    }
}

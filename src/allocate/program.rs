//! The LPs the policies share: Gavel's constraints over the time fractions,
//! with a linear objective ([`max_linear`]) or a common floor to raise
//! ([`max_floor`]); the solver's point made exactly feasible ([`repair`]);
//! and the answer with its certificate ([`finish`]).

use std::time::Instant;

use super::{Allocation, AllocationError, AllocationInput, AllocationPolicy, Bracket};
use crate::certificate::{Bound, BoundKind, Certificate, RunInfo, Sense};
use crate::lp::{self, ColumnKind, LinearProgram, LpStatus, SolveOptions};

/// What the certificates say they cover.
pub(super) const SCOPE: &str = "the time fractions X of the input's jobs on its GPU types under Gavel's constraints (X ≥ 0, Σ_j X_ij ≤ 1, Σ_i s_i·X_ij ≤ n_j)";

/// The input as dense arrays: jobs in input order, types by name.
pub(super) struct View {
    pub types: Vec<String>,
    /// `n_j`.
    pub counts: Vec<f64>,
    pub ids: Vec<u64>,
    /// `T_ij`.
    pub tput: Vec<Vec<f64>>,
    /// `s_i`.
    pub scale: Vec<f64>,
    /// `w_i`.
    pub weight: Vec<f64>,
    /// `R_i` (0 when not given).
    pub steps: Vec<f64>,
    /// `E_i` (0 when not given).
    pub elapsed: Vec<f64>,
    /// Price per type (1 when not given).
    pub prices: Vec<f64>,
}

impl View {
    pub fn new(input: &AllocationInput) -> View {
        let types: Vec<String> = input.gpu_types.keys().cloned().collect();
        let counts = input.gpu_types.values().map(|&n| f64::from(n)).collect();
        let jobs = &input.jobs;
        let prices = types
            .iter()
            .map(|t| {
                input
                    .prices
                    .as_ref()
                    .and_then(|p| p.get(t))
                    .copied()
                    .unwrap_or(1.0)
            })
            .collect();
        View {
            tput: jobs
                .iter()
                .map(|j| {
                    types
                        .iter()
                        .map(|t| j.throughput.get(t).copied().unwrap_or(0.0))
                        .collect()
                })
                .collect(),
            ids: jobs.iter().map(|j| j.id).collect(),
            scale: jobs.iter().map(|j| f64::from(j.scale_factor)).collect(),
            weight: jobs.iter().map(|j| j.weight).collect(),
            steps: jobs
                .iter()
                .map(|j| j.steps_remaining.unwrap_or(0.0))
                .collect(),
            elapsed: jobs.iter().map(|j| j.elapsed_s.unwrap_or(0.0)).collect(),
            types,
            counts,
            prices,
        }
    }

    pub fn jobs(&self) -> usize {
        self.ids.len()
    }

    /// `N`, the GPUs of every type.
    pub fn total_gpus(&self) -> f64 {
        self.counts.iter().sum()
    }

    /// `t_i(X) = Σ_j T_ij·X_ij`.
    pub fn effective(&self, x: &[Vec<f64>]) -> Vec<f64> {
        self.tput
            .iter()
            .zip(x)
            .map(|(t, row)| t.iter().zip(row).map(|(a, b)| a * b).sum())
            .collect()
    }

    /// Job `i`'s best throughput on a type that has GPUs.
    pub fn best(&self, i: usize) -> f64 {
        self.tput[i]
            .iter()
            .zip(&self.counts)
            .filter(|(_, n)| **n > 0.0)
            .map(|(t, _)| *t)
            .fold(0.0, f64::max)
    }

    /// The error for job `i` that no type can run.
    pub fn cannot_run(&self, i: usize, policy: AllocationPolicy) -> AllocationError {
        AllocationError::invalid(
            format!("job {}: throughput", self.ids[i]),
            format!("0 on every type with GPUs: {policy} cannot give it a share"),
        )
    }
}

/// A solved LP: the fractions made feasible, the bound from the duals (in
/// the units of the LP's objective), and how the solve went.
pub(super) struct Solved {
    pub x: Vec<Vec<f64>>,
    pub bound: f64,
    pub run: RunInfo,
}

/// What the solver sees of a coefficient: 0 where HiGHS would drop it
/// (at most [`lp::MIN_COEFFICIENT`] in magnitude). The bound is computed on
/// the exact program with the solver's duals, so it stays valid.
fn for_solver(v: f64) -> f64 {
    if v.abs() <= lp::MIN_COEFFICIENT {
        0.0
    } else {
        v
    }
}

/// Jobs grouped into classes of identical LP rows: the same coefficients,
/// bit for bit, and the same scale factor.
///
/// Jobs of one class are interchangeable: averaging any feasible `X` over a
/// class keeps every job row (`Σ_j X_ij ≤ 1`), every type row (the class
/// uses the same GPUs), a linear objective (the class's sum is unchanged)
/// and every floor row (each member's floor is a mean of floors `≥ z`). So
/// the program with one set of columns per class, whose type rows count
/// the class's GPUs, has the same optimum, and its duals bound the
/// original's. Each member takes its class's fractions. Gavel-like inputs
/// draw a few dozen job types, so 1,000 jobs make a few hundred classes.
struct Classes {
    /// The class of each job.
    of_job: Vec<usize>,
    /// A job of each class, whose row stands for the class.
    first: Vec<usize>,
    /// Jobs in each class.
    size: Vec<f64>,
}

impl Classes {
    /// Classes of equal `(s_i, row(i))`.
    fn new<'a>(view: &View, row: impl Fn(usize) -> Option<&'a [f64]>) -> Classes {
        let mut index: std::collections::HashMap<(u64, Option<Vec<u64>>), usize> =
            std::collections::HashMap::new();
        let (mut of_job, mut first, mut size) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..view.jobs() {
            let key = (
                view.scale[i].to_bits(),
                row(i).map(|r| r.iter().map(|v| v.to_bits()).collect()),
            );
            let class = *index.entry(key).or_insert_with(|| {
                first.push(i);
                size.push(0.0);
                first.len() - 1
            });
            size[class] += 1.0;
            of_job.push(class);
        }
        Classes {
            of_job,
            first,
            size,
        }
    }

    fn len(&self) -> usize {
        self.first.len()
    }

    /// The jobs' fractions (job-major, `m·k`) from the classes' columns.
    fn expand(&self, primal: &[f64], k: usize) -> Vec<f64> {
        self.of_job
            .iter()
            .flat_map(|&c| primal[c * k..(c + 1) * k].iter().copied())
            .collect()
    }
}

/// The LP of Gavel's constraints over classes of jobs: column `c·k + j`
/// is `X_cj` in `[0, 1]` with cost `cost(c, j)`; row `c` is `Σ_j X_cj ≤
/// 1`, row `C + j` is `Σ_c |c|·s_c·X_cj ≤ n_j`.
fn gavel_lp(
    view: &View,
    classes: &Classes,
    sense: lp::Sense,
    cost: impl Fn(usize, usize) -> f64,
) -> LinearProgram {
    let (m, k) = (classes.len(), view.types.len());
    let mut p = LinearProgram::new(sense);
    for c in 0..m {
        for j in 0..k {
            p.add_column(cost(c, j), 0.0, 1.0, ColumnKind::Continuous);
        }
    }
    for c in 0..m {
        let row: Vec<(usize, f64)> = (0..k).map(|j| (c * k + j, 1.0)).collect();
        p.add_row(f64::NEG_INFINITY, 1.0, &row);
    }
    for j in 0..k {
        let col: Vec<(usize, f64)> = (0..m)
            .map(|c| (c * k + j, classes.size[c] * view.scale[classes.first[c]]))
            .collect();
        p.add_row(f64::NEG_INFINITY, view.counts[j], &col);
    }
    p
}

/// Solves `solver` (the program without the coefficients HiGHS would
/// drop) without presolve, returning its primal point and the bound its
/// duals give on `exact`, the program itself (used as a proof).
fn solve(
    exact: &LinearProgram,
    solver: &LinearProgram,
    policy: AllocationPolicy,
) -> Result<(Vec<f64>, f64, RunInfo), AllocationError> {
    let start = Instant::now();
    let sol = lp::solve(solver, &SolveOptions::default().with_presolve(false))?;
    if sol.status != LpStatus::Optimal || !sol.has_primal {
        return Err(AllocationError::Solver {
            policy,
            status: sol.status.to_string(),
        });
    }
    // The solver's duals when it gives usable ones; else all 0, whose
    // bound (the columns' own bounds) is weak but as valid. HiGHS was seen
    // to report an optimal point without duals on a 2,000-job replay.
    let zeros = vec![0.0; exact.n_rows()];
    let bound = sol
        .has_dual
        .then(|| exact.dual_bound(&sol.row_duals))
        .flatten()
        .or_else(|| exact.dual_bound(&zeros))
        .ok_or_else(|| AllocationError::Solver {
            policy,
            status: "optimal, but without a finite bound from its duals or its column bounds"
                .into(),
        })?;
    let mut run = RunInfo::new();
    run.lp_solves = 1;
    run.lp_iterations = sol.simplex_iterations.map_or(0, |n| n.max(0) as u64);
    run.add_stage("lp", start.elapsed().as_secs_f64());
    Ok((sol.primal, bound, run))
}

/// The fractions of an LP point (first `m·k` columns) made exactly
/// feasible: clamped to `[0, 1]`, each job's row scaled to sum to at most
/// 1, each type's column scaled to use at most its GPUs.
pub(super) fn repair(view: &View, primal: &[f64]) -> Vec<Vec<f64>> {
    let k = view.types.len();
    let mut x: Vec<Vec<f64>> = (0..view.jobs())
        .map(|i| {
            // (+ 0.0 turns a clamped −0.0 into 0.)
            let row: Vec<f64> = (0..k)
                .map(|j| primal[i * k + j].clamp(0.0, 1.0) + 0.0)
                .collect();
            let sum: f64 = row.iter().sum();
            if sum > 1.0 {
                // Divided by a little more than the sum where the quotients
                // still add up to more than 1 in floating point.
                let mut d = sum;
                let mut step = f64::EPSILON;
                loop {
                    let scaled: Vec<f64> = row.iter().map(|v| v / d).collect();
                    if scaled.iter().sum::<f64>() <= 1.0 {
                        break scaled;
                    }
                    d *= 1.0 + step;
                    step *= 2.0;
                }
            } else {
                row
            }
        })
        .collect();
    for j in 0..k {
        let used: f64 = (0..view.jobs()).map(|i| view.scale[i] * x[i][j]).sum();
        if used > view.counts[j] {
            let column: Vec<f64> = x.iter().map(|row| row[j]).collect();
            let mut f = if view.counts[j] > 0.0 {
                view.counts[j] / used
            } else {
                0.0
            };
            let mut step = f64::EPSILON;
            // Lowered a little where the scaled column still uses more than
            // n_j GPUs in floating point.
            loop {
                for (row, v) in x.iter_mut().zip(&column) {
                    row[j] = v * f;
                }
                let used: f64 = (0..view.jobs()).map(|i| view.scale[i] * x[i][j]).sum();
                if used <= view.counts[j] {
                    break;
                }
                f = (f * (1.0 - step)).max(0.0);
                step *= 2.0;
            }
        }
    }
    x
}

/// Maximises `Σ_ij c_ij·X_ij`; the bound is on that sum.
pub(super) fn max_linear(
    view: &View,
    policy: AllocationPolicy,
    c: &[Vec<f64>],
) -> Result<Solved, AllocationError> {
    // Costs scaled to at most 1 for the solver; the bound scales back.
    let scale = c.iter().flatten().fold(0.0, |a: f64, b| a.max(b.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let classes = Classes::new(view, |i| Some(c[i].as_slice()));
    // A class's cost is its members' sum.
    let cost = |class: usize, j: usize| classes.size[class] * c[classes.first[class]][j] / scale;
    let exact = gavel_lp(view, &classes, lp::Sense::Maximise, cost);
    let solver = gavel_lp(view, &classes, lp::Sense::Maximise, |class, j| {
        for_solver(cost(class, j))
    });
    let (primal, bound, run) = solve(&exact, &solver, policy)?;
    let k = view.types.len();
    Ok(Solved {
        x: repair(view, &classes.expand(&primal, k)),
        bound: bound * scale,
        run,
    })
}

/// Largest floor-row coefficient the solver sees: with `z ≤ 1`, a job
/// whose coefficient reaches it needs at most `10⁻⁹` of its time there.
/// Lowering a coefficient of a `≥` row only restricts the program, so the
/// solver's point stays feasible and the bound is taken on the exact one.
const MAX_FLOOR_COEFFICIENT: f64 = 1e9;

/// Maximises `z` subject to `Σ_j c_ij·X_ij ≥ z` for every job with a row
/// (`None`: no floor for that job); the bound is on `z`. `z` lies in `[0,
/// min_i max_j c_ij]` (over types with GPUs), which keeps its column's
/// contribution to the dual bound finite.
///
/// The rows are divided by that upper end of `z`, so the solver's `z`
/// lies in `[0, 1]` and the optimum is not lost in its absolute
/// tolerances (divided by the largest `c_ij` instead, jobs of very
/// different `c` left a floor of `10⁻⁸` that the solver met with every
/// `X` at 0).
pub(super) fn max_floor(
    view: &View,
    policy: AllocationPolicy,
    c: &[Option<Vec<f64>>],
) -> Result<Solved, AllocationError> {
    let k = view.types.len();
    let z_top = c
        .iter()
        .flatten()
        .map(|row| {
            row.iter()
                .zip(&view.counts)
                .filter(|(_, n)| **n > 0.0)
                .map(|(v, _)| *v)
                .fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min);
    let largest = c
        .iter()
        .flatten()
        .flatten()
        .fold(0.0, |a: f64, b| a.max(b.abs()));
    // (Not when a coefficient divided by it would overflow.)
    let scale = if z_top.is_finite() && z_top > 0.0 && (largest / z_top).is_finite() {
        z_top
    } else if largest > 0.0 {
        largest
    } else {
        1.0
    };
    let z_max = z_top / scale;
    let classes = Classes::new(view, |i| c[i].as_deref());
    let build = |coefficient: fn(f64) -> f64| {
        let mut p = gavel_lp(view, &classes, lp::Sense::Maximise, |_, _| 0.0);
        let z = p.add_column(1.0, 0.0, z_max, ColumnKind::Continuous);
        for (i, &first) in classes.first.iter().enumerate() {
            if let Some(row) = &c[first] {
                let mut entries: Vec<(usize, f64)> = (0..k)
                    .map(|j| (i * k + j, coefficient(row[j] / scale)))
                    .filter(|e| e.1 != 0.0)
                    .collect();
                entries.push((z, -1.0));
                p.add_row(0.0, f64::INFINITY, &entries);
            }
        }
        p
    };
    let (primal, bound, run) = solve(
        &build(|v| v),
        &build(|v| for_solver(v).min(MAX_FLOOR_COEFFICIENT)),
        policy,
    )?;
    Ok(Solved {
        x: repair(view, &classes.expand(&primal, k)),
        bound: bound * scale,
        run,
    })
}

/// The allocation of `x` with its objective and, for an LP policy, its
/// certificate (the bound in the objective's units).
pub(super) fn finish(
    view: &View,
    policy: AllocationPolicy,
    x: Vec<Vec<f64>>,
    certified: Option<(Sense, f64, Bound, RunInfo)>,
    bracket: Option<Bracket>,
) -> Allocation {
    let effective_throughput = view.effective(&x);
    let (objective, certificate) = match certified {
        Some((sense, objective, bound, run)) => {
            let cert = Certificate::new(format!("allocate::{policy}"), sense, objective, bound)
                .with_scope(SCOPE)
                .with_run(run);
            (Some(objective), Some(cert))
        }
        None => (None, None),
    };
    Allocation {
        policy,
        types: view.types.clone(),
        job_ids: view.ids.clone(),
        fractions: x,
        objective,
        effective_throughput,
        certificate,
        bracket,
    }
}

/// A bound from an LP's duals.
pub(super) fn safe(value: f64) -> Bound {
    Bound::new(value, BoundKind::LpDualSafe)
}

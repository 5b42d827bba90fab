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

/// The LP of Gavel's constraints: column `i·k + j` is `X_ij` in `[0, 1]`
/// with cost `cost(i, j)`; row `i` is `Σ_j X_ij ≤ 1`, row `m + j` is
/// `Σ_i s_i·X_ij ≤ n_j`.
fn gavel_lp(view: &View, sense: lp::Sense, cost: impl Fn(usize, usize) -> f64) -> LinearProgram {
    let (m, k) = (view.jobs(), view.types.len());
    let mut p = LinearProgram::new(sense);
    for i in 0..m {
        for j in 0..k {
            p.add_column(cost(i, j), 0.0, 1.0, ColumnKind::Continuous);
        }
    }
    for i in 0..m {
        let row: Vec<(usize, f64)> = (0..k).map(|j| (i * k + j, 1.0)).collect();
        p.add_row(f64::NEG_INFINITY, 1.0, &row);
    }
    for j in 0..k {
        let col: Vec<(usize, f64)> = (0..m).map(|i| (i * k + j, view.scale[i])).collect();
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
    let bound = if sol.has_dual {
        exact.dual_bound(&sol.row_duals)
    } else {
        None
    };
    let bound = bound.ok_or_else(|| AllocationError::Solver {
        policy,
        status: "optimal, but without usable duals for a bound".into(),
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
            let row: Vec<f64> = (0..k).map(|j| primal[i * k + j].clamp(0.0, 1.0)).collect();
            let sum: f64 = row.iter().sum();
            if sum > 1.0 {
                row.iter().map(|v| v / sum).collect()
            } else {
                row
            }
        })
        .collect();
    for j in 0..k {
        let used: f64 = (0..view.jobs()).map(|i| view.scale[i] * x[i][j]).sum();
        if used > view.counts[j] {
            let f = if view.counts[j] > 0.0 {
                view.counts[j] / used
            } else {
                0.0
            };
            for row in &mut x {
                row[j] *= f;
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
    let exact = gavel_lp(view, lp::Sense::Maximise, |i, j| c[i][j] / scale);
    let solver = gavel_lp(view, lp::Sense::Maximise, |i, j| {
        for_solver(c[i][j] / scale)
    });
    let (primal, bound, run) = solve(&exact, &solver, policy)?;
    Ok(Solved {
        x: repair(view, &primal),
        bound: bound * scale,
        run,
    })
}

/// Maximises `z` subject to `Σ_j c_ij·X_ij ≥ z` for every job with a row
/// (`None`: no floor for that job); the bound is on `z`. `z` lies in `[0,
/// min_i max_j c_ij]` (over types with GPUs), which keeps its column's
/// contribution to the dual bound finite.
pub(super) fn max_floor(
    view: &View,
    policy: AllocationPolicy,
    c: &[Option<Vec<f64>>],
) -> Result<Solved, AllocationError> {
    let k = view.types.len();
    let scale = c
        .iter()
        .flatten()
        .flatten()
        .fold(0.0, |a: f64, b| a.max(b.abs()));
    let scale = if scale > 0.0 { scale } else { 1.0 };
    let z_max = c
        .iter()
        .flatten()
        .map(|row| {
            row.iter()
                .zip(&view.counts)
                .filter(|(_, n)| **n > 0.0)
                .map(|(v, _)| v / scale)
                .fold(0.0, f64::max)
        })
        .fold(f64::INFINITY, f64::min);
    let build = |coefficient: fn(f64) -> f64| {
        let mut p = gavel_lp(view, lp::Sense::Maximise, |_, _| 0.0);
        let z = p.add_column(1.0, 0.0, z_max, ColumnKind::Continuous);
        for (i, row) in c.iter().enumerate() {
            if let Some(row) = row {
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
    let (primal, bound, run) = solve(&build(|v| v), &build(for_solver), policy)?;
    Ok(Solved {
        x: repair(view, &primal),
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

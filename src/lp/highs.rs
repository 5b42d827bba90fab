//! The HiGHS adapter: the only file of the crate that imports `highs`.
//!
//! It turns a validated [`LinearProgram`] into a `highs::ColProblem` (rows
//! first, then columns with their entries; inclusive bounds only), applies
//! [`SolveOptions`] with `try_set_option`, runs `try_solve`, and reads the
//! result back into an [`LpSolution`]. Every `highs` call that can fail is a
//! `try_*` call mapped to [`LpError::Solver`]; the model status is read before
//! anything else and mapped to [`LpStatus`] without merging infeasible,
//! unbounded and unbounded-or-infeasible.
//!
//! Checked against `highs` 2.4.0 / HiGHS 1.15.

use std::ops::Bound;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Instant;

use highs::{ColProblem, HighsModelStatus, HighsOptionValue, Model, Row, SolvedModel};

use super::{ColumnKind, LinearProgram, LpError, LpSolution, LpStatus, SolveOptions};
use crate::certificate::Sense;
use crate::model::units::Num;

/// HiGHS's `SolutionStatus::kSolutionStatusFeasible`.
const SOLUTION_STATUS_FEASIBLE: i64 = 2;

/// Largest count HiGHS indexes with its 32-bit `HighsInt`.
const MAX_HIGHS_INDEX: usize = i32::MAX as usize;

/// Solves a program that [`LinearProgram::validate`] and
/// [`SolveOptions::validate`] have accepted.
pub(crate) fn solve(lp: &LinearProgram, opts: &SolveOptions) -> Result<LpSolution, LpError> {
    let start = Instant::now();
    let is_mip = lp.has_integers() && !opts.relax_integrality;
    if lp.n_cols() == 0 {
        // HiGHS answers "model empty" without looking at the rows; settle it here.
        return Ok(empty_program(lp, start));
    }
    let problem = build_problem(lp, is_mip)?;
    let sense = match lp.sense() {
        Sense::Minimise => highs::Sense::Minimise,
        Sense::Maximise => highs::Sense::Maximise,
    };
    let mut model = problem
        .try_optimise(sense)
        .map_err(|status| LpError::Solver {
            stage: "load".into(),
            message: format!(
                "HiGHS rejected the model (status {status:?}); {}",
                describe(lp, opts)
            ),
        })?;
    apply_options(&mut model, opts)?;
    let solved = model.try_solve().map_err(|status| LpError::Solver {
        stage: "solve".into(),
        message: format!(
            "HiGHS could not run the solve (status {status:?}); {}",
            describe(lp, opts)
        ),
    })?;
    read_solution(lp, opts, &solved, is_mip, start)
}

/// What the crate can say about a program HiGHS failed on: its size, the
/// magnitudes of its numbers (the usual cause of numerical failures), and
/// the time limit.
pub(crate) fn describe(lp: &LinearProgram, opts: &SolveOptions) -> String {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for i in 0..lp.n_rows() {
        for &(_, a) in lp.row_entries(i).unwrap_or(&[]) {
            if a != 0.0 {
                lo = lo.min(a.abs());
                hi = hi.max(a.abs());
            }
        }
    }
    let max_cost = lp.costs().iter().fold(0.0f64, |m, c| m.max(c.abs()));
    let finite_bounds = (0..lp.n_cols())
        .filter_map(|j| lp.col_bounds(j))
        .chain((0..lp.n_rows()).filter_map(|i| lp.row_bounds(i)))
        .flat_map(|(l, u)| [l, u])
        .filter(|b| b.is_finite());
    let max_bound = finite_bounds.fold(0.0f64, |m, b| m.max(b.abs()));
    let mut text = format!(
        "the model has {} rows, {} columns, {} non-zeros",
        lp.n_rows(),
        lp.n_cols(),
        lp.nnz()
    );
    if hi > 0.0 {
        text += &format!(", |coefficients| in [{}, {}]", Num(lo), Num(hi));
        if hi / lo > 1e10 {
            text += " (a ratio above 1e10: badly scaled, a common cause of numerical failure)";
        }
    }
    text += &format!(
        ", |costs| up to {}, finite |bounds| up to {}",
        Num(max_cost),
        Num(max_bound)
    );
    match opts.time_limit_s {
        Some(t) => text += &format!(", time limit {} s", Num(t)),
        None => text += ", no time limit",
    }
    text
}

/// Builds the column-wise problem: one HiGHS row per row, then one column per
/// column with its non-zero entries (exact zeros dropped).
fn build_problem(lp: &LinearProgram, is_mip: bool) -> Result<ColProblem, LpError> {
    let (n_rows, n_cols) = (lp.n_rows(), lp.n_cols());
    for (what, count) in [("rows", n_rows), ("columns", n_cols), ("entries", lp.nnz())] {
        if count > MAX_HIGHS_INDEX {
            return Err(LpError::Solver {
                stage: "build".into(),
                message: format!("{count} {what} exceed HiGHS's limit of {MAX_HIGHS_INDEX}"),
            });
        }
    }

    let mut problem = ColProblem::new();
    let mut rows: Vec<Row> = Vec::with_capacity(n_rows);
    for i in 0..n_rows {
        let (lower, upper) = lp
            .row_bounds(i)
            .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        rows.push(problem.add_row(inclusive(lower, upper)));
    }

    // Transpose the row-ordered entries into per-column lists (counting sort).
    let mut col_start = vec![0usize; n_cols + 1];
    for i in 0..n_rows {
        for &(col, value) in lp.row_entries(i).unwrap_or(&[]) {
            if col < n_cols && value != 0.0 {
                col_start[col + 1] += 1;
            }
        }
    }
    for j in 0..n_cols {
        col_start[j + 1] += col_start[j];
    }
    let mut next = col_start.clone();
    let mut by_col: Vec<Option<(Row, f64)>> = vec![None; col_start[n_cols]];
    for (i, &row) in rows.iter().enumerate() {
        for &(col, value) in lp.row_entries(i).unwrap_or(&[]) {
            if col < n_cols && value != 0.0 {
                by_col[next[col]] = Some((row, value));
                next[col] += 1;
            }
        }
    }

    for j in 0..n_cols {
        let cost = lp.cost(j).unwrap_or(0.0);
        let (lower, upper) = lp
            .col_bounds(j)
            .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        let integer = is_mip && lp.column_kind(j) == Some(ColumnKind::Integer);
        let entries = by_col[col_start[j]..col_start[j + 1]].iter().flatten();
        problem.add_column_with_integrality(cost, inclusive(lower, upper), entries, integer);
    }
    Ok(problem)
}

/// Inclusive bounds for HiGHS (`l..=u`, `l..`, `..=u` or `..`): the `highs`
/// crate treats exclusive bounds as inclusive, so none are used.
fn inclusive(lower: f64, upper: f64) -> (Bound<f64>, Bound<f64>) {
    let lo = if lower == f64::NEG_INFINITY {
        Bound::Unbounded
    } else {
        Bound::Included(lower)
    };
    let hi = if upper == f64::INFINITY {
        Bound::Unbounded
    } else {
        Bound::Included(upper)
    };
    (lo, hi)
}

fn set_option<V: HighsOptionValue>(
    model: &mut Model,
    name: &str,
    value: V,
    shown: &dyn std::fmt::Display,
) -> Result<(), LpError> {
    model
        .try_set_option(name, value)
        .map_err(|_| LpError::Solver {
            stage: "options".into(),
            message: format!("HiGHS rejected option {name} = {shown}"),
        })
}

fn apply_options(model: &mut Model, opts: &SolveOptions) -> Result<(), LpError> {
    // `Model::try_new` already silences HiGHS; restate it, or undo it if verbose.
    set_option(model, "output_flag", opts.verbose, &opts.verbose)?;
    set_option(model, "log_to_console", opts.verbose, &opts.verbose)?;

    let threads = i32::try_from(opts.threads).map_err(|_| LpError::InvalidOption {
        option: "threads",
        reason: format!("{} does not fit HiGHS's 32-bit integer", opts.threads),
    })?;
    set_option(model, "threads", threads, &threads)?;
    if threads == 1 {
        set_option(model, "parallel", "off", &"off")?;
    }

    let seed = i32::try_from(opts.seed).map_err(|_| LpError::InvalidOption {
        option: "seed",
        reason: format!("{} does not fit HiGHS's 32-bit integer", opts.seed),
    })?;
    set_option(model, "random_seed", seed, &seed)?;

    let presolve = if opts.presolve { "on" } else { "off" };
    set_option(model, "presolve", presolve, &presolve)?;

    if let Some(limit) = opts.time_limit_s {
        set_option(model, "time_limit", limit, &limit)?;
    }
    set_option(model, "mip_rel_gap", opts.mip_rel_gap, &opts.mip_rel_gap)?;
    if let Some(nodes) = opts.mip_max_nodes {
        let nodes = i32::try_from(nodes).map_err(|_| LpError::InvalidOption {
            option: "mip_max_nodes",
            reason: format!("{nodes} does not fit HiGHS's 32-bit integer"),
        })?;
        set_option(model, "mip_max_nodes", nodes, &nodes)?;
    }
    Ok(())
}

/// What a HiGHS model status means for us.
enum Outcome {
    Status(LpStatus),
    Empty,
    Failed(String),
}

fn map_status(status: HighsModelStatus, context: impl FnOnce() -> String) -> Outcome {
    use HighsModelStatus as H;
    let mapped = match status {
        H::Optimal => LpStatus::Optimal,
        H::Infeasible => LpStatus::Infeasible,
        H::Unbounded => LpStatus::Unbounded,
        H::UnboundedOrInfeasible => LpStatus::UnboundedOrInfeasible,
        H::ReachedTimeLimit => LpStatus::TimeLimit,
        H::ReachedIterationLimit => LpStatus::IterationLimit,
        H::ReachedSolutionLimit => LpStatus::SolutionLimit,
        H::ReachedMemoryLimit => LpStatus::MemoryLimit,
        H::ReachedInterrupt => LpStatus::Interrupted,
        H::ObjectiveBound => LpStatus::ObjectiveBound,
        H::ObjectiveTarget => LpStatus::ObjectiveTarget,
        H::Unknown => LpStatus::Unknown(format!(
            "HiGHS stopped without a conclusion (model status Unknown), usually after numerical trouble; {}",
            context()
        )),
        H::ModelEmpty => return Outcome::Empty,
        H::NotSet
        | H::LoadError
        | H::ModelError
        | H::PresolveError
        | H::SolveError
        | H::PostsolveError => {
            let what = match status {
                H::NotSet => "HiGHS returned without setting a model status",
                H::LoadError => "HiGHS could not load the model",
                H::ModelError => "HiGHS found the model invalid",
                H::PresolveError => "HiGHS's presolve failed",
                H::SolveError => "HiGHS's solver failed, usually after numerical trouble",
                _ => "HiGHS's postsolve failed",
            };
            return Outcome::Failed(format!("{what} (model status {status:?}); {}", context()));
        }
        // `HighsModelStatus` is non-exhaustive: keep anything new as data.
        other => LpStatus::Unknown(format!("HiGHS model status {other:?}")),
    };
    Outcome::Status(mapped)
}

fn read_solution(
    lp: &LinearProgram,
    opts: &SolveOptions,
    solved: &SolvedModel,
    is_mip: bool,
    start: Instant,
) -> Result<LpSolution, LpError> {
    // Status first: the objective reads 0 when there is no solution.
    // `SolvedModel::status` panics on a status code the bindings do not know
    // (HiGHS 1.15 has one more, `kHighsInterrupt`); keep that as data.
    let status = match catch_unwind(AssertUnwindSafe(|| solved.status())) {
        Ok(raw) => match map_status(raw, || describe(lp, opts)) {
            Outcome::Status(status) => status,
            Outcome::Empty => return Ok(empty_program(lp, start)),
            Outcome::Failed(message) => {
                return Err(LpError::Solver {
                    stage: "solve".into(),
                    message,
                });
            }
        },
        Err(_) => LpStatus::Unknown("a model status code unknown to the highs crate".into()),
    };

    let feasible = |key: &std::ffi::CStr| {
        solved
            .int_info_value(key)
            .is_ok_and(|v| v == SOLUTION_STATUS_FEASIBLE)
    };
    let has_primal = feasible(c"primal_solution_status");
    let has_dual = !is_mip && feasible(c"dual_solution_status");
    let offset = lp.objective_offset();

    let (mut primal, mut row_duals, mut column_duals) = (Vec::new(), Vec::new(), Vec::new());
    if has_primal || has_dual {
        let solution = solved.get_solution();
        if has_primal {
            primal = solution.columns().to_vec();
        }
        if has_dual {
            row_duals = solution.dual_rows().to_vec();
            column_duals = solution.dual_columns().to_vec();
        }
    }
    let objective = has_primal.then(|| solved.objective_value() + offset);

    let finite = |v: Result<f64, _>| v.ok().filter(|v: &f64| v.is_finite());
    let (mip_dual_bound, mip_gap, simplex_iterations) = if is_mip {
        (
            finite(solved.double_info_value(c"mip_dual_bound")).map(|b| b + offset),
            finite(solved.double_info_value(c"mip_gap")),
            None,
        )
    } else {
        (
            None,
            None,
            solved
                .int_info_value(c"simplex_iteration_count")
                .ok()
                .filter(|&n| n >= 0),
        )
    };

    Ok(LpSolution {
        status,
        has_primal,
        primal,
        has_dual,
        row_duals,
        column_duals,
        objective,
        mip_dual_bound,
        mip_gap,
        is_mip,
        seconds: start.elapsed().as_secs_f64(),
        simplex_iterations,
    })
}

/// A program without columns: every row's activity is 0, so it is feasible
/// (and optimal, objective = offset, all duals 0) iff every row admits 0.
fn empty_program(lp: &LinearProgram, start: Instant) -> LpSolution {
    let feasible = (0..lp.n_rows()).all(|i| {
        lp.row_bounds(i)
            .is_some_and(|(lower, upper)| lower <= 0.0 && 0.0 <= upper)
    });
    LpSolution {
        status: if feasible {
            LpStatus::Optimal
        } else {
            LpStatus::Infeasible
        },
        has_primal: feasible,
        primal: Vec::new(),
        has_dual: feasible,
        row_duals: if feasible {
            vec![0.0; lp.n_rows()]
        } else {
            Vec::new()
        },
        column_duals: Vec::new(),
        objective: feasible.then_some(lp.objective_offset()),
        mip_dual_bound: None,
        mip_gap: None,
        is_mip: false,
        seconds: start.elapsed().as_secs_f64(),
        simplex_iterations: Some(0),
    }
}

/// A linear program (no integer columns) kept loaded in one HiGHS instance
/// across solves that change only column bounds: the solver is created and
/// its options set once, and each solve after the first starts from the
/// previous solve's basis (HiGHS keeps it when bounds change).
pub(crate) struct Resident {
    lp: LinearProgram,
    opts: SolveOptions,
    cols: Vec<highs::Col>,
    model: Option<Model>,
}

impl Resident {
    /// Loads `lp` (validated here, as [`crate::lp::solve`] does) with the
    /// options `opts`; its integer columns are relaxed.
    pub(crate) fn new(lp: LinearProgram, opts: SolveOptions) -> Result<Self, LpError> {
        lp.validate()?;
        opts.validate()?;
        let (cols, model) = load_resident(&lp, &opts)?;
        Ok(Resident {
            lp,
            opts,
            cols,
            model: Some(model),
        })
    }

    /// The program as loaded, with the bounds changed since.
    pub(crate) fn program(&self) -> &LinearProgram {
        &self.lp
    }

    /// Changes column `col`'s bounds for the next solves.
    ///
    /// # Errors
    ///
    /// As [`LinearProgram::set_col_bounds`]; a solver left unusable by a
    /// failed solve.
    pub(crate) fn set_col_bounds(
        &mut self,
        col: usize,
        lower: f64,
        upper: f64,
    ) -> Result<(), LpError> {
        self.lp.set_col_bounds(col, lower, upper)?;
        let (Some(model), Some(&c)) = (self.model.as_mut(), self.cols.get(col)) else {
            return Err(LpError::Solver {
                stage: "bounds".into(),
                message: "the resident solver is gone after a failed solve".into(),
            });
        };
        model.change_column_bounds(c, inclusive(lower, upper));
        Ok(())
    }

    /// Solves the program with its current bounds.
    ///
    /// # Errors
    ///
    /// As [`crate::lp::solve`].
    pub(crate) fn solve(&mut self) -> Result<LpSolution, LpError> {
        let start = Instant::now();
        if self.lp.n_cols() == 0 {
            return Ok(empty_program(&self.lp, start));
        }
        let warm = self.solve_loaded(start)?;
        if !matches!(warm.status, LpStatus::Unknown(_)) {
            return Ok(warm);
        }
        // A warm start can leave HiGHS without a conclusion on a badly
        // scaled program that it settles from scratch: load the program
        // afresh (this instance serves the next solves too) and solve it cold.
        let (cols, model) = load_resident(&self.lp, &self.opts)?;
        self.cols = cols;
        self.model = Some(model);
        self.solve_loaded(start)
    }

    /// Solves the loaded model from where it stands, and keeps it for the
    /// next solve.
    fn solve_loaded(&mut self, start: Instant) -> Result<LpSolution, LpError> {
        let model = self.model.take().ok_or_else(|| LpError::Solver {
            stage: "solve".into(),
            message: "the resident solver is gone after a failed solve".into(),
        })?;
        let solved = model.try_solve().map_err(|status| LpError::Solver {
            stage: "solve".into(),
            message: format!(
                "HiGHS could not run the solve (status {status:?}); {}",
                describe(&self.lp, &self.opts)
            ),
        })?;
        let out = read_solution(&self.lp, &self.opts, &solved, false, start);
        self.model = Some(Model::from(solved));
        out
    }
}

/// Loads `lp` into a new HiGHS instance with the options `opts` (both
/// validated by the caller): the columns of the loaded model, and the model.
fn load_resident(
    lp: &LinearProgram,
    opts: &SolveOptions,
) -> Result<(Vec<highs::Col>, Model), LpError> {
    let (n_rows, n_cols) = (lp.n_rows(), lp.n_cols());
    if n_rows.max(n_cols).max(lp.nnz()) > MAX_HIGHS_INDEX {
        return Err(LpError::Solver {
            stage: "build".into(),
            message: format!("the program exceeds HiGHS's limit of {MAX_HIGHS_INDEX}"),
        });
    }
    let mut problem = ColProblem::new();
    let rows: Vec<Row> = (0..n_rows)
        .map(|i| {
            let (lo, hi) = lp
                .row_bounds(i)
                .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
            problem.add_row(inclusive(lo, hi))
        })
        .collect();
    let mut by_col: Vec<Vec<(Row, f64)>> = vec![Vec::new(); n_cols];
    for (i, &row) in rows.iter().enumerate() {
        for &(col, value) in lp.row_entries(i).unwrap_or(&[]) {
            if col < n_cols && value != 0.0 {
                by_col[col].push((row, value));
            }
        }
    }
    let sense = match lp.sense() {
        Sense::Minimise => highs::Sense::Minimise,
        Sense::Maximise => highs::Sense::Maximise,
    };
    let load_error = |status| LpError::Solver {
        stage: "load".into(),
        message: format!(
            "HiGHS rejected the model (status {status:?}); {}",
            describe(lp, opts)
        ),
    };
    let mut model = problem.try_optimise(sense).map_err(load_error)?;
    let mut cols = Vec::with_capacity(n_cols);
    for (j, entries) in by_col.into_iter().enumerate() {
        let cost = lp.cost(j).unwrap_or(0.0);
        let (lo, hi) = lp
            .col_bounds(j)
            .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        cols.push(
            model
                .try_add_column(cost, inclusive(lo, hi), entries)
                .map_err(load_error)?,
        );
    }
    apply_options(&mut model, opts)?;
    Ok((cols, model))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_name_what_the_crate_knows() {
        let mut lp = LinearProgram::new(Sense::Minimise);
        let x = lp.add_column(1e19, 0.0, 5.0, ColumnKind::Continuous);
        let y = lp.add_column(1.0, 0.0, f64::INFINITY, ColumnKind::Continuous);
        lp.add_row(1.0, f64::INFINITY, &[(x, 1e-8), (y, 1e14)]);
        let text = describe(&lp, &SolveOptions::default());
        assert_eq!(
            text,
            "the model has 1 rows, 2 columns, 2 non-zeros, |coefficients| in [1e-8, 100000000000000] \
             (a ratio above 1e10: badly scaled, a common cause of numerical failure), \
             |costs| up to 1e19, finite |bounds| up to 5, no time limit"
        );
        let text = describe(&lp, &SolveOptions::default().with_time_limit(2.5));
        assert!(text.ends_with("time limit 2.5 s"), "{text}");
        match map_status(HighsModelStatus::SolveError, || "context".into()) {
            Outcome::Failed(m) => assert_eq!(
                m,
                "HiGHS's solver failed, usually after numerical trouble (model status SolveError); context"
            ),
            _ => panic!("a solver error is a failure"),
        }
        match map_status(HighsModelStatus::Unknown, || "context".into()) {
            Outcome::Status(LpStatus::Unknown(m)) => {
                assert!(m.starts_with("HiGHS stopped without a conclusion"), "{m}");
                assert!(m.ends_with("; context"), "{m}");
            }
            _ => panic!("Unknown is a status"),
        }
    }
}

//! The compact ring-all-reduce ILP (per-GPU estimated busy time), its LP
//! relaxation and closed-form lower bound, and the server-aggregated
//! relaxation.

use crate::lp::{
    self, ColumnKind, ExactMipLimits, LinearProgram, LpError, LpStatus, Sense, SolveOptions,
};
use crate::model::GpuId;

use super::error::FormulationError;
use super::input::FormulationInput;
use super::report::{DEFAULT_LIMITS, MipReport, check_columns, solve_mip};

/// The area part of the lower bound: `Σ_j G_j ρ̂_j / (u·N)`, the average
/// per-GPU load. It is the LP relaxation's optimum **without** the valid
/// inequality `θ ≥ ρ̂_j/u` (spreading every job uniformly,
/// `a_{j,g} = G_j/N`, attains it, and summing the per-GPU rows shows no
/// point does better).
pub fn area_lower_bound(input: &FormulationInput) -> f64 {
    let work: f64 = input
        .jobs()
        .iter()
        .map(|j| f64::from(j.gpus) * j.est_exec_slots)
        .sum();
    work / (input.est_upper() * f64::from(input.total_gpus()))
}

/// The closed-form lower bound `LB = max( max_j ρ̂_j/u, Σ_j G_j ρ̂_j/(u·N) )`
/// on the makespan (slots) of `input`: the optimum of the compact ILP's LP
/// relaxation with the valid inequality `θ ≥ ρ̂_j/u` ([`lp_lower_bound`]
/// computes the same number with the solver). The formula and its proof live
/// in [`sjf_bco::lower_bound_closed_form`](crate::algorithms::sjf_bco::lower_bound_closed_form),
/// which this evaluates on `input`'s jobs; without the valid inequality the
/// LP is only worth the second term ([`area_lower_bound`]).
///
/// It bounds the makespan of **every** schedule whose jobs satisfy the
/// estimate contract `ρ̂_j/u ≤ ρ_j`. No solver is needed.
pub fn lower_bound_closed_form(input: &FormulationInput) -> f64 {
    let jobs: Vec<(u32, f64)> = input
        .jobs()
        .iter()
        .map(|j| (j.gpus, j.est_exec_slots))
        .collect();
    crate::algorithms::sjf_bco::lower_bound_closed_form(
        &jobs,
        input.est_upper(),
        u64::from(input.total_gpus()),
    )
}

/// Which optional rows the compact ILP gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactForm {
    /// The valid inequality `θ ≥ ρ̂_j/u` for every job (default on), stated
    /// as the lower bound `max_j ρ̂_j/u` of the column `θ`. It does not
    /// change the ILP's optimum; it lifts the LP relaxation from the area
    /// bound to [`lower_bound_closed_form`].
    pub valid_inequality: bool,
    /// Symmetry-breaking rows (default [`Symmetry::Off`]: measured, HiGHS
    /// without presolve solves this program faster without them).
    pub symmetry: Symmetry,
}

/// Symmetry-breaking rows of the compact ILP, on the GPU loads
/// `L_g = Σ_j (ρ̂_j/u)·a_{j,g}`. Neither changes the optimum: permuting the
/// loads of interchangeable GPUs keeps a solution feasible with the same
/// `θ`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Symmetry {
    /// No symmetry rows (default).
    #[default]
    Off,
    /// `L_{s,i} ≥ L_{s,i+1}` inside each server (`N − |S|` rows): GPUs of one
    /// server are interchangeable.
    WithinServers,
    /// `L_g ≥ L_{g+1}` over all GPUs in [`FormulationInput::gpu_ids`] order
    /// (`N − 1` rows). Valid because no row of the compact ILP mentions a
    /// server: all `N` GPUs are interchangeable (the server structure enters
    /// only the server-aggregated relaxation and the time-indexed program).
    AllGpus,
}

impl Default for CompactForm {
    fn default() -> Self {
        CompactForm {
            valid_inequality: true,
            symmetry: Symmetry::Off,
        }
    }
}

/// A built load-balancing program (compact or server-aggregated): the
/// [`LinearProgram`] and where its columns are.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadModel {
    lp: LinearProgram,
    jobs: usize,
    stride: usize,
}

impl LoadModel {
    /// The program (minimise `θ`).
    pub fn lp(&self) -> &LinearProgram {
        &self.lp
    }

    /// The column of `θ` (the last one).
    pub fn theta_column(&self) -> usize {
        self.jobs * self.stride
    }

    /// The column of job `job`'s variable on GPU `k` (compact ILP:
    /// `a_{j,g}`, GPUs in [`FormulationInput::gpu_ids`] order) or on server
    /// `k` (server-aggregated: `y_{j,s}`); `None` out of range.
    pub fn column(&self, job: usize, k: usize) -> Option<usize> {
        (job < self.jobs && k < self.stride).then_some(job * self.stride + k)
    }
}

/// Builds the compact ring-all-reduce ILP (no solver needed):
///
/// ```text
/// minimise    θ
/// subject to  Σ_g a_{j,g} = G_j                       ∀ j       (gang size)
///             Σ_j (ρ̂_j/u)·a_{j,g} ≤ θ                 ∀ g       (per-GPU estimated busy time)
///             θ ≥ ρ̂_j/u                               ∀ j       (valid inequality, optional)
///             L_g ≥ L_{g+1}                           (symmetry breaking, optional; see Symmetry)
///             a_{j,g} ∈ {0,1},  θ ≥ 0
/// ```
///
/// `|J|·N` binaries, `θ`, and `|J| + N` rows (plus `N − 1` or `N − |S|`
/// symmetry rows). The column count is checked against `max_columns`
/// (`None`: no cap) before anything is allocated.
///
/// # Errors
///
/// [`FormulationError::TooLarge`] above `max_columns`.
pub fn build_compact(
    input: &FormulationInput,
    form: CompactForm,
    max_columns: Option<usize>,
) -> Result<LoadModel, FormulationError> {
    let n = input.total_gpus() as usize;
    let jobs = input.jobs().len();
    check_columns(max_columns, "compact ILP", jobs as u128 * n as u128 + 1)?;
    let mut lp = LinearProgram::new(Sense::Minimise);
    for _ in 0..jobs * n {
        lp.add_binary_column(0.0);
    }
    let theta_lower = if form.valid_inequality {
        max_load(input)
    } else {
        0.0
    };
    let theta = lp.add_column(1.0, theta_lower, f64::INFINITY, ColumnKind::Continuous);
    for (j, job) in input.jobs().iter().enumerate() {
        let row: Vec<(usize, f64)> = (0..n).map(|g| (j * n + g, 1.0)).collect();
        let g = f64::from(job.gpus);
        lp.add_row(g, g, &row);
    }
    for g in 0..n {
        let mut row: Vec<(usize, f64)> = (0..jobs).map(|j| (j * n + g, input.load(j))).collect();
        row.push((theta, -1.0));
        lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    }
    add_symmetry_rows(&mut lp, input, form.symmetry);
    Ok(LoadModel {
        lp,
        jobs,
        stride: n,
    })
}

/// `max_j ρ̂_j / u`.
fn max_load(input: &FormulationInput) -> f64 {
    (0..input.jobs().len())
        .map(|j| input.load(j))
        .fold(0.0, f64::max)
}

/// `Σ_j (ρ̂_j/u)(a_{j,g} − a_{j,g+1}) ≥ 0` for the consecutive GPU pairs
/// `(g, g + 1)` that `symmetry` orders.
fn add_symmetry_rows(lp: &mut LinearProgram, input: &FormulationInput, symmetry: Symmetry) {
    let n = input.total_gpus() as usize;
    let mut last_of_server = vec![false; n];
    let mut end = 0usize;
    for s in input.servers() {
        end += s.gpus as usize;
        last_of_server[end - 1] = true;
    }
    for (g, &last) in last_of_server.iter().enumerate().take(n.saturating_sub(1)) {
        let ordered = match symmetry {
            Symmetry::Off => false,
            Symmetry::WithinServers => !last,
            Symmetry::AllGpus => true,
        };
        if !ordered {
            continue;
        }
        let row: Vec<(usize, f64)> = (0..input.jobs().len())
            .flat_map(|j| {
                let l = input.load(j);
                [(j * n + g, l), (j * n + g + 1, -l)]
            })
            .collect();
        lp.add_row(0.0, f64::INFINITY, &row);
    }
}

/// Options of [`solve_compact_ilp`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CompactOptions {
    /// Optional rows.
    pub form: CompactForm,
    /// Solve limits (default [`DEFAULT_LIMITS`]; presolve is always off);
    /// `max_columns` bounds `|J|·N + 1`.
    pub limits: ExactMipLimits,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            form: CompactForm::default(),
            limits: DEFAULT_LIMITS,
        }
    }
}

/// The result of [`solve_compact_ilp`].
#[derive(Debug, Clone, PartialEq)]
pub struct CompactSolution {
    /// How the MIP solve ended. Its incumbent is `θ*_ILP` only when
    /// [`MipReport::optimal`]; its dual bound always bounds `θ*_ILP` (and
    /// hence every makespan) from below.
    pub report: MipReport,
    /// `max_g Σ_j (ρ̂_j/u)·a_{j,g}` of the incumbent's assignment, recomputed
    /// from the rounded point; `None` without incumbent.
    pub theta: Option<f64>,
    /// The incumbent: each job's GPUs, in input job order.
    pub assignment: Option<Vec<Vec<GpuId>>>,
    /// The incumbent's per-GPU loads, in [`FormulationInput::gpu_ids`] order.
    pub(crate) gpu_loads: Option<Vec<f64>>,
    /// [`lower_bound_closed_form`] of the input.
    pub(crate) closed_form_bound: f64,
}

impl CompactSolution {
    /// The best proven lower bound on the makespan of any schedule meeting
    /// the estimate contract: the larger of the MIP's dual bound and the
    /// closed form. Equals `θ*_ILP` (within the gap) when the solve is
    /// optimal.
    pub fn lower_bound(&self) -> f64 {
        self.report.info.dual_bound.max(self.closed_form_bound)
    }
}

/// Solves the compact ILP ([`build_compact`]) with HiGHS, **without
/// presolve**.
///
/// `θ*_ILP` is the smallest per-GPU budget `θ_u` for which the jobs' loads
/// `ρ̂_j/u` can be packed onto GPUs with each job on `G_j` distinct GPUs;
/// with per-job constant estimates it is exactly the tightest limit of
/// Yu, Ji, Rajan, Liu (ACM MobiHoc 2022)'s budget feasibility problem.
/// It is a **lower bound** on the makespan of every schedule meeting the
/// estimate contract (each GPU is busy at least its load), and at most the
/// maximum load `max_g U[g]` of any assignment, SJF-BCO's included.
///
/// A solve stopped at a time limit is reported with [`MipReport::optimal`]
/// false; its dual bound is still a valid lower bound
/// ([`CompactSolution::lower_bound`]).
///
/// # Errors
///
/// [`FormulationError::InvalidOption`] for invalid limits,
/// [`FormulationError::TooLarge`], [`FormulationError::Lp`] (with
/// [`LpError::SolverUnavailable`] without the `highs` feature), and an
/// [`LpError::Solver`] of stage `"check"` if the rounded incumbent does not
/// give some job exactly `G_j` GPUs.
pub fn solve_compact_ilp(
    input: &FormulationInput,
    opts: &CompactOptions,
) -> Result<CompactSolution, FormulationError> {
    opts.limits.validate()?;
    let model = build_compact(input, opts.form, opts.limits.max_columns)?;
    let (report, primal) = solve_mip(model.lp(), &opts.limits, "compact ILP", "")?;
    let mut solution = CompactSolution {
        report,
        theta: None,
        assignment: None,
        gpu_loads: None,
        closed_form_bound: lower_bound_closed_form(input),
    };
    if primal.is_empty() {
        return Ok(solution);
    }
    let ids = input.gpu_ids();
    let mut loads = vec![0.0; ids.len()];
    let mut assignment = Vec::with_capacity(input.jobs().len());
    for (j, job) in input.jobs().iter().enumerate() {
        let gpus: Vec<usize> = (0..ids.len())
            .filter(|&g| model.column(j, g).is_some_and(|c| primal[c] >= 0.5))
            .collect();
        if gpus.len() != job.gpus as usize {
            return Err(check_error(format!(
                "the compact ILP's incumbent gives {} {} GPUs, not {}",
                job.id,
                gpus.len(),
                job.gpus
            )));
        }
        for &g in &gpus {
            loads[g] += input.load(j);
        }
        assignment.push(gpus.into_iter().map(|g| ids[g]).collect());
    }
    solution.theta = Some(loads.iter().copied().fold(0.0, f64::max));
    solution.assignment = Some(assignment);
    solution.gpu_loads = Some(loads);
    Ok(solution)
}

fn check_error(message: String) -> FormulationError {
    FormulationError::Lp(LpError::Solver {
        stage: "check".into(),
        message,
    })
}

/// The LP relaxation's optimum, from [`lp_lower_bound`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LpBoundReport {
    /// The optimum of the relaxation, slots: a lower bound on the makespan
    /// of every schedule meeting the estimate contract (valid up to the
    /// solver's tolerances; [`lower_bound_closed_form`] is the same number
    /// without a solver).
    pub value: f64,
    /// The solver's status ([`LpStatus::Optimal`]).
    pub status: LpStatus,
    /// Wall-clock seconds in the solver.
    pub seconds: f64,
    /// Columns of the program.
    pub columns: usize,
    /// Rows of the program.
    pub rows: usize,
}

/// Solves the LP relaxation of the compact ILP (`a_{j,g} ∈ [0, 1]`, no
/// symmetry rows, presolve off), with or without the valid inequality.
///
/// With it the optimum is [`lower_bound_closed_form`]; without it,
/// [`area_lower_bound`].
///
/// # Errors
///
/// [`FormulationError::TooLarge`] above `max_columns`,
/// [`FormulationError::Lp`] (with [`LpError::SolverUnavailable`] without
/// the `highs` feature), [`FormulationError::UnexpectedStatus`] if the LP
/// does not end optimal.
pub fn lp_lower_bound(
    input: &FormulationInput,
    valid_inequality: bool,
    max_columns: Option<usize>,
) -> Result<LpBoundReport, FormulationError> {
    let form = CompactForm {
        valid_inequality,
        symmetry: Symmetry::Off,
    };
    let model = build_compact(input, form, max_columns)?;
    let so = SolveOptions::default()
        .with_relax_integrality(true)
        .with_presolve(false);
    let sol = lp::solve(model.lp(), &so)?;
    match (sol.status.is_optimal(), sol.objective) {
        (true, Some(value)) => Ok(LpBoundReport {
            value,
            status: sol.status,
            seconds: sol.seconds,
            columns: model.lp().n_cols(),
            rows: model.lp().n_rows(),
        }),
        _ => Err(FormulationError::UnexpectedStatus {
            formulation: "compact LP relaxation",
            status: sol.status,
        }),
    }
}

/// Builds the server-aggregated relaxation (no solver needed):
///
/// ```text
/// minimise    θ
/// subject to  Σ_s y_{j,s} = G_j                         ∀ j
///             Σ_j (ρ̂_j/u)·y_{j,s} ≤ θ·O_s               ∀ s
///             θ ≥ ρ̂_j/u                                 ∀ j   (as θ's lower bound)
///             y_{j,s} ∈ {0, …, min(G_j, O_s)}
/// ```
///
/// `|J|·|S|` integers and `θ`; `|J| + |S|` rows.
///
/// # Errors
///
/// [`FormulationError::TooLarge`] above `max_columns`.
pub fn build_server_aggregated(
    input: &FormulationInput,
    max_columns: Option<usize>,
) -> Result<LoadModel, FormulationError> {
    let servers = input.servers();
    let (ns, jobs) = (servers.len(), input.jobs().len());
    check_columns(
        max_columns,
        "server-aggregated ILP",
        jobs as u128 * ns as u128 + 1,
    )?;
    let mut lp = LinearProgram::new(Sense::Minimise);
    for job in input.jobs() {
        for s in servers {
            let cap = f64::from(job.gpus.min(s.gpus));
            lp.add_column(0.0, 0.0, cap, ColumnKind::Integer);
        }
    }
    let theta_lower = max_load(input);
    let theta = lp.add_column(1.0, theta_lower, f64::INFINITY, ColumnKind::Continuous);
    for (j, job) in input.jobs().iter().enumerate() {
        let row: Vec<(usize, f64)> = (0..ns).map(|s| (j * ns + s, 1.0)).collect();
        let g = f64::from(job.gpus);
        lp.add_row(g, g, &row);
    }
    for (s, server) in servers.iter().enumerate() {
        let mut row: Vec<(usize, f64)> = (0..jobs).map(|j| (j * ns + s, input.load(j))).collect();
        row.push((theta, -f64::from(server.gpus)));
        lp.add_row(f64::NEG_INFINITY, 0.0, &row);
    }
    Ok(LoadModel {
        lp,
        jobs,
        stride: ns,
    })
}

/// The result of [`solve_server_aggregated`].
#[derive(Debug, Clone, PartialEq)]
pub struct AggregatedSolution {
    /// How the MIP solve ended; its dual bound bounds the relaxation's
    /// optimum, hence `θ*_ILP` and every makespan, from below.
    pub report: MipReport,
    /// `max(max_j ρ̂_j/u, max_s Σ_j (ρ̂_j/u)·y_{j,s} / O_s)` of the
    /// incumbent (its objective); `None` without incumbent.
    pub theta: Option<f64>,
    /// The incumbent's per-server GPU counts `y_{j,s}`, jobs in input order,
    /// servers in input order.
    pub(crate) counts: Option<Vec<Vec<u32>>>,
    /// [`lower_bound_closed_form`] of the input.
    pub(crate) closed_form_bound: f64,
}

impl AggregatedSolution {
    /// The larger of the dual bound and the closed form: a lower bound on
    /// `θ*_ILP` and on every makespan meeting the estimate contract.
    pub fn lower_bound(&self) -> f64 {
        self.report.info.dual_bound.max(self.closed_form_bound)
    }
}

/// Solves the server-aggregated relaxation ([`build_server_aggregated`])
/// with HiGHS, **without presolve**.
///
/// It relaxes the compact ILP (a compact solution's per-server counts are
/// feasible with the same `θ`: a server's load is the sum of its GPUs'
/// loads, each at most `θ`), ignoring bin packing inside a server, so
/// `LB ≤ θ*_agg ≤ θ*_ILP`. It is much smaller (`|J|·|S|` integers) and
/// meant for mid-size instances.
///
/// `limits` are usually [`DEFAULT_LIMITS`]; `max_columns` bounds
/// `|J|·|S| + 1`.
///
/// # Errors
///
/// As [`solve_compact_ilp`].
pub fn solve_server_aggregated(
    input: &FormulationInput,
    limits: &ExactMipLimits,
) -> Result<AggregatedSolution, FormulationError> {
    limits.validate()?;
    let model = build_server_aggregated(input, limits.max_columns)?;
    let (report, primal) = solve_mip(model.lp(), limits, "server-aggregated ILP", "")?;
    let mut solution = AggregatedSolution {
        report,
        theta: None,
        counts: None,
        closed_form_bound: lower_bound_closed_form(input),
    };
    if primal.is_empty() {
        return Ok(solution);
    }
    let servers = input.servers();
    let mut load = vec![0.0; servers.len()];
    let mut counts = Vec::with_capacity(input.jobs().len());
    for (j, job) in input.jobs().iter().enumerate() {
        let y: Vec<u32> = (0..servers.len())
            .map(|s| {
                model
                    .column(j, s)
                    .map_or(0, |c| primal[c].round().max(0.0) as u32)
            })
            .collect();
        if y.iter().sum::<u32>() != job.gpus {
            return Err(check_error(format!(
                "the server-aggregated incumbent gives {} {} GPUs, not {}",
                job.id,
                y.iter().sum::<u32>(),
                job.gpus
            )));
        }
        for (s, &c) in y.iter().enumerate() {
            load[s] += input.load(j) * f64::from(c);
        }
        counts.push(y);
    }
    solution.theta = Some(
        load.iter()
            .zip(servers)
            .map(|(l, s)| l / f64::from(s.gpus))
            .fold(max_load(input), f64::max),
    );
    solution.counts = Some(counts);
    Ok(solution)
}

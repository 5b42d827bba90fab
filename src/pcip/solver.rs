//! Best-of-k rounding trials with repair and an exact-MIP fallback, and the
//! certificate of the result ([algorithms guide, sections
//! 1.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-pipeline) and [1.7](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-certificate)).

use std::time::Instant;

use super::bounds::{Beta, RowBounds, beta_for, row_failure_bounds};
use super::error::{Field, PcError, RepairFailure, RowClass};
use super::neighbourhood::{self, Neighbourhood};
use super::problem::{PcProblem, evaluate};
use super::relax::{ExactResult, LpRelaxation, MipOptions, solve_exact, solve_lp};
use super::repair::{MoveSource, RepairOptions, Search, repair, repair_with, repair_within};
use super::rounding::{round_independent, scaled_point, trial_rng};
use super::structure::{Derive, Structure, round_structured};
use crate::certificate::{
    Bound, BoundKind, Certificate, ConstraintClass, ExactInfo, ExactStatus, FeasibilityReport,
    Guarantee, GuaranteeScope, RunInfo, Sense,
};
use crate::lp::{self, LpStatus, SolveOptions};
use crate::model::units::Num;

/// When the exact MIP runs in the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ExactMode {
    /// Never: a repair failure in every trial is an error.
    Never,
    /// Only when every rounding trial fails to repair (the default).
    #[default]
    Fallback,
    /// Always, before the trials; its optimum is returned when proven.
    Always,
    /// Like `Always` on small instances, like `Fallback` otherwise.
    IfSmall {
        /// Most variables that count as small.
        max_vars: usize,
        /// Most non-zeros that count as small.
        max_nnz: usize,
    },
}

/// The rounding pipeline's parameters ([algorithms guide, section
/// 1.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-pipeline)).
#[derive(Debug, Clone, PartialEq)]
pub struct RoundingSolver {
    /// Scaling rule (default β = 1).
    pub beta: Beta,
    /// Rounding trials k (default 16).
    pub trials: u32,
    /// Seed; trial t uses ChaCha8 stream t of this seed (default 0).
    pub seed: u64,
    /// Repair options.
    pub repair: RepairOptions,
    /// When the exact MIP runs.
    pub exact: ExactMode,
    /// Options of the LP relaxation. Its time limit bounds the LP solve
    /// only.
    pub lp: SolveOptions,
    /// Options of the exact MIP. Its time limit bounds the MIP solve only:
    /// the LP relaxation runs before it, so to bound the whole call set
    /// [`time_limit_s`](Self::time_limit_s).
    pub mip: MipOptions,
    /// Wall-clock limit of a whole [`solve`](Self::solve) call, in seconds
    /// (default `None`: no limit beyond each solver's own). The LP
    /// relaxation and the MIP each get at most what is left of it (and at
    /// most their own limits); trials stop when it is spent. Reaching it
    /// with a feasible point is not an error: the best point so far is
    /// returned, with its certificate. When the budget runs out before
    /// the trials and no point is known, one trial still runs (one rounding
    /// and one repair, far cheaper than the LP). When the LP relaxation
    /// itself stops at a time limit (this one or its own), the answer is the
    /// greedy repair of the zero point with the improvement phase
    /// ([`Method::Greedy`]): no LP, so the certificate's bound is the
    /// trivial one ([`BoundKind::Trivial`]); if that repair fails too,
    /// [`PcError::TimeLimit`]. Every stage checks the budget, and the run
    /// record keeps one entry per stage, so neither time nor memory grows
    /// with the limit beyond what the stages use.
    pub time_limit_s: Option<f64>,
    /// The sub-MIP neighbourhood search run on the best rounded point
    /// (default `Some` with [`Neighbourhood::default`]; `None` skips it):
    /// the integer columns where that point and the LP point agree are
    /// fixed, the MIP solver searches the others under a node limit, and a
    /// point it finds replaces the rounded one only when [`evaluate`]
    /// accepts it and it is strictly better ([`Method::Neighbourhood`]).
    /// With [`time_limit_s`](Self::time_limit_s) the search continues while
    /// time is left, around the best point so far, with three times as many
    /// free columns per row each round, until every column is free or a
    /// round neither widens the neighbourhood nor improves the point. A
    /// point with an integer value beyond
    /// [`MAX_INTEGER_BOUND`](crate::lp::MAX_INTEGER_BOUND) is not searched
    /// (HiGHS can spin on such domains whatever its time limit).
    pub neighbourhood: Option<Neighbourhood>,
    /// Seconds to spend, after the trials, on a stronger bound: the exact
    /// MIP (without presolve, since its dual bound serves as a proof) under
    /// this time limit and what is left of the budget (default `None`: no
    /// such solve). Its dual bound enters the certificate as
    /// [`BoundKind::MipDual`] when tighter than the LP's; its incumbent is
    /// returned when strictly better than the pipeline's point. Skipped when
    /// the MIP already ran.
    pub bound_budget_s: Option<f64>,
}

impl Default for RoundingSolver {
    fn default() -> Self {
        RoundingSolver {
            beta: Beta::One,
            trials: 16,
            seed: 0,
            repair: RepairOptions::default(),
            exact: ExactMode::Fallback,
            lp: SolveOptions::default(),
            mip: MipOptions::default(),
            time_limit_s: None,
            neighbourhood: Some(Neighbourhood::default()),
            bound_budget_s: None,
        }
    }
}

/// What became of one rounding trial.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum TrialOutcome {
    /// Repair reached a feasible point.
    Repaired {
        /// Its objective (user's sense).
        objective: f64,
        /// Unit repair steps.
        moves: u64,
    },
    /// Repair failed.
    Failed {
        /// Remaining covering deficit.
        total_deficit: f64,
    },
}

/// Statistics of one rounding trial.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TrialRecord {
    /// Trial index (its stream).
    pub(crate) trial: u32,
    /// Objective of the rounded point before repair.
    pub pre_repair_objective: f64,
    /// Whether the rounded point was feasible before repair.
    pub pre_repair_feasible: bool,
    /// Outcome of repair.
    pub outcome: TrialOutcome,
}

/// Which step produced the returned point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Method {
    /// A rounding trial (and its repair).
    Rounding {
        /// The trial.
        trial: u32,
    },
    /// The exact MIP, run before the trials.
    Exact,
    /// The exact MIP, run because every trial failed.
    ExactFallback,
    /// The sub-MIP neighbourhood search around a rounding trial's point
    /// ([`RoundingSolver::neighbourhood`]).
    Neighbourhood {
        /// The trial whose point the search started from.
        trial: u32,
    },
    /// The greedy repair from the zero point (with the improvement phase),
    /// run because the LP relaxation stopped at a time limit: a feasible
    /// point without the LP's bound (the certificate's bound is trivial).
    Greedy,
}

/// Result of [`RoundingSolver::solve`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct PcSolution {
    /// The point (integer columns exactly integral).
    pub x: Vec<f64>,
    /// Its objective (user's sense).
    pub objective: f64,
    /// Which step produced it.
    pub method: Method,
    /// The LP relaxation (`None` when it stopped at a time limit and the
    /// point comes from [`Method::Greedy`]).
    pub lp: Option<LpRelaxation>,
    /// The β used (`None` without the LP).
    pub beta: Option<f64>,
    /// The a-priori per-row failure bounds of one trial (Chernoff tails per
    /// row, combined by Harris–FKG within a class and a union bound across
    /// classes); `None` without the LP.
    pub row_bounds: Option<RowBounds>,
    /// The exact MIP result, if it ran.
    pub exact: Option<ExactResult>,
    /// Per-trial statistics.
    pub trials: Vec<TrialRecord>,
    /// The certificate: bounds, guarantees, feasibility (rechecked by
    /// [`evaluate`](crate::pcip::evaluate)) and run record.
    pub certificate: Certificate,
}

impl PcSolution {
    /// The point as unsigned integers (continuous columns rounded down).
    pub fn x_int(&self) -> Vec<u32> {
        self.x
            .iter()
            .map(|v| v.floor().clamp(0.0, f64::from(u32::MAX)) as u32)
            .collect()
    }
}

/// A model's hooks into [`RoundingSolver::solve_with`]: choice groups for
/// structured rounding, a derivation run after rounding, and repair moves.
/// Each is optional; [`Hooks::new`] has none, which is
/// [`RoundingSolver::solve`].
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{ChoiceGroup, Hooks, PcBuilder, PcProblem, RoundingSolver, Structure};
/// // Two modes (columns 0, 1; at most one) owning worker counts 2, 3; server
/// // count 4 = ⌈workers / 2⌉ is derived; work ≥ 3; each worker needs its mode.
/// let p = PcBuilder::new(Sense::Minimise, 5)
///     .objective(vec![1.0, 2.0, 1.0, 1.0, 1.0])
///     .binary(0).binary(1).upper(2, Some(4)).upper(3, Some(4)).upper(4, Some(2))
///     .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
///     .covering_row(&[(2, 1.0), (3, 1.0)], 3.0)
///     .linking_row(&[(2, 1.0), (0, -4.0)], dmlsched::pcip::RowSense::Le, 0.0)
///     .linking_row(&[(3, 1.0), (1, -4.0)], dmlsched::pcip::RowSense::Le, 0.0)
///     .linking_row(&[(4, 2.0), (2, -1.0), (3, -1.0)], dmlsched::pcip::RowSense::Ge, 0.0)
///     .build().unwrap();
/// let s = Structure::new(&p, vec![ChoiceGroup::new().member(0, &[2]).member(1, &[3])]).unwrap();
/// let servers = |_: &PcProblem, x: &mut [f64]| x[4] = ((x[2] + x[3]) / 2.0).ceil();
/// let hooks = Hooks::new().with_groups(&s).with_derive(&servers);
/// #[cfg(feature = "highs")]
/// {
///     let sol = RoundingSolver::default().solve_with(&p, &hooks).unwrap();
///     assert_eq!(sol.x, vec![1.0, 0.0, 3.0, 0.0, 2.0]);
/// }
/// ```
#[derive(Clone, Copy, Default)]
pub struct Hooks<'a> {
    structure: Option<&'a Structure>,
    derive: Option<&'a dyn Derive>,
    moves: Option<&'a dyn MoveSource>,
}

impl std::fmt::Debug for Hooks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hooks")
            .field("structure", &self.structure)
            .field("derive", &self.derive.is_some())
            .field("moves", &self.moves.is_some())
            .finish()
    }
}

impl<'a> Hooks<'a> {
    /// No hook: independent rounding, no derivation, generic repair.
    pub fn new() -> Self {
        Hooks::default()
    }

    /// Rounds with [`round_structured`] over these choice groups (with
    /// `λ = β`) instead of independently.
    pub fn with_groups(mut self, structure: &'a Structure) -> Self {
        self.structure = Some(structure);
        self
    }

    /// Calls `derive` on every rounded point, before repair.
    pub fn with_derive(mut self, derive: &'a dyn Derive) -> Self {
        self.derive = Some(derive);
        self
    }

    /// Repairs with [`repair_with`] and these moves instead of
    /// [`repair`].
    pub fn with_moves(mut self, moves: &'a dyn MoveSource) -> Self {
        self.moves = Some(moves);
        self
    }

    /// The choice groups, when there is at least one.
    fn groups(&self) -> Option<&'a Structure> {
        self.structure.filter(|s| !s.is_empty())
    }
}

/// How one trial rounds and repairs: the scaled point, the LP point and β
/// (for structured rounding), and the hooks.
struct Rounder<'a> {
    y: &'a [f64],
    lp_x: &'a [f64],
    beta: f64,
    hooks: &'a Hooks<'a>,
}

impl Rounder<'_> {
    /// Rounds with trial `t`'s stream, then derives.
    fn round(&self, p: &PcProblem, seed: u64, t: u32) -> Result<Vec<f64>, PcError> {
        let mut rng = trial_rng(seed, u64::from(t));
        let mut x = match self.hooks.groups() {
            Some(s) => round_structured(p, s, self.lp_x, self.beta, &mut rng)?,
            None => round_independent(p, self.y, &mut rng),
        };
        if let Some(d) = self.hooks.derive {
            d.derive(p, &mut x);
        }
        Ok(x)
    }

    fn repair(
        &self,
        p: &PcProblem,
        x: &mut [f64],
        opts: &RepairOptions,
    ) -> Result<super::RepairReport, PcError> {
        match self.hooks.moves {
            Some(m) => repair_with(p, x, opts, m),
            None => repair(p, x, opts),
        }
    }
}

/// The best point so far: point, objective, method.
type Best = (Vec<f64>, f64, Method);

/// What the rounding trials produced (besides the best point).
struct Trials {
    records: Vec<TrialRecord>,
    least_bad: Option<RepairFailure>,
    proven_by_bound: bool,
    moves: u64,
}

/// The wall-clock budget of one [`RoundingSolver::solve`] call.
struct Budget {
    start: Instant,
    limit_s: Option<f64>,
}

impl Budget {
    fn start(limit_s: Option<f64>) -> Result<Self, PcError> {
        if let Some(t) = limit_s
            && (t.is_nan() || t <= 0.0)
        {
            return Err(PcError::InvalidOption {
                option: "time_limit_s",
                reason: format!("must be positive, got {}", Num(t)),
            });
        }
        Ok(Budget {
            start: Instant::now(),
            limit_s,
        })
    }

    /// Seconds left (`None` without a budget).
    fn remaining(&self) -> Option<f64> {
        self.limit_s.map(|t| t - self.start.elapsed().as_secs_f64())
    }

    fn expired(&self) -> bool {
        self.remaining().is_some_and(|r| r <= 0.0)
    }

    /// [`cap`](Self::cap) for an optional own limit: `Some(None)` (no limit
    /// at all) when there is neither an own limit nor a budget.
    fn cap_opt(&self, own: Option<f64>) -> Option<Option<f64>> {
        match (own, self.remaining()) {
            (None, None) => Some(None),
            (own, _) => self.cap(own.unwrap_or(f64::INFINITY)).map(Some),
        }
    }

    /// A solver limit of `own` seconds cut to what is left; `None` when
    /// nothing is left.
    fn cap(&self, own: f64) -> Option<f64> {
        match self.remaining() {
            None => Some(own),
            Some(r) if r > 0.0 => Some(own.min(r)),
            Some(_) => None,
        }
    }

    /// `opts` with its time limit cut to what is left of the budget.
    fn lp_options(
        &self,
        opts: &SolveOptions,
        stage: &'static str,
    ) -> Result<SolveOptions, PcError> {
        let own = opts.time_limit_s.unwrap_or(f64::INFINITY);
        match (self.remaining(), self.cap(own)) {
            (None, _) => Ok(opts.clone()),
            (Some(_), Some(t)) => Ok(opts.clone().with_time_limit(t)),
            (Some(_), None) => Err(self.error(stage)),
        }
    }

    fn error(&self, stage: &'static str) -> PcError {
        PcError::TimeLimit {
            stage,
            limit_s: self.limit_s.unwrap_or(f64::INFINITY),
        }
    }
}

/// The error when no point was found: the MIP's limit, the time budget, or
/// the least bad repair failure.
fn no_point(
    exact: Option<&ExactResult>,
    least_bad: Option<RepairFailure>,
    clock: &Budget,
) -> PcError {
    if let Some(e) = exact
        && e.x.is_none()
        && let ExactStatus::Limit { .. } = e.info.status
    {
        return PcError::MipNoIncumbent {
            status: e.solver_status.clone(),
        };
    }
    // Out of time with no point: the limit stopped the search (the MIP
    // fallback had no time left), whatever the trials' repairs said.
    if clock.expired() {
        return clock.error("rounding");
    }
    PcError::RepairFailed(Box::new(least_bad.unwrap_or(RepairFailure {
        uncovered: Vec::new(),
        still_violated: Vec::new(),
        blocking_rows: Vec::new(),
        saturated_cols: Vec::new(),
        total_deficit: f64::INFINITY,
    })))
}

/// Whether `e` says the LP relaxation stopped at a time limit (its own, or
/// the whole solve's budget).
fn stopped_by_time(e: &PcError) -> bool {
    matches!(
        e,
        PcError::LpLimit {
            status: LpStatus::TimeLimit
        } | PcError::TimeLimit { .. }
    )
}

/// The bound every point respects by its box alone: in the canonical
/// minimisation `Σ_j min(0, c_j)·u_j` (`0` when no cost is negative, `−∞`
/// when a negative cost has no upper bound), reported in the user's sense.
pub(crate) fn trivial_bound(p: &PcProblem) -> Bound {
    let canonical = |v: f64| match p.sense() {
        Sense::Minimise => v,
        Sense::Maximise => -v,
    };
    let lower: f64 = p
        .objective()
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            let c = canonical(v);
            if c < 0.0 { c * p.upper(j) } else { 0.0 }
        })
        .sum();
    Bound::new(canonical(lower) + 0.0, BoundKind::Trivial)
}

/// The first integer column whose finite upper bound exceeds what the MIP
/// solver takes ([`lp::MAX_INTEGER_BOUND`], `2^30`), with that bound.
fn mip_bound_beyond_range(p: &PcProblem) -> Option<(usize, f64)> {
    (0..p.n_vars())
        .find(|&j| p.is_integer(j) && p.upper(j).is_finite() && p.upper(j) > lp::MAX_INTEGER_BOUND)
        .map(|j| (j, p.upper(j)))
}

/// The input error of an integer bound the exact MIP cannot take.
fn mip_bound_error(col: usize, value: f64) -> PcError {
    PcError::OutOfRange {
        what: Field::Upper,
        row: None,
        label: None,
        col: Some(col),
        value,
        limit: lp::MAX_INTEGER_BOUND,
    }
}

/// Whether `a` is strictly better than `b` in `sense`.
fn better(sense: Sense, a: f64, b: f64) -> bool {
    match sense {
        Sense::Minimise => a < b,
        Sense::Maximise => a > b,
    }
}

impl RoundingSolver {
    /// Runs the pipeline: LP relaxation; the exact MIP first when
    /// [`ExactMode`] says so; k rounding trials, each repaired, keeping the
    /// strictly best (ties to the lower trial); the MIP as a fallback when no
    /// trial repairs; an early stop when an integral objective meets the LP
    /// bound; and the certificate.
    ///
    /// # Guarantee
    ///
    /// The returned point is feasible (checked by [`evaluate`]); the
    /// certificate's bound is the safe LP dual bound (or the MIP's dual
    /// bound when tighter). A-priori statements (G1, success probability) are
    /// reported, not enforced.
    ///
    /// # Complexity
    ///
    /// One LP, plus `k × (O(nnz) rounding + repair)`, plus the MIP when it
    /// runs. Repair's time depends on the program's size, not on its
    /// magnitudes. With [`time_limit_s`](Self::time_limit_s) the wall time
    /// stays within the limit plus at most one trial.
    ///
    /// # Errors
    ///
    /// LP outcomes ([`PcError::LpInfeasible`] …, [`PcError::LpLimit`] when
    /// the LP stops at a limit other than time, or at a time limit and the
    /// greedy repair of the zero point fails as well; [`PcError::TimeLimit`]
    /// likewise when the budget was spent before the LP started),
    /// [`PcError::IntegerInfeasible`] when the MIP
    /// proves infeasibility, [`PcError::RepairFailed`] (the trial with the
    /// least remaining deficit) when no trial repairs and no exact solve runs
    /// or finds a point, [`PcError::MipNoIncumbent`] when the MIP stops at a
    /// limit without a point and nothing else found one,
    /// [`PcError::TimeLimit`] when the time budget ran out without a point,
    /// [`PcError::InvalidOption`] for bad parameters.
    pub fn solve(&self, p: &PcProblem) -> Result<PcSolution, PcError> {
        self.solve_with(p, &Hooks::new())
    }

    /// The options and hooks of one run: the structure matches `p`, the
    /// neighbourhood's limits and the bound budget are valid.
    fn check_run(&self, p: &PcProblem, hooks: &Hooks<'_>) -> Result<(), PcError> {
        if let Some(s) = hooks.structure {
            s.check(p)?;
        }
        if let Some(n) = &self.neighbourhood {
            n.validate()?;
        }
        if let Some(b) = self.bound_budget_s
            && !(b.is_finite() && b > 0.0)
        {
            return Err(PcError::InvalidOption {
                option: "bound_budget_s",
                reason: format!("must be positive and finite, got {}", Num(b)),
            });
        }
        Ok(())
    }

    /// [`solve`](Self::solve) with a model's [`Hooks`]: each trial rounds
    /// with the choice groups ([`round_structured`], `λ = β`; independent
    /// rounding without groups), applies the derivation, and repairs with
    /// the model's moves ([`repair_with`]); the best point, the exact
    /// fallback and the certificate are as in `solve`. With choice groups
    /// the certificate's expectation statement uses the structured
    /// rounding's expected point ([`Structure::expected_point`]), and the
    /// success probability (which assumes independent columns) is not
    /// stated. With no hook this is `solve`.
    ///
    /// # Errors
    ///
    /// Those of `solve`; [`PcError::DimensionMismatch`] or
    /// [`PcError::InvalidGroup`] when the structure does not fit `p`;
    /// [`PcError::InvalidMove`] for a malformed model move;
    /// [`PcError::InvalidOption`] (option `"x"`) when the derivation leaves
    /// a non-finite entry.
    pub fn solve_with(&self, p: &PcProblem, hooks: &Hooks<'_>) -> Result<PcSolution, PcError> {
        self.check_run(p, hooks)?;
        let runs_exact_first = match self.exact {
            ExactMode::Always => true,
            ExactMode::IfSmall { max_vars, max_nnz } => {
                p.n_vars() <= max_vars && p.nnz() <= max_nnz
            }
            ExactMode::Never | ExactMode::Fallback => false,
        };
        if runs_exact_first && let Some((j, u)) = mip_bound_beyond_range(p) {
            return Err(mip_bound_error(j, u));
        }
        let clock = Budget::start(self.time_limit_s)?;
        let mut run = RunInfo::new().with_seed(self.seed, "ChaCha8");
        let t_lp = Instant::now();
        let lp = match clock
            .lp_options(&self.lp, "lp")
            .and_then(|o| solve_lp(p, &o))
        {
            Ok(lp) => lp,
            Err(e) if stopped_by_time(&e) => {
                run.add_stage("lp", t_lp.elapsed().as_secs_f64());
                return self.greedy(p, hooks, e, run);
            }
            Err(e) => return Err(e),
        };
        run.add_stage("lp", t_lp.elapsed().as_secs_f64());
        run.lp_solves = 1;
        run.lp_iterations = lp.simplex_iterations.unwrap_or(0).max(0) as u64;

        let beta = beta_for(p, &lp.x, self.beta)?;
        run.beta = Some(beta);
        let y = scaled_point(p, &lp.x, beta);
        let row_bounds = row_failure_bounds(p, &y, self.repair.packing_slack)?;
        let expected = match hooks.groups() {
            Some(s) => s.expected_point(p, &lp.x, beta)?,
            None => y.clone(),
        };
        let rounder = Rounder {
            y: &y,
            lp_x: &lp.x,
            beta,
            hooks,
        };

        let small = runs_exact_first;
        let may_fall_back = matches!(self.exact, ExactMode::Fallback | ExactMode::IfSmall { .. });
        let mut exact: Option<ExactResult> = None;
        let mut best: Option<Best> = None;
        if small
            && let Some(e) = self.run_exact(p, &clock, &mut run, self.mip.limits.time_limit_s)?
        {
            best =
                e.x.clone()
                    .zip(e.info.incumbent)
                    .map(|(x, v)| (x, v, Method::Exact));
            exact = Some(e);
        }
        let exact_optimal = exact
            .as_ref()
            .is_some_and(|e| e.info.status == ExactStatus::Optimal);

        let t_round = Instant::now();
        let trials = self.run_trials(p, &rounder, &lp, exact_optimal, &clock, &mut best)?;
        run.add_stage("rounding_repair", t_round.elapsed().as_secs_f64());
        run.trials = trials.records.len() as u32;
        run.repair_moves = trials.moves;
        if !trials.proven_by_bound {
            self.run_neighbourhood(p, &lp, &clock, &mut run, &mut best)?;
        }
        if let Some(budget) = self.bound_budget_s
            && exact.is_none()
            && best.is_some()
            && !trials.proven_by_bound
            && let Some(e) = self.run_exact(p, &clock, &mut run, budget)?
        {
            if let (Some(xe), Some(v)) = (&e.x, e.info.incumbent)
                && best
                    .as_ref()
                    .is_some_and(|(_, b, _)| better(p.sense(), v, *b))
            {
                best = Some((xe.clone(), v, Method::Exact));
            }
            exact = Some(e);
        }

        if best.is_none()
            && may_fall_back
            && exact.is_none()
            && let Some(e) = self.run_exact(p, &clock, &mut run, self.mip.limits.time_limit_s)?
        {
            best =
                e.x.clone()
                    .zip(e.info.incumbent)
                    .map(|(x, v)| (x, v, Method::ExactFallback));
            exact = Some(e);
        }
        let Some((x, objective, method)) = best else {
            // The fallback could not run on this program: say why, naming
            // the bound that keeps the MIP solver out (an input limit).
            if may_fall_back
                && exact.is_none()
                && !clock.expired()
                && let Some((j, u)) = mip_bound_beyond_range(p)
            {
                return Err(mip_bound_error(j, u));
            }
            return Err(no_point(exact.as_ref(), trials.least_bad, &clock));
        };
        self.accept(p, &x)?;
        if let Method::Rounding { trial } | Method::Neighbourhood { trial } = method {
            run.best_trial = Some(trial);
        }

        let certificate = self.certificate(
            p,
            &x,
            objective,
            method,
            &lp,
            (&expected, hooks.groups().is_none()),
            beta,
            &row_bounds,
            exact.as_ref(),
            trials.proven_by_bound,
            run,
        );
        Ok(PcSolution {
            x,
            objective,
            method,
            lp: Some(lp),
            beta: Some(beta),
            row_bounds: Some(row_bounds),
            exact,
            trials: trials.records,
            certificate,
        })
    }

    /// The rounding trials: each rounds `y`, repairs, and replaces `best`
    /// when strictly better (a proven MIP optimum is kept); stops early when
    /// an integral objective meets the LP bound, or when the time budget is
    /// spent.
    fn run_trials(
        &self,
        p: &PcProblem,
        rounder: &Rounder<'_>,
        lp: &LpRelaxation,
        exact_optimal: bool,
        clock: &Budget,
        best: &mut Option<Best>,
    ) -> Result<Trials, PcError> {
        let tol = self.repair.feas_tol;
        // Early-stop target: an integral objective meeting the bound is optimal.
        let integral_costs = p.objective().iter().all(|c| c.fract() == 0.0);
        let target = match p.sense() {
            Sense::Minimise => (lp.safe_bound.value - 1e-9).ceil(),
            Sense::Maximise => (lp.safe_bound.value + 1e-9).floor(),
        };
        let mut out = Trials {
            records: Vec::with_capacity(self.trials as usize),
            least_bad: None,
            proven_by_bound: false,
            moves: 0,
        };
        for t in 0..self.trials {
            // Out of time, stop; but one trial (one rounding and one repair,
            // cheap next to the LP) still runs when no point is known yet.
            if clock.expired() && (t > 0 || best.is_some()) {
                break;
            }
            let mut x = rounder.round(p, self.seed, t)?;
            let pre = evaluate(p, &x, tol);
            let outcome = match rounder.repair(p, &mut x, &self.repair) {
                Ok(rep) => {
                    out.moves = out.moves.saturating_add(rep.moves);
                    let v = p.objective_value(&x);
                    // A proven MIP optimum is kept; otherwise strictly better wins.
                    let improves = !exact_optimal
                        && best
                            .as_ref()
                            .is_none_or(|(_, b, _)| better(p.sense(), v, *b));
                    if improves {
                        *best = Some((x, v, Method::Rounding { trial: t }));
                    }
                    TrialOutcome::Repaired {
                        objective: v,
                        moves: rep.moves,
                    }
                }
                Err(PcError::RepairFailed(f)) => {
                    let d = f.total_deficit;
                    if out.least_bad.as_ref().is_none_or(|l| d < l.total_deficit) {
                        out.least_bad = Some(*f);
                    }
                    TrialOutcome::Failed { total_deficit: d }
                }
                Err(other) => return Err(other),
            };
            out.records.push(TrialRecord {
                trial: t,
                pre_repair_objective: pre.objective,
                pre_repair_feasible: pre.is_feasible(),
                outcome,
            });
            if !exact_optimal
                && integral_costs
                && !p.is_general()
                && let Some((_, v, Method::Rounding { .. })) = best
                && (*v - target).abs() <= 1e-9
            {
                out.proven_by_bound = true;
                break;
            }
        }
        Ok(out)
    }

    /// The sub-MIP neighbourhood search around `best` when it comes from a
    /// rounding trial, within what is left of the budget; replaces `best`
    /// with a strictly better point. Under a budget, rounds with wider
    /// neighbourhoods follow while time is left.
    fn run_neighbourhood(
        &self,
        p: &PcProblem,
        lp: &LpRelaxation,
        clock: &Budget,
        run: &mut RunInfo,
        best: &mut Option<Best>,
    ) -> Result<(), PcError> {
        let Some(opts) = self.neighbourhood else {
            return Ok(());
        };
        let trial = match best.as_ref() {
            Some((_, _, Method::Rounding { trial })) => *trial,
            _ => return Ok(()),
        };
        let ints = (0..p.n_vars()).filter(|&j| p.is_integer(j)).count();
        let mut round = opts;
        let mut last_free = None;
        let (mut rounds, mut seconds) = (0u32, 0.0);
        // No limit of its own and no budget: the node limit alone, so that
        // the default pipeline is repeatable on any machine.
        while let Some(limit) = clock.cap_opt(opts.time_limit_s)
            && let Some((x, _, _)) = best.as_ref()
        {
            let t = Instant::now();
            let out = neighbourhood::search(
                p,
                x,
                (&lp.x, &lp.reduced_costs),
                &round,
                limit,
                self.repair.feas_tol,
            );
            seconds += t.elapsed().as_secs_f64();
            rounds += 1;
            let out = out?;
            run.lp_solves += 1;
            let improved = out.better.is_some();
            if let Some((y, v)) = out.better {
                *best = Some((y, v, Method::Neighbourhood { trial }));
            }
            // Without a budget, one round (repeatable). With one, widen the
            // neighbourhood threefold while time is left and columns are
            // fixed — but only while a round can find something new: a round
            // that improved nothing on a neighbourhood no wider than the
            // last one's would search the same sub-MIP again.
            let stalled = !improved && last_free.is_some_and(|f| out.free <= f);
            if self.time_limit_s.is_none()
                || out.free >= ints
                || out.free == 0
                || stalled
                || clock.expired()
            {
                break;
            }
            last_free = Some(out.free);
            round.free_per_row = (round.free_per_row * 3.0).max(1.0);
        }
        // One entry for the whole search, however many rounds it took: the
        // run record does not grow with the time limit.
        if rounds > 0 {
            run.add_stage("sub_mip", seconds);
        }
        Ok(())
    }

    /// Runs the exact MIP for at most `own` seconds and what is left of
    /// the time budget, and records it in `run`; `None` when no time is left
    /// for it.
    fn run_exact(
        &self,
        p: &PcProblem,
        clock: &Budget,
        run: &mut RunInfo,
        own: f64,
    ) -> Result<Option<ExactResult>, PcError> {
        // The fallback and the bound budget are optional: a program the MIP
        // solver cannot take (an integer bound beyond 2^30) skips them.
        let Some(limit) = clock
            .cap(own)
            .filter(|_| mip_bound_beyond_range(p).is_none())
        else {
            return Ok(None);
        };
        let mut opts = self.mip.clone();
        opts.limits.time_limit_s = limit;
        let t = Instant::now();
        let e = solve_exact(p, &opts)?;
        run.add_stage("mip", t.elapsed().as_secs_f64());
        run.lp_solves += 1;
        Ok(Some(e))
    }

    /// The last gate before a point is returned as a solution: [`evaluate`]
    /// must accept it against every bound and every row (packing rows
    /// against `(1+δ)·p_i` with the bicriteria slack δ). Every stage checks
    /// its own points already; this makes "a returned point is feasible"
    /// hold by construction, whatever a stage (or the solver) did.
    fn accept(&self, p: &PcProblem, x: &[f64]) -> Result<(), PcError> {
        let tol = self.repair.feas_tol;
        let eval = evaluate(p, x, tol);
        let delta = self.repair.packing_slack;
        let still_violated: Vec<_> = eval
            .violated_rows
            .into_iter()
            .filter(|r| {
                r.row.class != RowClass::Packing || {
                    let thr = (1.0 + delta) * r.rhs;
                    r.lhs - thr > p.row_slack(r.row, thr, tol)
                }
            })
            .collect();
        if eval.violated_columns.is_empty() && still_violated.is_empty() {
            return Ok(());
        }
        let total_deficit = still_violated.iter().map(|r| r.deficit).sum::<f64>()
            + eval
                .violated_columns
                .iter()
                .map(|&(j, v)| (v - p.upper(j)).max(-v).max(0.0))
                .sum::<f64>();
        Err(PcError::RepairFailed(Box::new(RepairFailure {
            uncovered: Vec::new(),
            still_violated,
            blocking_rows: Vec::new(),
            saturated_cols: eval.violated_columns.iter().map(|&(j, _)| j).collect(),
            total_deficit,
        })))
    }

    /// The feasibility report of `x`, rechecked with [`evaluate`].
    fn feasibility(&self, p: &PcProblem, x: &[f64]) -> FeasibilityReport {
        let eval = evaluate(p, x, self.repair.feas_tol);
        let mut feas = if self.repair.packing_slack > 0.0 {
            FeasibilityReport::bicriteria(self.repair.packing_slack)
        } else {
            FeasibilityReport::feasible()
        };
        for r in &eval.violated_rows {
            let class = match r.row.class {
                RowClass::Packing => ConstraintClass::Packing,
                RowClass::Covering => ConstraintClass::Covering,
                RowClass::Linking => ConstraintClass::Linking,
            };
            feas.record(class, r.row.row, r.deficit, r.rhs);
        }
        for &(j, v) in &eval.violated_columns {
            let u = p.upper(j);
            let excess = if v < 0.0 {
                -v
            } else if v > u {
                v - u
            } else {
                (v - v.round()).abs()
            };
            feas.record(ConstraintClass::Other, j, excess, u);
        }
        feas
    }

    /// The answer when the LP relaxation stopped at a time limit (`stopped`,
    /// returned when this fails too): the zero point, derived, repaired with
    /// the model's moves (or the unit moves) and improved, with a certificate
    /// whose bound is the trivial one ([`trivial_bound`]).
    fn greedy(
        &self,
        p: &PcProblem,
        hooks: &Hooks<'_>,
        stopped: PcError,
        mut run: RunInfo,
    ) -> Result<PcSolution, PcError> {
        let t = Instant::now();
        let mut x = vec![0.0; p.n_vars()];
        if let Some(d) = hooks.derive {
            d.derive(p, &mut x);
        }
        // After the limit: the greedy phases and one pass each of reverse
        // delete and greedy fill, no shift search.
        let repaired = repair_within(p, &mut x, &self.repair, hooks.moves, Search::Quick);
        let report = match repaired {
            Ok(r) => r,
            // No greedy point: the time limit is the answer.
            Err(PcError::RepairFailed(_)) => {
                return Err(match stopped {
                    PcError::LpLimit { .. } => PcError::TimeLimit {
                        stage: "lp",
                        limit_s: self
                            .time_limit_s
                            .or(self.lp.time_limit_s)
                            .unwrap_or(f64::INFINITY),
                    },
                    other => other,
                });
            }
            Err(e) => return Err(e),
        };
        run.add_stage("greedy_repair", t.elapsed().as_secs_f64());
        run.repair_moves = report.moves;
        self.accept(p, &x)?;
        let objective = p.objective_value(&x);
        let certificate = Certificate::new(
            "pcip::greedy_repair",
            p.sense(),
            objective,
            trivial_bound(p),
        )
        .with_feasibility(self.feasibility(p, &x))
        .with_run(run);
        Ok(PcSolution {
            x,
            objective,
            method: Method::Greedy,
            lp: None,
            beta: None,
            row_bounds: None,
            exact: None,
            trials: Vec::new(),
            certificate,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn certificate(
        &self,
        p: &PcProblem,
        x: &[f64],
        objective: f64,
        method: Method,
        lp: &LpRelaxation,
        (y, independent): (&[f64], bool),
        beta: f64,
        bounds: &RowBounds,
        exact: Option<&ExactResult>,
        proven_by_bound: bool,
        run: RunInfo,
    ) -> Certificate {
        let algorithm = match method {
            Method::Rounding { .. } => "pcip::randomized_rounding",
            Method::Neighbourhood { .. } => "pcip::randomized_rounding+sub_mip",
            Method::Exact | Method::ExactFallback => "pcip::exact_mip",
            Method::Greedy => "pcip::greedy_repair",
        };
        let returned_exact = matches!(method, Method::Exact | Method::ExactFallback);
        let feas = self.feasibility(p, x);
        let mut cert = Certificate::new(algorithm, p.sense(), objective, lp.safe_bound.clone())
            .with_feasibility(feas)
            .with_run(run);
        if let Some(e) = exact {
            // A MIP stopped early (before its root LP, under a tight time
            // limit) may report a dual bound weaker than the LP's; both are
            // proven bounds on OPT, so the tighter one is stated.
            let lb = lp.safe_bound.value;
            let dual_bound = match p.sense() {
                Sense::Minimise if lb.is_finite() && lb > e.info.dual_bound => lb,
                Sense::Maximise if lb.is_finite() && lb < e.info.dual_bound => lb,
                _ => e.info.dual_bound,
            };
            cert = cert.with_exact(ExactInfo {
                dual_bound,
                returned: returned_exact,
                ..e.info.clone()
            });
        } else if proven_by_bound {
            cert = cert.with_exact(ExactInfo {
                status: ExactStatus::ProvenByBound,
                incumbent: Some(objective),
                dual_bound: objective,
                rel_gap: 0.0,
                seconds: 0.0,
                returned: true,
            });
        }
        if !p.is_general() {
            // The LP point's integer columns are snapped within 1e-9 and the
            // solver meets rows only within its tolerance, so c·y can fall a
            // hair on the wrong side of the proven bound (a covering row
            // `4294967296·x ≥ 2` met by x = 4.66e-10, snapped to 0). No
            // rounding of a feasible point does better than the bound: the
            // value is clamped to it, and the expression says so.
            let raw = p.objective_value(y);
            let lb = lp.safe_bound.value;
            let cy = match p.sense() {
                Sense::Minimise if raw < lb => lb,
                Sense::Maximise if raw > lb => lb,
                _ => raw,
            };
            let clamp_note = if cy == raw {
                String::new()
            } else {
                format!(
                    " (clamped to the proven bound: the snapped LP point gives {raw}, within the solver's tolerance of it)"
                )
            };
            let (expr, name) = match (p.sense(), independent) {
                (Sense::Minimise, true) => ("E[c·X] = c·y ≤ β·LP (G1)", "c·y"),
                (Sense::Maximise, true) => ("E[v·X] = v·y (= β·LP without clamping) (G1)", "v·y"),
                (Sense::Minimise, false) => (
                    "E[c·X] = c·y, y the expected point of rounding with choice groups (G1)",
                    "c·y",
                ),
                (Sense::Maximise, false) => (
                    "E[v·X] = v·y, y the expected point of rounding with choice groups (G1)",
                    "v·y",
                ),
            };
            let mut g1 = Guarantee::in_expectation(
                format!("{expr}, {name} = {cy}{clamp_note}, β = {beta}"),
                "crate (Raghavan and Thompson, Combinatorica 1987)",
                cy,
                GuaranteeScope::RoundedBeforeRepair,
            );
            if lp.objective != 0.0 {
                g1 = g1.with_ratio(cy / lp.objective);
            }
            cert = cert.with_guarantee(g1);
        }
        if !p.is_general() && independent {
            let k = self.trials;
            cert = cert.with_guarantee(Guarantee::probabilistic(
                format!(
                    "P[all rows hold before repair in ≥ 1 of {k} trials] ≥ 1 − (1 − p_succ)^k, p_succ = {} (per-row Chernoff tail bounds on the instance, combined by Harris–FKG within packing and within covering rows and a union bound across the two)",
                    bounds.p_succ
                ),
                "crate (Srinivasan, SIAM J. Computing 1999)",
                bounds.success_after(k),
                GuaranteeScope::RoundedBeforeRepair,
            ).with_value(bounds.success_after(k)));
        }
        // The pipeline returns the MIP point whenever the MIP is optimal.
        if let Some(e) = exact
            && e.info.status == ExactStatus::Optimal
            && returned_exact
            && let Some(opt) = e.info.incumbent
        {
            let mut g = Guarantee::deterministic_value("objective = OPT (exact MIP)", "crate", opt);
            if opt != 0.0 {
                g = g.with_ratio(objective / opt);
            }
            cert = cert.with_guarantee(g);
        }
        cert
    }
}

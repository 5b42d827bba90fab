//! The sub-MIP neighbourhood of the improvement phase: the integer columns
//! on which the LP point and a feasible incumbent agree are fixed at that
//! value, except a number of them with the smallest LP reduced costs (the
//! columns a better point is most likely to use), and the MIP solver
//! searches the rest of the program under a node limit (so that the search
//! is repeatable), and under a time limit only when one is asked for. This extends the relaxation-induced
//! neighbourhood search of Danna, Rothberg and Le Pape (Mathematical
//! Programming, 2005), which fixes every agreeing column, with the
//! reduced-cost ranking of core approaches to covering problems (as in
//! Caprara, Fischetti and Toth, Operations Research, 1999). The
//! neighbourhood always contains the incumbent, and its solutions are
//! checked with the independent [`evaluate`] before one replaces it.

use super::error::{PcError, RowClass};
use super::problem::{PcProblem, evaluate};
use super::relax::build_lp;
use crate::certificate::Sense;
use crate::lp::{self, SolveOptions};
use crate::model::units::Num;

/// Options of the sub-MIP neighbourhood search
/// ([`RoundingSolver::neighbourhood`](super::RoundingSolver::neighbourhood)).
///
/// ```
/// use dmlsched::pcip::Neighbourhood;
/// let n = Neighbourhood::default();
/// assert_eq!((n.max_nodes, n.time_limit_s, n.free_per_row), (50, None, 1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Neighbourhood {
    /// Most branch-and-bound nodes of the sub-MIP (default 50; at least 1).
    /// The node limit makes the search repeatable.
    pub max_nodes: u32,
    /// Time limit of the sub-MIP in seconds (default `None`: the node limit
    /// alone bounds the search, so that the same program and seed give the
    /// same point on every machine, whatever its load). A limit — this one,
    /// or what is left of the pipeline's
    /// [`time_limit_s`](super::RoundingSolver::time_limit_s) — makes the
    /// answer depend on the machine's speed: a run that reaches it may differ
    /// from one that does not.
    pub time_limit_s: Option<f64>,
    /// Agreeing columns left free besides the disagreeing ones, per row of
    /// the program (default 1; finite and `≥ 0`; 0 is the plain
    /// relaxation-induced neighbourhood): the `⌈free_per_row × rows⌉` with the
    /// smallest LP reduced costs (ties to the lower index).
    pub free_per_row: f64,
}

impl Default for Neighbourhood {
    fn default() -> Self {
        Neighbourhood {
            max_nodes: 50,
            time_limit_s: None,
            free_per_row: 1.0,
        }
    }
}

impl Neighbourhood {
    /// Checks the options.
    ///
    /// # Errors
    ///
    /// [`PcError::InvalidOption`] naming the option.
    pub fn validate(&self) -> Result<(), PcError> {
        if self.max_nodes == 0 || self.max_nodes > i32::MAX as u32 {
            return Err(PcError::InvalidOption {
                option: "neighbourhood.max_nodes",
                reason: format!("must be between 1 and {}, got {}", i32::MAX, self.max_nodes),
            });
        }
        if let Some(t) = self.time_limit_s
            && !(t.is_finite() && t > 0.0)
        {
            return Err(PcError::InvalidOption {
                option: "neighbourhood.time_limit_s",
                reason: format!("must be positive and finite, got {}", Num(t)),
            });
        }
        if !(self.free_per_row.is_finite() && self.free_per_row >= 0.0) {
            return Err(PcError::InvalidOption {
                option: "neighbourhood.free_per_row",
                reason: format!("must be finite and ≥ 0, got {}", Num(self.free_per_row)),
            });
        }
        Ok(())
    }
}

/// What one neighbourhood search did.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SubMipOutcome {
    /// The better point, with its objective (user's sense), if one was found.
    pub(crate) better: Option<(Vec<f64>, f64)>,
    /// Integer columns left free.
    pub(crate) free: usize,
    /// Simplex iterations of the sub-MIP, when reported.
    pub(crate) iterations: Option<i64>,
}

/// Searches the neighbourhood of the feasible `x` induced by the LP point
/// `lp_x` (module docs) for `limit_s` seconds at most (`None`: the node
/// limit alone); a point is returned
/// only when it passes [`evaluate`] at `feas_tol` and is strictly better
/// than `x` (by more than `10⁻⁹·max(1, |objective|)`).
///
/// # Errors
///
/// [`PcError::Lp`] only if fixing a column fails (it cannot for a valid
/// point); limits, infeasible neighbourhoods, solver refusals and failures
/// are not errors (no better point).
pub(crate) fn search(
    p: &PcProblem,
    x: &[f64],
    (lp_x, reduced): (&[f64], &[f64]),
    opts: &Neighbourhood,
    limit_s: Option<f64>,
    feas_tol: f64,
) -> Result<SubMipOutcome, PcError> {
    // HiGHS walks integer domains with 32-bit integers (its root
    // reduced-cost fixing): a sub-MIP whose integer columns sit beyond
    // `2^30` — fixed there, or pushed there by the rows — can spin inside
    // the solver whatever its time limit. The search is a heuristic:
    // skip it (the incumbent stays, and no wider round can help).
    let beyond = |v: &f64| v.abs() > lp::MAX_INTEGER_BOUND;
    if (0..p.n_vars())
        .any(|j| p.is_integer(j) && (beyond(&x[j]) || lp_x.get(j).is_some_and(beyond)))
    {
        return Ok(SubMipOutcome {
            better: None,
            free: 0,
            iterations: None,
        });
    }
    let mut model = build_lp(p);
    let mut agree: Vec<usize> = Vec::new();
    let mut free = 0;
    for (j, (&v, &l)) in x.iter().zip(lp_x).enumerate() {
        if !p.is_integer(j) {
            continue;
        }
        if (v - l).abs() <= 1e-6 {
            agree.push(j);
        } else {
            free += 1;
        }
    }
    let rows: usize = [RowClass::Packing, RowClass::Covering, RowClass::Linking]
        .iter()
        .map(|&c| p.n_rows(c))
        .sum();
    let extra = ((opts.free_per_row * rows as f64).ceil() as usize).min(agree.len());
    let rc = |j: usize| reduced.get(j).copied().unwrap_or(f64::INFINITY);
    if extra > 0 {
        agree.select_nth_unstable_by(extra - 1, |&a, &b| rc(a).total_cmp(&rc(b)).then(a.cmp(&b)));
    }
    free += extra;
    for &j in &agree[extra..] {
        model.set_col_bounds(j, x[j], x[j])?;
    }
    let mut out = SubMipOutcome {
        better: None,
        free,
        iterations: None,
    };
    if free == 0 {
        return Ok(out);
    }
    let mut so = SolveOptions::default().with_mip_max_nodes(opts.max_nodes);
    if let Some(t) = limit_s {
        so = so.with_time_limit(t);
    }
    // A heuristic: a refusal (integer bounds beyond the solver's range) or
    // a failure of the solver leaves the incumbent as it is.
    let Ok(sol) = lp::solve(&model, &so) else {
        return Ok(out);
    };
    out.iterations = sol.simplex_iterations;
    let Some(point) = sol.primal_point() else {
        return Ok(out);
    };
    let y: Vec<f64> = point
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            let v = v.max(0.0).min(p.upper(j)) + 0.0;
            if p.is_integer(j) { v.round() } else { v }
        })
        .collect();
    if !evaluate(p, &y, feas_tol).is_feasible() {
        return Ok(out);
    }
    let (old, new) = (p.objective_value(x), p.objective_value(&y));
    let gain = match p.sense() {
        Sense::Minimise => old - new,
        Sense::Maximise => new - old,
    };
    if gain > 1e-9 * old.abs().max(1.0) {
        out.better = Some((y, new));
    }
    Ok(out)
}

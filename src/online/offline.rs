//! The result of an exact offline solve of a pricing scheduler's model: the
//! comparison point of the online run's value and dual bound, one type for
//! every model (parameterised by the model's plan).

use crate::certificate::ExactInfo;
use crate::lp::LpStatus;
use crate::model::JobId;
use crate::schedule::Schedule;

/// The exact offline optimum of an online scheduler's model on one
/// instance: the incumbent of a mixed-integer program over every job's
/// plans, a proven upper bound on the optimum, and how the solve ended.
///
/// `P` is the model's plan (what one admitted job runs). The solvers fill
/// every field; the per-job lists are in instance order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OfflineResult<P> {
    /// Total utility (the model's value) of the incumbent's plans, each
    /// job's utility at its completion slot (0 without incumbent).
    pub objective: f64,
    /// A proven upper bound on the optimum: the smaller of the solver's
    /// dual bound and the trivial bound (every job at its best utility),
    /// never below `objective` ([`proven_upper_bound`]). Equal to
    /// `objective` up to the solver's gap when [`optimal`](Self::optimal);
    /// use this, not the objective, in ratio statements when a limit was
    /// hit.
    pub upper_bound: f64,
    /// Whether the solve proved the incumbent optimal (within the limits'
    /// relative gap).
    pub optimal: bool,
    /// `(upper_bound − objective) / upper_bound`, 0 when they are equal.
    pub rel_gap: f64,
    /// How the solver ended ([`LpStatus::Optimal`] also when the program
    /// was empty and no solve was needed).
    pub status: LpStatus,
    /// Wall-clock seconds of the whole call (build, solve, decoding,
    /// checks).
    pub seconds: f64,
    /// The incumbent as a crate schedule, one entry per job of the instance
    /// in instance order; jobs not admitted are rejected.
    /// [`verify`](crate::schedule::verify) accepts it.
    pub schedule: Schedule,
    /// Every job's plan, instance order; `None` for jobs not admitted.
    pub plans: Vec<(JobId, Option<P>)>,
    /// Completion slot (last slot with work) per job, instance order;
    /// `None` for jobs not admitted.
    pub completion: Vec<(JobId, Option<u32>)>,
    /// The column estimate checked against the solver's column limit before
    /// anything was built (at least the columns built).
    pub estimated_columns: f64,
    /// Columns of the program.
    pub columns: usize,
    /// Rows of the program.
    pub rows: usize,
}

impl<P> OfflineResult<P> {
    /// The solve as a certificate's [`ExactInfo`], as a comparison point
    /// (`returned = false`): status
    /// [`ExactStatus::Optimal`](crate::certificate::ExactStatus::Optimal) or
    /// [`ExactStatus::Limit`](crate::certificate::ExactStatus::Limit),
    /// incumbent [`objective`](Self::objective) (the empty schedule counts
    /// as an incumbent of value 0), dual bound
    /// [`upper_bound`](Self::upper_bound). Attach it to the online
    /// scheduler's certificate with
    /// [`Certificate::with_exact`](crate::certificate::Certificate::with_exact).
    pub fn exact_info(&self) -> ExactInfo {
        let values = (self.objective, self.upper_bound, self.rel_gap);
        ExactInfo::comparison(self.optimal, &self.status, values, self.seconds)
    }

    /// `upper_bound / alg`: a proven bound on `OPT/ALG` for an algorithm
    /// with total utility `alg`; `+∞` when `alg = 0 < upper_bound`, 1 when
    /// both are 0.
    pub fn ratio_bound_over(&self, alg: f64) -> f64 {
        ExactInfo::ratio_bound(self.upper_bound, alg)
    }

    /// Jobs the incumbent admits.
    pub fn admitted(&self) -> usize {
        self.plans.iter().filter(|(_, p)| p.is_some()).count()
    }
}

/// The proven upper bound and relative gap of an incumbent of value
/// `objective`: `upper = max(min(dual_bound, trivial_bound), objective)`
/// (both bounds are valid; numerical noise may put the feasible incumbent a
/// hair above the solver's bound) and `(upper − objective)/upper`, 0 when
/// they are equal.
///
/// ```
/// use dmlsched::online::proven_upper_bound;
/// assert_eq!(proven_upper_bound(3.0, 4.0, 6.0), (4.0, 0.25));
/// assert_eq!(proven_upper_bound(3.0, 2.9, 6.0), (3.0, 0.0));
/// ```
pub fn proven_upper_bound(objective: f64, dual_bound: f64, trivial_bound: f64) -> (f64, f64) {
    let upper_bound = dual_bound.min(trivial_bound).max(objective);
    let rel_gap = if upper_bound > objective {
        (upper_bound - objective) / upper_bound
    } else {
        0.0
    };
    (upper_bound, rel_gap)
}

//! The limits of an exact MIP solve: one whose optimum or dual bound is used
//! as a proof (an exact offline optimum, a certified bound), shared by the
//! modules that run one.

use crate::model::units::Num;

use super::SolveOptions;

/// Limits of an exact MIP solve: a solve whose optimum, or dual bound at a
/// limit, is used as a proof.
///
/// The exact solvers of the crate keep their own option types with their
/// own documented defaults (for example
/// [`locality::OfflineLimits`](crate::algorithms::locality::OfflineLimits),
/// [`oasis::ExactOptions`](crate::algorithms::oasis::ExactOptions) and
/// [`sjf_bco::formulation::MipLimits`](crate::algorithms::sjf_bco::formulation::MipLimits));
/// each hands its solver limits to this type, which checks them the same way
/// everywhere ([`validate`](Self::validate)) and turns them into the
/// [`SolveOptions`] of the solve ([`proof_solve_options`](Self::proof_solve_options)).
/// There is no default here: what is a sensible limit depends on the
/// program, so [`new`](Self::new) takes all three.
///
/// ```
/// use dmlsched::lp::ExactMipLimits;
///
/// let limits = ExactMipLimits::new(60.0, 1e-9, None);
/// limits.validate()?;
/// let so = limits.proof_solve_options();
/// assert_eq!((so.time_limit_s, so.mip_rel_gap, so.threads), (Some(60.0), 1e-9, 1));
/// assert!(!so.presolve);
///
/// let err = ExactMipLimits::new(60.0, 1e-9, Some(0)).validate().unwrap_err();
/// assert_eq!(err.name, "threads");
/// # Ok::<(), dmlsched::lp::InvalidLimit>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct ExactMipLimits {
    /// Wall-clock limit of the solve, seconds; positive and finite. A solve
    /// stopped here proves its dual bound, never optimality.
    pub time_limit_s: f64,
    /// Relative gap at which the solve counts as optimal; in `[0, 1)`.
    pub mip_rel_gap: f64,
    /// Solver threads; `None` keeps the lp layer's default (one thread,
    /// deterministic). At least 1 when set.
    pub threads: Option<u32>,
}

/// An invalid limit: which one ([`name`](Self::name), the field's name) and
/// why. Each module maps it into its own typed `InvalidOption { name, reason }`
/// error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid option {name}: {reason}")]
pub struct InvalidLimit {
    /// The option (`"time_limit_s"`, `"mip_rel_gap"`, `"max_columns"` or
    /// `"threads"`).
    pub name: &'static str,
    /// What is wrong.
    pub(crate) reason: String,
}

impl ExactMipLimits {
    /// Limits of `time_limit_s` seconds, relative gap `mip_rel_gap` and
    /// `threads` solver threads (`None`: one); checked by
    /// [`validate`](Self::validate), not here.
    pub fn new(time_limit_s: f64, mip_rel_gap: f64, threads: Option<u32>) -> Self {
        ExactMipLimits {
            time_limit_s,
            mip_rel_gap,
            threads,
        }
    }

    /// Checks the limits.
    ///
    /// # Errors
    ///
    /// [`InvalidLimit`] for a time limit that is not positive and finite, a
    /// gap outside `[0, 1)` or `threads == Some(0)`, checked in that order.
    pub fn validate(&self) -> Result<(), InvalidLimit> {
        self.check(None)
    }

    /// Checks the limits together with a solver's column limit
    /// `max_columns` (at least 1).
    ///
    /// # Errors
    ///
    /// [`InvalidLimit`] as for [`validate`](Self::validate), or named
    /// `"max_columns"` for `max_columns = 0`; checked in the order time
    /// limit, gap, columns, threads.
    pub fn validate_with_max_columns(&self, max_columns: u64) -> Result<(), InvalidLimit> {
        self.check(Some(max_columns))
    }

    fn check(&self, max_columns: Option<u64>) -> Result<(), InvalidLimit> {
        let bad = |name, reason: String| Err(InvalidLimit { name, reason });
        if !(self.time_limit_s.is_finite() && self.time_limit_s > 0.0) {
            return bad(
                "time_limit_s",
                format!("{} is not positive and finite", Num(self.time_limit_s)),
            );
        }
        if !(self.mip_rel_gap >= 0.0 && self.mip_rel_gap < 1.0) {
            return bad(
                "mip_rel_gap",
                format!("{} is not in [0, 1)", Num(self.mip_rel_gap)),
            );
        }
        if max_columns == Some(0) {
            return bad("max_columns", "at least one column is needed".into());
        }
        if self.threads == Some(0) {
            return bad("threads", "at least one thread is needed".into());
        }
        Ok(())
    }

    /// The solver options of the solve: these limits and **presolve off**.
    ///
    /// The optimum and the dual bound of an exact solve are used as proofs,
    /// and HiGHS's MIP presolve has reported a sub-optimal point as optimal
    /// on programs of this crate with big-M completion links (the OASiS
    /// offline MIP's regression instance, `tests/oasis.rs`;
    /// ERGO-Code/HiGHS#3094), so it is never run here. Threads are set only
    /// when [`threads`](Self::threads) is; everything else is
    /// [`SolveOptions::default`].
    pub fn proof_solve_options(&self) -> SolveOptions {
        let so = SolveOptions::default()
            .with_time_limit(self.time_limit_s)
            .with_mip_rel_gap(self.mip_rel_gap)
            .with_presolve(false);
        match self.threads {
            Some(threads) => so.with_threads(threads),
            None => so,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: ExactMipLimits = ExactMipLimits {
        time_limit_s: 60.0,
        mip_rel_gap: 1e-9,
        threads: None,
    };

    fn name_of(limits: ExactMipLimits) -> &'static str {
        limits.validate().unwrap_err().name
    }

    #[test]
    fn valid_limits_pass() {
        assert_eq!(OK.validate(), Ok(()));
        let edge = ExactMipLimits {
            time_limit_s: f64::MIN_POSITIVE,
            mip_rel_gap: 0.0,
            threads: Some(1),
        };
        assert_eq!(edge.validate(), Ok(()));
        assert_eq!(OK.validate_with_max_columns(1), Ok(()));
    }

    #[test]
    fn time_limit_must_be_positive_and_finite() {
        for t in [f64::NAN, 0.0, -0.0, -1.0, f64::INFINITY, f64::NEG_INFINITY] {
            let limits = ExactMipLimits {
                time_limit_s: t,
                ..OK
            };
            assert_eq!(name_of(limits), "time_limit_s", "{t}");
        }
        let err = ExactMipLimits {
            time_limit_s: -1.0,
            ..OK
        }
        .validate()
        .unwrap_err();
        assert!(err.reason.contains("is not positive and finite"), "{err}");
        assert!(err.to_string().starts_with("invalid option time_limit_s: "));
    }

    #[test]
    fn gap_must_be_in_zero_one() {
        for g in [-0.1, 1.0, 1.5, f64::NAN, f64::INFINITY] {
            let limits = ExactMipLimits {
                mip_rel_gap: g,
                ..OK
            };
            let err = limits.validate().unwrap_err();
            assert_eq!(err.name, "mip_rel_gap", "{g}");
            assert!(err.reason.ends_with("is not in [0, 1)"), "{err}");
        }
    }

    #[test]
    fn threads_and_columns_must_be_positive() {
        let limits = ExactMipLimits {
            threads: Some(0),
            ..OK
        };
        assert_eq!(
            limits.validate(),
            Err(InvalidLimit {
                name: "threads",
                reason: "at least one thread is needed".into(),
            })
        );
        assert_eq!(
            OK.validate_with_max_columns(0),
            Err(InvalidLimit {
                name: "max_columns",
                reason: "at least one column is needed".into(),
            })
        );
    }

    #[test]
    fn checks_run_in_documented_order() {
        let all_bad = ExactMipLimits {
            time_limit_s: 0.0,
            mip_rel_gap: 1.0,
            threads: Some(0),
        };
        assert_eq!(name_of(all_bad), "time_limit_s");
        let gap_threads = ExactMipLimits {
            time_limit_s: 1.0,
            ..all_bad
        };
        assert_eq!(name_of(gap_threads), "mip_rel_gap");
        let columns_threads = ExactMipLimits {
            mip_rel_gap: 0.0,
            ..gap_threads
        };
        let err = columns_threads.validate_with_max_columns(0).unwrap_err();
        assert_eq!(err.name, "max_columns");
        assert_eq!(name_of(columns_threads), "threads");
    }

    #[test]
    fn proof_solve_options_turn_presolve_off() {
        let so = OK.proof_solve_options();
        assert!(!so.presolve);
        assert_eq!(so.time_limit_s, Some(60.0));
        assert_eq!(so.mip_rel_gap, 1e-9);
        assert_eq!(so.threads, SolveOptions::default().threads);
        assert_eq!(
            so,
            SolveOptions::default()
                .with_time_limit(60.0)
                .with_mip_rel_gap(1e-9)
                .with_presolve(false)
        );
        let four = ExactMipLimits {
            threads: Some(4),
            ..OK
        }
        .proof_solve_options();
        assert_eq!(four.threads, 4);
        assert!(!four.presolve);
        assert!(four.validate().is_ok());
    }
}

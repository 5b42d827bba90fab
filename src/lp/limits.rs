//! The limits of an exact MIP solve: one whose optimum or dual bound is used
//! as a proof (an exact offline optimum, a certified bound), shared by the
//! modules that run one.

use crate::model::units::Num;

use super::SolveOptions;

/// Limits of an exact MIP solve: a solve whose optimum, or dual bound at a
/// limit, is used as a proof. The crate's one limits type for such solves.
///
/// Every exact solver of the crate takes it, each with its own documented
/// defaults:
///
/// | solve | default |
/// |---|---|
/// | [`locality::offline_optimum`](crate::algorithms::locality::offline_optimum) | [`locality::OFFLINE_LIMITS`](crate::algorithms::locality::OFFLINE_LIMITS) |
/// | [`gadget::offline_optimum`](crate::algorithms::gadget::offline_optimum) | [`gadget::OFFLINE_LIMITS`](crate::algorithms::gadget::OFFLINE_LIMITS) |
/// | SJF-BCO's formulations ([`CompactOptions::limits`](crate::algorithms::sjf_bco::formulation::CompactOptions::limits), [`TimeIndexedOptions::limits`](crate::algorithms::sjf_bco::formulation::TimeIndexedOptions::limits), [`solve_server_aggregated`](crate::algorithms::sjf_bco::formulation::solve_server_aggregated)) | [`formulation::DEFAULT_LIMITS`](crate::algorithms::sjf_bco::formulation::DEFAULT_LIMITS) |
/// | [`oasis::offline_optimum`](crate::algorithms::oasis::offline_optimum) | [`ExactOptions::limits`](crate::algorithms::oasis::ExactOptions::limits) |
/// | SMD's exact epoch MIP | [`SmdParams::mip`](crate::algorithms::smd::SmdParams::mip) |
/// | [`pcip::solve_exact`](crate::pcip::solve_exact) | [`MipOptions::limits`](crate::pcip::MipOptions::limits) |
///
/// Each checks them the same way ([`validate`](Self::validate), or
/// [`validate_uncapped`](Self::validate_uncapped) for a solve without a
/// column cap) and turns them into the [`SolveOptions`] of the solve
/// ([`proof_solve_options`](Self::proof_solve_options)). There is no
/// default here: what is a sensible limit depends on the program, so
/// [`new`](Self::new) takes the time limit, the gap and the threads.
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
///
/// // A column cap, for the solves whose model has one.
/// let capped = limits.with_max_columns(1024);
/// assert_eq!(capped.max_columns, Some(1024));
/// capped.validate()?;
/// assert_eq!(capped.validate_uncapped().unwrap_err().name, "max_columns");
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
    /// Most columns of the program, estimated before anything is
    /// allocated; at least 1 when set, `None` for no cap. Only a solve
    /// whose model has a column cap takes one (locality's and GADGET's
    /// offline optimum, SJF-BCO's formulations); the others refuse `Some`
    /// ([`validate_uncapped`](Self::validate_uncapped)).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub max_columns: Option<usize>,
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
    /// `threads` solver threads (`None`: one), without a column cap;
    /// checked by [`validate`](Self::validate), not here.
    pub const fn new(time_limit_s: f64, mip_rel_gap: f64, threads: Option<u32>) -> Self {
        ExactMipLimits {
            time_limit_s,
            mip_rel_gap,
            threads,
            max_columns: None,
        }
    }

    /// These limits with a cap of `max_columns` columns.
    pub const fn with_max_columns(mut self, max_columns: usize) -> Self {
        self.max_columns = Some(max_columns);
        self
    }

    /// Checks the limits.
    ///
    /// # Errors
    ///
    /// [`InvalidLimit`] for a time limit that is not positive and finite, a
    /// gap outside `[0, 1)`, `max_columns == Some(0)` or
    /// `threads == Some(0)`, checked in that order.
    pub fn validate(&self) -> Result<(), InvalidLimit> {
        self.check(true)
    }

    /// Checks the limits of a solve without a column cap: as
    /// [`validate`](Self::validate), and `max_columns` must be `None`.
    ///
    /// # Errors
    ///
    /// [`InvalidLimit`] as for [`validate`](Self::validate), or named
    /// `"max_columns"` for any column cap; checked in the order time limit,
    /// gap, columns, threads.
    pub fn validate_uncapped(&self) -> Result<(), InvalidLimit> {
        self.check(false)
    }

    fn check(&self, capped: bool) -> Result<(), InvalidLimit> {
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
        match self.max_columns {
            Some(0) => return bad("max_columns", "at least one column is needed".into()),
            Some(n) if !capped => {
                return bad(
                    "max_columns",
                    format!("{n}: this solve takes no column cap (use null)"),
                );
            }
            _ => {}
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

    /// Deserializes limits given in part, each missing field taken from
    /// `defaults`: for options with `#[serde(default)]` whose limits have
    /// a default of their own.
    #[cfg(feature = "serde")]
    pub(crate) fn deserialize_over<'de, D>(defaults: Self, d: D) -> Result<Self, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        use serde::Deserialize;
        /// A present field, even `null` (which is `Some(None)`).
        fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
        where
            D: serde::Deserializer<'de>,
            T: Deserialize<'de>,
        {
            T::deserialize(d).map(Some)
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Given {
            #[serde(default, deserialize_with = "present")]
            time_limit_s: Option<f64>,
            #[serde(default, deserialize_with = "present")]
            mip_rel_gap: Option<f64>,
            #[serde(default, deserialize_with = "present")]
            threads: Option<Option<u32>>,
            #[serde(default, deserialize_with = "present")]
            max_columns: Option<Option<usize>>,
        }
        let given = Given::deserialize(d)?;
        Ok(ExactMipLimits {
            time_limit_s: given.time_limit_s.unwrap_or(defaults.time_limit_s),
            mip_rel_gap: given.mip_rel_gap.unwrap_or(defaults.mip_rel_gap),
            threads: given.threads.unwrap_or(defaults.threads),
            max_columns: given.max_columns.unwrap_or(defaults.max_columns),
        })
    }
}

/// The cap `max_columns` as a size error's limit when a program of
/// `columns` (estimated) columns is above it; `None` within the cap or
/// without one.
pub(crate) fn over_column_cap(max_columns: Option<usize>, columns: u128) -> Option<u64> {
    let cap = max_columns?;
    (columns > u128::try_from(cap).unwrap_or(u128::MAX))
        .then(|| u64::try_from(cap).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: ExactMipLimits = ExactMipLimits::new(60.0, 1e-9, None);

    fn name_of(limits: ExactMipLimits) -> &'static str {
        limits.validate().unwrap_err().name
    }

    #[test]
    fn valid_limits_pass() {
        assert_eq!(OK.validate(), Ok(()));
        let edge = ExactMipLimits::new(f64::MIN_POSITIVE, 0.0, Some(1));
        assert_eq!(edge.validate(), Ok(()));
        assert_eq!(edge.validate_uncapped(), Ok(()));
        assert_eq!(OK.with_max_columns(1).validate(), Ok(()));
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
            OK.with_max_columns(0).validate(),
            Err(InvalidLimit {
                name: "max_columns",
                reason: "at least one column is needed".into(),
            })
        );
        assert_eq!(
            OK.with_max_columns(0).validate_uncapped(),
            OK.with_max_columns(0).validate()
        );
        let err = OK.with_max_columns(5).validate_uncapped().unwrap_err();
        assert_eq!(err.name, "max_columns");
        assert!(err.reason.contains("takes no column cap"), "{err}");
    }

    #[test]
    fn checks_run_in_documented_order() {
        let all_bad = ExactMipLimits::new(0.0, 1.0, Some(0));
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
        let err = columns_threads.with_max_columns(0).validate().unwrap_err();
        assert_eq!(err.name, "max_columns");
        let err = columns_threads.with_max_columns(3).validate_uncapped();
        assert_eq!(err.unwrap_err().name, "max_columns");
        assert_eq!(name_of(columns_threads), "threads");
    }

    #[test]
    fn column_caps_admit_up_to_the_cap() {
        assert_eq!(over_column_cap(None, u128::MAX), None);
        assert_eq!(over_column_cap(Some(10), 10), None);
        assert_eq!(over_column_cap(Some(10), 11), Some(10));
    }

    #[cfg(feature = "serde")]
    #[test]
    fn partial_limits_take_the_rest_from_defaults() {
        let defaults = OK.with_max_columns(20);
        let over = |json: &str| {
            let mut d = serde_json::Deserializer::from_str(json);
            ExactMipLimits::deserialize_over(defaults, &mut d)
        };
        assert_eq!(over("{}").unwrap(), defaults);
        let some = over(r#"{"time_limit_s": 5, "threads": 2}"#).unwrap();
        assert_eq!(
            some,
            ExactMipLimits::new(5.0, 1e-9, Some(2)).with_max_columns(20)
        );
        let uncapped = over(r#"{"max_columns": null, "threads": null}"#).unwrap();
        assert_eq!(uncapped, OK);
        assert!(over(r#"{"time_limit_s": null}"#).is_err());
        assert!(over(r#"{"seconds": 5}"#).is_err());
        // The plain form: every field but the optional ones.
        let plain: ExactMipLimits =
            serde_json::from_str(r#"{"time_limit_s": 5, "mip_rel_gap": 0.1}"#).unwrap();
        assert_eq!(plain, ExactMipLimits::new(5.0, 0.1, None));
        assert!(
            !serde_json::to_string(&plain)
                .unwrap()
                .contains("max_columns")
        );
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

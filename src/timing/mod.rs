//! Per-iteration timing models: how long one training iteration takes for a
//! given configuration, and how progress accumulates over time.
//!
//! Every scheduler, simulator and baseline uses these models, so that all of
//! them agree on units and formulas (the full statement is in the
//! [algorithms guide, section 3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing)). Units are SI throughout:
//! seconds (`f64`), bytes, bytes per second, plain counts.
//!
//! | model | module | config | source |
//! |---|---|---|---|
//! | **PS-L**, parameter server with worker–PS locality: a two-configuration form (LOCAL / DISTRIBUTED) and a placement-level form | [`ps_locality`] | [`PsConfig`] / [`PsPlacement`] | the crate's own design ([algorithms guide, section 3.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-ps-locality)), after the OASiS PS time `compute + 2·gradient/bandwidth` (Bao, Peng, Wu, Li, IEEE INFOCOM 2018) and the abstract of Yu, Liu, Wu, Ji, Bentley (IEEE TNSE) |
//! | **RAR-C**, ring all-reduce with inter-server contention and per-server overhead; a ring with reserved bandwidth runs at it without contention ([`RarTiming::iteration_time_reserved_s`]) | [`rar`] | [`RarConfig`] | restated from Yu, Ji, Rajan, Liu (ACM MobiHoc 2022), eqs. (6)–(8), with the crate's clamp `k ≥ 1` and a calibration parametrisation ([algorithms guide, section 3.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-ring-allreduce)) |
//! | **PS-W**, layered parameter server with wait-free back-propagation | [`layered`] | `(w, p)` | the crate's own design ([algorithms guide, section 3.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-layered-ps)), after the abstract of Yu, Wu, Ji, Liu (IEEE INFOCOM 2021); the recursion is not the paper's |
//! | progress accounting: [`ProgressMode`], [`iterations_in`], [`advance`] | [`progress`] | — | fractional progress `Δ/τ` by default, or whole iterations `⌊Δ/τ⌋` per slot as in Yu, Ji, Rajan, Liu (ACM MobiHoc 2022) ([algorithms guide, section 3.4](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-progress)) |
//!
//! A fourth model, **OPT-S** (the empirical speed function of Optimus, Peng
//! et al., EuroSys 2018: an iteration time linear in five non-negative
//! coefficients of `B_g/w, 1, w/p, w, p`), would serve calibration and the
//! Optimus baseline; it is not implemented here.
//!
//! Each model is validated once, by its `new`: every parameter
//! finite, every time and size ≥ 0, every bandwidth and speed > 0. Invalid
//! configurations (no worker, no PS, a placement that does not add up) are
//! rejected by [`IterationTime::iteration_time_s`]. Failures are
//! [`TimingError`]s.
//!
//! Models whose iteration time is linear in their parameters implement
//! [`LinearInParameters`] (PS-L two-configuration form, RAR-C); the PS-L
//! placement-level form is a maximum of linear terms and implements
//! [`MaxOfLinear`]. PS-W is neither.
//!
//! ```
//! use dmlsched::timing::{IterationTime, PsConfig, PsLocality};
//! // 0.1 s compute, 100 MB gradient, 16 GB/s inside a machine, 1.25 GB/s NICs.
//! let m = PsLocality::new(0.1, 1e8, 1.6e10, 1.25e9, 2.5e9, 0.0)?;
//! let local = m.iteration_time_s(&PsConfig::Local { workers: 4 })?;
//! let dist = m.iteration_time_s(&PsConfig::Distributed { workers: 4 })?;
//! assert!((local - 0.1125).abs() < 1e-12 && (dist - 0.26).abs() < 1e-12);
//! // Throughput counts mini-batches: 4 workers, one mini-batch each.
//! assert!((m.throughput(&PsConfig::Local { workers: 4 })? - 4.0 / 0.1125).abs() < 1e-9);
//! # Ok::<(), dmlsched::timing::TimingError>(())
//! ```

pub mod layered;
pub mod progress;
pub mod ps_locality;
pub mod rar;

pub use layered::{LayeredTrace, PsLayered};
pub use progress::{Advance, ProgressMode, advance, iterations_in, remaining_time_s};
pub use ps_locality::{PsConfig, PsLocality, PsLocalityPlacement, PsPlacement};
pub use rar::{RarConfig, RarTiming, contention_counts, effective_contenders};

/// Why a timing model or a configuration is invalid: a non-finite or
/// negative parameter, a zero bandwidth, or a bad configuration.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TimingError {
    /// A parameter is NaN or infinite.
    #[error("timing parameter `{field}` is not finite")]
    NonFinite {
        /// The parameter's name.
        field: &'static str,
    },
    /// A time or size is negative.
    #[error("timing parameter `{field}` is negative ({value})")]
    Negative {
        /// The parameter's name.
        field: &'static str,
        /// The offending value.
        value: f64,
    },
    /// A bandwidth or speed is zero.
    #[error("bandwidth or speed `{field}` must be positive")]
    ZeroBandwidth {
        /// The parameter's name.
        field: &'static str,
    },
    /// A count or a configuration is invalid (no worker, no PS, a placement
    /// that does not add up, a parameter vector of the wrong length, …).
    #[error("invalid timing configuration: {reason}")]
    BadConfig {
        /// What is wrong.
        reason: String,
    },
}

/// A per-iteration timing model for one job type.
pub trait IterationTime {
    /// What the time depends on, e.g. `(w, p)` or a placement.
    type Config;

    /// Seconds per iteration in configuration `cfg`.
    ///
    /// # Errors
    ///
    /// [`TimingError::BadConfig`] if `cfg` is invalid for the model.
    fn iteration_time_s(&self, cfg: &Self::Config) -> Result<f64, TimingError>;

    /// Work done per iteration in configuration `cfg`, in the model's unit of
    /// work (samples, or mini-batches for PS-L; see each model).
    fn samples_per_iteration(&self, cfg: &Self::Config) -> f64;

    /// Work per second: `samples_per_iteration / iteration_time_s`.
    ///
    /// # Errors
    ///
    /// As [`IterationTime::iteration_time_s`].
    fn throughput(&self, cfg: &Self::Config) -> Result<f64, TimingError> {
        Ok(self.samples_per_iteration(cfg) / self.iteration_time_s(cfg)?)
    }
}

/// The sign constraint of one model parameter in calibration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sign {
    /// The parameter must be ≥ 0.
    NonNeg,
    /// The parameter may take any sign.
    Free,
}

/// A model whose iteration time is `θ·φ(cfg)`: linear in its parameters θ,
/// so that it can be calibrated by least squares. Invariant: `iteration_time_s(cfg) == params()·features(cfg)`
/// to 1e-12 relative for every valid `cfg`.
pub trait LinearInParameters: IterationTime + Sized {
    /// Names of the parameters θ, in order.
    fn param_names(&self) -> &'static [&'static str];
    /// The feature vector φ(cfg), as long as θ.
    ///
    /// # Errors
    ///
    /// As [`IterationTime::iteration_time_s`].
    fn features(&self, cfg: &Self::Config) -> Result<Vec<f64>, TimingError>;
    /// The sign constraint of each parameter.
    fn signs(&self) -> Vec<Sign>;
    /// The current parameters θ.
    fn params(&self) -> Vec<f64>;
    /// The same model with parameters θ, validated like `new`.
    ///
    /// # Errors
    ///
    /// [`TimingError::BadConfig`] for a vector of the wrong length or a θ
    /// that maps to no valid model.
    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError>;
}

/// A model whose iteration time is the maximum of terms that are each linear
/// in the parameters θ (such as PS-L's placement-level form: the binding
/// term depends on θ). Invariant:
/// `iteration_time_s(cfg) == params()·features_at(cfg, &params())`.
pub trait MaxOfLinear: IterationTime + Sized {
    /// Names of the parameters θ, in order.
    fn param_names(&self) -> &'static [&'static str];
    /// The feature vector of the term that binds (is largest) under `theta`.
    ///
    /// # Errors
    ///
    /// As [`IterationTime::iteration_time_s`], and
    /// [`TimingError::BadConfig`] if `theta` has the wrong length.
    fn features_at(&self, cfg: &Self::Config, theta: &[f64]) -> Result<Vec<f64>, TimingError>;
    /// The sign constraint of each parameter.
    fn signs(&self) -> Vec<Sign>;
    /// The current parameters θ.
    fn params(&self) -> Vec<f64>;
    /// The same model with parameters θ, validated like `new`.
    ///
    /// # Errors
    ///
    /// As [`LinearInParameters::with_params`].
    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError>;
}

/// `field` must be finite and ≥ 0 (a time or a size).
pub(crate) fn check_non_negative(field: &'static str, value: f64) -> Result<(), TimingError> {
    if !value.is_finite() {
        Err(TimingError::NonFinite { field })
    } else if value < 0.0 {
        Err(TimingError::Negative { field, value })
    } else {
        Ok(())
    }
}

/// `field` must be finite and > 0 (a bandwidth or a speed).
pub(crate) fn check_positive(field: &'static str, value: f64) -> Result<(), TimingError> {
    check_non_negative(field, value)?;
    if value == 0.0 {
        Err(TimingError::ZeroBandwidth { field })
    } else {
        Ok(())
    }
}

/// A count that must be ≥ 1.
pub(crate) fn check_count(what: &str, n: u32) -> Result<(), TimingError> {
    if n == 0 {
        Err(bad(format!("{what} must be at least 1")))
    } else {
        Ok(())
    }
}

/// A [`TimingError::BadConfig`].
pub(crate) fn bad(reason: String) -> TimingError {
    TimingError::BadConfig { reason }
}

/// `theta` must have one entry per parameter name.
pub(crate) fn check_theta_len(names: &[&str], theta: &[f64]) -> Result<(), TimingError> {
    if theta.len() == names.len() {
        Ok(())
    } else {
        Err(bad(format!(
            "expected {} parameters ({}), got {}",
            names.len(),
            names.join(", "),
            theta.len()
        )))
    }
}

/// The bandwidth `1/θ` for an inverse-bandwidth parameter θ, which must be
/// finite and > 0 (θ = 0 would be an infinite bandwidth).
pub(crate) fn bandwidth_from_inverse(name: &str, theta: f64) -> Result<f64, TimingError> {
    if theta.is_finite() && theta > 0.0 {
        Ok(1.0 / theta)
    } else {
        Err(bad(format!(
            "inverse bandwidth `{name}` must be finite and > 0, got {theta}"
        )))
    }
}

/// `Σ a_i b_i`.
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    //! The validation errors of every model's `new`, one test each.

    use super::*;
    use crate::model::{Degradation, Layer, RingParams, SyncMode};

    fn ring() -> RingParams {
        RingParams {
            external_bandwidth_bps: 1.25e9,
            reduction_speed_bps: 2e10,
            overhead_per_server_s: 0.005,
            contender_ratio: 1.0,
            degradation: Degradation::Linear { alpha: 0.1 },
        }
    }

    #[test]
    fn non_finite_parameter() {
        assert_eq!(
            PsLocality::new(f64::NAN, 1e8, 1e10, 1e9, 1e9, 0.0).unwrap_err(),
            TimingError::NonFinite { field: "compute_s" }
        );
        assert_eq!(
            RarTiming::new(f64::INFINITY, 4, 32, 0.1, 1e10, &ring()).unwrap_err(),
            TimingError::NonFinite {
                field: "model_bytes"
            }
        );
    }

    #[test]
    fn negative_time_or_size() {
        assert_eq!(
            PsLocality::new(0.1, -1.0, 1e10, 1e9, 1e9, 0.0).unwrap_err(),
            TimingError::Negative {
                field: "gradient_bytes",
                value: -1.0
            }
        );
        let layer = Layer {
            forward_s: 0.001,
            backward_s: -0.002,
            bytes: 1e6,
            update_s: 0.0,
        };
        assert_eq!(
            PsLayered::new(vec![layer], 1e9, 1e9, 0.0, 32, SyncMode::Synchronous).unwrap_err(),
            TimingError::Negative {
                field: "layers.backward_s",
                value: -0.002
            }
        );
    }

    #[test]
    fn zero_bandwidth() {
        assert_eq!(
            PsLocality::new(0.1, 1e8, 1e10, 0.0, 1e9, 0.0).unwrap_err(),
            TimingError::ZeroBandwidth {
                field: "worker_bps"
            }
        );
        let r = RingParams {
            reduction_speed_bps: 0.0,
            ..ring()
        };
        assert_eq!(
            RarTiming::new(1e8, 4, 32, 0.1, 1e10, &r).unwrap_err(),
            TimingError::ZeroBandwidth {
                field: "reduction_bps"
            }
        );
    }

    #[test]
    fn zero_workers() {
        let m = PsLocality::new(0.1, 1e8, 1e10, 1e9, 1e9, 0.0).unwrap();
        assert!(matches!(
            m.iteration_time_s(&PsConfig::Distributed { workers: 0 }),
            Err(TimingError::BadConfig { .. })
        ));
        assert!(matches!(
            RarTiming::new(1e8, 0, 32, 0.1, 1e10, &ring()),
            Err(TimingError::BadConfig { .. })
        ));
    }

    #[test]
    fn zero_parameter_servers() {
        let layer = Layer {
            forward_s: 0.001,
            backward_s: 0.002,
            bytes: 1e6,
            update_s: 0.0,
        };
        let m = PsLayered::new(vec![layer], 1e9, 1e9, 0.0, 32, SyncMode::Synchronous).unwrap();
        assert!(matches!(
            m.iteration_time_s(&(4, 0)),
            Err(TimingError::BadConfig { .. })
        ));
    }

    #[test]
    fn placement_must_add_up() {
        let m = PsLocalityPlacement(PsLocality::new(0.1, 1e8, 1e10, 1e9, 1e9, 0.0).unwrap());
        for machines in [vec![], vec![(0, 1), (0, 0)], vec![(2, 0)]] {
            assert!(matches!(
                m.iteration_time_s(&PsPlacement { machines }),
                Err(TimingError::BadConfig { .. })
            ));
        }
        // A ring cannot span more servers than it has workers.
        let r = RarTiming::new(1e8, 2, 32, 0.1, 1e10, &ring()).unwrap();
        assert!(matches!(
            IterationTime::iteration_time_s(
                &r,
                &RarConfig {
                    servers: 3,
                    contenders: 1.0
                }
            ),
            Err(TimingError::BadConfig { .. })
        ));
    }

    #[test]
    fn wrong_parameter_vector() {
        let m = PsLocality::new(0.1, 1e8, 1e10, 1e9, 1e9, 0.0).unwrap();
        assert!(matches!(
            LinearInParameters::with_params(&m, &[0.1, 1e-10]),
            Err(TimingError::BadConfig { .. })
        ));
        assert!(matches!(
            LinearInParameters::with_params(&m, &[0.1, 0.0, 1e-9]),
            Err(TimingError::BadConfig { .. })
        ));
    }

    #[test]
    fn crate_error_wraps_timing_error() {
        let e: crate::Error = TimingError::ZeroBandwidth { field: "ps_bps" }.into();
        assert!(e.to_string().contains("ps_bps"));
    }
}

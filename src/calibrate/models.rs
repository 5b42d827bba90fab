//! [`RarFamily`]: the RAR-C model of one job type across worker counts,
//! the form in which ring-all-reduce measurements are calibrated.

use crate::model::RingParams;
use crate::timing::{
    IterationTime, LinearInParameters, RarConfig, RarTiming, Sign, TimingError, bad, check_count,
    effective_contenders,
};

/// One measured configuration of a ring-all-reduce job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RarJobConfig {
    /// `w`: workers, one per GPU, ≥ 1.
    pub workers: u32,
    /// `n_srv`: servers the ring spans, `1 ≤ servers ≤ workers`.
    pub servers: u32,
    /// `p`: the contention count (active multi-server rings with a worker
    /// on one of this ring's servers, itself included; see
    /// [`contention_counts`](crate::timing::contention_counts)); ignored on
    /// one server.
    pub contention: u32,
}

/// RAR-C for one job type (fixed gradient size `m`, mini-batch `M`, and
/// reduction speed `C`) across worker counts, with contender ratio `ξ₁`.
///
/// A configuration [`RarJobConfig`] `(w, n_srv, p)` is evaluated by the
/// crate's [`RarTiming`] at `w` workers with `k = max(1, ξ₁p)`
/// ([`effective_contenders`]): the same function the schedulers call. Its
/// calibration form is [`RarTiming`]'s: `θ = (θ_A, θ_B, θ_C, ξ₂, t_c)` with
/// `θ_A = 1/b_e + 1/(2C)`, `θ_B = (1+α)/b_e`, `θ_C = 1/b_i + 1/(2C)`, all
/// non-negative, and features `(multi·D, multi·D·(k−1), single·D, n_srv, 1)`
/// for `D = 2m(w−1)/w`. `C` is never identifiable from iteration times (the
/// reduction term is `(φ_A + φ_C)/2`), so it is taken from the template and
/// `b_e`, `α`, `b_i` are recovered given it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RarFamily {
    /// The model at the template's worker count; its `workers` field is
    /// replaced by each configuration's.
    pub timing: RarTiming,
    /// `ξ₁ ∈ (0, 1]`: the fraction of contenders that transmit at once.
    pub contender_ratio: f64,
}

impl RarFamily {
    /// A family from a timing template and `ξ₁`.
    ///
    /// # Errors
    ///
    /// [`TimingError::BadConfig`] if `ξ₁` is not in `(0, 1]`.
    pub fn new(timing: RarTiming, contender_ratio: f64) -> Result<Self, TimingError> {
        if !(contender_ratio > 0.0 && contender_ratio <= 1.0) {
            return Err(bad(format!(
                "the contender ratio ξ₁ must be in (0, 1], got {contender_ratio}"
            )));
        }
        Ok(RarFamily {
            timing,
            contender_ratio,
        })
    }

    /// A family from the cluster's ring parameters (`b_e`, `C`, `ξ₂`, `ξ₁`,
    /// degradation), the intra-server bandwidth and the job's gradient
    /// bytes, mini-batch and compute per iteration.
    ///
    /// # Errors
    ///
    /// As [`RarTiming::new`] and [`RarFamily::new`].
    pub fn from_ring(
        model_bytes: f64,
        minibatch_size: u32,
        compute_s: f64,
        intra_bps: f64,
        ring: &RingParams,
    ) -> Result<Self, TimingError> {
        let timing = RarTiming::new(model_bytes, 1, minibatch_size, compute_s, intra_bps, ring)?;
        RarFamily::new(timing, ring.contender_ratio)
    }

    /// The crate's [`RarTiming`] at `workers` workers, with this family's
    /// parameters: what a scheduler evaluates.
    ///
    /// # Errors
    ///
    /// [`TimingError::BadConfig`] for zero workers.
    pub fn timing(&self, workers: u32) -> Result<RarTiming, TimingError> {
        check_count("workers", workers)?;
        Ok(RarTiming {
            workers,
            ..self.timing
        })
    }

    /// The ring parameters of this family (`b_e`, `C`, `ξ₂`, `ξ₁`,
    /// degradation), as a cluster stores them.
    pub fn ring_params(&self) -> RingParams {
        RingParams {
            external_bandwidth_bps: self.timing.external_bps,
            reduction_speed_bps: self.timing.reduction_bps,
            overhead_per_server_s: self.timing.overhead_per_server_s,
            contender_ratio: self.contender_ratio,
            degradation: self.timing.degradation,
        }
    }

    /// The same family with contender ratio `ξ₁` (unchecked: the profile
    /// fit only passes values in `(0, 1]`).
    pub(crate) fn with_contender_ratio(&self, contender_ratio: f64) -> Self {
        RarFamily {
            contender_ratio,
            ..*self
        }
    }

    /// The timing model at the configuration's `w`, and its [`RarConfig`].
    fn at(&self, cfg: &RarJobConfig) -> Result<(RarTiming, RarConfig), TimingError> {
        let timing = self.timing(cfg.workers)?;
        let contenders = effective_contenders(cfg.contention, self.contender_ratio);
        Ok((
            timing,
            RarConfig {
                servers: cfg.servers,
                contenders,
            },
        ))
    }
}

impl IterationTime for RarFamily {
    type Config = RarJobConfig;

    /// [`RarTiming`]'s formula at `w` workers and `k = max(1, ξ₁p)`.
    fn iteration_time_s(&self, cfg: &RarJobConfig) -> Result<f64, TimingError> {
        let (timing, rc) = self.at(cfg)?;
        IterationTime::iteration_time_s(&timing, &rc)
    }

    /// `w·M` samples.
    fn samples_per_iteration(&self, cfg: &RarJobConfig) -> f64 {
        f64::from(cfg.workers) * f64::from(self.timing.minibatch_size)
    }
}

/// [`RarTiming`]'s calibration form, evaluated at each configuration's `w`.
impl LinearInParameters for RarFamily {
    fn param_names(&self) -> &'static [&'static str] {
        self.timing.param_names()
    }

    fn features(&self, cfg: &RarJobConfig) -> Result<Vec<f64>, TimingError> {
        let (timing, rc) = self.at(cfg)?;
        timing.features(&rc)
    }

    fn signs(&self) -> Vec<Sign> {
        self.timing.signs()
    }

    fn params(&self) -> Vec<f64> {
        self.timing.params()
    }

    /// Keeps `m`, `M`, `C`, `ξ₁` and the single-GPU rule.
    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError> {
        Ok(RarFamily {
            timing: self.timing.with_params(theta)?,
            contender_ratio: self.contender_ratio,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Degradation;
    use crate::timing::dot;

    fn family() -> RarFamily {
        let ring = RingParams {
            external_bandwidth_bps: 1.25e9,
            reduction_speed_bps: 2e10,
            overhead_per_server_s: 0.005,
            contender_ratio: 1.0,
            degradation: Degradation::Linear { alpha: 0.1 },
        };
        RarFamily::from_ring(1e8, 32, 0.164, 1e10, &ring).unwrap()
    }

    #[test]
    fn evaluates_the_worked_example() {
        let f = family();
        let cfg = |workers, servers, contention| RarJobConfig {
            workers,
            servers,
            contention,
        };
        for (c, want) in [
            (cfg(4, 2, 2), 0.42975),
            (cfg(4, 2, 1), 0.29775),
            (cfg(4, 1, 0), 0.18775),
            (cfg(1, 1, 0), 0.169),
        ] {
            let got = f.iteration_time_s(&c).unwrap();
            assert!((got - want).abs() < 1e-12 * want, "{c:?}: {got}");
            let lin = dot(&f.params(), &f.features(&c).unwrap());
            assert!((lin - got).abs() < 1e-12 * want);
        }
        assert_eq!(f.samples_per_iteration(&cfg(4, 2, 2)), 128.0);
        assert!(f.iteration_time_s(&cfg(0, 1, 0)).is_err());
        assert!(f.iteration_time_s(&cfg(2, 3, 1)).is_err());
    }

    #[test]
    fn contender_ratio_enters_through_the_clamp() {
        let f = family().with_contender_ratio(0.5);
        // p = 1: k = max(1, 0.5) = 1; p = 4: k = 2.
        let t1 = f
            .iteration_time_s(&RarJobConfig {
                workers: 4,
                servers: 2,
                contention: 1,
            })
            .unwrap();
        assert!((t1 - 0.29775).abs() < 1e-12);
        let t4 = f
            .iteration_time_s(&RarJobConfig {
                workers: 4,
                servers: 2,
                contention: 4,
            })
            .unwrap();
        assert!((t4 - 0.42975).abs() < 1e-12);
        assert!(RarFamily::new(f.timing, 0.0).is_err());
        assert!(RarFamily::new(f.timing, 1.5).is_err());
        assert!(RarFamily::new(f.timing, f64::NAN).is_err());
    }

    #[test]
    fn ring_params_round_trip() {
        let f = family();
        let back = f.with_params(&f.params()).unwrap();
        let ring = back.ring_params();
        assert!((ring.external_bandwidth_bps / 1.25e9 - 1.0).abs() < 1e-12);
        assert_eq!(ring.reduction_speed_bps, 2e10);
        assert_eq!(ring.contender_ratio, 1.0);
        assert_eq!(back.timing(8).unwrap().workers, 8);
    }
}

//! Synthetic data recipes: measurements drawn from known parameters, so
//! that tests (and users checking their pipeline) can see a fit recover
//! them.
//!
//! Every recipe draws, per sample, a configuration and then a noise term
//! `ξ ~ N(0, 1)` (rand_distr's `StandardNormal`) from stream 0 of
//! `ChaCha8Rng::seed_from_u64(seed)`, and returns
//! `y = τ_true(cfg)·exp(σξ)`: log-normal noise of spread `σ`. Discrete draws
//! use the crate's portable uniform `U = (next_u64 >> 11)·2⁻⁵³`: an integer
//! uniform in `lo..=hi` is `lo + ⌊U·(hi − lo + 1)⌋`. The noise is drawn even
//! when `σ = 0`, so the configurations of a seed do not depend on `σ`.
//!
//! **The MAPE of a fit on these data echoes the injected noise**: even the
//! true model has `E|e^{σξ} − 1|/e^{σξ} ≈ σ·√(2/π) ≈ 0.8σ` held-out MAPE
//! (8% at `σ = 0.10`, just below the 10% target). Meeting the target here
//! shows that the fitting works, not that a timing model describes a real
//! cluster.
//!
//! | recipe | model | truth | configurations |
//! |---|---|---|---|
//! | [`rar_c_samples`] | [`RarFamily`] | [`rar_c_truth`]: `θ = (8.25·10⁻¹⁰, 8.7168·10⁻¹⁰, 1.25·10⁻¹⁰, 0.005, 0.105)`, `ξ₁ = 0.8` | `w ∈ {1, 2, 4, 8, 16, 32}`; `n_srv = 1` if `w = 1`, else uniform in `1..=min(w, 8)`; `p` uniform in `1..=4` on several servers (0 on one) |
//! | [`ps_l_samples`] | [`PsLocalityPlacement`] | [`ps_l_truth`]: `t_c = 0.12` s, `b_int = 1.6·10¹⁰`, `b_w = 1.25·10⁹`, `B_s = 2.5·10⁹` B/s, `ξ₂ = 0.004` s, `S = 97.7·10⁶` B | `w` uniform in `1..=16`, `p` in `1..=min(w, 8)`; `s` uniform in `1..=8` distinct machines out of 8 (partial Fisher–Yates); every worker and PS uniform on those `s` |
//! | [`ps_w_samples`] | [`PsLayered`] | [`ps_w_truth`]: the layers of [`ps_w_layers`] with `κ = 1.3`, `B_w = B_s = 1.25·10⁹` B/s | `w` uniform in `1..=16`, `p` in `1..=8` |

use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

use super::models::{RarFamily, RarJobConfig};
use super::{CalibrateError, Sample};
use crate::model::{Degradation, Layer, RingParams, SyncMode};
use crate::pcip::{trial_rng, uniform};
use crate::timing::{
    IterationTime, PsLayered, PsLocality, PsLocalityPlacement, PsPlacement, RarTiming,
};

/// RAR-C's true linear parameters `(θ_A, θ_B, θ_C, ξ₂, t_c)` in
/// [`rar_c_truth`]: `b_e = 1.25·10⁹`, `b_i = 10¹⁰`, `C = 2·10¹⁰` B/s,
/// `α = 0.0896`, `ξ₂ = 0.005` s, `t_c = 0.105` s.
pub const RAR_C_THETA: [f64; 5] = [8.25e-10, 8.7168e-10, 1.25e-10, 0.005, 0.105];

/// RAR-C's true contender ratio `ξ₁`.
pub const RAR_C_CONTENDER_RATIO: f64 = 0.8;

/// PS-W's true compute scale `κ` (applied to [`ps_w_layers`]).
pub const PS_W_KAPPA: f64 = 1.3;

/// PS-W's true bandwidth `B = B_w = B_s`, bytes per second.
pub const PS_W_BANDWIDTH_BPS: f64 = 1.25e9;

/// A ring-all-reduce family: a ResNet-50-sized gradient (`m = 97.7·10⁶` B),
/// `M = 32`, `C = 2·10¹⁰` B/s, `ξ₁ = 0.8`, and the given other parameters.
fn rar_family(b_e: f64, b_i: f64, alpha: f64, xi2: f64, t_c: f64) -> RarFamily {
    let ring = RingParams {
        external_bandwidth_bps: b_e,
        reduction_speed_bps: 2e10,
        overhead_per_server_s: xi2,
        contender_ratio: RAR_C_CONTENDER_RATIO,
        degradation: Degradation::Linear { alpha },
    };
    RarTiming::new(97.7e6, 1, 32, t_c, b_i, &ring)
        .and_then(|t| RarFamily::new(t, RAR_C_CONTENDER_RATIO))
        .unwrap_or_else(|e| unreachable!("the recipe's constants are valid: {e}"))
}

/// The true RAR-C family of [`rar_c_samples`] (parameters
/// [`RAR_C_THETA`], `ξ₁ = 0.8`).
///
/// ```
/// use dmlsched::calibrate::{RarJobConfig, synthetic};
/// use dmlsched::timing::{IterationTime, LinearInParameters};
///
/// let truth = synthetic::rar_c_truth();
/// let theta = truth.params();
/// assert!(theta.iter().zip(synthetic::RAR_C_THETA).all(|(a, b)| (a / b - 1.0).abs() < 1e-9));
/// let tau = |servers, contention| {
///     truth.iteration_time_s(&RarJobConfig { workers: 8, servers, contention })
/// };
/// // Compute 0.105 s; spreading the ring and contention add time.
/// assert!(0.105 < tau(1, 0)? && tau(1, 0)? < tau(4, 1)? && tau(4, 1)? < tau(4, 4)?);
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
pub fn rar_c_truth() -> RarFamily {
    rar_family(1.25e9, 1e10, 0.0896, 0.005, 0.105)
}

/// A template for fitting [`rar_c_samples`]: the same job (`m`, `M`, `C`,
/// `ξ₁`) with uninformative parameters (1 GB/s, no degradation, no
/// overhead, no compute); only its features matter.
///
/// ```
/// use dmlsched::calibrate::{RarJobConfig, synthetic};
/// use dmlsched::timing::LinearInParameters;
///
/// let (template, truth) = (synthetic::rar_c_template(), synthetic::rar_c_truth());
/// // The same job and ξ₁, so the same features; parameters to be fitted.
/// let cfg = RarJobConfig { workers: 16, servers: 4, contention: 2 };
/// assert_eq!(template.features(&cfg)?, truth.features(&cfg)?);
/// assert_eq!(template.contender_ratio, truth.contender_ratio);
/// assert_eq!(template.params()[4], 0.0); // no compute
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
pub fn rar_c_template() -> RarFamily {
    rar_family(1e9, 1e9, 0.0, 0.0, 0.0)
}

/// The true placement-level PS-L model of [`ps_l_samples`].
///
/// ```
/// use dmlsched::calibrate::synthetic;
/// use dmlsched::timing::{IterationTime, PsPlacement};
///
/// let truth = synthetic::ps_l_truth();
/// assert_eq!((truth.0.compute_s, truth.0.gradient_bytes), (0.12, 97.7e6));
/// // Four workers beside their PS, or spread over four machines.
/// let tau = |machines| truth.iteration_time_s(&PsPlacement { machines });
/// let local = tau(vec![(4, 1)])?;
/// let spread = tau(vec![(1, 1), (1, 0), (1, 0), (1, 0)])?;
/// assert!(0.12 < local && local < spread);
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
pub fn ps_l_truth() -> PsLocalityPlacement {
    PsLocality::new(0.12, 97.7e6, 1.6e10, 1.25e9, 2.5e9, 0.004)
        .unwrap_or_else(|e| unreachable!("the recipe's constants are valid: {e}"))
        .placement_level()
}

/// A template for fitting [`ps_l_samples`]: the same gradient size `S`,
/// uninformative parameters.
///
/// ```
/// use dmlsched::calibrate::{AlternationOptions, synthetic};
/// use dmlsched::timing::MaxOfLinear;
///
/// let template = synthetic::ps_l_template();
/// assert_eq!(template.0.gradient_bytes, synthetic::ps_l_truth().0.gradient_bytes);
/// // Its parameters are the alternation's usual start: 1 GB/s, no compute.
/// assert_eq!(Some(template.params()), AlternationOptions::ps_locality().start);
/// ```
pub fn ps_l_template() -> PsLocalityPlacement {
    PsLocality::new(0.0, 97.7e6, 1e9, 1e9, 1e9, 0.0)
        .unwrap_or_else(|e| unreachable!("the recipe's constants are valid: {e}"))
        .placement_level()
}

/// The PS-W layer profile: 8 layers, input side first, with forward time
/// `f_l ~ U[1, 4]` ms, backward time `g_l ~ U[2, 8]` ms and gradient bytes
/// `m_l ~ U[1, 30]` MB, no PS update time. Drawn once with the portable
/// uniform from stream 0 of `ChaCha8Rng::seed_from_u64(5)`, `f, g, m` per
/// layer in order, and kept here as a fixture, so that the recipe does not
/// depend on the generator.
///
/// ```
/// use dmlsched::calibrate::synthetic;
///
/// let layers = synthetic::ps_w_layers();
/// assert_eq!(layers.len(), 8);
/// assert!(layers.iter().all(|l| (1e-3..=4e-3).contains(&l.forward_s)));
/// assert!(layers.iter().all(|l| (2e-3..=8e-3).contains(&l.backward_s)));
/// assert!(layers.iter().all(|l| (1e6..=30e6).contains(&l.bytes) && l.update_s == 0.0));
/// assert_eq!(layers, synthetic::ps_w_layers()); // a fixture, not a draw
/// ```
pub fn ps_w_layers() -> Vec<Layer> {
    PS_W_PROFILE
        .iter()
        .map(|&(forward_s, backward_s, bytes)| Layer {
            forward_s,
            backward_s,
            bytes,
            update_s: 0.0,
        })
        .collect()
}

/// `(f_l, g_l, m_l)` of [`ps_w_layers`], seconds and bytes.
const PS_W_PROFILE: [(f64, f64, f64); 8] = [
    (
        0.001603749110043411,
        0.0062910832389402906,
        24679633.137622762,
    ),
    (
        0.003601868445931826,
        0.004558974682583765,
        9316932.730713747,
    ),
    (
        0.003963107341672752,
        0.006237695111263999,
        17856233.97592042,
    ),
    (
        0.0034326479414523337,
        0.007507559658288881,
        12709790.062577685,
    ),
    (
        0.001276993694975379,
        0.005596832481186782,
        24475258.24418865,
    ),
    (
        0.0035538572174519125,
        0.0069552271094068295,
        11742242.86892143,
    ),
    (
        0.0014967053807713202,
        0.006374924761077606,
        2303843.8746820944,
    ),
    (
        0.0027036483740079937,
        0.0039509677349464905,
        26524811.103799056,
    ),
];

/// A synchronous PS-W model of [`ps_w_layers`] scaled by `κ`, with
/// bandwidth `bps` for workers and PSs, `M = 32`.
fn ps_w_model(kappa: f64, bps: f64) -> PsLayered {
    let layers = ps_w_layers()
        .into_iter()
        .map(|l| Layer {
            forward_s: kappa * l.forward_s,
            backward_s: kappa * l.backward_s,
            ..l
        })
        .collect();
    PsLayered::new(layers, bps, bps, 0.0, 32, SyncMode::Synchronous)
        .unwrap_or_else(|e| unreachable!("the recipe's constants are valid: {e}"))
}

/// The true PS-W model of [`ps_w_samples`]: `κ = 1.3`, `B = 1.25·10⁹` B/s.
///
/// ```
/// use dmlsched::calibrate::synthetic;
/// use dmlsched::timing::IterationTime;
///
/// let truth = synthetic::ps_w_truth();
/// let profile = synthetic::ps_w_layers();
/// assert_eq!(truth.layers[0].backward_s, synthetic::PS_W_KAPPA * profile[0].backward_s);
/// assert_eq!((truth.worker_bps, truth.ps_bps), (1.25e9, 1.25e9));
/// // Eight workers push less through each of four PSs than through one.
/// assert!(truth.iteration_time_s(&(8, 4))? < truth.iteration_time_s(&(8, 1))?);
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
pub fn ps_w_truth() -> PsLayered {
    ps_w_model(PS_W_KAPPA, PS_W_BANDWIDTH_BPS)
}

/// A template for fitting [`ps_w_samples`]: the profiled layers
/// (`κ = 1`), 1 GB/s.
///
/// ```
/// use dmlsched::calibrate::synthetic;
///
/// let template = synthetic::ps_w_template();
/// assert_eq!(template.layers, synthetic::ps_w_layers()); // κ = 1
/// assert_eq!((template.worker_bps, template.ps_bps), (1e9, 1e9));
/// assert_eq!(template.batch_per_worker, synthetic::ps_w_truth().batch_per_worker);
/// ```
pub fn ps_w_template() -> PsLayered {
    ps_w_model(1.0, 1e9)
}

/// An integer uniform in `lo..=hi` from the portable uniform.
fn uniform_in<R: Rng>(rng: &mut R, lo: u32, hi: u32) -> u32 {
    let span = f64::from(hi - lo) + 1.0;
    lo + ((uniform(rng) * span) as u32).min(hi - lo)
}

/// `n` samples of `truth`: per sample, a configuration from `draw`, then
/// the noise.
fn noisy<M: IterationTime>(
    truth: &M,
    n: usize,
    sigma: f64,
    seed: u64,
    mut draw: impl FnMut(&mut rand::rngs::ChaCha8Rng) -> M::Config,
) -> Result<Vec<Sample<M::Config>>, CalibrateError> {
    if !(sigma.is_finite() && sigma >= 0.0) {
        return Err(CalibrateError::BadOption {
            option: "sigma",
            reason: format!("the noise spread must be finite and ≥ 0, got {sigma}"),
        });
    }
    let mut rng = trial_rng(seed, 0);
    (0..n)
        .map(|index| {
            let config = draw(&mut rng);
            let xi: f64 = StandardNormal.sample(&mut rng);
            let tau = truth
                .iteration_time_s(&config)
                .map_err(|source| CalibrateError::BadSample { index, source })?;
            Ok(Sample::new(config, tau * (sigma * xi).exp()))
        })
        .collect()
}

/// `n` RAR-C samples of [`rar_c_truth`] with noise `σ` (recipe in the
/// [module docs](self)).
///
/// # Errors
///
/// [`CalibrateError::BadOption`] if `σ` is not finite and ≥ 0.
///
/// ```
/// use dmlsched::calibrate::synthetic;
/// use dmlsched::timing::IterationTime;
///
/// let truth = synthetic::rar_c_truth();
/// let samples = synthetic::rar_c_samples(100, 0.0, 4)?;
/// for s in &samples {
///     assert_eq!(truth.iteration_time_s(&s.config)?, s.measured_s); // no noise
///     assert!(s.config.servers <= s.config.workers.min(8));
/// }
/// // The configurations of a seed do not depend on the noise.
/// let noisy = synthetic::rar_c_samples(100, 0.1, 4)?;
/// assert!(noisy.iter().zip(&samples).all(|(a, b)| a.config == b.config));
/// assert!(synthetic::rar_c_samples(10, -1.0, 4).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn rar_c_samples(
    n: usize,
    sigma: f64,
    seed: u64,
) -> Result<Vec<Sample<RarJobConfig>>, CalibrateError> {
    const WORKERS: [u32; 6] = [1, 2, 4, 8, 16, 32];
    noisy(&rar_c_truth(), n, sigma, seed, |rng| {
        let workers = WORKERS[uniform_in(rng, 0, 5) as usize];
        let servers = if workers == 1 {
            1
        } else {
            uniform_in(rng, 1, workers.min(8))
        };
        let contention = if servers > 1 {
            uniform_in(rng, 1, 4)
        } else {
            0
        };
        RarJobConfig {
            workers,
            servers,
            contention,
        }
    })
}

/// `n` placement-level PS-L samples of [`ps_l_truth`] with noise `σ` on 8
/// machines (recipe in the [module docs](self)).
///
/// # Errors
///
/// [`CalibrateError::BadOption`] if `σ` is not finite and ≥ 0.
///
/// ```
/// use dmlsched::calibrate::synthetic;
/// use dmlsched::timing::IterationTime;
///
/// let truth = synthetic::ps_l_truth();
/// let samples = synthetic::ps_l_samples(50, 0.0, 9)?;
/// for s in &samples {
///     let (w, p) = (s.config.workers(), s.config.ps());
///     assert_eq!(s.config.machines.len(), 8); // 8 machines, some empty
///     assert!((1..=16).contains(&w) && (1..=w.min(8)).contains(&p));
///     assert_eq!(truth.iteration_time_s(&s.config)?, s.measured_s);
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ps_l_samples(
    n: usize,
    sigma: f64,
    seed: u64,
) -> Result<Vec<Sample<PsPlacement>>, CalibrateError> {
    const MACHINES: u32 = 8;
    noisy(&ps_l_truth(), n, sigma, seed, |rng| {
        let w = uniform_in(rng, 1, 16);
        let p = uniform_in(rng, 1, w.min(8));
        let spread = uniform_in(rng, 1, MACHINES);
        // The first `spread` entries of a partial Fisher–Yates shuffle.
        let mut pool: Vec<usize> = (0..MACHINES as usize).collect();
        for i in 0..spread as usize {
            let j = uniform_in(rng, i as u32, MACHINES - 1) as usize;
            pool.swap(i, j);
        }
        let chosen = &pool[..spread as usize];
        let mut machines = vec![(0, 0); MACHINES as usize];
        for _ in 0..w {
            machines[chosen[uniform_in(rng, 0, spread - 1) as usize]].0 += 1;
        }
        for _ in 0..p {
            machines[chosen[uniform_in(rng, 0, spread - 1) as usize]].1 += 1;
        }
        PsPlacement { machines }
    })
}

/// `n` PS-W samples `(w, p)` of [`ps_w_truth`] with noise `σ` (recipe in
/// the [module docs](self)).
///
/// # Errors
///
/// [`CalibrateError::BadOption`] if `σ` is not finite and ≥ 0.
///
/// ```
/// use dmlsched::calibrate::synthetic;
/// use dmlsched::timing::IterationTime;
///
/// let truth = synthetic::ps_w_truth();
/// let samples = synthetic::ps_w_samples(50, 0.1, 9)?;
/// assert!(samples.iter().all(|s| (1..=16).contains(&s.config.0))); // workers
/// assert!(samples.iter().all(|s| (1..=8).contains(&s.config.1))); // PSs
/// // Log-normal noise of spread 0.1: within ±50% of the truth, 5 standard deviations.
/// for s in &samples {
///     let ratio = s.measured_s / truth.iteration_time_s(&s.config)?;
///     assert!((0.6..1.65).contains(&ratio));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn ps_w_samples(
    n: usize,
    sigma: f64,
    seed: u64,
) -> Result<Vec<Sample<(u32, u32)>>, CalibrateError> {
    noisy(&ps_w_truth(), n, sigma, seed, |rng| {
        let w = uniform_in(rng, 1, 16);
        (w, uniform_in(rng, 1, 8))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The draw that produced [`PS_W_PROFILE`].
    fn draw_profile(seed: u64) -> Vec<(f64, f64, f64)> {
        let mut rng = trial_rng(seed, 0);
        (0..8)
            .map(|_| {
                let f = (1.0 + 3.0 * uniform(&mut rng)) * 1e-3;
                let g = (2.0 + 6.0 * uniform(&mut rng)) * 1e-3;
                let m = (1.0 + 29.0 * uniform(&mut rng)) * 1e6;
                (f, g, m)
            })
            .collect()
    }

    #[test]
    fn layer_fixture_is_the_documented_draw() {
        let drawn = draw_profile(5);
        assert_eq!(drawn, PS_W_PROFILE.to_vec());
    }
}

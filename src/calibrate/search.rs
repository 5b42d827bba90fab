//! PS-W by a deterministic pattern search in log space ([`fit_layered`]).

use super::report::{FitMethod, FitReport, accuracy, loss_value};
use super::{CalibrateError, FitOptions, Sample, check_samples};
use crate::model::Layer;
use crate::timing::{IterationTime, PsLayered};

/// Ranges, grid and stopping rule of [`fit_layered`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchOptions {
    /// Range of the compute scale `κ` for the grid (default `[0.25, 4]`).
    pub kappa_range: (f64, f64),
    /// Range of the inverse bandwidths `1/B` for the grid, seconds per
    /// byte (default `[10⁻¹¹, 10⁻⁸]`, i.e. 100 GB/s down to 100 MB/s).
    pub inverse_bandwidth_range: (f64, f64),
    /// Fit `1/B_w` and `1/B_s` separately (three parameters) instead of one
    /// common `B = B_w = B_s` (default false).
    pub separate_bandwidths: bool,
    /// Grid points per axis; `None` = 25 for two parameters, 12 for three.
    pub grid_points: Option<usize>,
    /// Compass-search evaluations at most (default 400).
    pub max_evaluations: usize,
    /// The search stops when its step (log units) falls below this
    /// (default `10⁻⁶`).
    pub min_step: f64,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            kappa_range: (0.25, 4.0),
            inverse_bandwidth_range: (1e-11, 1e-8),
            separate_bandwidths: false,
            grid_points: None,
            max_evaluations: 400,
            min_step: 1e-6,
        }
    }
}

impl SearchOptions {
    /// 2, or 3 with separate bandwidths.
    pub fn num_params(&self) -> usize {
        if self.separate_bandwidths { 3 } else { 2 }
    }

    /// The parameter names.
    fn names(&self) -> &'static [&'static str] {
        if self.separate_bandwidths {
            &["kappa", "inv_B_w", "inv_B_s"]
        } else {
            &["kappa", "inv_B"]
        }
    }

    /// Per axis: `(ln lo, ln hi)`; the grid size. Checks the options.
    fn axes(&self) -> Result<(Vec<(f64, f64)>, usize), CalibrateError> {
        let range = |option, (lo, hi): (f64, f64)| {
            if lo > 0.0 && hi >= lo && hi.is_finite() {
                Ok((lo.ln(), hi.ln()))
            } else {
                Err(CalibrateError::BadOption {
                    option,
                    reason: format!("need 0 < lo ≤ hi < ∞, got ({lo}, {hi})"),
                })
            }
        };
        let kappa = range("kappa_range", self.kappa_range)?;
        let inv_b = range("inverse_bandwidth_range", self.inverse_bandwidth_range)?;
        let mut axes = vec![kappa, inv_b];
        if self.separate_bandwidths {
            axes.push(inv_b);
        }
        let points = self
            .grid_points
            .unwrap_or(if self.separate_bandwidths { 12 } else { 25 });
        if !(2..=200).contains(&points) {
            return Err(CalibrateError::BadOption {
                option: "grid_points",
                reason: format!("need 2 to 200 points per axis, got {points}"),
            });
        }
        if !(self.min_step.is_finite() && self.min_step > 0.0) {
            return Err(CalibrateError::BadOption {
                option: "min_step",
                reason: format!("must be finite and > 0, got {}", self.min_step),
            });
        }
        Ok((axes, points))
    }
}

/// The compass moves, in their fixed order: per axis `+e_d, −e_d`; then,
/// per pair of axes, `(+,+), (−,−), (+,−), (−,+)`; then (three axes) the
/// eight corners, `(+,+,+)` and `(−,−,−)` first, then the rest in
/// lexicographic order of signs (`+` before `−`). For two axes this is
/// `(+,0), (−,0), (0,+), (0,−), (+,+), (−,−), (+,−), (−,+)`.
fn compass_moves(d: usize) -> Vec<Vec<f64>> {
    let mut moves = Vec::new();
    for a in 0..d {
        for s in [1.0, -1.0] {
            let mut m = vec![0.0; d];
            m[a] = s;
            moves.push(m);
        }
    }
    for a in 0..d {
        for b in a + 1..d {
            for (sa, sb) in [(1.0, 1.0), (-1.0, -1.0), (1.0, -1.0), (-1.0, 1.0)] {
                let mut m = vec![0.0; d];
                (m[a], m[b]) = (sa, sb);
                moves.push(m);
            }
        }
    }
    if d == 3 {
        let mut corners = vec![vec![1.0; 3], vec![-1.0; 3]];
        for mask in 0..8u32 {
            let m: Vec<f64> = (0..3)
                .map(|k| if mask & (4 >> k) == 0 { 1.0 } else { -1.0 })
                .collect();
            if !corners.contains(&m) {
                corners.push(m);
            }
        }
        moves.extend(corners);
    }
    moves
}

/// The template with compute scale `κ = e^{x₀}` and inverse bandwidths
/// `e^{x₁}` (and `e^{x₂}` for the PSs with separate bandwidths).
fn model_at(template: &PsLayered, x: &[f64]) -> PsLayered {
    let kappa = x[0].exp();
    let worker_bps = (-x[1]).exp();
    let ps_bps = (-x[x.len() - 1]).exp();
    PsLayered {
        layers: template
            .layers
            .iter()
            .map(|l| Layer {
                forward_s: l.forward_s * kappa,
                backward_s: l.backward_s * kappa,
                ..*l
            })
            .collect(),
        worker_bps,
        ps_bps,
        ..template.clone()
    }
}

/// The loss at `x`, or `+∞` where a prediction fails or is not finite.
fn loss_at(
    template: &PsLayered,
    x: &[f64],
    samples: &[Sample<(u32, u32)>],
    opts: &FitOptions,
) -> f64 {
    let m = model_at(template, x);
    let mut yhat = Vec::with_capacity(samples.len());
    for s in samples {
        match m.iteration_time_s(&s.config) {
            Ok(v) if v.is_finite() => yhat.push(v),
            _ => return f64::INFINITY,
        }
    }
    let y: Vec<f64> = samples.iter().map(|s| s.measured_s).collect();
    let w: Vec<f64> = samples.iter().map(|s| s.weight).collect();
    let l = loss_value(&y, &yhat, &w, opts.loss);
    if l.is_nan() { f64::INFINITY } else { l }
}

/// Fits PS-W's compute scale `κ` and bandwidth `B = B_w = B_s` (or `B_w`
/// and `B_s` separately) to measured iteration times at `(w, p)`.
///
/// The per-layer profile (forward, backward, bytes, update) of `model` is
/// an input; `κ` multiplies every forward and backward time. The loss
/// ([`FitOptions::loss`], relative by default: `Σ w_i((τ̂_i − y_i)/y_i)²`)
/// is minimised over `x = (ln κ, ln(1/B))` by
///
/// 1. a grid of `G × G` points spanning the ranges (`G³` with separate
///    bandwidths), the first minimum in row-major order kept;
/// 2. a compass search from it, with a step of one grid cell per axis
///    scaled by `s = 1`: try the neighbours `x ± s·h` in a fixed order
///    (`(+,0), (−,0), (0,+), (0,−), (+,+), (−,−), (+,−), (−,+)` for two
///    parameters, 26 moves for three), move to the first that improves,
///    halve `s` when none does; stop when `s·max h < min_step` or after
///    `max_evaluations` evaluations.
///
/// The fitted model is the template with the layers scaled by `κ` and the
/// fitted bandwidths: the crate's [`PsLayered`], evaluated by the same
/// recursion the schedulers use. The report's `theta` is `(κ, 1/B)` or
/// `(κ, 1/B_w, 1/B_s)`; `rank` and `cond` are `None`.
///
/// # Errors
///
/// The sample checks of [`fit_linear`](super::fit_linear) (with `q` = 2 or
/// 3); [`CalibrateError::BadOption`] for bad ranges, grid size or step;
/// [`CalibrateError::BadSample`] for a configuration with no worker or no
/// PS; [`CalibrateError::NonFinite`] if no point of the grid gives a finite
/// loss.
///
/// # Complexity
///
/// `(G^d + max_evaluations)` loss evaluations, each `n` recursions of
/// `O(L)`.
///
/// ```
/// use dmlsched::calibrate::{FitOptions, SearchOptions, fit_layered, synthetic};
///
/// // Noise-free PS-W measurements of the profiled layers run 1.3 times slower.
/// let samples = synthetic::ps_w_samples(40, 0.0, 2)?;
/// let (model, report) = fit_layered(
///     &synthetic::ps_w_template(), &samples, &FitOptions::default(), &SearchOptions::default(),
/// )?;
/// let kappa = report.param("kappa").expect("a compute scale");
/// assert!((kappa / synthetic::PS_W_KAPPA - 1.0).abs() < 0.01);
/// // The fitted model is the crate's PsLayered with the fitted bandwidth.
/// assert!((model.worker_bps / synthetic::PS_W_BANDWIDTH_BPS - 1.0).abs() < 0.01);
/// assert!(report.accuracy.mape_pct < 0.5);
/// # Ok::<(), dmlsched::calibrate::CalibrateError>(())
/// ```
pub fn fit_layered(
    model: &PsLayered,
    samples: &[Sample<(u32, u32)>],
    opts: &FitOptions,
    search: &SearchOptions,
) -> Result<(PsLayered, FitReport), CalibrateError> {
    opts.validate()?;
    let names = search.names();
    check_samples(samples, names.len())?;
    for (index, s) in samples.iter().enumerate() {
        model
            .trace(s.config.0, s.config.1)
            .map_err(|source| CalibrateError::BadSample { index, source })?;
    }
    let (axes, points) = search.axes()?;
    let loss = |x: &[f64]| loss_at(model, x, samples, opts);
    let (mut x, mut fx, grid_evaluations) = grid_search(&axes, points, &loss);
    if !fx.is_finite() {
        return Err(CalibrateError::NonFinite {
            what: "the loss at every grid point".into(),
        });
    }
    let h: Vec<f64> = axes
        .iter()
        .map(|(lo, hi)| (hi - lo) / (points - 1) as f64)
        .collect();
    let hmax = h.iter().copied().fold(0.0, f64::max);
    let moves = compass_moves(axes.len());
    let (mut scale, mut evaluations) = (1.0_f64, 0);
    'search: while scale * hmax >= search.min_step {
        for m in &moves {
            if evaluations >= search.max_evaluations {
                break 'search;
            }
            let cand: Vec<f64> = (0..x.len()).map(|d| x[d] + scale * h[d] * m[d]).collect();
            evaluations += 1;
            let fc = loss(&cand);
            if fc < fx {
                (x, fx) = (cand, fc);
                continue 'search;
            }
        }
        scale *= 0.5;
    }
    let fitted = model_at(model, &x);
    let y: Vec<f64> = samples.iter().map(|s| s.measured_s).collect();
    let yhat: Vec<f64> = samples
        .iter()
        .map(|s| fitted.iteration_time_s(&s.config).unwrap_or(f64::NAN))
        .collect();
    let theta: Vec<f64> = x.iter().map(|v| v.exp()).collect();
    let report = FitReport {
        theta,
        names: names.to_vec(),
        accuracy: accuracy(&y, &yhat),
        n: samples.len(),
        q: names.len(),
        rank: None,
        cond: None,
        at_bound: Vec::new(),
        warnings: Vec::new(),
        loss_value: fx,
        method: FitMethod::PatternSearch {
            grid_evaluations,
            search_evaluations: evaluations,
            final_step: scale * hmax,
        },
    };
    Ok((fitted, report))
}

/// The grid minimum: `(point, loss, evaluations)`; the first minimum in
/// row-major order (last axis fastest).
fn grid_search(
    axes: &[(f64, f64)],
    points: usize,
    loss: &impl Fn(&[f64]) -> f64,
) -> (Vec<f64>, f64, usize) {
    let d = axes.len();
    let total = points.pow(d as u32);
    let at = |idx: usize| -> Vec<f64> {
        let mut rest = idx;
        let mut x = vec![0.0; d];
        for k in (0..d).rev() {
            let i = rest % points;
            rest /= points;
            let (lo, hi) = axes[k];
            x[k] = lo + (hi - lo) * i as f64 / (points - 1) as f64;
        }
        x
    };
    let (mut best, mut fbest) = (at(0), f64::INFINITY);
    for idx in 0..total {
        let x = at(idx);
        let f = loss(&x);
        if f < fbest {
            (best, fbest) = (x, f);
        }
    }
    (best, fbest, total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compass_order_in_two_dimensions() {
        let m = compass_moves(2);
        let want: Vec<Vec<f64>> = [
            (1.0, 0.0),
            (-1.0, 0.0),
            (0.0, 1.0),
            (0.0, -1.0),
            (1.0, 1.0),
            (-1.0, -1.0),
            (1.0, -1.0),
            (-1.0, 1.0),
        ]
        .iter()
        .map(|&(a, b)| vec![a, b])
        .collect();
        assert_eq!(m, want);
    }

    #[test]
    fn twenty_six_distinct_moves_in_three_dimensions() {
        let m = compass_moves(3);
        assert_eq!(m.len(), 26);
        for (i, a) in m.iter().enumerate() {
            assert!(a.iter().any(|&v| v != 0.0));
            assert!(m[i + 1..].iter().all(|b| b != a));
        }
        assert_eq!(m[18], vec![1.0, 1.0, 1.0]);
        assert_eq!(m[19], vec![-1.0, -1.0, -1.0]);
    }

    #[test]
    fn grid_covers_both_ends() {
        let seen = std::cell::RefCell::new(Vec::new());
        let (_, _, n) = grid_search(&[(0.0, 1.0), (2.0, 3.0)], 3, &|x: &[f64]| {
            seen.borrow_mut().push(x.to_vec());
            (x[0] - 1.0).abs() + (x[1] - 2.5).abs()
        });
        assert_eq!(n, 9);
        let seen = seen.into_inner();
        assert_eq!(seen[0], vec![0.0, 2.0]);
        assert_eq!(seen[8], vec![1.0, 3.0]);
        assert_eq!(seen[1], vec![0.0, 2.5]);
    }
}

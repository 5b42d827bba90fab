//! Continuous allocations of one divisible resource: the sum of ratios
//! `F(x) = Σ_i V_i/θ_i(x_i)` under `Σ_i x_i ≤ C`, `x_i ≥ x_i^min`, with
//! positive, increasing, concave, piecewise-linear throughputs `θ_i`, by
//! Frank–Wolfe in throughput space with the parametric weights
//! `ω_i = V_i/θ_i²`.
//!
//! Each term `V_i/θ_i` is convex in `θ_i`, and the set `Θ` of throughputs
//! reachable by some feasible allocation (`θ_i(x_i^min) ≤ θ_i ≤ θ_i(x_i)`)
//! is convex because each `θ_i` is concave. At an iterate `θ`, the
//! weighted-throughput subproblem `max_{s∈Θ} Σ_i ω_i s_i` (a fractional
//! knapsack over the linear pieces: `x^min` to everyone, then capacity to
//! the pieces in decreasing `ω_i × slope`) gives the direction and the
//! Frank–Wolfe gap `g = Σ_i ω_i (s_i − θ_i) ≥ F(θ) − F*`, so `F(θ) − g` is
//! a lower bound on the optimum. An exact line search (bisection on the
//! derivative, 60 steps) makes `F` fall at every step (the undamped
//! parametric update, `γ = 1` always, can cycle). Allocations follow the
//! same convex combinations, so the reported allocation reaches at least
//! the reported throughputs.
//!
//! Not implemented: several resources (the subproblem would be an LP), and
//! rounding to discrete configurations.

use crate::model::units::Num;

use super::SmdError;

/// One job: remaining work and a concave piecewise-linear throughput of
/// the resource, `θ(x^min) = theta_min`, then `segments` of `(length,
/// slope)` with non-increasing slopes (the last may be infinitely long);
/// flat beyond.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinuousJob {
    /// `V_i` (finite, ≥ 0).
    pub work: f64,
    /// `x_i^min` (finite, > 0).
    pub x_min: f64,
    /// `θ_i(x_i^min)` (finite, > 0).
    pub theta_min: f64,
    /// `(length > 0, slope ≥ 0)` pieces, slopes non-increasing.
    pub segments: Vec<(f64, f64)>,
}

impl ContinuousJob {
    /// `θ(x) = a·x` from `x_min` on.
    pub fn linear(work: f64, a: f64, x_min: f64) -> Self {
        ContinuousJob {
            work,
            x_min,
            theta_min: a * x_min,
            segments: vec![(f64::INFINITY, a)],
        }
    }

    /// `θ(x)` for `x ≥ x_min`.
    pub fn theta(&self, x: f64) -> f64 {
        let mut left = (x - self.x_min).max(0.0);
        let mut t = self.theta_min;
        for &(len, slope) in &self.segments {
            let step = left.min(len);
            t += step * slope;
            left -= step;
            if left <= 0.0 {
                break;
            }
        }
        t
    }

    fn validate(&self) -> Result<(), SmdError> {
        let bad = |reason: String| SmdError::InvalidInput {
            name: "continuous job",
            reason,
        };
        if !(self.work.is_finite() && self.work >= 0.0) {
            return Err(bad(format!(
                "work {} is not finite and ≥ 0",
                Num(self.work)
            )));
        }
        if !(self.x_min.is_finite() && self.x_min > 0.0) {
            return Err(bad(format!(
                "x_min {} is not finite and > 0",
                Num(self.x_min)
            )));
        }
        if !(self.theta_min.is_finite() && self.theta_min > 0.0) {
            return Err(bad(format!(
                "theta_min {} is not finite and > 0",
                Num(self.theta_min)
            )));
        }
        let mut last = f64::INFINITY;
        for &(len, slope) in &self.segments {
            if !(len > 0.0 && slope.is_finite() && slope >= 0.0 && slope <= last) {
                return Err(bad(format!(
                    "segment ({}, {}) is not a positive length with a finite, non-negative, non-increasing slope",
                    Num(len),
                    Num(slope)
                )));
            }
            last = slope;
        }
        Ok(())
    }
}

/// Options of [`solve_continuous`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ContinuousOptions {
    /// Stop when `g ≤ ε·F` (default 10⁻⁴; finite, ≥ 0).
    pub epsilon: f64,
    /// Most iterations (default 2000).
    pub max_iterations: usize,
}

impl Default for ContinuousOptions {
    fn default() -> Self {
        ContinuousOptions {
            epsilon: 1e-4,
            max_iterations: 2000,
        }
    }
}

/// The result of [`solve_continuous`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ContinuousSolution {
    /// `x_i`, summing to at most `C`.
    pub allocation: Vec<f64>,
    /// `θ_i`, at most `θ_i(x_i)`.
    pub throughput: Vec<f64>,
    /// `F(θ) = Σ_i V_i/θ_i`.
    pub objective: f64,
    /// The last Frank–Wolfe gap `g ≥ F(θ) − F*`.
    pub gap: f64,
    /// `F(θ) − g ≤ F*`.
    pub lower_bound: f64,
    /// `(F, g)` before each step.
    pub history: Vec<(f64, f64)>,
}

/// The weighted-throughput subproblem: allocation and throughputs.
fn best_response(jobs: &[ContinuousJob], capacity: f64, w: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let mut x: Vec<f64> = jobs.iter().map(|j| j.x_min).collect();
    let mut left = capacity - x.iter().sum::<f64>();
    let mut pieces: Vec<(f64, usize, f64)> = jobs
        .iter()
        .enumerate()
        .flat_map(|(i, j)| j.segments.iter().map(move |&(len, s)| (s, i, len)))
        .filter(|(s, _, _)| *s > 0.0)
        .collect();
    // Within a job, slopes are non-increasing, so a stable sort keeps the
    // pieces of each job in order.
    pieces.sort_by(|a, b| (w[b.1] * b.0).total_cmp(&(w[a.1] * a.0)));
    for (_, i, len) in pieces {
        if left <= 0.0 {
            break;
        }
        let step = len.min(left);
        x[i] += step;
        left -= step;
    }
    let s = jobs.iter().zip(&x).map(|(j, &xi)| j.theta(xi)).collect();
    (x, s)
}

/// `argmin_{γ∈[0,1]} Σ_i V_i/(θ_i + γ d_i)` by bisection on the derivative.
fn line_search(jobs: &[ContinuousJob], theta: &[f64], d: &[f64]) -> f64 {
    let slope = |g: f64| -> f64 {
        jobs.iter()
            .zip(theta.iter().zip(d))
            .map(|(j, (t, di))| -j.work * di / (t + g * di).powi(2))
            .sum()
    };
    if slope(1.0) <= 0.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0, 1.0);
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if slope(mid) <= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Minimises `Σ_i V_i/θ_i(x_i)` under `Σ_i x_i ≤ capacity`,
/// `x_i ≥ x_i^min`, starting from an equal split of what `x^min` leaves.
///
/// ```
/// use dmlsched::algorithms::smd::continuous::*;
/// // θ_i(x) = x, V = (1, 4), C = 3: x* ∝ √V, so x* = (1, 2) and F* = 3.
/// let jobs = [ContinuousJob::linear(1.0, 1.0, 0.01), ContinuousJob::linear(4.0, 1.0, 0.01)];
/// let s = solve_continuous(&jobs, 3.0, &ContinuousOptions::default())?;
/// assert!((s.objective - 3.0).abs() < 1e-3 && s.lower_bound <= 3.0 + 1e-9);
/// assert!((s.allocation[0] - 1.0).abs() < 1e-2 && (s.allocation[1] - 2.0).abs() < 1e-2);
/// # Ok::<(), dmlsched::algorithms::smd::SmdError>(())
/// ```
///
/// # Errors
///
/// [`SmdError::InvalidInput`] for no job, an invalid job, a capacity that is
/// not finite and positive or smaller than `Σ_i x_i^min`;
/// [`SmdError::InvalidOption`] for a bad `epsilon`; [`SmdError::TooLarge`]
/// beyond 10⁶ pieces.
pub fn solve_continuous(
    jobs: &[ContinuousJob],
    capacity: f64,
    opts: &ContinuousOptions,
) -> Result<ContinuousSolution, SmdError> {
    if jobs.is_empty() {
        return Err(SmdError::InvalidInput {
            name: "jobs",
            reason: "no job".into(),
        });
    }
    for j in jobs {
        j.validate()?;
    }
    let pieces: usize = jobs.iter().map(|j| j.segments.len() + 1).sum();
    super::error::too_large("continuous pieces", pieces as f64, 1e6)?;
    if !(opts.epsilon.is_finite() && opts.epsilon >= 0.0) {
        return Err(SmdError::InvalidOption {
            name: "epsilon",
            reason: format!("{} is not finite and ≥ 0", Num(opts.epsilon)),
        });
    }
    let floor: f64 = jobs.iter().map(|j| j.x_min).sum();
    if !(capacity.is_finite() && capacity > 0.0 && floor <= capacity) {
        return Err(SmdError::InvalidInput {
            name: "capacity",
            reason: format!(
                "{} is not finite, positive and ≥ Σ x_min = {}",
                Num(capacity),
                Num(floor)
            ),
        });
    }
    let share = (capacity - floor) / jobs.len() as f64;
    let mut x: Vec<f64> = jobs.iter().map(|j| j.x_min + share).collect();
    let mut theta: Vec<f64> = jobs.iter().zip(&x).map(|(j, &xi)| j.theta(xi)).collect();
    let f = |t: &[f64]| -> f64 { jobs.iter().zip(t).map(|(j, ti)| j.work / ti).sum() };
    let mut history = Vec::new();
    let mut gap = f64::INFINITY;
    for _ in 0..=opts.max_iterations {
        let fv = f(&theta);
        let w: Vec<f64> = jobs
            .iter()
            .zip(&theta)
            .map(|(j, t)| j.work / (t * t))
            .collect();
        let (xs, s) = best_response(jobs, capacity, &w);
        gap = w
            .iter()
            .zip(s.iter().zip(&theta))
            .map(|(wi, (si, ti))| wi * (si - ti))
            .sum::<f64>()
            .max(0.0);
        history.push((fv, gap));
        if gap <= opts.epsilon * fv || history.len() > opts.max_iterations {
            break;
        }
        let d: Vec<f64> = s.iter().zip(&theta).map(|(si, ti)| si - ti).collect();
        let g = line_search(jobs, &theta, &d);
        for i in 0..jobs.len() {
            theta[i] += g * d[i];
            x[i] += g * (xs[i] - x[i]);
        }
    }
    let objective = f(&theta);
    Ok(ContinuousSolution {
        allocation: x,
        throughput: theta,
        objective,
        gap,
        lower_bound: objective - gap,
        history,
    })
}

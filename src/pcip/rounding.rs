//! Scaling and independent randomized rounding ([algorithms guide, section
//! 1.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#pcip-rounding)).

use rand::rngs::ChaCha8Rng;
use rand::{Rng, SeedableRng};

use super::problem::PcProblem;

/// Values within this distance of an integer snap to it, both in the cleaned
/// LP point and in the scaled point `y = min(β·x*, u)` (so that values like
/// 0.999999999 trigger no spurious draw, and an integral LP point rounds
/// deterministically).
pub(crate) const INT_TOL: f64 = 1e-9;

/// Snaps `v` to the nearest integer when within [`INT_TOL`].
pub(crate) fn snap(v: f64) -> f64 {
    let r = v.round();
    if (v - r).abs() <= INT_TOL { r } else { v }
}

/// The scaled point `y_j = min(β·x*_j, u_j)`, clamped below at 0 and snapped
/// to integers within `INT_TOL` = 10⁻⁹ (continuous columns are not snapped).
///
/// ```
/// use dmlsched::certificate::Sense;
/// use dmlsched::pcip::{PcBuilder, scaled_point};
/// let p = PcBuilder::new(Sense::Minimise, 2).upper(1, Some(2))
///     .covering_row(&[(0, 1.0), (1, 1.0)], 1.0).build().unwrap();
/// assert_eq!(scaled_point(&p, &[0.5, 1.5], 1.5), vec![0.75, 2.0]); // 2.25 clamps to u = 2
/// ```
pub fn scaled_point(p: &PcProblem, lp_x: &[f64], beta: f64) -> Vec<f64> {
    lp_x.iter()
        .enumerate()
        .map(|(j, &x)| {
            let y = (beta * x).min(p.upper(j)).max(0.0);
            if p.is_integer(j) { snap(y) } else { y }
        })
        .collect()
}

/// The portable uniform `(next_u64 >> 11) · 2⁻⁵³` in `[0, 1)` (not
/// `random_bool`, whose values `rand` does not promise to keep stable).
pub(crate) fn uniform<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

/// Draws one uniform per column, in column order (exactly one draw per
/// column, even when its fractional part is 0, so that columns
/// never shift each other's draws).
pub(crate) fn draw_uniforms<R: Rng + ?Sized>(n: usize, rng: &mut R) -> Vec<f64> {
    (0..n).map(|_| uniform(rng)).collect()
}

/// Rounds `y` with given uniforms: integer column j becomes
/// `⌊y_j⌋ + 1[U_j < f_j]`; continuous columns keep `y_j`. The test hook that
/// forces a chosen rounding outcome.
///
/// `uniforms` must have one entry per column; missing entries count as 1
/// (round down).
pub(crate) fn round_with_uniforms(p: &PcProblem, y: &[f64], uniforms: &[f64]) -> Vec<f64> {
    y.iter()
        .enumerate()
        .map(|(j, &v)| {
            if !p.is_integer(j) {
                return v;
            }
            let fl = v.floor();
            let f = v - fl;
            let u = uniforms.get(j).copied().unwrap_or(1.0);
            if u < f { fl + 1.0 } else { fl }
        })
        .collect()
}

/// Rounds `y` independently with uniforms drawn from `rng`: integer column j
/// becomes `⌊y_j⌋ + 1[U_j < f_j]` with `f_j` its fractional part, so
/// `E[X_j] = y_j`.
pub fn round_independent<R: Rng + ?Sized>(p: &PcProblem, y: &[f64], rng: &mut R) -> Vec<f64> {
    let u = draw_uniforms(y.len(), rng);
    round_with_uniforms(p, y, &u)
}

/// The random stream of trial `t`: `ChaCha8Rng::seed_from_u64(seed)` with
/// `set_stream(t)`: streams are independent, reproducible and independent of
/// thread scheduling.
pub fn trial_rng(seed: u64, trial: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(trial);
    rng
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::Sense;
    use crate::pcip::PcBuilder;

    fn problem(n: usize, u: u32) -> PcProblem {
        let mut b = PcBuilder::new(Sense::Minimise, n);
        for j in 0..n {
            b = b.upper(j, Some(u));
        }
        b.covering_row(&(0..n).map(|j| (j, 1.0)).collect::<Vec<_>>(), 1.0)
            .build()
            .unwrap()
    }

    #[test]
    fn rounding_rule() {
        let p = problem(3, 3);
        let y = [0.25, 1.5, 2.0];
        // U < f rounds up; U ≥ f rounds down; integral y never moves.
        assert_eq!(
            round_with_uniforms(&p, &y, &[0.2, 0.5, 0.0]),
            vec![1.0, 1.0, 2.0]
        );
        assert_eq!(
            round_with_uniforms(&p, &y, &[0.25, 0.49, 0.999]),
            vec![0.0, 2.0, 2.0]
        );
    }

    #[test]
    fn snapping_and_clamping() {
        let p = problem(3, 2);
        let y = scaled_point(&p, &[0.999_999_999_9, 1.8, -1e-12], 1.0);
        assert_eq!(y, vec![1.0, 1.8, 0.0]);
        let y = scaled_point(&p, &[1.9, 0.5, 0.0], 2.0);
        assert_eq!(y[0], 2.0); // clamped: deterministic
        assert_eq!(round_with_uniforms(&p, &y, &[0.0, 0.0, 0.0])[0], 2.0);
    }

    #[test]
    fn expectation_identity_on_a_grid() {
        let p = problem(1, 5);
        for y in [0.0, 0.125, 0.5, 2.75, 4.875] {
            let n = 1024;
            let mean: f64 = (0..n)
                .map(|i| round_with_uniforms(&p, &[y], &[(i as f64 + 0.5) / n as f64])[0])
                .sum::<f64>()
                / n as f64;
            assert!((mean - y).abs() < 1e-12, "y = {y}, mean = {mean}");
        }
    }

    #[test]
    fn streams_are_aligned_and_reproducible() {
        let p = problem(6, 1);
        let y1 = [0.5; 6];
        let mut y2 = y1;
        y2[3] = 0.9; // changing f_3 never changes column 5's outcome
        for t in 0..50 {
            let a = round_independent(&p, &y1, &mut trial_rng(7, t));
            let b = round_independent(&p, &y2, &mut trial_rng(7, t));
            assert_eq!(a[5], b[5]);
            assert_eq!(a, round_independent(&p, &y1, &mut trial_rng(7, t)));
        }
        let u = uniform(&mut trial_rng(0, 0));
        assert!((0.0..1.0).contains(&u));
    }
}

//! Sign-constrained least squares: the Lawson–Hanson active-set method for
//! non-negative least squares, with free parameters projected out first.
//!
//! Everything here works on the scaled problem `Ã θ̃ ≈ b` (columns of unit
//! norm), where one tolerance fits every column.

use nalgebra::{DMatrix, DVector, SVD};

use super::CalibrateError;

/// Iteration cap of nalgebra's SVD (total implicit-shift sweeps).
pub(crate) const SVD_MAX_ITER: usize = 10_000;

/// The SVD of `a`, or [`CalibrateError::NoConvergence`].
pub(crate) fn svd(
    a: DMatrix<f64>,
) -> Result<SVD<f64, nalgebra::Dyn, nalgebra::Dyn>, CalibrateError> {
    SVD::try_new(a, true, true, f64::EPSILON, SVD_MAX_ITER).ok_or(CalibrateError::NoConvergence {
        what: "singular value decomposition",
        iterations: SVD_MAX_ITER,
    })
}

/// The default rank tolerance `max(rows, cols)·ε·σ_max`.
pub(crate) fn default_rank_tol(rows: usize, cols: usize, sigma_max: f64) -> f64 {
    rows.max(cols) as f64 * f64::EPSILON * sigma_max
}

/// The minimum-norm least-squares solution of `a x ≈ b`, singular values
/// below the default tolerance treated as 0. An empty column set gives an
/// empty vector.
pub(crate) fn least_squares(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
) -> Result<DVector<f64>, CalibrateError> {
    if a.ncols() == 0 || a.nrows() == 0 {
        return Ok(DVector::zeros(a.ncols()));
    }
    let (rows, cols) = a.shape();
    let dec = svd(a.clone())?;
    let smax = dec.singular_values.max();
    let tol = default_rank_tol(rows, cols, smax);
    dec.solve(b, tol)
        .map_err(|_| CalibrateError::NoConvergence {
            what: "singular value decomposition",
            iterations: SVD_MAX_ITER,
        })
}

/// `min ‖a x − b‖` subject to `x_j ≥ 0` for every `j` with `nonneg[j]`
/// (the others free). Returns `x` and the constrained indices that ended
/// at 0.
///
/// Free columns are projected out first: with `Q_F` an orthonormal basis of
/// the free columns, NNLS runs on `(I − Q_F Q_Fᵀ)·a_N` and
/// `(I − Q_F Q_Fᵀ)·b`, then the free part solves `a_F x_F ≈ b − a_N x_N`.
///
/// # Errors
///
/// [`CalibrateError::NoConvergence`] from the NNLS loop or an SVD.
pub(crate) fn solve_signed(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    nonneg: &[bool],
) -> Result<(DVector<f64>, Vec<usize>), CalibrateError> {
    let cons: Vec<usize> = (0..a.ncols()).filter(|&j| nonneg[j]).collect();
    let free: Vec<usize> = (0..a.ncols()).filter(|&j| !nonneg[j]).collect();
    let an = a.select_columns(&cons);
    let xn = if free.is_empty() {
        nnls(&an, b)?
    } else {
        let af = a.select_columns(&free);
        let qf = af.clone().qr().q();
        let an_p = &an - &qf * qf.tr_mul(&an);
        let b_p = b - &qf * qf.tr_mul(b);
        nnls(&an_p, &b_p)?
    };
    let mut x = DVector::zeros(a.ncols());
    for (k, &j) in cons.iter().enumerate() {
        x[j] = xn[k];
    }
    if !free.is_empty() {
        let af = a.select_columns(&free);
        let xf = least_squares(&af, &(b - &an * &xn))?;
        for (k, &j) in free.iter().enumerate() {
            x[j] = xf[k];
        }
    }
    let at_bound = cons.into_iter().filter(|&j| x[j] == 0.0).collect();
    Ok((x, at_bound))
}

/// Lawson–Hanson non-negative least squares: `min ‖a x − b‖` with `x ≥ 0`.
///
/// Passive set P (free to move), zero set Z. While some `j ∈ Z` has a
/// gradient `gr_j = [aᵀ(b − a x)]_j > tol` (`tol = 10⁻¹²·‖aᵀb‖∞`), the
/// largest (smallest index on ties) enters P; the inner loop solves least
/// squares on P and, while that leaves a coordinate ≤ 0, steps towards it
/// as far as feasibility allows and returns the coordinates that reach
/// `≤ tol` to Z. An entering index that the inner loop sends straight back
/// (a gradient that is positive only by rounding) is skipped until `x`
/// next changes.
///
/// # Errors
///
/// [`CalibrateError::NoConvergence`] after `3q` outer iterations.
///
/// # Complexity
///
/// At most `3q` outer iterations, each with at most `q + 1` least-squares
/// solves of cost `O(n q²)`.
pub(crate) fn nnls(a: &DMatrix<f64>, b: &DVector<f64>) -> Result<DVector<f64>, CalibrateError> {
    let q = a.ncols();
    let max_outer = 3 * q;
    let mut x = DVector::zeros(q);
    let tol = 1e-12 * a.tr_mul(b).amax();
    if q == 0 || tol <= 0.0 || !tol.is_finite() {
        return Ok(x);
    }
    let mut passive = vec![false; q];
    let mut skipped = vec![false; q];
    let mut outer = 0;
    loop {
        let gr = a.tr_mul(&(b - a * &x));
        let mut entering: Option<usize> = None;
        for j in (0..q).filter(|&j| !passive[j] && !skipped[j] && gr[j] > tol) {
            if entering.is_none_or(|k| gr[j] > gr[k]) {
                entering = Some(j);
            }
        }
        let Some(j) = entering else {
            return Ok(x);
        };
        outer += 1;
        if outer > max_outer {
            return Err(CalibrateError::NoConvergence {
                what: "non-negative least squares",
                iterations: max_outer,
            });
        }
        passive[j] = true;
        let before = x.clone();
        inner_loop(a, b, &mut x, &mut passive, tol)?;
        if !passive[j] && x == before {
            skipped[j] = true;
        } else {
            skipped.fill(false);
        }
    }
}

/// The inner loop of Lawson–Hanson: least squares on the passive set,
/// stepping back towards feasibility until every passive coordinate of the
/// solution is positive.
fn inner_loop(
    a: &DMatrix<f64>,
    b: &DVector<f64>,
    x: &mut DVector<f64>,
    passive: &mut [bool],
    tol: f64,
) -> Result<(), CalibrateError> {
    let q = a.ncols();
    // Every pass that does not finish removes at least one index from P.
    for _ in 0..=q {
        let cols: Vec<usize> = (0..q).filter(|&j| passive[j]).collect();
        let zp = least_squares(&a.select_columns(&cols), b)?;
        let mut z = DVector::zeros(q);
        for (k, &j) in cols.iter().enumerate() {
            z[j] = zp[k];
        }
        if cols.iter().all(|&j| z[j] > 0.0) {
            *x = z;
            return Ok(());
        }
        let (mut alpha, mut blocking) = (f64::INFINITY, cols[0]);
        for &j in cols.iter().filter(|&&j| z[j] <= 0.0) {
            let ratio = x[j] / (x[j] - z[j]);
            if ratio < alpha {
                (alpha, blocking) = (ratio, j);
            }
        }
        *x += (&z - &*x) * alpha;
        x[blocking] = 0.0;
        for &j in &cols {
            if x[j] <= tol {
                passive[j] = false;
                x[j] = 0.0;
            }
        }
    }
    Err(CalibrateError::NoConvergence {
        what: "non-negative least squares (inner loop)",
        iterations: q + 1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-10 * b.abs().max(1.0)
    }

    #[test]
    fn interior_optimum_is_the_least_squares_solution() {
        let a = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let b = DVector::from_vec(vec![3.0, 1.0, 2.0]);
        let x = nnls(&a, &b).unwrap();
        assert!(close(x[0], 7.0 / 3.0) && close(x[1], 1.0 / 3.0), "{x}");
    }

    #[test]
    fn negative_coordinate_is_clamped() {
        // Unconstrained optimum (11/3, −1/3); with x ≥ 0: (3.5, 0).
        let a = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        let b = DVector::from_vec(vec![5.0, 1.0, 2.0]);
        let ls = least_squares(&a, &b).unwrap();
        assert!(close(ls[0], 11.0 / 3.0) && close(ls[1], -1.0 / 3.0));
        let x = nnls(&a, &b).unwrap();
        assert!(close(x[0], 3.5) && x[1] == 0.0, "{x}");
        let (xs, at_bound) = solve_signed(&a, &b, &[true, true]).unwrap();
        assert_eq!(xs, x);
        assert_eq!(at_bound, vec![1]);
    }

    #[test]
    fn all_gradients_negative_gives_zero() {
        let a = DMatrix::from_row_slice(2, 2, &[1.0, 0.0, 0.0, 1.0]);
        let b = DVector::from_vec(vec![-1.0, -2.0]);
        assert_eq!(nnls(&a, &b).unwrap(), DVector::zeros(2));
    }

    #[test]
    fn first_entering_variable_is_dropped_on_the_way() {
        // Columns (1,1,0), (1,0,1), (0,1,1); b = (2, 1, −1). The
        // unconstrained optimum is (2, 0, −1); the constrained one (1.5, 0, 0).
        let a = DMatrix::from_row_slice(3, 3, &[1.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 1.0]);
        let b = DVector::from_vec(vec![2.0, 1.0, -1.0]);
        let x = nnls(&a, &b).unwrap();
        assert!(close(x[0], 1.5) && x[1] == 0.0 && x[2] == 0.0, "{x}");
        // KKT: the gradient is ≤ 0 on the zero set.
        let gr = a.tr_mul(&(&b - &a * &x));
        assert!(gr[1] <= 1e-12 && gr[2] <= 1e-12, "{gr}");
    }

    /// The NNLS optimum by enumeration: least squares on every support,
    /// the best one whose solution is non-negative.
    fn brute_force(a: &DMatrix<f64>, b: &DVector<f64>) -> f64 {
        let q = a.ncols();
        let mut best = b.norm_squared();
        for mask in 1u32..(1 << q) {
            let cols: Vec<usize> = (0..q).filter(|&j| mask & (1 << j) != 0).collect();
            let sub = a.select_columns(&cols);
            let z = least_squares(&sub, b).unwrap();
            if z.iter().all(|&v| v >= 0.0) {
                best = best.min((b - &sub * &z).norm_squared());
            }
        }
        best
    }

    #[test]
    fn matches_enumeration_on_deterministic_instances() {
        let mut dropped = 0;
        for seed in 0..40u32 {
            let val = |i: u32| ((f64::from(seed * 97 + i) * 12.9898).sin() * 43_758.545).fract();
            let (n, q) = (7, 4);
            let a = DMatrix::from_fn(n, q, |i, j| val((i * q + j) as u32));
            let b = DVector::from_fn(n, |i, _| val(100 + i as u32));
            let x = nnls(&a, &b).unwrap();
            assert!(x.iter().all(|&v| v >= 0.0));
            let got = (&b - &a * &x).norm_squared();
            let want = brute_force(&a, &b);
            assert!(
                (got - want).abs() <= 1e-9 * want.max(1.0),
                "seed {seed}: {got} vs {want}"
            );
            let ls = least_squares(&a, &b).unwrap();
            if ls.iter().any(|&v| v < 0.0) {
                dropped += 1;
            }
        }
        // The instances exercise the constraints, not only interior optima.
        assert!(dropped >= 10, "only {dropped} constrained instances");
    }

    #[test]
    fn free_parameter_is_projected_out() {
        // y = θ₀ + θ₁·t with θ₀ free: data (0, 1), (1, 0.5), (2, 0): the
        // unconstrained slope is −0.5, so θ₁ = 0 and θ₀ = mean(y) = 0.5.
        let a = DMatrix::from_row_slice(3, 2, &[1.0, 0.0, 1.0, 1.0, 1.0, 2.0]);
        let b = DVector::from_vec(vec![1.0, 0.5, 0.0]);
        let (x, at_bound) = solve_signed(&a, &b, &[false, true]).unwrap();
        assert!(close(x[0], 0.5) && x[1] == 0.0, "{x}");
        assert_eq!(at_bound, vec![1]);
        // A negative free parameter stays negative: y = −1 + t.
        let b = DVector::from_vec(vec![-1.0, 0.0, 1.0]);
        let (x, at_bound) = solve_signed(&a, &b, &[false, true]).unwrap();
        assert!(close(x[0], -1.0) && close(x[1], 1.0), "{x}");
        assert!(at_bound.is_empty());
    }
}

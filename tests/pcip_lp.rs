//! LP relaxation, duals, safe bound and exact MIP on the known-answer
//! hand-computed known-answer instances KA1–KA6.
#![cfg(feature = "highs")]

mod common;

use approx::assert_abs_diff_eq;
use common::*;
use dmlsched::certificate::{BoundKind, ExactStatus};
use dmlsched::lp::SolveOptions;
use dmlsched::pcip::{MipOptions, PcError, solve_exact, solve_lp};

/// MIP options for tests: 1 s limit (the instances solve in ms).
fn mip() -> MipOptions {
    let mut built = MipOptions::default();
    built.limits.time_limit_s = 1.0;
    built
}

fn close(a: &[f64], b: &[f64]) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert_abs_diff_eq!(x, y, epsilon = 1e-7);
    }
}

#[test]
fn ka1_lp() {
    let r = solve_lp(&ka1(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 1.5, epsilon = 1e-9);
    close(&r.x, &[0.5, 0.5, 0.5]);
    close(&r.covering_prices, &[0.5, 0.5, 0.5]);
    assert_eq!(r.safe_bound.kind, BoundKind::LpDualSafe);
    assert_abs_diff_eq!(r.safe_bound.value, 1.5, epsilon = 1e-7);
}

#[test]
fn ka2_safe_bound() {
    let r = solve_lp(&ka2(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 7.0, epsilon = 1e-9);
    close(&r.x, &[0.5, 0.5, 1.0]);
    close(&r.covering_prices, &[1.5, 1.5]);
    // Column C sits at its upper bound with multiplier 2: d = c − Cᵀσ = 4 − 6.
    close(&r.reduced_costs, &[0.0, 0.0, -2.0]);
    assert_eq!(r.safe_bound.kind, BoundKind::LpDualSafe);
    assert_abs_diff_eq!(r.safe_bound.value, 7.0, epsilon = 1e-7);
}

#[test]
fn ka2b_and_ka3_lp() {
    let r = solve_lp(&ka2b(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 6.0, epsilon = 1e-9);
    close(&r.x, &[0.0, 0.0, 1.5]);
    let r = solve_lp(&ka3(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 6.0, epsilon = 1e-9);
    assert_eq!(r.x, vec![2.0, 1.0, 0.0, 0.0]); // snapped: exactly integral
    close(&r.covering_prices, &[0.0, 2.0, 0.0]);
}

#[test]
fn ka4_max_form() {
    let r = solve_lp(&ka4(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 18.0, epsilon = 1e-9);
    close(&r.x, &[1.0, 0.5, 0.0, 1.0]);
    close(&r.packing_prices, &[0.0, 2.5]);
    // An upper bound on the maximum.
    assert_abs_diff_eq!(r.safe_bound.value, 18.0, epsilon = 1e-7);
}

#[test]
fn ka5_duals_and_safe_bound() {
    let r = solve_lp(&ka5(), &SolveOptions::default()).unwrap();
    assert_abs_diff_eq!(r.objective, 12.5, epsilon = 1e-9);
    close(&r.x, &[0.5, 1.5, 2.0, 0.5]);
    close(&r.packing_prices, &[0.0, 1.0]);
    close(&r.covering_prices, &[4.0, 2.5]);
    close(&r.reduced_costs, &[0.0, 0.0, -3.0, 0.0]);
    assert_eq!(r.safe_bound.kind, BoundKind::LpDualSafe);
    assert_abs_diff_eq!(r.safe_bound.value, 12.5, epsilon = 1e-7);
}

#[test]
fn ka5_exact() {
    let e = solve_exact(&ka5(), &mip()).unwrap();
    assert_eq!(e.info.status, ExactStatus::Optimal);
    assert_eq!(e.x.as_deref(), Some(&[1.0, 1.0, 2.0, 1.0][..]));
    assert_eq!(e.info.incumbent, Some(15.0));
    assert_abs_diff_eq!(e.info.dual_bound, 15.0, epsilon = 1e-6);
    assert_abs_diff_eq!(e.info.rel_gap, 0.0, epsilon = 1e-9);
}

#[test]
fn exact_optima_of_all_instances() {
    for (p, opt) in [
        (ka1(), 2.0),
        (ka2(), 10.0),
        (ka2b(), 8.0),
        (ka3(), 6.0),
        (ka4(), 15.0),
    ] {
        let e = solve_exact(&p, &mip()).unwrap();
        assert_eq!(e.info.status, ExactStatus::Optimal);
        assert_eq!(e.info.incumbent, Some(opt));
    }
}

#[test]
fn ka6_lp_infeasible() {
    assert_eq!(
        solve_lp(&ka6_infeasible(), &SolveOptions::default()),
        Err(PcError::LpInfeasible)
    );
    assert_eq!(
        solve_exact(&ka6_infeasible(), &mip()).unwrap_err(),
        PcError::IntegerInfeasible
    );
}

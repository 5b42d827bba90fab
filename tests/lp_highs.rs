//! Known-answer tests of the LP layer against HiGHS.
//!
//! Every expected value below is computed by hand in the comments (primal
//! point, objective, row duals, reduced costs), so these tests also pin the
//! dual sign convention documented in `dmlsched::lp`.
#![cfg(feature = "highs")]

use approx::assert_abs_diff_eq;
use dmlsched::certificate::Sense;
use dmlsched::lp::{ColumnKind, LinearProgram, LpError, LpSolution, LpStatus, SolveOptions, solve};

const INF: f64 = f64::INFINITY;
const TOL: f64 = 1e-9;

fn quiet() -> SolveOptions {
    SolveOptions::default()
}

fn assert_slice_eq(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (k, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= TOL, "{what}[{k}] = {g}, expected {w}");
    }
}

/// `d = c − Aᵀy`: the column duals are the reduced costs of the row duals.
fn assert_reduced_costs_consistent(lp: &LinearProgram, sol: &LpSolution) {
    let mut d: Vec<f64> = lp.costs().to_vec();
    for i in 0..lp.n_rows() {
        for &(j, a) in lp.row_entries(i).unwrap() {
            d[j] -= a * sol.row_duals[i];
        }
    }
    assert_slice_eq(&sol.column_duals, &d, "c - A^T y");
}

/// minimise 2x + 3y − 0.5z + offset
///   r0: x + y ≥ 4        binding
///   r1: x + 3y ≥ 3       slack (3 + 3 = 6)
///   r2: x + z ≤ 5        binding
///   0 ≤ x ≤ 3 (at upper), y ≥ 0 (basic), 0 ≤ z ≤ 10 (basic)
///
/// Optimum x = 3, y = 1, z = 2, objective 6 + 3 − 1 = 8.
/// Duals: y basic ⇒ 3 − y0 = 0 ⇒ y0 = 3; z basic ⇒ −0.5 − y2 = 0 ⇒ y2 = −0.5;
/// y1 = 0 (slack). Reduced cost of x: 2 − 3 + 0.5 = −0.5 (≤ 0 at its upper
/// bound). Dual objective 4·3 + 5·(−0.5) + 3·(−0.5) = 8 = primal.
fn min_lp(offset: f64) -> LinearProgram {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let x = lp.add_column(2.0, 0.0, 3.0, ColumnKind::Continuous);
    let y = lp.add_column(3.0, 0.0, INF, ColumnKind::Continuous);
    let z = lp.add_column(-0.5, 0.0, 10.0, ColumnKind::Continuous);
    lp.add_row(4.0, INF, &[(x, 1.0), (y, 1.0)]);
    lp.add_row(3.0, INF, &[(x, 1.0), (y, 3.0)]);
    lp.add_row(-INF, 5.0, &[(x, 1.0), (z, 1.0)]);
    lp.set_objective_offset(offset);
    lp
}

#[test]
fn minimisation_known_primal_and_duals() {
    for presolve in [true, false] {
        let lp = min_lp(10.0);
        let sol = solve(&lp, &quiet().with_presolve(presolve)).unwrap();
        assert_eq!(sol.status, LpStatus::Optimal, "presolve {presolve}");
        assert!(sol.has_primal && sol.has_dual && !sol.is_mip);
        assert_slice_eq(&sol.primal, &[3.0, 1.0, 2.0], "primal");
        assert_abs_diff_eq!(sol.objective.unwrap(), 18.0, epsilon = TOL);
        assert_abs_diff_eq!(
            lp.objective_value(&sol.primal).unwrap(),
            18.0,
            epsilon = TOL
        );
        // ≥ row binding: y ≥ 0; slack row: 0; ≤ row binding: y ≤ 0.
        assert_slice_eq(&sol.row_duals, &[3.0, 0.0, -0.5], "row duals");
        // x at its upper bound: d ≤ 0; basic columns: 0.
        assert_slice_eq(&sol.column_duals, &[-0.5, 0.0, 0.0], "column duals");
        assert_reduced_costs_consistent(&lp, &sol);
        assert!(sol.mip_dual_bound.is_none() && sol.mip_gap.is_none());
        assert!(sol.simplex_iterations.is_some());
        assert!(sol.seconds >= 0.0);
        assert!(lp.max_violation(&sol.primal).unwrap() <= 1e-9);
    }
}

/// maximise 3a + 2b − c − e
///   r0: a + b + e ≤ 4     binding
///   r1: c − b ≥ −1        binding
///   0 ≤ a ≤ 2 (at upper), b ≥ 0 (basic), c ≥ 0 (basic), e ≥ 0 (at lower)
///
/// a is worth 3 per unit of r0 and is capped at 2; the remaining 2 units go
/// to b, which drags c ≥ b − 1 along: a = 2, b = 2, c = 1, e = 0, objective
/// 6 + 4 − 1 = 9 (b = 1, c = 0 gives only 8).
/// With d = c − Aᵀy: c basic ⇒ −1 − y1 = 0 ⇒ y1 = −1; b basic ⇒
/// 2 − y0 + y1 = 0 ⇒ y0 = 1; d_a = 3 − 1 = 2 (≥ 0 at upper); d_e = −1 − 1 = −2
/// (≤ 0 at lower). Each y_i is d(objective)/d(bound): raising r0 to 5 gives
/// 10 (+1); raising r1 to 0 gives 8 (−1). Dual objective 4·1 + (−1)(−1) +
/// 2·2 = 9 = primal.
fn max_lp() -> LinearProgram {
    let mut lp = LinearProgram::new(Sense::Maximise);
    let a = lp.add_column(3.0, 0.0, 2.0, ColumnKind::Continuous);
    let b = lp.add_column(2.0, 0.0, INF, ColumnKind::Continuous);
    let c = lp.add_column(-1.0, 0.0, INF, ColumnKind::Continuous);
    let e = lp.add_column(-1.0, 0.0, INF, ColumnKind::Continuous);
    lp.add_row(-INF, 4.0, &[(a, 1.0), (b, 1.0), (e, 1.0)]);
    lp.add_row(-1.0, INF, &[(c, 1.0), (b, -1.0)]);
    lp
}

#[test]
fn maximisation_known_primal_and_duals() {
    for presolve in [true, false] {
        let lp = max_lp();
        let sol = solve(&lp, &quiet().with_presolve(presolve)).unwrap();
        assert_eq!(sol.status, LpStatus::Optimal, "presolve {presolve}");
        assert!(sol.has_primal && sol.has_dual);
        assert_slice_eq(&sol.primal, &[2.0, 2.0, 1.0, 0.0], "primal");
        assert_abs_diff_eq!(sol.objective.unwrap(), 9.0, epsilon = TOL);
        // Maximisation: binding ≤ row y ≥ 0, binding ≥ row y ≤ 0.
        assert_slice_eq(&sol.row_duals, &[1.0, -1.0], "row duals");
        // Maximisation: at upper d ≥ 0, at lower d ≤ 0.
        assert_slice_eq(&sol.column_duals, &[2.0, 0.0, 0.0, -2.0], "column duals");
        assert_reduced_costs_consistent(&lp, &sol);
    }
}

/// The row duals are the objective's sensitivity to the binding bounds, in
/// both senses: re-solve with each bound moved by one unit.
#[test]
fn row_duals_are_objective_sensitivities() {
    let mut lp = max_lp();
    lp.set_row_bounds(0, -INF, 5.0).unwrap();
    let up = solve(&lp, &quiet()).unwrap();
    assert_abs_diff_eq!(up.objective.unwrap(), 10.0, epsilon = TOL);
    let mut lp = max_lp();
    lp.set_row_bounds(1, 0.0, INF).unwrap();
    let up = solve(&lp, &quiet()).unwrap();
    assert_abs_diff_eq!(up.objective.unwrap(), 8.0, epsilon = TOL);

    let mut lp = min_lp(0.0);
    lp.set_row_bounds(0, 5.0, INF).unwrap();
    assert_abs_diff_eq!(
        solve(&lp, &quiet()).unwrap().objective.unwrap(),
        11.0,
        epsilon = TOL
    );
    let mut lp = min_lp(0.0);
    lp.set_row_bounds(2, -INF, 6.0).unwrap();
    assert_abs_diff_eq!(
        solve(&lp, &quiet()).unwrap().objective.unwrap(),
        7.5,
        epsilon = TOL
    );
}

/// minimise x  s.t.  x − y = −3,  0 ≤ y ≤ 2,  x free.
/// x = y − 3 is smallest at y = 0: x = −3. Duals: x basic ⇒ 1 − y0 = 0 ⇒
/// y0 = 1; d_y = 0 − y0·(−1) = 1 ≥ 0 at its lower bound.
#[test]
fn equality_row_and_free_column() {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let x = lp.add_column(1.0, -INF, INF, ColumnKind::Continuous);
    let y = lp.add_column(0.0, 0.0, 2.0, ColumnKind::Continuous);
    lp.add_row(-3.0, -3.0, &[(x, 1.0), (y, -1.0)]);
    let sol = solve(&lp, &quiet()).unwrap();
    assert_eq!(sol.status, LpStatus::Optimal);
    assert_slice_eq(&sol.primal, &[-3.0, 0.0], "primal");
    assert_abs_diff_eq!(sol.objective.unwrap(), -3.0, epsilon = TOL);
    assert_slice_eq(&sol.row_duals, &[1.0], "row duals");
    assert_slice_eq(&sol.column_duals, &[0.0, 1.0], "column duals");
}

/// x + y ≤ 1 and x + y ≥ 2 with x, y ≥ 0.
#[test]
fn infeasible_lp() {
    for sense in [Sense::Minimise, Sense::Maximise] {
        for presolve in [true, false] {
            let mut lp = LinearProgram::new(sense);
            let x = lp.add_column(1.0, 0.0, INF, ColumnKind::Continuous);
            let y = lp.add_column(1.0, 0.0, INF, ColumnKind::Continuous);
            lp.add_row(-INF, 1.0, &[(x, 1.0), (y, 1.0)]);
            lp.add_row(2.0, INF, &[(x, 1.0), (y, 1.0)]);
            let sol = solve(&lp, &quiet().with_presolve(presolve)).unwrap();
            assert_eq!(
                sol.status,
                LpStatus::Infeasible,
                "{sense:?}, presolve {presolve}"
            );
            assert!(!sol.has_primal);
            assert!(
                sol.primal.is_empty() && sol.objective.is_none() && sol.primal_point().is_none()
            );
        }
    }
}

/// 2x = 1 with x integer in [0, 5]: the LP relaxation is feasible, the MIP is
/// not.
#[test]
fn infeasible_mip() {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let x = lp.add_column(1.0, 0.0, 5.0, ColumnKind::Integer);
    lp.add_row(1.0, 1.0, &[(x, 2.0)]);
    let sol = solve(&lp, &quiet()).unwrap();
    assert_eq!(sol.status, LpStatus::Infeasible);
    assert!(sol.is_mip && !sol.has_primal && sol.objective.is_none());
    let relaxed = solve(&lp, &quiet().with_relax_integrality(true)).unwrap();
    assert_eq!(relaxed.status, LpStatus::Optimal);
    assert_slice_eq(&relaxed.primal, &[0.5], "relaxed primal");
}

/// minimise −x − y (or maximise x + y)  s.t.  x − y ≤ 1,  x, y ≥ 0:
/// feasible (the origin) and unbounded along (1, 1).
fn unbounded_program(sense: Sense, kind: ColumnKind) -> LinearProgram {
    let sign = match sense {
        Sense::Minimise => -1.0,
        Sense::Maximise => 1.0,
    };
    let mut lp = LinearProgram::new(sense);
    let x = lp.add_column(sign, 0.0, INF, kind);
    let y = lp.add_column(sign, 0.0, INF, kind);
    lp.add_row(-INF, 1.0, &[(x, 1.0), (y, -1.0)]);
    lp
}

/// HiGHS 1.15 proves the LP unbounded with and without presolve, and returns
/// a feasible point (the start of the ray).
#[test]
fn unbounded_lp() {
    for sense in [Sense::Minimise, Sense::Maximise] {
        for presolve in [true, false] {
            let lp = unbounded_program(sense, ColumnKind::Continuous);
            let sol = solve(&lp, &quiet().with_presolve(presolve)).unwrap();
            assert_eq!(
                sol.status,
                LpStatus::Unbounded,
                "{sense:?}, presolve {presolve}"
            );
            assert!(sol.has_primal, "{sense:?}, presolve {presolve}");
            assert!(lp.max_violation(&sol.primal).unwrap() <= 1e-9);
            assert_abs_diff_eq!(
                sol.objective.unwrap(),
                lp.objective_value(&sol.primal).unwrap(),
                epsilon = TOL
            );
        }
    }
}

/// The same program with integer columns: MIP presolve only proves
/// "unbounded or infeasible" (and has no point); without presolve HiGHS
/// proves unboundedness. The two statuses are kept apart.
#[test]
fn unbounded_mip_with_and_without_presolve() {
    for sense in [Sense::Minimise, Sense::Maximise] {
        let lp = unbounded_program(sense, ColumnKind::Integer);
        let sol = solve(&lp, &quiet()).unwrap();
        assert_eq!(sol.status, LpStatus::UnboundedOrInfeasible, "{sense:?}");
        assert!(!sol.has_primal && sol.objective.is_none());
        let sol = solve(&lp, &quiet().with_presolve(false)).unwrap();
        assert_eq!(sol.status, LpStatus::Unbounded, "{sense:?}");
        assert!(sol.has_primal && sol.is_mip);
        assert!(lp.max_violation(&sol.primal).unwrap() <= 1e-9);
    }
}

/// 0/1 knapsack: values (10, 13, 7, 8), weights (5, 6, 3, 4), capacity 10.
/// Enumeration: {1, 3} (weight 10) is worth 21, every other fitting set less
/// ({1, 2} 20, {0, 3} 18, {0, 2} 17, {2, 3} 15).
/// LP relaxation (greedy by value/weight 7/3 > 13/6 > 2 = 2): items 2 and 1
/// whole (weight 9), then 1/5 of item 0 or 1/4 of item 3: 7 + 13 + 2 = 22.
fn knapsack() -> LinearProgram {
    let mut lp = LinearProgram::new(Sense::Maximise);
    let values = [10.0, 13.0, 7.0, 8.0];
    let weights = [5.0, 6.0, 3.0, 4.0];
    let cols: Vec<usize> = values.iter().map(|&v| lp.add_binary_column(v)).collect();
    let entries: Vec<(usize, f64)> = cols.iter().zip(weights).map(|(&j, w)| (j, w)).collect();
    lp.add_row(-INF, 10.0, &entries);
    lp
}

#[test]
fn mip_known_optimum() {
    let lp = knapsack();
    let sol = solve(&lp, &quiet()).unwrap();
    assert_eq!(sol.status, LpStatus::Optimal);
    assert!(sol.is_mip && sol.has_primal && !sol.has_dual);
    assert!(sol.row_duals.is_empty() && sol.column_duals.is_empty());
    assert_slice_eq(&sol.primal, &[0.0, 1.0, 0.0, 1.0], "primal");
    assert_abs_diff_eq!(sol.objective.unwrap(), 21.0, epsilon = TOL);
    let bound = sol.mip_dual_bound.unwrap();
    // An upper bound for a maximisation, within the relative gap.
    assert!(
        (21.0 - 1e-9..=21.0 * (1.0 + 1e-6) + 1e-9).contains(&bound),
        "{bound}"
    );
    assert!(sol.mip_gap.unwrap() <= 1e-6);
    assert!(sol.simplex_iterations.is_none());

    let relaxed = solve(&lp, &quiet().with_relax_integrality(true)).unwrap();
    assert_eq!(relaxed.status, LpStatus::Optimal);
    assert!(!relaxed.is_mip && relaxed.has_dual);
    assert_abs_diff_eq!(relaxed.objective.unwrap(), 22.0, epsilon = TOL);
    // Price of capacity: the marginal items are worth 2 per unit of weight.
    assert_slice_eq(&relaxed.row_duals, &[2.0], "relaxed row duals");
}

/// Triangle set cover (integrality gap 4/3): minimise x0 + x1 + x2 with
/// x0 + x1 ≥ 1, x1 + x2 ≥ 1, x0 + x2 ≥ 1, binary. Any two sets cover: OPT = 2.
/// LP: x = (½, ½, ½), value 3/2, each row dual ½ (≥ 0 on ≥ rows).
#[test]
fn relaxation_bounds_the_mip_from_below() {
    let mut lp = LinearProgram::new(Sense::Minimise);
    let x: Vec<usize> = (0..3).map(|_| lp.add_binary_column(1.0)).collect();
    for (a, b) in [(0, 1), (1, 2), (0, 2)] {
        lp.add_row(1.0, INF, &[(x[a], 1.0), (x[b], 1.0)]);
    }
    let mip = solve(&lp, &quiet()).unwrap();
    assert_eq!(mip.status, LpStatus::Optimal);
    assert_abs_diff_eq!(mip.objective.unwrap(), 2.0, epsilon = TOL);
    let bound = mip.mip_dual_bound.unwrap();
    // A lower bound for a minimisation, within the relative gap.
    assert!(
        (2.0 * (1.0 - 1e-6) - 1e-9..=2.0 + 1e-9).contains(&bound),
        "{bound}"
    );
    assert!(lp.max_violation(&mip.primal).unwrap() <= 1e-9);

    let lp_sol = solve(&lp, &quiet().with_relax_integrality(true)).unwrap();
    assert_eq!(lp_sol.status, LpStatus::Optimal);
    assert!(!lp_sol.is_mip);
    let relaxed = lp_sol.objective.unwrap();
    assert_abs_diff_eq!(relaxed, 1.5, epsilon = TOL);
    assert!(relaxed <= mip.objective.unwrap());
    assert_slice_eq(&lp_sol.primal, &[0.5, 0.5, 0.5], "LP primal");
    assert_slice_eq(&lp_sol.row_duals, &[0.5, 0.5, 0.5], "LP row duals");
}

/// A deterministic pseudo-random multi-dimensional 0/1 knapsack (n items, m
/// capacity rows at half the total weight, values correlated with weights):
/// hard enough that branch and bound cannot close the gap in a fraction of a
/// second, easy enough that heuristics find an incumbent at once.
fn hard_knapsack(n: usize, m: usize, seed: u64) -> LinearProgram {
    let mut state = seed;
    let mut next = move || {
        // Knuth's MMIX LCG; the high bits are the good ones.
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    let weights: Vec<Vec<f64>> = (0..m)
        .map(|_| (0..n).map(|_| (1.0 + 99.0 * next()).floor()).collect())
        .collect();
    let mut lp = LinearProgram::new(Sense::Maximise);
    for j in 0..n {
        let mean: f64 = weights.iter().map(|w| w[j]).sum::<f64>() / m as f64;
        lp.add_binary_column((mean + 10.0 * next()).floor());
    }
    for w in &weights {
        let capacity = (0.5 * w.iter().sum::<f64>()).floor();
        let entries: Vec<(usize, f64)> = w.iter().copied().enumerate().collect();
        lp.add_row(-INF, capacity, &entries);
    }
    lp
}

#[test]
fn mip_time_limit_keeps_incumbent_and_bound() {
    let lp = hard_knapsack(80, 5, 42);
    let limit = 0.2;
    let sol = solve(&lp, &quiet().with_time_limit(limit)).unwrap();
    assert_eq!(sol.status, LpStatus::TimeLimit);
    assert!(sol.status.is_limit());
    assert!(sol.is_mip && sol.has_primal);
    let x = sol.primal_point().unwrap();
    assert_eq!(x.len(), 80);
    assert!(
        lp.max_violation(x).unwrap() <= 1e-6,
        "incumbent is feasible"
    );
    let incumbent = sol.objective.unwrap();
    assert_abs_diff_eq!(incumbent, lp.objective_value(x).unwrap(), epsilon = 1e-6);
    // Maximisation: the dual bound is an upper bound on the optimum.
    let bound = sol.mip_dual_bound.unwrap();
    assert!(bound >= incumbent, "bound {bound} < incumbent {incumbent}");
    let gap = sol.mip_gap.unwrap();
    assert!(gap > 1e-6, "a time-limited solve leaves a gap, got {gap}");
    assert_abs_diff_eq!(gap, (bound - incumbent) / incumbent.abs(), epsilon = 1e-6);
    assert!(sol.seconds < limit + 2.0, "took {} s", sol.seconds);

    // The LP relaxation bounds both from above.
    let relaxed = solve(&lp, &quiet().with_relax_integrality(true)).unwrap();
    assert_eq!(relaxed.status, LpStatus::Optimal);
    assert!(relaxed.objective.unwrap() >= bound - 1e-6);
}

#[test]
fn objective_offset_reaches_mip_bound() {
    let mut lp = knapsack();
    lp.set_objective_offset(-20.0);
    let sol = solve(&lp, &quiet()).unwrap();
    assert_abs_diff_eq!(sol.objective.unwrap(), 1.0, epsilon = TOL);
    assert!((sol.mip_dual_bound.unwrap() - 1.0).abs() <= 1e-4);
}

#[test]
fn program_without_columns() {
    let mut lp = LinearProgram::new(Sense::Minimise);
    lp.set_objective_offset(4.0);
    lp.add_row(-1.0, 1.0, &[]);
    let sol = solve(&lp, &quiet()).unwrap();
    assert_eq!(sol.status, LpStatus::Optimal);
    assert!(sol.has_primal && sol.primal.is_empty());
    assert_eq!(sol.objective, Some(4.0));
    assert_eq!(sol.row_duals, vec![0.0]);

    lp.add_row(1.0, INF, &[]);
    let sol = solve(&lp, &quiet()).unwrap();
    assert_eq!(sol.status, LpStatus::Infeasible);
    assert!(!sol.has_primal && sol.objective.is_none());
}

#[test]
fn invalid_models_are_errors_not_statuses() {
    let mut lp = min_lp(0.0);
    lp.add_row(0.0, 1.0, &[(0, 1.0), (0, 1.0)]);
    assert!(matches!(
        solve(&lp, &quiet()),
        Err(LpError::DuplicateEntry { row: 3, col: 0, .. })
    ));
}

/// HiGHS keeps one thread pool per OS thread, but the C API tears it down
/// after every solve, so consecutive solves may ask for different counts.
#[test]
fn thread_count_may_change_between_solves() {
    let statuses = std::thread::spawn(|| {
        [1, 2, 1].map(|threads| {
            let lp = knapsack();
            solve(&lp, &quiet().with_threads(threads)).map(|s| (s.status, s.objective))
        })
    })
    .join()
    .unwrap();
    for outcome in statuses {
        let (status, objective) = outcome.unwrap();
        assert_eq!(status, LpStatus::Optimal);
        assert_abs_diff_eq!(objective.unwrap(), 21.0, epsilon = TOL);
    }
}

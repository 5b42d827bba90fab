//! Robustness of the packing–covering engine and of the LP layer: the
//! reproducers of a fuzzing campaign (each a regression test), and a
//! fuzz-style property test of the public entry points. Every case runs
//! under the watchdog: a result or a typed error, never a panic, never a
//! hang; and every `Ok` result passes its own certificate check.
#![cfg(feature = "highs")]

mod common;

use std::time::{Duration, Instant};

use common::{WATCHDOG_S, within};
use dmlsched::certificate::Sense;
use dmlsched::lp::{self, ColumnKind, LinearProgram, LpError, LpQuantity, LpStatus, SolveOptions};
use dmlsched::pcip::{
    ExactMode, Field, MAX_EXACT_INTEGER, MAX_VARS, Method, MipOptions, PcBuilder, PcError,
    PcProblem, PcSolution, RepairOptions, RoundingSolver, evaluate, repair, solve_exact,
};

/// Solves with the default pipeline (16 trials, exact fallback) and checks
/// the certificate of an `Ok` answer.
fn solve_checked(p: &PcProblem, solver: &RoundingSolver) -> Result<PcSolution, PcError> {
    let r = solver.solve(p);
    if let Ok(sol) = &r {
        sol.certificate
            .check(1e-6)
            .unwrap_or_else(|e| panic!("Ok result fails its certificate: {e}\n{sol:?}"));
        assert!(evaluate(p, &sol.x, 1e-9).is_feasible(), "{:?}", sol.x);
    }
    r
}

// ---------------------------------------------------------------------------
// 1. Sizes are checked before anything of that size is allocated.
// ---------------------------------------------------------------------------

#[cfg(feature = "serde")]
#[test]
fn huge_n_vars_in_json_is_a_typed_error() {
    within(WATCHDOG_S, "huge n_vars", || {
        for n in ["1000000000", "18446744073709551615", "67108865"] {
            let text = format!(
                r#"{{"format_version": 1, "sense": "minimise", "n_vars": {n},
                    "objective": [1, 1], "covering": [{{"entries": [[0, 1]], "rhs": 1}}]}}"#
            );
            let err = PcProblem::from_json(&text).unwrap_err();
            let msg = err.to_string();
            assert!(msg.contains(n), "{n}: {msg}");
            assert!(
                matches!(
                    err,
                    dmlsched::Error::Pc(PcError::TooLarge { .. })
                        | dmlsched::Error::Pc(PcError::DimensionMismatch { .. })
                ),
                "{err:?}"
            );
        }
        // Within the limit but not what the file holds: the objective's length.
        let text = r#"{"format_version": 1, "sense": "minimise", "n_vars": 1000000,
            "objective": [1, 1], "covering": [{"entries": [[0, 1]], "rhs": 1}]}"#;
        let err = PcProblem::from_json(text).unwrap_err();
        assert!(
            matches!(
                err,
                dmlsched::Error::Pc(PcError::DimensionMismatch {
                    expected: 1_000_000,
                    got: 2,
                    ..
                })
            ),
            "{err:?}"
        );
        // A float is not a count: a JSON error, not a crash.
        let text = r#"{"format_version": 1, "sense": "minimise", "n_vars": 1e9,
            "objective": [1, 1]}"#;
        assert!(matches!(
            PcProblem::from_json(text),
            Err(dmlsched::Error::Json(_))
        ));
    });
}

#[test]
fn huge_n_vars_in_the_builder_is_a_typed_error() {
    within(WATCHDOG_S, "huge n_vars (builder)", || {
        for n in [usize::MAX, 1_000_000_000, MAX_VARS + 1] {
            let err = PcBuilder::new(Sense::Minimise, n)
                .upper(0, None)
                .covering_row(&[(0, 1.0)], 1.0)
                .build()
                .unwrap_err();
            assert_eq!(
                err,
                PcError::TooLarge {
                    what: "n_vars (number of variables)",
                    size: n,
                    limit: MAX_VARS
                }
            );
            assert!(err.to_string().contains(&n.to_string()));
        }
        // An out-of-range column given to a setter is reported, not grown.
        let err = PcBuilder::new(Sense::Minimise, 2)
            .upper(usize::MAX, Some(3))
            .continuous(usize::MAX - 1, 2.0)
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            PcError::DimensionMismatch {
                what: "column index of a bound",
                expected: 2,
                got: usize::MAX
            }
        );
    });
}

// ---------------------------------------------------------------------------
// 2. Repair's time is bounded by the program's size, not its magnitudes.
// ---------------------------------------------------------------------------

#[test]
fn far_covering_target_is_refused_or_reached_in_one_batch() {
    within(WATCHDOG_S, "covering 1e18", || {
        // The reproducer: an unbounded integer column and x ≥ 1e18. The row
        // is integral and its right-hand side beyond 2^53: refused.
        let err = PcBuilder::new(Sense::Minimise, 1)
            .objective(vec![1.0])
            .upper(0, None)
            .covering_row(&[(0, 1.0)], 1e18)
            .build()
            .unwrap_err();
        assert!(
            matches!(
                err,
                PcError::OutOfRange {
                    what: Field::Rhs,
                    limit: MAX_EXACT_INTEGER,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("2^53"), "{err}");

        // The same far target on a row that is not integral: accepted, and
        // repair takes the whole needed step at once.
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![1.0, 3.0])
            .upper(0, None)
            .upper(1, None)
            .covering_row(&[(0, 0.5), (1, 1.0)], 1e18)
            .build()
            .unwrap();
        let t = Instant::now();
        let mut x = vec![0.0, 0.0];
        let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert!(t.elapsed() < Duration::from_secs(1));
        // The row is not integral: it holds within its relative tolerance.
        assert!(0.5 * x[0] >= 1e18 * (1.0 - 1e-9) && x[1] == 0.0, "{x:?}");
        // One batch, up to where the row holds within its tolerance.
        // (At 2e18 one unit is below f64's resolution.)
        assert!(r.grow_moves.abs_diff(x[0] as u64) <= 256, "{r:?} {x:?}");
        assert!(r.shrink_moves == 0 && r.prune_moves <= 1, "{r:?}");
        let sol = solve_checked(&p, &RoundingSolver::default()).unwrap();
        assert!(0.5 * sol.x[0] + sol.x[1] >= 1e18 * (1.0 - 1e-9));
    });
}

#[test]
fn repair_shrinks_and_prunes_far_points_in_one_batch() {
    within(WATCHDOG_S, "repair from far points", || {
        // Shrink: x0 ≤ 3 from x0 = 1e15 (an unbounded column).
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![1.0, 1.0])
            .upper(0, None)
            .upper(1, None)
            .packing_row(&[(0, 1.0)], 3.0)
            .covering_row(&[(0, 1.0), (1, 1.0)], 2.0)
            .build()
            .unwrap();
        let mut x = vec![1e15, 0.0];
        let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!(x, vec![2.0, 0.0]);
        assert_eq!(r.shrink_moves, 1e15 as u64 - 3);
        // Prune: x1 = 1e15 is far above what the covering row needs.
        let mut x = vec![0.0, 1e15];
        let r = repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!(x, vec![0.0, 2.0]);
        assert_eq!(r.prune_moves, 1e15 as u64 - 2);
        // Greedy fill of a valuable column up to a far capacity.
        let p = PcBuilder::new(Sense::Maximise, 1)
            .objective(vec![2.0])
            .upper(0, None)
            .packing_row(&[(0, 1.0)], 4e15)
            .build()
            .unwrap();
        let mut x = vec![0.0];
        repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert_eq!(x, vec![4e15]);
    });
}

// ---------------------------------------------------------------------------
// 3. Tolerances never hide real violations of integral rows.
// ---------------------------------------------------------------------------

#[test]
fn integral_rows_are_checked_with_an_absolute_tolerance() {
    within(WATCHDOG_S, "x ≥ 1e15", || {
        let p = PcBuilder::new(Sense::Minimise, 1)
            .objective(vec![1.0])
            .upper(0, None)
            .covering_row(&[(0, 1.0)], 1e15)
            .build()
            .unwrap();
        // Short by a million units: a violation, whatever the relative tolerance.
        let ev = evaluate(&p, &[999_999_999_000_000.0], 1e-9);
        assert!(!ev.is_feasible());
        assert_eq!(ev.max_violation(), 1e6);
        let sol = solve_checked(&p, &RoundingSolver::default()).unwrap();
        assert_eq!(sol.x, vec![1e15]);
        assert_eq!(sol.objective, 1e15);
        // A packing row with integer data: one unit over is a violation.
        let p = PcBuilder::new(Sense::Maximise, 1)
            .objective(vec![1.0])
            .upper(0, None)
            .packing_row(&[(0, 3.0)], 3e15)
            .build()
            .unwrap();
        assert!(!evaluate(&p, &[1e15 + 1.0], 1e-9).is_feasible());
        let sol = solve_checked(&p, &RoundingSolver::default()).unwrap();
        assert_eq!(sol.x, vec![1e15]);
        // Integer columns' bounds too: 4294967295 + 1 is out of the box.
        let p = PcBuilder::new(Sense::Minimise, 1)
            .objective(vec![1.0])
            .upper(0, Some(u32::MAX))
            .covering_row(&[(0, 1.0)], 1.0)
            .build()
            .unwrap();
        assert!(!evaluate(&p, &[f64::from(u32::MAX) + 1.0], 1e-9).is_feasible());
    });
}

// ---------------------------------------------------------------------------
// 5. Magnitudes the solver cannot represent are refused, never mis-solved.
// ---------------------------------------------------------------------------

#[test]
fn objective_beyond_the_solver_infinity_is_refused() {
    within(WATCHDOG_S, "objective 1e22", || {
        // The reproducer: maximise 1e22·x0 + x1, x0 + x1 ≤ 1 came back Ok
        // with the bound on the wrong side.
        let err = PcBuilder::new(Sense::Maximise, 2)
            .objective(vec![1e22, 1.0])
            .packing_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .build()
            .unwrap_err();
        assert_eq!(
            err,
            PcError::OutOfRange {
                what: Field::Objective,
                row: None,
                label: None,
                col: Some(0),
                value: 1e22,
                limit: 1e20
            }
        );
        assert_eq!(
            err.to_string(),
            "objective coefficient 1e22 of column 0 is out of range: magnitudes must be below 1e20 (the LP solver reads larger values as infinite)"
        );
        // The same program straight to the LP layer.
        let mut m = LinearProgram::new(Sense::Maximise);
        let a = m.add_column(1e22, 0.0, 1.0, ColumnKind::Integer);
        let b = m.add_column(1.0, 0.0, 1.0, ColumnKind::Integer);
        m.add_row(f64::NEG_INFINITY, 1.0, &[(a, 1.0), (b, 1.0)]);
        let err = lp::solve(&m, &SolveOptions::default()).unwrap_err();
        assert!(
            matches!(
                err,
                LpError::OutOfSolverRange {
                    quantity: LpQuantity::Cost,
                    col: Some(0),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("1e22"), "{err}");
    });
}

#[test]
fn coefficients_and_bounds_outside_the_solver_range_are_refused() {
    within(WATCHDOG_S, "solver range", || {
        let cover = |a: f64, rhs: f64| {
            PcBuilder::new(Sense::Minimise, 1)
                .objective(vec![1.0])
                .upper(0, None)
                .covering_row(&[(0, a)], rhs)
                .build()
        };
        for (a, rhs, what, limit) in [
            (1e16, 1.0, Field::Coefficient, lp::MAX_COEFFICIENT),
            (1e-12, 1e-12, Field::Coefficient, lp::MIN_COEFFICIENT),
            (5e-324, 1.0, Field::Coefficient, lp::MIN_COEFFICIENT),
            (0.5, 1e25, Field::Rhs, lp::SOLVER_INFINITY),
        ] {
            match cover(a, rhs) {
                Err(PcError::OutOfRange {
                    what: w, limit: l, ..
                }) => assert_eq!((w, l), (what, limit), "{a} {rhs}"),
                other => panic!("{a} {rhs}: {other:?}"),
            }
        }
        let err = PcBuilder::new(Sense::Minimise, 1)
            .objective(vec![1.0])
            .continuous(0, 1e300)
            .covering_row(&[(0, 1.0)], 1.0)
            .build()
            .unwrap_err();
        assert!(
            matches!(
                err,
                PcError::OutOfRange {
                    what: Field::Upper,
                    col: Some(0),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("1e300"), "{err}");
        // The LP layer names the row and column.
        let mut m = LinearProgram::new(Sense::Minimise);
        let x = m.add_column(1.0, 0.0, 1e21, ColumnKind::Continuous);
        assert!(matches!(
            m.validate(),
            Err(LpError::OutOfSolverRange {
                quantity: LpQuantity::ColumnBound,
                col: Some(0),
                ..
            })
        ));
        m.set_col_bounds(x, 0.0, f64::INFINITY).unwrap();
        let r = m.add_row(-1e20, f64::INFINITY, &[(x, 1.0)]);
        m.set_row_name(r, "demand").unwrap();
        let err = m.validate().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("row 0 (\"demand\") has bound -1e20"),
            "{err}"
        );
        m.set_row_bounds(r, 1.0, f64::INFINITY).unwrap();
        m.add_row(1.0, f64::INFINITY, &[(x, 2e15)]);
        let err = m.validate().unwrap_err();
        assert!(
            matches!(
                err,
                LpError::OutOfSolverRange {
                    quantity: LpQuantity::Coefficient,
                    row: Some(1),
                    col: Some(0),
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("2e15"), "{err}");
    });
}

/// Found by the fuzz test below: HiGHS's MIP loops forever, whatever its
/// time limit, on an integer column with a finite bound near or beyond 2^31
/// (its root reduced-cost fixing walks the domain with 32-bit integers).
#[test]
fn mip_with_integer_bounds_near_2_pow_31_is_refused_not_hung() {
    within(WATCHDOG_S, "integer bound 2^32 - 1", || {
        let program = |u: f64, as_row: bool| {
            let mut m = LinearProgram::new(Sense::Minimise);
            let x = m.add_column(
                3.0,
                0.0,
                if as_row { f64::INFINITY } else { u },
                ColumnKind::Integer,
            );
            let y = m.add_column(5.9695685640972345, 0.0, f64::INFINITY, ColumnKind::Integer);
            m.add_row(1e15, f64::INFINITY, &[(x, 2.7793191784465368), (y, 6.0)]);
            if as_row {
                m.add_row(f64::NEG_INFINITY, u, &[(x, 1.0)]);
            }
            m
        };
        let opts = SolveOptions::default().with_time_limit(5.0);
        for (u, as_row) in [
            (4294967295.0, false),
            (2147483647.0, false),
            (4294967295.0, true),
        ] {
            let err = lp::solve(&program(u, as_row), &opts).unwrap_err();
            assert!(
                matches!(
                    err,
                    LpError::OutOfSolverRange {
                        quantity: LpQuantity::IntegerBound,
                        col: Some(0),
                        ..
                    }
                ),
                "{u} {as_row}: {err:?}"
            );
            assert!(err.to_string().contains("integer column 0"), "{err}");
        }
        // Within the limit, or as an LP relaxation, it solves.
        let sol = lp::solve(&program(lp::MAX_INTEGER_BOUND, false), &opts).unwrap();
        assert_eq!(sol.status, LpStatus::Optimal);
        let relaxed = opts.clone().with_relax_integrality(true);
        assert!(lp::solve(&program(4294967295.0, false), &relaxed).is_ok());
        // Without presolve, a one-entry row stays a row: no hang, solved.
        let no_presolve = opts.with_presolve(false);
        let sol = lp::solve(&program(4294967295.0, true), &no_presolve).unwrap();
        assert_eq!(sol.status, LpStatus::Optimal);
        // Through the pipeline: the exact MIP is refused up front, naming
        // the column, the bound and the limit (a typed input error).
        let p = PcBuilder::new(Sense::Minimise, 2)
            .objective(vec![3.0, 5.9695685640972345])
            .upper(0, Some(u32::MAX))
            .upper(1, None)
            .covering_row(&[(0, 2.7793191784465368), (1, 6.0)], 1e15)
            .build()
            .unwrap();
        let solver = RoundingSolver {
            exact: ExactMode::Always,
            ..RoundingSolver::default()
        };
        assert!(
            matches!(
                solver.solve(&p),
                Err(PcError::OutOfRange {
                    what: Field::Upper,
                    col: Some(0),
                    value,
                    limit,
                    ..
                }) if value == f64::from(u32::MAX) && limit == lp::MAX_INTEGER_BOUND
            ),
            "{:?}",
            solver.solve(&p)
        );
        assert!(solver.solve(&p).unwrap_err().is_input());
        // Without the exact MIP, rounding answers (and its certificate checks).
        solve_checked(&p, &RoundingSolver::default()).unwrap();
    });
}

/// Found by the fuzz test below (KA5 with one coefficient mutated to 1e9):
/// the MIP solver accepted column 3 at `5e-9` (within its integrality
/// tolerance, `1e9 · 5e-9 = 5` covers row 1); rounded to 0 it broke that
/// row by 5, yet the point came back `Ok` as the proven optimum (6; the
/// true optimum is 11).
#[test]
fn exact_mip_points_are_rechecked_after_rounding() {
    within(
        WATCHDOG_S,
        "big coefficient against integrality tolerance",
        || {
            let p = PcBuilder::new(Sense::Minimise, 4)
                .objective(vec![4.0, 3.0, 2.0, 4.0])
                .upper(0, Some(2))
                .upper(1, Some(2))
                .upper(2, Some(2))
                .upper(3, Some(2))
                .packing_row(&[(0, 1.0), (2, 1.0)], 3.0)
                .packing_row(&[(1, 1.0), (3, 1.0)], 2.0)
                .covering_row(&[(0, 1.0), (1, 1.0)], 2.0)
                .covering_row(&[(2, 2.0), (3, 1e9)], 5.0)
                .build()
                .unwrap();
            let e = solve_exact(&p, &MipOptions::default()).unwrap();
            if let Some(x) = &e.x {
                assert!(evaluate(&p, x, 1e-9).is_feasible(), "{e:?}");
            }
            for exact in [ExactMode::Always, ExactMode::Fallback, ExactMode::Never] {
                let solver = RoundingSolver {
                    exact,
                    ..RoundingSolver::default()
                };
                match solve_checked(&p, &solver) {
                    Ok(sol) => assert!(sol.objective >= 11.0, "{exact:?}: {sol:?}"),
                    Err(PcError::MipNoIncumbent { .. }) | Err(PcError::RepairFailed(_)) => {}
                    Err(e) => panic!("{exact:?}: {e}"),
                }
            }
        },
    );
}

// ---------------------------------------------------------------------------
// 4. Every time limit the caller sets holds.
// ---------------------------------------------------------------------------

/// A random covering program: `n` integer columns in `[0, 3]`, `m` rows of
/// about `k` columns with coefficients in 1..=5 and demands in 3..=12.
fn covering_program(n: usize, m: usize, k: usize, seed: u64) -> PcProblem {
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cost: Vec<f64> = (0..n).map(|_| rng.random_range(1.0..10.0)).collect();
    let mut b = PcBuilder::new(Sense::Minimise, n).objective(cost);
    for j in 0..n {
        b = b.upper(j, Some(3));
    }
    for _ in 0..m {
        let mut cols: Vec<usize> = (0..k).map(|_| rng.random_range(0..n)).collect();
        cols.sort_unstable();
        cols.dedup();
        let row: Vec<(usize, f64)> = cols
            .iter()
            .map(|&j| (j, f64::from(rng.random_range(1u32..=5))))
            .collect();
        b = b.covering_row(&row, f64::from(rng.random_range(3u32..=12)));
    }
    b.build().unwrap()
}

// ---------------------------------------------------------------------------
// 4b. Choice groups, derivations and model moves: random (often invalid)
//     structures and moves give a checked result or a typed error.
// ---------------------------------------------------------------------------

/// A random program with group-shaped parts: binaries 0..g paired by
/// packing rows, integer columns after them, a covering row, linking rows.
fn grouped_program(rng: &mut rand::rngs::ChaCha8Rng) -> Option<PcProblem> {
    use dmlsched::pcip::RowSense;
    use rand::RngExt;
    let g = rng.random_range(1usize..5);
    let n = g + rng.random_range(1usize..6);
    let cost: Vec<f64> = (0..n)
        .map(|_| f64::from(rng.random_range(0u32..6)))
        .collect();
    let mut b = PcBuilder::new(Sense::Minimise, n).objective(cost);
    for j in 0..g {
        b = b.binary(j);
    }
    for j in g..n {
        b = b.upper(j, Some(rng.random_range(0u32..5)));
    }
    let pair: Vec<(usize, f64)> = (0..g).map(|j| (j, 1.0)).collect();
    b = b.packing_row(&pair, 1.0);
    let work: Vec<(usize, f64)> = (g..n)
        .map(|j| (j, f64::from(rng.random_range(1u32..4))))
        .collect();
    b = b.covering_row(&work, f64::from(rng.random_range(1u32..8)));
    for _ in 0..rng.random_range(0usize..3) {
        let (a, m) = (rng.random_range(g..n), rng.random_range(0..g));
        b = b.linking_row(&[(a, 1.0), (m, -4.0)], RowSense::Le, 0.0);
    }
    if rng.random_range(0u32..2) == 0 {
        let cap: Vec<(usize, f64)> = (g..n).map(|j| (j, 1.0)).collect();
        b = b.packing_row(&cap, f64::from(rng.random_range(0u32..6)));
    }
    b.build().ok()
}

/// Random groups over all columns (members may be non-binary, reused, …).
fn random_groups(rng: &mut rand::rngs::ChaCha8Rng, n: usize) -> Vec<dmlsched::pcip::ChoiceGroup> {
    use rand::RngExt;
    (0..rng.random_range(0usize..3))
        .map(|_| {
            let mut g = dmlsched::pcip::ChoiceGroup::new();
            for _ in 0..rng.random_range(0usize..3) {
                let deps: Vec<usize> = (0..rng.random_range(0usize..3))
                    .map(|_| rng.random_range(0..n + 1))
                    .collect();
                g = g.member(rng.random_range(0..n + 1), &deps);
            }
            g
        })
        .collect()
}

/// One valid group: the binary columns as members, the others dealt out
/// as their dependents.
fn valid_group(p: &PcProblem) -> Vec<dmlsched::pcip::ChoiceGroup> {
    use dmlsched::pcip::ColKind;
    let n = p.n_vars();
    let members: Vec<usize> = (0..n).filter(|&j| p.kind(j) == ColKind::Binary).collect();
    let mut g = dmlsched::pcip::ChoiceGroup::new();
    for (k, &m) in members.iter().enumerate() {
        let deps: Vec<usize> = (members.len()..n)
            .filter(|j| j % members.len() == k)
            .collect();
        g = g.member(m, &deps);
    }
    vec![g]
}

/// Random moves, some malformed (unknown column, NaN, fractional, twice).
struct RandomMoves(Vec<dmlsched::pcip::Move>);

impl dmlsched::pcip::MoveSource for RandomMoves {
    fn shrink_moves(&self, _: &PcProblem, _: &[f64], out: &mut Vec<dmlsched::pcip::Move>) {
        out.extend(
            self.0
                .iter()
                .filter(|m| m.deltas.iter().all(|d| d.1 < 0.0))
                .cloned(),
        );
    }
    fn grow_moves(&self, _: &PcProblem, _: &[f64], out: &mut Vec<dmlsched::pcip::Move>) {
        out.extend(self.0.iter().cloned());
    }
    fn prune_moves(&self, _: &PcProblem, _: &[f64], out: &mut Vec<dmlsched::pcip::Move>) {
        out.extend(self.0.iter().rev().cloned());
    }
}

fn random_moves(rng: &mut rand::rngs::ChaCha8Rng, n: usize, sane: bool) -> RandomMoves {
    use dmlsched::pcip::Move;
    use rand::RngExt;
    let moves = (0..rng.random_range(0usize..6))
        .map(|_| {
            let mut deltas: Vec<(usize, f64)> = (0..rng.random_range(1usize..4))
                .map(|_| {
                    (
                        rng.random_range(0..n),
                        f64::from(rng.random_range(-2i32..3)),
                    )
                })
                .collect();
            if sane {
                deltas.sort_unstable_by_key(|d| d.0);
                deltas.dedup_by_key(|d| d.0);
            } else {
                match rng.random_range(0u32..5) {
                    0 => deltas.push((n + 3, 1.0)),
                    1 => deltas[0].1 = f64::NAN,
                    2 => deltas[0].1 = 0.5,
                    _ => {}
                }
            }
            Move::new(deltas)
        })
        .collect();
    RandomMoves(moves)
}

#[test]
fn random_groups_derivations_and_moves_give_a_result_or_a_typed_error() {
    within(WATCHDOG_S, "structured pipeline fuzz", || {
        use dmlsched::pcip::{Hooks, Structure, repair_with, round_structured, trial_rng};
        use rand::SeedableRng;
        use rand::rngs::ChaCha8Rng;
        let (mut solved, mut structured) = (0, 0);
        for case in 0..120u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(case);
            let Some(p) = grouped_program(&mut rng) else {
                continue;
            };
            let n = p.n_vars();
            let groups = if case % 2 == 0 {
                random_groups(&mut rng, n)
            } else {
                valid_group(&p)
            };
            let s = match Structure::new(&p, groups) {
                Ok(s) => s,
                Err(PcError::InvalidGroup { .. }) => Structure::none(&p),
                Err(e) => panic!("case {case}: untyped group error {e:?}"),
            };
            structured += usize::from(!s.is_empty());
            let moves = random_moves(&mut rng, n, case % 3 != 0);
            let derive = |_: &PcProblem, x: &mut [f64]| {
                let last = x.len() - 1;
                x[last] = (x[0] * 2.0).min(x[last] + 1.0);
            };
            let hooks = Hooks::new()
                .with_groups(&s)
                .with_derive(&derive)
                .with_moves(&moves);
            let solver = RoundingSolver {
                trials: 3,
                seed: case,
                mip: {
                    let mut built = MipOptions::default();
                    built.limits.time_limit_s = 2.0;
                    built
                },
                ..RoundingSolver::default()
            };
            match solver.solve_with(&p, &hooks) {
                Ok(sol) => {
                    sol.certificate
                        .check(1e-6)
                        .unwrap_or_else(|e| panic!("case {case}: {e}"));
                    assert!(evaluate(&p, &sol.x, 1e-9).is_feasible(), "case {case}");
                    solved += 1;
                }
                Err(PcError::InvalidMove { .. } | PcError::RepairFailed(_)) => {}
                Err(PcError::LpInfeasible | PcError::IntegerInfeasible) => {}
                Err(e) => panic!("case {case}: unexpected {e:?}"),
            }
            // The entry points on their own, with hostile inputs.
            let lp_x: Vec<f64> = (0..n)
                .map(|j| [0.0, 0.3, 1.0, 2.5, -1.0][(j + case as usize) % 5])
                .collect();
            let lambda = [1.0, 0.0, 2.0, -1.0, f64::NAN][case as usize % 5];
            match round_structured(&p, &s, &lp_x, lambda, &mut trial_rng(case, 0)) {
                Ok(x) => {
                    let mut x = x;
                    match repair_with(&p, &mut x, &RepairOptions::default(), &moves) {
                        Ok(_) => assert!(evaluate(&p, &x, 1e-9).is_feasible(), "case {case}"),
                        Err(PcError::InvalidMove { .. } | PcError::RepairFailed(_)) => {}
                        Err(e) => panic!("case {case}: unexpected {e:?}"),
                    }
                }
                Err(PcError::InvalidOption { .. }) => assert!(lambda.is_nan() || lambda < 0.0),
                Err(e) => panic!("case {case}: unexpected {e:?}"),
            }
        }
        assert!(
            solved > 20 && structured > 10,
            "{solved} solved, {structured} structured"
        );
    });
}

/// Runs `solver` on `p` and checks that it ends within `limit + 10 s`, with
/// a checked result or a typed error that says a limit stopped it.
fn within_budget(
    p: PcProblem,
    solver: RoundingSolver,
    limit: f64,
    what: &'static str,
) -> Result<PcSolution, PcError> {
    within(WATCHDOG_S, what, move || {
        let t = Instant::now();
        let r = solve_checked(&p, &solver);
        let secs = t.elapsed().as_secs_f64();
        assert!(
            secs < limit + 10.0,
            "{what}: {secs} s for a limit of {limit} s"
        );
        match &r {
            Ok(_)
            | Err(PcError::LpLimit { .. })
            | Err(PcError::TimeLimit { .. })
            | Err(PcError::MipNoIncumbent { .. }) => {}
            Err(e) => panic!("{what}: {e}"),
        }
        r
    })
}

#[test]
fn the_time_limit_bounds_the_lp_relaxation() {
    // The LP relaxation of this program takes about 30 s in a debug build;
    // the MIP's own 10 s limit used not to bound it.
    let p = covering_program(20_000, 10_000, 8, 1);
    let solver = RoundingSolver {
        exact: ExactMode::Always,
        time_limit_s: Some(2.0),
        mip: {
            let mut built = MipOptions::default();
            built.limits.time_limit_s = 10.0;
            built
        },
        ..RoundingSolver::default()
    };
    let r = within_budget(p, solver, 2.0, "time limit during the LP");
    assert!(
        matches!(
            r,
            Err(PcError::LpLimit {
                status: LpStatus::TimeLimit
            })
        ) || r.is_ok(),
        "{r:?}"
    );
}

#[test]
fn the_mip_gets_what_is_left_of_the_time_limit() {
    // The LP is quick, the MIP is not: it must stop at the remaining budget,
    // and its incumbent is an answer, not an error.
    let p = covering_program(3_000, 1_500, 8, 2);
    let solver = RoundingSolver {
        exact: ExactMode::Always,
        time_limit_s: Some(2.0),
        ..RoundingSolver::default()
    };
    let sol = within_budget(p, solver, 2.0, "time limit during the MIP").unwrap();
    // On a loaded machine (a debug build sharing its cores) the LP itself
    // can take the whole budget: then the answer is the greedy point, with
    // no MIP and the trivial bound.
    if sol.method == Method::Greedy {
        assert!(sol.exact.is_none() && sol.lp.is_none());
        return;
    }
    // The MIP stopped at the limit with an incumbent (returned), or no
    // incumbent and one rounding trial gave the answer.
    let exact = sol.exact.as_ref().unwrap();
    assert!(exact.info.seconds < 2.5, "{}", exact.info.seconds);
    assert!(
        matches!(sol.method, Method::Exact | Method::Rounding { .. }),
        "{:?}",
        sol.method
    );
}

#[test]
fn invalid_time_limits_are_refused() {
    let p = covering_program(5, 3, 2, 3);
    for t in [0.0, -1.0, f64::NAN] {
        let solver = RoundingSolver {
            time_limit_s: Some(t),
            ..RoundingSolver::default()
        };
        assert!(matches!(
            solver.solve(&p),
            Err(PcError::InvalidOption {
                option: "time_limit_s",
                ..
            })
        ));
    }
}

// ---------------------------------------------------------------------------
// 7. Fuzz-style properties: a result or a typed error, never a panic, never
//    a hang; every Ok result passes its certificate check.
// ---------------------------------------------------------------------------

mod fuzz {
    use super::*;
    use proptest::prelude::*;
    use proptest::test_runner::FileFailurePersistence;

    /// Numbers a fuzzer likes: ordinary ones, integers, huge, tiny,
    /// denormal, signed zeros, infinities and NaN.
    fn extreme() -> impl Strategy<Value = f64> {
        prop_oneof![
            4 => 0.0..10.0f64,
            4 => (0u32..8).prop_map(f64::from),
            1 => prop::sample::select(vec![
                1e9, 4294967295.0, 1e15, 9007199254740992.0, 9007199254740993.0, 1e18,
                1e20, 1e22, 1e300, f64::MAX,
            ]),
            1 => prop::sample::select(vec![
                1e-9, 1.0000001e-9, 1e-12, f64::MIN_POSITIVE, 5e-324, 0.0, -0.0,
            ]),
            1 => prop::sample::select(vec![
                f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, -1e20, -5e-324,
            ]),
        ]
    }

    /// Row kind (0 packing, 1–2 covering, 3 linking `≥`), entries, rhs.
    type RawRow = (u8, Vec<(usize, f64)>, f64);

    #[derive(Debug, Clone)]
    struct Raw {
        maximise: bool,
        general: bool,
        n: usize,
        objective: Vec<f64>,
        upper: Vec<Option<u32>>,
        continuous: Vec<Option<f64>>,
        rows: Vec<RawRow>,
    }

    fn raw() -> impl Strategy<Value = Raw> {
        (1usize..=5, any::<bool>(), any::<bool>()).prop_flat_map(|(n, maximise, general)| {
            // Column n (out of range) now and then; duplicates mostly removed.
            let col = prop_oneof![12 => 0..n, 1 => Just(n)];
            let entries = (prop::collection::vec((col, extreme()), 0..=n), 0u8..8).prop_map(
                |(mut e, keep_duplicates)| {
                    if keep_duplicates > 0 {
                        e.sort_by_key(|&(j, _)| j);
                        e.dedup_by_key(|&mut (j, _)| j);
                    }
                    e
                },
            );
            let row = (0u8..4, entries, extreme());
            (
                prop::collection::vec(extreme(), n),
                prop::collection::vec(
                    prop_oneof![Just(None), (0u32..4).prop_map(Some), Just(Some(u32::MAX))],
                    n,
                ),
                prop::collection::vec(prop::option::weighted(0.2, extreme()), n),
                prop::collection::vec(row, 0..=4),
            )
                .prop_map(move |(objective, upper, continuous, rows)| Raw {
                    maximise,
                    general,
                    n,
                    objective,
                    upper,
                    continuous,
                    rows,
                })
        })
    }

    impl Raw {
        fn build(&self) -> Result<PcProblem, PcError> {
            let sense = if self.maximise {
                Sense::Maximise
            } else {
                Sense::Minimise
            };
            let mut b = if self.general {
                PcBuilder::general(sense, self.n)
            } else {
                PcBuilder::new(sense, self.n)
            };
            b = b.objective(self.objective.clone());
            for j in 0..self.n {
                b = match self.continuous[j] {
                    Some(u) => b.continuous(j, u.abs()),
                    None => b.upper(j, self.upper[j]),
                };
            }
            for (kind, entries, rhs) in &self.rows {
                b = match kind {
                    0 => b.packing_row(entries, *rhs),
                    1 | 2 => b.covering_row(entries, *rhs),
                    _ => b.linking_row(entries, dmlsched::pcip::RowSense::Ge, *rhs),
                };
            }
            b.build()
        }

        /// The same numbers as a general LP, straight to the LP layer.
        fn linear_program(&self) -> LinearProgram {
            let mut m = LinearProgram::new(if self.maximise {
                Sense::Maximise
            } else {
                Sense::Minimise
            });
            for j in 0..self.n {
                let u = self.continuous[j]
                    .map(f64::abs)
                    .or(self.upper[j].map(f64::from))
                    .unwrap_or(f64::INFINITY);
                m.add_column(self.objective[j], 0.0, u, ColumnKind::Integer);
            }
            for (kind, entries, rhs) in &self.rows {
                match kind {
                    0 => m.add_row(f64::NEG_INFINITY, *rhs, entries),
                    _ => m.add_row(*rhs, f64::INFINITY, entries),
                };
            }
            m
        }
    }

    /// The pipeline as the fuzz cases run it: few trials, short MIP limit.
    fn fuzz_solver() -> RoundingSolver {
        RoundingSolver {
            trials: 4,
            mip: {
                let mut built = MipOptions::default();
                built.limits.time_limit_s = 5.0;
                built
            },
            ..RoundingSolver::default()
        }
    }

    /// Builds, solves and checks one program under the watchdog.
    fn run_case(what: String, build: impl FnOnce() -> Option<PcProblem> + Send + 'static) {
        within(WATCHDOG_S, &what.clone(), move || {
            if let Some(p) = build() {
                // `solve_checked` panics when an Ok result fails its check.
                let _ = solve_checked(&p, &fuzz_solver());
            }
        });
    }

    /// A numeric literal a mutation puts in place of a number of the JSON.
    fn literal() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "0",
            "-0",
            "-1",
            "1e308",
            "-1e308",
            "1e400",
            "1e-320",
            "5e-324",
            "1e22",
            "1e20",
            "1e18",
            "1e15",
            "9007199254740993",
            "4294967296",
            "18446744073709551615",
            "1000000000",
            "0.5",
            "2.5",
            "NaN",
            "null",
            "[]",
            "\"1\"",
        ])
    }

    /// Mutates `text`: replaces the `k`-th number with `lit` (mode 0), cuts
    /// a slice out (mode 1), or duplicates one (mode 2).
    fn mutate(text: &str, mode: u8, k: usize, lit: &str, a: usize, b: usize) -> String {
        let bytes = text.as_bytes();
        match mode {
            0 => {
                let mut spans = Vec::new();
                let mut i = 0;
                while i < bytes.len() {
                    if bytes[i].is_ascii_digit()
                        || (bytes[i] == b'-' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
                    {
                        let s = i;
                        i += 1;
                        while i < bytes.len()
                            && (bytes[i].is_ascii_digit() || b".eE+-".contains(&bytes[i]))
                        {
                            i += 1;
                        }
                        spans.push((s, i));
                    } else {
                        i += 1;
                    }
                }
                if spans.is_empty() {
                    return text.to_string();
                }
                let (s, e) = spans[k % spans.len()];
                format!("{}{}{}", &text[..s], lit, &text[e..])
            }
            _ => {
                let (a, b) = (a % text.len(), b % text.len());
                let (a, b) = (a.min(b), a.max(b));
                if !text.is_char_boundary(a) || !text.is_char_boundary(b) {
                    return text.to_string();
                }
                if mode == 1 {
                    format!("{}{}", &text[..a], &text[b..])
                } else {
                    format!("{}{}{}", &text[..b], &text[a..b], &text[b..])
                }
            }
        }
    }

    const KNOWN: [&str; 7] = ["ka1", "ka2", "ka2b", "ka3", "ka4", "ka5", "ka6"];

    proptest! {
        #![proptest_config(ProptestConfig {
            // 160 cases keep the file within seconds; set
            // ROBUST_PCIP_CASES for a longer campaign.
            cases: std::env::var("ROBUST_PCIP_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(160),
            failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
                "proptest-regressions/robust_pcip.txt"
            ))),
            ..ProptestConfig::default()
        })]

        /// Extreme and malformed programs through the builder and the
        /// pipeline, and the same numbers straight into the LP layer.
        #[test]
        fn extreme_programs(r in raw()) {
            let case = r.clone();
            run_case(format!("{r:?}"), move || case.build().ok());
            let m = r.linear_program();
            within(WATCHDOG_S, &format!("lp::solve {r:?}"), move || {
                let opts = SolveOptions::default().with_time_limit(5.0);
                let _ = lp::solve(&m, &opts);
            });
        }

        /// Mutated known-answer JSON files through `from_json` and the
        /// pipeline.
        #[cfg(feature = "serde")]
        #[test]
        fn mutated_known_answers(
            file in prop::sample::select(KNOWN.to_vec()),
            mode in prop_oneof![6 => Just(0u8), 1 => Just(1u8), 1 => Just(2u8)],
            k in 0usize..64,
            lit in literal(),
            a in 0usize..1000,
            b in 0usize..1000,
        ) {
            let text = std::fs::read_to_string(format!("examples/pcip/{file}.json")).unwrap();
            let text = mutate(&text, mode, k, lit, a, b);
            run_case(format!("{file} mutated: {text}"), move || PcProblem::from_json(&text).ok());
        }
    }

    /// Unbounded columns, far right-hand sides and huge sizes together.
    #[test]
    fn far_targets_and_unbounded_columns() {
        for rhs in [1e6, 1e9, 1e12, 1e15, MAX_EXACT_INTEGER, 1e17, 1e19] {
            for a in [1.0, 0.5, 3.0, 1e-3, 1e14] {
                run_case(format!("cover {a}·x ≥ {rhs}"), move || {
                    PcBuilder::new(Sense::Minimise, 2)
                        .objective(vec![1.0, 2.0])
                        .upper(0, None)
                        .upper(1, None)
                        .covering_row(&[(0, a), (1, 1.0)], rhs)
                        .packing_row(&[(1, 1.0)], 3.0)
                        .build()
                        .ok()
                });
                run_case(format!("pack {a}·x ≤ {rhs}"), move || {
                    PcBuilder::new(Sense::Maximise, 2)
                        .objective(vec![1.0, 2.0])
                        .upper(0, None)
                        .upper(1, Some(7))
                        .packing_row(&[(0, a), (1, 1.0)], rhs)
                        .covering_row(&[(1, 1.0)], 1.0)
                        .build()
                        .ok()
                });
            }
        }
    }
}

/// Found by `tests/fuzz_pcip.rs` (seed 7, case 173): with continuous
/// columns, every trial kept them at the LP's values (which fit no
/// rounding of the integer column), and the MIP's point broke a row once its
/// integer column was rounded (x2 at the solver's tolerance above 0, x0 just
/// below 0.5); repair moves integer columns only, so the valid program
/// failed. The continuous columns are now recomputed for the rounded
/// integer part of the MIP's point: the optimum 1.5 at (0.5, 0, 0).
#[test]
fn continuous_columns_are_recomputed_for_the_rounded_mip_point() {
    use dmlsched::pcip::RowSense;
    within(WATCHDOG_S, "continuous completion", || {
        let p = PcBuilder::new(Sense::Minimise, 3)
            .objective(vec![3.0, 8.0, 1.0])
            .continuous(0, 1.0)
            .continuous(1, 5.0)
            .upper(2, Some(1))
            .packing_row(&[(0, 3.0)], 3.0)
            .covering_row(&[(2, 6.0), (1, 3.0), (0, 5.0)], 1.0)
            .covering_row(&[(2, 4.0), (0, 1.0)], 0.5)
            .linking_row(&[(0, -4.58)], RowSense::Le, 1.0)
            .linking_row(&[(2, -1.0), (0, 3.0), (1, -6.0)], RowSense::Ge, 1.0)
            .build()
            .unwrap();
        for exact in [ExactMode::Fallback, ExactMode::Always] {
            let solver = RoundingSolver {
                exact,
                neighbourhood: None,
                ..RoundingSolver::default()
            };
            let sol = solve_checked(&p, &solver).unwrap();
            assert!((sol.objective - 1.5).abs() < 1e-9, "{exact:?}: {sol:?}");
        }
    });
}

/// Found by `tests/fuzz_pcip.rs` (seed 11, case 2229): a cost of 1e19 (or
/// from about 1e16), valid by V11, made HiGHS stop with `status Error` on
/// the LP relaxation and the MIP, a solver failure on a valid program. Costs
/// now reach the solver divided by a power of two.
#[test]
fn huge_costs_are_scaled_before_the_solver() {
    use dmlsched::pcip::RowSense;
    within(WATCHDOG_S, "costs of 1e19", || {
        for cost in [1e16, 1e19] {
            let p = PcBuilder::new(Sense::Maximise, 3)
                .objective(vec![8.0, cost, 9.0])
                .upper(0, None)
                .upper(1, Some(5))
                .upper(2, Some(1))
                .packing_row(&[(2, 6.0), (0, 4.58), (1, 3.0)], 7.25)
                .covering_row(&[(0, 1.0 / 3.0), (2, 1.0), (1, 2.0)], 1.0)
                .linking_row(&[(1, -1.0), (0, 5.0)], RowSense::Ge, -1.0)
                .build()
                .unwrap();
            for exact in [ExactMode::Fallback, ExactMode::Always] {
                let solver = RoundingSolver {
                    exact,
                    ..RoundingSolver::default()
                };
                let sol = solve_checked(&p, &solver).unwrap();
                // x1 = 1 (3·x1 ≤ 7.25 and 5·x0 ≥ x1 − 1 with x0 = 0).
                assert_eq!(sol.x[1], 1.0, "{cost} {exact:?}: {:?}", sol.x);
                assert!(sol.objective >= cost, "{cost} {exact:?}");
            }
        }
    });
}

/// Found by `tests/fuzz_pcip.rs` (seed 99, case 1260): KA1 with a linking
/// row `1e-8·x1 + 4294967295·x2 − 6·x0 ≥ 2`. The LP puts x2 at 4.7e-10,
/// rounded to 0 in every trial and in the MIP's point; repair's phase 1
/// only decremented, so the violated `≥` row stopped it and the valid
/// program failed (exit 1). A raising step now increments x2.
#[test]
fn repair_raises_a_column_for_a_violated_ge_linking_row() {
    use dmlsched::pcip::RowSense;
    within(WATCHDOG_S, "raising step", || {
        let p = PcBuilder::new(Sense::Minimise, 3)
            .objective(vec![1.0, 1.0, 1.0])
            .covering_row(&[(0, 1.0), (2, 1.0)], 1.0)
            .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
            .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
            .linking_row(
                &[(1, 1e-8), (2, 4294967295.0), (0, -6.0)],
                RowSense::Ge,
                2.0,
            )
            .build()
            .unwrap();
        let mut x = vec![0.0; 3];
        repair(&p, &mut x, &RepairOptions::default()).unwrap();
        assert!(evaluate(&p, &x, 1e-9).is_feasible() && x[2] == 1.0, "{x:?}");
        for exact in [ExactMode::Fallback, ExactMode::Always] {
            let solver = RoundingSolver {
                exact,
                seed: 788,
                ..RoundingSolver::default()
            };
            assert_eq!(solve_checked(&p, &solver).unwrap().objective, 2.0);
        }
    });
}

//! The rounding pipeline end to end: known answers (KA1–KA6), best-of-k
//! statistics (fixed seeds, sized to pass for most seeds), determinism, and
//! the bound sandwich against brute force on small random programs.
#![cfg(feature = "highs")]

mod common;
#[path = "common/placement.rs"]
mod placement;

use common::*;
use dmlsched::certificate::{ExactStatus, Sense};
use dmlsched::pcip::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn solver(seed: u64, trials: u32, exact: ExactMode) -> RoundingSolver {
    RoundingSolver {
        seed,
        trials,
        exact,
        ..RoundingSolver::default()
    }
}

#[cfg(feature = "serde")]
#[test]
fn json_known_answers_with_exact() {
    let cases = [
        ("ka1", 2.0),
        ("ka2", 10.0),
        ("ka2b", 8.0),
        ("ka3", 6.0),
        ("ka4", 15.0),
        ("ka5", 15.0),
    ];
    for (name, opt) in cases {
        let text = std::fs::read_to_string(format!("examples/pcip/{name}.json")).unwrap();
        let p = PcProblem::from_json(&text).unwrap();
        let sol = solver(0, 4, ExactMode::Always).solve(&p).unwrap();
        assert_eq!(sol.objective, opt, "{name}");
        assert_eq!(sol.method, Method::Exact);
        let exact = sol.certificate.exact.as_ref().unwrap();
        assert_eq!(exact.status, ExactStatus::Optimal);
        sol.certificate.check(1e-9).unwrap();
        assert!(sol.certificate.achieved_ratio() >= 1.0);
    }
    let text = std::fs::read_to_string("examples/pcip/ka6.json").unwrap();
    let p = PcProblem::from_json(&text).unwrap();
    assert_eq!(
        solver(0, 4, ExactMode::Always).solve(&p).unwrap_err(),
        PcError::LpInfeasible
    );
}

#[test]
fn ka1_always_repairs_to_two() {
    for seed in 0..50 {
        let sol = solver(seed, 1, ExactMode::Never).solve(&ka1()).unwrap();
        assert_eq!(sol.objective, 2.0);
        // 4/3 against the LP bound; but integral costs make ⌈1.5⌉ = 2 a
        // bound too, so the certificate proves optimality (ratio 1).
        let lp = sol.certificate.relaxation_bound.value;
        assert!((sol.objective / lp - 4.0 / 3.0).abs() < 1e-7);
        assert_eq!(
            sol.certificate.exact.as_ref().unwrap().status,
            ExactStatus::ProvenByBound
        );
        assert_eq!(sol.certificate.achieved_ratio(), 1.0);
        sol.certificate.check(1e-9).unwrap();
    }
}

#[test]
fn integral_costs_stop_early_at_the_bound() {
    // KA2 costs are integral but ⌈7⌉ = 7 < 10: no early stop, all trials run.
    let sol = solver(0, 5, ExactMode::Never).solve(&ka2()).unwrap();
    assert_eq!(sol.trials.len(), 5);
    // KA1: the first repaired trial meets ⌈1.5⌉ = 2 and stops the loop.
    let sol = solver(0, 16, ExactMode::Never).solve(&ka1()).unwrap();
    assert_eq!(sol.trials.len(), 1);
}

#[test]
fn ka2_always_repairs_to_the_optimum() {
    let sol = solver(1, 3, ExactMode::Never).solve(&ka2()).unwrap();
    assert_eq!(sol.x, vec![1.0, 1.0, 1.0]);
    assert!((sol.certificate.achieved_ratio() - 10.0 / 7.0).abs() < 1e-7);
}

#[test]
fn ka3_integral_lp_rounds_deterministically() {
    for seed in 0..20 {
        let sol = solver(seed, 8, ExactMode::Never).solve(&ka3()).unwrap();
        assert_eq!(sol.x, vec![2.0, 1.0, 0.0, 0.0]);
        // Costs are not all integral (1.5), so no early stop: 8 trials, each
        // returning x* before repair, whatever the seed.
        assert_eq!(sol.trials.len(), 8);
        assert!(
            sol.trials
                .iter()
                .all(|t| t.pre_repair_feasible && t.pre_repair_objective == 6.0)
        );
        assert!(sol.certificate.exact.is_none());
        assert!((sol.certificate.achieved_ratio() - 1.0).abs() < 1e-9);
        sol.certificate.check(1e-9).unwrap();
    }
}

#[test]
fn ka4_best_of_k_frequencies() {
    let runs = 400;
    // The rounding's own statistics: without the neighbourhood search
    // (which turns every run into the optimum 15, checked below).
    let rounding = |s, k| RoundingSolver {
        neighbourhood: None,
        ..solver(s, k, ExactMode::Never)
    };
    let fifteen = |k| {
        (0..runs)
            .filter(|&s| rounding(s, k).solve(&ka4()).unwrap().objective == 15.0)
            .count()
    };
    let f1 = fifteen(1) as f64 / runs as f64;
    // Exact value 1/2; 4 standard errors of a proportion at n = 400 is 0.1.
    assert!((f1 - 0.5).abs() < 0.1, "k = 1: P[15] = {f1}");
    let f8 = fifteen(8) as f64 / runs as f64;
    assert!(f8 >= 0.98, "k = 8: P[15] = {f8}");
    // Every result is 13 or 15 and certified.
    for s in 0..50 {
        let sol = rounding(s, 1).solve(&ka4()).unwrap();
        assert!(sol.objective == 13.0 || sol.objective == 15.0);
        sol.certificate.check(1e-9).unwrap();
        // With the neighbourhood search (the default) one trial suffices.
        let sol = solver(s, 1, ExactMode::Never).solve(&ka4()).unwrap();
        assert_eq!(sol.objective, 15.0);
        sol.certificate.check(1e-9).unwrap();
    }
}

#[test]
fn ka5_every_trial_repairs_to_the_optimum() {
    // Greedy repair alone used to fail on half of KA5's rounding outcomes
    // (phase 2 stalled with x4 blocked by M2); its unblocking step takes a
    // unit off x1 and every outcome now repairs, to the optimum 15.
    for s in 0..200 {
        let sol = solver(s, 1, ExactMode::Never).solve(&ka5()).unwrap();
        assert_eq!(sol.objective, 15.0);
        sol.certificate.check(1e-9).unwrap();
        let sol = solver(s, 1, ExactMode::Fallback).solve(&ka5()).unwrap();
        assert_eq!(sol.objective, 15.0);
        assert!(!matches!(sol.method, Method::ExactFallback));
    }
}

#[test]
fn pre_repair_statistics_match_the_exact_values() {
    // KA1, β = 1: E[cost] = 3/2, P[feasible] = 1/2; KA5: E = 25/2, P = 1/8.
    for (p, mean, prob, sd_cost) in [
        (ka1(), 1.5, 0.5, (0.75f64).sqrt()),
        (ka5(), 12.5, 0.125, 2.5f64),
    ] {
        let n = 2000;
        let (mut sum, mut feas) = (0.0, 0);
        for s in 0..n {
            let sol = solver(s, 1, ExactMode::Fallback).solve(&p).unwrap();
            let t = &sol.trials[0];
            sum += t.pre_repair_objective;
            feas += usize::from(t.pre_repair_feasible);
        }
        let m = sum / n as f64;
        assert!(
            (m - mean).abs() < 4.0 * sd_cost / (n as f64).sqrt(),
            "mean {m} vs {mean}"
        );
        let f = feas as f64 / n as f64;
        let se = (prob * (1.0 - prob) / n as f64).sqrt();
        assert!((f - prob).abs() < 4.0 * se, "P[feasible] {f} vs {prob}");
    }
}

#[test]
fn same_seed_same_result() {
    let strip = |mut s: PcSolution| {
        s.certificate.run.stage_seconds.clear();
        if let Some(lp) = s.lp.as_mut() {
            lp.seconds = 0.0;
        }
        if let Some(e) = s.exact.as_mut() {
            e.info.seconds = 0.0;
        }
        if let Some(e) = s.certificate.exact.as_mut() {
            e.seconds = 0.0;
        }
        s
    };
    for p in [ka1(), ka4(), ka5()] {
        let a = strip(solver(42, 8, ExactMode::Fallback).solve(&p).unwrap());
        let b = strip(solver(42, 8, ExactMode::Fallback).solve(&p).unwrap());
        assert_eq!(a, b);
    }
}

/// A small random program, small enough for brute force (at most
/// 3⁶ = 729 points).
#[derive(Debug, Clone)]
struct Small {
    sense: Sense,
    upper: Vec<u32>,
    cost: Vec<f64>,
    packing: Vec<(Vec<(usize, f64)>, f64)>,
    covering: Vec<(Vec<(usize, f64)>, f64)>,
}

impl Small {
    fn problem(&self) -> Option<PcProblem> {
        let n = self.cost.len();
        let mut b = PcBuilder::new(self.sense, n).objective(self.cost.clone());
        for (j, &u) in self.upper.iter().enumerate() {
            b = b.upper(j, Some(u));
        }
        for (e, r) in &self.packing {
            b = b.packing_row(e, *r);
        }
        for (e, r) in &self.covering {
            b = b.covering_row(e, *r);
        }
        b.build().ok()
    }

    /// Exhaustive optimum: `None` when no integer point is feasible.
    fn brute_force(&self, p: &PcProblem) -> Option<f64> {
        let n = self.cost.len();
        let mut best: Option<f64> = None;
        let mut x = vec![0.0; n];
        loop {
            if evaluate(p, &x, 1e-9).is_feasible() {
                let v = p.objective_value(&x);
                best = Some(match (best, self.sense) {
                    (None, _) => v,
                    (Some(b), Sense::Minimise) => b.min(v),
                    (Some(b), Sense::Maximise) => b.max(v),
                });
            }
            let mut j = 0;
            while j < n {
                if x[j] < f64::from(self.upper[j]) {
                    x[j] += 1.0;
                    break;
                }
                x[j] = 0.0;
                j += 1;
            }
            if j == n {
                return best;
            }
        }
    }
}

fn row(n: usize) -> impl Strategy<Value = Vec<(usize, f64)>> {
    proptest::collection::vec(0u32..4, n).prop_filter_map("non-empty row", |c| {
        let e: Vec<(usize, f64)> = c
            .iter()
            .enumerate()
            .filter(|(_, v)| **v > 0)
            .map(|(j, v)| (j, f64::from(*v)))
            .collect();
        (!e.is_empty()).then_some(e)
    })
}

fn small_pc() -> impl Strategy<Value = Small> {
    (1usize..=6, any::<bool>(), 0usize..=3, 0usize..=3)
        .prop_flat_map(|(n, max, mp, mc)| {
            let mc = if mp + mc == 0 { 1 } else { mc };
            (
                Just(if max {
                    Sense::Maximise
                } else {
                    Sense::Minimise
                }),
                proptest::collection::vec(1u32..=2, n),
                proptest::collection::vec((0u32..=5).prop_map(f64::from), n),
                proptest::collection::vec((row(n), (0u32..=6).prop_map(f64::from)), mp),
                proptest::collection::vec((row(n), (1u32..=6).prop_map(f64::from)), mc),
            )
        })
        .prop_map(|(sense, upper, cost, packing, covering)| Small {
            sense,
            upper,
            cost,
            packing,
            covering,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 256,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/pcip_pipeline.txt"))),
        ..ProptestConfig::default()
    })]

    /// LP bound ≤ OPT ≤ objective (min; mirrored for max); infeasibility is
    /// never hidden; with the fallback every feasible program is solved;
    /// every certificate checks.
    #[test]
    fn sandwich_against_brute_force(s in small_pc(), seed in 0u64..1000) {
        let Some(p) = s.problem() else { return Ok(()); }; // V9 etc.: rejected by the strategy
        let opt = s.brute_force(&p);
        let result = solver(seed, 4, ExactMode::Fallback).solve(&p);
        match (opt, result) {
            (None, Ok(sol)) => prop_assert!(false, "infeasible program solved: {:?}", sol.x),
            (None, Err(e)) => prop_assert!(matches!(e, PcError::LpInfeasible | PcError::IntegerInfeasible | PcError::RepairFailed(_)), "{e}"),
            (Some(_), Err(e)) => prop_assert!(false, "feasible program failed: {e}"),
            (Some(opt), Ok(sol)) => {
                prop_assert!(evaluate(&p, &sol.x, 1e-9).is_feasible());
                let bound = sol.certificate.relaxation_bound.value;
                let lp = sol.lp.as_ref().expect("the LP ran");
                match s.sense {
                    Sense::Minimise => {
                        prop_assert!(bound <= lp.objective + 1e-7);
                        prop_assert!(lp.objective <= opt + 1e-7);
                        prop_assert!(sol.objective >= opt - 1e-9);
                    }
                    Sense::Maximise => {
                        prop_assert!(bound >= lp.objective - 1e-7);
                        prop_assert!(lp.objective >= opt - 1e-7);
                        prop_assert!(sol.objective <= opt + 1e-9);
                    }
                }
                prop_assert!(sol.certificate.check(1e-9).is_ok(), "{:?}", sol.certificate.check(1e-9));
            }
        }
    }

    /// The improvement phase (reverse delete, greedy fill, shift moves) never
    /// returns an infeasible or a worse point, and is deterministic: from a
    /// feasible point (repaired without it) a repair with it keeps the point
    /// feasible and its objective no worse, twice the same.
    #[test]
    fn improvement_never_worsens(s in small_pc(), start in proptest::collection::vec(0u32..=2, 1..=4)) {
        let Some(p) = s.problem() else { return Ok(()); };
        let mut x: Vec<f64> = (0..p.n_vars()).map(|j| f64::from(start[j % start.len()])).collect();
        let mut off = RepairOptions::default();
        off.improve = false;
        if repair(&p, &mut x, &off).is_err() {
            return Ok(());
        }
        prop_assert!(evaluate(&p, &x, 1e-9).is_feasible());
        let before = p.objective_value(&x);
        let (mut a, mut b) = (x.clone(), x.clone());
        let ra = repair(&p, &mut a, &RepairOptions::default());
        let rb = repair(&p, &mut b, &RepairOptions::default());
        prop_assert_eq!(&ra, &rb);
        prop_assert_eq!(&a, &b);
        prop_assert!(ra.is_ok(), "{:?}", ra);
        prop_assert!(evaluate(&p, &a, 1e-9).is_feasible());
        let after = p.objective_value(&a);
        match s.sense {
            Sense::Minimise => prop_assert!(after <= before + 1e-9, "{after} > {before}"),
            Sense::Maximise => prop_assert!(after >= before - 1e-9, "{after} < {before}"),
        }
    }

    /// Pure packing and pure covering programs always repair (no fallback).
    #[test]
    fn pure_programs_always_repair(s in small_pc(), seed in 0u64..1000) {
        let pure = s.packing.is_empty() || s.covering.is_empty();
        let Some(p) = s.problem() else { return Ok(()); };
        if !pure {
            return Ok(());
        }
        let sol = solver(seed, 2, ExactMode::Never).solve(&p);
        prop_assert!(sol.is_ok(), "{:?}", sol.err());
    }
}

// ---------------------------------------------------------------------------
// Hooks: choice groups, derivation, model moves.
// ---------------------------------------------------------------------------

/// Per slot t ∈ {0, 1}: modes u_t (LOCAL, cost 3) and v_t (DISTRIBUTED,
/// cost 1) with `u_t + v_t ≤ 1`; workers a_t (of u_t) and b_t (of v_t) with
/// `a ≤ 3u`, `u ≤ a`, `b ≤ 3v`, `v ≤ b`; servers s_t ≥ b_t / 2 (derived);
/// work `Σ 2a + b ≥ 5`; capacity `Σ a + b ≤ 4`. Columns per slot:
/// u, v, a, b, s.
fn slots() -> (PcProblem, Structure) {
    use RowSense::{Ge, Le};
    let col = |t: usize, k: usize| 5 * t + k;
    let mut b = PcBuilder::new(Sense::Minimise, 10)
        .objective(vec![3.0, 1.0, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0, 1.0, 2.0]);
    let mut work = Vec::new();
    let mut cap = Vec::new();
    for t in 0..2 {
        let (u, v, a, w, s) = (col(t, 0), col(t, 1), col(t, 2), col(t, 3), col(t, 4));
        b = b
            .binary(u)
            .binary(v)
            .upper(a, Some(3))
            .upper(w, Some(3))
            .upper(s, Some(2))
            .packing_row(&[(u, 1.0), (v, 1.0)], 1.0)
            .linking_row(&[(a, 1.0), (u, -3.0)], Le, 0.0)
            .linking_row(&[(u, 1.0), (a, -1.0)], Le, 0.0)
            .linking_row(&[(w, 1.0), (v, -3.0)], Le, 0.0)
            .linking_row(&[(v, 1.0), (w, -1.0)], Le, 0.0)
            .linking_row(&[(s, 2.0), (w, -1.0)], Ge, 0.0);
        work.extend([(a, 2.0), (w, 1.0)]);
        cap.extend([(a, 1.0), (w, 1.0)]);
    }
    let p = b
        .covering_row(&work, 5.0)
        .packing_row(&cap, 4.0)
        .build()
        .unwrap();
    let groups = (0..2)
        .map(|t| {
            ChoiceGroup::new()
                .member(col(t, 0), &[col(t, 2)])
                .member(col(t, 1), &[col(t, 3)])
        })
        .collect();
    let s = Structure::new(&p, groups).unwrap();
    (p, s)
}

fn servers(_: &PcProblem, x: &mut [f64]) {
    for t in 0..2 {
        x[5 * t + 4] = (x[5 * t + 3] / 2.0).ceil();
    }
}

/// Opens a mode with one worker (and its server), or closes one.
struct Modes;
impl MoveSource for Modes {
    fn shrink_moves(&self, p: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        self.prune_moves(p, x, out);
    }
    fn grow_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        for t in 0..2 {
            let c = 5 * t;
            if x[c] + x[c + 1] == 0.0 {
                out.push(Move::new(vec![(c, 1.0), (c + 2, 1.0)]));
                out.push(Move::new(vec![
                    (c + 1, 1.0),
                    (c + 3, 1.0),
                    (c + 4, 1.0 - x[c + 4].min(1.0)),
                ]));
            }
        }
    }
    fn prune_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        for t in 0..2 {
            let c = 5 * t;
            if x[c] == 1.0 {
                out.push(Move::new(vec![(c, -1.0), (c + 2, -x[c + 2])]));
            }
            if x[c + 1] == 1.0 {
                out.push(Move::new(vec![
                    (c + 1, -1.0),
                    (c + 3, -x[c + 3]),
                    (c + 4, -x[c + 4]),
                ]));
            }
        }
    }
}

#[test]
fn solve_with_no_hooks_is_solve() {
    for p in [ka1(), ka2(), ka3(), ka4(), ka5()] {
        for seed in 0..4 {
            let s = solver(seed, 4, ExactMode::Never);
            let a = s.solve(&p);
            let b = s.solve_with(&p, &Hooks::new());
            let none = Structure::none(&p);
            let c = s.solve_with(&p, &Hooks::new().with_groups(&none).with_moves(&()));
            match (a, b, c) {
                (Ok(a), Ok(b), Ok(c)) => {
                    assert_eq!((&a.x, &a.trials), (&b.x, &b.trials));
                    assert_eq!((&a.x, &a.trials), (&c.x, &c.trials));
                }
                (a, b, c) => {
                    assert_eq!(a.clone().err(), b.err());
                    assert_eq!(a.err(), c.err());
                }
            }
        }
    }
}

#[test]
fn the_whole_pipeline_with_groups_derive_and_moves() {
    let (p, s) = slots();
    let derive = servers;
    let hooks = Hooks::new()
        .with_groups(&s)
        .with_derive(&derive)
        .with_moves(&Modes);
    for seed in 0..10 {
        let sol = solver(seed, 8, ExactMode::Never)
            .solve_with(&p, &hooks)
            .unwrap();
        sol.certificate.check(1e-9).unwrap();
        assert!(evaluate(&p, &sol.x, 1e-9).is_feasible());
        // Every rounded point respected the groups: no trial needed the MIP.
        assert!(matches!(sol.method, Method::Rounding { .. }));
        for t in 0..2 {
            assert!(sol.x[5 * t] + sol.x[5 * t + 1] <= 1.0);
            assert_eq!(sol.x[5 * t + 4], (sol.x[5 * t + 3] / 2.0).ceil());
        }
        // The certificate states the expectation, not the independent
        // rounding's success probability.
        assert!(
            sol.certificate
                .guarantees
                .iter()
                .any(|g| g.expression.contains("choice groups"))
        );
        assert!(
            !sol.certificate
                .guarantees
                .iter()
                .any(|g| g.expression.contains("p_succ"))
        );
        // Reproducible.
        let again = solver(seed, 8, ExactMode::Never)
            .solve_with(&p, &hooks)
            .unwrap();
        assert_eq!((sol.x, sol.trials), (again.x, again.trials));
    }
    // The same program without the model's moves needs them: unit moves
    // cannot open a mode (each breaks a linking row) — some trials fail.
    let plain = Hooks::new().with_groups(&s).with_derive(&derive);
    let mut failed = 0;
    for seed in 0..10 {
        let sol = solver(seed, 8, ExactMode::Never).solve_with(&p, &plain);
        match sol {
            Ok(sol) => {
                failed += sol
                    .trials
                    .iter()
                    .filter(|t| matches!(t.outcome, TrialOutcome::Failed { .. }))
                    .count();
            }
            Err(PcError::RepairFailed(_)) => failed += 8,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(failed > 0);
}

#[test]
fn hooks_are_checked_against_the_problem() {
    let (_, s) = slots();
    let e = solver(0, 1, ExactMode::Never).solve_with(&ka1(), &Hooks::new().with_groups(&s));
    assert!(matches!(e, Err(PcError::DimensionMismatch { .. })), "{e:?}");
    // A derivation that leaves NaN is a typed error.
    let nan = |_: &PcProblem, x: &mut [f64]| x[0] = f64::NAN;
    let e = solver(0, 1, ExactMode::Never).solve_with(&ka1(), &Hooks::new().with_derive(&nan));
    assert!(
        matches!(e, Err(PcError::InvalidOption { option: "x", .. })),
        "{e:?}"
    );
}

// ---------------------------------------------------------------------------
// Anytime answers, the sub-MIP neighbourhood, the benchmark family.
// ---------------------------------------------------------------------------

/// A budget spent before the LP starts gives the greedy repair's point,
/// feasible, with the trivial bound (0 for a minimisation with costs ≥ 0,
/// `Σ v_j·u_j` for a maximisation), never an error or a silent LP answer.
#[test]
fn a_budget_too_short_for_the_lp_gives_the_greedy_point() {
    use dmlsched::certificate::BoundKind;
    use placement::placement;
    let short = |p: &PcProblem| {
        RoundingSolver {
            time_limit_s: Some(1e-9),
            ..RoundingSolver::default()
        }
        .solve(p)
        .unwrap()
    };
    let p = placement(20, 10, 3).unwrap();
    let sol = short(&p);
    assert_eq!(sol.method, Method::Greedy);
    assert!(sol.lp.is_none() && sol.trials.is_empty() && sol.beta.is_none());
    assert!(evaluate(&p, &sol.x, 1e-9).is_feasible());
    let bound = &sol.certificate.relaxation_bound;
    assert_eq!((bound.kind, bound.value), (BoundKind::Trivial, 0.0));
    assert_eq!(sol.certificate.algorithm, "pcip::greedy_repair");
    sol.certificate.check(1e-9).unwrap();
    // The same call twice gives the same point.
    assert_eq!(short(&p).x, sol.x);
    // Maximisation (KA4, binary): the bound is the sum of the values.
    let p = ka4();
    let sol = short(&p);
    assert_eq!(sol.method, Method::Greedy);
    let total: f64 = p.objective().iter().sum();
    assert_eq!(sol.certificate.relaxation_bound.value, total);
    sol.certificate.check(1e-9).unwrap();
}

/// The neighbourhood search only ever improves the rounded point, keeps
/// it feasible and repeatable, and its options are checked.
#[test]
fn the_neighbourhood_search_improves_and_repeats() {
    use placement::placement;
    let p = placement(30, 10, 1).unwrap();
    let with = solver(1, 4, ExactMode::Never);
    let without = RoundingSolver {
        neighbourhood: None,
        ..with.clone()
    };
    let (a, b) = (with.solve(&p).unwrap(), without.solve(&p).unwrap());
    assert!(a.objective <= b.objective + 1e-9);
    assert!(evaluate(&p, &a.x, 1e-9).is_feasible());
    a.certificate.check(1e-9).unwrap();
    assert!(matches!(b.method, Method::Rounding { .. }));
    if a.objective < b.objective - 1e-9 {
        assert!(matches!(a.method, Method::Neighbourhood { .. }));
    }
    assert_eq!(with.solve(&p).unwrap().x, a.x);
    for bad in [
        Neighbourhood {
            max_nodes: 0,
            ..Neighbourhood::default()
        },
        Neighbourhood {
            time_limit_s: Some(f64::NAN),
            ..Neighbourhood::default()
        },
    ] {
        let s = RoundingSolver {
            neighbourhood: Some(bad),
            ..RoundingSolver::default()
        };
        assert!(matches!(s.solve(&p), Err(PcError::InvalidOption { .. })));
    }
}

// The benchmark family of placement programs (`tests/common/placement.rs`).
#[test]
fn shapes_and_the_even_spread_point() {
    let p = placement::placement(6, 4, 3).unwrap();
    assert_eq!(p.n_vars(), 24);
    assert_eq!(p.n_rows(RowClass::Covering), 6);
    assert_eq!(p.n_rows(RowClass::Packing), 8);
    // Rounding the even spread up covers every job; with y ≤ 8 and the
    // 30 % headroom the program is feasible (the MIP and the pipeline
    // find points in the engine's tests); here: seeds give distinct data.
    assert_ne!(p, placement::placement(6, 4, 4).unwrap());
    let big = placement::placement(50, 20, 7).unwrap();
    assert_eq!((big.n_vars(), big.nnz()), (1000, 3000));
    assert_eq!(big, placement::placement(50, 20, 7).unwrap());
    let zero = vec![0.0; 24];
    let ev = evaluate(&p, &zero, 1e-9);
    assert_eq!(ev.violated_rows.len(), 6, "only the work rows are short");
}

#[test]
fn bad_sizes_are_typed_errors() {
    for (j, m, option) in [(0, 3, "jobs"), (3, 0, "machines"), (MAX_VARS, 2, "jobs")] {
        match placement::placement(j, m, 0) {
            Err(PcError::InvalidOption { option: o, .. }) => assert_eq!(o, option),
            r => panic!("{r:?}"),
        }
    }
}

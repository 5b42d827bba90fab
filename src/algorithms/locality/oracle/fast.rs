//! A fast path of the oracle's deadline enumeration:
//! whole intervals of deadlines settled from the LP bound at their right
//! end, instead of one LP per deadline.
//!
//! LOC-SUB(i, t̂ + 1) has every column and row of LOC-SUB(i, t̂) plus the
//! columns and rows of slot `t̂ + 1`, whose rows hold at 0 (packing rows
//! with non-negative right-hand sides, homogeneous linking rows), and the
//! covering row only gains columns. So a point of LP(t̂), extended by
//! zeros, is a point of LP(t̂ + 1) with the same cost, and the LP optimum
//! `LB` is non-increasing in `t̂`; so is the utility `f`. For an interval
//! `[a, b]` of deadlines, with `LB(b)` known:
//!
//! * **skip**: if `f(a) − LB(b) ≤ best payoff`, then every `s ∈ [a, b]`
//!   has `f(s) − LB(s) ≤ f(a) − LB(b) ≤ best payoff`, and the best payoff
//!   only grows, so the rule examines none of them beyond its bound;
//! * **repeated optimum** (LP rounding): if `LB(b)` equals `LB(a − 1)`
//!   (within [`SAME_BOUND_REL`](super::SAME_BOUND_REL)), every `LB(s)`,
//!   `s ∈ [a, b]`, lies between them, so each equals its predecessor's
//!   and keeps the point of the deadline before `a`: none is rounded.
//!
//! Either way no LP of `(a, b)` is solved, and the deadlines are recorded
//! with `LB(b)`, a valid lower bound for each (`LB(s) ≥ LB(b)`), or their
//! own bound when it was solved. Otherwise the interval is split at its
//! middle and the halves are visited in order, so deadlines are examined
//! in the rule's order with the same best payoff, and a deadline examined
//! alone gets the rule's treatment with its own LP. The plans, hence the
//! schedules, are the rule's; the recorded bounds of settled deadlines are
//! `LB(b)` instead of their own (smaller or equal, by at most the
//! tolerance inside a repeated optimum), and fewer LPs are solved.
//! After the first deadline the intervals double in length (`1, 2, 4, …`
//! deadlines), so that an enumeration the rule stops early (a plan whose
//! payoff no later utility can beat) solves few LPs past its stop, and
//! the long LPs at the window's end only when the shorter ones did not
//! settle the question. `equality::locality_enumeration_forced_off_and_on_agree`
//! runs whole schedules with the fast path off and on.

use super::{Enumeration, LocalityOracle, same_bound};
use crate::online::PriceView;

/// Examines the deadlines `first..=last` of `e` (see the [module
/// docs](self)).
pub(super) fn enumerate(
    oracle: &mut LocalityOracle,
    e: &mut Enumeration<'_>,
    view: &PriceView<'_>,
    first: u32,
    last: u32,
) -> crate::Result<()> {
    if first > last {
        return Ok(());
    }
    let f = e.job.utility_at(first);
    if f <= e.best_payoff {
        return Ok(());
    }
    oracle.lp_at(e, first)?;
    oracle.examine(e, view, first, f)?;
    let (mut a, mut width) = (first.saturating_add(1), 1u32);
    while a <= last {
        let b = a.saturating_add(width - 1).min(last);
        if visit(oracle, e, view, a, b)? || b == last {
            break;
        }
        a = b + 1;
        width = width.saturating_mul(2);
    }
    Ok(())
}

/// The last deadline of `a..=b` whose utility beats the best payoff (the
/// rule stops before the next one), `None` when `a`'s does not.
fn reachable(e: &Enumeration<'_>, a: u32, b: u32) -> Option<u32> {
    (a..=b)
        .rev()
        .find(|&s| e.job.utility_at(s) > e.best_payoff)
        .filter(|_| e.job.utility_at(a) > e.best_payoff)
}

/// Visits the deadlines `a..=b` in order; `Ok(true)` when the enumeration
/// stopped (a deadline whose utility cannot beat the best payoff).
fn visit(
    oracle: &mut LocalityOracle,
    e: &mut Enumeration<'_>,
    view: &PriceView<'_>,
    a: u32,
    b: u32,
) -> crate::Result<bool> {
    let Some(end) = reachable(e, a, b) else {
        return Ok(true);
    };
    oracle.lp_at(e, end)?;
    let lb_end = e.lps.get(&end).map_or(f64::INFINITY, |lp| lp.lb);
    let f_a = e.job.utility_at(a);
    let rounding = matches!(oracle.solver, super::InnerSolver::LpRound { .. });
    let skip = f_a - lb_end <= e.best_payoff;
    let repeated = rounding && e.prev_lb.is_some_and(|p| same_bound(p, lb_end));
    if skip || repeated {
        settle(e, a, end, lb_end, repeated && !skip);
    } else if a == end {
        oracle.examine(e, view, a, f_a)?;
    } else {
        let mid = a + (end - a) / 2;
        oracle.lp_at(e, mid)?;
        if visit(oracle, e, view, a, mid)? {
            return Ok(true);
        }
        if visit(oracle, e, view, mid + 1, end)? {
            return Ok(true);
        }
    }
    Ok(end < b)
}

/// Records the deadlines `a..=b` as settled by the bound `lb` of `b` (or
/// their own, when solved); `repeated`: as deadlines that keep an earlier
/// LP point.
fn settle(e: &mut Enumeration<'_>, a: u32, b: u32, lb: f64, repeated: bool) {
    for s in a..=b {
        let own = e.lps.remove(&s).map_or(lb, |lp| lp.lb);
        e.stats.deadlines_examined += 1;
        e.stats.repeated_points += u64::from(repeated && own.is_finite());
        let f = e.job.utility_at(s);
        e.record(s, f, own);
    }
    e.lps.retain(|&s, _| s > b);
    e.prev_lb = Some(lb);
}

#[cfg(all(test, feature = "highs", feature = "serde"))]
mod equality {
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use crate::algorithms::Algorithm;
    use crate::algorithms::locality::Locality;
    use crate::algorithms::locality::tests_support::fixture;
    use crate::exact::Shortcut;

    /// Busy runs (prices that differ per slot, jobs rejected on their LP
    /// bounds) and a quiet one (repeated LP optima) give the same
    /// schedules and objectives with the fast path off and on.
    #[test]
    fn locality_enumeration_forced_off_and_on_agree() {
        for (name, seed) in [("busy-seed3", 3), ("busy-seed11", 11), ("quiet-seed5", 5)] {
            let (instance, params) = fixture(name, seed);
            let run = |shortcut: Shortcut| {
                Locality::new(params.clone())
                    .map(|a| a.with_shortcut(shortcut))
                    .and_then(|a| a.solve(&instance, &mut ChaCha8Rng::seed_from_u64(seed)))
                    .expect("locality run")
            };
            let (off, on) = (run(Shortcut::Off), run(Shortcut::Allowed));
            assert_eq!(off.schedule, on.schedule, "seed {seed}");
            assert_eq!(
                off.certificate.objective, on.certificate.objective,
                "seed {seed}"
            );
        }
    }
}

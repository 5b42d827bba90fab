//! The outer search over the budget `θ` (and κ): the paper's bisection that
//! tightens the budget only on strict improvement, or a plain feasibility
//! bisection.

use super::trial::TrialOutcome;

/// The trial returned by a search, with its budget and κ.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Found {
    pub(crate) outcome: TrialOutcome,
    pub(crate) theta: u64,
    pub(crate) kappa: Option<u32>,
}

/// One trial of the search: `(θ, κ, makespan)`.
pub(crate) type TraceRow = (u64, Option<u32>, Option<u64>);

/// What a search found.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchOutcome {
    /// The returned trial (`None`: no trial placed every job).
    pub(crate) found: Option<Found>,
    /// Every trial run.
    pub(crate) trace: Vec<TraceRow>,
    /// Feasibility bisection only: whether a feasible budget was seen below
    /// an infeasible one.
    pub(crate) non_monotone: bool,
}

/// The best trial over `kappas` at budget `theta` (ties keep the first, i.e.
/// the smaller κ); records every trial in `trace`.
fn best_at(
    theta: u64,
    kappas: &[Option<u32>],
    run: &mut dyn FnMut(u64, Option<u32>) -> TrialOutcome,
    trace: &mut Vec<TraceRow>,
) -> Option<Found> {
    let mut best: Option<Found> = None;
    for &kappa in kappas {
        let outcome = run(theta, kappa);
        trace.push((theta, kappa, outcome.makespan));
        let Some(m) = outcome.makespan else { continue };
        if best
            .as_ref()
            .is_none_or(|b| b.outcome.makespan.is_none_or(|bm| m < bm))
        {
            best = Some(Found {
                outcome,
                theta,
                kappa,
            });
        }
    }
    best
}

fn makespan(f: &Option<Found>) -> Option<u64> {
    f.as_ref().and_then(|f| f.outcome.makespan)
}

/// The paper's search over `θ ∈ 1..=T`: probe the midpoint; on a strict
/// improvement of the best makespan `m` (initially `T`) keep it and try
/// smaller budgets, otherwise larger ones. A later, smaller budget that
/// reproduces `m` exactly replaces the kept trial (the tightest budget). When
/// nothing beats `T`, the best successful trial seen is returned.
pub(crate) fn paper_improvement(
    horizon: u64,
    kappas: &[Option<u32>],
    run: &mut dyn FnMut(u64, Option<u32>) -> TrialOutcome,
) -> SearchOutcome {
    let mut out = SearchOutcome::default();
    let (mut left, mut right) = (1u64, horizon);
    let mut m = horizon;
    let mut fallback: Option<Found> = None;
    while left <= right {
        let theta = left + (right - left) / 2;
        let here = best_at(theta, kappas, run, &mut out.trace);
        let m_theta = makespan(&here);
        if let Some(mt) = m_theta
            && makespan(&fallback).is_none_or(|fm| mt < fm)
        {
            fallback.clone_from(&here);
        }
        match m_theta {
            Some(mt) if mt < m => {
                m = mt;
                out.found = here;
                right = theta - 1;
            }
            _ => {
                if m_theta == Some(m) && out.found.as_ref().is_some_and(|f| theta < f.theta) {
                    out.found = here;
                }
                left = theta + 1;
            }
        }
    }
    if out.found.is_none() {
        out.found = fallback;
    }
    out
}

/// The smallest `θ ∈ 1..=T` at which some trial places every job, by
/// standard bisection; returns the best trial at that budget.
pub(crate) fn feasibility(
    horizon: u64,
    kappas: &[Option<u32>],
    run: &mut dyn FnMut(u64, Option<u32>) -> TrialOutcome,
) -> SearchOutcome {
    let mut out = SearchOutcome::default();
    let mut probes: Vec<(u64, Option<Found>)> = Vec::new();
    let mut probe = |theta: u64, trace: &mut Vec<TraceRow>| -> bool {
        if let Some((_, f)) = probes.iter().find(|(t, _)| *t == theta) {
            return f.is_some();
        }
        let f = best_at(theta, kappas, run, trace);
        let ok = f.is_some();
        probes.push((theta, f));
        ok
    };
    let (mut lo, mut hi) = (1u64, horizon);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if probe(mid, &mut out.trace) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    probe(lo, &mut out.trace);
    out.non_monotone = probes
        .iter()
        .any(|(a, fa)| fa.is_some() && probes.iter().any(|(b, fb)| b > a && fb.is_none()));
    out.found = probes
        .into_iter()
        .find(|(t, _)| *t == lo)
        .and_then(|(_, f)| f);
    out
}

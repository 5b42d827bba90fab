//! The plan ledger: what committed plans use per machine over future
//! slots, stored as a step function per machine (only the slots where the
//! use changes), so its size follows the plans and not the horizon.

use std::collections::BTreeMap;
use std::ops::Range;

use crate::model::{FIT_TOL, ResourceKind, Resources};

/// One machine's reserved use: the value at slot `s` is the entry of the
/// largest key `≤ s` (zero before the first key).
pub(crate) type Steps = BTreeMap<u32, Resources>;

/// The value of `steps` at slot `s`.
fn value_at(steps: &Steps, s: u32) -> Resources {
    steps
        .range(..=s)
        .next_back()
        .map_or_else(Resources::zero, |(_, v)| *v)
}

/// Adds `d` (or subtracts it, with `subtract`) over `slots`.
pub(crate) fn add(steps: &mut Steps, slots: Range<u32>, d: &Resources, subtract: bool) {
    if slots.start >= slots.end || d.is_zero() {
        return;
    }
    for k in [slots.start, slots.end] {
        if !steps.contains_key(&k) {
            let v = value_at(steps, k);
            steps.insert(k, v);
        }
    }
    for (_, v) in steps.range_mut(slots.clone()) {
        *v = if subtract { v.minus(d) } else { v.plus(d) };
    }
    // Drop breakpoints that no longer change the value.
    for k in [slots.start, slots.end] {
        let before = k
            .checked_sub(1)
            .map_or_else(Resources::zero, |b| value_at(steps, b));
        if steps.get(&k) == Some(&before) {
            steps.remove(&k);
        }
    }
}

/// The first slot `≥ from` where `base` plus the reserved use exceeds
/// `capacity`, with the resource, the total and the capacity.
pub(crate) fn first_excess(
    steps: &Steps,
    from: u32,
    base: &Resources,
    capacity: &Resources,
) -> Option<(u32, ResourceKind, f64, f64)> {
    let check = |s: u32, v: &Resources| {
        let total = base.plus(v);
        total
            .first_excess(capacity, FIT_TOL)
            .map(|k| (s, k, total.get(k), capacity.get(k)))
    };
    check(from, &value_at(steps, from)).or_else(|| {
        steps
            .range(from.saturating_add(1)..)
            .find_map(|(&s, v)| check(s, v))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gpus(g: f64) -> Resources {
        Resources::zero().gpus(g)
    }

    #[test]
    fn steps_add_subtract_and_check() {
        let mut s = Steps::new();
        add(&mut s, 2..5, &gpus(1.0), false);
        add(&mut s, 4..u32::MAX, &gpus(2.0), false);
        assert_eq!(value_at(&s, 1), gpus(0.0));
        assert_eq!(value_at(&s, 3), gpus(1.0));
        assert_eq!(value_at(&s, 4), gpus(3.0));
        assert_eq!(value_at(&s, 1_000_000), gpus(2.0));
        assert_eq!(value_at(&s, u32::MAX), gpus(0.0));
        let cap = gpus(2.5);
        assert_eq!(
            first_excess(&s, 0, &Resources::zero(), &cap),
            Some((4, ResourceKind::Gpu, 3.0, 2.5))
        );
        assert_eq!(first_excess(&s, 5, &Resources::zero(), &cap), None);
        assert_eq!(
            first_excess(&s, 5, &gpus(1.0), &cap),
            Some((5, ResourceKind::Gpu, 3.0, 2.5))
        );
        add(&mut s, 4..u32::MAX, &gpus(2.0), true);
        add(&mut s, 2..5, &gpus(1.0), true);
        assert!(s.is_empty(), "{s:?}");
    }
}

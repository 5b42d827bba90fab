//! Whole numbers held in `f64`, for the exact-arithmetic shortcuts.
//!
//! A double that is a whole number below 2⁵³ is that integer exactly, and
//! sums and products of such numbers are exact while every partial result
//! stays below 2⁵³. The shortcuts that rely on it (the simulator's free-room
//! totals, the placer's free-GPU index, DRF's counting fill, Tiresias's
//! exact room) test their inputs here, each against the bound its own
//! argument needs, named below. It also holds the switch, [`Shortcut`],
//! that lets the tests run a rule without its shortcut as the reference the
//! shortcut must match. This module depends on nothing else in the crate:
//! it sits below the model.

/// 2³²: the placer's free GPUs per machine (so that a sum over fewer than
/// 2²⁰ machines stays below 2⁵²).
pub(crate) const TWO_32: f64 = 4_294_967_296.0;

/// 2⁴⁰: DRF's demands and free room (so that products by GPU counts stay
/// checkable against [`TWO_52`]).
pub(crate) const TWO_40: f64 = 1_099_511_627_776.0;

/// 2⁵²: sums and products of whole numbers below it are exact in `f64`
/// (with room for one more addition of such a number).
pub(crate) const TWO_52: f64 = 4_503_599_627_370_496.0;

/// The largest double below 2⁶³: whole numbers up to it convert to `u64`
/// exactly (the simulator's free-room totals, summed in `u128`).
pub(crate) const BELOW_TWO_63: f64 = 9_223_372_036_854_774_784.0;

/// `x` as an integer, if it is a whole number in `0..=max` (`max` at most
/// [`BELOW_TWO_63`]); `None` for NaN, infinities, negatives and fractions.
#[inline]
pub(crate) fn whole_up_to(x: f64, max: f64) -> Option<u64> {
    ((0.0..=max).contains(&x) && x.fract() == 0.0).then_some(x as u64)
}

/// Whether `x ≥ 0` is a whole number, for `x` below [`TWO_52`] (the caller
/// checks that bound on its sums): then `x + 2⁵²` is exact (the doubles in
/// `[2⁵², 2⁵³)` are the whole numbers) and for any other such `x` it
/// rounds to a whole number, so taking `2⁵²` off again gives `x` back
/// exactly when `x` is whole. NaN fails; infinity passes here and must fail
/// the caller's bound. Branch-free, for long loops.
#[inline]
pub(crate) fn is_whole_below_two_52(x: f64) -> bool {
    (x >= 0.0) & ((x + TWO_52) - TWO_52 == x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers_within_their_bound() {
        assert_eq!(whole_up_to(0.0, TWO_32), Some(0));
        assert_eq!(whole_up_to(TWO_32, TWO_32), Some(1 << 32));
        assert_eq!(
            whole_up_to(BELOW_TWO_63, BELOW_TWO_63),
            Some(BELOW_TWO_63 as u64)
        );
        for bad in [0.5, -1.0, TWO_32 + 1.0, f64::INFINITY, f64::NAN] {
            assert_eq!(whole_up_to(bad, TWO_32), None, "{bad}");
        }
        assert_eq!(BELOW_TWO_63.next_up(), 9_223_372_036_854_775_808.0);
        for x in [0.0, 1.0, 7.0, 1e15, TWO_52 - 1.0] {
            assert!(is_whole_below_two_52(x), "{x}");
        }
        for x in [0.5, -1.0, 1e15 + 0.5, f64::NAN, 1e-300] {
            assert!(!is_whole_below_two_52(x), "{x}");
        }
    }
}

/// Whether a decision with a shortcut beside its rule (an exact-arithmetic
/// path of a baseline, the locality scheduler's deadline enumeration and PS
/// choice) may take it. Library code always allows it; the tests run the
/// rule alone ([`Shortcut::Off`]) as the reference the shortcut must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Shortcut {
    /// Take the shortcut where it provably decides as the rule.
    #[default]
    Allowed,
    /// Run the rule alone.
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the tests' reference runs construct it")
    )]
    Off,
    /// Take the shortcut, and where a shortcut answers one question at a
    /// time (the locality scheduler's PS choice) also compare each answer
    /// with the rule's, panicking on a difference (the tests' strictest
    /// check). Elsewhere it is [`Shortcut::Allowed`].
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "the tests' checking runs construct it")
    )]
    Checked,
}

impl Shortcut {
    /// Whether the shortcut may be taken ([`Shortcut::Allowed`] or
    /// [`Shortcut::Checked`]).
    pub(crate) fn taken(self) -> bool {
        self != Shortcut::Off
    }
}

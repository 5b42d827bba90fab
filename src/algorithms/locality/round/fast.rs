//! A fast path of the rounding's grow moves ([`LocRounding::grows`]): the
//! PS machine of every "one more DISTRIBUTED worker on `h`" move of a slot
//! from one scan of the slot's machines instead of one scan per `h`.
//!
//! [`LocRounding::ps_slot`]`(s, x, Some(h))` scans every machine `c` with a
//! PS column and keeps the first one (in machine order) of least `σ^D_c`
//! among those that *fit*: `z_c < Z̄^D_c` and room for one PS beside one
//! more worker when `c = h`, beside nothing otherwise. Asked for each of
//! the slot's `H` machines, that is `H` scans of `H` machines. Here one scan
//! gives `F₀`, the machines that fit beside nothing, its first least-price
//! member `B₁` and the first least-price member `B₂` of `F₀ \ {B₁}`. Then
//! for a worker on `h`:
//!
//! * the set that fits is `F_h = (F₀ \ {h}) ∪ ({h}` if `h` fits beside the
//!   worker`)`, and `F_h ⊆ F₀`: the worker's demand is non-negative and
//!   `room` subtracts it from the residual, which can only lower the room
//!   (floating-point subtraction and division are monotone);
//! * if `h ≠ B₁`, then `B₁ ∈ F_h ⊆ F₀`, so the first least-price member of
//!   `F_h` is `B₁`;
//! * if `h = B₁`, it is `B₁` when `B₁` fits beside the worker (`F_h = F₀`),
//!   else `B₂` (`F_h = F₀ \ {B₁}`).
//!
//! Prices of machines with a PS column are finite (a non-finite `σ^D`
//! gives `Z̄^D = 0`, hence no column), so "least" is a total order and the
//! answer is the same machine, hence the same move list, float for float.
//! The `max_ps` check is the same. `tests::ps_choice_is_ps_slot` compares
//! both on every slot, machine and point of busy runs, and the locality
//! tests run whole schedules with the fast path forced off and on.

use super::{LocRounding, RESOURCES, Slot, at};

/// `(σ^D, machine, PS column)` of a machine that fits a PS.
type Pick = (f64, usize, usize);

/// The first two least-`σ^D` machines of a slot that fit one more PS at a
/// point (see the [module docs](self)).
pub(super) struct PsChoice {
    /// `B₁`.
    first: Option<Pick>,
    /// `B₂`.
    second: Option<Pick>,
}

impl PsChoice {
    /// The choice of slot `s` at `x`; `None` when the slot has its
    /// `max_ps` PSs already (no PS move at all).
    pub(super) fn new(m: &LocRounding<'_>, s: &Slot, x: &[f64]) -> Option<Self> {
        let zsum: u32 = s.dist.iter().filter_map(|d| d.2).map(|j| at(x, j)).sum();
        if zsum >= m.job.max_ps {
            return None;
        }
        let none = [0.0; RESOURCES];
        let (mut first, mut second): (Option<Pick>, Option<Pick>) = (None, None);
        for &(h, _, z) in &s.dist {
            let Some(z) = z else { continue };
            let fits = at(x, z) < m.cell(s, h).zbar_dist && m.room(s, x, h, &none, &m.job.ps) >= 1;
            if !fits {
                continue;
            }
            let price = m.cell(s, h).sigma_dist;
            if first.is_none_or(|(p, _, _)| price < p) {
                second = first;
                first = Some((price, h, z));
            } else if second.is_none_or(|(p, _, _)| price < p) {
                second = Some((price, h, z));
            }
        }
        Some(PsChoice { first, second })
    }

    /// [`LocRounding::ps_slot`]`(s, x, Some(h))`.
    pub(super) fn with_worker_on(
        &self,
        m: &LocRounding<'_>,
        s: &Slot,
        x: &[f64],
        h: usize,
    ) -> Option<usize> {
        let out = self.first.and_then(|(_, b1, z1)| {
            if b1 != h || m.room(s, x, h, &m.job.worker, &m.job.ps) >= 1 {
                Some(z1)
            } else {
                self.second.map(|b| b.2)
            }
        });
        #[cfg(test)]
        if tests::CHECKING.with(std::cell::Cell::get) {
            assert_eq!(out, m.ps_slot(s, x, Some(h)), "slot {}, machine {h}", s.pos);
            tests::CHECKED.with(|c| c.set(c.get() + 1));
        }
        out
    }
}

/// Whether the fast path is on (tests force it off).
pub(super) fn enabled() -> bool {
    #[cfg(test)]
    return !tests::FORCED_OFF.with(std::cell::Cell::get);
    #[cfg(not(test))]
    true
}

#[cfg(test)]
pub(crate) mod tests {
    use std::cell::Cell;

    thread_local! {
        /// Forces [`super::enabled`] off on this thread.
        pub(crate) static FORCED_OFF: Cell<bool> = const { Cell::new(false) };
        /// Makes every fast answer compare itself with `ps_slot`.
        pub(super) static CHECKING: Cell<bool> = const { Cell::new(false) };
        /// Answers compared.
        pub(super) static CHECKED: Cell<u64> = const { Cell::new(0) };
    }

    /// Runs `f` with the fast path forced off (`true`) or on (used by the
    /// equality test, which needs the solver).
    #[cfg_attr(not(feature = "highs"), allow(dead_code))]
    pub(crate) fn with_fast_path<T>(on: bool, f: impl FnOnce() -> T) -> T {
        FORCED_OFF.with(|c| c.set(!on));
        let out = f();
        FORCED_OFF.with(|c| c.set(false));
        out
    }
}

#[cfg(all(test, feature = "highs"))]
mod equality {
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use super::tests::{CHECKED, CHECKING, with_fast_path};
    use crate::algorithms::Algorithm;
    use crate::algorithms::locality::{Locality, LocalityParams};
    use crate::experiments::locality::{LocalityWorkload, generate};

    /// Busy runs (more jobs than the machines hold, PS-heavy DISTRIBUTED
    /// slots) give the same schedules and certificates with the fast path
    /// forced off and on, and every fast answer equals `ps_slot`'s.
    #[test]
    fn locality_ps_choice_forced_off_and_on_agree() {
        let w = LocalityWorkload {
            jobs: 14,
            machines: 6,
            horizon_slots: 40,
            window_slots: 12,
            arrival_tail_slots: 8,
            ..LocalityWorkload::default()
        };
        for seed in [3, 11] {
            let instance = generate(&mut ChaCha8Rng::seed_from_u64(seed), &w).expect("workload");
            let params = LocalityParams {
                seed: Some(seed),
                ..w.params()
            };
            let run = |on: bool| {
                with_fast_path(on, || {
                    Locality::new(params.clone())
                        .and_then(|a| a.solve(&instance, &mut ChaCha8Rng::seed_from_u64(seed)))
                        .expect("locality run")
                })
            };
            let off = run(false);
            CHECKING.with(|c| c.set(true));
            let on = run(true);
            CHECKING.with(|c| c.set(false));
            assert_eq!(off.schedule, on.schedule, "seed {seed}");
            assert_eq!(off.certificate, on.certificate, "seed {seed}");
        }
        assert!(
            CHECKED.with(std::cell::Cell::get) > 0,
            "no PS choice was made"
        );
    }
}

//! The free room's exact totals, kept as the engine changes machines' free
//! room, for policies whose shortcuts need exact arithmetic.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::model::Resources;

/// Every engine takes a stamp from here: no two runs of a process share
/// one, so a policy may keep what it learnt about a run's jobs under its
/// stamp (a new run has a new stamp, never an old one).
static RUN_STAMPS: AtomicU64 = AtomicU64::new(1);

/// A stamp no other run of the process has (never 0).
pub(crate) fn new_run_stamp() -> u64 {
    RUN_STAMPS.fetch_add(1, Ordering::Relaxed)
}

/// The components of `r` as whole numbers, if each is a whole number in
/// `[0, 2⁶³)` (exactly representable as `u64`).
fn whole_parts(r: &Resources) -> Option<[u64; 5]> {
    let parts = [
        r.gpus,
        r.cpu_cores,
        r.memory_bytes,
        r.storage_bytes,
        r.nic_bps,
    ];
    let mut whole = [0; 5];
    for (w, &x) in whole.iter_mut().zip(&parts) {
        *w = crate::exact::whole_up_to(x, crate::exact::BELOW_TWO_63)?;
    }
    Some(whole)
}

/// Per resource, the exact total over machines of the free room, and how
/// many machines have a component that is not a whole number in
/// `[0, 2⁶³)` ("odd" machines, left out of the totals).
///
/// Invariant: `totals` and `odd` are what [`FreeTotals::new`] computes on
/// the current free room. The engine keeps it by calling
/// [`FreeTotals::replace`] with a machine's old and new free room at every
/// change of one (both are classified by the same pure rule, so what
/// `replace` takes out is what was put in).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct FreeTotals {
    totals: [u128; 5],
    odd: usize,
}

impl FreeTotals {
    /// The totals of a free room.
    pub(crate) fn new(free: &[Resources]) -> Self {
        let mut t = FreeTotals::default();
        for r in free {
            t.add(r, true);
        }
        t
    }

    fn add(&mut self, r: &Resources, add: bool) {
        match whole_parts(r) {
            Some(parts) => {
                for (t, x) in self.totals.iter_mut().zip(parts) {
                    if add {
                        *t += u128::from(x);
                    } else {
                        *t -= u128::from(x);
                    }
                }
            }
            None if add => self.odd += 1,
            None => self.odd -= 1,
        }
    }

    /// A machine's free room changes from `old` to `new`.
    pub(crate) fn replace(&mut self, old: &Resources, new: &Resources) {
        self.add(old, false);
        self.add(new, true);
    }

    /// Per resource (gpus, cpu cores, memory, storage, nic), the exact
    /// total of the free room of all machines, when every component of
    /// every machine is a whole number in `[0, 2⁶³)`; else `None`.
    pub(crate) fn whole(&self) -> Option<[u128; 5]> {
        (self.odd == 0).then_some(self.totals)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};

    fn random_room(rng: &mut ChaCha8Rng) -> Resources {
        let mut x = || match rng.random_range(0..10u32) {
            0 => 0.5,
            1 => -1.0,
            2 => 1e19,
            3 => f64::NAN,
            _ => f64::from(rng.random_range(0..1_000_000u32)) * 1e6,
        };
        Resources::zero()
            .gpus(x())
            .cpu_cores(x())
            .memory(x())
            .storage(x())
            .nic(x())
    }

    /// Kept by `replace`, the totals are always those of a fresh scan.
    #[test]
    fn replace_agrees_with_a_scan() {
        for seed in 0..8 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let whole = |r: &mut ChaCha8Rng| {
                Resources::zero()
                    .gpus(f64::from(r.random_range(0..9u32)))
                    .memory(f64::from(r.random_range(0..64u32)) * 1e9)
            };
            let mut free: Vec<Resources> = (0..16).map(|_| whole(&mut rng)).collect();
            let mut t = FreeTotals::new(&free);
            for _ in 0..500 {
                let m = rng.random_range(0..free.len());
                let new = if rng.random_bool(0.2) {
                    random_room(&mut rng)
                } else {
                    whole(&mut rng)
                };
                t.replace(&free[m], &new);
                free[m] = new;
                assert_eq!(t, FreeTotals::new(&free), "seed {seed}");
                let scan = free
                    .iter()
                    .map(whole_parts)
                    .collect::<Option<Vec<_>>>()
                    .map(|all| {
                        let mut sums = [0u128; 5];
                        for parts in all {
                            for (s, x) in sums.iter_mut().zip(parts) {
                                *s += u128::from(x);
                            }
                        }
                        sums
                    });
                assert_eq!(t.whole(), scan, "seed {seed}");
            }
        }
    }

    #[test]
    fn whole_parts_takes_only_whole_numbers_in_range() {
        let ok = Resources::zero().gpus(8.0).memory(64e9).nic(1.25e9);
        assert_eq!(
            whole_parts(&ok),
            Some([8, 0, 64_000_000_000, 0, 1_250_000_000])
        );
        for bad in [
            0.5,
            -1.0,
            crate::exact::BELOW_TWO_63.next_up(),
            f64::INFINITY,
            f64::NAN,
        ] {
            assert_eq!(whole_parts(&ok.cpu_cores(bad)), None, "{bad}");
        }
        assert!(new_run_stamp() != new_run_stamp());
    }
}

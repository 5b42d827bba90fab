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
        self.first.and_then(|(_, b1, z1)| {
            if b1 != h || m.room(s, x, h, &m.job.worker, &m.job.ps) >= 1 {
                Some(z1)
            } else {
                self.second.map(|b| b.2)
            }
        })
    }
}

#[cfg(all(test, feature = "highs", feature = "serde"))]
mod equality {
    use rand::SeedableRng;
    use rand::rngs::ChaCha8Rng;

    use crate::algorithms::Algorithm;
    use crate::algorithms::locality::Locality;
    use crate::algorithms::locality::tests_support::fixture;
    use crate::exact::Shortcut;
    use crate::schedule::Schedule;

    /// Busy runs (more jobs than the machines hold, PS-heavy DISTRIBUTED
    /// slots) give the same schedules and certificates with the shortcuts
    /// off and on, and every fast answer equals `ps_slot`'s (the checking
    /// run panics otherwise).
    #[test]
    fn locality_ps_choice_forced_off_and_on_agree() {
        let mut distributed_with_ps = 0;
        for (name, seed) in [("busy-seed3", 3), ("busy-seed11", 11)] {
            let (instance, params) = fixture(name, seed);
            let run = |shortcut: Shortcut| {
                Locality::new(params.clone())
                    .map(|a| a.with_shortcut(shortcut))
                    .and_then(|a| a.solve(&instance, &mut ChaCha8Rng::seed_from_u64(seed)))
                    .expect("locality run")
            };
            let off = run(Shortcut::Off);
            let on = run(Shortcut::Checked);
            assert_eq!(off.schedule, on.schedule, "seed {seed}");
            // The deadline enumeration's shortcut, off too, saves LP solves.
            let mut certificate = on.certificate.clone();
            certificate.run.lp_solves = off.certificate.run.lp_solves;
            assert_eq!(off.certificate, certificate, "seed {seed}");
            distributed_with_ps += usize::from(has_distributed_ps(&on.schedule));
        }
        assert!(
            distributed_with_ps > 0,
            "no run placed a PS apart from its workers"
        );
    }

    /// The simulator policy ([`OnlineAlgorithm::policy`], the session
    /// path) takes the scheduler's switch too: the same runs, decision for
    /// decision, with the shortcuts off and checked.
    #[test]
    fn locality_policy_forced_off_and_on_agree() {
        use crate::algorithms::OnlineAlgorithm;
        use crate::sim::{SimOptions, simulate};
        let seed = 3;
        let (instance, params) = fixture("busy-seed3", seed);
        let run = |shortcut: Shortcut| {
            let algorithm = Locality::new(params.clone())
                .expect("params")
                .with_shortcut(shortcut);
            let mut policy = algorithm
                .policy(&instance, &mut ChaCha8Rng::seed_from_u64(seed))
                .expect("policy");
            let mut result =
                simulate(&instance, &mut policy, &SimOptions::default()).expect("simulation");
            result.decision_time_s = 0.0;
            result
        };
        let off = run(Shortcut::Off);
        let on = run(Shortcut::Checked);
        assert_eq!(off, on);
        assert!(
            has_distributed_ps(&on.to_schedule(&instance)),
            "no decision placed a PS apart from its workers"
        );
    }

    /// Whether some job ran on several machines with a PS: the DISTRIBUTED
    /// slots whose PS machine the choice decides.
    fn has_distributed_ps(schedule: &Schedule) -> bool {
        schedule
            .jobs
            .iter()
            .flat_map(|j| &j.segments)
            .any(|seg| seg.placement.len() > 1 && seg.placement.iter().any(|(_, t)| t.ps > 0))
    }
}

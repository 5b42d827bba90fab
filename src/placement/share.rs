//! Shares and fits of resource demands on a machine or a cluster: the
//! dominant share (DRF) and how many workers fit in free capacity, with the
//! model's fit tolerance.

use crate::model::{FIT_TOL, ResourceKind, Resources};

/// `demand / total` per resource kind, over the kinds with positive total
/// capacity (0 for the others), in [`ResourceKind::ALL`] order.
pub(crate) fn normalised(demand: &Resources, total: &Resources) -> [f64; 5] {
    let mut out = [0.0; 5];
    for (slot, kind) in out.iter_mut().zip(ResourceKind::ALL) {
        let c = total.get(kind);
        if c > 0.0 {
            *slot = demand.get(kind) / c;
        }
    }
    out
}

/// The dominant share of `demand` against `total`: `max_r demand_r /
/// total_r` over the resource kinds with positive total capacity (DRF,
/// Ghodsi et al., NSDI 2011). 0 for a zero demand.
///
/// ```
/// use dmlsched::placement::dominant_share;
/// use dmlsched::model::Resources;
/// let total = Resources::zero().gpus(4.0).cpu_cores(16.0).memory(64e9).nic(1e10);
/// let two_workers = Resources::zero().gpus(2.0).cpu_cores(2.0).memory(8e9);
/// assert_eq!(dominant_share(&two_workers, &total), 0.5);
/// ```
pub fn dominant_share(demand: &Resources, total: &Resources) -> f64 {
    normalised(demand, total).into_iter().fold(0.0, f64::max)
}

/// The largest number of `job`'s workers that fit in `free` on a machine
/// (GPU and every other resource), at most `cap` (which bounds a worker
/// that needs nothing).
pub(crate) fn workers_fitting(worker: &Resources, free: &Resources, cap: u32) -> u32 {
    let mut n = f64::from(cap);
    for kind in ResourceKind::ALL {
        let d = worker.get(kind);
        if d > 0.0 {
            let f = free.get(kind);
            // As `Resources::fits_in`: `k·d ≤ f + tol·max(|f|, 1)`. The
            // count starts at most `cap`, so it stays an exact integer
            // (a tiny demand makes `f / d` huge or infinite) and each step
            // down changes it: the loop ends, after a step or two.
            let ok = |k: f64| k * d <= f + FIT_TOL * f.abs().max(1.0);
            let mut k = (f.max(0.0) / d).floor().min(n);
            if k < n && ok(k + 1.0) {
                k += 1.0;
            }
            while k > 0.0 && !ok(k) {
                k -= 1.0;
            }
            n = n.min(k);
        }
    }
    if n <= 0.0 { 0 } else { n as u32 }
}

/// Whether one worker fits: `workers_fitting(worker, free, cap) ≥ 1` for
/// every `cap ≥ 1` (the same test, `d ≤ f + tol·max(|f|, 1)` on each
/// resource the worker needs, without the divisions).
pub(crate) fn one_worker_fits(worker: &Resources, free: &Resources) -> bool {
    ResourceKind::ALL.into_iter().all(|kind| {
        let d = worker.get(kind);
        let f = free.get(kind);
        // As `workers_fitting`, a resource it does not need (`d > 0`
        // false) does not count.
        if d > 0.0 {
            d <= f + FIT_TOL * f.abs().max(1.0)
        } else {
            true
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_fitting_counts_every_resource() {
        let w = Resources::zero().gpus(1.0).cpu_cores(2.0);
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(4.0).cpu_cores(5.0), 10),
            2
        );
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(4.0).cpu_cores(8.0), 3),
            3
        );
        assert_eq!(
            workers_fitting(&w, &Resources::zero().gpus(0.5).cpu_cores(8.0), 3),
            0
        );
        // A denormal demand: as many as the cap allows.
        let tiny = Resources::zero().gpus(5e-324);
        assert_eq!(
            workers_fitting(&tiny, &Resources::zero().gpus(4.0), u32::MAX),
            u32::MAX
        );
        assert!(workers_fitting(&tiny, &Resources::zero(), 7) <= 7);
        // 3 × 0.1 GPUs in 0.3 GPUs despite rounding.
        let tenth = Resources::zero().gpus(0.1);
        assert_eq!(workers_fitting(&tenth, &Resources::zero().gpus(0.3), 10), 3);
    }

    /// `one_worker_fits` answers as `workers_fitting(…) ≥ 1` for any cap,
    /// on demands and free room at and around the tolerance, negative,
    /// zero, tiny and huge.
    #[test]
    fn one_worker_fits_as_workers_fitting() {
        use rand::rngs::ChaCha8Rng;
        use rand::{RngExt, SeedableRng};
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let values = [
            0.0,
            -1e-12,
            -1.0,
            1e-300,
            5e-324,
            0.1,
            0.3,
            1.0,
            1.0 + 1e-10,
            1.0 - 1e-10,
            2.0,
            7.0,
            1e300,
        ];
        let pick = |rng: &mut ChaCha8Rng| {
            let mut r = Resources::zero();
            for kind in ResourceKind::ALL {
                *r.get_mut(kind) = values[rng.random_range(0..values.len())];
            }
            r
        };
        for _ in 0..20_000 {
            let (worker, free) = (pick(&mut rng), pick(&mut rng));
            let fits = one_worker_fits(&worker, &free);
            for cap in [1, 2, 5, u32::MAX] {
                assert_eq!(
                    fits,
                    workers_fitting(&worker, &free, cap) >= 1,
                    "{worker:?} in {free:?}, cap {cap}"
                );
            }
        }
    }
}

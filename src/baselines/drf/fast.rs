//! The counting shortcut of [`Drf`]'s progressive filling: when every job
//! is a one-step ring of one-GPU workers with whole-number demands on
//! machines with room in proportion to their free GPUs, the filling's
//! counts come from counting free GPUs ([`Drf::fill_counts`]), and the
//! filling's placements are built only if the final placement fails.

use crate::model::{Architecture, Instance, ResourceKind, Resources, TaskKind};
use crate::placement::Placer;
use crate::schedule::Placement;
use crate::sim::JobView;

use super::Drf;
use super::rule::sticky;

impl Drf {
    /// The placements of [`Drf::rule`] given the counts its filling gives
    /// (found by [`Drf::fill_counts`]): the final placement on `scratch`,
    /// or, if that fails, the filling's own placements.
    pub(super) fn place_counted<'v>(
        &self,
        jobs: &[JobView<'v>],
        scratch: Placer<'v>,
        counts: &[(u32, u32)],
        total: &Resources,
    ) -> Vec<Placement> {
        // A few increments at most: no index to build.
        if let Some(placements) = sticky(jobs, counts, scratch.clone()) {
            return placements;
        }
        let fill = self.fill(jobs, scratch.indexed(), total);
        debug_assert!(
            fill.iter()
                .zip(counts)
                .all(|(f, &c)| (f.workers, f.ps) == c)
        );
        fill.into_iter().map(|f| f.placement).collect()
    }

    /// The counts [`Drf::fill`] gives every job, found by counting free
    /// GPUs instead of placing, when that provably gives the same counts;
    /// otherwise `None`.
    ///
    /// **When.** Every job is a ring-all-reduce job that reserves no
    /// bandwidth, may use every machine, takes exactly one step (to `w_j`
    /// workers, no PS: a fixed count or a rigid gang) and whose worker
    /// demand `u_j` has exactly 1 GPU and whole-number other components;
    /// `U` is their componentwise maximum. Every machine `p` of `free` has
    /// a whole number `g_p ∈ [0, 1024]` of free GPUs and, for every other
    /// resource `r`, `free_r ≥ g_p·U_r`; a machine with `g_p ≥ 1` hosts
    /// workers and can host `U`; and `G·U_r < 2⁵²` for `G = Σ_p g_p`. So
    /// every `g·U_r` below is a whole number under 2⁵², exact in floating
    /// point.
    ///
    /// **Claim.** Then [`Drf::fill`] grows the jobs in order (every job is
    /// taken at share 0 first, in index order, and a job taken again has
    /// no step left), and job `j`'s grow succeeds iff `w_j ≤ G_j`, the
    /// free GPUs left by the jobs before it; `G_j` drops by `w_j` when it
    /// does. By induction over the grows, the invariant above holds on the
    /// placer (with `G_j`): a grow that places `n ≤ g_p` workers on `p`
    /// leaves `g_p − n` (exact) and subtracts `n·u_r` (at once, as a
    /// product, or worker by worker) from `free_r`; the exact result is
    /// `≥ g_p·U_r − n·U_r = (g_p − n)·U_r`, a float, so the rounded result
    /// is too. And the grow decides as claimed: with whole free GPUs below
    /// 10⁹ every GPU test `d ≤ g + tol·max(g, 1)` is `d ≤ g` exactly. If
    /// `w_j > G_j`: no machine takes `w_j` GPUs, the total-room test fails
    /// or the worker-by-worker pass runs out of GPUs (a worker takes a
    /// GPU), so the grow fails and changes nothing. If `w_j ≤ G_j`: the
    /// single-machine search may succeed; otherwise the total-room test
    /// passes (the float sums of `free_r ≥ g_p·U_r` are at least the exact
    /// sum `G_j·U_r ≥ w_j·u_r`: rounding is monotone, each exact partial
    /// sum is a float) and the worker-by-worker pass puts a worker on any
    /// machine with a free GPU (`free_r ≥ g_p·U_r ≥ u_r`), so it places all
    /// `w_j`. The placements themselves do not matter for the counts.
    pub(super) fn fill_counts(
        &self,
        instance: &Instance,
        jobs: &[JobView<'_>],
        free: &[Resources],
    ) -> Option<Vec<(u32, u32)>> {
        use crate::exact::{TWO_40, TWO_52};
        let mut most = Resources::zero();
        let mut steps = Vec::with_capacity(jobs.len());
        for j in jobs {
            let job = j.job();
            let unit = match &job.architecture {
                Architecture::RingAllReduce(r) => r.worker,
                Architecture::ParameterServer(_) => return None,
            };
            let whole = |x: f64| crate::exact::whole_up_to(x, TWO_40).is_some();
            if job.allowed_machines.is_some()
                || job.reserved_nic_bps(2) != 0.0
                || unit.gpus != 1.0
                || !ResourceKind::ALL.into_iter().all(|k| whole(unit.get(k)))
            {
                return None;
            }
            let first = self.next_step(job, 0, 0);
            if let Some((w, p)) = first
                && (p != 0 || self.next_step(job, w, p).is_some())
            {
                return None;
            }
            most = most.max(&unit);
            steps.push(first.map_or(0, |(w, _)| w));
        }
        let machines = &instance.cluster().machines;
        let mut gpus = 0.0;
        for (m, r) in machines.iter().zip(free) {
            let g = r.gpus;
            crate::exact::whole_up_to(g, 1024.0)?;
            let room = ResourceKind::ALL
                .into_iter()
                .filter(|&k| k != ResourceKind::Gpu)
                .all(|k| r.get(k) >= g * most.get(k));
            let hosts = g < 1.0
                || (m.hosts.allows(TaskKind::Worker) && m.can_host(TaskKind::Worker, &most));
            if !(room && hosts) {
                return None;
            }
            gpus += g;
        }
        if !ResourceKind::ALL
            .into_iter()
            .all(|k| gpus * most.get(k) < TWO_52)
        {
            return None;
        }
        Some(
            steps
                .into_iter()
                .map(|w| {
                    let fits = w > 0 && f64::from(w) <= gpus;
                    if fits {
                        gpus -= f64::from(w);
                    }
                    if fits { (w, 0) } else { (0, 0) }
                })
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baselines::drf::tests::workload;
    use crate::baselines::fixtures::assert_same_runs;
    use crate::placement::PlacementRule;

    /// Counting free GPUs decides as placing every step, for every rule,
    /// step and workload, and the counting case is exercised.
    #[test]
    fn counting_fill_decides_as_the_placing_fill() {
        let mut counted = 0;
        for seed in 0..4 {
            for kind in 0..7 {
                let instance = workload(seed, kind);
                for (placement, _) in PlacementRule::ALL {
                    let used = assert_same_runs(
                        &instance,
                        || Drf {
                            step: 1 + (seed % 2) as u32,
                            placement,
                            ..Drf::default()
                        },
                        &format!("seed {seed}, kind {kind}, {placement}"),
                    );
                    counted += used.taken;
                }
            }
        }
        assert!(counted > 100, "counting hardly exercised");
    }
}

//! The plan of a job whose window a session widened
//! ([`LocalityJob::with_window_widened`]): its run on the idle cluster
//! needs more than half the plan window, and deadline enumeration over the
//! widened window solves programs over hundreds of slots at each of many
//! deadlines (minutes a job). Such a job is planned instead by a greedy
//! walk over the residual capacities of the view: from its first slot on,
//! each slot runs the configuration that does the most work there — LOCAL
//! on the first machine that holds its PS and at least one worker, or
//! DISTRIBUTED spread over the machines with the most room (the greedy
//! baselines' slots) — until the work is done. The plan is priced at the
//! view's prices like any other; it is kept when its payoff is positive.
//! The walk maximises nothing, so the response is
//! [`OracleQuality::Heuristic`](crate::online::OracleQuality::Heuristic)
//! and the run's guarantee is marked not valid.

use crate::model::MachineId;
use crate::online::{PriceView, Reservation, ResourceId};

use super::super::baselines::{local_slot, spread_slot, walk_slots};
use super::super::model::{LocalityCluster, LocalityJob, Vector};
use super::super::plan::{LocalityPlan, SlotConfig};

/// The walk's plan of `job` at `view`, `(plan, utility, cost)`, when the
/// work is done within the window (and the view's horizon) while the
/// utility is positive, and its payoff is positive. (Walks capped at
/// fewer workers, `1, 2, 4, …`, the best payoff kept, changed no decision
/// on a real-trace replay and were left out.)
pub(super) fn walk_plan(
    cluster: &LocalityCluster,
    job: &LocalityJob,
    view: &PriceView<'_>,
) -> Option<(LocalityPlan, f64, f64)> {
    let last = job.end.min(view.horizon().checked_sub(1)?);
    let machines = cluster.machines().min(view.machines());
    let residual_at = |t: u32, res: &mut Vec<Vector>| {
        res.clear();
        res.extend((0..machines).map(|h| -> Vector {
            std::array::from_fn(|r| {
                view.residual(MachineId(h as u32), ResourceId(r as u8), t)
                    .max(0.0)
            })
        }));
    };
    let plan = walk_slots(job, last, true, residual_at, |res, remaining| {
        most_work(
            local_slot(job, cluster, res, remaining),
            spread_slot(job, cluster, res, remaining),
        )
    })?;
    let utility = job.utility_at(plan.completion_slot());
    let cost = view.cost_of(plan.consumption());
    (utility - cost > 0.0).then_some((plan, utility, cost))
}

/// Mini-batches the walk does in one slot of the empty `cluster` (0 when
/// neither configuration fits): the pace of its plan on an idle cluster, at
/// most [`LocalityJob::pace_upper_bound`].
pub(crate) fn idle_walk_pace(cluster: &LocalityCluster, job: &LocalityJob) -> f64 {
    let full: Vec<Vector> = cluster.capacity.clone();
    most_work(
        local_slot(job, cluster, &full, job.minibatches),
        spread_slot(job, cluster, &full, job.minibatches),
    )
    .map_or(0.0, |(config, rate)| rate * f64::from(config.workers()))
}

/// Of two slot configurations with their rates per worker, the one with
/// more work in the slot (the first on a tie).
fn most_work(
    a: Option<(SlotConfig, f64)>,
    b: Option<(SlotConfig, f64)>,
) -> Option<(SlotConfig, f64)> {
    let work = |c: &(SlotConfig, f64)| c.1 * f64::from(c.0.workers());
    match (a, b) {
        (Some(a), Some(b)) => Some(if work(&b) > work(&a) { b } else { a }),
        (a, b) => a.or(b),
    }
}

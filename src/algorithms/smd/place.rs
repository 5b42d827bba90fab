//! Per-machine placement of an epoch's plan.

use crate::model::{Instance, Job, ResourceKind, Resources};
use crate::placement::{PlacementRule, Placer};
use crate::schedule::Placement;

use super::EpochJob;
use super::problem::EpochProblem;
use super::solve::Plan;

/// The placement of a plan: per group its final choice and placement, and
/// the groups whose planned option could not be placed.
pub(crate) struct Placed {
    pub(crate) plan: Plan,
    pub(crate) placements: Vec<Placement>,
    pub(crate) downgraded: Vec<usize>,
}

/// Places `plan` on the machines' `free` capacities (the managed jobs'
/// allocations already given back):
///
/// 1. a job whose configuration does not change keeps its placement;
/// 2. the others, by decreasing GPU then CPU demand (then input order),
///    get their workers and then their PSs by first fit over the machines
///    in index order;
/// 3. a job that does not fit tries its other options by increasing cost,
///    and waits if none fits.
pub(crate) fn place(
    instance: &Instance,
    free: &[Resources],
    p: &EpochProblem,
    jobs: &[(&Job, &EpochJob)],
    plan: &Plan,
) -> Placed {
    let mut placer = Placer::new(instance, free, PlacementRule::FirstFit);
    let n = plan.len();
    let mut out = Placed {
        plan: vec![None; n],
        placements: vec![Placement::new(); n],
        downgraded: Vec::new(),
    };
    let config = |i: usize, k: usize| p.groups()[i].options[k].config;
    let mut rest = Vec::new();
    for (i, c) in plan.iter().enumerate() {
        let Some(k) = *c else { continue };
        let (job, e) = jobs[i];
        if e.current() == Some(config(i, k)) && placer.take(job, &e.placement) {
            out.plan[i] = Some(k);
            out.placements[i] = e.placement.clone();
        } else {
            rest.push(i);
        }
    }
    let demand = |i: usize| {
        let (w, ps) = plan[i].map_or((0, 0), |k| config(i, k));
        jobs[i].0.demand_for(w, ps)
    };
    rest.sort_by(|&a, &b| {
        let (x, y) = (demand(a), demand(b));
        y.get(ResourceKind::Gpu)
            .total_cmp(&x.get(ResourceKind::Gpu))
            .then(
                y.get(ResourceKind::Cpu)
                    .total_cmp(&x.get(ResourceKind::Cpu)),
            )
            .then(a.cmp(&b))
    });
    for i in rest {
        let job = jobs[i].0;
        let Some(k) = plan[i] else { continue };
        let (w, ps) = config(i, k);
        if let Some(pl) = placer.place(job, w, ps) {
            out.plan[i] = Some(k);
            out.placements[i] = pl;
            continue;
        }
        out.downgraded.push(i);
        let g = &p.groups()[i];
        let mut others: Vec<usize> = (0..g.options.len()).filter(|&o| o != k).collect();
        others.sort_by(|&a, &b| {
            g.options[a]
                .cost
                .total_cmp(&g.options[b].cost)
                .then(a.cmp(&b))
        });
        for o in others {
            let (w, ps) = config(i, o);
            if let Some(pl) = placer.place(job, w, ps) {
                out.plan[i] = Some(o);
                out.placements[i] = pl;
                break;
            }
        }
    }
    out
}

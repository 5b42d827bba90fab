//! FIFO with first-fit ring embedding and reserved ring bandwidth.

use std::collections::BTreeSet;

use crate::model::{Architecture, FIT_TOL, GpuId, Job, RarJob, Resources, TaskKind};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, Event, JobView, Policy, SimView};

use super::requested_tasks;
use crate::placement::workers_fitting;
use crate::placement::{PlacementRule, Placer};

/// FIFO-FF: FIFO with first-fit ring placement, the crate's baseline for
/// online ring embedding (after GADGET, Yu, Tian, Ji, Wu, Rajan, Liu, IEEE INFOCOM 2022, whose
/// scheduler reserves each job's ring bandwidth), for ring-all-reduce jobs
/// with reserved ring bandwidth.
///
/// # Rule
///
/// Jobs waiting for a start are considered in arrival order (ties by job
/// id), each at its [`requested_tasks`] size `w` (the largest
/// allowed worker count). A ring-all-reduce job starts if a **first-fit
/// embedding** exists:
///
/// 1. the lowest-index server that can take all `w` workers; otherwise
/// 2. walk the servers in index order, taking as many of the job's workers
///    as each can hold (all its free GPUs, as far as the workers' other
///    demands allow), considering only servers whose NIC has `2b` free for
///    the ring over both directions (`b` per direction), until `w` are
///    gathered (a multi-server ring).
///
/// Here `b` is the job's [`RarJob::reserved_bandwidth_bps`]
/// (0 if `None`). "Can take" counts every resource of the workers, not
/// only GPUs, and the job's `allowed_machines` and hosting roles. The
/// workers get the lowest free GPU ids of each server
/// (`SetAllocation { gpus: Some(..) }`). With strict FIFO (the default) the
/// first job that does not fit blocks the rest; with `backfill`, later jobs
/// may start. Non-preemptive: a started job runs to completion.
///
/// **Reserved bandwidth.** The reservation is the simulator's, not the
/// policy's: a multi-server ring with `b` is charged `b` of NIC per
/// direction on every server it uses (`2b` of the server's
/// both-directions pool, the pool being `2 × nic_bps` since
/// [`Resources::nic_bps`] is per direction) on top of its workers' own
/// demands, until it completes; a single-server ring reserves nothing (see
/// [`RarJob::reserved_bandwidth_bps`]). The policy reads what is left from
/// [`SimView::free`], which is net of the running tasks and reservations,
/// and keeps no ledger of its own. A server is eligible to take `y`
/// workers of a multi-server ring when `f − y·n ≥ b`, where `f` is its
/// free `nic_bps` and `n` one worker's NIC demand — in both-directions
/// terms, `2(f − y·n) ≥ 2b`. Reservations also shrink the NIC left to
/// parameter-server tasks. A started multi-server ring runs at its
/// reserved rate, without contention.
///
/// **Parameter-server jobs** are placed at their requested size with the
/// first fit of [`PlacementRule::Consolidate`] (the lowest-index machine
/// holding the whole job, else task by task), on the NIC left after the
/// reservations, without GPU ids.
///
/// [`RarJob::reserved_bandwidth_bps`]: crate::model::RarJob::reserved_bandwidth_bps
///
/// # Parameters
///
/// * `backfill` (default `false`): let later jobs start past one that does
///   not fit.
///
/// # Complexity
///
/// `O(q·(H·G + P))` per event for `q` waiting jobs, `H` servers with `G`
/// GPUs each, and `P` one parameter-server placement.
///
/// # Example
///
/// ```
/// use dmlsched::baselines::FifoFirstFitBandwidth;
/// let strict = FifoFirstFitBandwidth::default();
/// assert!(!strict.backfill);
/// let backfill = FifoFirstFitBandwidth { backfill: true };
/// assert!(backfill.backfill);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FifoFirstFitBandwidth {
    /// Let later jobs start when one does not fit.
    pub backfill: bool,
}

/// GPU ids handed out during one decision, per machine position.
struct GpuIds {
    taken: Vec<BTreeSet<u32>>,
}

impl GpuIds {
    /// The `y` lowest GPU indices of machine `p` that nobody holds and
    /// this decision has not handed out, or `None` if there are fewer.
    /// Scans only `y` plus the ids in use, never the machine's whole GPU
    /// count (which may be huge).
    fn first_free(&self, view: &SimView<'_>, p: usize, y: u32) -> Option<Vec<u32>> {
        let m = &view.instance().cluster().machines[p];
        let n = m.capacity.gpus.max(0.0).floor();
        let n = if n >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            n as u32
        };
        let mut out = Vec::with_capacity(y.min(64) as usize);
        let mut i = 0u32;
        while (out.len() as u64) < u64::from(y) && i < n {
            let held = view
                .gpu_holder(GpuId {
                    machine: m.id,
                    index: i,
                })
                .is_some();
            if !held && !self.taken[p].contains(&i) {
                out.push(i);
            }
            i += 1;
        }
        (out.len() as u64 == u64::from(y)).then_some(out)
    }
}

/// The first-fit embedding of `w` workers of the ring `job` on the free
/// capacities `free` (net of tasks and reservations): `(server position,
/// workers)` pairs, one server when one can take all `w`, else servers in
/// index order that keep `b` of NIC per direction for the ring after their
/// workers; `None` when no embedding exists.
fn first_fit(
    view: &SimView<'_>,
    job: &Job,
    r: &RarJob,
    w: u32,
    free: &[Resources],
) -> Option<Vec<(usize, u32)>> {
    let machines = &view.instance().cluster().machines;
    // What a multi-server ring reserves on each server.
    let b = r.reserved_nic_bps(2);
    let usable = |p: usize| {
        let m = &machines[p];
        job.may_use(m.id) && m.hosts.allows(TaskKind::Worker)
    };
    if let Some(p) =
        (0..machines.len()).find(|&p| usable(p) && workers_fitting(&r.worker, &free[p], w) >= w)
    {
        return Some(vec![(p, w)]);
    }
    let mut need = w;
    let mut parts = Vec::new();
    for p in (0..machines.len()).filter(|&p| usable(p)) {
        if need == 0 {
            break;
        }
        let mut room = free[p];
        room.nic_bps -= b;
        if room.nic_bps < -FIT_TOL * free[p].nic_bps.abs().max(1.0) {
            continue;
        }
        let y = workers_fitting(&r.worker, &room, need);
        if y > 0 {
            parts.push((p, y));
            need -= y;
        }
    }
    (need == 0).then_some(parts)
}

impl Policy for FifoFirstFitBandwidth {
    fn name(&self) -> String {
        if self.backfill {
            "fifo-ff-backfill".into()
        } else {
            "fifo-ff".into()
        }
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        let instance = view.instance();
        let machines = &instance.cluster().machines;
        // Free capacity net of the running tasks and ring reservations.
        let mut free: Vec<Resources> = view.free_all().to_vec();
        let mut gpu_ids = GpuIds {
            taken: vec![BTreeSet::new(); machines.len()],
        };
        let mut actions = Vec::new();
        let mut queue: Vec<JobView<'_>> = view.active().filter(JobView::is_queued).collect();
        // `active` is in arrival order with ties by instance order; the
        // rule breaks ties by id.
        queue.sort_by(|a, b| {
            (a.job().arrival_s)
                .total_cmp(&b.job().arrival_s)
                .then(a.id().cmp(&b.id()))
        });
        for j in queue {
            let job = j.job();
            let (w, ps) = requested_tasks(job);
            let started = match &job.architecture {
                Architecture::ParameterServer(_) => {
                    let mut placer = Placer::new(instance, &free, PlacementRule::Consolidate);
                    placer.place(job, w, ps).map(|placement| {
                        free = placer.free().to_vec();
                        Action::run(j.id(), placement)
                    })
                }
                Architecture::RingAllReduce(r) => {
                    let embedding = first_fit(view, job, r, w, &free);
                    embedding.and_then(|parts| {
                        // Each worker holds one GPU (validated for ring jobs).
                        let chosen: Vec<Vec<u32>> = parts
                            .iter()
                            .map(|&(p, y)| gpu_ids.first_free(view, p, y))
                            .collect::<Option<_>>()?;
                        let spread = parts.len();
                        let mut placement = Placement::new();
                        let mut gpus = Vec::new();
                        for ((p, y), ids) in parts.into_iter().zip(chosen) {
                            let m = machines[p].id;
                            placement.push((m, Tasks::new(y, 0)));
                            gpu_ids.taken[p].extend(&ids);
                            gpus.extend(ids.into_iter().map(|index| GpuId { machine: m, index }));
                            // The simulator's charge: the workers, plus `b`
                            // on each server of a multi-server ring.
                            free[p] = free[p].minus(&job.demand_with_reservation(y, 0, spread));
                        }
                        Some(Action::SetAllocation {
                            job: j.id(),
                            placement,
                            gpus: Some(gpus),
                            config: None,
                        })
                    })
                }
            };
            match started {
                Some(a) => actions.push(a),
                None if self.backfill => {}
                None => break,
            }
        }
        Ok(actions)
    }
}

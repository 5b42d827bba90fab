//! OASiS plans: per-slot worker and PS placements, as ledger consumption and
//! as crate [`Segment`]s.

use crate::model::{JobId, MachineId};
use crate::online::{Consumption, Reservation, ResourceId};
use crate::schedule::{Placement, Segment, Tasks};

use super::model::{OasisCluster, SpecVector};

/// What a plan does in one slot.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SlotPlan {
    /// The slot (0-based).
    pub slot: u32,
    /// Chunks trained in the slot, `x_t`.
    pub(crate) chunks: u64,
    /// `(machine position, workers)`, cheapest server first.
    pub workers: Vec<(u32, u32)>,
    /// `(machine position, PSs)`, cheapest server first.
    pub ps: Vec<(u32, u32)>,
}

impl SlotPlan {
    /// Workers in the slot, `Σ_h y_h(t)`.
    pub fn worker_count(&self) -> u32 {
        self.workers.iter().map(|&(_, n)| n).sum()
    }

    /// PSs in the slot, `Σ_k z_k(t)`.
    pub fn ps_count(&self) -> u32 {
        self.ps.iter().map(|&(_, n)| n).sum()
    }
}

/// A job's complete schedule `l` (one column of the paper's reformulation
/// over whole schedules): every slot with work, in ascending
/// slot order.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OasisPlan {
    /// The job.
    pub(crate) job: JobId,
    /// Slots with work, ascending; the last is the completion slot `t̂`.
    pub slots: Vec<SlotPlan>,
    /// Demand of one worker, OASiS units.
    pub(crate) worker_demand: SpecVector,
    /// Demand of one PS, OASiS units.
    pub(crate) ps_demand: SpecVector,
}

impl OasisPlan {
    /// Total chunks trained, `Σ_t x_t`.
    pub fn chunks(&self) -> u64 {
        self.slots.iter().map(|s| s.chunks).sum()
    }

    /// Worker-slots used, `Σ_t Σ_h y_h(t)`.
    pub fn worker_slots(&self) -> u64 {
        self.slots.iter().map(|s| u64::from(s.worker_count())).sum()
    }

    /// The plan as segments of the crate's [`Schedule`](crate::schedule::Schedule):
    /// one segment per run of consecutive slots with the same placement,
    /// machines by id in ascending position.
    pub(crate) fn segments(&self, cluster: &OasisCluster) -> Vec<Segment> {
        let mut out: Vec<Segment> = Vec::new();
        for s in &self.slots {
            let mut tasks: Vec<(u32, Tasks)> = Vec::new();
            for &(m, n) in &s.workers {
                tasks.push((m, Tasks::new(n, 0)));
            }
            for &(m, n) in &s.ps {
                tasks.push((m, Tasks::new(0, n)));
            }
            tasks.sort_by_key(|&(m, _)| m);
            let mut placement = Placement::new();
            for (m, t) in tasks {
                let id = cluster.machine_ids[m as usize];
                match placement.last_mut() {
                    Some((last, acc)) if *last == id => {
                        *acc = Tasks::new(acc.workers + t.workers, acc.ps + t.ps);
                    }
                    _ => placement.push((id, t)),
                }
            }
            match out.last_mut() {
                Some(seg) if seg.slots.end == s.slot && seg.placement == placement => {
                    seg.slots.end = s.slot + 1;
                }
                _ => out.push(Segment::new(s.slot..s.slot + 1, placement)),
            }
        }
        out
    }
}

impl Reservation for OasisPlan {
    fn consumption(&self) -> impl Iterator<Item = Consumption> + '_ {
        self.slots.iter().flat_map(move |s| {
            let workers = s
                .workers
                .iter()
                .map(move |&(m, n)| (m, n, &self.worker_demand));
            let ps = s.ps.iter().map(move |&(m, n)| (m, n, &self.ps_demand));
            workers.chain(ps).flat_map(move |(m, n, demand)| {
                demand
                    .iter()
                    .enumerate()
                    .filter(|(_, d)| **d > 0.0)
                    .map(move |(r, d)| Consumption {
                        machine: MachineId(m),
                        resource: ResourceId(r as u8),
                        slot: s.slot,
                        amount: f64::from(n) * d,
                    })
            })
        })
    }

    fn completion_slot(&self) -> u32 {
        self.slots.last().map_or(0, |s| s.slot)
    }
}

//! Locality plans: per slot IDLE, LOCAL on one machine, or DISTRIBUTED, as
//! ledger consumption and as crate [`Segment`]s.

use crate::model::{JobId, MachineId};
use crate::online::{Consumption, Reservation, ResourceId};
use crate::schedule::{Configuration, Placement, Segment, Tasks};

use super::model::{LocalityCluster, NIC, Vector};

/// What a job does in one slot with work.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum SlotConfig {
    /// `workers ≥ 1` workers and one PS on machine `machine` (position);
    /// no NIC use.
    Local {
        /// Machine position.
        machine: u32,
        /// Workers `y ≥ 1`.
        workers: u32,
    },
    /// Workers and PSs on any machines, all traffic charged to NICs.
    Distributed {
        /// `(machine position, workers and PSs)`, ascending positions,
        /// each machine once.
        tasks: Vec<(u32, Tasks)>,
    },
}

impl SlotConfig {
    /// Workers in the slot, `Σ_h y_h`.
    pub fn workers(&self) -> u32 {
        match self {
            SlotConfig::Local { workers, .. } => *workers,
            SlotConfig::Distributed { tasks } => tasks.iter().map(|(_, t)| t.workers).sum(),
        }
    }

    /// PSs in the slot (1 in LOCAL).
    pub fn ps(&self) -> u32 {
        match self {
            SlotConfig::Local { .. } => 1,
            SlotConfig::Distributed { tasks } => tasks.iter().map(|(_, t)| t.ps).sum(),
        }
    }
}

/// One slot of a plan.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SlotPlan {
    /// The slot (0-based).
    pub slot: u32,
    /// The configuration and its tasks.
    pub config: SlotConfig,
    /// Mini-batches done in the slot, `r·y`.
    pub work: f64,
}

/// A job's complete plan: every slot with work, ascending.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct LocalityPlan {
    /// The job.
    pub job: JobId,
    /// Slots with work, ascending; the last is the completion slot.
    pub slots: Vec<SlotPlan>,
    /// Worker demand `w` (DISTRIBUTED), ledger units.
    pub(crate) worker: Vector,
    /// PS demand `s` (DISTRIBUTED), ledger units.
    pub(crate) ps: Vector,
}

impl LocalityPlan {
    /// Total mini-batches, `Σ_t work_t`.
    pub fn work(&self) -> f64 {
        self.slots.iter().map(|s| s.work).sum()
    }

    /// Slots run LOCAL.
    pub fn local_slots(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| matches!(s.config, SlotConfig::Local { .. }))
            .count()
    }

    /// The plan as segments of the crate's schedule: one segment per run of
    /// consecutive slots with the same placement and configuration, with
    /// `config` set to `Local { machine }` or `Distributed`.
    pub(crate) fn segments(&self, cluster: &LocalityCluster) -> Vec<Segment> {
        let mut out: Vec<Segment> = Vec::new();
        for s in &self.slots {
            let id = |m: u32| cluster.machine_ids[m as usize];
            let (placement, config) = match &s.config {
                SlotConfig::Local { machine, workers } => (
                    Placement::from(vec![(id(*machine), Tasks::new(*workers, 1))]),
                    Configuration::Local {
                        machine: id(*machine),
                    },
                ),
                SlotConfig::Distributed { tasks } => (
                    tasks
                        .iter()
                        .map(|&(m, t)| (id(m), t))
                        .collect::<Vec<_>>()
                        .into(),
                    Configuration::Distributed,
                ),
            };
            match out.last_mut() {
                Some(seg)
                    if seg.slots.end == s.slot
                        && seg.placement == placement
                        && seg.config == Some(config) =>
                {
                    seg.slots.end = s.slot + 1;
                }
                _ => {
                    let mut seg = Segment::new(s.slot..s.slot + 1, placement);
                    seg.config = Some(config);
                    out.push(seg);
                }
            }
        }
        out
    }
}

impl Reservation for LocalityPlan {
    fn consumption(&self) -> impl Iterator<Item = Consumption> + '_ {
        self.slots.iter().flat_map(move |s| {
            let units: Vec<(u32, f64, Vector)> = match &s.config {
                SlotConfig::Local { machine, workers } => {
                    let (mut w, mut p) = (self.worker, self.ps);
                    w[NIC] = 0.0;
                    p[NIC] = 0.0;
                    vec![(*machine, f64::from(*workers), w), (*machine, 1.0, p)]
                }
                SlotConfig::Distributed { tasks } => tasks
                    .iter()
                    .flat_map(|&(m, t)| {
                        [
                            (m, f64::from(t.workers), self.worker),
                            (m, f64::from(t.ps), self.ps),
                        ]
                    })
                    .collect(),
            };
            units.into_iter().flat_map(move |(m, n, d)| {
                (0..d.len())
                    .filter(move |&r| d[r] > 0.0 && n > 0.0)
                    .map(move |r| Consumption {
                        machine: MachineId(m),
                        resource: ResourceId(r as u8),
                        slot: s.slot,
                        amount: n * d[r],
                    })
            })
        })
    }

    fn completion_slot(&self) -> u32 {
        self.slots.last().map_or(0, |s| s.slot)
    }
}

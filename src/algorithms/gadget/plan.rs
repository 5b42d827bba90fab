//! GADGET-style plans: one contiguous run of a ring, as ledger consumption
//! and as a crate [`Segment`].

use crate::model::{GpuId, JobId, MachineId};
use crate::online::{Consumption, Reservation};
use crate::schedule::{Placement, Segment, Tasks};

use super::model::{GPU, GadgetCluster, NIC};

/// A job's schedule `l = (s, w, n, y)`: `y_h` workers on each of `n`
/// servers in every slot of `[s, s + d)`, each server also reserving `2b_i`
/// of NIC when `n ≥ 2`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct GadgetPlan {
    /// The job.
    pub job: JobId,
    /// First slot `s` (0-based).
    pub start: u32,
    /// Duration `d`, slots.
    pub slots: u32,
    /// Workers `w = Σ_h y_h`.
    pub workers: u32,
    /// `(server index, y_h ≥ 1)`, server index ascending (the ring visits
    /// the servers in this order, each server's workers contiguous).
    pub placement: Vec<(u32, u32)>,
    /// NIC reserved on every used server, data units per slot (`2b_i` when
    /// `n ≥ 2`, else 0).
    pub nic_per_server: f64,
    /// Per-iteration time `τ(w, n)`, slots.
    pub tau_slots: f64,
    /// Iterations trained, `F^eff(w)`.
    pub iterations: u64,
}

impl GadgetPlan {
    /// Servers used, `n`.
    pub fn servers(&self) -> u32 {
        self.placement.len() as u32
    }

    /// The last slot with work, `t̂ = s + d − 1`.
    pub fn completion(&self) -> u32 {
        self.start + self.slots - 1
    }

    /// GPU-slots used, `w·d`.
    pub fn gpu_slots(&self) -> u64 {
        u64::from(self.workers) * u64::from(self.slots)
    }

    /// The plan's placement by machine id.
    pub(crate) fn machine_placement(&self, cluster: &GadgetCluster) -> Placement {
        self.placement
            .iter()
            .map(|&(k, y)| (cluster.servers[k as usize].machine, Tasks::new(y, 0)))
            .collect()
    }

    /// The plan as one [`Segment`], with GPU ids when given.
    pub(crate) fn segment(&self, cluster: &GadgetCluster, gpus: Option<Vec<GpuId>>) -> Segment {
        Segment {
            slots: self.start..self.start + self.slots,
            placement: self.machine_placement(cluster),
            gpus,
            config: None,
        }
    }
}

impl Reservation for GadgetPlan {
    fn consumption(&self) -> impl Iterator<Item = Consumption> + '_ {
        let nic = self.nic_per_server;
        (self.start..self.start + self.slots).flat_map(move |t| {
            self.placement.iter().flat_map(move |&(k, y)| {
                let gpu = Consumption {
                    machine: MachineId(k),
                    resource: GPU,
                    slot: t,
                    amount: f64::from(y),
                };
                let ring = (nic > 0.0).then_some(Consumption {
                    machine: MachineId(k),
                    resource: NIC,
                    slot: t,
                    amount: nic,
                });
                std::iter::once(gpu).chain(ring)
            })
        })
    }

    fn completion_slot(&self) -> u32 {
        self.completion()
    }
}

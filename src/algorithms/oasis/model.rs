//! The OASiS model in the paper's units ([algorithms guide, section
//! 7.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-model-units)): the cluster (split, or with shared servers) and every job's derived
//! quantities. Zero demands never limit a cap, a job needs `b_i > 0` and
//! `B_i ≥ b_i`, and unschedulable jobs are rejected without pricing.
//!
//! The crate's model stores SI units; OASiS states its constants in GPUs,
//! vCPUs, GB, GB and Gbit/s, and its times in slots. [`spec_units`] is the
//! one conversion; everything downstream (ledger, prices, `U`, `L`, the
//! exact MIP) works in these units.

use std::borrow::Cow;

use crate::model::units::{Num, ceil_tol, floor_tol};
use crate::model::{
    Architecture, Cluster, Elasticity, Hosting, Instance, Job, JobId, MachineId, Utility,
};
use crate::online::{
    Ledger, MIN_POSITIVE_DEMAND, PS_RESOURCE_NAMES, PS_RESOURCES, PoolId, PsVector,
    ps_cluster_machines, ps_ledger,
};

use super::error::OasisError;
use super::shared::{SharedServer, SharedTable};

/// Resource types of the ledger, in order: GPU, vCPU, memory (GB), storage
/// (GB), NIC (Gbit/s).
pub const RESOURCES: usize = PS_RESOURCES;
/// Names of the [`RESOURCES`], for reports.
pub const RESOURCE_NAMES: [&str; RESOURCES] = PS_RESOURCE_NAMES;
/// Most DP cells `T·(D_i + 1)` a job may need (2²⁸: about 1 GB of
/// back-pointers). The paper's largest jobs need 6·10⁶.
pub(crate) const MAX_DP_CELLS: u64 = 1 << 28;
/// The pool of worker servers (`H`) of a cluster with worker-only servers
/// (always pool 0, when the cluster has such servers).
pub const WORKER_POOL: PoolId = PoolId(0);
/// The pool of PS servers (`K`) of a split cluster (pool 1 whenever the
/// cluster has worker-only servers too, else pool 0).
pub const PS_POOL: PoolId = PoolId(1);

/// A resource vector in OASiS's units: `[GPU, vCPU, GB memory, GB storage,
/// Gbit/s NIC]`.
pub(crate) type SpecVector = PsVector;

/// Converts SI [`Resources`](crate::model::Resources) to OASiS's units
/// (decimal GB, Gbit/s): the parameter-server ledgers' one conversion.
pub use crate::online::ps_units as spec_units;

/// The kind of task a server hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Role {
    /// Workers.
    Worker,
    /// Parameter servers.
    Ps,
}

/// The cluster of OASiS: worker servers `H` and PS servers `K` (disjoint,
/// the paper's model), and, when
/// [`OasisParams::shared_machines`](super::OasisParams::shared_machines) is
/// set, shared servers that host both (`Hosting::Both`), with capacities in
/// [`spec_units`].
///
/// Ledger machine `MachineId(p)` is the instance's machine at position `p`.
/// Every non-empty group is one pool, numbered in the order worker servers,
/// PS servers, shared servers ([`worker_pool`](Self::worker_pool),
/// [`ps_pool`](Self::ps_pool), [`shared_pool`](Self::shared_pool)): on a
/// split cluster, worker servers in [`WORKER_POOL`] and PS servers in
/// [`PS_POOL`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct OasisCluster {
    /// Horizon `T`, slots.
    pub(crate) horizon: u32,
    /// Slot length `Δ`, seconds.
    pub(crate) slot_length_s: f64,
    /// Positions of the worker-only servers, ascending.
    pub(crate) worker_servers: Vec<u32>,
    /// Positions of the PS-only servers, ascending.
    pub(crate) ps_servers: Vec<u32>,
    /// Positions of the servers that host workers and PSs, ascending (empty
    /// in the paper's model).
    pub(crate) shared_servers: Vec<u32>,
    /// The instance's machine id at every position.
    pub(crate) machine_ids: Vec<MachineId>,
    /// Capacity of every machine (by position), in [`spec_units`].
    pub(crate) capacity: Vec<SpecVector>,
    /// The distinct GPU types of the machines with GPUs: OASiS's model has
    /// one compute speed per job, its speed on all of them.
    #[cfg_attr(
        feature = "serde",
        serde(default = "crate::algorithms::one_default_gpu_type")
    )]
    pub(crate) gpu_types: Vec<Option<String>>,
}

/// `job` at its one compute speed on the GPU types `types`; a job whose
/// speed differs between them is outside OASiS's model.
fn one_speed<'a>(job: &'a Job, types: &[Option<String>]) -> Result<Cow<'a, Job>, OasisError> {
    crate::algorithms::at_one_speed(job, types).map_err(|reason| OasisError::UnsupportedJob {
        job: job.id,
        reason,
    })
}

impl OasisCluster {
    /// The split cluster of `instance` (the paper's model: every machine
    /// worker-only or PS-only).
    ///
    /// # Errors
    ///
    /// [`OasisError::UnsupportedCluster`] when a machine may host both task
    /// kinds (OASiS's pools, worker servers `H` and PS servers `K`, are
    /// disjoint), or when there is no worker
    /// server or no PS server.
    #[cfg(test)]
    pub(crate) fn from_instance(instance: &Instance) -> Result<Self, OasisError> {
        Self::from_instance_with(instance, false)
    }

    /// The cluster of `instance`; with `shared_machines`, machines that host
    /// both task kinds are shared servers (one pool of cells that workers and
    /// PSs both draw on), else they are refused as by
    /// [`from_instance`](Self::from_instance).
    ///
    /// # Errors
    ///
    /// [`OasisError::UnsupportedCluster`] when a machine hosts both kinds and
    /// `shared_machines` is not set, or when no machine may host workers or
    /// none may host PSs.
    pub(crate) fn from_instance_with(
        instance: &Instance,
        shared_machines: bool,
    ) -> Result<Self, OasisError> {
        Self::from_cluster(
            instance.cluster(),
            instance.slot_length_s(),
            instance.horizon_slots(),
            shared_machines,
        )
    }

    /// The model of `cluster` with slots of `slot_length_s` seconds over
    /// `horizon` slots (a session's cluster, whose horizon is its planning
    /// window), machines that host both task kinds shared servers when
    /// `shared_machines` is set.
    ///
    /// # Errors
    ///
    /// As [`from_instance_with`](Self::from_instance_with).
    pub(crate) fn from_cluster(
        cluster: &Cluster,
        slot_length_s: f64,
        horizon: u32,
        shared_machines: bool,
    ) -> Result<Self, OasisError> {
        let machines = &cluster.machines;
        let mut worker_servers = Vec::new();
        let mut ps_servers = Vec::new();
        let mut shared_servers = Vec::new();
        for (p, m) in machines.iter().enumerate() {
            let p = u32::try_from(p).map_err(|_| OasisError::UnsupportedCluster {
                reason: "more than 2^32 machines".into(),
            })?;
            match m.hosts {
                Hosting::Workers => worker_servers.push(p),
                Hosting::ParameterServers => ps_servers.push(p),
                Hosting::Both if shared_machines => shared_servers.push(p),
                Hosting::Both => {
                    return Err(OasisError::UnsupportedCluster {
                        reason: format!(
                            "{} may host workers and PSs; OASiS needs every server to be worker-only or PS-only, \
                             or the parameter `shared_machines` set to use such machines as shared servers",
                            m.id
                        ),
                    });
                }
            }
        }
        if shared_servers.is_empty() && (worker_servers.is_empty() || ps_servers.is_empty()) {
            return Err(OasisError::UnsupportedCluster {
                reason: format!(
                    "{} worker servers and {} PS servers; OASiS needs at least one of each",
                    worker_servers.len(),
                    ps_servers.len()
                ),
            });
        }
        let (machine_ids, capacity) = ps_cluster_machines(cluster);
        Ok(OasisCluster {
            horizon,
            slot_length_s,
            worker_servers,
            ps_servers,
            shared_servers,
            machine_ids,
            capacity,
            gpu_types: crate::algorithms::gpu_types_of(cluster),
        })
    }

    /// The pool of the worker-only servers ([`WORKER_POOL`]), `None` when
    /// there is none.
    pub(crate) fn worker_pool(&self) -> Option<PoolId> {
        (!self.worker_servers.is_empty()).then_some(WORKER_POOL)
    }

    /// The pool of the PS-only servers (pool 1 after worker-only servers,
    /// else pool 0), `None` when there is none.
    pub(crate) fn ps_pool(&self) -> Option<PoolId> {
        (!self.ps_servers.is_empty()).then(|| PoolId(u16::from(!self.worker_servers.is_empty())))
    }

    /// The pool of the shared servers (after the worker-only and PS-only
    /// pools that exist), `None` when there is none.
    pub(crate) fn shared_pool(&self) -> Option<PoolId> {
        (!self.shared_servers.is_empty()).then(|| {
            PoolId(
                u16::from(!self.worker_servers.is_empty()) + u16::from(!self.ps_servers.is_empty()),
            )
        })
    }

    /// An empty ledger over the cluster: every server in its pool
    /// ([`worker_pool`](Self::worker_pool), [`ps_pool`](Self::ps_pool),
    /// [`shared_pool`](Self::shared_pool)).
    ///
    /// # Errors
    ///
    /// The ledger's validation errors (none for a cluster built by
    /// [`from_instance_with`](Self::from_instance_with)).
    pub(crate) fn ledger(&self) -> crate::Result<Ledger> {
        let mut pools = vec![WORKER_POOL; self.capacity.len()];
        for (list, pool) in [
            (&self.ps_servers, self.ps_pool()),
            (&self.shared_servers, self.shared_pool()),
        ] {
            if let Some(pool) = pool {
                for &k in list {
                    pools[k as usize] = pool;
                }
            }
        }
        ps_ledger(self.horizon, &self.capacity, |p| pools[p])
    }

    /// The servers that host only `role`.
    pub(crate) fn dedicated(&self, role: Role) -> &[u32] {
        match role {
            Role::Worker => &self.worker_servers,
            Role::Ps => &self.ps_servers,
        }
    }

    /// Every server that may host `role` (dedicated and shared), ascending
    /// (the exact MIP's columns).
    #[cfg(feature = "highs")]
    pub(crate) fn hosts(&self, role: Role) -> Vec<u32> {
        let mut out: Vec<u32> = self
            .dedicated(role)
            .iter()
            .chain(&self.shared_servers)
            .copied()
            .collect();
        out.sort_unstable();
        out
    }
}

/// One job in OASiS's terms, with its derived quantities (`ω_i`,
/// `ρ_i = M_i·ω_i`, `D_i = E_i·N_i` chunks, caps).
///
/// Slots are 0-based; `δ = t̂ − arrival` as everywhere in the crate.
///
/// Outside the crate it is a handle: the jobs
/// [`Oasis::engine`](super::Oasis::engine) returns, in arrival order, to
/// step the engine with; its fields are OASiS's working model.
#[derive(Debug, Clone, PartialEq)]
pub struct OasisJob {
    /// The job's id.
    pub(crate) id: JobId,
    /// Arrival slot `a_i` (0-based); utility counts from here.
    pub(crate) arrival: u32,
    /// First slot the job may use (`≥ arrival`): the arrival slot offline,
    /// the next slot boundary in the simulator.
    pub(crate) earliest: u32,
    /// First slot the job may no longer use: the horizon `T` offline, the
    /// end of the planning window in a session.
    pub(crate) end: u32,
    /// Epochs `E_i`.
    pub(crate) epochs: u32,
    /// Data chunks `N_i`.
    pub(crate) chunks: u32,
    /// Mini-batches per chunk `M_i`.
    pub(crate) minibatches_per_chunk: u32,
    /// `ω_i = τ_i + 2e_i/b_i`, slots per mini-batch per worker.
    pub(crate) omega: f64,
    /// `ρ_i = M_i·ω_i`, worker-slots to train one chunk once.
    pub(crate) rho: f64,
    /// `D_i = E_i·N_i`, chunk-trainings.
    pub(crate) total_chunks: u64,
    /// Largest worker count per slot: `min(N_i, max_workers)`.
    pub(crate) max_workers: u32,
    /// Largest PS count per slot (the job's `max_ps`).
    pub(crate) max_ps: u32,
    /// `b_i`, NIC per worker, Gbit/s.
    pub(crate) worker_gbps: f64,
    /// `B_i`, NIC per PS, Gbit/s.
    pub(crate) ps_gbps: f64,
    /// Demand of one worker `w_i`, [`spec_units`].
    pub(crate) worker_demand: SpecVector,
    /// Demand of one PS `s_i`, [`spec_units`].
    pub(crate) ps_demand: SpecVector,
    /// `f_i(δ)`.
    pub(crate) utility: Utility,
    /// Machines (by position) the job may use; `None`: any.
    pub(crate) allowed: Option<Vec<bool>>,
}

impl OasisJob {
    /// The OASiS view of `job` (at position `position` of `instance`),
    /// usable from its arrival slot.
    ///
    /// `ω_i` in slots is [`PsJob::minibatch_time_s`](crate::model::PsJob::minibatch_time_s)
    /// `= (minibatch_compute_s + 2·gradient_bytes / worker.nic_bps) /
    /// slot_length_s`: the paper gives `τ_i` in slots without
    /// the slot length needed to convert `e_i/b_i`, so the crate works in SI
    /// units and divides by the instance's slot length.
    ///
    /// # Errors
    ///
    /// [`OasisError::UnsupportedJob`] when the job is not a parameter-server
    /// job, is not elastic and preemptible (OASiS changes worker counts
    /// between slots and may skip slots), has a demand entry in
    /// `(0, 10⁻¹²)` in [`spec_units`] (the framework's
    /// [`MIN_POSITIVE_DEMAND`]), `b_i ≤ 0` or `B_i < b_i`, `ω_i ≤ 0`, or
    /// more than `MAX_DP_CELLS` = 2²⁸ DP
    /// cells `T·(E_i·N_i + 1)`.
    pub(crate) fn from_job(instance: &Instance, job: &Job) -> Result<Self, OasisError> {
        let types = crate::algorithms::gpu_types_of(instance.cluster());
        let job = &*one_speed(job, &types)?;
        let horizon = instance.horizon_slots();
        let machines = instance.cluster().machines.iter().map(|m| m.id);
        let mut j = Self::build(job, machines, instance.slot_length_s(), horizon)?;
        j.arrival = instance.arrival_slot(job);
        j.earliest = j.arrival;
        Ok(j)
    }

    /// [`from_job`](Self::from_job) for a job whose utility counts from
    /// slot `arrival` and which may use slots `arrival..end`, on
    /// `cluster`'s machines and slots (a session's job, planned in its
    /// window; [`starting_at`](Self::starting_at) moves its first slot).
    ///
    /// # Errors
    ///
    /// As [`from_job`](Self::from_job), with `end − arrival` slots in
    /// place of `T`.
    pub(crate) fn planned(
        cluster: &OasisCluster,
        job: &Job,
        arrival: u32,
        end: u32,
    ) -> Result<Self, OasisError> {
        let job = &*one_speed(job, &cluster.gpu_types)?;
        let machines = cluster.machine_ids.iter().copied();
        let mut j = Self::build(
            job,
            machines,
            cluster.slot_length_s,
            end.saturating_sub(arrival),
        )?;
        (j.arrival, j.earliest, j.end) = (arrival, arrival, end);
        Ok(j)
    }

    /// The model of `job` on machines `machines` (by position) with slots
    /// of `slot_length_s` seconds, its DP over `slots` slots; usable in
    /// slots `0..slots` (the callers set its slots).
    fn build(
        job: &Job,
        machines: impl Iterator<Item = MachineId>,
        slot_length_s: f64,
        slots: u32,
    ) -> Result<Self, OasisError> {
        let bad = |reason: String| OasisError::UnsupportedJob {
            job: job.id,
            reason,
        };
        let Architecture::ParameterServer(p) = &job.architecture else {
            return Err(bad("OASiS schedules parameter-server jobs only".into()));
        };
        if job.discipline.elasticity != Elasticity::Elastic || !job.discipline.preemptible {
            return Err(bad(
                "OASiS plans change worker counts between slots and may skip slots; the job must be elastic and preemptible".into(),
            ));
        }
        let worker_demand = spec_units(&p.worker);
        let ps_demand = spec_units(&p.ps);
        for (task, demand) in [("worker", &worker_demand), ("PS", &ps_demand)] {
            if let Some((r, d)) = demand
                .iter()
                .enumerate()
                .find(|(_, d)| **d > 0.0 && **d < MIN_POSITIVE_DEMAND)
            {
                return Err(bad(format!(
                    "{task} demand {} = {} is positive but below {}, the smallest the price bounds accept",
                    RESOURCE_NAMES[r],
                    Num(*d),
                    Num(MIN_POSITIVE_DEMAND)
                )));
            }
        }
        let (b, big_b) = (worker_demand[4], ps_demand[4]);
        if b.is_nan() || b <= 0.0 {
            return Err(bad(format!(
                "worker bandwidth b_i = {} Gbit/s must be positive",
                Num(b)
            )));
        }
        if big_b.is_nan() || big_b < b {
            return Err(bad(format!(
                "PS bandwidth B_i = {} Gbit/s must be ≥ worker bandwidth b_i = {} Gbit/s",
                Num(big_b),
                Num(b)
            )));
        }
        let slot = slot_length_s;
        let omega = p.minibatch_time_s() / slot;
        if !(omega > 0.0 && omega.is_finite()) {
            return Err(bad(format!(
                "ω_i = τ_i + 2e_i/b_i = {} slots must be positive and finite",
                Num(omega)
            )));
        }
        let total_chunks = u64::from(p.epochs) * u64::from(p.data_chunks);
        let cells = u64::from(slots).saturating_mul(total_chunks + 1);
        if cells > MAX_DP_CELLS {
            return Err(OasisError::JobTooLarge {
                job: job.id,
                chunk_trainings: total_chunks,
                slots,
                cells,
                limit: MAX_DP_CELLS,
            });
        }
        let allowed = job
            .allowed_machines
            .as_ref()
            .map(|list| machines.map(|m| list.contains(&m)).collect());
        Ok(OasisJob {
            id: job.id,
            arrival: 0,
            earliest: 0,
            end: slots,
            epochs: p.epochs,
            chunks: p.data_chunks,
            minibatches_per_chunk: p.minibatches_per_chunk,
            omega,
            rho: f64::from(p.minibatches_per_chunk) * omega,
            total_chunks,
            max_workers: p.data_chunks.min(p.max_workers),
            max_ps: p.max_ps,
            worker_gbps: b,
            ps_gbps: big_b,
            worker_demand,
            ps_demand,
            utility: job.utility.clone(),
            allowed,
        })
    }

    /// The same job usable from slot `earliest` on (clamped to `≥ arrival`).
    pub(crate) fn starting_at(mut self, earliest: u32) -> Self {
        self.earliest = earliest.max(self.arrival);
        self
    }

    /// Whether the job may use the machine at `position`.
    pub(crate) fn may_use(&self, position: u32) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|a| a.get(position as usize).copied().unwrap_or(false))
    }

    /// `Wr_i = D_i·ρ_i`, real worker-slots needed (RHS of constraint (2)).
    pub(crate) fn worker_slots(&self) -> f64 {
        self.total_chunks as f64 * self.rho
    }

    /// `W_i = ⌈Wr_i⌉` (tolerant ceiling), at least 1 when the job has
    /// work: with a very long slot `Wr_i` falls below the ceiling's
    /// tolerance, yet training takes one worker for one slot.
    pub(crate) fn worker_slots_ceil(&self) -> f64 {
        let w = ceil_tol(self.worker_slots());
        if self.total_chunks > 0 { w.max(1.0) } else { w }
    }

    /// `d_min = ⌈E_i·M_i·ω_i⌉`: fewest slots with `N_i` workers in
    /// every slot, at least 1.
    pub(crate) fn d_min(&self) -> u32 {
        let v = ceil_tol(f64::from(self.epochs) * self.rho).max(1.0);
        if v >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            v as u32
        }
    }

    /// Workers needed to train `x` chunks in one slot: `⌈x·ρ_i⌉`
    /// (tolerant, so `10·(0.1·3)` needs 3), at least 1 for `x > 0` (a very
    /// long slot makes `x·ρ_i` smaller than the ceiling's tolerance).
    pub(crate) fn workers_for(&self, x: u64) -> u64 {
        let v = ceil_tol(x as f64 * self.rho);
        if x == 0 {
            0
        } else if v <= 1.0 {
            1
        } else {
            v as u64
        }
    }

    /// Chunks `y` workers can train in one slot: `⌊y/ρ_i⌋` (tolerant).
    pub(crate) fn chunks_for(&self, y: u64) -> u64 {
        let v = floor_tol(y as f64 / self.rho);
        if v <= 0.0 { 0 } else { v as u64 }
    }

    /// PSs for `y` workers: `zreq(y) = ⌈y·b_i/B_i⌉` (tolerant), the fewest
    /// that satisfy (6); `≤ y` because `B_i ≥ b_i`, so (7) holds. The rule
    /// of [`PsJob::ps_needed`](crate::model::PsJob::ps_needed) (the same
    /// function), in the Gbit/s units of the bandwidth rows of the OASiS
    /// programs, so the count matches those rows.
    pub(crate) fn zreq(&self, y: u32) -> u32 {
        crate::model::ps_for_bandwidth(y, self.worker_gbps, self.ps_gbps).min(y)
    }

    /// Largest worker count whose PSs fit `z` PS positions:
    /// `max{y : zreq(y) ≤ z}` (capped at [`max_workers`](Self::max_workers)).
    pub(crate) fn workers_for_ps(&self, z: u32) -> u32 {
        let z = z.min(self.max_ps);
        let guess = floor_tol(f64::from(z) * self.ps_gbps / self.worker_gbps);
        let mut y = if guess >= f64::from(self.max_workers) {
            self.max_workers
        } else {
            guess.max(0.0) as u32
        };
        while y > 0 && self.zreq(y) > z {
            y -= 1;
        }
        while y < self.max_workers && self.zreq(y + 1) <= z {
            y += 1;
        }
        y
    }

    /// `f_i(t − a_i)` for a completion in slot `t ≥ arrival`.
    pub(crate) fn utility_at(&self, t: u32) -> f64 {
        self.utility.value(t.saturating_sub(self.arrival))
    }

    /// How many units of one task (demand `d`) fit a residual vector:
    /// `min_{r: d^r > 0} ⌊res^r / d^r⌋`, at least 0 (zero demands are
    /// left out: a resource the task does not demand does not limit it).
    pub(crate) fn units_fitting(demand: &SpecVector, residual: impl Fn(usize) -> f64) -> u32 {
        let mut cap = f64::INFINITY;
        for (r, &d) in demand.iter().enumerate() {
            if d > 0.0 {
                cap = cap.min(floor_tol(residual(r) / d));
            }
        }
        if cap <= 0.0 {
            0
        } else if cap >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            cap as u32
        }
    }

    /// The demand of one task of `role`.
    pub(crate) fn demand(&self, role: Role) -> &SpecVector {
        match role {
            Role::Worker => &self.worker_demand,
            Role::Ps => &self.ps_demand,
        }
    }

    /// The most PSs one slot may need: `min(max_ps, zreq(max_workers))`.
    pub(crate) fn ps_limit(&self) -> u32 {
        self.max_ps.min(self.zreq(self.max_workers))
    }

    /// The largest worker count per slot on the empty cluster, and the
    /// chunks it trains per slot: the chunk model's fastest pace. With
    /// shared servers, the largest `y` whose `y` workers and `zreq(y)` PSs
    /// fit together ([`SharedTable`]).
    pub(crate) fn empty_cluster_pace(&self, cluster: &OasisCluster) -> (u32, u64) {
        let cap_sum = |role| -> u64 {
            self.dedicated_caps(cluster, role)
                .map(|(_, c)| u64::from(c))
                .sum()
        };
        let y = if cluster.shared_servers.is_empty() {
            let ycap = cap_sum(Role::Worker).min(u64::from(self.max_workers)) as u32;
            let zcap = cap_sum(Role::Ps).min(u64::from(u32::MAX)) as u32;
            ycap.min(self.workers_for_ps(zcap))
        } else {
            self.empty_shared_pace(cluster, cap_sum(Role::Worker), cap_sum(Role::Ps))
        };
        (y, self.chunks_for(u64::from(y)))
    }

    /// The largest `y` whose `y` workers and `zreq(y)` PSs fit the empty
    /// cluster with shared servers (`wsum`, `psum`: the tasks the dedicated
    /// servers hold).
    fn empty_shared_pace(&self, cluster: &OasisCluster, wsum: u64, psum: u64) -> u32 {
        let shared: Vec<SharedServer> = cluster
            .shared_servers
            .iter()
            .filter(|&&m| self.may_use(m))
            .map(|&m| SharedServer {
                position: m,
                residual: cluster.capacity[m as usize],
                worker_price: 0.0,
                ps_price: 0.0,
            })
            .collect();
        let mut table = SharedTable::default();
        table.build(self, &shared, false);
        let y_hi = self.shared_worker_bound(wsum, psum, &table);
        let zeros = |n: u64, limit: u32| vec![0.0; n.min(u64::from(limit)) as usize + 1];
        let wc = zeros(wsum, y_hi);
        let pc = zeros(psum, self.zreq(y_hi));
        (1..=y_hi)
            .rev()
            .find(|&y| table.cheapest(&wc, &pc, y, self.zreq(y)).is_some())
            .unwrap_or(0)
    }

    /// An upper bound on the workers one slot can hold with dedicated servers
    /// holding `wsum` workers and `psum` PSs and the shared servers of
    /// `table`: `min(max_workers, wsum + A, max{y : zreq(y) ≤ min(max_ps,
    /// psum + B)})`.
    pub(crate) fn shared_worker_bound(&self, wsum: u64, psum: u64, table: &SharedTable) -> u32 {
        let y = (wsum + u64::from(table.workers())).min(u64::from(self.max_workers)) as u32;
        let z = (psum + u64::from(table.ps())).min(u64::from(u32::MAX)) as u32;
        y.min(self.workers_for_ps(z))
    }

    /// The dedicated servers of `role` the job may use with room for at least
    /// one of its tasks on the empty cluster: `(position, tasks fitting)`.
    fn dedicated_caps<'a>(
        &'a self,
        cluster: &'a OasisCluster,
        role: Role,
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        self.caps_on(cluster, cluster.dedicated(role).iter().copied(), role)
    }

    /// Every server that may host `role` (dedicated and shared, ascending)
    /// the job may use with room for at least one of its tasks on the empty
    /// cluster: `(position, tasks fitting)` (each server alone).
    #[cfg(feature = "highs")]
    pub(crate) fn empty_server_caps(&self, cluster: &OasisCluster, role: Role) -> Vec<(u32, u32)> {
        self.caps_on(cluster, cluster.hosts(role).into_iter(), role)
            .collect()
    }

    fn caps_on<'a>(
        &'a self,
        cluster: &'a OasisCluster,
        servers: impl Iterator<Item = u32> + 'a,
        role: Role,
    ) -> impl Iterator<Item = (u32, u32)> + 'a {
        let demand = self.demand(role);
        servers.filter(|&m| self.may_use(m)).filter_map(move |m| {
            let c = &cluster.capacity[m as usize];
            let cap = Self::units_fitting(demand, |r| c[r]);
            (cap > 0).then_some((m, cap))
        })
    }

    /// Whether a chunk-model plan exists on the empty cluster ([algorithms
    /// guide, section 7.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-bounds); the paper's
    /// `a + d_min − 1 ≤ T` does not guarantee a plan when the cluster cannot
    /// host `N_i` workers): at
    /// least one chunk per slot fits, and `⌈D_i / X⌉` slots from
    /// [`earliest`](Self::earliest) end within the horizon.
    pub(crate) fn schedulable(&self, cluster: &OasisCluster) -> bool {
        self.unschedulable_why(cluster).is_none()
    }

    /// Why no chunk-model plan exists on the empty cluster (`None` when one
    /// does, [`schedulable`](Self::schedulable)): a task fits no server, the
    /// workers that fit train less than one chunk per slot, or even the
    /// fastest pace needs more slots than the horizon leaves.
    pub(crate) fn unschedulable_why(&self, cluster: &OasisCluster) -> Option<String> {
        let (y, x) = self.empty_cluster_pace(cluster);
        if y == 0 {
            return Some(
                "too large: no worker server or no PS server has room for one of its tasks".into(),
            );
        }
        if x == 0 {
            return Some(format!(
                "too slow for the slot: even {y} workers (all the empty cluster holds, within its \
                 cap) train less than one whole data chunk per slot (ρ = {:.3} workers per chunk)",
                self.rho
            ));
        }
        let slots = self.total_chunks.div_ceil(x);
        let horizon = cluster.horizon.min(self.end);
        (u64::from(self.earliest) + slots > u64::from(horizon)).then(|| {
            format!(
                "horizon too short: even on the empty cluster it needs {slots} slots from slot \
                 {}, past the horizon of {horizon} slots",
                self.earliest + 1,
            )
        })
    }
}

//! The two-configuration model: the cluster as a ledger in the scheduler's
//! units, and every job's derived quantities (workload, rates, window,
//! demands per configuration).
//!
//! Times and bandwidths stay in the crate's SI units (seconds, bytes,
//! bytes per second). Resource amounts enter the ledger, the prices and the
//! per-job program through one conversion, [`ledger_units`]: GPUs, vCPUs,
//! GB of memory, GB of storage and Gbit/s of NIC bandwidth. (The resource
//! sums of the price constants and normalisers mix units, so the unit
//! choice is part of the algorithm; this one keeps every entry of order 1.)

use crate::lp::{MAX_COEFFICIENT, MIN_COEFFICIENT, SOLVER_INFINITY};
use crate::model::units::{Num, ceil_tol, floor_tol};
use crate::model::{
    Architecture, Cluster, Elasticity, Hosting, Instance, Job, JobId, MachineId, Utility,
};
use crate::online::{
    Ledger, PS_RESOURCE_NAMES, PS_RESOURCES, PoolId, PsVector, ps_ledger, ps_units,
};

use super::error::LocalityError;

/// Resource types of the ledger, in order: GPU, vCPU, memory (GB), storage
/// (GB), NIC (Gbit/s).
pub const RESOURCES: usize = PS_RESOURCES;
/// Index of the NIC in the ledger's resources.
pub const NIC: usize = 4;
/// Names of the [`RESOURCES`], for reports.
pub const RESOURCE_NAMES: [&str; RESOURCES] = PS_RESOURCE_NAMES;
/// The one pool: every machine may host workers and PSs of any job.
pub const POOL: PoolId = PoolId(0);
/// Default plan window, slots from the arrival slot.
pub const DEFAULT_HORIZON: u32 = 64;

/// A resource vector in [`ledger_units`].
pub type Vector = PsVector;

/// Converts SI [`Resources`](crate::model::Resources) to the ledger's units
/// (decimal GB, Gbit/s): the parameter-server ledgers' one conversion.
pub use crate::online::ps_units as ledger_units;

/// The cluster in the scheduler's terms: capacities in [`ledger_units`],
/// role flags and intra-machine bandwidths. Ledger machine `MachineId(p)`
/// is the instance's machine at position `p`.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub(crate) struct LocalityCluster {
    /// Horizon `T`, slots.
    pub(crate) horizon: u32,
    /// Slot length `Δ`, seconds.
    pub(crate) slot_length_s: f64,
    /// The instance's machine id at every position.
    pub(crate) machine_ids: Vec<MachineId>,
    /// Capacity of every machine, [`ledger_units`].
    pub(crate) capacity: Vec<Vector>,
    /// Whether the machine may host workers.
    pub(crate) hosts_workers: Vec<bool>,
    /// Whether the machine may host PSs.
    pub(crate) hosts_ps: Vec<bool>,
    /// Bandwidth between a worker and a PS on the machine, bytes/s.
    pub(crate) intra_bandwidth_bps: Vec<f64>,
    /// The distinct GPU types of the machines with GPUs: the model has one
    /// compute speed per job, its speed on all of them.
    #[cfg_attr(
        feature = "serde",
        serde(default = "crate::algorithms::one_default_gpu_type")
    )]
    pub(crate) gpu_types: Vec<Option<String>>,
}

impl LocalityCluster {
    /// The cluster of `instance`.
    ///
    /// # Errors
    ///
    /// [`LocalityError::UnsupportedCluster`] when no machine may host a
    /// worker or none a PS, or there are more than 2³² machines.
    pub(crate) fn from_instance(instance: &Instance) -> Result<Self, LocalityError> {
        Self::from_cluster(
            instance.cluster(),
            instance.slot_length_s(),
            instance.horizon_slots(),
        )
    }

    /// The model of `cluster` with slots of `slot_length_s` seconds over
    /// `horizon` slots.
    ///
    /// # Errors
    ///
    /// As [`from_instance`](Self::from_instance).
    pub(crate) fn from_cluster(
        cluster: &Cluster,
        slot_length_s: f64,
        horizon: u32,
    ) -> Result<Self, LocalityError> {
        let machines = &cluster.machines;
        if u32::try_from(machines.len()).is_err() {
            return Err(LocalityError::UnsupportedCluster {
                reason: "more than 2^32 machines".into(),
            });
        }
        let hosts_workers: Vec<bool> = machines
            .iter()
            .map(|m| m.hosts != Hosting::ParameterServers)
            .collect();
        let hosts_ps: Vec<bool> = machines
            .iter()
            .map(|m| m.hosts != Hosting::Workers)
            .collect();
        if !hosts_workers.iter().any(|&b| b) || !hosts_ps.iter().any(|&b| b) {
            return Err(LocalityError::UnsupportedCluster {
                reason: "some machine must host workers and some machine PSs".into(),
            });
        }
        Ok(LocalityCluster {
            horizon,
            slot_length_s,
            machine_ids: machines.iter().map(|m| m.id).collect(),
            capacity: machines.iter().map(|m| ps_units(&m.capacity)).collect(),
            hosts_workers,
            hosts_ps,
            intra_bandwidth_bps: machines.iter().map(|m| m.intra_bandwidth_bps).collect(),
            gpu_types: crate::algorithms::gpu_types_of(cluster),
        })
    }

    /// Number of machines `H`.
    pub(crate) fn machines(&self) -> usize {
        self.capacity.len()
    }

    /// An empty ledger: one pool, every machine.
    ///
    /// # Errors
    ///
    /// The ledger's validation errors.
    pub(crate) fn ledger(&self) -> crate::Result<Ledger> {
        ps_ledger(self.horizon, &self.capacity, |_| POOL)
    }
}

/// How many units of demand `d` fit a residual vector:
/// `min_{r: d^r > 0} ⌊res^r / d^r⌋` (tolerant floor), capped at `cap`.
pub(crate) fn units_fitting(d: &Vector, residual: impl Fn(usize) -> f64, cap: u32) -> u32 {
    let mut n = f64::from(cap);
    for (r, &dr) in d.iter().enumerate() {
        if dr > 0.0 {
            n = n.min(floor_tol(residual(r).max(0.0) / dr));
        }
    }
    if n <= 0.0 { 0 } else { n as u32 }
}

/// One parameter-server job in the two-configuration model: the
/// scheduler's working copy of a job of the instance, which its reports
/// ([`LocalityReport::jobs`](super::LocalityReport::jobs)) and its engine
/// ([`Locality::engine`](super::Locality::engine)) hand out as they are;
/// its fields are crate-private (they show in `Debug` output).
///
/// Slots are 0-based; `δ = t̂ − arrival`.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalityJob {
    /// The job's id.
    pub(crate) id: JobId,
    /// Arrival slot `a_i`.
    pub(crate) arrival: u32,
    /// Last slot of the window, `end_i = min(T − 1, a_i + horizon − 1)`.
    pub(crate) end: u32,
    /// Workload `Q_i = E·N·M`, mini-batches.
    pub(crate) minibatches: f64,
    /// Worker cap per slot, `N_i = min(data_chunks, max_workers)`.
    pub(crate) max_workers: u32,
    /// PS cap per slot (the job's `max_ps`).
    pub(crate) max_ps: u32,
    /// Worker demand `w_i` (DISTRIBUTED), [`ledger_units`].
    pub(crate) worker: Vector,
    /// PS demand `s_i` (DISTRIBUTED), [`ledger_units`].
    pub(crate) ps: Vector,
    /// `θ^D = τ + 2e/b`, seconds per mini-batch in DISTRIBUTED.
    pub(crate) theta_dist_s: f64,
    /// `r^D = Δ/θ^D`, mini-batches per worker and slot in DISTRIBUTED.
    pub(crate) rate_dist: f64,
    /// `r^L_h = Δ/θ^L_h` with `θ^L_h = τ + 2e/b_int,h`, per machine.
    pub(crate) rate_local: Vec<f64>,
    /// `f_i(δ)`.
    pub(crate) utility: Utility,
    /// Machines (by position) the job may use; `None`: any.
    pub(crate) allowed: Option<Vec<bool>>,
    /// Whether the job may run LOCAL at all (default true;
    /// [`without_local`](Self::without_local) clears it, so that no machine
    /// is [`local_allowed`](Self::local_allowed) and every plan is
    /// DISTRIBUTED).
    pub(crate) local: bool,
    /// Whether a session widened the job's window past its plan window
    /// because its run on the idle cluster needs more than half of it (see
    /// [`with_window_widened`](Self::with_window_widened)): the oracle then
    /// plans it by the greedy walk, not by deadline enumeration.
    pub(crate) widened: bool,
}

impl LocalityJob {
    /// The model of `job` with a plan window of `horizon` slots and the
    /// intra-machine bandwidth `b_int,i = κ·b_i` when `intra_factor` is
    /// `Some(κ)`, else each machine's
    /// [`intra_bandwidth_bps`](crate::model::Machine::intra_bandwidth_bps).
    ///
    /// # Errors
    ///
    /// [`LocalityError::UnsupportedJob`] when the job is a ring-all-reduce
    /// job, is not elastic and preemptible, has `b_i ≤ 0` or `B_i < b_i`,
    /// a positive demand entry outside `[10⁻⁹, 10¹⁵]` in [`ledger_units`],
    /// a utility `f(0) ≥ 10²⁰`, or a rate that is not positive and finite;
    /// [`LocalityError::InvalidOption`] for `horizon = 0` or `κ` not
    /// positive and finite.
    pub(crate) fn from_job(
        instance: &Instance,
        cluster: &LocalityCluster,
        job: &Job,
        horizon: u32,
        intra_factor: Option<f64>,
    ) -> Result<Self, LocalityError> {
        check_options(horizon, intra_factor)?;
        let arrival = instance.arrival_slot(job);
        let end = arrival
            .saturating_add(horizon - 1)
            .min(instance.horizon_slots().saturating_sub(1));
        Self::planned(cluster, job, arrival, end, intra_factor)
    }

    /// [`from_job`](Self::from_job) for a job whose utility counts from
    /// slot `arrival` and whose plan ends by slot `end` (inclusive), on
    /// `cluster`'s slots (a session's job, planned in its window).
    ///
    /// # Errors
    ///
    /// As [`from_job`](Self::from_job).
    pub(crate) fn planned(
        cluster: &LocalityCluster,
        job: &Job,
        arrival: u32,
        end: u32,
        intra_factor: Option<f64>,
    ) -> Result<Self, LocalityError> {
        let bad = |reason: String| LocalityError::UnsupportedJob {
            job: job.id,
            reason,
        };
        let job = &*crate::algorithms::at_one_speed(job, &cluster.gpu_types).map_err(bad)?;
        check_options(1, intra_factor)?;
        let Architecture::ParameterServer(p) = &job.architecture else {
            return Err(bad(
                "the locality scheduler plans parameter-server jobs only (ring-all-reduce jobs have no PS to co-locate)".into(),
            ));
        };
        if job.discipline.elasticity != Elasticity::Elastic || !job.discipline.preemptible {
            return Err(bad(
                "plans change worker counts and configurations between slots and may skip slots; the job must be elastic and preemptible".into(),
            ));
        }
        let worker = ledger_units(&p.worker);
        let ps = ledger_units(&p.ps);
        check_demands(&worker, &ps).map_err(bad)?;
        let best = job.utility.value(0);
        if best.is_nan() || best >= SOLVER_INFINITY {
            return Err(bad(format!(
                "utility f(0) = {} is at or above 1e20, where the LP solver reads numbers as infinite",
                Num(best)
            )));
        }
        let slot = cluster.slot_length_s;
        let theta_dist_s = p.minibatch_time_s();
        let rate = |theta: f64| slot / theta;
        let rate_dist = rate(theta_dist_s);
        let rate_local: Vec<f64> = cluster
            .intra_bandwidth_bps
            .iter()
            .map(|&bw| {
                let b_int = intra_factor.map_or(bw, |k| k * p.worker.nic_bps);
                let theta = if p.gradient_bytes == 0.0 {
                    p.minibatch_compute_s
                } else {
                    p.minibatch_compute_s + 2.0 * p.gradient_bytes / b_int
                };
                rate(theta)
            })
            .collect();
        if let Some(r) = std::iter::once(&rate_dist)
            .chain(&rate_local)
            .find(|r| !(r.is_finite() && **r > 0.0))
        {
            return Err(bad(format!(
                "a rate Δ/θ = {} mini-batches per worker-slot is not positive and finite (θ must be positive)",
                Num(*r)
            )));
        }
        let allowed = job.allowed_machines.as_ref().map(|list| {
            cluster
                .machine_ids
                .iter()
                .map(|m| list.contains(m))
                .collect()
        });
        Ok(LocalityJob {
            id: job.id,
            arrival,
            end,
            minibatches: p.total_minibatches() as f64,
            max_workers: p.data_chunks.min(p.max_workers),
            max_ps: p.max_ps,
            worker,
            ps,
            theta_dist_s,
            rate_dist,
            rate_local,
            utility: job.utility.clone(),
            allowed,
            local: true,
            widened: false,
        })
    }

    /// The same job usable from slot `earliest` on (a job that arrives
    /// inside a slot in the simulator): its first slot becomes
    /// `max(earliest, a_i)`, its window end stays, and its utility is
    /// re-based so that completing in slot `t` is still worth
    /// `f_i(t − a_i)` (a table over the remaining window).
    pub(crate) fn starting_at(mut self, earliest: u32) -> Self {
        if earliest <= self.arrival {
            return self;
        }
        let shift = earliest - self.arrival;
        let len = self.end.saturating_sub(earliest);
        let values = (0..=len)
            .map(|d| self.utility.value(d.saturating_add(shift)))
            .collect();
        self.utility = Utility::Table { values };
        self.arrival = earliest;
        self
    }

    /// The job with LOCAL disabled (`u ≡ 0`): no machine may run it LOCAL,
    /// `r^max = r^D`, and the per-job program has no LOCAL column.
    pub(crate) fn without_local(mut self) -> Self {
        self.local = false;
        self
    }

    /// The job marked as planned in a window widened past the plan window
    /// (its run on the idle cluster needs more than half of that window).
    pub(crate) fn with_window_widened(mut self) -> Self {
        self.widened = true;
        self
    }

    /// Whether the job may use the machine at `position`.
    pub(crate) fn may_use(&self, position: usize) -> bool {
        self.allowed
            .as_ref()
            .is_none_or(|a| a.get(position).copied().unwrap_or(false))
    }

    /// The worker demand in LOCAL, `w^L`: `w` with its NIC entry set to 0.
    pub(crate) fn worker_local(&self) -> Vector {
        let mut v = self.worker;
        v[NIC] = 0.0;
        v
    }

    /// The PS demand in LOCAL, `s^L`: `s` with its NIC entry set to 0.
    pub(crate) fn ps_local(&self) -> Vector {
        let mut v = self.ps;
        v[NIC] = 0.0;
        v
    }

    /// `b_i / B_i`, the PS bandwidth share of one worker (`≤ 1`).
    pub(crate) fn bandwidth_ratio(&self) -> f64 {
        self.worker[NIC] / self.ps[NIC]
    }

    /// PSs for `y` DISTRIBUTED workers, `⌈y·b/B⌉` (tolerant), at least 1
    /// when `y ≥ 1`.
    pub(crate) fn zreq(&self, y: u32) -> u32 {
        crate::model::ps_for_bandwidth(y, self.worker[NIC], self.ps[NIC]).min(y)
    }

    /// Whether machine `h` may run the job LOCAL: LOCAL is enabled for the
    /// job, `h` hosts workers and PSs and the job may use it.
    pub(crate) fn local_allowed(&self, cluster: &LocalityCluster, h: usize) -> bool {
        self.local && cluster.hosts_workers[h] && cluster.hosts_ps[h] && self.may_use(h)
    }

    /// `r^max = max(r^D, max r^L_h)` over the machines that may run the
    /// job LOCAL.
    pub(crate) fn rate_max(&self, cluster: &LocalityCluster) -> f64 {
        (0..cluster.machines())
            .filter(|&h| self.local_allowed(cluster, h))
            .map(|h| self.rate_local[h])
            .fold(self.rate_dist, f64::max)
    }

    /// `d_min = ⌈Q/(N·r^max)⌉` (tolerant, at least 1): a lower bound on
    /// the slots any plan needs.
    pub(crate) fn d_min(&self, cluster: &LocalityCluster) -> u32 {
        let v = ceil_tol(self.minibatches / (f64::from(self.max_workers) * self.rate_max(cluster)));
        to_u32(v.max(1.0))
    }

    /// `δ_min = d_min − 1`: the smallest elapsed time any plan reaches.
    pub(crate) fn delta_min(&self, cluster: &LocalityCluster) -> u32 {
        self.d_min(cluster) - 1
    }

    /// `W^D = ⌈Q/r^D⌉` (tolerant): worker-slots needed in DISTRIBUTED.
    pub(crate) fn dist_worker_slots(&self) -> f64 {
        ceil_tol(self.minibatches / self.rate_dist)
    }

    /// `f_i(t − a_i)` for a completion in slot `t ≥ arrival`.
    pub(crate) fn utility_at(&self, t: u32) -> f64 {
        self.utility.value(t.saturating_sub(self.arrival))
    }

    /// An upper bound on the mini-batches any one slot of any plan does on
    /// the empty cluster: the best LOCAL pace (exact: one machine, one PS)
    /// or `y·r^D` for the most DISTRIBUTED workers `y ≤ N` that fit on the
    /// machines hosting workers when the `zreq(y)` PSs they need fit on the
    /// machines hosting PSs, each role counted against full capacities (a
    /// relaxation: workers and PSs sharing a machine are not charged
    /// together). A job whose window this pace cannot finish has no plan
    /// at all; 0 when neither configuration can run.
    pub(crate) fn pace_upper_bound(&self, cluster: &LocalityCluster) -> f64 {
        let n = self.max_workers;
        let (wl, sl) = (self.worker_local(), self.ps_local());
        let mut best = 0.0_f64;
        for h in (0..cluster.machines()).filter(|&h| self.local_allowed(cluster, h)) {
            let c = cluster.capacity[h];
            if units_fitting(&sl, |r| c[r], 1) == 1 {
                let y = units_fitting(&wl, |r| c[r] - sl[r], n);
                best = best.max(f64::from(y) * self.rate_local[h]);
            }
        }
        let fits = |d: &Vector, roles: &[bool], cap: u32| -> u64 {
            (0..cluster.machines())
                .filter(|&h| roles[h] && self.may_use(h))
                .map(|h| u64::from(units_fitting(d, |r| cluster.capacity[h][r], cap)))
                .sum()
        };
        let workers = fits(&self.worker, &cluster.hosts_workers, n).min(u64::from(n));
        let ps = fits(&self.ps, &cluster.hosts_ps, self.max_ps).min(u64::from(self.max_ps));
        let mut y = workers as u32;
        while y > 0 && u64::from(self.zreq(y)) > ps {
            y -= 1;
        }
        best.max(f64::from(y) * self.rate_dist)
    }

    /// The most mini-batches one slot of a simple plan does on the empty
    /// cluster: LOCAL on the best machine, or DISTRIBUTED with all PSs on
    /// one machine and the workers on the others or beside them. A lower
    /// bound on the fastest pace; 0 when no plan exists.
    pub(crate) fn empty_cluster_pace(&self, cluster: &LocalityCluster) -> f64 {
        let n = self.max_workers;
        let cap = |h: usize| cluster.capacity[h];
        let (wl, sl) = (self.worker_local(), self.ps_local());
        let mut best = 0.0_f64;
        for h in 0..cluster.machines() {
            if self.local_allowed(cluster, h) {
                let c = cap(h);
                if units_fitting(&sl, |r| c[r], 1) == 1 {
                    let y = units_fitting(&wl, |r| c[r] - sl[r], n);
                    best = best.max(f64::from(y) * self.rate_local[h]);
                }
            }
        }
        let worker_cap = |h: usize| -> u32 {
            if cluster.hosts_workers[h] && self.may_use(h) {
                let c = cap(h);
                units_fitting(&self.worker, |r| c[r], n)
            } else {
                0
            }
        };
        for k in (0..cluster.machines()).filter(|&k| cluster.hosts_ps[k] && self.may_use(k)) {
            let c = cap(k);
            let zk = units_fitting(&self.ps, |r| c[r], self.max_ps);
            if zk == 0 {
                continue;
            }
            // PSs on k only, workers elsewhere.
            let others: u64 = (0..cluster.machines())
                .filter(|&h| h != k)
                .map(|h| u64::from(worker_cap(h)))
                .sum();
            let mut y = others.min(u64::from(n)) as u32;
            while y > 0 && self.zreq(y) > zk {
                y -= 1;
            }
            best = best.max(f64::from(y) * self.rate_dist);
            // Workers beside their PSs on k.
            if cluster.hosts_workers[k] {
                let mut y = worker_cap(k);
                while y > 0 && {
                    let z = f64::from(self.zreq(y));
                    (0..RESOURCES).any(|r| {
                        f64::from(y) * self.worker[r] + z * self.ps[r] > c[r] * (1.0 + 1e-9) + 1e-12
                    })
                } {
                    y -= 1;
                }
                best = best.max(f64::from(y) * self.rate_dist);
            }
        }
        best
    }
}

/// `v` (an integral float) as a `u32`, saturating.
pub(crate) fn to_u32(v: f64) -> u32 {
    if v >= f64::from(u32::MAX) {
        u32::MAX
    } else if v > 0.0 {
        v as u32
    } else {
        0
    }
}

fn check_options(horizon: u32, intra_factor: Option<f64>) -> Result<(), LocalityError> {
    if horizon == 0 {
        return Err(LocalityError::InvalidOption {
            name: "horizon",
            reason: "the plan window must have at least one slot".into(),
        });
    }
    if let Some(k) = intra_factor
        && !(k.is_finite() && k > 0.0)
    {
        return Err(LocalityError::InvalidOption {
            name: "intra_factor",
            reason: format!("κ = {} is not positive and finite", Num(k)),
        });
    }
    Ok(())
}

/// Demand entries the per-job program can hold, `b > 0`, `B ≥ b`.
fn check_demands(worker: &Vector, ps: &Vector) -> Result<(), String> {
    for (task, d) in [("worker", worker), ("PS", ps)] {
        if let Some((r, v)) = d
            .iter()
            .enumerate()
            .find(|(_, v)| **v > 0.0 && !(*v >= &MIN_COEFFICIENT && *v <= &MAX_COEFFICIENT))
        {
            return Err(format!(
                "{task} demand {} = {} is positive but outside [{}, {}], the coefficients the LP solver accepts",
                RESOURCE_NAMES[r],
                Num(*v),
                Num(MIN_COEFFICIENT),
                Num(MAX_COEFFICIENT)
            ));
        }
    }
    let (b, big_b) = (worker[NIC], ps[NIC]);
    if b.is_nan() || b <= 0.0 {
        return Err(format!(
            "worker bandwidth b_i = {} Gbit/s must be positive",
            Num(b)
        ));
    }
    if big_b.is_nan() || big_b < b {
        return Err(format!(
            "PS bandwidth B_i = {} Gbit/s must be ≥ worker bandwidth b_i = {} Gbit/s",
            Num(big_b),
            Num(b)
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::units::{gb, gbps, mb};
    use crate::model::{Cluster, Machine, PsJob, Resources};

    /// The common hand set-up: two machines `[4, 16, 64 GB, 10 Gbit/s]`,
    /// `Q = 400`, `τ = 0.5 s`, `e = 125 MB`, `b = 1`, `B = 4` Gbit/s,
    /// Δ = 100 s.
    fn setup(b_int: f64, kappa: Option<f64>) -> (LocalityCluster, LocalityJob) {
        let cap = Resources::zero()
            .gpus(4.0)
            .cpu_cores(16.0)
            .memory(gb(64.0))
            .nic(gbps(10.0));
        let machines = (0..2)
            .map(|i| Machine::new(MachineId(i), cap, gbps(b_int)))
            .collect();
        let job = Job::new(
            JobId(0),
            0.0,
            PsJob {
                epochs: 1,
                data_chunks: 4,
                minibatches_per_chunk: 100,
                minibatch_compute_s: 0.5,
                gradient_bytes: mb(125.0),
                worker: Resources::zero()
                    .gpus(1.0)
                    .cpu_cores(2.0)
                    .memory(gb(8.0))
                    .nic(gbps(1.0)),
                ps: Resources::zero()
                    .cpu_cores(2.0)
                    .memory(gb(8.0))
                    .nic(gbps(4.0)),
                max_workers: 8,
                max_ps: 4,
                ..PsJob::default()
            },
        );
        let inst = Instance::new(Cluster::new(machines), vec![job], 100.0, 4).unwrap();
        let cl = LocalityCluster::from_instance(&inst).unwrap();
        let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], 3, kappa).unwrap();
        (cl, lj)
    }

    #[test]
    fn locality_rates_window_and_derived_quantities() {
        let (cl, lj) = setup(4.0, None);
        assert_eq!((lj.arrival, lj.end), (0, 2));
        assert_eq!(lj.max_workers, 4); // min(data chunks, max workers)
        assert!((lj.theta_dist_s - 2.5).abs() < 1e-12);
        assert!((lj.rate_dist - 40.0).abs() < 1e-9);
        assert!((lj.rate_local[1] - 100.0).abs() < 1e-9);
        assert_eq!(lj.d_min(&cl), 1);
        assert_eq!(lj.dist_worker_slots(), 10.0);
        assert_eq!(lj.zreq(4), 1);
        assert_eq!(lj.zreq(5), 2);
        assert_eq!(lj.worker_local()[NIC], 0.0);
        // κ = 1: LOCAL is no faster; d_min = ⌈400/(4·40)⌉ = 3.
        let (cl, lj) = setup(4.0, Some(1.0));
        assert!((lj.rate_local[0] - 40.0).abs() < 1e-9);
        assert_eq!(lj.d_min(&cl), 3);
        assert!((lj.empty_cluster_pace(&cl) - 160.0).abs() < 1e-9);
        assert!((lj.pace_upper_bound(&cl) - 160.0).abs() < 1e-9);
    }

    #[test]
    fn locality_starting_at_keeps_utilities_from_the_arrival() {
        let (_, lj) = setup(4.0, None);
        let lj = lj.with_utility_for_test(Utility::Linear {
            g1: 100.0,
            slope: 10.0,
        });
        assert_eq!(lj.clone().starting_at(0), lj);
        let s = lj.clone().starting_at(1);
        assert_eq!((s.arrival, s.end), (1, 2));
        assert_eq!(s.utility_at(1), 90.0);
        assert_eq!(s.utility_at(2), 80.0);
        assert!(!lj.without_local().local_allowed(&setup(4.0, None).0, 0));
    }

    impl LocalityJob {
        fn with_utility_for_test(mut self, u: Utility) -> Self {
            self.utility = u;
            self
        }
    }

    #[test]
    fn locality_bad_options_are_typed() {
        let (_, _) = setup(4.0, None);
        assert!(matches!(
            check_options(0, None),
            Err(LocalityError::InvalidOption {
                name: "horizon",
                ..
            })
        ));
        assert!(check_options(1, Some(f64::NAN)).is_err());
        let mut w = [1.0, 0.0, 0.0, 0.0, 1.0];
        let s = [0.0, 1.0, 0.0, 0.0, 0.5];
        assert!(check_demands(&w, &s).is_err()); // B < b
        w[2] = 1e-12;
        assert!(check_demands(&w, &[0.0, 1.0, 0.0, 0.0, 2.0]).is_err());
    }
}

/// Shared unit-test set-ups.
#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;
    use crate::model::units::{gb, gbps, mb};
    use crate::model::{Cluster, Machine, PsJob, Resources, Utility};

    /// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with `b_int` Gbit/s
    /// between tasks on it.
    pub(crate) fn machine(id: u32, b_int: f64, hosts: Hosting) -> Machine {
        let cap = Resources::zero()
            .gpus(4.0)
            .cpu_cores(16.0)
            .memory(gb(64.0))
            .nic(gbps(10.0));
        Machine::new(MachineId(id), cap, gbps(b_int)).hosting(hosts)
    }

    /// The job of the common set-up: `Q = 400`, `τ = 0.5 s`, `e = 125 MB`,
    /// `b = 1`, `B = 4` Gbit/s, worker `[1, 2, mem_w, 1]`, PS `[0, 2, mem_s, 4]`,
    /// `f(δ) = 100 − 10δ`.
    pub(crate) fn job(id: u32, mem_w: f64, mem_s: f64) -> Job {
        Job::new(
            JobId(id),
            0.0,
            PsJob {
                epochs: 1,
                data_chunks: 4,
                minibatches_per_chunk: 100,
                minibatch_compute_s: 0.5,
                gradient_bytes: mb(125.0),
                worker: Resources::zero()
                    .gpus(1.0)
                    .cpu_cores(2.0)
                    .memory(gb(mem_w))
                    .nic(gbps(1.0)),
                ps: Resources::zero()
                    .cpu_cores(2.0)
                    .memory(gb(mem_s))
                    .nic(gbps(4.0)),
                max_workers: 4,
                max_ps: 4,
                ..PsJob::default()
            },
        )
        .with_utility(Utility::Linear {
            g1: 100.0,
            slope: 10.0,
        })
    }

    /// The common hand set-up with `b_int = 4` Gbit/s, machine 0 with role
    /// `hosts`, machine 1 hosting both, `f(δ) = 100 − 10δ`, `T = 4`.
    pub(crate) fn l1(hosts: Hosting) -> (LocalityCluster, LocalityJob) {
        let inst = l1_instance(hosts);
        let cl = LocalityCluster::from_instance(&inst).unwrap();
        let lj = LocalityJob::from_job(&inst, &cl, &inst.jobs()[0], DEFAULT_HORIZON, None).unwrap();
        (cl, lj)
    }

    /// [`l1`]'s instance: its cluster and its one job, 100-s slots.
    pub(crate) fn l1_instance(hosts: Hosting) -> Instance {
        let machines = vec![machine(0, 4.0, hosts), machine(1, 4.0, Hosting::Both)];
        Instance::new(Cluster::new(machines), vec![job(0, 8.0, 8.0)], 100.0, 4).unwrap()
    }
}

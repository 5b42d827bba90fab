//! Online ring-all-reduce baselines with reserved bandwidth, for comparing
//! the GADGET-style scheduler (after the abstract of GADGET, Yu, Tian, Ji,
//! Wu, Rajan, Liu, IEEE INFOCOM 2022; the crate's own design):
//! [`SjfBcoOnline`] and [`RarOnlineRandom`]. Both run every job at its
//! largest allowed worker count, place workers on GPU ids (one per worker)
//! and leave the reservation to the simulator, which charges a ring
//! spanning `n ≥ 2` servers its reserved bandwidth `b` per direction on
//! each of them ([`RarJob::reserved_bandwidth_bps`]). Both reject, on
//! arrival, only a ring that fits nowhere on the empty cluster
//! ([`Rejection::Unschedulable`](crate::sim::Rejection::Unschedulable),
//! with the reason): its workers fit on no single machine it may use, and
//! the machines, each keeping `b` of NIC besides its workers, hold fewer
//! than all of them together.
//!
//! [`RarJob::reserved_bandwidth_bps`]: crate::model::RarJob::reserved_bandwidth_bps

mod policy;
mod random;

pub use policy::SjfBcoOnline;
pub use random::RarOnlineRandom;

use super::{RarServer, SjfBcoError, usable_servers};
use crate::algorithms::gadget::GadgetError;
use std::collections::BTreeMap;

use crate::model::units::Num;
use crate::model::{
    Architecture, FIT_TOL, GpuId, Instance, Job, JobId, RarJob, Resources, TaskKind, WorkerCounts,
};
use crate::schedule::{Placement, Tasks};
use crate::sim::{Action, JobView, Rejection, SimView};

use crate::placement::workers_fitting;

/// The usable GPUs of an instance for ring workers, numbered flat
/// (server-major, local index minor); server `s` is machine position `s`.
#[derive(Debug, Clone, PartialEq)]
struct RingLayout {
    servers: Vec<RarServer>,
    gpu_server: Vec<u32>,
}

impl RingLayout {
    /// The layout of `instance`, whose jobs must all be ring-all-reduce
    /// (`policy` names the baseline in errors).
    ///
    /// # Errors
    ///
    /// [`GadgetError::UnsupportedJob`] for a parameter-server job;
    /// [`GadgetError::TooLarge`] above `2²⁰` usable GPUs.
    fn new(instance: &Instance, policy: &str) -> crate::Result<Self> {
        let mut workers = Vec::with_capacity(instance.jobs().len());
        for job in instance.jobs() {
            match &job.architecture {
                Architecture::RingAllReduce(r) => workers.push(&r.worker),
                Architecture::ParameterServer(_) => {
                    return Err(GadgetError::UnsupportedJob {
                        job: job.id,
                        reason: format!(
                            "not a ring-all-reduce job (the {policy} baseline places rings only)"
                        ),
                    }
                    .into());
                }
            }
        }
        let servers = usable_servers(instance, workers.iter().copied()).map_err(|e| match e {
            SjfBcoError::TooLarge { what, value, limit } => {
                crate::Error::from(GadgetError::TooLarge { what, value, limit })
            }
            other => other.into(),
        })?;
        let gpu_server = servers
            .iter()
            .enumerate()
            .flat_map(|(i, s)| std::iter::repeat_n(i as u32, s.gpus as usize))
            .collect();
        Ok(RingLayout {
            servers,
            gpu_server,
        })
    }

    /// The crate's id of a flat GPU.
    fn gpu_id(&self, g: usize) -> GpuId {
        let s = &self.servers[self.gpu_server[g] as usize];
        GpuId {
            machine: s.machine,
            index: (g - s.first_gpu) as u32,
        }
    }

    /// The flat GPUs of server `s`.
    fn gpus_of(&self, s: usize) -> std::ops::Range<usize> {
        let srv = &self.servers[s];
        srv.first_gpu..srv.first_gpu + srv.gpus as usize
    }
}

/// What is free during one decision: resources per machine (net of tasks
/// and reservations) and every flat GPU, updated as jobs are placed.
struct Room {
    resources: Vec<Resources>,
    gpu_free: Vec<bool>,
}

impl Room {
    /// What `view` shows free now.
    fn now(layout: &RingLayout, view: &SimView<'_>) -> Self {
        let gpu_free = (0..layout.gpu_server.len())
            .map(|g| view.gpu_holder(layout.gpu_id(g)).is_none())
            .collect();
        Room {
            resources: view.free_all().to_vec(),
            gpu_free,
        }
    }

    /// How many of the ring `r`'s workers server `s` can take besides what
    /// is placed (`cap` at most), keeping `b` of NIC per direction for the
    /// ring when `multi`; 0 when the job may not use the server.
    fn workers_on(&self, view: &SimView<'_>, job: &Job, r: &RarJob, s: usize, multi: bool) -> u32 {
        let m = &view.instance().cluster().machines[s];
        if !job.may_use(m.id) || !m.hosts.allows(TaskKind::Worker) {
            return 0;
        }
        let mut room = self.resources[s];
        if multi {
            room.nic_bps -= r.reserved_nic_bps(2);
            if room.nic_bps < -FIT_TOL * self.resources[s].nic_bps.abs().max(1.0) {
                return 0;
            }
        }
        workers_fitting(&r.worker, &room, u32::MAX)
    }

    /// The free flat GPUs of server `s`, ascending.
    fn free_of<'a>(&'a self, layout: &RingLayout, s: usize) -> impl Iterator<Item = usize> + 'a {
        layout.gpus_of(s).filter(|&g| self.gpu_free[g])
    }

    /// Whether the GPUs `sel` (flat, ascending) fit: on one server its
    /// workers fit; across servers each also keeps `b` for the ring.
    fn fits(
        &self,
        view: &SimView<'_>,
        layout: &RingLayout,
        job: &Job,
        r: &RarJob,
        sel: &[usize],
    ) -> bool {
        let parts = parts(layout, sel);
        let multi = parts.len() >= 2;
        parts
            .iter()
            .all(|&(s, y)| self.workers_on(view, job, r, s, multi) >= y)
    }

    /// Starts `job` on the flat GPUs `sel`: the action, with what it takes
    /// (its workers, plus `b` per server when it spans several) removed.
    fn start(
        &mut self,
        layout: &RingLayout,
        view: &SimView<'_>,
        job: &Job,
        sel: &[usize],
    ) -> Action {
        let parts = parts(layout, sel);
        let machines = &view.instance().cluster().machines;
        let mut placement = Placement::new();
        for &(s, y) in &parts {
            placement.push((machines[s].id, Tasks::new(y, 0)));
            self.resources[s] =
                self.resources[s].minus(&job.demand_with_reservation(y, 0, parts.len()));
        }
        for &g in sel {
            self.gpu_free[g] = false;
        }
        Action::SetAllocation {
            job: job.id,
            placement,
            gpus: Some(sel.iter().map(|&g| layout.gpu_id(g)).collect()),
            config: None,
        }
    }
}

/// Why the ring `r` of `job` at `w` workers fits nowhere on the empty
/// cluster (the module's rule), or `None` when it fits.
fn ring_misfit(instance: &Instance, job: &Job, r: &RarJob, w: u32) -> Option<Rejection> {
    let b = r.reserved_nic_bps(2);
    let (mut one, mut spread) = (0u32, 0u64);
    let mut nic = 0.0f64;
    for m in &instance.cluster().machines {
        if !job.may_use(m.id) || !m.hosts.allows(TaskKind::Worker) {
            continue;
        }
        nic = nic.max(m.capacity.nic_bps);
        one = one.max(workers_fitting(&r.worker, &m.capacity, w));
        let mut room = m.capacity;
        room.nic_bps -= b;
        if room.nic_bps >= -FIT_TOL * m.capacity.nic_bps.abs().max(1.0) {
            spread += u64::from(workers_fitting(&r.worker, &room, w));
        }
    }
    if one >= w || spread >= u64::from(w) {
        return None;
    }
    let why = if b > 0.0 {
        format!(
            "a ring of {w} workers fits on no machine (at most {one}), and across machines, \
             each keeping its reserved_bandwidth_bps {} within its NIC (at most {} per \
             direction), only {spread} fit",
            Num(b),
            Num(nic)
        )
    } else {
        format!("a ring of {w} workers: the machines it may use hold at most {spread} of them")
    };
    Some(Rejection::Unschedulable { why })
}

/// The rejections of one run: each job checked once ([`ring_misfit`]).
#[derive(Debug, Clone, PartialEq, Default)]
struct Misfits {
    seen: BTreeMap<JobId, Option<Rejection>>,
}

impl Misfits {
    /// Rejects, now, the queued rings of `view` that fit nowhere (each
    /// checked once); returns the actions and leaves the others.
    fn reject<'v>(&mut self, view: &SimView<'v>, queue: &mut Vec<JobView<'v>>) -> Vec<Action> {
        let mut out = Vec::new();
        queue.retain(|j| {
            let job = j.job();
            let misfit = self.seen.entry(job.id).or_insert_with(|| {
                ring_of(job).and_then(|(r, w)| ring_misfit(view.instance(), job, r, w))
            });
            if misfit.is_some() {
                out.push(Action::Reject { job: job.id });
            }
            misfit.is_none()
        });
        out
    }

    /// The reason given for `job`, if it was rejected.
    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.seen.get(&job).cloned().flatten()
    }
}

/// `(server, GPUs)` of flat GPUs `sel` (ascending), server ascending.
fn parts(layout: &RingLayout, sel: &[usize]) -> Vec<(usize, u32)> {
    let mut out: Vec<(usize, u32)> = Vec::new();
    for &g in sel {
        let s = layout.gpu_server[g] as usize;
        match out.last_mut() {
            Some((last, y)) if *last == s => *y += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

/// The ring of a job and its worker count `w`: the largest it allows.
fn ring_of(job: &Job) -> Option<(&RarJob, u32)> {
    match &job.architecture {
        Architecture::RingAllReduce(r) => Some((r, WorkerCounts::max(&r.workers))),
        Architecture::ParameterServer(_) => None,
    }
}

/// Tells a new run from the next event of the current one: another
/// instance, or time going backwards.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
struct RunKey {
    instance: usize,
    jobs: usize,
    now_s: f64,
}

impl RunKey {
    /// Whether `view` starts a new run; remembers it.
    fn is_new_run(&mut self, view: &SimView<'_>) -> bool {
        let instance = std::ptr::from_ref(view.instance()) as usize;
        let jobs = view.instance().jobs().len();
        let new = instance != self.instance || jobs != self.jobs || view.now_s() < self.now_s;
        *self = RunKey {
            instance,
            jobs,
            now_s: view.now_s(),
        };
        new
    }
}

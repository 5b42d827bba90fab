//! Batches planned around what runs: any [`Algorithm`] plans a batch of
//! jobs at the current slot of a shared
//! [`crate::state::ClusterState`], on what the state leaves
//! free, and its plans are committed to the state.
//!
//! The batch sees a **residual cluster**: each machine with, per resource,
//! the least left over the batch's horizon (capacity minus every hold), and
//! as many GPUs as it has ids free in every slot of that horizon. The
//! algorithm solves the batch on it as an instance of its own — every job
//! available at slot 0, the horizon given — so its certificate is about the
//! residual cluster; its slots are shifted to the state's current slot and
//! its GPU indices mapped to the free ids before the plans are committed.
//! The residual is static (the least over the horizon), so a batch never
//! collides with a hold that ends inside the horizon: it plans around it
//! for the whole horizon, a conservative choice.

use rand::Rng;

use crate::error::Result;
use crate::model::{Cluster, GpuId, Instance, Job, Machine, MachineId};
use crate::schedule::{JobSchedule, Segment};
use crate::state::{ClusterState, Holder, StateError};

use super::{Algorithm, Solved};

/// A batch planned around what runs: the algorithm's result on the
/// residual cluster and the plans as held in the state (slots from the
/// state's current slot, GPU ids of the cluster).
#[derive(Debug, Clone)]
pub struct AroundRun<R> {
    /// The algorithm's result on the residual instance (its slots start
    /// at 0; its certificate is about the residual cluster).
    pub solved: Solved<R>,
    /// The residual instance the batch was planned on.
    pub residual: Instance,
    /// The first slot of the batch in the state (the first boundary at or
    /// after the state's time).
    pub offset: u32,
    /// Every job's plan as held in the state (rejected jobs hold nothing).
    pub held: Vec<JobSchedule>,
}

/// Plans `jobs` with `algorithm` from `state`'s next slot boundary over
/// `horizon` slots, around every hold, and commits the admitted plans to `state`
/// (all or nothing).
///
/// # Errors
///
/// The residual instance's validation errors (for example a horizon of 0
/// slots); the algorithm's errors (for example no GPU left for a batch of
/// rings); [`StateError`] when the state refuses a plan (every plan of the
/// batch committed before it is released, so nothing changes).
pub fn plan_around<A: Algorithm, R: Rng>(
    algorithm: &A,
    state: &mut ClusterState,
    jobs: &[Job],
    horizon: u32,
    rng: &mut R,
) -> Result<AroundRun<A::Report>> {
    // From the next slot boundary: the slot in progress has begun, and a
    // release at `now` frees a plan whole.
    let offset = state.slot_from(state.now_s());
    let window = offset..offset.saturating_add(horizon);
    let (cluster, free_ids) = residual_cluster(state, window.clone())?;
    let batch: Vec<Job> = jobs
        .iter()
        .map(|j| Job {
            arrival_s: 0.0,
            ..j.clone()
        })
        .collect();
    let residual = Instance::new(cluster, batch, state.slot_length_s(), horizon)?;
    let solved = algorithm.solve(&residual, rng)?;
    let mut held = Vec::with_capacity(jobs.len());
    for (job, js) in jobs.iter().zip(&solved.schedule.jobs) {
        let segments: Vec<Segment> = js
            .segments
            .iter()
            .map(|s| shifted(s, offset, &free_ids, state.machines()))
            .collect();
        if !js.admitted || segments.is_empty() {
            held.push(JobSchedule::rejected(job.id));
            continue;
        }
        match state.commit_job(job, &segments) {
            Ok(segments) => held.push(JobSchedule {
                job: job.id,
                admitted: true,
                segments,
            }),
            Err(e) => {
                for h in held.iter().filter(|h| h.admitted) {
                    state.release(Holder::Job(h.job), state.now_s())?;
                }
                return Err(e.into());
            }
        }
    }
    Ok(AroundRun {
        solved,
        residual,
        offset,
        held,
    })
}

/// The residual cluster over `window`: every machine with its least left
/// per resource and as many GPUs as ids free in every slot; and those ids,
/// by machine position.
fn residual_cluster(
    state: &ClusterState,
    window: std::ops::Range<u32>,
) -> std::result::Result<(Cluster, Vec<Vec<GpuId>>), StateError> {
    let mut machines = Vec::with_capacity(state.machines().len());
    let mut free_ids = Vec::with_capacity(state.machines().len());
    for m in &state.cluster().machines {
        let mut least = m.capacity;
        for t in window.clone() {
            least = least.min(&state.residual(m.id, t)?);
        }
        let ids = state.free_gpus(m.id, window.clone())?;
        least.gpus = least.gpus.min(ids.len() as f64);
        machines.push(Machine {
            capacity: least,
            ..m.clone()
        });
        free_ids.push(ids);
    }
    Ok((
        Cluster {
            machines,
            ..state.cluster().clone()
        },
        free_ids,
    ))
}

/// `s` moved `offset` slots on, its GPU indices (positions among the
/// machine's free ids in the residual cluster) mapped to those ids.
fn shifted(s: &Segment, offset: u32, free_ids: &[Vec<GpuId>], machines: &[MachineId]) -> Segment {
    let gpus = s.gpus.as_ref().map(|list| {
        list.iter()
            .map(|g| {
                machines
                    .iter()
                    .position(|&m| m == g.machine)
                    .and_then(|p| free_ids[p].get(g.index as usize).copied())
                    .unwrap_or(*g)
            })
            .collect()
    });
    Segment {
        slots: s.slots.start + offset..s.slots.end + offset,
        gpus,
        ..s.clone()
    }
}

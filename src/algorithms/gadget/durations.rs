//! Job durations under the scheduler's model, for workload generators that
//! calibrate jobs to it (the GADGET-style evaluation draws iteration counts
//! from a target duration and sets utility midpoints from the shortest
//! one).

use super::{GadgetError, GadgetModel, GadgetParams};
use crate::model::Instance;

/// Per job of `instance` (instance order), the slots one iteration takes
/// with its requested workers packed on the fewest servers of
/// `gpus_per_server` GPUs (`⌈G/gpus_per_server⌉`), under the scheduler's
/// timing model with `params`; `None` for a job without that shape (more
/// servers than the cluster has, or a worker count the model leaves out).
///
/// ```
/// use dmlsched::algorithms::gadget::{GadgetParams, packed_iteration_slots};
/// use dmlsched::model::*;
/// use dmlsched::model::units::{gb, gbps, mb};
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(8.0).cpu_cores(32.0).nic(gbps(25.0)), gb(150.0));
/// let ring = RarJob {
///     workers: WorkerCounts::Fixed(4), iterations: 3000,
///     model_bytes: mb(100.0), backward_per_iteration_s: 0.1,
///     ..RarJob::default()
/// };
/// let job = Job::new(JobId(0), 0.0, ring);
/// let instance = Instance::new(cluster, vec![job], 60.0, 100)?;
/// let tau = packed_iteration_slots(&instance, &GadgetParams::default(), 8)?;
/// assert!(tau[0].is_some_and(|t| t > 0.0));
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`Gadget::new`](crate::algorithms::Algorithm::new) and
/// [`Gadget::solve`](crate::algorithms::Algorithm::solve) before any
/// decision: invalid parameters, a job outside the ring-all-reduce model,
/// no usable server, a size guard.
pub fn packed_iteration_slots(
    instance: &Instance,
    params: &GadgetParams,
    gpus_per_server: u32,
) -> Result<Vec<Option<f64>>, GadgetError> {
    let model = GadgetModel::new(instance, params)?;
    let mut out = vec![None; model.jobs.len()];
    for j in &model.jobs {
        let g = j.requested_workers;
        let n = g.div_ceil(gpus_per_server.max(1));
        out[j.position] = j
            .shapes
            .iter()
            .find(|s| s.workers == g && s.servers == n)
            .map(|s| s.tau_slots);
    }
    Ok(out)
}

/// Per job of `instance` (instance order), its fastest shape on the empty
/// cluster within the horizon under the scheduler's model with `params`:
/// `(d^min, workers)`, the fewest slots any of its shapes takes and that
/// shape's workers (the job record's `min_slots` and `min_workers` of a
/// run); `None` for a job that fits nowhere.
///
/// ```
/// use dmlsched::algorithms::gadget::{GadgetParams, fastest_shapes};
/// use dmlsched::model::*;
/// use dmlsched::model::units::{gb, gbps, mb};
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(8.0).cpu_cores(32.0).nic(gbps(25.0)), gb(150.0));
/// let ring = RarJob {
///     workers: WorkerCounts::Fixed(4), iterations: 3000,
///     model_bytes: mb(100.0), backward_per_iteration_s: 0.1,
///     ..RarJob::default()
/// };
/// let job = Job::new(JobId(0), 0.0, ring);
/// let instance = Instance::new(cluster, vec![job], 60.0, 100)?;
/// let fastest = fastest_shapes(&instance, &GadgetParams::default())?;
/// assert!(fastest[0].is_some_and(|(slots, workers)| slots >= 1 && workers == 4));
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`packed_iteration_slots`].
pub fn fastest_shapes(
    instance: &Instance,
    params: &GadgetParams,
) -> Result<Vec<Option<(u32, u32)>>, GadgetError> {
    let model = GadgetModel::new(instance, params)?;
    let mut out = vec![None; model.jobs.len()];
    for j in &model.jobs {
        out[j.position] = j
            .empty_cluster(&model.cluster, model.cluster.horizon)
            .fastest
            .map(|k| (j.shapes[k].slots, j.shapes[k].workers));
    }
    Ok(out)
}

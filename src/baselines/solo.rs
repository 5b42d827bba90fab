//! Each job's run alone on the empty cluster ([`solo_runs`]): what the
//! fairness metrics of a run compare each job against
//! ([`SimResult::fairness`](crate::sim::SimResult::fairness)).

use super::Fifo;
use crate::model::{Instance, Job};
use crate::sim::{SimOptions, Solo, simulate};

/// Each job of `inst`, in order, run alone from time 0 on the instance's
/// empty cluster under [`Fifo`] (which gives it its requested workers on
/// the fewest machines that fit, the simulator's timing deciding how long
/// it takes): its duration and the GPUs it held on average. `None` for a
/// job that does not complete alone (larger than the cluster, or beyond
/// the horizon).
///
/// ```
/// use dmlsched::baselines::solo_runs;
/// use dmlsched::model::Instance;
/// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/instance_ring.json"))?;
/// # #[cfg(feature = "serde")] {
/// let inst = Instance::from_json(&text)?;
/// let solo = solo_runs(&inst);
/// assert_eq!(solo.len(), inst.jobs().len());
/// assert!(solo.iter().flatten().all(|s| s.duration_s > 0.0 && s.gpus >= 1.0));
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn solo_runs(inst: &Instance) -> Vec<Option<Solo>> {
    inst.jobs().iter().map(|job| solo(inst, job)).collect()
}

fn solo(inst: &Instance, job: &Job) -> Option<Solo> {
    let mut alone = job.clone();
    if let Some(d) = alone.deadline_s.as_mut() {
        *d -= job.arrival_s;
    }
    alone.arrival_s = 0.0;
    let one = Instance::new(
        inst.cluster().clone(),
        vec![alone],
        inst.slot_length_s(),
        inst.horizon_slots(),
    )
    .ok()?;
    let run = simulate(&one, &mut Fifo::default(), &SimOptions::default()).ok()?;
    let record = run.jobs.first()?;
    let duration = record.jct_s.filter(|d| *d > 0.0)?;
    Some(Solo::new(duration, record.gpu_seconds / duration))
}

//! What an online policy in the simulator keeps between arrivals.

use std::collections::BTreeMap;

use crate::model::{Instance, JobId};
use crate::schedule::Segment;
use crate::sim::{Action, Rejection};

/// The jobs an online policy was built for, by instance position, each
/// decided once on its arrival, and why each rejected job was rejected.
#[derive(Debug)]
pub(crate) struct Arrivals<J> {
    by_position: Vec<Option<J>>,
    rejections: BTreeMap<JobId, Rejection>,
}

impl<J> Arrivals<J> {
    /// The jobs of an instance of `n` jobs, each with its position.
    pub(crate) fn new(n: usize, jobs: impl IntoIterator<Item = (usize, J)>) -> Self {
        let mut by_position: Vec<Option<J>> = (0..n).map(|_| None).collect();
        for (p, j) in jobs {
            if let Some(slot) = by_position.get_mut(p) {
                *slot = Some(j);
            }
        }
        Arrivals {
            by_position,
            rejections: BTreeMap::new(),
        }
    }

    /// Job `id` on its arrival; `None` for a job not of the instance the
    /// policy was built for, or one already decided.
    pub(crate) fn take(&mut self, instance: &Instance, id: JobId) -> Option<J> {
        let p = instance.job_position(id)?;
        self.by_position.get_mut(p).and_then(Option::take)
    }

    /// The decision on `id`: reserve `segments`, or, without a plan, reject
    /// it and keep the reason `why` gives.
    pub(crate) fn action(
        &mut self,
        id: JobId,
        segments: Option<Vec<Segment>>,
        why: impl FnOnce() -> Option<Rejection>,
    ) -> Action {
        match segments {
            Some(segments) => Action::Reserve { job: id, segments },
            None => {
                if let Some(r) = why() {
                    self.rejections.insert(id, r);
                }
                Action::Reject { job: id }
            }
        }
    }

    /// Why `id` was rejected, when it was and the policy said why.
    pub(crate) fn rejection(&self, id: JobId) -> Option<Rejection> {
        self.rejections.get(&id).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::units::gbps;
    use crate::model::*;

    fn instance() -> Instance {
        let m = Machine::new(
            MachineId(0),
            Resources::zero().gpus(1.0).cpu_cores(1.0).nic(gbps(1.0)),
            gbps(1.0),
        );
        let job = |id| {
            Job::new(
                JobId(id),
                0.0,
                Architecture::RingAllReduce(RarJob {
                    workers: WorkerCounts::Fixed(1),
                    iterations: 10,
                    convergence_iterations: None,
                    model_bytes: 0.0,
                    minibatch_size: 1,
                    forward_per_sample_s: 0.0,
                    backward_per_iteration_s: 1.0,
                    reserved_bandwidth_bps: None,
                    worker: Resources::zero().gpus(1.0),
                }),
            )
        };
        Instance::new(Cluster::new(vec![m]), vec![job(7), job(3)], 10.0, 5).unwrap()
    }

    #[test]
    fn each_job_is_taken_once_and_rejections_are_kept() {
        let inst = instance();
        let mut a = Arrivals::new(2, [(0, "seven"), (1, "three"), (9, "ignored")]);
        assert_eq!(a.take(&inst, JobId(3)), Some("three"));
        assert_eq!(a.take(&inst, JobId(3)), None);
        assert_eq!(a.take(&inst, JobId(42)), None);
        let why = Rejection::NoRoom;
        assert!(matches!(
            a.action(JobId(7), None, || Some(why.clone())),
            Action::Reject { job: JobId(7) }
        ));
        assert_eq!(a.rejection(JobId(7)), Some(why));
        assert!(matches!(
            a.action(JobId(3), Some(Vec::new()), || panic!(
                "asked why on a reservation"
            )),
            Action::Reserve { job: JobId(3), .. }
        ));
        assert_eq!(a.rejection(JobId(3)), None);
    }
}

//! The read-only view a policy decides from.

use crate::model::{GpuId, Instance, Job, JobId, Resources, units};
use crate::schedule::{Configuration, Placement, Tasks};

use super::room::FreeTotals;
use super::state::{JobRun, JobStatus};
use super::work::{self, PsTiming};

/// One job as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct JobView<'a> {
    job: &'a Job,
    position: usize,
    run: &'a JobRun,
}

impl<'a> JobView<'a> {
    /// The job's model.
    pub fn job(&self) -> &'a Job {
        self.job
    }

    /// Its id.
    pub fn id(&self) -> JobId {
        self.job.id
    }

    /// Its position in [`Instance::jobs`].
    pub fn position(&self) -> usize {
        self.position
    }

    /// Where it stands.
    pub fn status(&self) -> JobStatus {
        self.run.status
    }

    /// Whether it waits for a start: it arrived and holds nothing (never
    /// started, or paused) and holds no plan.
    pub fn is_queued(&self) -> bool {
        matches!(self.run.status, JobStatus::Waiting | JobStatus::Paused) && !self.has_plan()
    }

    /// Whether it holds a non-empty allocation now.
    pub fn is_running(&self) -> bool {
        self.run.status == JobStatus::Running
    }

    /// Its current allocation (empty when not running).
    pub fn placement(&self) -> &'a Placement {
        &self.run.placement
    }

    /// GPU ids of its current allocation, when the policy assigned them.
    pub fn gpus(&self) -> Option<&'a [GpuId]> {
        self.run.gpus.as_deref()
    }

    /// The configuration of its current allocation, when the policy or plan
    /// chose one (`None` when not running).
    pub fn config(&self) -> Option<Configuration> {
        self.run.config
    }

    /// Its most recent non-empty allocation (empty if it never ran). A
    /// rigid job may only resume on this placement.
    pub fn last_placement(&self) -> &'a Placement {
        &self.run.last_placement
    }

    /// Workers and PSs it runs now.
    pub fn tasks(&self) -> Tasks {
        debug_assert_eq!(self.run.tasks, self.run.placement.total(), "stale tasks");
        self.run.tasks
    }

    /// Whether it holds a plan (from [`Action::Reserve`](super::Action::Reserve)).
    pub fn has_plan(&self) -> bool {
        self.run.plan.is_some()
    }

    /// Work left: mini-batches (PS) or iterations (ring-all-reduce).
    pub fn remaining_work(&self) -> f64 {
        self.run.remaining
    }

    /// Total work the job trains in this run (same unit as
    /// [`JobView::remaining_work`]; see [`work_to_train`](super::work_to_train)).
    pub fn total_work(&self) -> f64 {
        self.run.total
    }

    /// GPU-seconds held so far (attained service).
    pub fn attained_gpu_s(&self) -> f64 {
        self.run.gpu_seconds
    }

    /// First time it held resources.
    pub fn start_s(&self) -> Option<f64> {
        self.run.start_s
    }

    /// When its current run started (running), or when it last stopped
    /// (paused), or its arrival (waiting).
    pub fn since_s(&self) -> f64 {
        self.run.since_s
    }

    /// Length of its most recent completed run, seconds (0 if none).
    pub fn last_run_s(&self) -> f64 {
        self.run.last_run_s
    }

    /// Preemptions so far.
    pub fn preemptions(&self) -> u32 {
        self.run.preemptions
    }
}

/// The simulator's state as a policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct SimView<'a> {
    pub(crate) instance: &'a Instance,
    pub(crate) now_s: f64,
    pub(crate) runs: &'a [JobRun],
    pub(crate) active: &'a [usize],
    pub(crate) free: &'a [Resources],
    pub(crate) free_totals: &'a FreeTotals,
    pub(crate) run_stamp: u64,
    pub(crate) gpu_owner: &'a std::collections::BTreeMap<GpuId, usize>,
    pub(crate) ps_timing: PsTiming,
    pub(crate) contention: &'a [u32],
}

impl<'a> SimView<'a> {
    /// Current time, seconds.
    pub fn now_s(&self) -> f64 {
        self.now_s
    }

    /// The slot that contains the current time.
    pub fn slot(&self) -> u32 {
        units::slot_of(self.now_s, self.instance.slot_length_s())
    }

    /// The first slot a plan committed now may use (`Action::Reserve`):
    /// the current slot when now is on its boundary, else the next one;
    /// `None` past the last slot index. The simulator checks plans with the
    /// same rule.
    pub fn first_plannable_slot(&self) -> Option<u32> {
        super::state::first_plannable_slot(self.now_s, self.instance.slot_length_s())
    }

    /// The instance being simulated.
    pub fn instance(&self) -> &'a Instance {
        self.instance
    }

    /// The job at a position of [`Instance::jobs`].
    ///
    /// # Panics
    ///
    /// If `position` is out of range.
    pub fn job_at(&self, position: usize) -> JobView<'a> {
        JobView {
            job: &self.instance.jobs()[position],
            position,
            run: &self.runs[position],
        }
    }

    /// The job with an id.
    pub fn job(&self, id: JobId) -> Option<JobView<'a>> {
        self.instance.job_position(id).map(|p| self.job_at(p))
    }

    /// Jobs that have arrived and are neither completed nor rejected, in
    /// arrival order (ties by instance order).
    pub fn active(&self) -> impl Iterator<Item = JobView<'a>> + '_ {
        self.active.iter().map(|&p| self.job_at(p))
    }

    /// Free resources of the machine at a position of the cluster's
    /// machine list: capacity minus what the current allocations are
    /// charged. That charge includes the ring reservations: a running ring
    /// with a reserved bandwidth `b` whose workers span two or more machines
    /// holds `b` of NIC per direction on each of them
    /// ([`Job::demand_with_reservation`]), so `free(h).nic_bps` is the NIC
    /// bandwidth per direction left after tasks and reservations — half of
    /// what is left of the both-directions pool. A policy that places a
    /// reserving ring across machines needs `b` of it (besides its workers'
    /// own demand) on each machine it uses, or the simulator refuses the
    /// allocation.
    ///
    /// [`Job::demand_with_reservation`]: crate::model::Job::demand_with_reservation
    pub fn free(&self, machine_position: usize) -> &'a Resources {
        &self.free[machine_position]
    }

    /// Free resources of every machine, in cluster order (as
    /// [`SimView::free`]: ring reservations included).
    pub fn free_all(&self) -> &'a [Resources] {
        self.free
    }

    /// Per resource (GPUs, CPU cores, memory, storage, NIC), the exact
    /// total of [`SimView::free_all`] when every component of every
    /// machine is a whole number in `[0, 2⁶³)`; else `None`. Kept by the
    /// simulator as the free room changes, so it costs nothing here.
    pub(crate) fn whole_free_totals(&self) -> Option<[u128; 5]> {
        self.free_totals.whole()
    }

    /// A stamp of the run, unique in the process: what a policy learns
    /// about the run's jobs (which never change during a run) may be kept
    /// under it, since no other run has it.
    pub(crate) fn run_stamp(&self) -> u64 {
        self.run_stamp
    }

    /// The job holding a GPU id, for allocations made with GPU ids.
    pub fn gpu_holder(&self, gpu: GpuId) -> Option<JobId> {
        let owner = *self.gpu_owner.get(&gpu)?;
        Some(self.instance.jobs()[owner].id)
    }

    /// Work per second the job would make with `placement` from now on
    /// (ring-all-reduce contention counted against the jobs running now,
    /// the job itself excluded; a ring with a reserved bandwidth on several
    /// machines runs at that bandwidth, without contention). The
    /// timing-model oracle of SJF and Optimus-style policies.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Timing`] for an empty placement or a model the timing
    /// layer rejects; [`crate::Error::Model`] for an unknown machine.
    pub fn rate(&self, job: &Job, placement: &Placement) -> crate::Result<f64> {
        self.rate_in(job, placement, None)
    }

    /// [`SimView::rate`] with the allocation run in `config`: under
    /// [`Configuration::Local`] a parameter-server job runs at the
    /// intra-machine rate `τ^L = t_c + 2S/b_int` whatever the
    /// [`PsTiming`](super::PsTiming); `None` and DISTRIBUTED are
    /// [`SimView::rate`]. The shape LOCAL requires (one machine, one PS, at
    /// least one worker) is not checked here but when the simulator applies
    /// the action.
    ///
    /// # Errors
    ///
    /// As [`SimView::rate`].
    pub fn rate_in(
        &self,
        job: &Job,
        placement: &Placement,
        config: Option<Configuration>,
    ) -> crate::Result<f64> {
        // The non-empty tasks by machine position: on the stack for up to
        // `INLINE` machines (most placements), in `heap` beyond — the same
        // pairs in the same order either way, so nothing else changes.
        const INLINE: usize = 8;
        let mut inline = [(0, Tasks::default()); INLINE];
        let mut heap: Vec<(usize, Tasks)> = Vec::new();
        let mut len = 0;
        let mut multi = 0;
        for &(m, t) in placement {
            let p = self.instance.machine_position(m).ok_or(
                crate::model::ModelError::UnknownMachine {
                    job: job.id,
                    machine: m,
                },
            )?;
            if !t.is_empty() {
                if len < INLINE {
                    inline[len] = (p, t);
                } else {
                    if heap.is_empty() {
                        heap.extend_from_slice(&inline);
                    }
                    heap.push((p, t));
                }
                len += 1;
                if t.workers > 0 {
                    multi += 1;
                }
            }
        }
        let pos = if len <= INLINE {
            &inline[..len]
        } else {
            &heap[..]
        };
        let contenders = if multi >= 2 {
            let me = self.instance.job_position(job.id);
            let mine = me.map(|p| &self.runs[p]);
            pos.iter()
                .filter(|(_, t)| t.workers > 0)
                .map(|&(m, _)| {
                    let already = mine.is_some_and(|r| r.contends_on(m));
                    self.contention[m] + 1 - u32::from(already)
                })
                .max()
                .unwrap_or(1)
        } else {
            0
        };
        let local = work::is_local(config);
        let s = work::speed(self.instance, job, pos, contenders, self.ps_timing, local)?;
        Ok(s.rate())
    }

    /// Seconds the job needs to finish its remaining work with `placement`
    /// at the speed of [`SimView::rate`] (reconfiguration not included).
    ///
    /// # Errors
    ///
    /// As [`SimView::rate`].
    pub fn remaining_time_s(&self, job: &Job, placement: &Placement) -> crate::Result<f64> {
        let remaining = self
            .instance
            .job_position(job.id)
            .map_or_else(|| work::total_work(job), |p| self.runs[p].remaining);
        Ok(remaining / self.rate(job, placement)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Architecture, Cluster, MachineId, RarJob, WorkerCounts};
    use crate::sim::{Action, Event, Policy, SimOptions, simulate};

    /// Records, at the first event, `rate` of a ring of 12 workers spread
    /// round-robin over 1 to 12 machines (an empty entry first), and what
    /// `work::speed` gives on the same pairs collected in a `Vec`.
    struct Probe(Vec<(f64, f64)>);

    impl Policy for Probe {
        fn name(&self) -> String {
            "probe".into()
        }

        fn on_event(&mut self, view: &SimView<'_>, _: &Event) -> crate::Result<Vec<Action>> {
            if !self.0.is_empty() {
                return Ok(Vec::new());
            }
            let job = &view.instance().jobs()[0];
            for k in 1..=12u32 {
                let mut list = vec![(MachineId(k % 12), Tasks::new(0, 0))];
                list.extend((0..k).map(|m| (MachineId(m), Tasks::new(0, 0))));
                for w in 0..12 {
                    list[1 + (w % k) as usize].1.workers += 1;
                }
                let pairs: Vec<(usize, Tasks)> = list[1..]
                    .iter()
                    .map(|&(m, t)| (view.instance().machine_position(m).unwrap(), t))
                    .collect();
                let contenders = u32::from(k >= 2);
                let s = work::speed(
                    view.instance(),
                    job,
                    &pairs,
                    contenders,
                    view.ps_timing,
                    false,
                )?;
                self.0
                    .push((view.rate(job, &Placement::from(list))?, s.rate()));
            }
            Ok(Vec::new())
        }
    }

    #[test]
    fn rate_on_the_stack_and_beyond_agrees_with_a_vec() {
        let cluster = Cluster::homogeneous(12, Resources::zero().gpus(12.0).cpu_cores(64.0), 20.0);
        let ring = RarJob {
            workers: WorkerCounts::Fixed(12),
            iterations: 10,
            model_bytes: 0.8,
            backward_per_iteration_s: 0.08,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
            ..RarJob::default()
        };
        let job = Job::new(JobId(0), 0.0, Architecture::RingAllReduce(ring));
        let inst = Instance::new(cluster, vec![job], 1.0, 100).unwrap();
        let mut probe = Probe(Vec::new());
        let _ = simulate(&inst, &mut probe, &SimOptions::default());
        assert_eq!(probe.0.len(), 12);
        for (k, &(got, want)) in probe.0.iter().enumerate() {
            assert_eq!(got.to_bits(), want.to_bits(), "{} machines", k + 1);
        }
    }
}

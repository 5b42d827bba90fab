//! Random placement as an online ring baseline.

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;

use crate::algorithms::sjf_bco::choice::random_subset;
use crate::model::JobId;
use crate::sim::{Action, Event, JobView, Policy, Rejection, SimView};

use super::{Misfits, RingLayout, Room, RunKey, ring_of};

/// Random: uniformly random order and GPUs, a baseline of the crate's
/// GADGET-style scheduler (after the abstract of GADGET, Yu, Tian, Ji, Wu,
/// Rajan, Liu, IEEE INFOCOM 2022; the crate's own design) for
/// ring-all-reduce jobs with reserved bandwidth.
///
/// # Rule
///
/// At each event the jobs waiting for a start are taken in a uniformly
/// random order. Each runs at its largest allowed worker count `w` on a
/// uniformly random `w`-subset of the free GPUs of the servers it may use
/// that have room for one of its workers.
/// A draw is kept when every server it uses can take its workers — and,
/// when it spans several servers, keep the ring's reserved bandwidth `b`
/// per direction (`2b` of the both-directions pool) on each; otherwise the
/// policy draws again, at most `resamples` more times, and then leaves the
/// job waiting for a later event. A job with fewer free GPUs than `w`
/// waits without a draw. Non-preemptive.
///
/// Randomness is a [`ChaCha8Rng`] seeded with `seed` at the start of each
/// run (the policy starts afresh when it sees another instance or time
/// going backwards): equal seeds give equal runs.
///
/// # Parameters
///
/// Public fields, set on a value from [`RarOnlineRandom::new`]:
///
/// * `seed` (default 0);
/// * `resamples` (default 10): further draws after one that does not fit.
///
/// # Errors
///
/// [`GadgetError::UnsupportedJob`](crate::algorithms::gadget::GadgetError::UnsupportedJob)
/// when the instance has a parameter-server job,
/// [`GadgetError::TooLarge`](crate::algorithms::gadget::GadgetError::TooLarge)
/// above `2²⁰` usable GPUs.
///
/// # Complexity
///
/// `O(N)` per event for `N` usable GPUs, plus `O((1 + resamples)·N)` per
/// waiting job.
///
/// # Example
///
/// ```
/// use dmlsched::algorithms::sjf_bco::RarOnlineRandom;
/// use dmlsched::model::*;
/// use dmlsched::sim::{simulate, SimOptions};
///
/// let cluster = Cluster::homogeneous(2, Resources::zero().gpus(4.0).cpu_cores(8.0).nic(5.0), 20.0);
/// let ring = RarJob { workers: WorkerCounts::Fixed(4), iterations: 3, ..RarJob::default() };
/// let jobs = (0..3).map(|i| Job::new(JobId(i), 0.0, ring.clone())).collect();
/// let inst = Instance::new(cluster, jobs, 1.0, 20)?;
/// let run = |seed| simulate(&inst, &mut RarOnlineRandom::new(seed), &SimOptions::default());
/// let (a, b) = (run(7)?, run(7)?);
/// assert_eq!(a.jobs, b.jobs);
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug)]
pub struct RarOnlineRandom {
    /// Seed of the run's ChaCha8 stream.
    pub(crate) seed: u64,
    /// Further draws after one that does not fit.
    pub(crate) resamples: u32,
    run: Option<(RingLayout, ChaCha8Rng)>,
    key: RunKey,
    misfits: Misfits,
}

impl Default for RarOnlineRandom {
    fn default() -> Self {
        RarOnlineRandom::new(0)
    }
}

impl RarOnlineRandom {
    /// The policy with seed `seed` and 10 resamples.
    pub fn new(seed: u64) -> Self {
        RarOnlineRandom {
            seed,
            resamples: 10,
            run: None,
            key: RunKey::default(),
            misfits: Misfits::default(),
        }
    }
}

impl Policy for RarOnlineRandom {
    fn name(&self) -> String {
        "rar-online-random".into()
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.misfits.rejection(job)
    }

    fn on_event(&mut self, view: &SimView<'_>, _event: &Event) -> crate::Result<Vec<Action>> {
        if self.key.is_new_run(view) || self.run.is_none() {
            let layout = RingLayout::new(view.instance(), "rar-online-random")?;
            self.run = Some((layout, ChaCha8Rng::seed_from_u64(self.seed)));
            self.misfits = Misfits::default();
        }
        let Some((layout, rng)) = self.run.as_mut() else {
            return Ok(Vec::new());
        };
        let mut queue: Vec<JobView<'_>> = view.active().filter(JobView::is_queued).collect();
        let mut actions = self.misfits.reject(view, &mut queue);
        queue.shuffle(rng);
        let mut room = Room::now(layout, view);
        for j in queue {
            let job = j.job();
            let Some((r, w)) = ring_of(job) else { continue };
            let cands: Vec<usize> = (0..layout.servers.len())
                .filter(|&s| room.workers_on(view, job, r, s, false) > 0)
                .flat_map(|s| room.free_of(layout, s).collect::<Vec<_>>())
                .collect();
            if cands.len() < w as usize {
                continue;
            }
            for _ in 0..=self.resamples {
                let mut sel = random_subset(&cands, w as usize, rng);
                sel.sort_unstable();
                if room.fits(view, layout, job, r, &sel) {
                    actions.push(room.start(layout, view, job, &sel));
                    break;
                }
            }
        }
        Ok(actions)
    }
}

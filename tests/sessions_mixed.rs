//! The mixed scenario of a scheduler daemon: 80 jobs (40 parameter-server,
//! 40 ring-all-reduce) arriving one at a time on 8 machines × 8 GPUs, the
//! locality-aware scheduler deciding the PS jobs and the GADGET-style
//! scheduler the rings, both on one shared cluster state, with ±30 %
//! runtime noise: early jobs are finished (the rest of their plan
//! released), late ones extended or preempted. No machine is ever
//! over-committed, every decision carries a snapshot, and both
//! certificates pass their check.
#![cfg(all(feature = "highs", feature = "serde"))]

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::{Gadget, GadgetParams, GadgetSession};
use dmlsched::algorithms::locality::{Locality, LocalityParams, LocalitySession};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::online::Overrun;
use dmlsched::state::ClusterState;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

const SLOT: f64 = 60.0;

fn cluster() -> Cluster {
    let cap = Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(gb(512.0))
        .nic(gbps(25.0));
    Cluster::homogeneous(8, cap, gbps(100.0))
}

fn ps_job(id: u32, rng: &mut ChaCha8Rng) -> Job {
    Job::new(
        JobId(id),
        0.0,
        PsJob {
            epochs: rng.random_range(1..4),
            data_chunks: 8,
            minibatches_per_chunk: 200,
            minibatch_compute_s: 0.4,
            gradient_bytes: mb(100.0),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(4.0)
                .memory(gb(16.0))
                .nic(gbps(1.0)),
            ps: Resources::zero()
                .cpu_cores(4.0)
                .memory(gb(16.0))
                .nic(gbps(2.0)),
            max_workers: 8,
            max_ps: 4,
            ..PsJob::default()
        },
    )
    .with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    })
}

fn ring_job(id: u32, rng: &mut ChaCha8Rng) -> Job {
    let workers = [1, 2, 4, 8][rng.random_range(0..4)];
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations: rng.random_range(2_000..8_000),
            model_bytes: mb(100.0),
            minibatch_size: 32,
            forward_per_sample_s: 0.002,
            backward_per_iteration_s: 0.1,
            reserved_bandwidth_bps: Some(gbps(2.0)),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(4.0)
                .memory(gb(16.0))
                .nic(gbps(1.0)),
            ..RarJob::default()
        },
    )
    .with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    })
}

/// A timed event of the daemon's loop (earliest first; ties by job id).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Event {
    time_s: f64,
    job: u32,
    /// Arrival, or the end of the job's current plan.
    arrival: bool,
}

impl Eq for Event {}
impl Ord for Event {
    fn cmp(&self, o: &Self) -> Ordering {
        o.time_s.total_cmp(&self.time_s).then(o.job.cmp(&self.job))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

#[test]
fn eighty_mixed_jobs_on_one_state_never_over_commit() {
    run(None, false);
}

/// Saving the state and both sessions to JSON half-way and going on with
/// the restored ones decides exactly as the uninterrupted run.
#[test]
fn a_saved_and_restored_daemon_decides_identically() {
    let whole = run(None, false);
    let restarted = run(Some(70), false);
    assert_eq!(whole.len(), restarted.len());
    for (a, b) in whole.iter().zip(&restarted) {
        assert_eq!(a, b);
    }
}

/// A session re-reads only the cells the state changed since its last
/// decision: restarting both sessions before every event with that memory
/// wiped, so that each re-reads its whole window, decides exactly as the
/// sessions that read incrementally.
#[test]
fn reading_only_the_changed_cells_decides_as_reading_all() {
    let incremental = run(None, false);
    let whole_reads = run(None, true);
    assert_eq!(incremental, whole_reads);
}

/// `saved` with its memory of what it read wiped.
fn forget_reads(saved: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(saved).unwrap();
    v["synced_version"] = 0.into();
    v["synced_end"] = 0.into();
    v.to_string()
}

/// Runs the scenario; with `restart_at = Some(k)`, saves and restores the
/// state and both sessions after the `k`-th event; with `reread_all`,
/// restores both sessions before every event with their memory of what
/// they read wiped. Returns every decision and late-job outcome, in order.
fn run(restart_at: Option<usize>, reread_all: bool) -> Vec<String> {
    let mut trace = Vec::new();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut state = ClusterState::new(&cluster(), SLOT).unwrap();
    let past_ps: Vec<Job> = (0..8).map(|i| ps_job(10_000 + i, &mut rng)).collect();
    let past_ring: Vec<Job> = (0..8).map(|i| ring_job(20_000 + i, &mut rng)).collect();
    let window = 240;
    let mut locality = Locality::new(LocalityParams::default())
        .unwrap()
        .session(&state, window, &past_ps, &mut rng)
        .unwrap();
    let mut gadget = Gadget::new(GadgetParams::default())
        .unwrap()
        .session(&state, window, &past_ring)
        .unwrap();
    let jobs: Vec<Job> = (0..80)
        .map(|i: u32| {
            if i.is_multiple_of(2) {
                ps_job(i, &mut rng)
            } else {
                ring_job(i, &mut rng)
            }
        })
        .collect();
    let mut events = BinaryHeap::new();
    for i in 0..80u32 {
        events.push(Event {
            time_s: f64::from(i) * 45.0,
            job: i,
            arrival: true,
        });
    }
    // Each admitted job's actual run time: its plan's length × a noise
    // factor in [0.7, 1.3]; `left` is what remains past its plan's end.
    let mut left = vec![0.0f64; 80];
    let (mut admitted, mut extended, mut preempted, mut finished_early) = (0, 0, 0, 0);
    let mut handled = 0;
    while let Some(e) = events.pop() {
        if restart_at == Some(handled) {
            let (st, l, g) = (
                serde_json::to_string(&state).unwrap(),
                locality.save().unwrap(),
                gadget.save().unwrap(),
            );
            state = serde_json::from_str(&st).unwrap();
            locality = LocalitySession::restore(&l).unwrap();
            gadget = GadgetSession::restore(&g).unwrap();
        }
        if reread_all {
            locality = LocalitySession::restore(&forget_reads(&locality.save().unwrap())).unwrap();
            gadget = GadgetSession::restore(&forget_reads(&gadget.save().unwrap())).unwrap();
        }
        handled += 1;
        let i = e.job as usize;
        let ps = i.is_multiple_of(2);
        if e.arrival {
            let d = if ps {
                locality.submit(&mut state, &jobs[i], e.time_s)
            } else {
                gadget.submit(&mut state, &jobs[i], e.time_s)
            }
            .unwrap();
            trace.push(format!("{d:?}"));
            assert!(d.snapshot.alg >= 0.0 && d.snapshot.alg <= d.snapshot.trivial_bound + 1e-9);
            if !d.admitted {
                continue;
            }
            admitted += 1;
            let start = d.segments.iter().map(|s| s.slots.start).min().unwrap();
            let end = d.segments.iter().map(|s| s.slots.end).max().unwrap();
            let planned_s = f64::from(end - start) * SLOT;
            let actual_s = planned_s * rng.random_range(0.7..1.3);
            let done_s = f64::from(start) * SLOT + actual_s;
            let plan_end_s = f64::from(end) * SLOT;
            if done_s <= plan_end_s {
                finished_early += 1;
                events.push(Event {
                    time_s: done_s,
                    job: e.job,
                    arrival: false,
                });
                left[i] = -1.0; // finishes inside its plan
            } else {
                left[i] = done_s - plan_end_s;
                events.push(Event {
                    time_s: plan_end_s,
                    job: e.job,
                    arrival: false,
                });
            }
        } else if left[i] < 0.0 {
            let r = if ps {
                locality.finish(&mut state, JobId(e.job), e.time_s)
            } else {
                gadget.finish(&mut state, JobId(e.job), e.time_s)
            };
            assert!(r.unwrap());
        } else {
            let more = left[i];
            let r = if ps {
                locality.overrun(&mut state, JobId(e.job), e.time_s, more)
            } else {
                gadget.overrun(&mut state, JobId(e.job), e.time_s, more)
            };
            let r = r.unwrap();
            trace.push(format!("{r:?}"));
            match r {
                Overrun::Extended { segment, .. } => {
                    extended += 1;
                    let end_s = f64::from(segment.slots.end) * SLOT;
                    let done_s = f64::from(segment.slots.start) * SLOT + more;
                    left[i] = -1.0;
                    events.push(Event {
                        time_s: done_s.min(end_s),
                        job: e.job,
                        arrival: false,
                    });
                }
                Overrun::Preempted { .. } => preempted += 1,
            }
        }
        // The state never over-commits a machine and adds up.
        state.check().unwrap();
    }
    eprintln!(
        "80 jobs: {admitted} admitted ({finished_early} finished inside their plans, {extended} extended, {preempted} preempted)"
    );
    assert!(admitted >= 40, "{admitted} admitted");
    assert!(finished_early > 0 && extended + preempted > 0);
    // Every job was decided, and none admitted is left holding capacity
    // past the run.
    for j in &jobs {
        let s = if j.id.0.is_multiple_of(2) {
            locality.status(j.id)
        } else {
            gadget.status(j.id)
        };
        assert!(s.is_some(), "{} was never decided", j.id);
    }
    let end = state.now_s() + f64::from(window) * SLOT;
    state.advance(end).unwrap();
    assert_eq!(state.holds().count(), 0);
    let (lc, gc) = (
        locality.certificate().unwrap(),
        gadget.certificate().unwrap(),
    );
    lc.check(1e-9).unwrap();
    gc.check(1e-9).unwrap();
    trace.push(format!("{lc:?} {gc:?}"));
    trace
}

#[test]
fn sessions_and_their_state_are_send() {
    fn send<T: Send>() {}
    send::<ClusterState>();
    send::<dmlsched::algorithms::locality::LocalitySession>();
    send::<dmlsched::algorithms::gadget::GadgetSession>();
}

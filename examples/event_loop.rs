//! Embedding the crate in a scheduler of your own: an event loop that asks
//! two scheduling sessions for decisions, job by job, over one shared
//! cluster state.
//!
//! A scheduler daemon owns its clock and its events; the crate owns the
//! decisions. This example is such a daemon, in about the size a real one
//! starts at:
//!
//! * **the cluster**: 8 machines × 8 GPUs, one-minute slots, one
//!   [`ClusterState`] shared by both sessions (the arbiter: a plan it
//!   refuses is a rejection, so it never over-commits a machine);
//! * **two sessions** on that state: the locality-aware scheduler
//!   ([`Locality::session`]) decides the parameter-server jobs and the
//!   GADGET-style scheduler ([`Gadget::session`]) the ring-all-reduce jobs,
//!   each with a planning window of 240 slots and price bounds learned
//!   from 8 past jobs of its kind;
//! * **the event loop**: a binary heap of timed events — a job's
//!   *arrival* (80 jobs, one every 45 s, alternately PS and ring), its
//!   *early finish* (its work done inside its plan: [`Session::finish`]
//!   releases the rest of the plan) and its *plan end* (still running:
//!   [`Session::overrun`] extends the plan on the same machines and GPUs,
//!   or preempts the job when there is no room). How long a job really
//!   runs is its plan's length × a factor drawn in `[0.7, 1.3)` from a
//!   seeded ChaCha8 (portable: the same run on every platform);
//! * **its own capacity table**: the daemon does not trust anybody's
//!   bookkeeping, including the crate's. It keeps a map `(machine, slot) →
//!   GPU ids in use`, filled from the GPU ids of every decision's segments
//!   (and of every extension) and emptied for the slots a finish frees.
//!   After every event it checks that no GPU id is held twice in a slot
//!   and no machine holds more GPUs than it has (a *collision*), and that
//!   the table and the state count the same GPUs in every cell. It also
//!   counts the GPU-slots each finish releases, from the table, and
//!   cross-checks them against the state. Any collision or disagreement
//!   makes the example exit with status 1.
//!
//! It prints one line per event: every decision with its certificate
//! snapshot (`ALG` so far, the trivial bound on `OPT`, and how many
//! reasons the `2α` guarantee is lost for), every late job's outcome and
//! every finish with the GPU-slots it released; then the line
//! `decisions N, admitted N, collisions 0, GPU-slots released N` (a
//! decision is one submission) and both sessions' final certificates,
//! checked with [`Certificate::check`](dmlsched::Certificate::check).
//!
//! ```sh
//! cargo run --release --example event_loop
//! ```
//!
//! A job cancelled by its user is handled as a finish: call
//! [`Session::cancel`] instead of [`Session::finish`] (its utility is then
//! not counted) and free the same slots of the table.
//!
//! [`ClusterState`]: dmlsched::state::ClusterState
//! [`Locality::session`]: dmlsched::algorithms::locality::Locality::session
//! [`Gadget::session`]: dmlsched::algorithms::gadget::Gadget::session
//! [`Session::finish`]: dmlsched::online::Session::finish
//! [`Session::cancel`]: dmlsched::online::Session::cancel
//! [`Session::overrun`]: dmlsched::online::Session::overrun

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};
use std::process::ExitCode;

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
use dmlsched::algorithms::locality::{Locality, LocalityParams};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::online::{Overrun, Snapshot};
use dmlsched::schedule::Segment;
use dmlsched::state::ClusterState;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

/// Slot length, seconds.
const SLOT_S: f64 = 60.0;
const MACHINES: u32 = 8;
const GPUS_PER_MACHINE: u32 = 8;
const JOBS: u32 = 80;
/// Seconds between two arrivals.
const ARRIVAL_GAP_S: f64 = 45.0;
/// Each session plans within this many slots of a job's submission.
const WINDOW: u32 = 240;
const SEED: u64 = 7;

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("event_loop: {e}");
            ExitCode::FAILURE
        }
    }
}

// ---------------------------------------------------------------------------
// The cluster and the jobs.
// ---------------------------------------------------------------------------

fn cluster() -> Cluster {
    let machine = Resources::zero()
        .gpus(f64::from(GPUS_PER_MACHINE))
        .cpu_cores(64.0)
        .memory(gb(512.0))
        .nic(gbps(25.0));
    // 100 Gbit/s between tasks on the same machine.
    Cluster::homogeneous(MACHINES, machine, gbps(100.0))
}

/// A parameter-server job: 1 to 3 epochs of 8 chunks × 200 mini-batches,
/// up to 8 one-GPU workers and 4 parameter servers (no GPU).
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
    // Worth 100 if done in its first slot, one less per slot later.
    .with_utility(Utility::Linear {
        g1: 100.0,
        slope: 1.0,
    })
}

/// A ring-all-reduce job: 1, 2, 4 or 8 one-GPU workers in a ring, 2,000 to
/// 8,000 iterations, 2 Gbit/s of bandwidth reserved per ring link.
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

/// Even ids are parameter-server jobs, odd ones rings.
fn is_ps(job: JobId) -> bool {
    job.0.is_multiple_of(2)
}

// ---------------------------------------------------------------------------
// The event loop's events.
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy)]
enum Kind {
    /// The job is submitted.
    Arrival,
    /// The job's work is done, at or before its plan's end.
    Finish,
    /// The job's plan ends and it still needs `more_s` seconds.
    PlanEnd { more_s: f64 },
}

/// A timed event; the heap pops the earliest first (ties by job id).
#[derive(Debug, Clone, Copy)]
struct Event {
    time_s: f64,
    job: JobId,
    kind: Kind,
}

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // `BinaryHeap` is a max-heap: reverse both keys.
        other
            .time_s
            .total_cmp(&self.time_s)
            .then(other.job.cmp(&self.job))
    }
}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Event {}

// ---------------------------------------------------------------------------
// The scheduler's own capacity table.
// ---------------------------------------------------------------------------

/// The daemon's view of the GPUs: for every `(machine, slot)` the GPU ids
/// in use there and the job holding each. Independent of the crate's
/// [`ClusterState`]: filled only from what the sessions return.
struct CapacityTable {
    gpus_per_machine: u32,
    cells: BTreeMap<(MachineId, u32), Vec<(u32, JobId)>>,
}

impl CapacityTable {
    fn new(gpus_per_machine: u32) -> Self {
        CapacityTable {
            gpus_per_machine,
            cells: BTreeMap::new(),
        }
    }

    /// Records the GPU ids of `segments` (a decision's plan or an
    /// extension) as held by `job` in every slot of each segment. Fails
    /// when a segment's ids on a machine are not as many as the GPUs its
    /// tasks there take: the table could not follow it.
    fn hold(&mut self, job: &Job, segments: &[Segment]) -> Result<(), String> {
        for seg in segments {
            let ids = seg.gpus.as_deref().unwrap_or_default();
            for &(machine, tasks) in &seg.placement {
                let on_machine: Vec<u32> = ids
                    .iter()
                    .filter(|g| g.machine == machine)
                    .map(|g| g.index)
                    .collect();
                let takes = job.demand_for(tasks.workers, tasks.ps).gpus;
                if on_machine.len() as f64 != takes {
                    return Err(format!(
                        "{}: a segment takes {takes} GPUs on {machine} but names {} GPU ids",
                        job.id,
                        on_machine.len()
                    ));
                }
                for slot in seg.slots.clone() {
                    let cell = self.cells.entry((machine, slot)).or_default();
                    cell.extend(on_machine.iter().map(|&g| (g, job.id)));
                }
            }
        }
        Ok(())
    }

    /// Frees what `job` holds from slot `from` on; returns the GPU-slots
    /// freed.
    fn release(&mut self, job: JobId, from: u32) -> u64 {
        let mut freed = 0;
        for ((_, slot), cell) in self.cells.iter_mut() {
            if *slot >= from {
                let before = cell.len();
                cell.retain(|&(_, holder)| holder != job);
                freed += (before - cell.len()) as u64;
            }
        }
        self.cells.retain(|_, cell| !cell.is_empty());
        freed
    }

    /// Forgets the slots before `slot` (the past).
    fn forget_before(&mut self, slot: u32) {
        self.cells.retain(|&(_, s), _| s >= slot);
    }

    /// The cells where a GPU id is held twice, an id the machine does not
    /// have is held, or the machine holds more GPUs than it has.
    fn collisions(&self) -> Vec<String> {
        let mut found = Vec::new();
        for (&(machine, slot), cell) in &self.cells {
            let mut ids: Vec<u32> = cell.iter().map(|&(g, _)| g).collect();
            ids.sort_unstable();
            let twice = ids.windows(2).any(|w| w[0] == w[1]);
            let unknown = ids.iter().any(|&g| g >= self.gpus_per_machine);
            if twice || unknown || ids.len() > self.gpus_per_machine as usize {
                found.push(format!("{machine} slot {slot}: {cell:?}"));
            }
        }
        found
    }

    /// The cells where the table and `state` count different GPUs in use,
    /// from the state's current slot to the last slot either holds.
    fn disagreements(&self, state: &ClusterState) -> Vec<String> {
        let now = state.current_slot();
        let table_end = self.cells.keys().map(|&(_, s)| s + 1).max();
        let state_end = state
            .holds()
            .flat_map(|(_, uses)| uses.iter().map(|u| u.slots.end))
            .max();
        let end = table_end.max(state_end).unwrap_or(now);
        let mut found = Vec::new();
        for &machine in state.machines() {
            for slot in now..end {
                let table = self.cells.get(&(machine, slot)).map_or(0, Vec::len);
                let held = state.used(machine, slot).map_or(f64::NAN, |u| u.gpus);
                if table as f64 != held {
                    found.push(format!(
                        "{machine} slot {slot}: table {table} GPUs, state {held}"
                    ));
                }
            }
        }
        found
    }
}

/// The GPU-slots `state` holds from its current slot on, summed over its
/// holds.
fn state_gpu_slots(state: &ClusterState) -> f64 {
    state
        .holds()
        .flat_map(|(_, uses)| uses)
        .map(|u| u.resources.gpus * f64::from(u.slots.end - u.slots.start))
        .sum()
}

/// One compact line of a session's certificate snapshot.
fn snapshot_line(session: &str, s: &Snapshot) -> String {
    format!(
        "{session}: alg {:.1} trivial_bound {:.1} guarantee_lost {}",
        s.alg,
        s.trivial_bound,
        s.guarantee_lost.len()
    )
}

/// Where a plan starts: GPUs per machine, e.g. `m3:4 m5:4`.
fn where_line(segments: &[Segment]) -> String {
    let mut gpus: BTreeMap<MachineId, usize> = BTreeMap::new();
    for g in segments
        .first()
        .and_then(|s| s.gpus.as_ref())
        .into_iter()
        .flatten()
    {
        *gpus.entry(g.machine).or_default() += 1;
    }
    gpus.iter()
        .map(|(m, n)| format!("m{}:{n}", m.0))
        .collect::<Vec<_>>()
        .join(" ")
}

// ---------------------------------------------------------------------------
// The daemon.
// ---------------------------------------------------------------------------

/// Runs the daemon; `Ok(false)` when a check failed.
fn run() -> Result<bool, Box<dyn std::error::Error>> {
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);

    // One state, two sessions on it. Each session learns its price bounds
    // from a few past jobs of its kind (the future is unknown).
    let mut state = ClusterState::new(&cluster(), SLOT_S)?;
    let past_ps: Vec<Job> = (0..8).map(|i| ps_job(10_000 + i, &mut rng)).collect();
    let past_rings: Vec<Job> = (0..8).map(|i| ring_job(20_000 + i, &mut rng)).collect();
    let mut locality =
        Locality::new(LocalityParams::default())?.session(&state, WINDOW, &past_ps, &mut rng)?;
    let mut gadget = Gadget::new(GadgetParams::default())?.session(&state, WINDOW, &past_rings)?;

    let jobs: BTreeMap<JobId, Job> = (0..JOBS)
        .map(|i| {
            let job = if is_ps(JobId(i)) {
                ps_job(i, &mut rng)
            } else {
                ring_job(i, &mut rng)
            };
            (job.id, job)
        })
        .collect();
    let mut events: BinaryHeap<Event> = jobs
        .keys()
        .map(|&job| Event {
            time_s: f64::from(job.0) * ARRIVAL_GAP_S,
            job,
            kind: Kind::Arrival,
        })
        .collect();

    let mut table = CapacityTable::new(GPUS_PER_MACHINE);
    let (mut decisions, mut admitted, mut collisions, mut disagreements) = (0, 0, 0, 0);
    let (mut released, mut early, mut extended, mut preempted) = (0u64, 0, 0, 0);

    while let Some(Event { time_s, job, kind }) = events.pop() {
        // The daemon's clock: move the state to the event, forget the past.
        state.advance(time_s)?;
        table.forget_before(state.current_slot());
        let (name, session) = if is_ps(job) {
            ("ps  ", "locality")
        } else {
            ("ring", "gadget")
        };
        let head = format!("t {time_s:7.1} s  {job:>7} {name}");

        match kind {
            Kind::Arrival => {
                let d = if is_ps(job) {
                    locality.submit(&mut state, &jobs[&job], time_s)?
                } else {
                    gadget.submit(&mut state, &jobs[&job], time_s)?
                };
                decisions += 1;
                if let Some(why) = &d.rejection {
                    println!(
                        "{head}  rejected ({})  | {}",
                        why.kind(),
                        snapshot_line(session, &d.snapshot)
                    );
                } else {
                    admitted += 1;
                    table.hold(&jobs[&job], &d.segments)?;
                    let start = d.segments.iter().map(|s| s.slots.start).min().unwrap_or(0);
                    let end = d.segments.iter().map(|s| s.slots.end).max().unwrap_or(0);
                    println!(
                        "{head}  admitted slots {start}..{end}, starts on {}  | {}",
                        where_line(&d.segments),
                        snapshot_line(session, &d.snapshot)
                    );
                    // How long it really runs: its plan's length × noise.
                    let planned_s = f64::from(end - start) * SLOT_S;
                    let done_s = f64::from(start) * SLOT_S + planned_s * rng.random_range(0.7..1.3);
                    let plan_end_s = f64::from(end) * SLOT_S;
                    events.push(if done_s <= plan_end_s {
                        early += 1;
                        Event {
                            time_s: done_s,
                            job,
                            kind: Kind::Finish,
                        }
                    } else {
                        Event {
                            time_s: plan_end_s,
                            job,
                            kind: Kind::PlanEnd {
                                more_s: done_s - plan_end_s,
                            },
                        }
                    });
                }
            }
            Kind::Finish => {
                // The table frees the plan after the next slot boundary
                // (the slot in progress stays held); the state must free
                // exactly as many GPU-slots.
                let freed = table.release(job, state.slot_from(time_s));
                let before = state_gpu_slots(&state);
                let stopped = if is_ps(job) {
                    locality.finish(&mut state, job, time_s)?
                } else {
                    gadget.finish(&mut state, job, time_s)?
                };
                let state_freed = before - state_gpu_slots(&state);
                if !stopped || state_freed != freed as f64 {
                    disagreements += 1;
                    eprintln!(
                        "{job}: the table released {freed} GPU-slots, the state {state_freed}"
                    );
                }
                released += freed;
                println!("{head}  finished, released {freed} GPU-slots");
            }
            Kind::PlanEnd { more_s } => {
                let (outcome, snapshot) = if is_ps(job) {
                    let o = locality.overrun(&mut state, job, time_s, more_s)?;
                    (o, locality.snapshot())
                } else {
                    let o = gadget.overrun(&mut state, job, time_s, more_s)?;
                    (o, gadget.snapshot())
                };
                match outcome {
                    Overrun::Extended { segment, .. } => {
                        extended += 1;
                        table.hold(&jobs[&job], std::slice::from_ref(&segment))?;
                        println!(
                            "{head}  late by {more_s:.1} s: extended slots {}..{}  | {}",
                            segment.slots.start,
                            segment.slots.end,
                            snapshot_line(session, &snapshot)
                        );
                        // It finishes inside the extension (or at its end).
                        let done_s = f64::from(segment.slots.start) * SLOT_S + more_s;
                        events.push(Event {
                            time_s: done_s.min(f64::from(segment.slots.end) * SLOT_S),
                            job,
                            kind: Kind::Finish,
                        });
                    }
                    Overrun::Preempted { .. } => {
                        preempted += 1;
                        println!(
                            "{head}  late by {more_s:.1} s: preempted (no room on its machines)  | {}",
                            snapshot_line(session, &snapshot)
                        );
                    }
                }
            }
        }

        // After every event: the table's own invariants, and agreement
        // with the state.
        for c in table.collisions() {
            collisions += 1;
            eprintln!("collision: {c}");
        }
        for d in table.disagreements(&state) {
            disagreements += 1;
            eprintln!("table and state disagree: {d}");
        }
    }

    println!(
        "late jobs: {extended} extended, {preempted} preempted; {early} finished inside their plans; \
         table and state disagreed {disagreements} times"
    );
    println!(
        "decisions {decisions}, admitted {admitted}, collisions {collisions}, GPU-slots released {released}"
    );

    // The sessions' final certificates: the online dual bound recomputed
    // at the current prices, and the guarantees with the reasons they are
    // lost (learned bounds, releases, extensions).
    let mut ok = collisions == 0 && disagreements == 0;
    for cert in [locality.certificate()?, gadget.certificate()?] {
        println!("\n{cert}");
        match cert.check(1e-9) {
            Ok(()) => println!("certificate check: ok"),
            Err(e) => {
                ok = false;
                println!("certificate check: FAILED: {e}");
            }
        }
    }
    Ok(ok)
}

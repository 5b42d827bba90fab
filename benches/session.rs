//! Decision latency of `Session::submit` with N = 1,000 and 10,000 jobs in
//! the session (issue 34, item 4), for OASiS, the GADGET-style scheduler and
//! the locality-aware scheduler, each on its own [`ClusterState`].
//!
//! **Set-up.** The Philly trace (`$DMLSCHED_TRACES/philly.csv`) through the
//! recipe `dmlsched replay` uses for each algorithm: parameter-server jobs
//! (1200-s slots) for OASiS and locality, ring-all-reduce jobs (10-s slots)
//! for GADGET; seed 0, sigmoid utilities (`M = 2`, `S = 4`, the replay's
//! default for these algorithms), on 64 machines × 8 GPUs that host both
//! roles (OASiS with `shared_machines: true`, as `dmlsched replay` runs it
//! when its parameters say so: no PS-only machines). Planning window
//! `W = 200` slots. Each algorithm's default parameters otherwise
//! (locality's oracle seed 0).
//!
//! The first 300 jobs of the recipe are the past jobs the session's price
//! bounds are learned from; the next N are the warm-up, the 200 after
//! them the measured jobs (disjoint slices of one window of the trace).
//!
//! **N jobs in the session.** The warm-up submits its jobs one by one at
//! their trace arrival times (not compressed) and never finishes or
//! cancels any: every job stays in the session's records (status,
//! model job, engine outcome, saved plan), so after the warm-up the
//! session holds exactly N submitted, unfinished jobs. An admitted job's
//! hold on the state ends with its plan (the state drops holds that ended
//! as its clock advances), as a job that ran to its plan's end would.
//! Compressing the arrivals until N jobs *hold capacity* at once is not
//! possible on 512 GPUs (every job holds at least one GPU): it would only
//! saturate the cluster and turn the measurement into one of rejections.
//! The bench prints how many jobs hold capacity at the measured point.
//! What grows with N is the session's per-job bookkeeping; what the
//! trace's load sets is the ledger's fill in the window.
//!
//! **Measured.** The warmed-up session is saved (`Session::save`) and the
//! state cloned; each of the 200 measured jobs is then submitted once to a
//! session restored from that JSON and a clone of that state (restore and
//! clone outside the timed part), at the arrival time of the first
//! measured job: every measured decision is "the next submit" from the
//! same N-job point. The bench prints p50 / p99 / max / mean of those 200
//! decisions, and the same quantiles of the 200 measured jobs submitted
//! live, one after the other at their own arrivals, to a restored session
//! (N..N+200 jobs, caches as a running daemon has them). Criterion's
//! benchmark `session_submit/<algorithm>/<N>` times one submit per
//! iteration from the restored point, cycling through the measured jobs
//! (its mean).
//!
//! Targets (issue 34): OASiS and GADGET-style p50 ≤ 2 ms, p99 ≤ 20 ms;
//! locality whole-decision p50 ≤ 50 ms, p99 ≤ 1 s (`docs/benchmarks.md`).
//!
//! **Default set.** The warm-up to 10,000 jobs of the locality scheduler
//! takes far longer than the rest (its decisions solve LPs), so a plain
//! `cargo bench --bench session` measures locality at N = 1,000 only;
//! `DMLSCHED_SESSION_ALL=1` adds `locality/10000`.
//! `DMLSCHED_SESSION_ALGS=oasis,gadget` restricts the algorithms and
//! `DMLSCHED_SESSION_N=1000` the sizes. Without `$DMLSCHED_TRACES` or the
//! file the bench prints why and measures nothing.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
use dmlsched::algorithms::locality::{Locality, LocalityParams};
use dmlsched::algorithms::oasis::{Oasis, OasisParams};
use dmlsched::model::{Cluster, Job};
use dmlsched::online::{Session, SessionAlgorithm, SessionPlan};
use dmlsched::state::ClusterState;
use dmlsched::trace::{
    RecipeOptions, ReplayOptions, TraceJob, UtilityRecipe, Window, load, replay_instance, select,
};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Past jobs the price bounds are learned from.
const PAST: usize = 300;
/// Measured decisions per (algorithm, N).
const MEASURED: usize = 200;
/// Planning window, slots.
const WINDOW: u32 = 200;
/// 64 machines × 8 GPUs.
const GPUS: u32 = 512;
const GPUS_PER_MACHINE: u32 = 8;

/// The trace's rows, or why there are none.
fn rows() -> Result<Vec<TraceJob>, String> {
    let dir = std::env::var_os("DMLSCHED_TRACES")
        .map(PathBuf::from)
        .ok_or("DMLSCHED_TRACES is not set")?;
    let path = dir.join("philly.csv");
    if !path.exists() {
        return Err(format!("{} not found", path.display()));
    }
    load(&path, None).map_err(|e| e.to_string())
}

/// The recipe's cluster and its first `count` jobs in arrival order.
struct Jobs {
    cluster: Cluster,
    slot_length_s: f64,
    past: Vec<Job>,
    /// Warm-up jobs, then the measured ones.
    run: Vec<Job>,
}

fn jobs(rows: &[TraceJob], recipe: RecipeOptions, count: usize) -> Result<Jobs, String> {
    // The recipe skips a few rows (no duration, …): ask for some more.
    let window = Window {
        jobs: Some(PAST + count + count / 5 + 100),
        ..Window::default()
    };
    let rows = select(rows, &window).map_err(|e| e.to_string())?;
    let mut opts = ReplayOptions::default();
    opts.gpus = GPUS.into();
    opts.gpus_per_machine = GPUS_PER_MACHINE;
    opts.recipe = {
        let mut built_ = recipe;
        built_.seed = 0;
        built_
    };
    opts.utility = UtilityRecipe::Sigmoid {
        multiple: 2.0,
        steepness: 4.0,
    };
    let inst = replay_instance(&rows, &opts).map_err(|e| e.to_string())?.0;
    let mut all = inst.jobs().to_vec();
    all.sort_by(|a, b| a.arrival_s.total_cmp(&b.arrival_s).then(a.id.cmp(&b.id)));
    if all.len() < PAST + count {
        return Err(format!(
            "the recipe gave {} jobs, {} needed",
            all.len(),
            PAST + count
        ));
    }
    all.truncate(PAST + count);
    let run = all.split_off(PAST);
    Ok(Jobs {
        cluster: inst.cluster().clone(),
        slot_length_s: inst.slot_length_s(),
        past: all,
        run,
    })
}

/// `p50 / p99 / max / mean` in ms of `times` (s); the `q`-quantile is the
/// value at index `⌊q·n⌋`.
fn quantiles(mut times: Vec<f64>) -> String {
    times.sort_by(f64::total_cmp);
    let n = times.len();
    let q = |p: f64| times[((p * n as f64) as usize).min(n - 1)] * 1e3;
    let mean = times.iter().sum::<f64>() / n as f64 * 1e3;
    format!(
        "{n} decisions, p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms, mean {:.3} ms",
        q(0.5),
        q(0.99),
        times[n - 1] * 1e3,
        mean
    )
}

fn env_list(name: &str) -> Option<Vec<String>> {
    std::env::var(name)
        .ok()
        .map(|v| v.split(',').map(|s| s.trim().to_owned()).collect())
}

/// Whether to measure `alg` at `n` jobs.
fn wanted(alg: &str, n: usize) -> bool {
    if env_list("DMLSCHED_SESSION_ALGS").is_some_and(|a| !a.iter().any(|a| a == alg)) {
        return false;
    }
    if env_list("DMLSCHED_SESSION_N").is_some_and(|l| !l.iter().any(|s| *s == n.to_string())) {
        return false;
    }
    let named = format!("{alg}/{n}");
    alg != "locality"
        || n <= 1_000
        || std::env::var("DMLSCHED_SESSION_ALL").is_ok_and(|v| v == "1")
        || std::env::args().skip(1).any(|a| a.contains(&named))
}

/// Warms `session` up to each of `ns` jobs in turn, and at each measures
/// the next submits (see the module documentation).
fn measure<A>(
    c: &mut Criterion,
    name: &str,
    mut session: Session<A>,
    mut state: ClusterState,
    jobs: &Jobs,
    ns: &[usize],
) where
    A: SessionAlgorithm + Clone + Serialize + DeserializeOwned,
    SessionPlan<A>: Clone + Serialize + DeserializeOwned,
{
    let mut done = 0;
    let mut admitted = 0;
    let warm_start = Instant::now();
    for &n in ns {
        while done < n {
            let job = &jobs.run[done];
            let d = session
                .submit(&mut state, job, job.arrival_s)
                .expect("a warm-up submit");
            admitted += usize::from(d.admitted);
            done += 1;
        }
        let measured = &jobs.run[n..n + MEASURED];
        let now = measured[0].arrival_s;
        eprintln!(
            "{name}/{n}: warm-up to {n} jobs {:.1} s so far ({admitted} admitted), \
             {} jobs hold capacity at the last arrival ({:.0} s), next arrival {:.0} s",
            warm_start.elapsed().as_secs_f64(),
            state.holds().count(),
            state.now_s(),
            now
        );
        let t = Instant::now();
        let saved = session.save().expect("save");
        let save_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let restore = || Session::<A>::restore(&saved).expect("restore");
        drop(restore());
        eprintln!(
            "{name}/{n}: save {:.1} ms, restore {:.1} ms, {} kB of JSON",
            save_s * 1e3,
            t.elapsed().as_secs_f64() * 1e3,
            saved.len() / 1000
        );

        // Every measured job from the same point, at the next arrival.
        let mut times = Vec::with_capacity(MEASURED);
        let mut taken = 0;
        for job in measured {
            let mut s = restore();
            let mut st = state.clone();
            let t = Instant::now();
            let d = s.submit(&mut st, job, now).expect("a measured submit");
            times.push(t.elapsed().as_secs_f64());
            taken += usize::from(d.admitted);
            drop(black_box((s, st)));
        }
        println!(
            "{name}/{n} from the same point: {} ({taken} admitted)",
            quantiles(times)
        );

        // The measured jobs live, one after the other at their arrivals.
        let mut s = restore();
        let mut st = state.clone();
        let mut live = Vec::with_capacity(MEASURED);
        let mut taken = 0;
        for job in measured {
            let t = Instant::now();
            let d = s
                .submit(&mut st, job, job.arrival_s)
                .expect("a live submit");
            live.push(t.elapsed().as_secs_f64());
            taken += usize::from(d.admitted);
        }
        drop(s);
        println!(
            "{name}/{n} live, {n}..{} jobs: {} ({taken} admitted)",
            n + MEASURED,
            quantiles(live)
        );

        let mut group = c.benchmark_group("session_submit");
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .warm_up_time(Duration::from_millis(500))
            .measurement_time(Duration::from_secs(5));
        let mut k = 0;
        group.bench_function(format!("{name}/{n}"), |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut s = restore();
                    let mut st = state.clone();
                    let job = &measured[k % MEASURED];
                    k += 1;
                    let t = Instant::now();
                    let d = s.submit(&mut st, job, now);
                    total += t.elapsed();
                    drop(black_box((d, s, st)));
                }
                total
            })
        });
        group.finish();
    }
}

const SIZES: [usize; 2] = [1_000, 10_000];

fn bench(c: &mut Criterion) {
    let rows = match rows() {
        Ok(rows) => rows,
        Err(why) => {
            eprintln!("skipping the session bench: {why}");
            return;
        }
    };
    for name in ["oasis", "gadget", "locality"] {
        let ns: Vec<usize> = SIZES.into_iter().filter(|&n| wanted(name, n)).collect();
        let Some(&max) = ns.last() else { continue };
        let recipe = if name == "gadget" {
            RecipeOptions::rar()
        } else {
            RecipeOptions::ps()
        };
        let jobs = match jobs(&rows, recipe, max + MEASURED) {
            Ok(jobs) => jobs,
            Err(why) => {
                eprintln!("skipping {name}: {why}");
                continue;
            }
        };
        let state = ClusterState::new(&jobs.cluster, jobs.slot_length_s).expect("a state");
        let t = Instant::now();
        match name {
            "oasis" => {
                let mut params = OasisParams::default();
                params.shared_machines = true;
                let session = Oasis::new(params)
                    .and_then(|a| a.session(&state, WINDOW, &jobs.past))
                    .expect("an OASiS session");
                eprintln!(
                    "{name}: session built in {:.2} s",
                    t.elapsed().as_secs_f64()
                );
                measure(c, name, session, state, &jobs, &ns);
            }
            "gadget" => {
                let session = Gadget::new(GadgetParams::default())
                    .and_then(|a| a.session(&state, WINDOW, &jobs.past))
                    .expect("a GADGET session");
                eprintln!(
                    "{name}: session built in {:.2} s",
                    t.elapsed().as_secs_f64()
                );
                measure(c, name, session, state, &jobs, &ns);
            }
            _ => {
                let mut rng = ChaCha8Rng::seed_from_u64(0);
                let mut params = LocalityParams::default();
                params.seed = Some(0);
                let session = Locality::new(params)
                    .and_then(|a| a.session(&state, WINDOW, &jobs.past, &mut rng))
                    .expect("a locality session");
                eprintln!(
                    "{name}: session built in {:.2} s",
                    t.elapsed().as_secs_f64()
                );
                measure(c, name, session, state, &jobs, &ns);
            }
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);

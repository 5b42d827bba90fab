//! Formulation tests of the ring-all-reduce (SJF-BCO) exact and bounding
//! programs: known answers computed by hand or by brute force on tiny
//! instances, the closed-form lower bound against its LP, the sandwich
//! `LB ≤ θ*_agg ≤ θ*_ILP ≤ OPT_TI ≤ any feasible makespan`, typed errors for
//! bad inputs, and the behaviour without a solver.

use dmlsched::algorithms::sjf_bco::SjfBcoError;
use dmlsched::algorithms::sjf_bco::formulation::*;
#[cfg(feature = "highs")]
use dmlsched::model::GpuId;
use dmlsched::model::Instance;
use dmlsched::model::units::{gbps, mb};
use dmlsched::model::{
    Architecture, Cluster, Discipline, Hosting, Job, JobId, Machine, MachineId, PsJob, RarJob,
    Resources, WorkerCounts,
};
#[cfg(feature = "highs")]
use rand::rngs::ChaCha8Rng;
#[cfg(feature = "highs")]
use rand::{RngExt, SeedableRng};

fn input(servers: &[u32], jobs: &[(u32, f64)]) -> FormulationInput {
    FormulationInput::from_counts(servers, jobs, 1.0).expect("valid input")
}

// ---------------------------------------------------------------------------
// Brute force references
// ---------------------------------------------------------------------------

#[cfg(feature = "highs")]
/// Subsets of `0..n` with exactly `k` elements, as bit masks.
fn subsets(n: usize, k: u32) -> Vec<u32> {
    (0u32..1 << n).filter(|m| m.count_ones() == k).collect()
}

#[cfg(feature = "highs")]
/// `θ*_ILP` by enumerating every job's GPU subset.
fn brute_force_theta(inp: &FormulationInput) -> f64 {
    fn go(inp: &FormulationInput, j: usize, loads: &mut Vec<f64>, best: &mut f64) {
        let cur = loads.iter().copied().fold(0.0, f64::max);
        if cur >= *best {
            return;
        }
        if j == inp.jobs().len() {
            *best = cur;
            return;
        }
        for m in subsets(loads.len(), inp.jobs()[j].gpus) {
            for (g, l) in loads.iter_mut().enumerate() {
                if m >> g & 1 == 1 {
                    *l += inp.load(j);
                }
            }
            go(inp, j + 1, loads, best);
            for (g, l) in loads.iter_mut().enumerate() {
                if m >> g & 1 == 1 {
                    *l -= inp.load(j);
                }
            }
        }
    }
    let mut best = f64::INFINITY;
    go(inp, 0, &mut vec![0.0; inp.total_gpus() as usize], &mut best);
    best
}

#[cfg(feature = "highs")]
/// The optimal makespan of non-preemptive gang scheduling with fixed GPU
/// sets and durations `d`, at GPU level: every order of the jobs and every
/// GPU subset, each job starting when its GPUs are free. A fully
/// left-shifted optimal schedule starts every job at the latest release of
/// its GPUs by jobs that start before it, so this enumeration finds it.
fn brute_force_makespan(inp: &FormulationInput, d: &[u64]) -> u64 {
    struct S<'a> {
        g: Vec<u32>,
        d: &'a [u64],
        subsets: Vec<Vec<u32>>,
        best: u64,
    }
    fn go(s: &mut S, used: u32, free_at: &mut [u64], cur: u64) {
        if cur >= s.best {
            return;
        }
        if used.count_ones() as usize == s.g.len() {
            s.best = cur;
            return;
        }
        for j in (0..s.g.len()).filter(|j| used >> j & 1 == 0) {
            for k in 0..s.subsets[j].len() {
                let m = s.subsets[j][k];
                let gpus: Vec<usize> = (0..free_at.len()).filter(|g| m >> g & 1 == 1).collect();
                let start = gpus.iter().map(|&g| free_at[g]).max().unwrap_or(0);
                let end = start + s.d[j];
                let saved: Vec<u64> = gpus.iter().map(|&g| free_at[g]).collect();
                for &g in &gpus {
                    free_at[g] = end;
                }
                go(s, used | 1 << j, free_at, cur.max(end));
                for (&g, &v) in gpus.iter().zip(&saved) {
                    free_at[g] = v;
                }
            }
        }
    }
    let n = inp.total_gpus() as usize;
    let mut s = S {
        g: inp.jobs().iter().map(|j| j.gpus).collect(),
        d,
        subsets: inp.jobs().iter().map(|j| subsets(n, j.gpus)).collect(),
        best: u64::MAX,
    };
    go(&mut s, 0, &mut vec![0; n], 0);
    s.best
}

#[cfg(feature = "highs")]
/// Independent check of a decoded time-indexed schedule: every job has
/// `G_j` distinct GPUs of the input, its per-server counts match, no GPU
/// serves two jobs in one slot, durations are as given; returns the
/// makespan.
fn check_schedule(inp: &FormulationInput, d: &[u64], sched: &[TimedJob]) -> u64 {
    let ids = inp.gpu_ids();
    let mut busy: Vec<(GpuId, u64, u64)> = Vec::new();
    assert_eq!(sched.len(), inp.jobs().len());
    for (j, t) in sched.iter().enumerate() {
        assert_eq!(t.job, inp.jobs()[j].id);
        assert_eq!(t.duration, d[j]);
        assert_eq!(t.gpus.len(), inp.jobs()[j].gpus as usize);
        for (s, srv) in inp.servers().iter().enumerate() {
            let on = t.gpus.iter().filter(|g| g.machine == srv.machine).count();
            assert_eq!(on, t.per_server[s] as usize);
        }
        for g in &t.gpus {
            assert!(ids.contains(g), "{g} is not a GPU of the input");
            for &(h, a, b) in &busy {
                assert!(
                    h != *g || b <= t.start || t.start + t.duration <= a,
                    "{g} serves two jobs at once"
                );
            }
            busy.push((*g, t.start, t.start + t.duration));
        }
    }
    sched.iter().map(|t| t.start + t.duration).max().unwrap()
}

// ---------------------------------------------------------------------------
// Without a solver
// ---------------------------------------------------------------------------

#[test]
fn closed_form_known_answers() {
    // Two servers × 2 GPUs, (G, ρ̂) = (3, 4), (2, 4): max(4, 20/4) = 5.
    let a = input(&[2, 2], &[(3, 4.0), (2, 4.0)]);
    assert_eq!(lower_bound_closed_form(&a), 5.0);
    assert_eq!(area_lower_bound(&a), 5.0);
    // One server × 4 GPUs, (2, 3), (1, 1), (2, 4): max(4, 15/4) = 4.
    let b = input(&[4], &[(2, 3.0), (1, 1.0), (2, 4.0)]);
    assert_eq!(lower_bound_closed_form(&b), 4.0);
    assert_eq!(area_lower_bound(&b), 3.75);
    // u = 2 halves every load.
    let c = FormulationInput::from_counts(&[4], &[(2, 3.0), (1, 1.0), (2, 4.0)], 2.0).unwrap();
    assert_eq!(lower_bound_closed_form(&c), 2.0);
    assert_eq!(c.load(2), 2.0);
}

#[test]
fn models_build_without_solver() {
    let inp = input(&[2, 3], &[(3, 4.0), (2, 4.0), (1, 2.0)]);
    let m = build_compact(&inp, CompactForm::default(), Some(DEFAULT_MAX_COLUMNS)).unwrap();
    // |J|·N binaries and θ; |J| gang rows, N GPU rows, N − |S| symmetry rows.
    assert_eq!(m.lp().n_cols(), 3 * 5 + 1);
    assert_eq!(m.lp().n_rows(), 3 + 5);
    assert_eq!(m.theta_column(), 15);
    assert_eq!(m.column(2, 4), Some(14));
    assert_eq!(m.column(3, 0), None);
    assert_eq!(m.lp().col_bounds(15), Some((4.0, f64::INFINITY)));
    let plain = build_compact(
        &inp,
        CompactForm {
            valid_inequality: false,
            symmetry: Symmetry::Off,
        },
        Some(DEFAULT_MAX_COLUMNS),
    )
    .unwrap();
    assert_eq!(plain.lp().n_rows(), 3 + 5);
    assert_eq!(plain.lp().col_bounds(15), Some((0.0, f64::INFINITY)));
    // Symmetry rows: N − |S| inside servers, N − 1 over all GPUs.
    for (symmetry, extra) in [(Symmetry::WithinServers, 3), (Symmetry::AllGpus, 4)] {
        let form = CompactForm {
            symmetry,
            ..CompactForm::default()
        };
        let m = build_compact(&inp, form, Some(DEFAULT_MAX_COLUMNS)).unwrap();
        assert_eq!(m.lp().n_rows(), 3 + 5 + extra, "{symmetry:?}");
    }

    let agg = build_server_aggregated(&inp, Some(DEFAULT_MAX_COLUMNS)).unwrap();
    assert_eq!((agg.lp().n_cols(), agg.lp().n_rows()), (3 * 2 + 1, 3 + 2));
    // y_{0,0} ≤ min(G, O) = 2.
    assert_eq!(agg.lp().col_bounds(0), Some((0.0, 2.0)));

    let d = default_durations(&inp);
    assert_eq!(d, vec![4, 4, 2]);
    let h = list_schedule_makespan(&inp, &d);
    assert!((4..=10).contains(&h), "{h}");
    let ti = build_time_indexed(&inp, &TimeIndexedOptions::default()).unwrap();
    assert_eq!(ti.horizon(), h);
    assert_eq!(ti.durations(), &d[..]);
    let per_job = |dj: u64| (h - dj + 1) as usize * 3;
    assert_eq!(ti.lp().n_cols(), 1 + per_job(4) * 2 + per_job(2));
    assert_eq!(ti.start_column(0, 0), Some(1));
    assert_eq!(ti.count_column(0, 1, 0), Some(3));
    assert_eq!(ti.start_column(0, h - 3), None);
    assert!(ti.lp().validate().is_ok());
}

#[test]
fn list_schedule_is_a_valid_horizon() {
    // One server, 2 GPUs, five single-GPU jobs of (3, 3, 2, 2, 2): in input
    // order the list schedule gives 3+2+2 = 7 on one GPU and 3+2 on the other.
    let inp = input(&[2], &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)]);
    assert_eq!(list_schedule_makespan(&inp, &[3, 3, 2, 2, 2]), 7);
    // A job needing the whole cluster waits for everything before it.
    let inp = input(&[2, 2], &[(1, 5.0), (4, 1.0)]);
    assert_eq!(list_schedule_makespan(&inp, &[5, 1]), 6);
}

#[test]
fn typed_errors_for_bad_input() {
    use FormulationError as E;
    let bad = |s: &[u32], j: &[(u32, f64)], u: f64| FormulationInput::from_counts(s, j, u);
    assert!(matches!(
        bad(&[2], &[], 1.0),
        Err(E::Empty { what: "jobs" })
    ));
    assert!(matches!(bad(&[], &[(1, 1.0)], 1.0), Err(E::Empty { .. })));
    assert!(matches!(
        bad(&[2], &[(1, f64::NAN)], 1.0),
        Err(E::InvalidEstimate { job: JobId(0), .. })
    ));
    assert!(matches!(
        bad(&[2], &[(1, 1.0), (1, f64::INFINITY)], 1.0),
        Err(E::InvalidEstimate { job: JobId(1), .. })
    ));
    assert!(matches!(
        bad(&[2], &[(1, 0.0)], 1.0),
        Err(E::InvalidEstimate { .. })
    ));
    assert!(matches!(
        bad(&[2], &[(1, 1.0)], f64::NAN),
        Err(E::InvalidEstUpper { .. })
    ));
    assert!(matches!(
        bad(&[2], &[(1, 1.0)], 0.5),
        Err(E::InvalidEstUpper { .. })
    ));
    assert!(matches!(
        bad(&[2], &[(0, 1.0)], 1.0),
        Err(E::ZeroGpus { .. })
    ));
    assert!(matches!(
        bad(&[2, 1], &[(4, 1.0)], 1.0),
        Err(E::JobCannotFit {
            demand: 4,
            cluster_gpus: 3,
            ..
        })
    ));
    assert!(matches!(
        bad(&[2, 0], &[(1, 1.0)], 1.0),
        Err(E::InvalidServer { .. })
    ));
    let dup = FormulationInput::new(
        vec![FormulationServer {
            machine: MachineId(0),
            gpus: 2,
        }],
        vec![
            FormulationJob {
                id: JobId(7),
                gpus: 1,
                est_exec_slots: 1.0,
            };
            2
        ],
        1.0,
    );
    assert!(matches!(dup, Err(E::DuplicateJob { job: JobId(7) })));
    // Size guards fire before anything of that size is built.
    let many = vec![(1, 1.0); MAX_INPUT_JOBS + 1];
    assert!(matches!(
        bad(&[1], &many, 1.0),
        Err(E::TooLarge { what: "jobs", .. })
    ));
    assert!(matches!(
        bad(&[u32::MAX, u32::MAX], &[(1, 1.0)], 1.0),
        Err(E::TooLarge { what: "GPUs", .. })
    ));
    let err = bad(&[2], &[(1, f64::NAN)], 1.0).unwrap_err().to_string();
    assert!(err.contains("job 0") && err.contains("NaN"), "{err}");
}

#[test]
fn typed_errors_for_bad_options_and_sizes() {
    use FormulationError as E;
    let inp = input(&[4, 4], &[(2, 3.0); 9]);
    assert!(matches!(
        build_compact(&inp, CompactForm::default(), Some(10)),
        Err(E::TooLarge {
            what: "columns",
            size: 73,
            limit: 10,
            ..
        })
    ));
    assert!(matches!(
        build_server_aggregated(&inp, Some(5)),
        Err(E::TooLarge {
            what: "columns",
            ..
        })
    ));
    // Nine jobs: above the time-indexed default of eight.
    assert!(matches!(
        build_time_indexed(&inp, &TimeIndexedOptions::default()),
        Err(E::TooLarge {
            what: "jobs",
            size: 9,
            limit: 8,
            ..
        })
    ));
    let small = input(&[2], &[(1, 3.0), (1, 2.0)]);
    let with = |f: fn(&mut TimeIndexedOptions)| {
        let mut o = TimeIndexedOptions::default();
        f(&mut o);
        build_time_indexed(&small, &o)
    };
    assert!(matches!(
        with(|o| o.durations = Some(vec![1])),
        Err(E::InvalidOption {
            name: "durations",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.durations = Some(vec![1, 0])),
        Err(E::InvalidOption {
            name: "durations",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.horizon = Some(2)),
        Err(E::InvalidOption {
            name: "horizon",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.horizon = Some(MAX_HORIZON_SLOTS + 1)),
        Err(E::TooLarge { what: "slots", .. })
    ));
    assert!(matches!(
        with(|o| o.durations = Some(vec![u64::MAX, 1])),
        Err(E::TooLarge { what: "slots", .. })
    ));
    assert!(matches!(
        with(|o| o.limits.max_columns = Some(3)),
        Err(E::TooLarge {
            what: "columns",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.limits.time_limit_s = f64::NAN),
        Err(E::InvalidOption {
            name: "time_limit_s",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.limits.mip_rel_gap = 1.0),
        Err(E::InvalidOption {
            name: "mip_rel_gap",
            ..
        })
    ));
    assert!(matches!(
        with(|o| o.limits.threads = Some(0)),
        Err(E::InvalidOption {
            name: "threads",
            ..
        })
    ));
}

// ---------------------------------------------------------------------------
// From an Instance
// ---------------------------------------------------------------------------

const INTRA: f64 = 1e10;

fn ring_cluster(gpus: &[f64]) -> Cluster {
    let mut c = Cluster::new(
        gpus.iter()
            .enumerate()
            .map(|(i, &g)| {
                Machine::new(
                    MachineId(i as u32),
                    Resources::zero().gpus(g).cpu_cores(64.0).nic(gbps(10.0)),
                    INTRA,
                )
            })
            .collect(),
    );
    c.ring.external_bandwidth_bps = 1.25e9;
    c.ring.reduction_speed_bps = 2e10;
    c.ring.overhead_per_server_s = 0.005;
    c
}

fn ring_job(id: u32, workers: u32, iterations: u64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations,
            model_bytes: mb(100.0),
            minibatch_size: 32,
            forward_per_sample_s: 0.001,
            backward_per_iteration_s: 0.05,
            ..RarJob::default()
        },
    )
}

/// `τ = 2·(m/w)(w−1)/B + (m/w)(w−1)/C + ξ₂·n + t_c` (seconds) of
/// [`ring_job`] with `w` workers, bandwidth `b` and `n` servers on
/// [`ring_cluster`]: `m = 100 MB`, `C = 2e10`, `ξ₂ = 0.005`,
/// `t_c = 0.001·32 + 0.05`.
fn ring_tau(w: f64, b: f64, n: f64) -> f64 {
    let shard = 1e8 / w * (w - 1.0);
    2.0 * shard / b + shard / 2e10 + 0.005 * n + 0.082
}

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
}

#[test]
fn from_instance_uses_proven_shortest_durations() {
    let inst = Instance::new(
        ring_cluster(&[4.0, 4.0, 0.0]),
        vec![ring_job(0, 4, 1000), ring_job(1, 6, 1000)],
        10.0,
        100,
    )
    .unwrap();
    let inp = FormulationInput::from_instance(&inst, 1.0).unwrap();
    // The machine without GPUs is not a server.
    assert_eq!(inp.servers().len(), 2);
    assert_eq!(inp.total_gpus(), 8);
    assert_eq!(inp.jobs()[1].gpus, 6);
    // ρ̂ = F·min(τ⁰, τ(2 servers, k = 1))/slot. With b_i = 1e10 > b_e one
    // server is faster, even for the 6-worker job no server holds.
    for (j, w) in [(0, 4.0), (1, 6.0)] {
        let one = ring_tau(w, INTRA, 1.0);
        let two = ring_tau(w, 1.25e9, 2.0);
        assert!(one < two);
        assert_close(inp.jobs()[j].est_exec_slots, 1000.0 * one / 10.0);
    }
    // With slow intra-server links the two-server time is the smaller one.
    let mut slow = ring_cluster(&[4.0, 4.0]);
    for m in &mut slow.machines {
        m.intra_bandwidth_bps = 1e8;
    }
    let inst_slow = Instance::new(slow, vec![ring_job(0, 4, 1000)], 10.0, 100).unwrap();
    let inp = FormulationInput::from_instance(&inst_slow, 1.0).unwrap();
    let one = ring_tau(4.0, 1e8, 1.0);
    let two = ring_tau(4.0, 1.25e9, 2.0);
    assert!(two < one);
    assert_close(inp.jobs()[0].est_exec_slots, 1000.0 * two / 10.0);

    let given = FormulationInput::from_instance_with_estimates(&inst, &[3.0, 5.0], 1.15).unwrap();
    assert_eq!(given.jobs()[0].est_exec_slots, 3.0);
    assert_eq!(given.jobs()[1].est_exec_slots, 5.0);
    assert_eq!(given.jobs()[1].gpus, 6);
    assert_eq!(
        given.servers(),
        FormulationInput::from_instance(&inst, 1.0)
            .unwrap()
            .servers()
    );
    assert_eq!(given.est_upper(), 1.15);
    for bad in [&[3.0][..], &[3.0, -1.0], &[3.0, f64::NAN]] {
        assert!(matches!(
            FormulationInput::from_instance_with_estimates(&inst, bad, 1.0),
            Err(FormulationError::Model(SjfBcoError::InvalidOption {
                name: "estimates",
                ..
            }))
        ));
    }
    // Accepted by the model, refused by the input's own range.
    assert!(matches!(
        FormulationInput::from_instance_with_estimates(&inst, &[3.0, 1e-9], 1.0),
        Err(FormulationError::InvalidEstimate { job: JobId(1), .. })
    ));
    assert!(matches!(
        FormulationInput::from_instance(&inst, 0.5),
        Err(FormulationError::InvalidEstUpper { .. })
    ));
}

#[test]
fn from_instance_rejects_jobs_outside_the_model() {
    use FormulationError as E;
    let inst = |jobs: Vec<Job>, gpus: &[f64]| Instance::new(ring_cluster(gpus), jobs, 10.0, 100);
    let ps = Job::new(JobId(3), 0.0, PsJob::default());
    let i = inst(vec![ring_job(0, 2, 10), ps], &[4.0]).unwrap();
    assert!(matches!(
        FormulationInput::from_instance(&i, 1.0),
        Err(E::Model(SjfBcoError::UnsupportedJob { job: JobId(3), .. }))
    ));
    let mut late = ring_job(2, 2, 10);
    late.arrival_s = 25.0;
    let i = inst(vec![late], &[4.0]).unwrap();
    assert!(matches!(
        FormulationInput::from_instance(&i, 1.0),
        Err(E::Model(SjfBcoError::UnsupportedJob { job: JobId(2), .. }))
    ));
    let mut pinned = ring_job(7, 2, 10);
    pinned.allowed_machines = Some(vec![MachineId(0)]);
    let i = inst(vec![pinned], &[4.0, 4.0]).unwrap();
    assert!(matches!(
        FormulationInput::from_instance(&i, 1.0),
        Err(E::Model(SjfBcoError::UnsupportedJob { job: JobId(7), .. }))
    ));
    let err = FormulationInput::from_instance(&i, 1.0)
        .unwrap_err()
        .to_string();
    assert!(
        err.starts_with("converting the instance: ") && err.contains("job 7"),
        "{err}"
    );
    // Wider than the usable GPUs: the model refuses it first.
    let mut cluster = ring_cluster(&[4.0, 4.0]);
    cluster.machines[1].hosts = Hosting::ParameterServers;
    let i = Instance::new(cluster, vec![ring_job(8, 6, 10)], 10.0, 100).unwrap();
    assert!(matches!(
        FormulationInput::from_instance(&i, 1.0),
        Err(E::Model(SjfBcoError::JobCannotFit {
            job: JobId(8),
            demand: 6,
            cluster_gpus: 4,
        }))
    ));
    // The model's guard on one machine, then the input's own on the total
    // (as many cores as GPUs, so the GPUs are the limit).
    let huge = |gpus: f64| {
        let mut c = ring_cluster(&[gpus]);
        c.machines[0].capacity = Resources::zero().gpus(gpus).cpu_cores(gpus);
        Instance::new(c, vec![ring_job(6, 1, 10)], 10.0, 100).unwrap()
    };
    assert!(matches!(
        FormulationInput::from_instance(&huge(1e7), 1.0),
        Err(E::Model(SjfBcoError::TooLarge { .. }))
    ));
    let i = huge(1e5);
    assert!(matches!(
        FormulationInput::from_instance(&i, 1.0),
        Err(E::TooLarge { what: "GPUs", .. })
    ));
}

#[test]
fn from_instance_accepts_what_the_model_accepts() {
    let inst = |jobs: Vec<Job>, gpus: &[f64]| Instance::new(ring_cluster(gpus), jobs, 10.0, 100);
    // Several worker counts: the largest is G_j.
    let mut several = ring_job(1, 2, 10);
    if let Architecture::RingAllReduce(r) = &mut several.architecture {
        r.workers = WorkerCounts::Allowed(vec![2, 4]);
    }
    let inp = FormulationInput::from_instance(&inst(vec![several], &[4.0]).unwrap(), 1.0).unwrap();
    assert_eq!(inp.jobs()[0].gpus, 4);
    assert_close(
        inp.jobs()[0].est_exec_slots,
        10.0 * ring_tau(4.0, INTRA, 1.0) / 10.0,
    );
    // The discipline is not looked at: a rigid gang of G_j GPUs.
    let elastic = ring_job(4, 2, 10).with_discipline(Discipline::ELASTIC);
    let inp = FormulationInput::from_instance(&inst(vec![elastic], &[4.0]).unwrap(), 1.0).unwrap();
    assert_eq!(inp.jobs()[0].gpus, 2);
    // A fractional capacity counts the workers that fit.
    let inp =
        FormulationInput::from_instance(&inst(vec![ring_job(5, 1, 10)], &[2.5]).unwrap(), 1.0)
            .unwrap();
    assert_eq!(inp.servers()[0].gpus, 2);
}

#[test]
fn from_instance_skips_machines_that_cannot_host_workers() {
    let jobs = || vec![ring_job(0, 2, 10), ring_job(1, 1, 10)];
    let both = Instance::new(ring_cluster(&[4.0, 4.0, 4.0]), jobs(), 10.0, 100).unwrap();
    let inp = FormulationInput::from_instance(&both, 1.0).unwrap();
    assert_eq!(inp.servers().len(), 3);
    let mut cluster = ring_cluster(&[4.0, 4.0, 4.0]);
    cluster.machines[1].hosts = Hosting::ParameterServers;
    cluster.machines[2].hosts = Hosting::Workers;
    let inst = Instance::new(cluster, jobs(), 10.0, 100).unwrap();
    let inp = FormulationInput::from_instance(&inst, 1.0).unwrap();
    let want = [
        FormulationServer {
            machine: MachineId(0),
            gpus: 4,
        },
        FormulationServer {
            machine: MachineId(2),
            gpus: 4,
        },
    ];
    assert_eq!(inp.servers(), want);
    assert_eq!(inp.total_gpus(), 8);
    assert_eq!(inp.gpu_ids().len(), 8);
    // Each job's worker fits some machine, but no machine fits a worker of
    // every job: no usable GPU.
    let mut cluster = ring_cluster(&[1.0, 1.0]);
    cluster.machines[0].capacity = Resources::zero().gpus(1.0).cpu_cores(1.0);
    cluster.machines[1].capacity = Resources::zero().gpus(1.0).memory(1.0);
    let mut needs_memory = ring_job(1, 1, 10);
    if let Architecture::RingAllReduce(r) = &mut needs_memory.architecture {
        r.worker = Resources::zero().gpus(1.0).memory(1.0);
    }
    let none = Instance::new(cluster, vec![ring_job(0, 1, 10), needs_memory], 10.0, 100).unwrap();
    assert!(matches!(
        FormulationInput::from_instance(&none, 1.0),
        Err(FormulationError::Model(SjfBcoError::NoGpus))
    ));
}

// ---------------------------------------------------------------------------
// Without the solver
// ---------------------------------------------------------------------------

#[cfg(not(feature = "highs"))]
#[test]
fn solving_without_highs_is_unavailable() {
    use dmlsched::lp::LpError;
    let inp = input(&[2, 2], &[(3, 4.0), (2, 4.0)]);
    let unavailable =
        |e: FormulationError| matches!(e, FormulationError::Lp(LpError::SolverUnavailable));
    assert!(unavailable(
        solve_compact_ilp(&inp, &CompactOptions::default()).unwrap_err()
    ));
    assert!(unavailable(
        lp_lower_bound(&inp, true, Some(DEFAULT_MAX_COLUMNS)).unwrap_err()
    ));
    assert!(unavailable(
        solve_server_aggregated(&inp, &DEFAULT_LIMITS).unwrap_err()
    ));
    assert!(unavailable(
        solve_time_indexed(&inp, &TimeIndexedOptions::default()).unwrap_err()
    ));
    // Building and the closed form still work.
    assert_eq!(lower_bound_closed_form(&inp), 5.0);
    assert!(build_time_indexed(&inp, &TimeIndexedOptions::default()).is_ok());
}

// ---------------------------------------------------------------------------
// With HiGHS
// ---------------------------------------------------------------------------

#[cfg(feature = "highs")]
fn random_input(
    rng: &mut ChaCha8Rng,
    max_servers: u32,
    max_gpus: u32,
    max_jobs: u32,
    max_d: u32,
) -> FormulationInput {
    let servers: Vec<u32> = (0..rng.random_range(1..=max_servers))
        .map(|_| rng.random_range(1..=max_gpus))
        .collect();
    let n: u32 = servers.iter().sum();
    let jobs: Vec<(u32, f64)> = (0..rng.random_range(1..=max_jobs))
        .map(|_| {
            let g = rng.random_range(1..=n.min(3));
            (g, f64::from(rng.random_range(1..=max_d)))
        })
        .collect();
    input(&servers, &jobs)
}

#[cfg(feature = "highs")]
fn ti(inp: &FormulationInput) -> TimeIndexedSolution {
    let s = solve_time_indexed(inp, &TimeIndexedOptions::default()).unwrap();
    assert!(s.report.optimal(), "{:?}", s.report);
    s
}

#[cfg(feature = "highs")]
fn compact(inp: &FormulationInput, form: CompactForm) -> CompactSolution {
    let s = solve_compact_ilp(inp, &{
        let mut built_ = CompactOptions::default();
        built_.form = form;
        built_
    })
    .unwrap();
    assert!(s.report.optimal(), "{:?}", s.report);
    s
}

#[cfg(feature = "highs")]
#[test]
fn known_answer_shared_gpu() {
    // Two servers × 2 GPUs, (G, ρ̂) = (3, 4), (2, 4), u = 1: LB = 5. The
    // 3-GPU job forces a GPU carrying both jobs, so θ*_ILP = 8. The
    // aggregated relaxation splits the 5 GPU-units 2/3 over the servers:
    // max(4·2, 4·3)/2 = 6. The jobs cannot run together (5 > 4 GPUs), so
    // the time-indexed optimum is 4 + 4 = 8.
    let inp = input(&[2, 2], &[(3, 4.0), (2, 4.0)]);
    let lp = lp_lower_bound(&inp, true, Some(DEFAULT_MAX_COLUMNS)).unwrap();
    assert!((lp.value - 5.0).abs() < 1e-7);
    let c = compact(&inp, CompactForm::default());
    assert!((c.theta.unwrap() - 8.0).abs() < 1e-9);
    assert!((c.report.info.incumbent.unwrap() - 8.0).abs() < 1e-6);
    assert!((c.lower_bound() - 8.0).abs() < 1e-6);
    let a = c.assignment.as_ref().unwrap();
    assert_eq!((a[0].len(), a[1].len()), (3, 2));
    assert!(a[0].iter().any(|g| a[1].contains(g)));
    let agg = solve_server_aggregated(&inp, &DEFAULT_LIMITS).unwrap();
    assert!(agg.report.optimal());
    assert!((agg.theta.unwrap() - 6.0).abs() < 1e-9);
    let t = ti(&inp);
    assert_eq!(t.makespan, Some(8));
    assert_eq!(t.lower_bound(), 8.0);
    assert_eq!(
        check_schedule(&inp, &t.durations, t.schedule.as_ref().unwrap()),
        8
    );
    assert_eq!(t.report.info.optimum(), t.report.info.incumbent);
}

#[cfg(feature = "highs")]
#[test]
fn known_answer_list_scheduling_gap() {
    // One server × 4 GPUs; (2, 3), (1, 1), (2, 4): LB = max(4, 15/4) = 4,
    // θ*_ILP = 4 (loads 4 | 3+1 | 3 | 4), and OPT = 4: the two 2-GPU jobs in
    // parallel at 0, the 1-GPU job at 3.
    let inp = input(&[4], &[(2, 3.0), (1, 1.0), (2, 4.0)]);
    assert_eq!(lower_bound_closed_form(&inp), 4.0);
    assert!((compact(&inp, CompactForm::default()).theta.unwrap() - 4.0).abs() < 1e-9);
    let t = ti(&inp);
    assert_eq!(t.makespan, Some(4));
    assert_eq!(brute_force_makespan(&inp, &t.durations), 4);
}

#[cfg(feature = "highs")]
#[test]
fn known_answer_identical_machines() {
    // One server × 2 GPUs, five single-GPU jobs (3, 3, 2, 2, 2): LB = 6 =
    // θ*_ILP = OPT ({3, 3} and {2, 2, 2}); the list schedule in input order
    // gives 7.
    let inp = input(&[2], &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)]);
    assert_eq!(lower_bound_closed_form(&inp), 6.0);
    assert!((compact(&inp, CompactForm::default()).theta.unwrap() - 6.0).abs() < 1e-9);
    let t = ti(&inp);
    assert_eq!(t.makespan, Some(6));
    assert_eq!(t.horizon, 7);
    check_schedule(&inp, &t.durations, t.schedule.as_ref().unwrap());
}

#[cfg(feature = "highs")]
#[test]
fn closed_form_equals_lp_on_random_instances() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x005e_edf1);
    for case in 0..50 {
        let servers: Vec<u32> = (0..rng.random_range(1..=4))
            .map(|_| rng.random_range(1..=8))
            .collect();
        let n: u32 = servers.iter().sum();
        let jobs: Vec<(u32, f64)> = (0..rng.random_range(1..=10))
            .map(|_| (rng.random_range(1..=n), rng.random_range(0.5..300.0)))
            .collect();
        let u = rng.random_range(1.0..1.5);
        let inp = FormulationInput::from_counts(&servers, &jobs, u).unwrap();
        let lb = lower_bound_closed_form(&inp);
        let lp = lp_lower_bound(&inp, true, Some(DEFAULT_MAX_COLUMNS)).unwrap();
        assert!(
            (lp.value - lb).abs() <= 1e-7 * lb,
            "case {case}: LP {} vs closed form {lb}",
            lp.value
        );
        let area = area_lower_bound(&inp);
        let plain = lp_lower_bound(&inp, false, Some(DEFAULT_MAX_COLUMNS)).unwrap();
        assert!(
            (plain.value - area).abs() <= 1e-7 * area,
            "case {case}: LP without the valid inequality {} vs area {area}",
            plain.value
        );
    }
}

#[cfg(feature = "highs")]
#[test]
fn compact_and_time_indexed_match_brute_force_on_tiny_instances() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xb7u64);
    for case in 0..40 {
        let inp = random_input(&mut rng, 2, 3, 4, 3);
        let theta = brute_force_theta(&inp);
        for (valid_inequality, symmetry) in [
            (true, Symmetry::Off),
            (false, Symmetry::Off),
            (true, Symmetry::WithinServers),
            (true, Symmetry::AllGpus),
        ] {
            let form = CompactForm {
                valid_inequality,
                symmetry,
            };
            let c = compact(&inp, form);
            assert!(
                (c.theta.unwrap() - theta).abs() < 1e-9,
                "case {case} {form:?}: ILP {:?} vs brute force {theta}",
                c.theta
            );
        }
        let t = ti(&inp);
        let opt = brute_force_makespan(&inp, &t.durations);
        assert_eq!(t.makespan, Some(opt), "case {case}: {inp:?}");
        assert_eq!(
            check_schedule(&inp, &t.durations, t.schedule.as_ref().unwrap()),
            opt
        );
    }
}

/// `(proven lower bound, incumbent)` of a MIP solved under a 10 s limit:
/// equal (within the gap) when it ends optimal. Without presolve a few of
/// these instances can take HiGHS longer than that on a loaded machine; the
/// sandwich then uses the solve's two sides, which hold either way.
#[cfg(feature = "highs")]
fn sides(report: &MipReport, lower: f64) -> (f64, f64) {
    (
        lower,
        report
            .info
            .incumbent
            .expect("an incumbent within the limit"),
    )
}

#[cfg(feature = "highs")]
#[test]
fn bound_sandwich_on_small_instances() {
    // LB ≤ θ*_agg ≤ θ*_ILP ≤ OPT_TI ≤ list-schedule makespan, up to 8 jobs
    // on up to 3 servers with durations up to 6 (u = 1, integer ρ̂ = d).
    let mut rng = ChaCha8Rng::seed_from_u64(0x5a_dd1e);
    let mut limits = DEFAULT_LIMITS;
    limits.time_limit_s = 10.0;
    let mut stopped = 0;
    for case in 0..100 {
        let inp = random_input(&mut rng, 3, 4, 8, 6);
        let tol = 1e-7;
        let lb = lower_bound_closed_form(&inp);
        let agg = solve_server_aggregated(&inp, &limits).unwrap();
        let c = solve_compact_ilp(&inp, &{
            let mut built_ = CompactOptions::default();
            built_.limits = limits;
            built_
        })
        .unwrap();
        stopped += usize::from(!agg.report.optimal()) + usize::from(!c.report.optimal());
        let t = ti(&inp);
        let d = &t.durations;
        let greedy = list_schedule_makespan(&inp, d);
        let (agg_lo, agg_hi) = sides(&agg.report, agg.lower_bound());
        let (theta_lo, theta_hi) = sides(&c.report, c.lower_bound());
        let opt = t.makespan.unwrap() as f64;
        assert!(lb <= agg_hi + tol, "case {case}: LB {lb} > agg {agg_hi}");
        assert!(
            agg_lo <= theta_hi + tol,
            "case {case}: agg {agg_lo} > ILP {theta_hi}"
        );
        assert!(
            theta_lo <= opt + tol,
            "case {case}: ILP {theta_lo} > OPT {opt}"
        );
        assert!(
            opt <= greedy as f64,
            "case {case}: OPT {opt} > list {greedy}"
        );
        assert!(theta_lo >= lb - tol);
        assert_eq!(
            check_schedule(&inp, d, t.schedule.as_ref().unwrap()) as f64,
            opt
        );
        // Any assignment's maximum load (here: the decoded schedule's) is at
        // least θ*_ILP.
        let mut load = std::collections::HashMap::new();
        for (j, job) in t.schedule.as_ref().unwrap().iter().enumerate() {
            for g in &job.gpus {
                *load.entry(*g).or_insert(0.0) += inp.load(j);
            }
        }
        let max_load = load.values().copied().fold(0.0, f64::max);
        assert!(theta_lo <= max_load + tol);
    }
    eprintln!("bound sandwich: {stopped} of 200 MIP solves stopped at the 10 s limit");
}

#[cfg(feature = "highs")]
#[test]
fn a_limit_is_never_reported_as_exact() {
    // Eight jobs on three servers with a time limit far too short to solve:
    // the solve ends at the limit, is not optimal, and its exact info says
    // so; its dual bound stays a valid lower bound.
    let inp = input(
        &[3, 3, 2],
        &[
            (2, 5.0),
            (3, 4.0),
            (1, 6.0),
            (2, 3.0),
            (3, 5.0),
            (1, 2.0),
            (2, 6.0),
            (3, 3.0),
        ],
    );
    let mut opts = TimeIndexedOptions::default();
    opts.limits.time_limit_s = 1e-9;
    let s = solve_time_indexed(&inp, &opts).unwrap();
    if !s.report.solver_status.is_optimal() {
        assert!(!s.report.optimal());
        assert!(s.report.info.optimum().is_none());
        assert!(matches!(
            s.report.info.status,
            dmlsched::certificate::ExactStatus::Limit { .. }
        ));
    }
    let opt = ti(&inp).makespan.unwrap() as f64;
    assert!(s.lower_bound() <= opt);
    assert!(s.report.info.dual_bound <= opt + 1e-9);
}

#[cfg(feature = "highs")]
#[test]
fn time_indexed_horizon_and_durations_options() {
    let inp = input(&[2], &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)]);
    // A horizon shorter than the optimum (6) is infeasible, with a typed error.
    let mut o = TimeIndexedOptions::default();
    o.horizon = Some(5);
    assert!(matches!(
        solve_time_indexed(&inp, &o),
        Err(FormulationError::Infeasible { .. })
    ));
    o.horizon = Some(12);
    assert_eq!(solve_time_indexed(&inp, &o).unwrap().makespan, Some(6));
    // Explicit durations.
    o.durations = Some(vec![1, 1, 1, 1, 1]);
    o.horizon = None;
    let s = solve_time_indexed(&inp, &o).unwrap();
    assert_eq!(s.makespan, Some(3));
    assert_eq!(s.horizon, 3);
    // With u = 2 the default durations are ⌈ρ̂/2⌉ = (2, 2, 1, 1, 1): OPT 4.
    let half = FormulationInput::from_counts(
        &[2],
        &[(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)],
        2.0,
    )
    .unwrap();
    assert_eq!(default_durations(&half), vec![2, 2, 1, 1, 1]);
    assert_eq!(ti(&half).makespan, Some(4));
}

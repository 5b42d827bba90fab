//! SMD-style scheduler (the crate's own design after the abstract of Yu, Wu,
//! Ji, Liu, IEEE INFOCOM 2021): one scheduling epoch with 200 active jobs on
//! a 256-GPU cluster. Targets: ≤ 100 ms with `Selection::Joint`, ≤ 1 s with
//! the default `Selection::Best`.
//!
//! The instance is `algorithms::smd::workload::generate` with 32 machines of 8 GPUs,
//! 200 jobs, seed 0; every job is waiting with its whole work, on the empty
//! cluster, so every job's candidate configurations are enumerated (the
//! bench prints the epoch's candidates, LP columns after pruning and rows).
//! One iteration is [`epoch`]: candidates, pruning, the LP, rounding,
//! improvement, outer selection and placement, with the certificate.
//!
//! A second group runs whole slotted runs ([`Smd::solve`], what
//! `dmlsched solve -a smd` does) on `examples/data/instance_layered.json`
//! grown to 200 and 1,000 jobs (`common::grown_example`: its 12 jobs copied
//! with new ids, arrivals spread over 75 % of the horizon), an overloaded
//! cluster of 16 GPUs that stops at the horizon with jobs unfinished, with
//! the queue window of 32 jobs (`SmdParams::window`, an option: past 32
//! active jobs each epoch's program is the window). `docs/benchmarks.md` measures the command line on
//! the same instances up to 3,000 jobs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};

mod common;
use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::smd::workload::{SmdWorkloadOptions, generate};
use dmlsched::algorithms::smd::{DEFAULT_WINDOW, EpochJob, Selection, Smd, SmdParams, epoch};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

fn slotted_run(c: &mut Criterion) {
    let mut group = c.benchmark_group("smd_solve_slotted_layered");
    for n in [200, 1000] {
        let inst = common::grown_example("instance_layered.json", n);
        let mut params = SmdParams::default();
        params.window = Some(DEFAULT_WINDOW);
        let smd = Smd::new(params).expect("valid parameters");
        let run = smd
            .solve(&inst, &mut ChaCha8Rng::seed_from_u64(0))
            .expect("run")
            .report;
        eprintln!(
            "{n} jobs: {} completed, {} unfinished (horizon), {} epochs",
            run.completed(),
            run.unfinished(),
            run.epochs.len()
        );
        group.bench_function(format!("{n}_jobs"), |b| {
            b.iter(|| {
                black_box(
                    smd.solve(&inst, &mut ChaCha8Rng::seed_from_u64(0))
                        .expect("run"),
                )
            })
        });
    }
    group.finish();
}

fn one_epoch(c: &mut Criterion) {
    let w = generate(&{
        let mut built = SmdWorkloadOptions::default();
        built.machines = 32;
        built.jobs = 200;
        built
    })
    .expect("workload");
    let inst = &w.instance;
    let free: Vec<_> = inst.cluster().machines.iter().map(|m| m.capacity).collect();
    let jobs: Vec<EpochJob> = inst
        .jobs()
        .iter()
        .map(|j| EpochJob::waiting(j.id, dmlsched::sim::total_work(j)))
        .collect();
    let mut group = c.benchmark_group("smd_epoch_200_jobs_256_gpus");
    for (name, selection) in [("joint", Selection::Joint), ("best", Selection::Best)] {
        let mut params = SmdParams::default();
        params.selection = selection;
        let out = epoch(inst, &free, &jobs, &params).expect("epoch");
        out.report.check(1e-9).expect("certificate");
        let r = &out.report;
        eprintln!(
            "{name}: {} plans evaluated, {} LP columns after pruning, {} rows, {} fractional groups, objective {:.1}",
            r.candidates_evaluated,
            r.lp_columns,
            r.lp_rows,
            r.fractional_groups,
            r.certificate.objective
        );
        group.bench_function(name, |b| {
            b.iter(|| black_box(epoch(inst, &free, &jobs, &params).expect("epoch")))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = one_epoch, slotted_run
}
criterion_main!(benches);

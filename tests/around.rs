//! Batches planned around what runs on a shared cluster state: SJF-BCO, the
//! `rar-*` comparators and the locality batch plan on what the state leaves
//! free (capacity and GPU ids) and commit their plans to it, never
//! over-committing a machine.
#![cfg(feature = "highs")]

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::around::plan_around;
use dmlsched::algorithms::locality::{LocalityBatch, LocalityBatchParams};
use dmlsched::algorithms::sjf_bco::{RarFf, RarLs, RarRand, SjfBco, SjfBcoParams};
use dmlsched::algorithms::smd::{Smd, SmdParams};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::{Segment, Tasks};
use dmlsched::state::{ClusterState, Holder};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

const SLOT: f64 = 60.0;

fn cluster() -> Cluster {
    let cap = Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(gb(512.0))
        .nic(gbps(10.0));
    let mut c = Cluster::homogeneous(2, cap, gbps(100.0));
    c.ring.external_bandwidth_bps = 1.25e9;
    c.ring.reduction_speed_bps = 2e10;
    c.ring.overhead_per_server_s = 0.005;
    c
}

fn ring(id: u32, workers: u32) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations: 2_000,
            model_bytes: mb(100.0),
            minibatch_size: 32,
            forward_per_sample_s: 0.001,
            backward_per_iteration_s: 0.05,
            worker: Resources::zero().gpus(1.0).cpu_cores(2.0),
            ..RarJob::default()
        },
    )
}

#[test]
fn sjf_bco_plans_a_batch_around_a_running_ring() {
    let mut state = ClusterState::new(&cluster(), SLOT).unwrap();
    // A running ring holds GPUs 0..6 of machine 0 for an hour.
    let running = ring(100, 6);
    let held = state
        .commit_job(
            &running,
            &[Segment::new(0..60, [(MachineId(0), Tasks::new(6, 0))])],
        )
        .unwrap();
    let taken: Vec<GpuId> = held[0].gpus.clone().unwrap();
    state.advance(90.0).unwrap();
    let batch = [ring(0, 8), ring(1, 2), ring(2, 4)];
    let sjf = SjfBco::new(SjfBcoParams::default()).unwrap();
    let run = plan_around(
        &sjf,
        &mut state,
        &batch,
        200,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    // The residual cluster: 2 GPUs on machine 0, 8 on machine 1.
    let gpus: Vec<f64> = run
        .residual
        .cluster()
        .machines
        .iter()
        .map(|m| m.capacity.gpus)
        .collect();
    assert_eq!(gpus, vec![2.0, 8.0]);
    assert_eq!(run.offset, 2, "from the next slot boundary");
    assert!(run.held.iter().all(|h| h.admitted), "{:?}", run.held);
    for h in &run.held {
        for s in &h.segments {
            assert!(s.slots.start >= 2);
            for g in s.gpus.iter().flatten() {
                assert!(
                    !taken.contains(g),
                    "{} took {g}, held by the running ring",
                    h.job
                );
            }
        }
    }
    state.check().unwrap();
    run.solved.certificate.check(1e-9).unwrap();
    // Every job of the batch is held; releasing the running ring changes
    // none of their plans.
    assert_eq!(
        state
            .holds()
            .filter(|(h, _)| matches!(h, Holder::Job(_)))
            .count(),
        4
    );
}

#[test]
fn a_batch_that_cannot_be_held_changes_nothing() {
    let mut state = ClusterState::new(&cluster(), SLOT).unwrap();
    let before = state.clone();
    // Ids are unique for the state's life: a batch job whose id was held
    // before is refused, and the batch's other plans are released.
    state
        .commit_job(
            &ring(5, 1),
            &[Segment::new(0..1, [(MachineId(1), Tasks::new(1, 0))])],
        )
        .unwrap();
    state.advance(120.0).unwrap();
    let after_first = state.clone();
    let sjf = SjfBco::new(SjfBcoParams::default()).unwrap();
    let err = plan_around(
        &sjf,
        &mut state,
        &[ring(0, 2), ring(5, 2)],
        200,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap_err();
    assert!(err.to_string().contains("already submitted"), "{err}");
    assert!(
        state.hold(JobId(0).into()).is_none(),
        "the batch's first plan was not released"
    );
    state.check().unwrap();
    assert_ne!(state, before);
    assert_eq!(state.holds().count(), after_first.holds().count());
}

#[test]
fn the_locality_batch_plans_around_outside_usage() {
    let mut state = ClusterState::new(&cluster(), SLOT).unwrap();
    // Machine 0 is busy with something else for the whole horizon.
    state
        .record_usage(
            MachineId(0),
            0.0,
            1e5,
            Resources::zero().gpus(8.0).cpu_cores(64.0),
        )
        .unwrap();
    let ps = |id| {
        Job::new(
            JobId(id),
            0.0,
            PsJob {
                epochs: 1,
                data_chunks: 4,
                minibatches_per_chunk: 100,
                minibatch_compute_s: 0.5,
                gradient_bytes: mb(125.0),
                worker: Resources::zero()
                    .gpus(1.0)
                    .cpu_cores(2.0)
                    .memory(gb(8.0))
                    .nic(gbps(1.0)),
                ps: Resources::zero()
                    .cpu_cores(2.0)
                    .memory(gb(8.0))
                    .nic(gbps(4.0)),
                max_workers: 4,
                max_ps: 4,
                ..PsJob::default()
            },
        )
    };
    let batch = LocalityBatch::new(LocalityBatchParams::default()).unwrap();
    let run = plan_around(
        &batch,
        &mut state,
        &[ps(0), ps(1)],
        60,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    assert!(run.held.iter().any(|h| h.admitted));
    for h in &run.held {
        for s in &h.segments {
            assert!(s.placement.iter().all(|(m, _)| *m == MachineId(1)), "{s:?}");
        }
    }
    state.check().unwrap();
}

/// The `rar-*` comparators plan the same batch around the same running
/// ring: every plan starts at the next boundary, avoids the ring's GPU ids
/// and is held in the state, which still adds up.
#[test]
fn the_ring_comparators_plan_around_a_running_ring() {
    fn around<A: Algorithm<Params = SjfBcoParams>>() {
        let mut state = ClusterState::new(&cluster(), SLOT).unwrap();
        let held = state
            .commit_job(
                &ring(100, 6),
                &[Segment::new(0..60, [(MachineId(0), Tasks::new(6, 0))])],
            )
            .unwrap();
        let taken: Vec<GpuId> = held[0].gpus.clone().unwrap();
        state.advance(90.0).unwrap();
        let batch = [ring(0, 8), ring(1, 2), ring(2, 4)];
        let alg = A::new(SjfBcoParams::default()).unwrap();
        let run = plan_around(
            &alg,
            &mut state,
            &batch,
            200,
            &mut ChaCha8Rng::seed_from_u64(0),
        )
        .unwrap();
        let admitted = run.held.iter().filter(|h| h.admitted).count();
        assert!(admitted >= 2, "{}: {admitted} admitted", A::NAME);
        for s in run.held.iter().flat_map(|h| &h.segments) {
            assert!(s.slots.start >= 2, "{}", A::NAME);
            assert!(
                s.gpus.iter().flatten().all(|g| !taken.contains(g)),
                "{}",
                A::NAME
            );
        }
        state.check().unwrap();
        run.solved.certificate.check(1e-9).unwrap();
    }
    around::<RarFf>();
    around::<RarLs>();
    around::<RarRand>();
}

/// An SMD-style run plans the shipped layered jobs around outside usage
/// that holds six GPUs of machine 0 (and their share of its CPU and NIC)
/// for the whole horizon: its residual cluster has 2 GPUs there, and no
/// plan touches the held capacity.
#[test]
fn an_smd_run_plans_around_outside_usage() {
    let text = std::fs::read_to_string("examples/data/instance_layered.json").unwrap();
    let inst = Instance::from_json(&text).unwrap();
    let mut state = ClusterState::new(inst.cluster(), inst.slot_length_s()).unwrap();
    let horizon = 400;
    let held = Resources::zero().gpus(6.0).cpu_cores(8.0);
    let m0 = inst.cluster().machines[0].id;
    state
        .record_usage(
            m0,
            0.0,
            f64::from(horizon + 10) * inst.slot_length_s(),
            held,
        )
        .unwrap();
    let smd = Smd::new(SmdParams::default()).unwrap();
    let run = plan_around(
        &smd,
        &mut state,
        inst.jobs(),
        horizon,
        &mut ChaCha8Rng::seed_from_u64(0),
    )
    .unwrap();
    assert_eq!(run.residual.cluster().machines[0].capacity.gpus, 2.0);
    assert!(run.held.iter().any(|h| h.admitted));
    state.check().unwrap();
    run.solved.certificate.check(1e-9).unwrap();
}

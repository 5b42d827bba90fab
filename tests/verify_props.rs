//! `verify`'s capacity sweep agrees with a naive slot-by-slot recount on
//! random schedules (which satisfy every other rule by construction).

use dmlsched::model::*;
use dmlsched::schedule::*;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

const HORIZON: u32 = 8;

/// (GPUs, CPU cores) of a machine, or of one task.
type Pair = (f64, f64);

/// `caps` per machine; `(worker, ps)` demands per job.
fn instance(caps: &[Pair], demands: &[(Pair, Pair)]) -> Instance {
    let machines = caps
        .iter()
        .enumerate()
        .map(|(i, &(g, c))| {
            Machine::new(
                MachineId(i as u32),
                Resources::zero().gpus(g).cpu_cores(c).nic(1.0),
                1.0,
            )
        })
        .collect();
    let jobs = demands
        .iter()
        .enumerate()
        .map(|(j, &((wg, wc), (pg, pc)))| {
            let ps = PsJob {
                epochs: 1,
                data_chunks: 1,
                minibatches_per_chunk: 1,
                minibatch_compute_s: 1.0,
                gradient_bytes: 1.0,
                worker: Resources::zero().gpus(wg).cpu_cores(wc),
                ps: Resources::zero().gpus(pg).cpu_cores(pc),
                max_workers: 16,
                max_ps: 16,
                ps_at_most_workers: false,
                sync: SyncMode::Asynchronous,
                layers: None,
            };
            Job::new(JobId(j as u32), 0.0, Architecture::ParameterServer(ps))
        })
        .collect();
    Instance::new(Cluster::new(machines), jobs, 1.0, HORIZON).unwrap()
}

/// Naive recount: the first (machine, slot, resource) over capacity, in
/// machine order, then slot order, then `ResourceKind::ALL` order.
fn naive(inst: &Instance, s: &Schedule) -> Option<(MachineId, u32, ResourceKind, f64)> {
    for m in &inst.cluster().machines {
        for t in 0..HORIZON {
            let mut load = Resources::zero();
            for js in &s.jobs {
                let job = inst.job(js.job).unwrap();
                for seg in js.segments.iter().filter(|g| g.slots.contains(&t)) {
                    for (pm, tasks) in seg.placement.iter().filter(|(pm, _)| *pm == m.id) {
                        let _ = pm;
                        let w = job.task_demand(TaskKind::Worker).unwrap();
                        let p = job.task_demand(TaskKind::ParameterServer).unwrap();
                        load = load
                            .plus(&w.scaled(f64::from(tasks.workers)))
                            .plus(&p.scaled(f64::from(tasks.ps)));
                    }
                }
            }
            for r in ResourceKind::ALL {
                if load.get(r) > m.capacity.get(r) * (1.0 + FIT_TOL) + FIT_TOL {
                    return Some((m.id, t, r, load.get(r)));
                }
            }
        }
    }
    None
}

fn schedule_strategy(n_jobs: usize, n_machines: usize) -> impl Strategy<Value = Schedule> {
    // Per job: up to 3 consecutive-or-gapped segments with random placements.
    let seg = (
        1u32..4,
        0u32..2,
        proptest::collection::vec((0..n_machines, 0u32..3, 0u32..2), 1..3),
    );
    proptest::collection::vec(proptest::collection::vec(seg, 0..3), n_jobs).prop_map(move |jobs| {
        Schedule {
            jobs: jobs
                .into_iter()
                .enumerate()
                .map(|(j, segs)| {
                    let mut t = 0;
                    let mut segments = Vec::new();
                    for (len, gap, places) in segs {
                        let start = t + gap;
                        let end = (start + len).min(HORIZON);
                        if start >= end {
                            break;
                        }
                        let mut placement: Vec<(MachineId, Tasks)> = Vec::new();
                        for (m, w, p) in places {
                            let id = MachineId(m as u32);
                            if placement.iter().all(|(pm, _)| *pm != id) {
                                placement.push((id, Tasks::new(w, p)));
                            }
                        }
                        // At least one worker and one PS in every segment.
                        placement[0].1.workers += 1;
                        placement[0].1.ps += 1;
                        segments.push(Segment::new(start..end, placement));
                        t = end;
                    }
                    JobSchedule {
                        job: JobId(j as u32),
                        admitted: true,
                        segments,
                    }
                })
                .collect(),
        }
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 300,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/verify_props.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn capacity_sweep_matches_naive_recount(
        (caps, demands, schedule) in (1usize..4, 1usize..4).prop_flat_map(|(nm, nj)| (
            proptest::collection::vec((2u32..8, 4u32..9).prop_map(|(g, c)| (f64::from(g), f64::from(c))), nm),
            proptest::collection::vec(
                ((0u32..3, 0u32..3), (0u32..2, 0u32..3)).prop_map(|((a, b), (c, d))| ((f64::from(a) * 0.5, f64::from(b)), (f64::from(c) * 0.5, f64::from(d)))),
                nj,
            ),
            schedule_strategy(nj, nm),
        ))
    ) {
        let inst = instance(&caps, &demands);
        let got = verify(&inst, &schedule);
        match naive(&inst, &schedule) {
            None => prop_assert_eq!(got, Ok(())),
            Some((machine, slot, resource, used)) => match got {
                Err(Violation::CapacityExceeded { machine: m, slot: t, resource: r, used: u, .. }) => {
                    prop_assert_eq!((m, t, r), (machine, slot, resource));
                    prop_assert!((u - used).abs() < 1e-9);
                }
                other => prop_assert!(false, "expected CapacityExceeded at {machine} slot {slot} {resource}, got {other:?}"),
            },
        }
    }
}

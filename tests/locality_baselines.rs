//! Baselines of the locality-aware scheduler: hand-computed plans on the
//! common two-machine set-up, typed errors, determinism, and random tiny
//! instances whose baseline schedules pass both checkers.

mod common;

use dmlsched::algorithms::locality::{
    LocalityBaseline, LocalityError, LocalityParams, LocalityRule, SlotConfig, verify_locality,
};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::{Configuration, Tasks, verify};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

/// A machine `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]` with 4 Gbit/s between
/// tasks on it.
fn machine(id: u32, hosts: Hosting) -> Machine {
    common::l1_machine(id, 4.0, hosts)
}

/// `Q = 400` (4 chunks of 100), `N = 4`, `τ = 0.5 s`, `e = 125 MB`,
/// `b = 1`, `B = 4` Gbit/s, worker `[1, 2, 8 GB, 1]`, PS `[0, 2, 8 GB, 4]`,
/// `f(δ) = 100 − 10δ`. With Δ = 100 s: `r^L = 100/(0.5 + 0.5) = 100`,
/// `r^D = 100/(0.5 + 2) = 40`.
fn job(id: u32, arrival_s: f64) -> Job {
    common::l1_job(id, arrival_s, 8.0, 8.0).with_utility(Utility::Linear {
        g1: 100.0,
        slope: 10.0,
    })
}

fn common(hosts: [Hosting; 2], jobs: Vec<Job>) -> Instance {
    let machines = vec![machine(0, hosts[0]), machine(1, hosts[1])];
    Instance::new(Cluster::new(machines), jobs, 100.0, 4).unwrap()
}

const BOTH: [Hosting; 2] = [Hosting::Both, Hosting::Both];

#[test]
fn always_local_puts_four_workers_and_a_ps_on_machine_0() {
    let inst = common(BOTH, vec![job(0, 0.0)]);
    let params = LocalityParams::default();
    let s = LocalityBaseline::AlwaysLocalFirstFit
        .solve(&inst, &params)
        .unwrap();
    let plan = s.report.plans[0].as_ref().expect("admitted");
    assert_eq!(plan.slots.len(), 1);
    assert_eq!(plan.slots[0].slot, 0);
    assert_eq!(
        plan.slots[0].config,
        SlotConfig::Local {
            machine: 0,
            workers: 4
        }
    );
    assert!((plan.slots[0].work - 400.0).abs() < 1e-9);
    let seg = &s.schedule.jobs[0].segments[0];
    assert_eq!(
        seg.config,
        Some(Configuration::Local {
            machine: MachineId(0)
        })
    );
    assert_eq!(s.certificate.objective, 100.0);
    // δ_min = 0: the trivial bound is f(0) = 100.
    assert_eq!(s.report.trivial_bound, 100.0);
    assert_eq!(s.certificate.relaxation_bound.value, 100.0);
    s.certificate.check(1e-9).unwrap();
}

#[test]
fn always_spread_needs_three_slots() {
    let inst = common(BOTH, vec![job(0, 0.0)]);
    let s = LocalityBaseline::AlwaysSpreadGreedy
        .solve(&inst, &LocalityParams::default())
        .unwrap();
    let plan = s.report.plans[0].as_ref().expect("admitted");
    // Workers alternate machine 0, 1, 0, 1 (GPU ties to the lower index);
    // zreq(4) = ⌈4·1/4⌉ = 1 PS on machine 0 (8 Gbit/s left on both).
    let full = SlotConfig::Distributed {
        tasks: vec![(0, Tasks::new(2, 1)), (1, Tasks::new(2, 0))],
    };
    // 160 + 160 done; the last slot needs ⌈80/40⌉ = 2 workers.
    let last = SlotConfig::Distributed {
        tasks: vec![(0, Tasks::new(1, 1)), (1, Tasks::new(1, 0))],
    };
    let got: Vec<(u32, &SlotConfig, f64)> = plan
        .slots
        .iter()
        .map(|s| (s.slot, &s.config, s.work))
        .collect();
    assert_eq!(
        got,
        vec![(0, &full, 160.0), (1, &full, 160.0), (2, &last, 80.0)]
    );
    assert_eq!(s.certificate.objective, 80.0);
    assert!(
        s.schedule.jobs[0]
            .segments
            .iter()
            .all(|g| g.config == Some(Configuration::Distributed))
    );
}

#[test]
fn local_first_fit_takes_the_next_machine_then_waits() {
    // Three jobs at slot 0: job 0 fills machine 0's GPUs, job 1 machine
    // 1's, job 2 runs LOCAL on machine 0 in slot 1 (utility 90).
    let jobs = (0..3).map(|i| job(i, 0.0)).collect();
    let inst = common(BOTH, jobs);
    let s = LocalityBaseline::AlwaysLocalFirstFit
        .solve(&inst, &LocalityParams::default())
        .unwrap();
    let first: Vec<(u32, SlotConfig)> = s
        .report
        .plans
        .iter()
        .map(|p| {
            let p = p.as_ref().unwrap();
            (p.slots[0].slot, p.slots[0].config.clone())
        })
        .collect();
    let local = |machine, workers| SlotConfig::Local { machine, workers };
    assert_eq!(
        first,
        vec![(0, local(0, 4)), (0, local(1, 4)), (1, local(0, 4))]
    );
    assert_eq!(s.report.total_utility, 290.0);
}

#[test]
fn local_is_rejected_without_a_machine_hosting_both_roles() {
    let inst = common(
        [Hosting::Workers, Hosting::ParameterServers],
        vec![job(0, 0.0)],
    );
    let params = LocalityParams::default();
    let local = LocalityBaseline::AlwaysLocalFirstFit
        .solve(&inst, &params)
        .unwrap();
    assert_eq!(local.report.admitted(), 0);
    assert!(!local.schedule.jobs[0].admitted);
    assert_eq!(local.certificate.objective, 0.0);
    // Spread: 4 workers on machine 0, the PS on machine 1; 3 slots.
    let spread = LocalityBaseline::AlwaysSpreadGreedy
        .solve(&inst, &params)
        .unwrap();
    let plan = spread.report.plans[0].as_ref().unwrap();
    assert_eq!(
        plan.slots[0].config,
        SlotConfig::Distributed {
            tasks: vec![(0, Tasks::new(4, 0)), (1, Tasks::new(0, 1))]
        }
    );
    assert_eq!(spread.certificate.objective, 80.0);
}

#[test]
fn disabled_local_is_a_typed_error_and_the_checker_enforces_it() {
    let inst = common(BOTH, vec![job(0, 0.0)]);
    let mut off = LocalityParams::default();
    off.allow_local = false;
    let err = LocalityBaseline::AlwaysLocalFirstFit
        .solve(&inst, &off)
        .unwrap_err();
    assert!(matches!(
        err,
        dmlsched::Error::Locality(LocalityError::InvalidOption {
            name: "allow_local",
            ..
        })
    ));
    let s = LocalityBaseline::AlwaysLocalFirstFit
        .solve(&inst, &LocalityParams::default())
        .unwrap();
    let err = verify_locality(&inst, &off, &s.schedule).unwrap_err();
    assert!(matches!(
        err,
        LocalityError::InvalidSchedule {
            rule: LocalityRule::LocalShape,
            ..
        }
    ));
}

#[cfg(feature = "highs")]
#[test]
fn no_locality_runs_distributed_only() {
    let inst = common(BOTH, vec![job(0, 0.0), job(1, 100.0)]);
    let s = LocalityBaseline::NoLocality
        .solve(&inst, &LocalityParams::default())
        .unwrap();
    assert!(s.report.inner.is_some());
    assert!(s.report.admitted() >= 1);
    for plan in s.report.plans.iter().flatten() {
        assert_eq!(plan.local_slots(), 0);
        // DISTRIBUTED needs ⌈400/(4·40)⌉ = 3 slots: f ≤ 80.
        assert!(plan.slots.len() >= 3);
    }
    assert!(s.report.total_utility <= 80.0 * s.report.admitted() as f64 + 1e-9);
    // The trivial bound is the full model's: f(0) for both jobs.
    assert_eq!(s.report.trivial_bound, 200.0);
    let mut off = LocalityParams::default();
    off.allow_local = false;
    verify_locality(&inst, &off, &s.schedule).unwrap();
    s.certificate.check(1e-9).unwrap();
}

#[test]
fn baselines_are_deterministic() {
    let jobs = (0..5).map(|i| job(i, 50.0 * f64::from(i))).collect();
    let inst = common(BOTH, jobs);
    let params = LocalityParams::default();
    for b in LocalityBaseline::ALL {
        if b == LocalityBaseline::NoLocality && !cfg!(feature = "highs") {
            continue;
        }
        let x = b.solve(&inst, &params).unwrap();
        let y = b.solve(&inst, &params).unwrap();
        assert_eq!(x.schedule, y.schedule, "{}", b.name());
        assert_eq!(x.report.plans, y.report.plans);
        assert_eq!(x.certificate.objective, y.certificate.objective);
    }
}

/// Random tiny instance: machines `(b_int, role)`, jobs `(arrival slot,
/// N, M, τ, e MB, memory GB, g1)`.
fn tiny_instance(
    machines: &[(f64, u8)],
    jobs: &[(u32, u32, u32, f64, f64, f64, f64)],
    slots: u32,
) -> Instance {
    let ms = machines
        .iter()
        .enumerate()
        .map(|(i, &(b_int, role))| {
            let hosts = match role {
                0 => Hosting::Workers,
                1 => Hosting::ParameterServers,
                _ => Hosting::Both,
            };
            let cap = Resources::zero()
                .gpus(4.0)
                .cpu_cores(16.0)
                .memory(gb(64.0))
                .nic(gbps(4.0));
            Machine::new(MachineId(i as u32), cap, gbps(b_int)).hosting(hosts)
        })
        .collect();
    let js = jobs
        .iter()
        .enumerate()
        .map(|(i, &(a, n, m, tau, e_mb, mem, g1))| {
            Job::new(
                JobId(i as u32),
                100.0 * f64::from(a.min(slots - 1)),
                PsJob {
                    epochs: 1,
                    data_chunks: n,
                    minibatches_per_chunk: m,
                    minibatch_compute_s: tau,
                    gradient_bytes: mb(e_mb),
                    worker: Resources::zero()
                        .gpus(1.0)
                        .cpu_cores(2.0)
                        .memory(gb(mem))
                        .nic(gbps(1.0)),
                    ps: Resources::zero()
                        .cpu_cores(2.0)
                        .memory(gb(mem))
                        .nic(gbps(2.0)),
                    max_workers: n,
                    max_ps: n,
                    ..PsJob::default()
                },
            )
            .with_utility(Utility::Linear {
                g1,
                slope: g1 / 8.0,
            })
        })
        .collect();
    Instance::new(Cluster::new(ms), js, 100.0, slots).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 48,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct("proptest-regressions/locality_baselines.txt"))),
        ..ProptestConfig::default()
    })]

    #[test]
    fn baseline_schedules_pass_both_checkers(
        machines in prop::collection::vec((0.5f64..20.0, 0u8..4), 1..=3),
        jobs in prop::collection::vec(
            (0u32..3, 1u32..7, 20u32..200, 0.1f64..1.0, 1.0f64..200.0, 4.0f64..30.0, 10.0f64..200.0),
            1..=4,
        ),
        slots in 1u32..=4,
    ) {
        prop_assume!(machines.iter().any(|m| m.1 != 1) && machines.iter().any(|m| m.1 != 0));
        let inst = tiny_instance(&machines, &jobs, slots);
        let params = LocalityParams::default();
        for b in [LocalityBaseline::AlwaysLocalFirstFit, LocalityBaseline::AlwaysSpreadGreedy] {
            let s = b.solve(&inst, &params).unwrap();
            verify(&inst, &s.schedule).unwrap();
            let check = verify_locality(&inst, &params, &s.schedule).unwrap();
            prop_assert!((check.total_utility - s.certificate.objective).abs() <= 1e-9 * (1.0 + check.total_utility));
            prop_assert!(s.certificate.objective <= s.report.trivial_bound + 1e-9);
            s.certificate.check(1e-9).unwrap();
            if b == LocalityBaseline::AlwaysSpreadGreedy {
                prop_assert!(s.report.plans.iter().flatten().all(|p| p.local_slots() == 0));
            } else {
                prop_assert!(s.report.plans.iter().flatten().all(|p| p.local_slots() == p.slots.len()));
            }
        }
        #[cfg(feature = "highs")]
        match LocalityBaseline::NoLocality.solve(&inst, &params) {
            Ok(s) => {
                verify(&inst, &s.schedule).unwrap();
                verify_locality(&inst, &params, &s.schedule).unwrap();
                prop_assert!(s.report.plans.iter().flatten().all(|p| p.local_slots() == 0));
                s.certificate.check(1e-9).unwrap();
            }
            // No schedulable job with a positive late utility: no bounds.
            Err(dmlsched::Error::Online(_) | dmlsched::Error::Locality(_)) => {}
            Err(e) => panic!("{e}"),
        }
    }
}

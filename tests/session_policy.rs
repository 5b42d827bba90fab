//! The online schedulers' simulator policies are their sessions, driven by
//! the simulator's events: a completion releases the rest of a plan, and a
//! plan that ends before its job is extended (or the job preempted).
#![cfg(feature = "highs")]

mod common;

use dmlsched::algorithms::locality::{LocalityParams, LocalityPolicy};
use dmlsched::model::*;
use dmlsched::online::JobStatus;
use dmlsched::schedule::verify;
use dmlsched::sim::{Policy, SimOptions, simulate};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// Two machines `[4 GPU, 16 vCPU, 64 GB, 10 Gbit/s]`, 4 Gbit/s between
/// tasks on one machine; `jobs` jobs of the common set-up arriving 100 s
/// apart; slots of 100 s.
fn instance(jobs: u32, horizon: u32) -> Instance {
    let machines = (0..2)
        .map(|i| common::l1_machine(i, 4.0, Hosting::Both))
        .collect();
    let jobs = (0..jobs)
        .map(|i| {
            common::l1_job(i, 100.0 * f64::from(i), 8.0, 8.0).with_utility(Utility::Linear {
                g1: 100.0,
                slope: 1.0,
            })
        })
        .collect();
    Instance::new(Cluster::new(machines), jobs, 100.0, horizon).unwrap()
}

fn run(inst: &Instance, params: &LocalityParams) -> (LocalityPolicy, dmlsched::sim::SimResult) {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let mut policy = LocalityPolicy::new(inst, params, &mut rng).unwrap();
    let result = simulate(inst, &mut policy, &SimOptions::default()).unwrap();
    verify(inst, &result.to_schedule(inst)).unwrap();
    (policy, result)
}

/// The model believes tasks on one machine talk 100 times faster than
/// they do: plans are too short, and the simulator's jobs outlive them.
/// Each is extended on its machines, and every job completes.
#[test]
fn a_plan_that_ends_before_its_job_is_extended() {
    let inst = instance(3, 40);
    let mut params = LocalityParams::default();
    params.intra_factor = Some(100.0 * 4.0 / 10.0);
    let (policy, result) = run(&inst, &params);
    let (extended, preempted) = policy.overruns();
    assert!(extended >= 1, "{extended} extended, {preempted} preempted");
    for d in policy.decisions() {
        assert!(d.admitted, "{:?}", d.rejection);
    }
    assert!(result.jobs.iter().all(|j| j.finish_s.is_some()));
}

/// Every completion finishes the job in its session (the rest of its plan
/// released), and the session's certificate at the end checks.
#[test]
fn completions_finish_the_jobs_in_the_session() {
    let inst = instance(4, 40);
    let (policy, result) = run(&inst, &LocalityParams::default());
    let mut finished = 0;
    for r in &result.jobs {
        let status = policy.session().status(r.job);
        if r.finish_s.is_some() {
            assert_eq!(status, Some(JobStatus::Finished), "{}", r.job);
            finished += 1;
        } else {
            assert_ne!(status, Some(JobStatus::Finished), "{}", r.job);
        }
    }
    assert!(finished >= 2);
    let state = policy.state();
    let now = state.current_slot();
    for m in &inst.cluster().machines {
        for t in now + 1..inst.horizon_slots() {
            assert_eq!(
                state.used(m.id, t).unwrap(),
                Resources::zero(),
                "{} slot {t}",
                m.id
            );
        }
    }
    let c = Box::new(policy).finish(&inst).unwrap().unwrap();
    assert_eq!(c.algorithm, "locality");
    c.check(1e-9).unwrap();
}

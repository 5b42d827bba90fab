//! SJF-BCO on the paper's set-up: κ deduplication, and a replay of its
//! schedule in the crate's simulator (moved from the crate's SJF-BCO tests
//! with the paper's instance generator).

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::sjf_bco::*;
use dmlsched::schedule::{Placement, Tasks};
use dmlsched::sim::{Action, Decisions, Event, Policy, SimOptions, SimView, simulate};
use rand::SeedableRng;

// ---------------------------------------------------------------------------
// The paper's set-up: κ deduplication, replay in the crate's simulator
// ---------------------------------------------------------------------------

use dmlsched_experiments::sjf_bco::{Calibration, paper_instance, paper_params};

#[test]
fn t_c3_kappa_dedup_matches_every_integer_kappa() {
    let inst = paper_instance(1, 20, Calibration::PaperSynthetic).unwrap();
    let all = SjfBco::new(paper_params(1200))
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    let mut every = paper_params(1200);
    every.kappas = KappaSpec::List((1..=32).collect());
    let every = SjfBco::new(every)
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    assert_eq!(all.schedule, every.schedule);
    assert_eq!(all.report.makespan_raw, every.report.makespan_raw);
    assert_eq!(all.report.theta_tilde, every.report.theta_tilde);
    assert_eq!(all.report.kappa_star, every.report.kappa_star);
    assert!(all.report.trials < every.report.trials);
}

/// Starts each job, at a slot boundary, once every earlier job on each of
/// its GPUs has finished: the slot simulator's rule, in the crate's
/// simulator.
struct Replay {
    assignments: Vec<RarAssignment>,
    started: Vec<bool>,
}

impl Policy for Replay {
    fn name(&self) -> String {
        "replay".into()
    }

    fn on_event(&mut self, view: &SimView<'_>, _e: &Event) -> dmlsched::Result<Vec<Action>> {
        let mut out = Vec::new();
        let mut order: Vec<usize> = (0..self.assignments.len()).collect();
        order.sort_by_key(|&i| self.assignments[i].order_key);
        for i in order {
            let a = &self.assignments[i];
            if self.started[i] {
                continue;
            }
            let key = (a.provisional_start, a.order_key);
            let ready = self.assignments.iter().all(|b| {
                (b.provisional_start, b.order_key) >= key
                    || !b.gpus.iter().any(|g| a.gpus.contains(g))
                    || view
                        .job(b.job)
                        .is_some_and(|j| j.status() == dmlsched::sim::JobStatus::Completed)
            });
            if ready {
                self.started[i] = true;
                let mut placement = Placement::new();
                for g in &a.gpus {
                    placement.add(g.machine, Tasks::new(1, 0));
                }
                out.push(Action::SetAllocation {
                    job: a.job,
                    placement,
                    gpus: Some(a.gpus.clone()),
                    config: None,
                });
            }
        }
        Ok(out)
    }
}

#[test]
fn replay_in_the_crate_simulator_agrees_within_one_slot() {
    for (seed, servers, cal) in [
        (0, 20, Calibration::PaperSynthetic),
        (2, 10, Calibration::PaperSynthetic),
        (0, 20, Calibration::PhysicalMs160),
    ] {
        let inst = paper_instance(seed, servers, cal).unwrap();
        let s = SjfBco::new(paper_params(1500))
            .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
            .unwrap();
        let mut policy = Replay {
            started: vec![false; s.report.assignments.len()],
            assignments: s.report.assignments.clone(),
        };
        let mut opts = SimOptions::default();
        opts.decisions = Decisions::SlotBoundaries;
        let r = simulate(&inst, &mut policy, &opts).unwrap();
        let ours = s.report.makespan_raw as i64;
        let theirs = r
            .jobs
            .iter()
            .map(|j| i64::from(j.completion_slot.unwrap()) + 1)
            .max()
            .unwrap();
        assert!(
            (ours - theirs).abs() <= 1,
            "seed {seed}: {ours} vs {theirs}"
        );
    }
}

//! GPU choice of FA-FFP and LBSGF on hand-built trial states.

use super::*;
use crate::algorithms::sjf_bco::model::TimeModel;
use crate::algorithms::sjf_bco::params::FaFfpStrategy;
use crate::algorithms::sjf_bco::sim::StartRule;
use crate::model::{
    Cluster, Instance, Job, JobId, Machine, MachineId, RarJob, Resources, WorkerCounts,
};

/// Servers with these GPU counts and one ring job per entry of `gpus`
/// (100 iterations, estimate 10 slots under fixed durations).
fn model(servers: &[u32], gpus: &[u32]) -> RarModel {
    let machines = servers
        .iter()
        .enumerate()
        .map(|(i, &g)| {
            Machine::new(
                MachineId(i as u32),
                Resources::zero().gpus(f64::from(g)),
                10.0,
            )
        })
        .collect();
    let jobs = gpus
        .iter()
        .enumerate()
        .map(|(i, &g)| {
            let ring = RarJob {
                workers: WorkerCounts::Fixed(g),
                iterations: 100,
                backward_per_iteration_s: 0.1,
                worker: Resources::zero().gpus(1.0),
                ..RarJob::default()
            };
            Job::new(JobId(i as u32), 0.0, ring)
        })
        .collect();
    let inst = Instance::new(Cluster::new(machines), jobs, 1.0, 1000).unwrap();
    RarModel::new(&inst, TimeModel::FixedDuration, None).unwrap()
}

fn config() -> TrialConfig<'static> {
    TrialConfig {
        order: &[],
        theta: 100.0,
        u: 1.0,
        availability: Availability::IdleAndBudget,
        duration: DurationEstimate::AtPlacement,
        eval: TrialEval::Resimulate,
        sim: SlotSimOptions {
            progress: ProgressMode::Fractional,
            start_rule: StartRule::PerGpuFifo,
            max_slots: 100_000,
        },
    }
}

/// A fresh state at clock 0: every GPU idle with `U = 0`.
fn state(model: &RarModel) -> State<'_> {
    let n = model.total_gpus();
    State {
        model,
        cfg: config(),
        clock: 0,
        u: vec![0.0; n],
        busy: vec![0; n],
        active: Vec::new(),
        placed: Vec::new(),
    }
}

/// The choice of `rule` for job `j` at the state's clock.
fn pick(st: &State<'_>, j: usize, rule: Choice) -> Option<Vec<usize>> {
    let job = &st.model.jobs[j];
    let cands = st.candidates(job.estimate / st.cfg.u, true);
    st.choose(rule, &cands, job.gpus as usize, None)
}

/// Servers s0 (4 GPUs, flat 0..4), s1 (4, flat 4..8), s2 (8, flat 8..16);
/// a 2-GPU job X runs on s1's GPUs 0 and 1 with `U = ρ̂_X`; a 2-GPU job Y
/// is placed.
#[test]
fn faffp_least_accumulated_and_pack_occupied() {
    let m = model(&[4, 4, 8], &[2, 2]);
    let mut st = state(&m);
    let rho_x = m.jobs[0].estimate;
    for g in [4, 5] {
        st.busy[g] = 10;
        st.u[g] = rho_x;
    }
    // Least U, ties by server then local index: s0's GPUs 0 and 1.
    let least = pick(&st, 1, Choice::FaFfp(FaFfpStrategy::LeastAccumulated));
    assert_eq!(least, Some(vec![0, 1]));
    // Occupied servers first, then best fit: s1's two idle GPUs.
    let pack = pick(&st, 1, Choice::FaFfp(FaFfpStrategy::PackOccupied));
    assert_eq!(pack, Some(vec![6, 7]));
}

/// Servers s0 (8 GPUs, flat 0..8, every `U = 5`), s1 (4, flat 8..12) and
/// s2 (8, flat 12..20) with `U = 0`; a 6-GPU job.
#[test]
fn lbsgf_server_order_and_spread() {
    let m = model(&[8, 4, 8], &[6]);
    let mut st = state(&m);
    st.u[..8].fill(5.0);
    // Server order s1, s2, s0; λ = 1 and λ = 2 take {s1, s2} (4 + 8 ≥ 6,
    // ≥ 12), λ = 3 all three (20 ≥ 18): the 6 least-U candidates are s1's
    // four and s2's first two in every case.
    for lambda in [1.0, 2.0, 3.0] {
        let sel = pick(&st, 0, Choice::Lbsgf(lambda));
        assert_eq!(sel, Some(vec![8, 9, 10, 11, 12, 13]), "λ = {lambda}");
    }
    // With 7 of s2's GPUs busy, s1 and s2 hold 5 candidates: λ = 1 and
    // λ = 2 find none, λ = 3 adds s0 and takes its least-U GPU (index 0).
    st.busy[13..20].fill(10);
    assert_eq!(pick(&st, 0, Choice::Lbsgf(1.0)), None);
    assert_eq!(pick(&st, 0, Choice::Lbsgf(2.0)), None);
    let wide = pick(&st, 0, Choice::Lbsgf(3.0));
    assert_eq!(wide, Some(vec![0, 8, 9, 10, 11, 12]));
    // The budget also excludes GPUs: with θ = 12 and ρ̂ = 10, s0's GPUs
    // (U = 5) are no candidates, so λ = 3 finds only 5.
    st.cfg.theta = 12.0;
    assert_eq!(pick(&st, 0, Choice::Lbsgf(3.0)), None);
}

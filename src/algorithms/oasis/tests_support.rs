//! Builders and the exhaustive search shared by OASiS's unit tests
//! (`tests_oracle`, `tests_shared`): resources used are vCPU and NIC, the
//! other three stay 0.

use super::model::OasisJob;
use crate::model::units::gbps;
use crate::model::*;

/// The slot length of the tests' instances (s).
pub(super) const SLOT: f64 = 3600.0;

/// A machine of `cpu` cores and a NIC of `nic_gbps`, hosting `hosts`.
pub(super) fn server(id: u32, cpu: f64, nic_gbps: f64, hosts: Hosting) -> Machine {
    Machine::new(
        MachineId(id),
        Resources::zero().cpu_cores(cpu).nic(gbps(nic_gbps)),
        gbps(nic_gbps),
    )
    .hosting(hosts)
}

/// A job arriving at the start of 0-based slot `a` with `E, N, M`,
/// `ω = omega` slots (all compute), worker demand `(cpu, b)` and PS demand
/// `(cpu, B)`, at most `N` workers and PSs.
pub(super) fn job(
    id: u32,
    a: u32,
    (e, n, m): (u32, u32, u32),
    omega: f64,
    w: (f64, f64),
    s: (f64, f64),
    utility: Utility,
) -> Job {
    Job::new(
        JobId(id),
        f64::from(a) * SLOT,
        Architecture::ParameterServer(PsJob {
            epochs: e,
            data_chunks: n,
            minibatches_per_chunk: m,
            minibatch_compute_s: omega * SLOT,
            gradient_bytes: 0.0,
            worker: Resources::zero().cpu_cores(w.0).nic(gbps(w.1)),
            ps: Resources::zero().cpu_cores(s.0).nic(gbps(s.1)),
            max_workers: n,
            max_ps: n,
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        }),
    )
    .with_utility(utility)
}

pub(super) fn table(v: &[f64]) -> Utility {
    Utility::Table { values: v.to_vec() }
}

pub(super) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol * b.abs().max(1.0)
}

/// The best payoff `u(t) − cost` over every combination of per-slot worker
/// totals (`per_slot[k][y]`: the least cost of `y` workers in slot
/// `slots[k]`, infinite when none fits), `t` the last slot used, among plans
/// that train every chunk; `None` if no plan pays.
pub(super) fn best_payoff(j: &OasisJob, slots: &[u32], per_slot: &[Vec<f64>]) -> Option<f64> {
    let mut best: Option<f64> = None;
    let choices = j.max_workers as usize + 1;
    let combos = choices.pow(slots.len() as u32);
    for mut code in 0..combos {
        let (mut cost, mut chunks, mut last) = (0.0, 0u64, None);
        for (k, &t) in slots.iter().enumerate() {
            let y = code % choices;
            code /= choices;
            cost += per_slot[k][y];
            chunks += j.chunks_for(y as u64);
            if y > 0 {
                last = Some(t);
            }
        }
        if let Some(t) = last
            && cost.is_finite()
            && chunks >= j.total_chunks
        {
            let payoff = j.utility_at(t) - cost;
            if payoff > 0.0 && best.is_none_or(|b| payoff > b) {
                best = Some(payoff);
            }
        }
    }
    best
}

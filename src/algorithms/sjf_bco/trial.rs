//! One trial: places every job, one at a time in the given order, for a
//! fixed budget `θ` and a fixed rule per job, from a fresh state.
//!
//! A GPU is a candidate for job `j` at the trial's clock when it is idle
//! (`busy_until ≤ clock`) and has budget room (`U[g] + ρ̂_j/u ≤ θ`). When the
//! rule finds too few candidates, the clock jumps to the next provisional
//! completion of a placed job; when there is none, the trial fails. A placed
//! job gets a provisional duration (by default from its per-iteration time
//! at placement, with the contention of the jobs active then), and each of
//! its GPUs is busy until the job's provisional end and is charged `ρ̂_j/u`.

use rand::rngs::ChaCha8Rng;

pub(crate) use super::choice::Choice;
use super::choice::GpuLoad;
use super::model::RarModel;
use super::params::{Availability, DurationEstimate, TrialEval};
use super::sim::{Placed, RarExecution, SlotSimOptions, server_counts, simulate};
use crate::model::units::{ceil_tol, floor_tol};
use crate::timing::ProgressMode;

/// Slack on the budget test `U[g] + ρ̂/u ≤ θ`.
pub(crate) const BUDGET_TOL: f64 = 1e-9;

/// Everything a trial needs besides the rule.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TrialConfig<'a> {
    /// Job indices in placement order.
    pub(crate) order: &'a [usize],
    /// Budget `θ`.
    pub(crate) theta: f64,
    /// `u`.
    pub(crate) u: f64,
    /// Candidate rule.
    pub(crate) availability: Availability,
    /// Provisional durations.
    pub(crate) duration: DurationEstimate,
    /// How the trial is scored.
    pub(crate) eval: TrialEval,
    /// Slot simulator options (also the progress mode of the durations).
    pub(crate) sim: SlotSimOptions,
}

/// The result of one trial.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TrialOutcome {
    /// Every job placed (complete only if the trial succeeded).
    pub(crate) placed: Vec<Placed>,
    /// The makespan, `None` for a failed trial (`+∞`).
    pub(crate) makespan: Option<u64>,
    /// `max_g U[g]`.
    pub(crate) w_hat_max: f64,
    /// The slot simulation, under [`TrialEval::Resimulate`].
    pub(crate) execution: Option<RarExecution>,
}

/// One placed job still relevant for contention or waiting.
struct Active {
    start: u64,
    end: u64,
    servers: Vec<(u32, u32)>,
}

/// The per-trial state, fresh for every trial.
struct State<'a> {
    model: &'a RarModel,
    cfg: TrialConfig<'a>,
    clock: u64,
    u: Vec<f64>,
    busy: Vec<u64>,
    active: Vec<Active>,
    placed: Vec<Placed>,
}

/// Runs one trial with `rule(j)` choosing job `j`'s rule.
pub(crate) fn run_trial(
    model: &RarModel,
    cfg: TrialConfig<'_>,
    rule: &dyn Fn(usize) -> Choice,
    mut rng: Option<&mut ChaCha8Rng>,
) -> TrialOutcome {
    let n = model.total_gpus();
    let mut st = State {
        model,
        cfg,
        clock: 0,
        u: vec![0.0; n],
        busy: vec![0; n],
        active: Vec::new(),
        placed: Vec::with_capacity(cfg.order.len()),
    };
    let mut ok = true;
    for (key, &j) in cfg.order.iter().enumerate() {
        if !st.place(j, key as u64, rule(j), rng.as_deref_mut()) {
            ok = false;
            break;
        }
    }
    let w_hat_max = st.u.iter().copied().fold(0.0, f64::max);
    let mut out = TrialOutcome {
        placed: st.placed,
        makespan: None,
        w_hat_max,
        execution: None,
    };
    if ok {
        match cfg.eval {
            TrialEval::Provisional => {
                out.makespan = st.active.iter().map(|a| a.end).max();
            }
            TrialEval::Resimulate => {
                if let Ok(e) = simulate(model, &out.placed, &cfg.sim) {
                    out.makespan = Some(e.makespan);
                    out.execution = Some(e);
                }
            }
        }
    }
    out
}

impl State<'_> {
    /// Places job `j`, waiting for completions as needed; false if the
    /// trial fails.
    fn place(
        &mut self,
        j: usize,
        key: u64,
        choice: Choice,
        mut rng: Option<&mut ChaCha8Rng>,
    ) -> bool {
        let job = &self.model.jobs[j];
        let w = job.estimate / self.cfg.u;
        let g = job.gpus as usize;
        let idle = self.cfg.availability == Availability::IdleAndBudget;
        // A ring that reserves bandwidth when it spans servers stays on one
        // server when one can hold it: its reservation is then never
        // charged (the trial does not count reservations).
        let one_server =
            job.reserved_bps > 0.0 && self.model.servers.iter().any(|s| s.gpus >= job.gpus);
        loop {
            let cands = self.candidates(w, idle);
            let sel = if one_server {
                self.choose_on_one_server(choice, &cands, g, rng.as_deref_mut())
            } else {
                self.choose(choice, &cands, g, rng.as_deref_mut())
            };
            if let Some(sel) = sel {
                let start = if idle {
                    self.clock
                } else {
                    sel.iter().map(|&x| self.busy[x]).max().unwrap_or(0)
                };
                let servers = server_counts(self.model, &sel);
                let Some(d) = self.duration(j, &servers, start) else {
                    return false;
                };
                let end = start.saturating_add(d);
                for &x in &sel {
                    self.busy[x] = end;
                    self.u[x] += w;
                }
                self.active.push(Active {
                    start,
                    end,
                    servers,
                });
                self.placed.push(Placed {
                    job: j,
                    gpus: sel,
                    start,
                    key,
                });
                return true;
            }
            if !idle {
                return false;
            }
            let clock = self.clock;
            let Some(next) = self
                .active
                .iter()
                .map(|a| a.end)
                .filter(|&e| e > clock)
                .min()
            else {
                return false;
            };
            self.clock = next;
            self.active.retain(|a| a.end > next);
        }
    }

    /// Candidate GPUs in flat order.
    fn candidates(&self, w: f64, idle: bool) -> Vec<usize> {
        (0..self.u.len())
            .filter(|&g| {
                (!idle || self.busy[g] <= self.clock)
                    && self.u[g] + w <= self.cfg.theta + BUDGET_TOL
            })
            .collect()
    }

    /// The provisional duration of job `j` on `servers` from `start`;
    /// `None` when it makes no progress (`⌊1/τ⌋ = 0` in `Floor` mode).
    fn duration(&self, j: usize, servers: &[(u32, u32)], start: u64) -> Option<u64> {
        let job = &self.model.jobs[j];
        let d = match self.cfg.duration {
            DurationEstimate::Estimate => ceil_tol(job.estimate),
            DurationEstimate::AtPlacement => {
                let p = if servers.len() >= 2 {
                    servers
                        .iter()
                        .map(|&(s, _)| 1 + self.multi_on(s, start))
                        .max()
                        .unwrap_or(1)
                } else {
                    0
                };
                let tau = self.model.tau(j, servers, p);
                match self.cfg.sim.progress {
                    ProgressMode::Fractional => ceil_tol(job.iterations * tau),
                    ProgressMode::Floor => {
                        let r = floor_tol(1.0 / tau);
                        if r < 1.0 {
                            return None;
                        }
                        ceil_tol(job.iterations / r)
                    }
                }
            }
        };
        Some(d.max(1.0) as u64)
    }

    /// Multi-server jobs active at slot `t` on server `s`.
    fn multi_on(&self, s: u32, t: u64) -> u32 {
        self.active
            .iter()
            .filter(|a| a.servers.len() >= 2 && a.start <= t && t < a.end)
            .filter(|a| a.servers.iter().any(|&(x, _)| x == s))
            .count() as u32
    }

    /// The rule's choice of `g` GPUs on one server: its choice on all
    /// candidates when that is on one server, else its choice on the
    /// candidates of each server that has `g` of them, the one of least
    /// total `U` (ties by server); `None` if no server has `g` candidates.
    fn choose_on_one_server(
        &self,
        choice: Choice,
        cands: &[usize],
        g: usize,
        mut rng: Option<&mut ChaCha8Rng>,
    ) -> Option<Vec<usize>> {
        let first = self.choose(choice, cands, g, rng.as_deref_mut())?;
        if server_counts(self.model, &first).len() <= 1 {
            return Some(first);
        }
        let mut best: Option<(f64, Vec<usize>)> = None;
        // Candidates are ascending flat GPUs, so each server's are one run.
        let gs = self.model.gpu_server.as_slice();
        for own in cands.chunk_by(|&a, &b| gs[a] == gs[b]) {
            let Some(sel) = self.choose(choice, own, g, rng.as_deref_mut()) else {
                continue;
            };
            let load: f64 = sel.iter().map(|&x| self.u[x]).sum();
            if best.as_ref().is_none_or(|(b, _)| load < *b) {
                best = Some((load, sel));
            }
        }
        best.map(|(_, sel)| sel)
    }

    /// Applies a rule to the candidates; `None` if it cannot pick `g` GPUs.
    /// A server is occupied when one of its GPUs is busy after the clock.
    fn choose(
        &self,
        choice: Choice,
        cands: &[usize],
        g: usize,
        rng: Option<&mut ChaCha8Rng>,
    ) -> Option<Vec<usize>> {
        let occupied = |s: u32| {
            let srv = &self.model.servers[s as usize];
            (srv.first_gpu..srv.first_gpu + srv.gpus as usize).any(|x| self.busy[x] > self.clock)
        };
        let load = GpuLoad {
            servers: &self.model.servers,
            gpu_server: &self.model.gpu_server,
            u: &self.u,
            occupied: &occupied,
        };
        load.choose(choice, cands, g, rng)
    }
}

#[cfg(test)]
mod tests;

//! The event-driven slot simulator: evaluates a final placement with
//! contention, exactly as stepping one slot at a time would.
//!
//! Each GPU serves its jobs in the order `(provisional start, order key)`.
//! A job starts in the first slot in which every earlier job on each of its
//! GPUs has completed ([`StartRule::PerGpuFifo`]; [`StartRule::GlobalOrder`]
//! also waits until every job with a smaller order key has started). In a
//! slot, a running job `j` gains `1/τ_j` iterations (`⌊1/τ_j⌋` with
//! [`ProgressMode::Floor`]), where `τ_j` follows the contention of the jobs
//! active in that slot; it holds its GPUs for the whole of its last slot and
//! completes at the boundary `C_j` after it. Between two starts or
//! completions every `τ` is constant, so the simulator jumps from event to
//! event.

use super::error::SjfBcoError;
use super::model::RarModel;
use crate::model::units::{ceil_tol, floor_tol};
use crate::model::{GpuId, JobId};
use crate::timing::ProgressMode;

/// The GPUs of one job and the order in which it uses them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RarAssignment {
    /// The job.
    pub job: JobId,
    /// Its `G_j` distinct GPUs.
    pub gpus: Vec<GpuId>,
    /// The slot at which the placement put it (fixes, with `order_key`, the
    /// order of jobs on each GPU).
    pub provisional_start: u64,
    /// Tie-break of the per-GPU order (the job's place in the job order).
    pub order_key: u64,
}

/// When a job may start in the slot simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum StartRule {
    /// As soon as every earlier job on each of its GPUs has completed.
    #[default]
    PerGpuFifo,
    /// Also not before every job with a smaller order key has started.
    GlobalOrder,
}

/// Options of the slot simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct SlotSimOptions {
    /// Fractional (default) or whole iterations per slot.
    pub(crate) progress: ProgressMode,
    /// When a job may start.
    pub(crate) start_rule: StartRule,
    /// The run fails once simulated time passes this many slots.
    pub(crate) max_slots: u64,
}

/// The outcome of a slot simulation (all jobs arrive at slot 0, so a job's
/// completion time is its JCT).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct RarExecution {
    /// Start slot of each job, in instance order.
    pub start: Vec<u64>,
    /// Completion `C_j` of each job (the boundary after its last slot).
    pub completion: Vec<u64>,
    /// `max_j C_j`.
    pub makespan: u64,
    /// Mean JCT, slots.
    pub mean_jct: f64,
    /// Smallest JCT, slots.
    pub min_jct: u64,
    /// Largest JCT, slots.
    pub max_jct: u64,
    /// `max_j (C_j − start_j)/ρ̂_j`: an empirical `u`.
    pub max_duration_ratio: f64,
}

/// One placed job, in the model's numbering.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Placed {
    /// Job index in the model.
    pub(crate) job: usize,
    /// Flat GPU indices.
    pub(crate) gpus: Vec<usize>,
    /// Provisional start slot.
    pub(crate) start: u64,
    /// Order key.
    pub(crate) key: u64,
}

impl Placed {
    /// `(server, GPUs)` pairs, sorted by server.
    pub(crate) fn servers(&self, model: &RarModel) -> Vec<(u32, u32)> {
        server_counts(model, &self.gpus)
    }
}

/// `(server, GPUs)` of a GPU set, sorted by server.
pub(crate) fn server_counts(model: &RarModel, gpus: &[usize]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    let mut servers: Vec<u32> = gpus.iter().map(|&g| model.gpu_server[g]).collect();
    servers.sort_unstable();
    for s in servers {
        match out.last_mut() {
            Some((last, n)) if *last == s => *n += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

/// Converts public assignments into the model's numbering, checking them.
pub(crate) fn placed_from(
    model: &RarModel,
    assignments: &[RarAssignment],
) -> Result<Vec<Placed>, SjfBcoError> {
    let mut seen = vec![false; model.jobs.len()];
    let mut out = Vec::with_capacity(assignments.len());
    for a in assignments {
        let bad = |reason: String| SjfBcoError::BadAssignment { job: a.job, reason };
        let j = model
            .jobs
            .iter()
            .position(|m| m.id == a.job)
            .ok_or_else(|| bad("not in the instance".into()))?;
        if std::mem::replace(&mut seen[j], true) {
            return Err(bad("assigned twice".into()));
        }
        let mut gpus = Vec::with_capacity(a.gpus.len());
        for &g in &a.gpus {
            gpus.push(
                model
                    .gpu_index(g)
                    .ok_or_else(|| bad(format!("{g} is not a usable GPU")))?,
            );
        }
        let mut sorted = gpus.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if sorted.len() != gpus.len() || gpus.len() != model.jobs[j].gpus as usize {
            return Err(bad(format!(
                "needs {} distinct GPUs, got {:?}",
                model.jobs[j].gpus, a.gpus
            )));
        }
        out.push(Placed {
            job: j,
            gpus,
            start: a.provisional_start,
            key: a.order_key,
        });
    }
    if let Some(j) = seen.iter().position(|s| !s) {
        return Err(SjfBcoError::BadAssignment {
            job: model.jobs[j].id,
            reason: "not assigned".into(),
        });
    }
    Ok(out)
}

/// Per-job immediate predecessors on each of its GPUs (indices into
/// `placed`).
fn predecessors(model: &RarModel, placed: &[Placed]) -> Vec<Vec<usize>> {
    let mut per_gpu: Vec<Vec<usize>> = vec![Vec::new(); model.total_gpus()];
    for (i, p) in placed.iter().enumerate() {
        for &g in &p.gpus {
            per_gpu[g].push(i);
        }
    }
    let mut preds = vec![Vec::new(); placed.len()];
    for seq in &mut per_gpu {
        seq.sort_by_key(|&i| (placed[i].start, placed[i].key, i));
        for w in seq.windows(2) {
            preds[w[1]].push(w[0]);
        }
    }
    for p in &mut preds {
        p.sort_unstable();
        p.dedup();
    }
    preds
}

/// The state of a simulation run.
struct Run<'a> {
    model: &'a RarModel,
    placed: &'a [Placed],
    servers: Vec<Vec<(u32, u32)>>,
    preds: Vec<Vec<usize>>,
    start: Vec<Option<u64>>,
    done: Vec<Option<u64>>,
    progress: Vec<f64>,
    running: Vec<usize>,
    /// Active multi-server jobs per server.
    cnt: Vec<u32>,
}

impl Run<'_> {
    fn multi(&self, i: usize) -> bool {
        self.servers[i].len() >= 2
    }

    fn set_running(&mut self, i: usize, on: bool) {
        if self.multi(i) {
            for &(s, _) in &self.servers[i] {
                let c = &mut self.cnt[s as usize];
                *c = if on { *c + 1 } else { c.saturating_sub(1) };
            }
        }
        if on {
            self.running.push(i);
        } else {
            self.running.retain(|&r| r != i);
        }
    }

    /// Starts, in order-key order, every job eligible at `t`.
    fn start_eligible(&mut self, t: u64, order: &[usize], rule: StartRule) {
        for &i in order {
            if self.start[i].is_some() {
                continue;
            }
            let ready = self.preds[i]
                .iter()
                .all(|&p| self.done[p].is_some_and(|c| c <= t));
            if ready {
                self.start[i] = Some(t);
                self.set_running(i, true);
            } else if rule == StartRule::GlobalOrder {
                break;
            }
        }
    }

    /// Iterations per slot of running job `i` now.
    fn rate(&self, i: usize, mode: ProgressMode) -> f64 {
        let p = if self.multi(i) {
            self.servers[i]
                .iter()
                .map(|&(s, _)| self.cnt[s as usize])
                .max()
                .unwrap_or(0)
        } else {
            0
        };
        let tau = self.model.tau(self.placed[i].job, &self.servers[i], p);
        match mode {
            ProgressMode::Fractional => 1.0 / tau,
            ProgressMode::Floor => floor_tol(1.0 / tau),
        }
    }
}

/// Runs the simulation of `placed` (one entry per model job).
pub(crate) fn simulate(
    model: &RarModel,
    placed: &[Placed],
    opts: &SlotSimOptions,
) -> Result<RarExecution, SjfBcoError> {
    let n = placed.len();
    let mut run = Run {
        model,
        placed,
        servers: placed.iter().map(|p| p.servers(model)).collect(),
        preds: predecessors(model, placed),
        start: vec![None; n],
        done: vec![None; n],
        progress: vec![0.0; n],
        running: Vec::new(),
        cnt: vec![0; model.servers.len()],
    };
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&i| (placed[i].key, placed[i].start, i));
    let (mut t, mut finished) = (0u64, 0usize);
    while finished < n {
        run.start_eligible(t, &order, opts.start_rule);
        if run.running.is_empty() {
            let stuck = order.iter().find(|&&i| run.start[i].is_none());
            let job = stuck.map_or(model.jobs[0].id, |&i| model.jobs[placed[i].job].id);
            return Err(SjfBcoError::Deadlock { slot: t, job });
        }
        let rates: Vec<(usize, f64)> = run
            .running
            .iter()
            .map(|&i| (i, run.rate(i, opts.progress)))
            .collect();
        let mut step = f64::INFINITY;
        for &(i, r) in &rates {
            if r > 0.0 && r.is_finite() {
                let left = model.jobs[placed[i].job].iterations - run.progress[i];
                step = step.min(ceil_tol(left / r).max(1.0));
            }
        }
        if !step.is_finite() {
            let job = model.jobs[placed[rates[0].0].job].id;
            return Err(SjfBcoError::NoProgress { job });
        }
        t = t.saturating_add(step as u64);
        if t > opts.max_slots {
            return Err(SjfBcoError::HorizonExceeded {
                slots: t,
                limit: opts.max_slots,
            });
        }
        for &(i, r) in &rates {
            run.progress[i] += step * r;
            let f = model.jobs[placed[i].job].iterations;
            if run.progress[i] >= f - 1e-9 * f.max(1.0) {
                run.done[i] = Some(t);
                run.set_running(i, false);
                finished += 1;
            }
        }
    }
    Ok(execution(model, placed, &run.start, &run.done))
}

/// Collects the per-job times in instance order.
fn execution(
    model: &RarModel,
    placed: &[Placed],
    start: &[Option<u64>],
    done: &[Option<u64>],
) -> RarExecution {
    let n = model.jobs.len();
    let (mut s, mut c) = (vec![0; n], vec![0; n]);
    let mut ratio: f64 = 0.0;
    for (i, p) in placed.iter().enumerate() {
        s[p.job] = start[i].unwrap_or(0);
        c[p.job] = done[i].unwrap_or(0);
        let rho = (c[p.job] - s[p.job]) as f64;
        ratio = ratio.max(rho / model.jobs[p.job].estimate);
    }
    RarExecution {
        makespan: c.iter().copied().max().unwrap_or(0),
        mean_jct: c.iter().map(|&x| x as f64).sum::<f64>() / n.max(1) as f64,
        min_jct: c.iter().copied().min().unwrap_or(0),
        max_jct: c.iter().copied().max().unwrap_or(0),
        max_duration_ratio: ratio,
        start: s,
        completion: c,
    }
}

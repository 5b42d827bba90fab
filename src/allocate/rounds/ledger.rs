//! What each job was allocated and what it received, round by round: the
//! time credits behind the priorities, the deficits that break their ties,
//! and the report of realised time fractions against the allocation.

use std::collections::BTreeMap;

use crate::model::JobId;
use crate::schedule::Placement;

/// One job the round-based policy tracks, from its arrival to its end.
#[derive(Debug, Clone)]
pub(super) struct Tracked {
    pub(super) id: JobId,
    pub(super) arrival_s: f64,
    /// Work per second on a consolidated placement of each type (0: the
    /// job fits none of the type's machines).
    pub(super) throughput: Vec<f64>,
    /// GPUs it holds when it runs.
    pub(super) scale: u32,
    /// Workers and PSs it runs with.
    pub(super) size: (u32, u32),
    /// Whether it may not be paused: once it runs, it keeps its type and
    /// placement until it completes.
    pub(super) pinned: bool,
    /// Whether it is a rigid gang: once it ran, it resumes only where it
    /// last ran (so only on that type).
    pub(super) rigid: bool,
    /// The type it last ran on.
    pub(super) last_type: Option<usize>,
    /// Its row of the current allocation `X` (zeros until the first one
    /// that counts it).
    pub(super) x: Vec<f64>,
    /// Seconds run on each type since the last reset, plus half a round
    /// (the credit every job starts from, so that no share is 0).
    pub(super) received: Vec<f64>,
    /// Per type, the time `X` promised minus the time received, summed
    /// over the resets.
    pub(super) deficit: Vec<f64>,
    /// The type and placement it runs on now.
    pub(super) on: Option<(usize, Placement)>,
    /// `∫ X dt` per type while it is in the system.
    x_time: Vec<f64>,
    /// Seconds run on each type.
    run_time: Vec<f64>,
    /// `∫ Σ_t X_t·T_t dt`: the work `X` promised.
    promised_work: f64,
}

impl Tracked {
    pub(super) fn new(
        id: JobId,
        arrival_s: f64,
        throughput: Vec<f64>,
        scale: u32,
        size: (u32, u32),
        credit: f64,
    ) -> Tracked {
        let n = throughput.len();
        Tracked {
            id,
            arrival_s,
            throughput,
            scale,
            size,
            pinned: false,
            rigid: false,
            last_type: None,
            x: vec![0.0; n],
            received: vec![credit; n],
            deficit: vec![0.0; n],
            on: None,
            x_time: vec![0.0; n],
            run_time: vec![0.0; n],
            promised_work: 0.0,
        }
    }

    /// Books `dt` seconds of the current allocation and of the current run.
    pub(super) fn book(&mut self, dt: f64) {
        for (t, x) in self.x.iter().enumerate() {
            self.x_time[t] += x * dt;
            self.promised_work += x * self.throughput[t] * dt;
        }
        if let Some((t, _)) = &self.on {
            self.received[*t] += dt;
            self.run_time[*t] += dt;
        }
    }

    /// Starts a new allocation period: the deficit takes what `X` promised
    /// over `elapsed` seconds minus what was received beyond the credit,
    /// and the received time goes back to the credit.
    pub(super) fn reset(&mut self, elapsed: f64, credit: f64) {
        for t in 0..self.x.len() {
            self.deficit[t] += self.x[t] * elapsed - (self.received[t] - credit);
            self.received[t] = credit;
        }
    }

    /// Gavel's priority on type `t`: `X_t` over the share of type `t`'s
    /// received time this job got (`total` being every job's received time
    /// on `t`); 0 where `X_t` or the throughput is 0.
    pub(super) fn priority(&self, t: usize, total: f64) -> f64 {
        if self.x[t] <= 0.0 || self.throughput[t] <= 0.0 {
            0.0
        } else {
            self.x[t] * total / self.received[t]
        }
    }

    /// Its row of the report, at its end `now_s` with `done_work` done.
    pub(super) fn close(&self, now_s: f64, done_work: f64) -> JobRounds {
        let life = now_s - self.arrival_s;
        let share = |v: &[f64]| -> Vec<f64> {
            v.iter()
                .map(|x| if life > 0.0 { x / life } else { 0.0 })
                .collect()
        };
        JobRounds {
            job: self.id,
            in_system_s: life,
            allocated: share(&self.x_time),
            realised: share(&self.run_time),
            promised_work: self.promised_work,
            done_work,
        }
    }
}

/// One job's realised time fractions against its allocation, over its
/// time in the system.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct JobRounds {
    /// The job.
    pub job: JobId,
    /// Seconds from its arrival to its completion.
    pub in_system_s: f64,
    /// Per type ([`RoundsReport::types`]), the allocation's fraction
    /// `X[job][type]` averaged over its time in the system (0 while no
    /// allocation counted it yet).
    pub allocated: Vec<f64>,
    /// Per type, the fraction of its time in the system it ran there.
    pub realised: Vec<f64>,
    /// The work the allocation promised: `∫ Σ_type X·T dt` with `T` its
    /// throughput on a consolidated placement of the type.
    pub promised_work: f64,
    /// The work it did.
    pub done_work: f64,
}

impl JobRounds {
    /// Half the L1 distance between the realised and the allocated
    /// fractions: 0 when the rounds realised `X` exactly.
    pub fn fraction_gap(&self) -> f64 {
        0.5 * self
            .allocated
            .iter()
            .zip(&self.realised)
            .map(|(a, r)| (a - r).abs())
            .sum::<f64>()
    }

    /// Work done over the work `X` promised (Gavel's effective-throughput
    /// ratio); `None` when nothing was promised.
    pub fn throughput_ratio(&self) -> Option<f64> {
        (self.promised_work > 0.0).then(|| self.done_work / self.promised_work)
    }
}

/// What a round-based run did: its rounds, its allocations and each job's
/// realised fractions against them.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RoundsReport {
    /// The GPU types, the columns of every job's fractions (`gpu` for an
    /// untyped cluster).
    pub types: Vec<String>,
    /// Rounds decided.
    pub rounds: u64,
    /// Allocations computed (one per round after an arrival or a
    /// completion).
    pub allocations: u64,
    /// One row per job that completed, in completion order (none for the
    /// jobs still in the system).
    pub jobs: Vec<JobRounds>,
}

impl RoundsReport {
    /// The run's gaps between the rounds and `X`, when a job completed.
    pub fn gaps(&self) -> Option<RoundsGaps> {
        if self.jobs.is_empty() {
            return None;
        }
        let n = self.jobs.len() as f64;
        let mean_fraction_gap = self.jobs.iter().map(JobRounds::fraction_gap).sum::<f64>() / n;
        let mut ratios: Vec<(f64, JobId)> = self
            .jobs
            .iter()
            .filter_map(|j| j.throughput_ratio().map(|r| (r, j.job)))
            .collect();
        ratios.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let m = ratios.len();
        let median_ratio = match m {
            0 => None,
            _ if m % 2 == 1 => Some(ratios[m / 2].0),
            _ => Some(0.5 * (ratios[m / 2 - 1].0 + ratios[m / 2].0)),
        };
        Some(RoundsGaps {
            mean_fraction_gap,
            median_ratio,
            least_ratio: ratios.first().copied(),
        })
    }
}

/// How far a round-based run realised its allocations ([`RoundsReport::gaps`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct RoundsGaps {
    /// The mean over the completed jobs of [`JobRounds::fraction_gap`].
    pub mean_fraction_gap: f64,
    /// The median [`JobRounds::throughput_ratio`] of the jobs `X` promised
    /// work (the median, since a job `X` gave almost nothing that ran on
    /// leftover GPUs has a ratio without bound); `None` when none was.
    pub median_ratio: Option<f64>,
    /// The least of those ratios, with its job.
    pub least_ratio: Option<(f64, JobId)>,
}

/// The jobs a round-based policy tracks, by position in the instance.
pub(super) type Ledger = BTreeMap<usize, Tracked>;

/// Every job's received time on each of `types` types.
pub(super) fn received_totals(ledger: &Ledger, types: usize) -> Vec<f64> {
    let mut total = vec![0.0; types];
    for job in ledger.values() {
        for (t, r) in job.received.iter().enumerate() {
            total[t] += r;
        }
    }
    total
}

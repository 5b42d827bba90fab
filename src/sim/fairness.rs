//! Fairness of a run: each completed job's finish-time fairness `ρ`,
//! Jain's index over the jobs' normalised throughputs, and the worst-off
//! job's share ([`SimResult::fairness`]).
//!
//! A job's fair duration is what it would take alone on its share of the
//! cluster while `n` jobs are present, `n` counted when it arrives (itself
//! included): its solo duration `T` (alone on the empty cluster, [`Solo`]),
//! stretched when the `g` GPUs it holds alone exceed the `G/n` of its
//! share: `T_fair = T·max(1, g·n/G)`. Then `ρ = JCT/T_fair` (Themis, Mahajan
//! et al., NSDI 2020: `ρ > 1` means the job did worse than on a `1/n`
//! cluster of its own), and its normalised throughput is `1/ρ`.

use super::result::{JobEnd, SimResult};

/// A job's run alone on the empty cluster: its duration and the GPUs it
/// held on average.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Solo {
    /// Seconds from start to finish, alone.
    pub duration_s: f64,
    /// GPUs held on average over that time.
    pub gpus: f64,
}

impl Solo {
    /// A solo run of `duration_s` seconds on `gpus` GPUs.
    pub fn new(duration_s: f64, gpus: f64) -> Solo {
        Solo { duration_s, gpus }
    }
}

/// The fairness metrics of a run over its completed jobs with a solo run
/// ([`SimResult::fairness`]).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Fairness {
    /// Jobs measured: completed, with a solo run.
    pub jobs: usize,
    /// The largest finish-time fairness `ρ`.
    pub max_rho: f64,
    /// The mean `ρ`.
    pub mean_rho: f64,
    /// The share of the measured jobs with `ρ > 1`.
    pub share_rho_above_1: f64,
    /// Jain's index of the normalised throughputs `1/ρ`: 1 when all are
    /// equal, `1/n` when one job has everything.
    pub jain: f64,
    /// The worst-off job's normalised throughput, `min 1/ρ = 1/max ρ`.
    pub worst_share: f64,
}

/// Jain's fairness index `J(x) = (Σ x)² / (n·Σ x²)` of non-negative
/// values: 1 when all are equal, `1/n` when one holds everything. `None`
/// for no values or when all are 0 (undefined).
///
/// ```
/// use dmlsched::sim::jain_index;
/// assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), Some(1.0));
/// assert_eq!(jain_index(&[1.0, 0.0, 0.0, 0.0]), Some(0.25));
/// assert!((jain_index(&[1.0, 0.5]).unwrap() - 0.9).abs() < 1e-12);
/// assert_eq!(jain_index(&[0.0, 0.0]), None);
/// ```
pub fn jain_index(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

impl SimResult {
    /// The run's fairness, given each job's solo run
    /// in the order of [`jobs`](Self::jobs) (`None`: the job cannot run
    /// alone, and is not measured). `None` when no completed job has a
    /// solo run, or when `solo` does not have one entry per job.
    /// [`baselines::solo_runs`](crate::baselines::solo_runs) gives the solo
    /// runs of an instance.
    ///
    /// A job's fair duration is what it would take alone on its share of
    /// the cluster while `n` jobs are present, `n` counted when it arrives
    /// (itself included; rejected jobs and jobs finished by then do not
    /// count): its solo duration `T`, stretched when the `g` GPUs it holds
    /// alone exceed the `G/n` of its share, `T_fair = T·max(1, g·n/G)`.
    /// Then `ρ = JCT/T_fair` (Themis, Mahajan et al., NSDI 2020: `ρ > 1`
    /// means the job did worse than on a `1/n` cluster of its own), and
    /// its normalised throughput is `1/ρ`. See [`Fairness`] for the
    /// metrics.
    pub fn fairness(&self, solo: &[Option<Solo>]) -> Option<Fairness> {
        if solo.len() != self.jobs.len() || self.gpus_total <= 0.0 {
            return None;
        }
        let mut rho = Vec::new();
        for (i, job) in self.jobs.iter().enumerate() {
            let (Some(jct), Some(alone)) = (job.jct_s, solo[i]) else {
                continue;
            };
            if !matches!(job.end(), JobEnd::Completed)
                || alone.duration_s.is_nan()
                || alone.duration_s <= 0.0
            {
                continue;
            }
            let present = self.present_at(job.arrival_s);
            let stretch = (alone.gpus * present as f64 / self.gpus_total).max(1.0);
            rho.push(jct / (alone.duration_s * stretch));
        }
        if rho.is_empty() {
            return None;
        }
        let n = rho.len() as f64;
        let max_rho = rho.iter().copied().fold(0.0, f64::max);
        let shares: Vec<f64> = rho.iter().map(|r| 1.0 / r).collect();
        Some(Fairness {
            jobs: rho.len(),
            max_rho,
            mean_rho: rho.iter().sum::<f64>() / n,
            share_rho_above_1: rho.iter().filter(|&&r| r > 1.0).count() as f64 / n,
            jain: jain_index(&shares).unwrap_or(f64::NAN),
            worst_share: 1.0 / max_rho,
        })
    }

    /// Jobs present at time `t`: arrived by then, not rejected, and not
    /// finished before it.
    fn present_at(&self, t: f64) -> usize {
        self.jobs
            .iter()
            .filter(|j| j.arrival_s <= t && !j.rejected && j.finish_s.is_none_or(|f| f > t))
            .count()
    }
}

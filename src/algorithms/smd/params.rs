//! Parameters of the SMD-style scheduler.

use crate::lp::ExactMipLimits;
use crate::model::units::Num;

use super::SmdError;

/// How a waiting job is charged in the epoch program (its "wait" option's
/// cost `ω`). Every mode adds the job's reconfiguration time `o`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WaitCharge {
    /// `ω_i = W_i + ρ_i(1, 1) + o_i`, where `W_i` sums, over the jobs ahead
    /// of `i` in shortest-remaining-first order, their best standalone time
    /// `ρ_j*`, each multiplied by its dominant share `s_j*` against the
    /// total cluster capacity when `share_weighted` (a perfectly packed
    /// cluster clearing the shorter jobs), or not (a one-job-at-a-time
    /// queue).
    Queue {
        /// Weight the jobs ahead by their dominant share.
        share_weighted: bool,
    },
    /// `ω_i = horizon_s + ρ_i(1, 1) + o_i`: the job is assumed to start
    /// after one horizon on its smallest configuration.
    NextEpoch {
        /// The assumed wait, seconds (finite, ≥ 0).
        horizon_s: f64,
    },
    /// `ω_i = β·ρ_i(1, 1) + o_i` with `β ≥ 1`.
    Parametric {
        /// The factor `β` (finite, ≥ 1).
        beta: f64,
    },
}

impl Default for WaitCharge {
    fn default() -> Self {
        WaitCharge::Queue {
            share_weighted: true,
        }
    }
}

/// Which candidate plans the outer job selection compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Selection {
    /// The joint plan and every prefix plan; the one with the smallest
    /// estimated sum of completion times wins.
    Best,
    /// The joint plan only.
    Joint,
    /// Prefix plans only.
    Prefix,
    /// No LP: shortest-remaining-first greedy plus the improvement pass.
    Greedy,
}

/// When the exact MIP of the epoch program is solved (for comparison: the
/// rounded plan stays the answer, the MIP's optimum or dual bound goes
/// into the certificate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ExactMode {
    /// Never (the default, to keep epochs fast).
    Never,
    /// For every solved epoch program.
    Always,
    /// For epoch programs with at most `max_columns` columns.
    IfSmall {
        /// The column limit (≥ 1).
        max_columns: usize,
    },
}

/// Parameters of [`SmdScheduler`](super::SmdScheduler) and
/// [`epoch`](super::epoch).
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct SmdParams {
    /// The wait charge (default `Queue { share_weighted: true }`).
    pub wait_charge: WaitCharge,
    /// The outer selection (default [`Selection::Best`] with the `highs`
    /// feature, [`Selection::Greedy`] without it).
    pub selection: Selection,
    /// Up to this many fractional groups, every order of rounding them is
    /// tried (default 5); beyond, decreasing regret.
    pub max_permutation_groups: usize,
    /// Most full passes of the improvement step (default 10).
    pub improvement_passes: usize,
    /// When to solve the exact MIP (default [`ExactMode::Never`]).
    pub exact: ExactMode,
    /// Limits of the exact MIP (default 10 s, relative gap 10⁻⁹, one
    /// thread; no column cap: `mip.max_columns` must be `None`, the size
    /// guards are [`exact`](Self::exact) and
    /// [`max_columns`](Self::max_columns)).
    pub mip: ExactMipLimits,
    /// At most as many PSs as workers (default `true`); a job's own rule
    /// applies as well.
    pub pw_rule: bool,
    /// Only powers of two as worker counts (default `false`).
    pub powers_of_two: bool,
    /// Size guard: most configurations enumerated for one job (default
    /// 4096).
    pub max_candidates_per_job: usize,
    /// Size guard: most LP columns of one epoch program (default 10⁶).
    pub max_columns: usize,
    /// Only configurations that complete at least one whole iteration in
    /// this many seconds are candidates (default `None`: no limit).
    /// [`Smd::solve`](super::Smd) sets it to the slot length:
    /// in a slotted run, where progress counts whole iterations per slot,
    /// a configuration whose iteration is longer than a slot never makes
    /// progress.
    pub max_iteration_s: Option<f64>,
    /// A queue window under [`Selection::Best`] and [`Selection::Prefix`]
    /// (default `None`: every active job, the joint plan and the prefixes
    /// up to the whole queue, as the method reconsiders every active job at
    /// every epoch). With `Some(w)`, when more than `w` jobs are active an
    /// epoch's program holds only the first `w` jobs of the
    /// shortest-remaining-first order, the others wait (as in a prefix
    /// plan), and the candidate plans are the prefix plans of sizes
    /// `1, 2, 4, …` below the window and the window itself: not the
    /// method's plans past `w` active jobs, but an epoch whose cost stops
    /// growing with the queue ([`DEFAULT_WINDOW`] is the size measured).
    pub window: Option<usize>,
}

impl Default for SmdParams {
    fn default() -> Self {
        SmdParams {
            wait_charge: WaitCharge::default(),
            selection: if cfg!(feature = "highs") {
                Selection::Best
            } else {
                Selection::Greedy
            },
            max_permutation_groups: 5,
            improvement_passes: 10,
            exact: ExactMode::Never,
            mip: ExactMipLimits::new(10.0, 1e-9, None),
            pw_rule: true,
            powers_of_two: false,
            max_candidates_per_job: 4096,
            max_columns: 1_000_000,
            max_iteration_s: None,
            window: None,
        }
    }
}

/// The queue window measured for overloaded queues ([`SmdParams::window`]
/// `Some(DEFAULT_WINDOW)`): the queue length up to which the method tries
/// every prefix plan.
pub const DEFAULT_WINDOW: usize = 32;

/// Most groups whose orders are all tried (`8! = 40 320` orders).
pub const MAX_PERMUTATION_GROUPS: usize = 8;

impl SmdParams {
    /// Checks every option.
    ///
    /// # Errors
    ///
    /// [`SmdError::InvalidOption`] naming the option.
    pub fn validate(&self) -> Result<(), SmdError> {
        let bad = |name, reason: String| Err(SmdError::InvalidOption { name, reason });
        match self.wait_charge {
            WaitCharge::NextEpoch { horizon_s } if !(horizon_s.is_finite() && horizon_s >= 0.0) => {
                return bad(
                    "wait_charge.horizon_s",
                    format!("{} is not finite and ≥ 0", Num(horizon_s)),
                );
            }
            WaitCharge::Parametric { beta } if !(beta.is_finite() && beta >= 1.0) => {
                return bad(
                    "wait_charge.beta",
                    format!("{} is not finite and ≥ 1", Num(beta)),
                );
            }
            _ => {}
        }
        if self.max_permutation_groups > MAX_PERMUTATION_GROUPS {
            return bad(
                "max_permutation_groups",
                format!(
                    "{} is above {MAX_PERMUTATION_GROUPS}",
                    self.max_permutation_groups
                ),
            );
        }
        if let ExactMode::IfSmall { max_columns: 0 } = self.exact {
            return bad("exact.max_columns", "at least one column is needed".into());
        }
        if let Err(e) = self.mip.validate_uncapped() {
            // The epoch programs' size guard is `max_columns` itself.
            let name = if e.name == "max_columns" {
                "mip.max_columns"
            } else {
                e.name
            };
            return bad(name, e.reason);
        }
        if self.max_candidates_per_job == 0 {
            return bad("max_candidates_per_job", "must be at least 1".into());
        }
        if self.max_columns == 0 {
            return bad("max_columns", "must be at least 1".into());
        }
        if self.window == Some(0) {
            return bad("window", "must be at least 1 job (null: no window)".into());
        }
        if let Some(t) = self.max_iteration_s
            && !(t.is_finite() && t > 0.0)
        {
            return bad(
                "max_iteration_s",
                format!("{} is not finite and positive", Num(t)),
            );
        }
        Ok(())
    }
}

//! The epoch program: one group of options per job (its candidate
//! configurations and "wait"), capacity rows, and the wait charges.

use crate::model::JobId;
use crate::model::units::Num;

use super::error::non_negative;
use super::{SmdError, WaitCharge};

/// One option of a group: a configuration, its usage per capacity row and
/// its cost (seconds).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EpochOption {
    /// `(workers, PSs)`.
    pub(crate) config: (u32, u32),
    /// `a_i^r(k)` per capacity row.
    pub(crate) usage: Vec<f64>,
    /// `c_i(k)`, seconds.
    pub(crate) cost: f64,
}

/// The options of one job. Choosing none of [`Group::options`] is waiting,
/// at cost [`Group::wait_cost`] and no usage.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    /// The job.
    pub(crate) job: JobId,
    /// Its arrival, seconds (a tie-breaker of the shortest-remaining-first
    /// order).
    pub(crate) arrival_s: f64,
    /// `ω_i = c_i(0)`, seconds.
    pub(crate) wait_cost: f64,
    /// Its candidate configurations (after dominance pruning when part of
    /// an [`EpochProblem`]).
    pub(crate) options: Vec<EpochOption>,
    /// The key of the shortest-remaining-first order (the best standalone
    /// time); [`Group::new`] uses the cheapest option's cost.
    pub(crate) srpt_key: f64,
}

impl Group {
    /// A group with arrival 0 whose order key is its cheapest cost (the
    /// hand-made programs of the tests).
    #[cfg(test)]
    pub(crate) fn new(job: JobId, wait_cost: f64, options: Vec<EpochOption>) -> Self {
        let srpt_key = options.iter().map(|o| o.cost).fold(wait_cost, f64::min);
        Group {
            job,
            arrival_s: 0.0,
            wait_cost,
            options,
            srpt_key,
        }
    }

    /// `c_i^min = min_{k ∈ K_i ∪ {0}} c_i(k)`.
    pub(crate) fn min_cost(&self) -> f64 {
        self.options
            .iter()
            .map(|o| o.cost)
            .fold(self.wait_cost, f64::min)
    }

    /// The cost of a choice (`None`: wait).
    pub(crate) fn cost_of(&self, choice: Option<usize>) -> f64 {
        choice.map_or(self.wait_cost, |k| self.options[k].cost)
    }
}

/// A multiple-choice multi-dimensional knapsack: pick one option per group
/// (or wait) so that the usage fits the capacity of every row, at least
/// total cost.
///
/// [`EpochProblem::new`] validates the numbers and drops dominated options:
/// an option is dropped when another option of its group uses no more of
/// every row and costs no more, one of them strictly (of two identical
/// options the earlier stays), or when it costs more than waiting.
/// Dropping cannot change the optimum: swapping the dropped option for its
/// dominator keeps any plan feasible and no more expensive. An option that
/// costs exactly the wait charge stays, so that ties go to running.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EpochProblem {
    capacity: Vec<f64>,
    total: Vec<f64>,
    groups: Vec<Group>,
    srpt: Vec<usize>,
    pruned: usize,
    /// Per group, the least usage of its options in each row (empty for a
    /// group without options): no option fits where this does not.
    min_usage: Vec<Vec<f64>>,
}

/// Relative tolerance of the capacity rows: usage `a` fits capacity `C`
/// when `a ≤ C + 10⁻⁹·max(C, 1)`.
pub(crate) const CAPACITY_TOL: f64 = 1e-9;

/// `C + 10⁻⁹·max(C, 1)`.
pub(crate) fn loosened(c: f64) -> f64 {
    c + CAPACITY_TOL * c.abs().max(1.0)
}

impl EpochProblem {
    /// A validated, pruned program over `capacity` (free, per row) with
    /// `total` (the cluster's total per row, for dominant shares).
    ///
    /// # Errors
    ///
    /// [`SmdError::InvalidInput`] for a length mismatch, or a capacity,
    /// total, usage or cost that is NaN, infinite or negative.
    pub(crate) fn new(
        capacity: Vec<f64>,
        total: Vec<f64>,
        groups: Vec<Group>,
    ) -> Result<Self, SmdError> {
        let d = capacity.len();
        if total.len() != d {
            return Err(SmdError::InvalidInput {
                name: "total",
                reason: format!("{} rows, capacity has {d}", total.len()),
            });
        }
        for (&c, &t) in capacity.iter().zip(&total) {
            non_negative("capacity", c)?;
            non_negative("total", t)?;
        }
        for g in &groups {
            non_negative("wait_cost", g.wait_cost)?;
            if !g.arrival_s.is_finite() || g.srpt_key.is_nan() {
                return Err(SmdError::InvalidInput {
                    name: "group",
                    reason: format!("{}: arrival or order key is not a number", g.job),
                });
            }
            for o in &g.options {
                non_negative("option cost", o.cost)?;
                if o.usage.len() != d {
                    return Err(SmdError::InvalidInput {
                        name: "usage",
                        reason: format!("{}: {} rows, capacity has {d}", g.job, o.usage.len()),
                    });
                }
                for &a in &o.usage {
                    non_negative("usage", a)?;
                }
            }
        }
        let mut pruned = 0;
        let groups: Vec<Group> = groups
            .into_iter()
            .map(|g| {
                let (g, n) = prune(g);
                pruned += n;
                g
            })
            .collect();
        let mut srpt: Vec<usize> = (0..groups.len()).collect();
        srpt.sort_by(|&a, &b| {
            let (x, y) = (&groups[a], &groups[b]);
            x.srpt_key
                .total_cmp(&y.srpt_key)
                .then(x.arrival_s.total_cmp(&y.arrival_s))
                .then(x.job.cmp(&y.job))
                .then(a.cmp(&b))
        });
        let min_usage = groups
            .iter()
            .map(|g| match g.options.split_first() {
                None => Vec::new(),
                Some((first, rest)) => rest.iter().fold(first.usage.clone(), |mut m, o| {
                    for (a, b) in m.iter_mut().zip(&o.usage) {
                        *a = a.min(*b);
                    }
                    m
                }),
            })
            .collect();
        Ok(EpochProblem {
            capacity,
            total,
            groups,
            srpt,
            pruned,
            min_usage,
        })
    }

    /// `d`, the number of capacity rows.
    pub(crate) fn rows(&self) -> usize {
        self.capacity.len()
    }

    /// Free capacity per row.
    pub(crate) fn capacity(&self) -> &[f64] {
        &self.capacity
    }

    /// The groups, in input order.
    pub(crate) fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Group indices in shortest-remaining-first order (key, then arrival,
    /// then job id).
    pub(crate) fn srpt_order(&self) -> &[usize] {
        &self.srpt
    }

    /// The least usage of group `i`'s options per row (empty without
    /// options).
    pub(crate) fn min_usage(&self, i: usize) -> &[f64] {
        &self.min_usage[i]
    }

    /// Options dropped by dominance pruning.
    pub(crate) fn pruned(&self) -> usize {
        self.pruned
    }

    /// `N = Σ_i (|K_i| + 1)`, the columns of the full program.
    pub(crate) fn columns(&self) -> usize {
        self.groups.iter().map(|g| g.options.len() + 1).sum()
    }

    /// The dominant share of a usage vector against the total capacity
    /// (rows with zero total are skipped).
    pub(crate) fn share(&self, usage: &[f64]) -> f64 {
        usage
            .iter()
            .zip(&self.total)
            .filter(|(_, t)| **t > 0.0)
            .map(|(a, t)| a / t)
            .fold(0.0, f64::max)
    }

    /// The total cost of a plan (one choice per group, `None` = wait).
    ///
    /// # Panics
    ///
    /// If `plan` is shorter than the groups or names a missing option.
    pub(crate) fn cost(&self, plan: &[Option<usize>]) -> f64 {
        self.groups
            .iter()
            .zip(plan)
            .map(|(g, &c)| g.cost_of(c))
            .sum()
    }

    /// The Lagrangian bound `LB(π) = Σ_i min_{k∈K_i∪{0}} (c_i(k) + π·a_i(k))
    /// − π·C` (capacities with a relative tolerance of 10⁻⁹): a lower bound on the
    /// optimum for any prices `π ≥ 0`, one per row.
    ///
    /// # Errors
    ///
    /// [`SmdError::InvalidInput`] unless there is one finite, non-negative
    /// price per row.
    #[cfg(all(test, feature = "highs"))]
    pub(crate) fn lagrangian_bound(&self, prices: &[f64]) -> Result<f64, SmdError> {
        if prices.len() != self.rows() {
            return Err(SmdError::InvalidInput {
                name: "prices",
                reason: format!("{} prices for {} rows", prices.len(), self.rows()),
            });
        }
        for &y in prices {
            non_negative("prices", y)?;
        }
        let all: Vec<usize> = (0..self.groups.len()).collect();
        Ok(super::solve::safe_bound(self, &all, prices, 0.0))
    }

    /// Whether a plan fits the capacity of every row (usage `a` fits `C`
    /// when `a ≤ C + 10⁻⁹·max(C, 1)`).
    #[cfg(test)]
    pub(crate) fn fits(&self, plan: &[Option<usize>]) -> bool {
        plan.len() == self.groups.len()
            && (0..self.rows()).all(|r| {
                let used: f64 = self
                    .groups
                    .iter()
                    .zip(plan)
                    .filter_map(|(g, c)| c.map(|k| g.options[k].usage[r]))
                    .sum();
                used <= loosened(self.capacity[r])
            })
    }
}

/// Drops the dominated options of a group; returns it and the count.
fn prune(mut g: Group) -> (Group, usize) {
    let n = g.options.len();
    let dominated = |k: usize| {
        let o = &g.options[k];
        // Waiting: no usage; dominates an option that costs more. (An
        // option that costs exactly the wait charge is kept: a tie goes
        // to running, or a job whose wait charge equals its smallest
        // configuration's cost would wait for ever.)
        if o.cost > g.wait_cost {
            return true;
        }
        g.options.iter().enumerate().any(|(j, p)| {
            if j == k || p.cost > o.cost {
                return false;
            }
            if p.usage.iter().zip(&o.usage).any(|(a, b)| a > b) {
                return false;
            }
            let strictly = p.cost < o.cost || p.usage.iter().zip(&o.usage).any(|(a, b)| a < b);
            strictly || j < k
        })
    };
    let keep: Vec<bool> = (0..n).map(|k| !dominated(k)).collect();
    let mut i = 0;
    g.options.retain(|_| {
        i += 1;
        keep[i - 1]
    });
    let dropped = n - g.options.len();
    (g, dropped)
}

/// What the wait charge of one job is computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct WaitJob {
    /// The job.
    pub(crate) job: JobId,
    /// Arrival, seconds.
    pub(crate) arrival_s: f64,
    /// `ρ_j*`: its best standalone remaining time, seconds.
    pub(crate) best_time_s: f64,
    /// `s_j*`: the dominant share of its best standalone configuration
    /// against the total capacity.
    pub(crate) best_share: f64,
    /// `ρ_j(k^min)`: its remaining time on its smallest configuration.
    pub(crate) smallest_time_s: f64,
    /// `o_j`: its reconfiguration time, seconds.
    pub(crate) reconfiguration_s: f64,
}

/// The wait charges `ω` of `jobs` (same order) under `mode`. For example,
/// with job A taking 10, 6, 4 s on 1, 2, 4 of 4 GPUs and job B 8, 5, 3 s
/// (both arriving at 0, no reconfiguration time), the share-weighted queue
/// charges are `ω = (13, 8)`: B (best time 3) waits behind nobody and pays
/// its smallest configuration's 8 s; A waits behind B's 3 s on the whole
/// cluster and pays `3 + 10`.
///
/// # Errors
///
/// [`SmdError::InvalidInput`] for a NaN, infinite or negative time or
/// share; [`SmdError::InvalidOption`] for a mode the parameters reject.
pub(crate) fn wait_charges(jobs: &[WaitJob], mode: WaitCharge) -> Result<Vec<f64>, SmdError> {
    for j in jobs {
        non_negative("best_time_s", j.best_time_s)?;
        non_negative("best_share", j.best_share)?;
        non_negative("smallest_time_s", j.smallest_time_s)?;
        non_negative("reconfiguration_s", j.reconfiguration_s)?;
        if !j.arrival_s.is_finite() {
            return Err(SmdError::InvalidInput {
                name: "arrival_s",
                reason: format!("{} is not finite", Num(j.arrival_s)),
            });
        }
    }
    super::SmdParams {
        wait_charge: mode,
        ..super::SmdParams::default()
    }
    .validate()?;
    let base = |j: &WaitJob| j.smallest_time_s + j.reconfiguration_s;
    let charges = match mode {
        WaitCharge::NextEpoch { horizon_s } => jobs.iter().map(|j| horizon_s + base(j)).collect(),
        WaitCharge::Parametric { beta } => jobs
            .iter()
            .map(|j| beta * j.smallest_time_s + j.reconfiguration_s)
            .collect(),
        WaitCharge::Queue { share_weighted } => {
            let mut order: Vec<usize> = (0..jobs.len()).collect();
            order.sort_by(|&a, &b| {
                let (x, y) = (&jobs[a], &jobs[b]);
                x.best_time_s
                    .total_cmp(&y.best_time_s)
                    .then(x.arrival_s.total_cmp(&y.arrival_s))
                    .then(x.job.cmp(&y.job))
                    .then(a.cmp(&b))
            });
            let mut out = vec![0.0; jobs.len()];
            let mut ahead = 0.0;
            for i in order {
                let j = &jobs[i];
                out[i] = ahead + base(j);
                let weight = if share_weighted { j.best_share } else { 1.0 };
                ahead += j.best_time_s * weight;
            }
            out
        }
    };
    // The epoch's bounds add the charges up: past this their sum is no
    // longer a number a certificate can state.
    let total: f64 = charges.iter().sum();
    if total.is_nan() || total > MAX_TOTAL_WAIT_CHARGE {
        return Err(SmdError::InvalidOption {
            name: "wait_charge",
            reason: format!(
                "the jobs' wait charges add up to {} s, more than {} s: assume a shorter wait",
                Num(total),
                Num(MAX_TOTAL_WAIT_CHARGE)
            ),
        });
    }
    Ok(charges)
}

/// The most the wait charges of one epoch may add up to, seconds.
const MAX_TOTAL_WAIT_CHARGE: f64 = 1e300;

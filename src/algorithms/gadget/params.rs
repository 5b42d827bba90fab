//! Parameters of the GADGET-style scheduler, with their defaults.

use std::collections::BTreeMap;

use super::error::GadgetError;
use crate::model::JobId;
use crate::model::units::Num;
use crate::online::PdOptions;
use crate::sim::{Decisions, SimOptions, StopAt};
use crate::timing::ProgressMode;

/// Most servers one ring may span, `n_max` (an option; the default is 8).
pub const MAX_RING_SERVERS: u32 = 64;
/// Most usable servers for [`EmbeddingOracle::Exhaustive`].
pub const EXHAUSTIVE_MAX_SERVERS: usize = 8;

/// How a ring of `w` workers is embedded on `n ≥ 2` servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum EmbeddingOracle {
    /// Score every eligible server by its effective per-GPU price
    /// `σ_h = π_h + φ_h/cap_h`, take the `n` cheapest, spread the workers by
    /// GPU price (default). No proven factor: the oracle is heuristic.
    #[default]
    Greedy,
    /// Every `n`-subset of the eligible servers (at most
    /// [`EXHAUSTIVE_MAX_SERVERS`] usable servers): exact for each
    /// `(s, w, n)`, so the best response is exact.
    Exhaustive,
}

impl EmbeddingOracle {
    /// Whether the best response is exact (`Exhaustive`).
    pub fn is_exact(self) -> bool {
        self == EmbeddingOracle::Exhaustive
    }

    /// `"greedy"` or `"exhaustive"`.
    pub fn name(self) -> &'static str {
        match self {
            EmbeddingOracle::Greedy => "greedy",
            EmbeddingOracle::Exhaustive => "exhaustive",
        }
    }
}

/// How the price bounds `U` and `L` are set.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum GadgetBounds {
    /// `L = v_floor/(4·T·Σ_h (O_h + B_h))`, so `D_0 = v_floor/4`, with
    /// `v_floor = max(ε_v·median_i v̄_i, min_i v_i^late)` (default,
    /// `ε_v = 10⁻³`) or the value given. `U` from the job list.
    ValueFloor {
        /// `ε_v > 0`.
        epsilon_v: f64,
        /// An explicit `v_floor > 0` instead of the rule.
        v_floor: Option<f64>,
    },
    /// The framework's clairvoyant `η` rule for `L`; `U` from the job list.
    FrameworkEta,
    /// User estimates (the certificate's `2α` is then not valid): `L`,
    /// `U^GPU` per GPU-slot and `U^NIC` per data unit of NIC reservation and
    /// slot (`None`: the NIC price stays at `L`).
    Explicit {
        /// `L > 0`.
        l: f64,
        /// `U^GPU > L`.
        u_gpu: f64,
        /// `U^NIC > L`, or `None`.
        u_nic: Option<f64>,
    },
}

impl Default for GadgetBounds {
    fn default() -> Self {
        GadgetBounds::ValueFloor {
            epsilon_v: 1e-3,
            v_floor: None,
        }
    }
}

impl GadgetBounds {
    /// `"value-floor"`, `"eta"` or `"explicit"`.
    pub fn name(&self) -> &'static str {
        match self {
            GadgetBounds::ValueFloor { .. } => "value-floor",
            GadgetBounds::FrameworkEta => "eta",
            GadgetBounds::Explicit { .. } => "explicit",
        }
    }
}

/// How many iterations an admitted job trains.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ExcessiveTraining {
    /// `F^eff = F^conv` (the job's convergence estimate; its requested
    /// iterations when it has none): the default.
    #[default]
    StopAtConvergence,
    /// `F^eff = F^req`, the iterations requested.
    TrainRequested,
}

/// What a job's work is counted in when its worker count may vary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WorkUnit {
    /// `F^eff(w) = F^eff` for every `w` (default): each worker processes its
    /// own mini-batch, so more workers only add communication.
    #[default]
    Iterations,
    /// A fixed number of samples `F^eff·G·M`: `F^eff(w) = ⌈F^eff·G/w⌉`, with
    /// `G` the requested (largest allowed) worker count.
    Samples,
}

/// Which worker counts `W_i` the scheduler may choose from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum WorkerChoice {
    /// `{G_i}`, the requested count: the largest the job allows (rigid,
    /// default).
    #[default]
    Requested,
    /// The powers of two among the counts the job allows (malleable at
    /// start); `{G_i}` when none is a power of two.
    PowersOfTwo,
    /// Every count the job allows.
    Allowed,
}

/// The fairness weight `ω_i`, frozen when the job arrives.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum FairnessWeighting {
    /// `ω_i = 1` (default).
    #[default]
    None,
    /// `ω_i = (1 + S_v/S̄)^(−β)`, with `S_v` the GPU-slots committed to the
    /// job's tenant so far and `S̄` their mean over the tenants seen so far
    /// (this job's included); `ω_i = 1` while `S̄ = 0`.
    TenantShare {
        /// `β ≥ 0`.
        beta: f64,
    },
}

/// Durations `d(w, n)` in slots that replace the timing model for one job:
/// a test hook. Only the shapes listed are used.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DurationTable {
    /// `(workers, servers) → slots ≥ 1`.
    pub(crate) slots: BTreeMap<(u32, u32), u32>,
}

impl DurationTable {
    /// A table from `((workers, servers), slots)` entries.
    pub fn new(entries: impl IntoIterator<Item = ((u32, u32), u32)>) -> Self {
        DurationTable {
            slots: entries.into_iter().collect(),
        }
    }
}

/// Parameters of the GADGET-style scheduler.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct GadgetParams {
    /// The embedding oracle (default: greedy).
    pub oracle: EmbeddingOracle,
    /// How `U` and `L` are set (default: the value floor with `ε_v = 10⁻³`).
    pub bounds: GadgetBounds,
    /// Scale `φ > 0` of every `U` (default 1; any other value makes the
    /// bounds estimates and the `2α` guarantee not valid).
    pub u_scale: f64,
    /// `n_max`: most servers one ring may span (default 8, at most
    /// [`MAX_RING_SERVERS`]).
    pub max_servers: u32,
    /// Latest start considered, in slots after the arrival (`None`: up to
    /// the horizon).
    pub lookahead: Option<u32>,
    /// Energy price `e ≥ 0` per GPU-slot (default 0).
    pub energy_price: f64,
    /// The fairness weight (default: none, `ω = 1`).
    pub fairness: FairnessWeighting,
    /// Iterations trained (default: stop at convergence).
    pub excessive_training: ExcessiveTraining,
    /// What work is counted in (default: iterations).
    pub work_unit: WorkUnit,
    /// Worker counts considered (default: the requested one).
    pub worker_choice: WorkerChoice,
    /// Durations `⌈F·τ⌉` (`Fractional`, default) or `⌈F/⌊1/τ⌋⌉` (`Floor`).
    pub progress: ProgressMode,
    /// Headroom prices (default off): the price exponent of a server's GPUs
    /// runs over `O_h − min(O_h, max_i max W_i) + 1` and of its NIC over
    /// `B_h − max_i 2b_i`, so every plan blocked by a partly full cell
    /// meets the price `U` there and the final dual is feasible whatever
    /// the demand sizes (at the cost of a larger `α_eff`).
    pub headroom: bool,
    /// Duration tables that replace the timing model of some jobs (tests;
    /// not serialized).
    #[cfg_attr(feature = "serde", serde(skip))]
    pub durations: BTreeMap<JobId, DurationTable>,
    /// Options of the online loop.
    pub pd: PdOptions,
}

impl Default for GadgetParams {
    fn default() -> Self {
        GadgetParams {
            oracle: EmbeddingOracle::Greedy,
            bounds: GadgetBounds::default(),
            u_scale: 1.0,
            max_servers: 8,
            lookahead: None,
            energy_price: 0.0,
            fairness: FairnessWeighting::None,
            excessive_training: ExcessiveTraining::StopAtConvergence,
            work_unit: WorkUnit::Iterations,
            worker_choice: WorkerChoice::Requested,
            progress: ProgressMode::Fractional,
            headroom: false,
            durations: BTreeMap::new(),
            pd: PdOptions::default(),
        }
    }
}

/// `Err(InvalidOption)` unless `v` is finite and satisfies `ok`.
fn number(
    name: &'static str,
    v: f64,
    ok: impl Fn(f64) -> bool,
    want: &str,
) -> Result<(), GadgetError> {
    if v.is_finite() && ok(v) {
        Ok(())
    } else {
        Err(GadgetError::InvalidOption {
            name,
            reason: format!("{} is not {want}", Num(v)),
        })
    }
}

impl GadgetParams {
    /// The simulator options under which the simulator trains and counts
    /// iterations as these parameters' plans do: it stops a ring at its
    /// convergence estimate under [`ExcessiveTraining::StopAtConvergence`]
    /// ([`SimOptions::stop_at_convergence`]), and under
    /// `ProgressMode::Floor` it counts whole iterations per slot with
    /// decisions at slot boundaries (which `Floor` needs); and the run stops
    /// at the instance's horizon ([`StopAt::Horizon`]), as the scheduler's
    /// plans must end by `T`: a job unfinished at `T` earns nothing, and
    /// the GPU time it holds is counted up to `T`, not past it. The rest is
    /// the default. A [`GadgetPolicy`](super::GadgetPolicy) run with them
    /// completes every admitted job in its planned slot.
    ///
    /// ```
    /// use dmlsched::algorithms::gadget::{ExcessiveTraining, GadgetParams};
    /// use dmlsched::sim::StopAt;
    /// assert!(GadgetParams::default().sim_options().stop_at_convergence);
    /// assert_eq!(GadgetParams::default().sim_options().stop, StopAt::Horizon);
    /// let mut requested = GadgetParams::default();
    /// requested.excessive_training = ExcessiveTraining::TrainRequested;
    /// assert!(!requested.sim_options().stop_at_convergence);
    /// ```
    pub fn sim_options(&self) -> SimOptions {
        let floor = self.progress == ProgressMode::Floor;
        SimOptions {
            progress: self.progress,
            decisions: if floor {
                Decisions::SlotBoundaries
            } else {
                Decisions::default()
            },
            stop_at_convergence: self.excessive_training == ExcessiveTraining::StopAtConvergence,
            stop: StopAt::Horizon,
            ..SimOptions::default()
        }
    }

    /// Checks every number and count (the duration tables' jobs and shapes
    /// are checked against the instance when it is converted).
    ///
    /// # Errors
    ///
    /// [`GadgetError::InvalidOption`] naming the option.
    pub fn validate(&self) -> Result<(), GadgetError> {
        number("u_scale", self.u_scale, |v| v > 0.0, "positive and finite")?;
        number(
            "energy_price",
            self.energy_price,
            |v| v >= 0.0,
            "a finite number ≥ 0",
        )?;
        if !(1..=MAX_RING_SERVERS).contains(&self.max_servers) {
            return Err(GadgetError::InvalidOption {
                name: "max_servers",
                reason: format!("{} is not in 1..={MAX_RING_SERVERS}", self.max_servers),
            });
        }
        if let FairnessWeighting::TenantShare { beta } = self.fairness {
            number("fairness.beta", beta, |v| v >= 0.0, "a finite number ≥ 0")?;
        }
        match self.bounds {
            GadgetBounds::ValueFloor { epsilon_v, v_floor } => {
                number(
                    "bounds.epsilon_v",
                    epsilon_v,
                    |v| v > 0.0 && v <= 1.0,
                    "in (0, 1]",
                )?;
                if let Some(v) = v_floor {
                    number("bounds.v_floor", v, |v| v > 0.0, "positive and finite")?;
                }
            }
            GadgetBounds::FrameworkEta => {}
            GadgetBounds::Explicit { l, u_gpu, u_nic } => {
                number("bounds.l", l, |v| v > 0.0, "positive and finite")?;
                number("bounds.u_gpu", u_gpu, |v| v > l, "finite and above L")?;
                if let Some(u) = u_nic {
                    number("bounds.u_nic", u, |v| v > l, "finite and above L")?;
                }
            }
        }
        for (job, table) in &self.durations {
            if let Some(((w, n), _)) = table.slots.iter().find(|(_, d)| **d == 0) {
                return Err(GadgetError::InvalidOption {
                    name: "durations",
                    reason: format!("{job}: d({w}, {n}) = 0 slots (at least 1)"),
                });
            }
        }
        Ok(())
    }
}

/// The exhaustive oracle enumerates server subsets: at most
/// [`EXHAUSTIVE_MAX_SERVERS`] usable servers.
///
/// # Errors
///
/// [`GadgetError::InvalidOption`] above the limit.
pub(crate) fn check_exhaustive(servers: usize) -> Result<(), GadgetError> {
    if servers > EXHAUSTIVE_MAX_SERVERS {
        return Err(GadgetError::InvalidOption {
            name: "oracle",
            reason: format!(
                "the exhaustive embedding enumerates server subsets of at most {EXHAUSTIVE_MAX_SERVERS} usable servers; the cluster has {servers}"
            ),
        });
    }
    Ok(())
}

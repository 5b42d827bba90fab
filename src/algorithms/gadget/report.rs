//! What a GADGET-style run reports beside its certificate: per-job
//! decisions and plans, the price constants under both rules, and the
//! conditions of the `2α` statement.

use crate::model::{JobId, MachineId};
use crate::online::{RejectReason, RunReport};

use super::params::{EmbeddingOracle, GadgetBounds};
use super::plan::GadgetPlan;

/// The admitted schedule of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Admission {
    /// First slot `s`.
    pub start: u32,
    /// Duration `d`, slots.
    pub slots: u32,
    /// Last slot with work, `t̂ = s + d − 1`.
    pub completion: u32,
    /// Completion delay `δ = t̂ − a + 1`, slots.
    pub jct: u32,
    /// Workers `w`.
    pub workers: u32,
    /// Workers per machine, `y_h` (ring order).
    pub placement: Vec<(MachineId, u32)>,
    /// Per-iteration time `τ(w, n)`, slots.
    pub tau_slots: f64,
    /// Iterations trained, `F^eff(w)`.
    pub iterations: u64,
    /// Value `v = ω·u(δ) − e·w·d`.
    pub value: f64,
    /// Priced cost at admission.
    pub cost: f64,
    /// Payoff `v − cost > 0`.
    pub payoff: f64,
}

impl Admission {
    /// Servers used, `n`.
    pub fn servers(&self) -> u32 {
        self.placement.len() as u32
    }

    /// GPU-slots used, `w·d`.
    pub fn gpu_slots(&self) -> u64 {
        u64::from(self.workers) * u64::from(self.slots)
    }
}

/// Everything reported about one job, in arrival order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct JobRecord {
    /// The job.
    pub job: JobId,
    /// Its tenant.
    pub tenant: Option<String>,
    /// Arrival slot `a`.
    pub arrival: u32,
    /// Fairness weight `ω`, frozen at arrival.
    pub omega: f64,
    /// `v̄`: its best value alone on the empty cluster (`None` when it has
    /// no plan of positive value within the horizon).
    pub best_value: Option<f64>,
    /// `d^min`: its shortest duration on the empty cluster, slots (`None`
    /// when no shape embeds within the horizon).
    pub min_slots: Option<u32>,
    /// The workers of that shortest shape (`None` with `min_slots`).
    pub min_workers: Option<u32>,
    /// `F^req`.
    pub iterations_requested: u64,
    /// `F^eff` at the requested worker count.
    pub iterations_effective: u64,
    /// The admitted schedule, or why the job was rejected.
    pub decision: Result<Admission, RejectReason>,
}

impl JobRecord {
    /// Whether the job was admitted.
    pub fn admitted(&self) -> bool {
        self.decision.is_ok()
    }

    /// The payoff at admission (0 when rejected).
    pub fn payoff(&self) -> f64 {
        self.decision.as_ref().map_or(0.0, |a| a.payoff)
    }
}

/// Which conditions of `OPT ≤ 2α·ALG` hold in the run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RatioConditions {
    /// Small demands: the framework's `α_eff ≤ 1.5·α`.
    pub small_demands: bool,
    /// The oracle is exact (`Exhaustive`).
    pub exact_oracle: bool,
    /// `U` and `L` derived from the job list with `u_scale = 1`, and
    /// `D_0 ≤ OPT/2` shown.
    pub valid_constants: bool,
    /// Headroom prices were used: capacity-blocked plans are dual-feasible
    /// whatever the demand sizes (condition A4 without small demands).
    pub headroom: bool,
}

impl RatioConditions {
    /// Whether every condition of the `2α` statement holds.
    pub fn all(&self) -> bool {
        self.small_demands && self.exact_oracle && self.valid_constants
    }
}

/// One usable server in the ledger.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct ServerRecord {
    /// The machine.
    pub machine: MachineId,
    /// `O_h`, usable GPUs.
    pub gpus: u32,
    /// `B_h`, NIC reservation pool, data units per slot.
    pub nic: f64,
}

/// The GADGET-style scheduler's diagnostics beside the certificate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct GadgetReport {
    /// The framework's report: decisions and plans in arrival order, α,
    /// α_eff, `D_0`, `D_end`, validity flags.
    pub run: RunReport<GadgetPlan>,
    /// Per-job records in arrival order.
    pub jobs: Vec<JobRecord>,
    /// The embedding oracle.
    pub(crate) oracle: EmbeddingOracle,
    /// Whether headroom prices were used.
    pub headroom: bool,
    /// How `U` and `L` were set.
    pub(crate) bounds: GadgetBounds,
    /// The value floor in use, under [`GadgetBounds::ValueFloor`].
    pub v_floor: Option<f64>,
    /// α of the bounds in use.
    pub alpha: f64,
    /// α the framework's η rule gives on the same jobs (when derivable).
    pub alpha_eta: Option<f64>,
    /// α the default value floor gives on the same jobs (when derivable).
    pub alpha_value_floor: Option<f64>,
    /// The conditions of `OPT ≤ 2α·ALG` in this run.
    pub conditions: RatioConditions,
    /// The usable servers (ledger order).
    pub servers: Vec<ServerRecord>,
    /// Slot length, seconds.
    pub(crate) slot_length_s: f64,
    /// Horizon, slots.
    pub horizon: u32,
    /// Bytes per data unit of the NIC resource.
    pub(crate) data_unit_bytes: f64,
    /// Energy price per GPU-slot.
    pub energy_price: f64,
    /// Wall-clock seconds of every admission decision, arrival order.
    pub decision_seconds: Vec<f64>,
    /// Embeddings the oracle attempted for the admission decisions (the
    /// final re-pricing of the certificate excluded).
    pub(crate) embeddings: u64,
}

impl GadgetReport {
    /// Admitted jobs.
    pub fn admitted(&self) -> usize {
        self.jobs.iter().filter(|j| j.admitted()).count()
    }

    /// Admitted jobs / arrived jobs; 0 without jobs.
    pub fn admission_rate(&self) -> f64 {
        if self.jobs.is_empty() {
            0.0
        } else {
            self.admitted() as f64 / self.jobs.len() as f64
        }
    }

    /// `Σ v` over admitted jobs (the objective `ALG`).
    pub fn total_value(&self) -> f64 {
        self.run.total_utility
    }

    /// GPU-slots committed, `Σ w·d`.
    pub fn gpu_slots(&self) -> u64 {
        self.jobs
            .iter()
            .filter_map(|j| j.decision.as_ref().ok())
            .map(Admission::gpu_slots)
            .sum()
    }
}

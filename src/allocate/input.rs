//! The input of an allocation policy: GPU types with their counts, jobs
//! with a throughput per type, and prices.

use std::collections::{BTreeMap, BTreeSet};

use super::{AllocationError, AllocationPolicy};
use crate::model::units::Num;

/// Most jobs an input may hold (2²⁰): an LP of more is refused, not built.
pub const MAX_JOBS: usize = 1 << 20;
/// Most GPU types an input may name.
pub const MAX_TYPES: usize = 1 << 10;
/// Most `(job, type)` pairs an input may hold (2²⁰, e.g. 349,525 jobs on 3
/// types): the LP has a column per pair, and a larger one is refused
/// rather than built.
pub const MAX_CELLS: usize = 1 << 20;

/// What an allocation policy allocates: GPU types with their counts, jobs,
/// and (for `max-throughput-per-cost`) a price per type.
///
/// In JSON (`dmlsched allocate`, docs/allocate-format.md):
///
/// ```json
/// {"gpu_types": {"v100": 4, "k80": 4},
///  "jobs": [{"id": 0, "throughput": {"v100": 4.0, "k80": 1.0}, "scale_factor": 1,
///            "weight": 1, "steps_remaining": 100000, "elapsed_s": 0}],
///  "prices": {"v100": 3.06, "k80": 0.9}}
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct AllocationInput {
    /// GPUs of each type.
    pub gpu_types: BTreeMap<String, u32>,
    /// The jobs.
    pub jobs: Vec<AllocationJob>,
    /// Price of one GPU of each type per hour (only
    /// `max-throughput-per-cost` reads them).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub prices: Option<BTreeMap<String, f64>>,
}

/// One job of an [`AllocationInput`].
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
#[non_exhaustive]
pub struct AllocationJob {
    /// The job's id, unique in the input.
    pub id: u64,
    /// Steps per second on its `scale_factor` GPUs of each type, finite and
    /// ≥ 0 (0: it cannot run there); one per type of the input.
    pub throughput: BTreeMap<String, f64>,
    /// GPUs the job uses at a time, ≥ 1.
    #[cfg_attr(feature = "serde", serde(default = "one_u32"))]
    pub scale_factor: u32,
    /// Weight, finite and > 0 (the max-min policies divide by it).
    #[cfg_attr(feature = "serde", serde(default = "one_f64"))]
    pub weight: f64,
    /// Steps left to run, finite and ≥ 0 (> 0 for finish-time fairness);
    /// needed by `finish-time-fairness` and `min-makespan`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub steps_remaining: Option<f64>,
    /// Seconds the job has spent in the system, finite and ≥ 0; needed by
    /// `finish-time-fairness`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub elapsed_s: Option<f64>,
}

#[cfg(feature = "serde")]
fn one_u32() -> u32 {
    1
}

#[cfg(feature = "serde")]
fn one_f64() -> f64 {
    1.0
}

impl AllocationJob {
    /// A job of scale factor 1 and weight 1 with these throughputs.
    pub fn new<S: Into<String>>(
        id: u64,
        throughput: impl IntoIterator<Item = (S, f64)>,
    ) -> AllocationJob {
        AllocationJob {
            id,
            throughput: throughput.into_iter().map(|(t, v)| (t.into(), v)).collect(),
            scale_factor: 1,
            weight: 1.0,
            steps_remaining: None,
            elapsed_s: None,
        }
    }

    /// The same job on `scale_factor` GPUs at a time.
    pub fn with_scale_factor(mut self, scale_factor: u32) -> Self {
        self.scale_factor = scale_factor;
        self
    }

    /// The same job with weight `weight`.
    pub fn with_weight(mut self, weight: f64) -> Self {
        self.weight = weight;
        self
    }

    /// The same job with `steps` left.
    pub fn with_steps_remaining(mut self, steps: f64) -> Self {
        self.steps_remaining = Some(steps);
        self
    }

    /// The same job after `seconds` in the system.
    pub fn with_elapsed_s(mut self, seconds: f64) -> Self {
        self.elapsed_s = Some(seconds);
        self
    }
}

impl AllocationInput {
    /// Types with their GPU counts, and no job.
    pub fn new<S: Into<String>>(gpu_types: impl IntoIterator<Item = (S, u32)>) -> AllocationInput {
        AllocationInput {
            gpu_types: gpu_types.into_iter().map(|(t, n)| (t.into(), n)).collect(),
            jobs: Vec::new(),
            prices: None,
        }
    }

    /// The same input with one more job.
    pub fn with_job(mut self, job: AllocationJob) -> Self {
        self.jobs.push(job);
        self
    }

    /// The same input with a price per type.
    pub fn with_prices<S: Into<String>>(
        mut self,
        prices: impl IntoIterator<Item = (S, f64)>,
    ) -> Self {
        self.prices = Some(prices.into_iter().map(|(t, p)| (t.into(), p)).collect());
        self
    }

    /// Reads the JSON format (docs/allocate-format.md); fields are checked
    /// by [`validate`](Self::validate), for a policy.
    ///
    /// # Errors
    ///
    /// [`AllocationError::Json`] for malformed JSON, an unknown field or a
    /// value of the wrong kind.
    #[cfg(feature = "serde")]
    pub fn from_json(text: &str) -> Result<AllocationInput, AllocationError> {
        Ok(serde_json::from_str(text)?)
    }

    /// Checks the input for `policy`: at least one type and one job, type
    /// names non-empty, at most [`MAX_JOBS`] jobs, [`MAX_TYPES`] types and
    /// [`MAX_CELLS`] (job, type) pairs; each job's id unique, a throughput for every type
    /// and no other (finite, ≥ 0), a scale factor ≥ 1 and a positive
    /// finite weight; `steps_remaining` (finite, ≥ 0; positive for
    /// finish-time fairness) where the policy needs it, `elapsed_s` (finite, ≥ 0) for finish-time
    /// fairness, and a finite price > 0 per type for
    /// `max-throughput-per-cost`.
    ///
    /// # Errors
    ///
    /// [`AllocationError::InvalidInput`] naming the job (by id) and the
    /// field.
    pub fn validate(&self, policy: AllocationPolicy) -> Result<(), AllocationError> {
        self.validate_types()?;
        if self.jobs.is_empty() {
            return Err(AllocationError::invalid("jobs", "no job to allocate"));
        }
        if self.jobs.len() > MAX_JOBS {
            return Err(AllocationError::invalid(
                "jobs",
                format!("{} jobs exceed the limit of {MAX_JOBS}", self.jobs.len()),
            ));
        }
        let cells = self.jobs.len().saturating_mul(self.gpu_types.len());
        if cells > MAX_CELLS {
            return Err(AllocationError::invalid(
                "jobs",
                format!(
                    "{} jobs on {} GPU types make {cells} (job, type) pairs, beyond the limit of {MAX_CELLS}",
                    self.jobs.len(),
                    self.gpu_types.len()
                ),
            ));
        }
        let mut seen = BTreeSet::new();
        for job in &self.jobs {
            if !seen.insert(job.id) {
                return Err(AllocationError::invalid(
                    format!("job {}", job.id),
                    "the id is given twice",
                ));
            }
            self.validate_job(job, policy)?;
        }
        if policy == AllocationPolicy::MaxThroughputPerCost {
            self.validate_prices()?;
        }
        Ok(())
    }

    fn validate_types(&self) -> Result<(), AllocationError> {
        if self.gpu_types.is_empty() {
            return Err(AllocationError::invalid("gpu_types", "no GPU type"));
        }
        if self.gpu_types.len() > MAX_TYPES {
            return Err(AllocationError::invalid(
                "gpu_types",
                format!(
                    "{} types exceed the limit of {MAX_TYPES}",
                    self.gpu_types.len()
                ),
            ));
        }
        if self.gpu_types.keys().any(String::is_empty) {
            return Err(AllocationError::invalid(
                "gpu_types",
                "a type name is empty",
            ));
        }
        Ok(())
    }

    fn validate_job(
        &self,
        job: &AllocationJob,
        policy: AllocationPolicy,
    ) -> Result<(), AllocationError> {
        let what = |field: &str| format!("job {}: {field}", job.id);
        for t in self.gpu_types.keys() {
            match job.throughput.get(t) {
                None => {
                    return Err(AllocationError::invalid(
                        what(&format!("throughput.{t}")),
                        "missing (give 0 where the job cannot run)",
                    ));
                }
                Some(v) if !(v.is_finite() && *v >= 0.0) => {
                    return Err(AllocationError::invalid(
                        what(&format!("throughput.{t}")),
                        format!("{} is not a finite number ≥ 0", Num(*v)),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(t) = job
            .throughput
            .keys()
            .find(|t| !self.gpu_types.contains_key(*t))
        {
            return Err(AllocationError::invalid(
                what(&format!("throughput.{t}")),
                "not one of the input's gpu_types",
            ));
        }
        if job.scale_factor == 0 {
            return Err(AllocationError::invalid(
                what("scale_factor"),
                "must be ≥ 1",
            ));
        }
        if !(job.weight.is_finite() && job.weight > 0.0) {
            return Err(AllocationError::invalid(
                what("weight"),
                format!("{} is not a finite number > 0", Num(job.weight)),
            ));
        }
        let ftf = policy == AllocationPolicy::FinishTimeFairness;
        if policy.needs_steps() {
            match job.steps_remaining {
                None => {
                    return Err(AllocationError::invalid(
                        what("steps_remaining"),
                        format!("missing ({policy} needs it)"),
                    ));
                }
                Some(r) if !(r.is_finite() && (r > 0.0 || (!ftf && r == 0.0))) => {
                    let range = if ftf { "> 0" } else { "≥ 0" };
                    return Err(AllocationError::invalid(
                        what("steps_remaining"),
                        format!("{} is not a finite number {range}", Num(r)),
                    ));
                }
                Some(_) => {}
            }
        }
        if ftf {
            match job.elapsed_s {
                None => {
                    return Err(AllocationError::invalid(
                        what("elapsed_s"),
                        format!("missing ({policy} needs it)"),
                    ));
                }
                Some(e) if !(e.is_finite() && e >= 0.0) => {
                    return Err(AllocationError::invalid(
                        what("elapsed_s"),
                        format!("{} is not a finite number ≥ 0", Num(e)),
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn validate_prices(&self) -> Result<(), AllocationError> {
        let policy = AllocationPolicy::MaxThroughputPerCost;
        let Some(prices) = &self.prices else {
            return Err(AllocationError::invalid(
                "prices",
                format!("missing ({policy} needs a price per type)"),
            ));
        };
        for t in self.gpu_types.keys() {
            match prices.get(t) {
                None => {
                    return Err(AllocationError::invalid(format!("prices.{t}"), "missing"));
                }
                Some(p) if !(p.is_finite() && *p > 0.0) => {
                    return Err(AllocationError::invalid(
                        format!("prices.{t}"),
                        format!("{} is not a finite number > 0", Num(*p)),
                    ));
                }
                Some(_) => {}
            }
        }
        if let Some(t) = prices.keys().find(|t| !self.gpu_types.contains_key(*t)) {
            return Err(AllocationError::invalid(
                format!("prices.{t}"),
                "not one of the input's gpu_types",
            ));
        }
        Ok(())
    }
}

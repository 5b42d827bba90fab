//! [`RunInfo`]: how the run that produced a certificate went.

/// How the run that produced the certificate went.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RunInfo {
    /// Seed of the run's random streams, if random.
    pub seed: Option<u64>,
    /// Name of the portable generator (e.g. `"ChaCha8"`), if random.
    pub generator: Option<String>,
    /// Number of candidate points (draws) tried; 1 for a deterministic
    /// algorithm.
    pub trials: u32,
    /// 0-based index of the trial whose point was returned.
    pub best_trial: Option<u32>,
    /// Scaling factor β (= λ) applied before rounding, if any.
    #[cfg_attr(feature = "serde", serde(with = "super::serde_inf::serde_opt_f64"))]
    pub beta: Option<f64>,
    /// Repair moves applied to the returned point.
    pub repair_moves: u64,
    /// Number of LP solves.
    pub lp_solves: u32,
    /// Total simplex / IPM iterations over all LP solves.
    pub lp_iterations: u64,
    /// Wall-clock seconds per stage, in the order the stages ran.
    pub stage_seconds: Vec<(String, f64)>,
    /// Version of this crate that produced the certificate.
    pub crate_version: String,
    /// Whether the timing model the decisions were built on met its
    /// accuracy target (held-out MAPE below 10%, see
    /// [`crate::calibrate::Predictor::validated`]): `None` when the run was
    /// not built on a calibrated predictor; a certificate built on a
    /// predictor that misses its target records `false`.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub timing_model_validated: Option<bool>,
}

impl RunInfo {
    /// One deterministic trial, nothing else recorded, this crate's version.
    pub fn new() -> Self {
        RunInfo {
            seed: None,
            generator: None,
            trials: 1,
            best_trial: None,
            beta: None,
            repair_moves: 0,
            lp_solves: 0,
            lp_iterations: 0,
            stage_seconds: Vec::new(),
            crate_version: env!("CARGO_PKG_VERSION").to_string(),
            timing_model_validated: None,
        }
    }

    /// Sets the seed and the generator's name.
    pub fn with_seed(mut self, seed: u64, generator: impl Into<String>) -> Self {
        self.seed = Some(seed);
        self.generator = Some(generator.into());
        self
    }

    /// Records whether the timing model the run was built on met its
    /// accuracy target ([`crate::calibrate::Predictor::certify`] sets it
    /// from a predictor).
    pub fn with_timing_model_validated(mut self, validated: bool) -> Self {
        self.timing_model_validated = Some(validated);
        self
    }

    /// Appends the time spent in a stage.
    pub fn add_stage(&mut self, name: impl Into<String>, seconds: f64) {
        self.stage_seconds.push((name.into(), seconds));
    }
}

impl Default for RunInfo {
    fn default() -> Self {
        RunInfo::new()
    }
}

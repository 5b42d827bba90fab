//! Simulator policies by name, shared by `simulate` and `replay`: every
//! baseline and every algorithm that acts as a simulator policy.

use std::path::Path;

use clap::Args;
use dmlsched::baselines::{BaselineParams, Tiresias};
use dmlsched::model::Instance;
use dmlsched::placement::PlacementRule;
use dmlsched::registry::{self, ALGORITHM_POLICIES};
use dmlsched::replay::BaselineOptions;
use dmlsched::sim::Policy;

use crate::CliError;
use crate::solve::{lib_error, params_text};

/// The flags that tune the baselines.
#[derive(Debug, Clone, Args)]
pub(crate) struct BaselineFlags {
    /// How every baseline that places spreads a job over machines:
    /// best-fit (the fewest machines that fit, fullest first), first-fit,
    /// consolidate or round-robin.
    #[arg(long, default_value = "best-fit", value_name = "RULE")]
    placement: PlacementRule,
    /// Tiresias's queue thresholds, GPU-seconds, increasing (the Tiresias
    /// simulator's defaults: three queues).
    #[arg(long, value_delimiter = ',', default_values_t = Tiresias::SIMULATOR_THRESHOLDS.to_vec(), value_name = "T,T,...")]
    tiresias_thresholds: Vec<f64>,
    /// Tiresias's starvation guard: a job waiting this many times its last
    /// run moves to the first queue (off unless given).
    #[arg(long, value_name = "F")]
    tiresias_starve_factor: Option<f64>,
    /// Round length, seconds, of the round-based allocation policies
    /// (`gavel-…`): each round, their allocation's priorities decide which
    /// jobs run on which GPU type.
    #[arg(long, default_value_t = 360.0, value_name = "SECONDS")]
    round_s: f64,
    /// Price of one GPU of each type per hour, for
    /// `gavel-max-throughput-per-cost`: `TYPE:PRICE,…`, one per type of
    /// the cluster (e.g. `v100:2.48,p100:1.46,k80:0.45`).
    #[arg(long, value_name = "TYPE:PRICE,...")]
    gpu_prices: Option<String>,
}

impl BaselineFlags {
    /// The flags as the library's options.
    pub(crate) fn options(&self) -> BaselineOptions {
        let mut o = BaselineOptions::default();
        o.placement = self.placement;
        o.tiresias_thresholds.clone_from(&self.tiresias_thresholds);
        o.tiresias_starve_factor = self.tiresias_starve_factor;
        o.round_s = self.round_s;
        o.gpu_prices.clone_from(&self.gpu_prices);
        o
    }

    /// The baselines' parameters for a run of `names`, checked (prices
    /// given when `gavel-max-throughput-per-cost` is among them).
    pub(crate) fn params(&self, names: &[String]) -> Result<BaselineParams, CliError> {
        Ok(self.options().params(names)?)
    }
}

/// Checks that every name is a known policy (before any file is read).
pub(crate) fn check_names(names: &[String]) -> Result<(), CliError> {
    Ok(dmlsched::replay::check_names(names)?)
}

/// Reads and parses every parameters file given for one of `names`, so a
/// bad file is refused before anything runs.
pub(crate) fn check_params(entries: &[String], names: &[String]) -> Result<(), CliError> {
    // Every entry's form and name, even one for a policy not in the run.
    params_file(entries, "")?;
    for name in names {
        let file = params_file(entries, name)?;
        if let Some(text) = params_text(file)? {
            registry::check_params(name, &text).map_err(|e| lib_error(name, file, &e))?;
        }
    }
    Ok(())
}

/// The parameters file given for `policy` among `NAME=PARAMS.json` entries.
pub(crate) fn params_file<'a>(
    entries: &'a [String],
    policy: &str,
) -> Result<Option<&'a Path>, CliError> {
    let mut found = None;
    for p in entries {
        let Some((name, file)) = p.split_once('=') else {
            return Err(CliError::Input(format!(
                "--params {p}: expected NAME=PARAMS.json"
            )));
        };
        if !ALGORITHM_POLICIES.contains(&name) {
            return Err(CliError::Input(format!(
                "--params {p}: {name} takes no parameters file (one of {})",
                ALGORITHM_POLICIES.join(", ")
            )));
        }
        if name == policy {
            found = Some(Path::new(file));
        }
    }
    Ok(found)
}

/// The policy named `name` for `inst`: a baseline tuned by `baselines`, or
/// an algorithm with the parameters file given for it in `entries`.
pub(crate) fn build(
    name: &str,
    inst: &Instance,
    entries: &[String],
    seed: u64,
    baselines: &BaselineParams,
) -> Result<Box<dyn Policy>, CliError> {
    let file = params_file(entries, name)?;
    let text = params_text(file)?;
    registry::policy(name, inst, text.as_deref(), seed, baselines)
        .map_err(|e| lib_error(name, file, &e))
}

//! Simulator policies by name, shared by `simulate` and `replay`: every
//! baseline and every algorithm that acts as a simulator policy.

use std::collections::BTreeMap;
use std::path::Path;

use clap::Args;
use dmlsched::baselines::{BaselineParams, Tiresias};
use dmlsched::model::Instance;
use dmlsched::placement::PlacementRule;
use dmlsched::registry::{self, ALGORITHM_POLICIES};
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
    /// The baselines' parameters for a run of `names`, checked (prices
    /// given when `gavel-max-throughput-per-cost` is among them).
    pub(crate) fn params(&self, names: &[String]) -> Result<BaselineParams, CliError> {
        if self.gpu_prices.is_none() && names.iter().any(|n| n.trim() == PER_COST) {
            return Err(CliError::Input(format!(
                "{PER_COST} needs --gpu-prices TYPE:PRICE,... (per GPU-hour, one per GPU type of the cluster)"
            )));
        }
        let mut tiresias = Tiresias::default();
        tiresias.thresholds.clone_from(&self.tiresias_thresholds);
        tiresias.starve_factor = self.tiresias_starve_factor;
        tiresias.validate().map_err(|e| {
            CliError::Input(format!(
                "--tiresias-thresholds / --tiresias-starve-factor: {e}"
            ))
        })?;
        if !(self.round_s >= 1e-6 && self.round_s <= 1e12) {
            return Err(CliError::Input(format!(
                "--round-s {}: must be between 1e-6 and 1e12 seconds",
                self.round_s
            )));
        }
        Ok({
            let mut built = BaselineParams::default();
            built.placement = self.placement;
            built.tiresias = tiresias;
            built.round_s = self.round_s;
            built.gpu_prices = match &self.gpu_prices {
                Some(text) => parse_prices(text)?,
                None => BTreeMap::new(),
            };
            built
        })
    }
}

/// The round-based policy that reads prices.
const PER_COST: &str = "gavel-max-throughput-per-cost";

/// `--gpu-prices TYPE:PRICE,…`: each type once, each price finite and > 0.
fn parse_prices(text: &str) -> Result<BTreeMap<String, f64>, CliError> {
    let bad = |why: String| CliError::Input(format!("--gpu-prices {text}: {why}"));
    let mut out = BTreeMap::new();
    for entry in text.split(',') {
        let Some((name, price)) = entry.split_once(':') else {
            return Err(bad(format!("`{entry}` is not TYPE:PRICE")));
        };
        let name = name.trim();
        let price: f64 = price
            .trim()
            .parse()
            .map_err(|_| bad(format!("`{price}` is not a number")))?;
        if name.is_empty() || !(price.is_finite() && price > 0.0) {
            return Err(bad(format!(
                "`{entry}` needs a type name and a finite price > 0"
            )));
        }
        if out.insert(name.to_string(), price).is_some() {
            return Err(bad(format!("type {name} is priced twice")));
        }
    }
    Ok(out)
}

/// Checks that every name is a known policy (before any file is read).
pub(crate) fn check_names(names: &[String]) -> Result<(), CliError> {
    for n in names {
        let n = n.trim();
        if !registry::is_policy(n) {
            return Err(CliError::Input(format!(
                "unknown policy {n} ({})",
                registry::known_policies()
            )));
        }
    }
    Ok(())
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

/// Whether policy `name`, with the parameters file given for it among
/// `NAME=PARAMS.json` entries, needs parameter-server-only machines (OASiS
/// when its parameters set `"shared_machines": false`).
pub(crate) fn needs_ps_only_machines(entries: &[String], name: &str) -> Result<bool, CliError> {
    let file = params_file(entries, name)?;
    let text = params_text(file)?;
    registry::needs_ps_only_machines(name, text.as_deref()).map_err(|e| lib_error(name, file, &e))
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

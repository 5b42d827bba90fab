//! The options of a replay read from text, and checked, as the command
//! line reads its flags.

use std::collections::BTreeMap;

use super::ReplayError;
use crate::baselines::{BaselineParams, Tiresias};
use crate::placement::PlacementRule;
use crate::registry;
use crate::trace::{ReplayHorizon, UtilityRecipe};

/// The options of the baselines: the flags of `dmlsched simulate` and
/// `dmlsched replay` that tune them.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct BaselineOptions {
    /// How every baseline that places spreads a job over machines
    /// (default best fit).
    pub placement: PlacementRule,
    /// Tiresias's queue thresholds, GPU-seconds, increasing (default the
    /// Tiresias simulator's).
    pub tiresias_thresholds: Vec<f64>,
    /// Tiresias's starvation guard (default off).
    pub tiresias_starve_factor: Option<f64>,
    /// Round length, seconds, of the round-based allocation policies
    /// (default 360).
    pub round_s: f64,
    /// Price of one GPU of each type per hour, `TYPE:PRICE,…`, for
    /// `gavel-max-throughput-per-cost`.
    pub gpu_prices: Option<String>,
}

impl Default for BaselineOptions {
    fn default() -> Self {
        BaselineOptions {
            placement: PlacementRule::BestFit,
            tiresias_thresholds: Tiresias::SIMULATOR_THRESHOLDS.to_vec(),
            tiresias_starve_factor: None,
            round_s: 360.0,
            gpu_prices: None,
        }
    }
}

/// The round-based policy that reads prices.
const PER_COST: &str = "gavel-max-throughput-per-cost";

impl BaselineOptions {
    /// The baselines' parameters for a run of `names`, checked (prices
    /// given when `gavel-max-throughput-per-cost` is among them).
    ///
    /// # Errors
    ///
    /// [`ReplayError::Input`] naming the flag of the option that is wrong.
    pub fn params(&self, names: &[String]) -> Result<BaselineParams, ReplayError> {
        if self.gpu_prices.is_none() && names.iter().any(|n| n.trim() == PER_COST) {
            return Err(ReplayError::Input(format!(
                "{PER_COST} needs --gpu-prices TYPE:PRICE,... (per GPU-hour, one per GPU type of the cluster)"
            )));
        }
        let mut tiresias = Tiresias::default();
        tiresias.thresholds.clone_from(&self.tiresias_thresholds);
        tiresias.starve_factor = self.tiresias_starve_factor;
        tiresias.validate().map_err(|e| {
            ReplayError::Input(format!(
                "--tiresias-thresholds / --tiresias-starve-factor: {e}"
            ))
        })?;
        if !(self.round_s >= 1e-6 && self.round_s <= 1e12) {
            return Err(ReplayError::Input(format!(
                "--round-s {}: must be between 1e-6 and 1e12 seconds",
                self.round_s
            )));
        }
        Ok(BaselineParams {
            placement: self.placement,
            tiresias,
            round_s: self.round_s,
            gpu_prices: match &self.gpu_prices {
                Some(text) => parse_prices(text)?,
                None => BTreeMap::new(),
            },
        })
    }
}

/// `--gpu-prices TYPE:PRICE,…`: each type once, each price finite and > 0.
fn parse_prices(text: &str) -> Result<BTreeMap<String, f64>, ReplayError> {
    let bad = |why: String| ReplayError::Input(format!("--gpu-prices {text}: {why}"));
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

/// Reads a horizon: `after-last-arrival`, `cover:M` or a number of slots.
///
/// # Errors
///
/// [`ReplayError::Input`] for any other text.
pub fn parse_horizon(v: &str) -> Result<ReplayHorizon, ReplayError> {
    let bad = || {
        ReplayError::Input(format!(
            "--horizon {v}: expected after-last-arrival, cover:M or a number of slots"
        ))
    };
    if v == "after-last-arrival" {
        return Ok(ReplayHorizon::AfterLastArrival);
    }
    if let Some(m) = v.strip_prefix("cover:") {
        let multiple: f64 = m.parse().map_err(|_| bad())?;
        return Ok(ReplayHorizon::Cover { multiple });
    }
    v.parse::<u32>()
        .map(ReplayHorizon::Slots)
        .map_err(|_| bad())
}

/// Reads the jobs' utilities: `trace` or `sigmoid[:M[:S]]`.
///
/// # Errors
///
/// [`ReplayError::Input`] for any other text, or a sigmoid out of range.
pub fn parse_utility(v: &str) -> Result<UtilityRecipe, ReplayError> {
    let bad = || ReplayError::Input(format!("--utility {v}: expected trace or sigmoid[:M[:S]]"));
    if v == "trace" {
        return Ok(UtilityRecipe::Trace);
    }
    let mut parts = v.split(':');
    if parts.next() != Some("sigmoid") {
        return Err(bad());
    }
    let mut num = |default: f64| -> Result<f64, ReplayError> {
        parts
            .next()
            .map_or(Ok(default), |s| s.parse::<f64>().map_err(|_| bad()))
    };
    let multiple = num(2.0)?;
    let steepness = num(4.0)?;
    if parts.next().is_some() {
        return Err(bad());
    }
    let recipe = UtilityRecipe::Sigmoid {
        multiple,
        steepness,
    };
    recipe
        .validate()
        .map_err(|e| ReplayError::Input(format!("--utility {v}: {e}")))?;
    Ok(recipe)
}

/// Checks that every name is a known simulator policy
/// ([`registry::is_policy`]).
///
/// # Errors
///
/// [`ReplayError::Input`] naming the first unknown one and the known ones.
pub fn check_names(names: &[String]) -> Result<(), ReplayError> {
    for n in names {
        let n = n.trim();
        if !registry::is_policy(n) {
            return Err(ReplayError::Input(format!(
                "unknown policy {n} ({})",
                registry::known_policies()
            )));
        }
    }
    Ok(())
}

/// The JSON parameters given for `policy`, checking every entry's name.
pub(crate) fn params_for<'a>(
    params: &'a [(String, String)],
    policy: &str,
) -> Result<Option<&'a str>, ReplayError> {
    let mut found = None;
    for (name, json) in params {
        if !registry::ALGORITHM_POLICIES.contains(&name.as_str()) {
            return Err(ReplayError::Input(format!(
                "--params {name}: {name} takes no parameters (one of {})",
                registry::ALGORITHM_POLICIES.join(", ")
            )));
        }
        if name == policy {
            found = Some(json.as_str());
        }
    }
    Ok(found)
}

/// Parses the parameters given for each of `names`, so that bad
/// parameters are refused before anything runs.
pub(crate) fn check_params(
    params: &[(String, String)],
    names: &[String],
) -> Result<(), ReplayError> {
    params_for(params, "")?;
    for name in names {
        if let Some(json) = params_for(params, name)? {
            registry::check_params(name, json).map_err(|e| ReplayError::lib(name, &e))?;
        }
    }
    Ok(())
}

//! Simulator policies by name, shared by `simulate` and `replay`: every
//! baseline and every algorithm that acts as a simulator policy.

use std::path::Path;

use clap::Args;
use dmlsched::algorithms::gadget::{GadgetParams, GadgetPolicy};
use dmlsched::algorithms::locality::{LocalityParams, LocalityPolicy};
use dmlsched::algorithms::oasis::{OasisParams, OasisPolicy};
use dmlsched::algorithms::smd::{SmdParams, SmdScheduler};
use dmlsched::baselines::{BaselineParams, Tiresias};
use dmlsched::model::Instance;
use dmlsched::placement::PlacementRule;
use dmlsched::registry::{BASELINES, RING_BASELINES, by_name_with};
use dmlsched::sim::Policy;
use dmlsched::trace::Arch;
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

use crate::CliError;
use crate::solve::params;

/// The algorithms that also act as simulator policies.
pub(crate) const ALGORITHM_POLICIES: [&str; 4] = ["oasis", "locality", "gadget", "smd"];

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
}

impl BaselineFlags {
    /// The baselines' parameters, checked.
    pub(crate) fn params(&self) -> Result<BaselineParams, CliError> {
        let mut tiresias = Tiresias::default();
        tiresias.thresholds.clone_from(&self.tiresias_thresholds);
        tiresias.starve_factor = self.tiresias_starve_factor;
        tiresias.validate().map_err(|e| {
            CliError::Input(format!(
                "--tiresias-thresholds / --tiresias-starve-factor: {e}"
            ))
        })?;
        Ok(BaselineParams {
            placement: self.placement,
            tiresias_thresholds: self.tiresias_thresholds.clone(),
            tiresias_starve_factor: self.tiresias_starve_factor,
        })
    }
}

/// Every policy name the tools accept, for messages.
fn known() -> String {
    format!(
        "baselines: {}, {}; algorithms: {}",
        BASELINES.join(", "),
        RING_BASELINES.join(", "),
        ALGORITHM_POLICIES.join(", ")
    )
}

/// Checks that every name is a known policy (before any file is read).
pub(crate) fn check_names(names: &[String]) -> Result<(), CliError> {
    for n in names {
        let n = n.trim();
        let baseline =
            n == "rar-online-random" || by_name_with(n, &BaselineParams::default()).is_some();
        if !baseline && !ALGORITHM_POLICIES.contains(&n) {
            return Err(CliError::Input(format!("unknown policy {n} ({})", known())));
        }
    }
    Ok(())
}

/// The job architecture policy `name` schedules: `None` for a baseline
/// that runs either.
pub(crate) fn architecture(name: &str) -> Option<Arch> {
    match name {
        "oasis" | "locality" | "smd" => Some(Arch::ParameterServer),
        "gadget" => Some(Arch::RingAllReduce),
        n if RING_BASELINES.contains(&n) => Some(Arch::RingAllReduce),
        _ => None,
    }
}

/// Reads and parses every parameters file given for one of `names`, so a
/// bad file is refused before anything runs.
pub(crate) fn check_params(entries: &[String], names: &[String]) -> Result<(), CliError> {
    // Every entry's form and name, even one for a policy not in the run.
    params_file(entries, "")?;
    for name in names {
        let file = params_file(entries, name)?;
        match name.as_str() {
            "oasis" => params::<OasisParams>(file).map(|_| ())?,
            "locality" => params::<LocalityParams>(file).map(|_| ())?,
            "gadget" => params::<GadgetParams>(file).map(|_| ())?,
            "smd" => params::<SmdParams>(file).map(|_| ())?,
            _ => {}
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
    let lib = |e: dmlsched::Error| CliError::lib(name, &e);
    Ok(match name {
        "oasis" => Box::new(OasisPolicy::new(inst, &params::<OasisParams>(file)?).map_err(lib)?),
        "locality" => {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            Box::new(
                LocalityPolicy::new(inst, &params::<LocalityParams>(file)?, &mut rng)
                    .map_err(lib)?,
            )
        }
        "gadget" => Box::new(GadgetPolicy::new(inst, &params::<GadgetParams>(file)?).map_err(lib)?),
        "smd" => Box::new(SmdScheduler::new(params::<SmdParams>(file)?)),
        "rar-online-random" => Box::new(dmlsched::algorithms::sjf_bco::RarOnlineRandom::new(seed)),
        other => by_name_with(other, baselines)
            .ok_or_else(|| CliError::Input(format!("unknown policy {other} ({})", known())))?,
    })
}

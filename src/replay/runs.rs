//! The runs of a replay: every policy on its instance, for every load
//! scale and seed.

use super::options::params_for;
use super::setup::{Setup, describe};
use super::{
    ReplayConfig, ReplayError, ReplayFailure, ReplayInstance, ReplayObserver, ReplayRun,
    scale_label, utility_bound,
};
use crate::certificate::Certificate;
use crate::model::Instance;
use crate::registry;
use crate::report::RunMeta;
use crate::sim::{SimOptions, SimResult, Solo, simulate};

/// Most `jobs × machines` for which the fairness metrics are computed:
/// each job's solo run is a simulation of its own, about 1 µs per machine
/// (2²¹: at most about 2 s more for a replay).
pub const FAIRNESS_MAX_CELLS: u64 = 1 << 21;

/// Each job's solo run (the fairness metrics' reference), or none when
/// the instance is beyond [`FAIRNESS_MAX_CELLS`], with a note saying so.
pub fn solo_runs(inst: &Instance, observer: &mut dyn ReplayObserver) -> Vec<Option<Solo>> {
    let jobs = inst.jobs().len();
    let machines = inst.cluster().machines.len();
    let cells = jobs as u64 * machines as u64;
    if cells > FAIRNESS_MAX_CELLS {
        observer.message(&format!(
            "note: no fairness metrics: {jobs} jobs × {machines} machines exceeds {FAIRNESS_MAX_CELLS} (each job's run alone, their reference, is a simulation of its own)"
        ));
        return vec![None; jobs];
    }
    crate::baselines::solo_runs(inst)
}

/// A run's records, its policy's certificate (or why there is none) and
/// its policy's notes.
type Simulated = (SimResult, Result<Option<Certificate>, String>, Vec<String>);

/// Simulates `name` on `inst`, then closes the policy's run for its
/// certificate.
fn simulate_one(
    name: &str,
    inst: &Instance,
    (c, setup): (&ReplayConfig, &Setup),
    seed: u64,
) -> Result<Simulated, ReplayError> {
    let json = params_for(&c.params, name)?;
    let mut policy = registry::policy(name, inst, json, seed, &setup.baselines)
        .map_err(|e| ReplayError::lib(name, &e))?;
    let result = simulate(inst, policy.as_mut(), &SimOptions::default())
        .map_err(|e| ReplayError::lib(name, &e))?;
    let notes = policy.notes();
    let certificate = policy.finish(inst).map_err(|e| e.to_string());
    Ok((result, certificate, notes))
}

/// Runs every policy on its instance for every load scale and seed; a
/// policy that fails loses only its own run.
pub(crate) fn run_all(
    c: &ReplayConfig,
    setup: &Setup,
    rows: usize,
    insts: &[ReplayInstance],
    observer: &mut dyn ReplayObserver,
) -> Result<(Vec<ReplayRun>, Vec<ReplayFailure>), ReplayError> {
    // Each job alone on the empty cluster, once per instance: the fairness
    // metrics' reference.
    let solos: Vec<_> = insts
        .iter()
        .map(|i| solo_runs(&i.instance, observer))
        .collect();
    let total = setup.policies.len() * c.load_scales.len() * c.seeds.len();
    let mut done = 0;
    let (mut runs, mut failures) = (Vec::new(), Vec::new());
    for &scale in &c.load_scales {
        for &seed in &c.seeds {
            for (name, recipe) in &setup.policies {
                let label = format!("{name} x{} seed {seed}", scale_label(scale));
                observer.progress(done, total, &label);
                if !observer.keep_going() {
                    return Err(ReplayError::Stopped { done, total });
                }
                let Some(index) = insts
                    .iter()
                    .position(|i| (i.load_scale, i.seed, i.recipe) == (scale, seed, *recipe))
                else {
                    continue;
                };
                let (mut workload, cluster) = describe(c, setup, *recipe, rows);
                if setup.recipes().len() > 1 {
                    workload = format!("{workload}, {} recipe", recipe.name());
                }
                let meta = RunMeta {
                    policy: name.clone(),
                    seed,
                    workload,
                    cluster,
                    load_scale: scale,
                };
                let inst = &insts[index].instance;
                match simulate_one(name, inst, (c, setup), seed) {
                    Ok((result, certificate, notes)) => {
                        let mut summary = result
                            .summary()
                            .with_resource_use(&result.resource_use(inst))
                            .with_fairness(result.fairness(&solos[index]));
                        summary.utility_bound = certificate
                            .as_ref()
                            .ok()
                            .and_then(|c| c.as_ref())
                            .and_then(utility_bound);
                        runs.push(ReplayRun {
                            meta,
                            summary,
                            result,
                            instance: index,
                            certificate,
                            notes,
                        });
                    }
                    Err(error) => failures.push(ReplayFailure { meta, error }),
                }
                done += 1;
                observer.progress(done, total, &label);
            }
        }
    }
    Ok((runs, failures))
}

/// The error that ends a replay some of whose runs failed: bad input when
/// every failure is, a failed run otherwise.
pub(crate) fn failed(
    failures: &[ReplayFailure],
    total: usize,
    written: bool,
) -> Result<(), ReplayError> {
    let Some(first) = failures.first() else {
        return Ok(());
    };
    let m = format!(
        "{} of {total} runs failed (the first: {} at load {}, seed {}: {}); the other results are printed{}",
        failures.len(),
        first.meta.policy,
        scale_label(first.meta.load_scale),
        first.meta.seed,
        first.error.message(),
        if written { " and written" } else { "" }
    );
    if failures.iter().all(|f| f.error.is_input()) {
        Err(ReplayError::Input(m))
    } else {
        Err(ReplayError::Run(m))
    }
}

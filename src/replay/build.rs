//! The instances of a replay: one per load scale, seed and recipe, built
//! before any policy runs.

use super::setup::{Setup, conversion, skipped_note};
use super::{ReplayConfig, ReplayError, ReplayInstance, ReplayObserver, scale_label};
use crate::algorithms::smd::workload::replay_workload;
use crate::model::Instance;
use crate::registry;
use crate::trace::{
    Arch, RecipeOptions, ReplayHorizon, ReplayOptions, SkipReason, TraceJob, assign_gavel_speeds,
    replay_instance, scale_arrivals,
};

/// What the layered recipe builds, told with the set-up.
pub(crate) const LAYERED_NOTE: &str = "layered recipe: each row becomes a layered parameter-server job of the SMD-style workload \
     (model type drawn with the seed, request and worker cap from its GPU count, work such that it \
     runs its trace duration alone at its best configuration), on 8-GPU machines, 60-s slots; \
     --horizon and --utility do not apply to it";

/// The recipe a policy of a replay runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recipe {
    /// Jobs of one architecture ([`crate::trace::replay_instance`]).
    Jobs(Arch),
    /// Layered parameter-server jobs of the SMD-style workload
    /// ([`crate::algorithms::smd::workload::replay_workload`]).
    Layered,
}

impl Recipe {
    /// The recipe policy `name` needs, `None` for a baseline that runs on
    /// jobs of either architecture.
    pub fn own(name: &str) -> Option<Recipe> {
        let needs = registry::needs(name);
        if needs.layered {
            Some(Recipe::Layered)
        } else {
            needs.arch.map(Recipe::Jobs)
        }
    }

    /// The name in messages and labels.
    pub fn name(self) -> &'static str {
        match self {
            Recipe::Jobs(Arch::RingAllReduce) => "ring-all-reduce",
            Recipe::Jobs(Arch::ParameterServer) => "parameter-server",
            Recipe::Layered => "layered",
        }
    }
}

/// The layered instance of `rows` (arrivals already scaled) on `machines`
/// 8-GPU machines: rows without a duration or a whole GPU are skipped, with
/// a note.
fn layered_instance(
    rows: &[TraceJob],
    machines: u32,
    seed: u64,
    observer: &mut dyn ReplayObserver,
) -> Result<Instance, ReplayError> {
    let usable =
        |r: &TraceJob| r.num_gpus > 0 && r.duration_s.is_some_and(|d| d.is_finite() && d > 0.0);
    let kept: Vec<TraceJob> = rows.iter().filter(|r| usable(r)).cloned().collect();
    if kept.len() < rows.len() {
        observer.message(&format!(
            "{} trace rows have no duration or no whole GPU and are skipped from the layered recipe; {} jobs remain",
            rows.len() - kept.len(),
            kept.len()
        ));
    }
    if kept.is_empty() {
        return Err(ReplayError::Input(
            "layered recipe: no trace row has a duration and a whole GPU".into(),
        ));
    }
    replay_workload(&kept, machines, seed)
        .map(|w| w.instance)
        .map_err(|e| ReplayError::lib("layered recipe", &e))
}

/// The instance of the window at one load scale and seed.
fn instance(
    rows: &[TraceJob],
    (c, setup): (&ReplayConfig, &Setup),
    recipe: Recipe,
    (scale, seed): (f64, u64),
    slot_length_s: Option<f64>,
    observer: &mut dyn ReplayObserver,
) -> Result<Instance, ReplayError> {
    let lib = |e: crate::Error| ReplayError::lib("replay instance", &e);
    let mut scaled = rows.to_vec();
    scale_arrivals(&mut scaled, 1.0 / scale).map_err(|e| lib(e.into()))?;
    let arch = match recipe {
        Recipe::Jobs(arch) => arch,
        Recipe::Layered => {
            let machines = c.gpus.total() / c.gpus_per_machine;
            return layered_instance(&scaled, machines, seed, observer);
        }
    };
    let types = c.gpus.types();
    if let Some(rates) = setup.rates.as_ref().filter(|_| !types.is_empty()) {
        let typed = assign_gavel_speeds(&scaled, &rates.table, &conversion(c), &types, seed)
            .map_err(|e| lib(e.into()))?;
        let what = "trace rows have no measured rate on the cluster's GPU types";
        if let Some(note) = skipped_note(&typed.skipped, what, &rates.path) {
            observer.message(&note);
        }
        scaled = typed.jobs;
    }
    let base = match arch {
        Arch::RingAllReduce => RecipeOptions::rar(),
        Arch::ParameterServer => RecipeOptions::ps(),
    };
    let mut recipe_options = base;
    recipe_options.seed = seed;
    recipe_options.slot_length_s = slot_length_s.unwrap_or(base.slot_length_s);
    let options = ReplayOptions {
        gpus: c.gpus.clone(),
        gpus_per_machine: c.gpus_per_machine,
        recipe: recipe_options,
        ps_servers: setup.ps_servers_for(recipe),
        horizon: setup.horizon,
        utility: setup.utility,
    };
    let (inst, out) = replay_instance(&scaled, &options).map_err(lib)?;
    if !out.skipped.is_empty() {
        let count = |r: SkipReason| out.skipped.iter().filter(|s| s.1 == r).count();
        observer.message(&format!(
            "{} trace rows produced no job and are skipped ({} without a duration, {} asking for no whole GPU); {} jobs remain",
            out.skipped.len(),
            count(SkipReason::NoDuration),
            count(SkipReason::NoGpus),
            inst.jobs().len()
        ));
    }
    if !out.capped.is_empty() {
        observer.message(&format!(
            "{} jobs asked for more than {} GPUs and were capped",
            out.capped.len(),
            c.gpus.total()
        ));
    }
    Ok(inst)
}

/// Every instance of the run, built before any policy runs: one per load
/// scale, seed and recipe, in that order.
pub(crate) fn instances(
    rows: &[TraceJob],
    c: &ReplayConfig,
    setup: &Setup,
    observer: &mut dyn ReplayObserver,
) -> Result<Vec<ReplayInstance>, ReplayError> {
    let mut out = Vec::new();
    for &load_scale in &c.load_scales {
        for &seed in &c.seeds {
            for recipe in setup.recipes() {
                let instance =
                    recipe_instance(rows, (c, setup), recipe, (load_scale, seed), observer)?;
                out.push(ReplayInstance {
                    load_scale,
                    seed,
                    recipe,
                    instance,
                });
            }
        }
    }
    Ok(out)
}

/// The instance of `recipe` at one load scale and seed. Without
/// `--slot-length`, a ring-all-reduce recipe that the GADGET-style
/// scheduler runs gets slots long enough (in steps of the default 10 s)
/// for its horizon × machines to fit the scheduler's limit, with a note.
fn recipe_instance(
    rows: &[TraceJob],
    (c, setup): (&ReplayConfig, &Setup),
    recipe: Recipe,
    run: (f64, u64),
    observer: &mut dyn ReplayObserver,
) -> Result<Instance, ReplayError> {
    let inst = instance(rows, (c, setup), recipe, run, c.slot_length, observer)?;
    // The least cell limit of the policies that run on this recipe.
    let limit = setup
        .policies
        .iter()
        .filter(|p| p.1 == recipe)
        .filter_map(|p| registry::needs(&p.0).max_cells.map(|m| (m, p.0.clone())))
        .min();
    let cells = |i: &Instance| u64::from(i.horizon_slots()) * i.cluster().machines.len() as u64;
    let Some((max_cells, limited)) = limit else {
        return Ok(inst);
    };
    if c.slot_length.is_some() || cells(&inst) <= max_cells {
        return Ok(inst);
    }
    if let ReplayHorizon::Slots(n) = setup.horizon {
        // Longer slots leave a horizon given in slots as many cells.
        return Err(ReplayError::Input(format!(
            "--horizon {n}: {n} slots × {} machines exceed {limited}'s limit of {max_cells} cells \
             (give fewer slots, or leave --horizon out to cover the jobs)",
            inst.cluster().machines.len()
        )));
    }
    let base = inst.slot_length_s();
    let factor = (cells(&inst) as f64 / max_cells as f64).ceil();
    let mut slot = base * factor;
    let mut inst = instance(rows, (c, setup), recipe, run, Some(slot), observer)?;
    // The horizon in slots rounds up: one more step may be needed (a
    // horizon that covers the jobs or ends after the last arrival takes
    // fewer slots as they lengthen).
    while cells(&inst) > max_cells && slot < 1e9 {
        slot += base;
        inst = instance(rows, (c, setup), recipe, run, Some(slot), observer)?;
    }
    observer.message(&format!(
        "note: {} recipe at load {}, seed {}: slots of {slot} s (not {base} s), so that horizon × machines fits {limited}'s limit of {max_cells} cells",
        recipe.name(),
        scale_label(run.0),
        run.1
    ));
    Ok(inst)
}

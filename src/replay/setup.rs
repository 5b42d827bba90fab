//! A replay's set-up: the defaults resolved, the trace's window read, the
//! set-up described.

use std::path::{Path, PathBuf};

use super::build::{LAYERED_NOTE, Recipe};
use super::options::{self, parse_horizon, parse_utility};
use super::{ReplayArch, ReplayConfig, ReplayError, ReplayObserver};
use crate::baselines::BaselineParams;
use crate::registry;
use crate::trace::{
    Arch, GavelConversion, GavelThroughputs, GpuMix, ReplayHorizon, SkippedRow, TraceFormat,
    TraceJob, UtilityRecipe, Window, WindowStart, assign_gavel_speeds, guess_format, load,
    load_gavel_trace_with_rates, select,
};

/// The replay's set-up once the defaults are resolved.
pub(crate) struct Setup {
    /// The recipe of the baselines (and of every algorithm that schedules
    /// it).
    pub(crate) arch: Arch,
    /// PS-only machines of the parameter-server recipe's cluster.
    pub(crate) ps_servers: u32,
    pub(crate) horizon: ReplayHorizon,
    pub(crate) utility: UtilityRecipe,
    /// Every policy with the recipe it runs on, in the order given.
    pub(crate) policies: Vec<(String, Recipe)>,
    pub(crate) baselines: BaselineParams,
    /// Gavel's throughputs, when the trace is Gavel's (its steps become
    /// durations) or the cluster names GPU types (each job's speeds).
    pub(crate) rates: Option<Rates>,
}

/// Gavel's throughputs and where they were read.
pub(crate) struct Rates {
    pub(crate) table: GavelThroughputs,
    pub(crate) path: PathBuf,
}

impl Setup {
    /// The recipes of the run, in the order of their first policy.
    pub(crate) fn recipes(&self) -> Vec<Recipe> {
        let mut out: Vec<Recipe> = Vec::new();
        for (_, a) in &self.policies {
            if !out.contains(a) {
                out.push(*a);
            }
        }
        out
    }

    /// PS-only machines of `recipe`'s cluster: the parameter-server recipe
    /// gets them; a ring-all-reduce recipe only when it is the run's own
    /// (`--arch rar --ps-servers N`), not beside a parameter-server one; the
    /// layered recipe never.
    pub(crate) fn ps_servers_for(&self, recipe: Recipe) -> u32 {
        match recipe {
            Recipe::Jobs(a) if a == Arch::ParameterServer || a == self.arch => self.ps_servers,
            _ => 0,
        }
    }

    /// The set-up with every default resolved, checked before the trace is
    /// read.
    pub(crate) fn resolve(c: &ReplayConfig) -> Result<Setup, ReplayError> {
        c.check()?;
        // What the named policies need of the workload: the online
        // algorithms a horizon their jobs can finish in and utilities that
        // reward finishing late a little, OASiS PS-only machines.
        let any = |f: fn(&registry::Needs) -> bool| {
            c.policies.iter().any(|p| f(&registry::needs(p.trim())))
        };
        let online = any(|n| n.horizon);
        let ps_algorithm = any(|n| n.arch == Some(Arch::ParameterServer));
        let arch = match c.arch {
            Some(ReplayArch::Rar) => Arch::RingAllReduce,
            Some(ReplayArch::Ps | ReplayArch::Layered) => Arch::ParameterServer,
            None if ps_algorithm => Arch::ParameterServer,
            None => Arch::RingAllReduce,
        };
        let machines = c.gpus.total() / c.gpus_per_machine.max(1);
        let names: Vec<String> = if c.policies.is_empty() {
            registry::cheap_baselines(arch == Arch::RingAllReduce)
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            c.policies.iter().map(|p| p.trim().to_string()).collect()
        };
        options::check_params(&c.params, &names)?;
        // OASiS needs PS-only machines only when its parameters ask for the
        // paper's disjoint pools.
        let mut ps_only = false;
        for n in &names {
            let json = options::params_for(&c.params, n)?;
            ps_only |=
                registry::needs_ps_only_machines(n, json).map_err(|e| ReplayError::lib(n, &e))?;
        }
        check_layered(c, &names)?;
        let policies = policy_recipes(&names, arch, c.arch)?;
        Ok(Setup {
            arch,
            ps_servers: c.ps_servers.unwrap_or(if ps_only { machines } else { 0 }),
            horizon: match &c.horizon {
                Some(h) => parse_horizon(h)?,
                None if online => ReplayHorizon::Cover { multiple: 3.0 },
                None => ReplayHorizon::AfterLastArrival,
            },
            utility: match &c.utility {
                Some(u) => parse_utility(u)?,
                None if online => parse_utility("sigmoid")?,
                None => UtilityRecipe::Trace,
            },
            policies,
            baselines: super::baseline_params(c)?,
            rates: None,
        })
    }
}

impl ReplayConfig {
    /// Checks what needs no file: the counts and numbers in range, every
    /// policy a known one, the cluster's shape. [`replay`](super::replay)
    /// checks it first; a front end that reads files for the replay (the
    /// command line's `--params`) calls it before, so that a bad flag is
    /// named before a file is read.
    ///
    /// # Errors
    ///
    /// [`ReplayError::Input`] naming the flag.
    pub fn check(&self) -> Result<(), ReplayError> {
        check_numbers(self)?;
        options::check_names(&self.policies)?;
        self.gpus.cluster(self.gpus_per_machine).map_err(|e| {
            ReplayError::Input(format!(
                "--gpus {} --gpus-per-machine {}: {e}",
                self.gpus, self.gpus_per_machine
            ))
        })?;
        Ok(())
    }
}

/// The counts and numbers of `c` in range.
fn check_numbers(c: &ReplayConfig) -> Result<(), ReplayError> {
    if c.jobs == 0 {
        return Err(ReplayError::Input("--jobs must be at least 1".into()));
    }
    if c.seeds.is_empty() {
        return Err(ReplayError::Input("--seeds needs at least one seed".into()));
    }
    if c.load_scales.is_empty() {
        return Err(ReplayError::Input(
            "--load-scales needs at least one scale".into(),
        ));
    }
    if let Some(s) = c.load_scales.iter().find(|s| !(s.is_finite() && **s > 0.0)) {
        return Err(ReplayError::Input(format!(
            "--load-scales: {s} is not a positive number"
        )));
    }
    if let Some(s) = c.slot_length.filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(ReplayError::Input(format!(
            "--slot-length: {s} is not a positive number of seconds"
        )));
    }
    Ok(())
}

/// The layered recipe's cluster: untyped 8-GPU machines.
fn check_layered(c: &ReplayConfig, names: &[String]) -> Result<(), ReplayError> {
    let layered =
        names.iter().any(|n| registry::needs(n).layered) || c.arch == Some(ReplayArch::Layered);
    if layered && matches!(c.gpus, GpuMix::Typed(_)) {
        return Err(ReplayError::Input(format!(
            "--gpus {}: the layered recipe builds the SMD-style workload's machines, which name no GPU type (give a number of GPUs)",
            c.gpus
        )));
    }
    if layered && c.gpus_per_machine != 8 {
        return Err(ReplayError::Input(format!(
            "--gpus-per-machine {}: the layered recipe uses the SMD-style workload's 8-GPU machines (give 8)",
            c.gpus_per_machine
        )));
    }
    Ok(())
}

/// Each policy with the recipe it runs on: its own (jobs of the
/// architecture it schedules; the layered recipe for the SMD-style
/// scheduler), else jobs of `arch`. With `--arch` given (`forced`), every
/// policy runs on that recipe, and a policy with a recipe of its own that
/// differs is refused, naming the fix.
fn policy_recipes(
    names: &[String],
    arch: Arch,
    forced: Option<ReplayArch>,
) -> Result<Vec<(String, Recipe)>, ReplayError> {
    let forced = forced.map(|a| match a {
        ReplayArch::Rar => (Recipe::Jobs(Arch::RingAllReduce), "rar"),
        ReplayArch::Ps => (Recipe::Jobs(Arch::ParameterServer), "ps"),
        ReplayArch::Layered => (Recipe::Layered, "layered"),
    });
    let mut out = Vec::new();
    let mut misfits = Vec::new();
    for n in names {
        match (forced, Recipe::own(n)) {
            (Some((f, _)), Some(r)) if r != f => misfits.push(format!("{n} ({})", r.name())),
            (Some((f, _)), _) => out.push((n.clone(), f)),
            (None, Some(r)) => out.push((n.clone(), r)),
            (None, None) => out.push((n.clone(), Recipe::Jobs(arch))),
        }
    }
    if let (false, Some((f, flag))) = (misfits.is_empty(), forced) {
        return Err(ReplayError::Input(format!(
            "--arch {flag} builds {} jobs, which {} cannot schedule: \
             drop --arch to run each policy on its own recipe, or leave them out of --policies",
            f.name(),
            misfits.join(", ")
        )));
    }
    Ok(out)
}

/// A library error about the trace file.
fn trace_error(c: &ReplayConfig, e: crate::Error) -> ReplayError {
    ReplayError::lib(&c.trace.display().to_string(), &e)
}

/// The trace's format: given, or guessed from its first line.
pub(crate) fn format(c: &ReplayConfig) -> Result<TraceFormat, ReplayError> {
    match c.format {
        Some(f) => Ok(f),
        None => guess_format(&c.trace).map_err(|e| trace_error(c, e.into())),
    }
}

/// How Gavel's rates are read: at --gavel-gpu, consolidated on one
/// machine of --gpus-per-machine GPUs.
pub(crate) fn conversion(c: &ReplayConfig) -> GavelConversion {
    GavelConversion {
        gpu: c.gavel_gpu.clone(),
        gpus_per_machine: c.gpus_per_machine,
    }
}

/// Gavel's throughputs, read when a Gavel trace's steps need them or the
/// cluster names GPU types.
pub(crate) fn rates(c: &ReplayConfig, format: TraceFormat) -> Result<Option<Rates>, ReplayError> {
    if format != TraceFormat::Gavel && matches!(c.gpus, GpuMix::Untyped(_)) {
        return Ok(None);
    }
    let read = || -> crate::Result<Rates> {
        let path = GavelThroughputs::locate(c.gavel_throughputs.as_deref())?;
        let table = GavelThroughputs::load(&path)?;
        Ok(Rates { table, path })
    };
    let context = if format == TraceFormat::Gavel {
        "Gavel throughputs"
    } else {
        "Gavel throughputs (the per-type speeds of --gpus)"
    };
    let rates = read().map_err(|e| ReplayError::lib(context, &e))?;
    // Every type of --gpus, and --gavel-gpu, must be a kind of the table.
    let types = c.gpus.types();
    if !types.is_empty() {
        assign_gavel_speeds(&[], &rates.table, &conversion(c), &types, 0)
            .map_err(|e| ReplayError::lib(&format!("--gpus {}", c.gpus), &e.into()))?;
    }
    Ok(Some(rates))
}

/// The window's rows, and a note on the Gavel rows skipped for want of a
/// rate; a Gavel trace's steps become durations with Gavel's measured
/// throughputs.
pub(crate) fn rows(
    c: &ReplayConfig,
    format: TraceFormat,
    rates: Option<&Rates>,
) -> Result<(Vec<TraceJob>, Option<String>), ReplayError> {
    let lib = |e: crate::Error| trace_error(c, e);
    let (rows, note) = match (format, rates) {
        (TraceFormat::Gavel, Some(rates)) => gavel_rows(c, rates).map_err(lib)?,
        _ => (
            load(&c.trace, Some(format)).map_err(|e| lib(e.into()))?,
            None,
        ),
    };
    let window = Window {
        start: c.start.as_ref().map(|v| match v.parse::<f64>() {
            Ok(s) => WindowStart::Seconds(s),
            Err(_) => WindowStart::Date(v.clone()),
        }),
        jobs: Some(c.jobs),
        ..Window::default()
    };
    Ok((select(&rows, &window).map_err(|e| lib(e.into()))?, note))
}

/// A Gavel trace's rows with durations at --gavel-gpu's rates; on a typed
/// cluster, only those measured on every type (so that the window holds
/// --jobs jobs that can be timed everywhere).
fn gavel_rows(c: &ReplayConfig, rates: &Rates) -> crate::Result<(Vec<TraceJob>, Option<String>)> {
    let conv = conversion(c);
    let report = load_gavel_trace_with_rates(&c.trace, &rates.table, &conv)?;
    let mut skipped = report.skipped;
    let mut jobs = report.jobs;
    let types = c.gpus.types();
    if !types.is_empty() {
        let typed = assign_gavel_speeds(&jobs, &rates.table, &conv, &types, 0)?;
        // `typed` counts the converted rows: name each by its file row.
        let gone: std::collections::BTreeSet<usize> = skipped.iter().map(|s| s.index).collect();
        let converted: Vec<usize> = (0..jobs.len() + skipped.len())
            .filter(|i| !gone.contains(i))
            .collect();
        skipped.extend(typed.skipped.into_iter().map(|mut s| {
            s.index = converted[s.index];
            s
        }));
        skipped.sort_by_key(|s| s.index);
        jobs = typed.jobs;
    }
    let what = if types.is_empty() {
        format!("Gavel rows have no measured {} rate", conv.gpu)
    } else {
        format!(
            "Gavel rows have no measured rate on {} (--gavel-gpu) or on one of the cluster's types ({})",
            conv.gpu,
            types.join(", ")
        )
    };
    let note = skipped_note(&skipped, &what, &rates.path);
    Ok((jobs, note))
}

/// A note on rows left out for want of a rate: how many, `what`, and the
/// first of them; `None` when none is.
pub(crate) fn skipped_note(skipped: &[SkippedRow], what: &str, path: &Path) -> Option<String> {
    let first = skipped.first()?;
    Some(format!(
        "{} {what} in {} and are skipped (the first: {first})",
        skipped.len(),
        path.display(),
    ))
}

/// A short description of the set-up, told and written to every row: the
/// workload and `recipe`'s cluster.
pub(crate) fn describe(
    c: &ReplayConfig,
    setup: &Setup,
    recipe: Recipe,
    jobs: usize,
) -> (String, String) {
    let name = c
        .trace
        .file_name()
        .and_then(|s| s.to_str())
        .unwrap_or("trace");
    let from = c
        .start
        .as_ref()
        .map(|s| format!(" from {s}"))
        .unwrap_or_default();
    let workload = format!("{name} ({jobs} jobs{from})");
    let ps_servers = setup.ps_servers_for(recipe);
    let ps = if recipe == Recipe::Layered {
        " (the SMD-style workload's machines)".to_string()
    } else if ps_servers > 0 {
        format!(" + {ps_servers} PS-only machines")
    } else {
        String::new()
    };
    let gpus = match &c.gpus {
        GpuMix::Untyped(n) => format!("{n} GPUs"),
        typed => format!("{} GPUs ({typed})", typed.total()),
    };
    let cluster = format!("{gpus}, {} per machine{ps}", c.gpus_per_machine);
    (workload, cluster)
}

/// Tells the set-up: the workload, the cluster and recipe of the first
/// policy, then the recipe and cluster of any policy on another recipe.
pub(crate) fn describe_setup(
    c: &ReplayConfig,
    setup: &Setup,
    jobs: usize,
    observer: &mut dyn ReplayObserver,
) {
    let recipes = setup.recipes();
    let (workload, cluster) = describe(c, setup, recipes[0], jobs);
    let on = |recipe: Recipe| -> String {
        let names: Vec<&str> = setup
            .policies
            .iter()
            .filter(|p| p.1 == recipe)
            .map(|p| p.0.as_str())
            .collect();
        names.join(", ")
    };
    let first = if recipes.len() > 1 {
        format!(" for {}", on(recipes[0]))
    } else {
        String::new()
    };
    observer.message(&format!(
        "{workload}, {cluster}, {} recipe{first}, horizon {}, utility {}, {} placement, Tiresias thresholds {:?} GPU-s",
        recipes[0].name(),
        setup.horizon,
        setup.utility,
        setup.baselines.placement,
        setup.baselines.tiresias.thresholds
    ));
    for &recipe in &recipes[1..] {
        let (_, cluster) = describe(c, setup, recipe, jobs);
        observer.message(&format!(
            "{} recipe for {} (each policy on jobs of the architecture it schedules), {cluster}",
            recipe.name(),
            on(recipe)
        ));
    }
    if recipes.contains(&Recipe::Layered) {
        observer.message(LAYERED_NOTE);
    }
}

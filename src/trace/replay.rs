//! A replayable instance from trace rows: the cluster, the recipe's jobs,
//! their utilities and the horizon ([`replay_instance`]).

use super::TraceError;
use super::TraceJob;
use super::gpu_mix::GpuMix;
use super::recipe::{RecipeOptions, RecipeOutput, to_jobs};
use crate::model::units::{Num, ceil_tol};
use crate::model::{Cluster, Hosting, Instance, Machine, MachineId, Utility};

/// How a replay's jobs value their completion.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum UtilityRecipe {
    /// The recipe's own: 1 per completion, or 1 if the job ends by the
    /// trace's deadline where the trace has one (see [`to_jobs`]).
    #[default]
    Trace,
    /// A sigmoid around `multiple` times the job's trace duration:
    /// `1 / (1 + exp(g2·(δ − g3)))` with `g3 = max(1, multiple · d)` and
    /// `g2 = steepness / g3`, where `d` is the trace duration in slots and
    /// `δ` the completion delay in slots. A job finishing at once earns
    /// about 1 (`1/(1 + e^−steepness)`), at `g3` one half, and much later
    /// nearly nothing. Schedulers that value time (OASiS) need such a
    /// utility: with [`Trace`](Self::Trace) every completion is worth the
    /// same.
    Sigmoid {
        /// Midpoint as a multiple of the trace duration, finite and at
        /// least [`UtilityRecipe::min_sigmoid_multiple`] (`S/(S + 20)`).
        multiple: f64,
        /// Steepness relative to the midpoint, finite and ≥ 0.
        steepness: f64,
    },
}

/// The horizon `T` (slots) of a replay instance.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ReplayHorizon {
    /// One slot past the last arrival's slot: enough for simulations, which
    /// stop when every job is done, not at the horizon.
    #[default]
    AfterLastArrival,
    /// Exactly this many slots (every job must arrive before the end).
    Slots(u32),
    /// Long enough for every job to finish `multiple` times its trace
    /// duration after its arrival (at least [`AfterLastArrival`](Self::AfterLastArrival)):
    /// what schedulers that plan within the horizon (OASiS) need.
    Cover {
        /// Multiple of each job's trace duration, finite and > 0.
        multiple: f64,
    },
}

impl std::fmt::Display for UtilityRecipe {
    /// `trace` or `sigmoid:M:S`, as `dmlsched replay --utility` reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UtilityRecipe::Trace => write!(f, "trace"),
            UtilityRecipe::Sigmoid {
                multiple,
                steepness,
            } => write!(f, "sigmoid:{multiple}:{steepness}"),
        }
    }
}

impl std::fmt::Display for ReplayHorizon {
    /// `after-last-arrival`, `cover:M` or the number of slots, as
    /// `dmlsched replay --horizon` reads it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReplayHorizon::AfterLastArrival => write!(f, "after-last-arrival"),
            ReplayHorizon::Slots(n) => write!(f, "{n}"),
            ReplayHorizon::Cover { multiple } => write!(f, "cover:{multiple}"),
        }
    }
}

/// The cluster and recipe of a trace replay ([`replay_instance`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ReplayOptions {
    /// GPUs in the cluster: a number, or counts per GPU type (then each
    /// job needs a speed on every type, [`TraceJob::gpu_speeds`], when
    /// there are several; see [`assign_gavel_speeds`](super::assign_gavel_speeds)).
    pub gpus: GpuMix,
    /// GPUs per machine (must divide each type's count).
    pub gpus_per_machine: u32,
    /// The recipe; its `max_gpus_per_job` is tightened to `gpus` and its
    /// `gpus_per_machine` set from this struct.
    pub recipe: RecipeOptions,
    /// Parameter-server-only machines added to the GPU machines (0: none).
    /// When positive, the GPU machines host workers only and these machines
    /// (a GPU machine's CPU, memory, storage and NIC, without GPUs) host
    /// parameter servers only, as OASiS's cluster model requires.
    pub ps_servers: u32,
    /// The horizon.
    pub horizon: ReplayHorizon,
    /// The jobs' utilities.
    pub utility: UtilityRecipe,
}

impl Default for ReplayOptions {
    /// 64 GPUs, 8 per machine, ring-all-reduce recipe, no PS-only machines,
    /// the horizon one slot past the last arrival, the trace's utilities.
    fn default() -> Self {
        ReplayOptions {
            gpus: GpuMix::Untyped(64),
            gpus_per_machine: 8,
            recipe: RecipeOptions::rar(),
            ps_servers: 0,
            horizon: ReplayHorizon::AfterLastArrival,
            utility: UtilityRecipe::Trace,
        }
    }
}

/// How far below its best a sigmoid recipe's utility may fall for a job
/// that finishes in its trace duration, in `ln` (20: a factor of about
/// 2·10⁻⁹). A steeper fall leaves the online schedulers' price bounds
/// without room (`U` below `L`), so [`UtilityRecipe::validate`] refuses
/// the multiples that cause it.
pub const MAX_SIGMOID_LN_DROP: f64 = 20.0;

impl UtilityRecipe {
    /// The smallest accepted sigmoid `multiple` for `steepness`:
    /// `S/(S + 20)`, where a job finishing in its trace duration `d` keeps
    /// `f(d) ≈ exp(−S·(1/M − 1)) ≥ e⁻²⁰` of its utility
    /// ([`MAX_SIGMOID_LN_DROP`]).
    pub fn min_sigmoid_multiple(steepness: f64) -> f64 {
        steepness / (steepness + MAX_SIGMOID_LN_DROP)
    }

    /// Checks a sigmoid's parameters: a finite steepness `S ≥ 0` and a
    /// finite multiple `M ≥ S/(S + 20)`, positive
    /// ([`min_sigmoid_multiple`](Self::min_sigmoid_multiple)).
    ///
    /// # Errors
    ///
    /// [`TraceError::InvalidArgument`] naming the parameter, its value and
    /// the accepted range.
    pub fn validate(&self) -> Result<(), TraceError> {
        let UtilityRecipe::Sigmoid {
            multiple,
            steepness,
        } = *self
        else {
            return Ok(());
        };
        if !(steepness.is_finite() && steepness >= 0.0) {
            return Err(TraceError::invalid(
                "utility",
                format!(
                    "the sigmoid's steepness S = {} is not a finite number ≥ 0",
                    Num(steepness)
                ),
            ));
        }
        let min = Self::min_sigmoid_multiple(steepness);
        if !(multiple.is_finite() && multiple > 0.0 && multiple >= min) {
            return Err(TraceError::invalid(
                "utility",
                format!(
                    "the sigmoid's multiple M = {} is outside the accepted range: finite, > 0 and ≥ S/(S + 20) = {} for S = {} (a smaller M leaves a job that finishes in its trace duration less than e^-20 of its utility, where the online schedulers' price bounds break)",
                    Num(multiple),
                    Num(min),
                    Num(steepness)
                ),
            ));
        }
        Ok(())
    }
}

impl ReplayOptions {
    /// Checks the utility and horizon parameters.
    fn validate(&self) -> Result<(), TraceError> {
        self.utility.validate()?;
        match self.horizon {
            ReplayHorizon::Cover { multiple } if !(multiple.is_finite() && multiple > 0.0) => {
                Err(TraceError::invalid(
                    "horizon",
                    format!("the multiple must be finite and > 0, got {}", Num(multiple)),
                ))
            }
            ReplayHorizon::Slots(0) => Err(TraceError::invalid("horizon", "must be ≥ 1 slot")),
            _ => Ok(()),
        }
    }
}

/// A replayable instance built from trace rows: a [`GpuMix::cluster`] (plus
/// `ps_servers` PS-only machines), the recipe's jobs with GPU counts capped
/// at the cluster size and utilities per [`UtilityRecipe`], the recipe's
/// slot length, and the horizon per [`ReplayHorizon`].
///
/// # Errors
///
/// [`crate::Error::Trace`] for a bad cluster size, recipe, utility or
/// horizon argument; [`crate::Error::Model`] if a job does not fit the
/// cluster (for example a parameter-server task larger than a machine) or
/// arrives after a fixed horizon.
///
/// ```
/// use dmlsched::trace::{ReplayHorizon, ReplayOptions, SkipReason, TraceJob, replay_instance};
///
/// let row = |id: &str, arrival_s, gpus, duration_s| {
///     let mut r = TraceJob::new(id, arrival_s, gpus);
///     r.duration_s = duration_s;
///     r
/// };
/// // Row "b" asks for more GPUs than the cluster has; row "c" never ran.
/// let trace = [
///     row("a", 0.0, 4, Some(600.0)),
///     row("b", 30.0, 32, Some(900.0)),
///     row("c", 45.0, 1, None),
/// ];
/// let mut options = ReplayOptions::default(); // ring-all-reduce recipe, 10 s slots
/// options.gpus = 16.into();
/// options.horizon = ReplayHorizon::Cover { multiple: 2.0 };
/// let (instance, recipe) = replay_instance(&trace, &options)?;
/// assert_eq!(instance.cluster().machines.len(), 2); // 8 GPUs per machine
/// assert_eq!(instance.jobs().len(), 2);
/// assert_eq!(instance.jobs()[1].max_workers(), 16); // capped at the cluster
/// assert_eq!(recipe.capped, [1]);
/// assert_eq!(recipe.skipped, [(2, SkipReason::NoDuration)]);
/// // Room for each job to take twice its trace duration.
/// assert!(instance.horizon_s() >= 30.0 + 2.0 * 900.0);
/// # Ok::<(), dmlsched::Error>(())
/// ```
pub fn replay_instance(
    trace: &[TraceJob],
    opts: &ReplayOptions,
) -> crate::Result<(Instance, RecipeOutput)> {
    opts.validate()?;
    let cluster = replay_cluster(opts)?;
    let gpus = opts.gpus.total();
    let recipe = RecipeOptions {
        max_gpus_per_job: Some(opts.recipe.max_gpus_per_job.map_or(gpus, |c| c.min(gpus))),
        gpus_per_machine: opts.gpus_per_machine,
        ..opts.recipe
    };
    let mut out = to_jobs(trace, &recipe)?;
    let slot = recipe.slot_length_s;
    let durations: Vec<f64> = out
        .origins
        .iter()
        .map(|o| trace[o.trace_index].duration_s.unwrap_or(0.0) / slot)
        .collect();
    if let UtilityRecipe::Sigmoid {
        multiple,
        steepness,
    } = opts.utility
    {
        for (job, d) in out.jobs.iter_mut().zip(&durations) {
            let g3 = (multiple * d).max(1.0);
            job.utility = Utility::Sigmoid {
                g1: 1.0,
                g2: steepness / g3,
                g3,
            };
        }
    }
    let horizon = horizon_slots(opts.horizon, &out, &durations, slot);
    let inst = Instance::new(cluster, out.jobs.clone(), slot, horizon)?;
    Ok((inst, out))
}

/// The GPU machines, worker-only when PS-only machines are added after them.
fn replay_cluster(opts: &ReplayOptions) -> Result<Cluster, TraceError> {
    let mut cluster = opts.gpus.cluster(opts.gpus_per_machine)?;
    if opts.ps_servers == 0 {
        return Ok(cluster);
    }
    let machines = cluster.machines.len() as u64;
    if machines + u64::from(opts.ps_servers) > super::MAX_CLUSTER_MACHINES {
        return Err(TraceError::invalid(
            "ps_servers",
            format!(
                "{machines} GPU machines and {} PS servers exceed the limit of {} machines",
                opts.ps_servers,
                super::MAX_CLUSTER_MACHINES
            ),
        ));
    }
    let template = cluster.machines[0].clone();
    for m in &mut cluster.machines {
        m.hosts = Hosting::Workers;
    }
    for k in 0..opts.ps_servers {
        // Both terms are below MAX_CLUSTER_MACHINES (2^20), so the sum fits.
        let id = MachineId(machines as u32 + k);
        let mut ps = Machine::new(
            id,
            template.capacity.gpus(0.0),
            template.intra_bandwidth_bps,
        );
        ps.hosts = Hosting::ParameterServers;
        cluster.machines.push(ps);
    }
    Ok(cluster)
}

/// The horizon in slots: one past the last arrival's slot, or more.
fn horizon_slots(rule: ReplayHorizon, out: &RecipeOutput, durations: &[f64], slot: f64) -> u32 {
    let to_u32 = |slots: f64| {
        if slots >= f64::from(u32::MAX) {
            u32::MAX
        } else {
            slots as u32
        }
    };
    let last = out.jobs.iter().map(|j| j.arrival_s).fold(0.0, f64::max);
    let after_last = to_u32((last / slot).floor() + 2.0);
    match rule {
        ReplayHorizon::AfterLastArrival => after_last,
        ReplayHorizon::Slots(n) => n,
        ReplayHorizon::Cover { multiple } => {
            let end = out
                .jobs
                .iter()
                .zip(durations)
                .map(|(j, d)| ceil_tol(j.arrival_s / slot + multiple * d) + 1.0)
                .fold(0.0, f64::max);
            after_last.max(to_u32(end))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Arch;

    fn row(id: &str, arrival_s: f64, duration_s: f64, gpus: u32) -> TraceJob {
        TraceJob {
            id: id.into(),
            arrival_s,
            num_gpus: gpus,
            gpu_fraction: None,
            duration_s: Some(duration_s),
            iterations: None,
            model: None,
            model_is_synthetic: false,
            batch_size: None,
            deadline_s: None,
            tenant: None,
            censored: false,
            raw_arrival: String::new(),
            mode: None,
            gpu_speeds: Default::default(),
        }
    }

    #[test]
    fn ps_servers_sigmoid_and_cover_horizon() {
        let rows = vec![row("a", 0.0, 3600.0, 2), row("b", 1200.0, 12_000.0, 4)];
        let opts = ReplayOptions {
            gpus: 16.into(),
            recipe: RecipeOptions::ps(),
            ps_servers: 2,
            horizon: ReplayHorizon::Cover { multiple: 3.0 },
            utility: UtilityRecipe::Sigmoid {
                multiple: 2.0,
                steepness: 4.0,
            },
            ..ReplayOptions::default()
        };
        assert_eq!(opts.recipe.arch, Arch::ParameterServer);
        let (inst, out) = replay_instance(&rows, &opts).unwrap();
        let ms = &inst.cluster().machines;
        assert_eq!(ms.len(), 4);
        assert!(ms[..2].iter().all(|m| m.hosts == Hosting::Workers));
        assert!(ms[2..].iter().all(|m| m.hosts == Hosting::ParameterServers));
        assert_eq!(ms[3].id, MachineId(3));
        assert_eq!(ms[3].capacity.gpus, 0.0);
        assert_eq!(ms[3].capacity.cpu_cores, ms[0].capacity.cpu_cores);
        // 1200-s slots: job b arrives in slot 1 and lasts 10 slots, so
        // 3 × 10 slots after it ends at 31 slots, plus one.
        assert_eq!(inst.horizon_slots(), 32);
        // Job a lasts 3 slots: midpoint 6 slots, g2 = 4/6.
        assert_eq!(
            out.jobs[0].utility,
            Utility::Sigmoid {
                g1: 1.0,
                g2: 4.0 / 6.0,
                g3: 6.0
            }
        );
        assert!((out.jobs[0].utility.value(6) - 0.5).abs() < 1e-12);
        assert_eq!(opts.utility.to_string(), "sigmoid:2:4");
        assert_eq!(opts.horizon.to_string(), "cover:3");
    }

    #[test]
    fn defaults_keep_the_recipe() {
        let rows = vec![row("a", 0.0, 100.0, 1), row("b", 50.0, 100.0, 1)];
        let (inst, out) = replay_instance(&rows, &ReplayOptions::default()).unwrap();
        assert_eq!(inst.cluster().machines.len(), 8);
        assert!(
            inst.cluster()
                .machines
                .iter()
                .all(|m| m.hosts == Hosting::Both)
        );
        // 10-s slots: the last arrival is in slot 5, so 7 slots.
        assert_eq!(inst.horizon_slots(), 7);
        assert_eq!(out.jobs[0].utility, Utility::Constant { value: 1.0 });
        let fixed = ReplayOptions {
            horizon: ReplayHorizon::Slots(100),
            ..ReplayOptions::default()
        };
        assert_eq!(
            replay_instance(&rows, &fixed).unwrap().0.horizon_slots(),
            100
        );
    }

    #[test]
    fn bad_arguments_are_typed_errors() {
        let rows = vec![row("a", 0.0, 100.0, 1)];
        for opts in [
            ReplayOptions {
                utility: UtilityRecipe::Sigmoid {
                    multiple: f64::NAN,
                    steepness: 1.0,
                },
                ..ReplayOptions::default()
            },
            ReplayOptions {
                utility: UtilityRecipe::Sigmoid {
                    multiple: 1.0,
                    steepness: -1.0,
                },
                ..ReplayOptions::default()
            },
            ReplayOptions {
                horizon: ReplayHorizon::Cover { multiple: 0.0 },
                ..ReplayOptions::default()
            },
            ReplayOptions {
                horizon: ReplayHorizon::Slots(0),
                ..ReplayOptions::default()
            },
            ReplayOptions {
                ps_servers: u32::MAX,
                ..ReplayOptions::default()
            },
        ] {
            assert!(matches!(
                replay_instance(&rows, &opts),
                Err(crate::Error::Trace(TraceError::InvalidArgument { .. }))
            ));
        }
        let late = vec![row("a", 5000.0, 100.0, 1)];
        let fixed = ReplayOptions {
            horizon: ReplayHorizon::Slots(2),
            ..ReplayOptions::default()
        };
        assert!(replay_instance(&late, &fixed).is_err());
    }
}

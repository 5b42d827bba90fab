//! The recipes a replay builds its instances with: jobs of one
//! architecture from the trace's rows, or the SMD-style scheduler's layered
//! workload.

use dmlsched::algorithms::smd::workload::replay_workload;
use dmlsched::model::Instance;
use dmlsched::trace::{Arch, TraceJob};

use crate::CliError;

/// What the layered recipe builds, printed with the set-up.
pub(crate) const LAYERED_NOTE: &str = "layered recipe: each row becomes a layered parameter-server job of the SMD-style workload \
     (model type drawn with the seed, request and worker cap from its GPU count, work such that it \
     runs its trace duration alone at its best configuration), on 8-GPU machines, 60-s slots; \
     --horizon and --utility do not apply to it";

/// The recipe a policy runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recipe {
    /// Jobs of one architecture (`trace::replay_instance`).
    Jobs(Arch),
    /// Layered parameter-server jobs of the SMD-style workload
    /// (`algorithms::smd::workload::replay_workload`).
    Layered,
}

impl Recipe {
    /// The recipe policy `name` needs, `None` for a baseline that runs on
    /// jobs of either architecture.
    pub(crate) fn own(name: &str) -> Option<Recipe> {
        let needs = dmlsched::registry::needs(name);
        if needs.layered {
            Some(Recipe::Layered)
        } else {
            needs.arch.map(Recipe::Jobs)
        }
    }

    /// The name in messages and labels.
    pub(crate) fn name(self) -> &'static str {
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
pub(crate) fn layered_instance(
    rows: &[TraceJob],
    machines: u32,
    seed: u64,
) -> Result<Instance, CliError> {
    let usable =
        |r: &TraceJob| r.num_gpus > 0 && r.duration_s.is_some_and(|d| d.is_finite() && d > 0.0);
    let kept: Vec<TraceJob> = rows.iter().filter(|r| usable(r)).cloned().collect();
    if kept.len() < rows.len() {
        out!(
            "{} trace rows have no duration or no whole GPU and are skipped from the layered recipe; {} jobs remain",
            rows.len() - kept.len(),
            kept.len()
        );
    }
    if kept.is_empty() {
        return Err(CliError::Input(
            "layered recipe: no trace row has a duration and a whole GPU".into(),
        ));
    }
    replay_workload(&kept, machines, seed)
        .map(|w| w.instance)
        .map_err(|e| CliError::lib("layered recipe", &e))
}

//! `dmlsched solve`: one algorithm on an instance file.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};
use dmlsched::algorithms::Solved;
use dmlsched::algorithms::gadget::{Gadget, GadgetParams};
use dmlsched::algorithms::locality::{
    Locality, LocalityBatch, LocalityBatchParams, LocalityParams,
};
use dmlsched::algorithms::oasis::{Oasis, OasisParams};
use dmlsched::algorithms::sjf_bco::{RarFf, RarLs, RarRand, SjfBco, SjfBcoParams};
use dmlsched::certificate::Certificate;
use dmlsched::model::Instance;
use dmlsched::schedule::{Schedule, verify};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use serde::de::DeserializeOwned;

use crate::{CliError, read};

/// Schedules printed in full up to this many jobs (all are written with
/// --out).
const PRINT_JOBS: usize = 40;

#[derive(Debug, Args)]
pub(crate) struct SolveArgs {
    /// The algorithm.
    #[arg(long, short, value_enum)]
    algorithm: Algorithm,
    /// The instance (JSON, the crate's instance format: `Instance::from_json`).
    instance: PathBuf,
    /// The algorithm's parameters as JSON: an object with any fields of its
    /// parameter struct (`OasisParams`, `LocalityParams`,
    /// `LocalityBatchParams`, `GadgetParams`, `SjfBcoParams`, `SmdParams`); missing
    /// fields take their defaults, unknown fields are errors.
    #[arg(long, value_name = "PARAMS.json")]
    params: Option<PathBuf>,
    /// Seed of the algorithms that draw random numbers (locality,
    /// locality-batch, rar-rand).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Folder for schedule.json and certificate.json (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The algorithms that schedule an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Algorithm {
    /// OASiS (Bao, Peng, Wu, Li, INFOCOM 2018): online admission and
    /// worker/PS allocation of parameter-server jobs.
    Oasis,
    /// Locality-aware online placement of parameter-server jobs (LOCAL or
    /// DISTRIBUTED per slot).
    Locality,
    /// The locality model's offline batch: makespan or weighted completion.
    LocalityBatch,
    /// GADGET-style online ring-all-reduce scheduling with reserved
    /// bandwidth.
    Gadget,
    /// SJF-BCO (Yu, Ji, Rajan, Liu, MobiHoc 2022): ring-all-reduce jobs
    /// under contention, smallest first.
    SjfBco,
    /// Ring-all-reduce first fit (SJF-BCO's baseline).
    RarFf,
    /// Ring-all-reduce list scheduling (SJF-BCO's baseline).
    RarLs,
    /// Ring-all-reduce random placement (SJF-BCO's baseline).
    RarRand,
    /// SMD-style scheduling of layered parameter-server jobs (the crate's
    /// design after Yu et al., INFOCOM 2021): the simulator runs the
    /// scheduler over the instance's arrivals, re-solving at every arrival
    /// and completion; one certificate per epoch.
    Smd,
}

impl Algorithm {
    /// The name on the command line.
    fn name(self) -> String {
        self.to_possible_value()
            .map_or_else(String::new, |v| v.get_name().to_string())
    }
}

/// What every algorithm's run gives the command.
struct Outcome {
    schedule: Schedule,
    certificate: Certificate,
}

fn outcome<R>(s: Solved<R>) -> Outcome {
    Outcome {
        schedule: s.schedule,
        certificate: s.certificate,
    }
}

/// The parameters from `path` (defaults without one).
pub(crate) fn params<P: DeserializeOwned + Default>(path: Option<&Path>) -> Result<P, CliError> {
    let Some(path) = path else {
        return Ok(P::default());
    };
    let text = read(&path.to_path_buf())?;
    serde_json::from_str(&text).map_err(|e| CliError::input(path, e))
}

/// Runs `algorithm` on `inst`.
fn solve(args: &SolveArgs, inst: &Instance) -> Result<Outcome, CliError> {
    let p = args.params.as_deref();
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let name = args.algorithm.name();
    let run = |e: dmlsched::Error| CliError::lib(&name, &e);
    Ok(match args.algorithm {
        Algorithm::Oasis => outcome(
            Oasis::new(params::<OasisParams>(p)?)
                .solve(inst)
                .map_err(run)?,
        ),
        Algorithm::Locality => outcome(
            Locality::new(params::<LocalityParams>(p)?)
                .solve(inst, &mut rng)
                .map_err(run)?,
        ),
        Algorithm::LocalityBatch => outcome(
            LocalityBatch::new(params::<LocalityBatchParams>(p)?)
                .solve(inst, &mut rng)
                .map_err(run)?,
        ),
        Algorithm::Gadget => outcome(
            Gadget::new(params::<GadgetParams>(p)?)
                .solve(inst)
                .map_err(run)?,
        ),
        Algorithm::SjfBco => outcome(
            SjfBco::new(params::<SjfBcoParams>(p)?)
                .solve(inst)
                .map_err(run)?,
        ),
        Algorithm::RarFf => outcome(
            RarFf::new(params::<SjfBcoParams>(p)?)
                .solve(inst)
                .map_err(run)?,
        ),
        Algorithm::RarLs => outcome(
            RarLs::new(params::<SjfBcoParams>(p)?)
                .solve(inst)
                .map_err(run)?,
        ),
        Algorithm::RarRand => outcome(
            RarRand::new(params::<SjfBcoParams>(p)?)
                .solve(inst, &mut rng)
                .map_err(run)?,
        ),
        Algorithm::Smd => return Err(CliError::Run("smd runs through smd::run".into())),
    })
}

/// Writes `value` as pretty JSON to `dir/name`.
pub(crate) fn write_json(
    dir: &Path,
    name: &str,
    value: &impl serde::Serialize,
) -> Result<(), CliError> {
    let path = dir.join(name);
    let text =
        serde_json::to_string_pretty(value).map_err(|e| CliError::Run(format!("{name}: {e}")))?;
    std::fs::write(&path, text + "\n")
        .map_err(|e| CliError::Run(format!("{}: {e}", path.display())))
}

/// `dmlsched solve`.
pub(crate) fn run(args: &SolveArgs) -> Result<(), CliError> {
    let text = read(&args.instance)?;
    let inst = Instance::from_json(&text).map_err(|e| CliError::input(&args.instance, e))?;
    if args.algorithm == Algorithm::Smd {
        return crate::smd::run(
            &inst,
            &args.instance,
            args.params.as_deref(),
            args.out.as_deref(),
        );
    }
    let out = solve(args, &inst)?;
    verify(&inst, &out.schedule)
        .map_err(|v| CliError::Run(format!("the schedule fails the checker: {v}")))?;
    let admitted = out.schedule.jobs.iter().filter(|j| j.admitted).count();
    out!(
        "{} on {}: {} jobs, {admitted} admitted; the schedule passed schedule::verify\n",
        args.algorithm
            .to_possible_value()
            .map_or("?".into(), |v| v.get_name().to_string()),
        args.instance.display(),
        inst.jobs().len(),
    );
    out!("{}\n", out.certificate);
    if inst.jobs().len() <= PRINT_JOBS {
        out_raw!("{}", out.schedule);
    } else {
        out!(
            "schedule: {} jobs, not printed (see --out)",
            inst.jobs().len()
        );
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, e))?;
        write_json(dir, "schedule.json", &out.schedule)?;
        write_json(dir, "certificate.json", &out.certificate)?;
        out!(
            "\nwrote schedule.json and certificate.json to {}",
            dir.display()
        );
    }
    Ok(())
}

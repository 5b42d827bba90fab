//! `dmlsched solve`: one algorithm on an instance file.

use std::path::{Path, PathBuf};

use clap::Args;
use clap::builder::PossibleValuesParser;
use dmlsched::model::Instance;
use dmlsched::registry::{self, ALGORITHMS};
use dmlsched::schedule::verify;

use crate::{CliError, read};

/// Schedules printed in full up to this many jobs (all are written with
/// --out).
const PRINT_JOBS: usize = 40;

#[derive(Debug, Args)]
pub(crate) struct SolveArgs {
    /// The algorithm (`dmlsched::registry::ALGORITHMS`): oasis (Bao, Peng,
    /// Wu, Li, INFOCOM 2018), locality (locality-aware online placement of
    /// PS jobs) and locality-batch (its offline batch), gadget (GADGET-style
    /// online rings with reserved bandwidth), sjf-bco (Yu, Ji, Rajan, Liu,
    /// MobiHoc 2022) and its baselines rar-ff, rar-ls and rar-rand, smd
    /// (SMD-style scheduling of layered PS jobs over the instance's
    /// arrivals, one certificate per epoch).
    #[arg(long, short, value_parser = PossibleValuesParser::new(ALGORITHMS), value_name = "ALGORITHM")]
    algorithm: String,
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

/// The text of the parameters file `path`, if any.
pub(crate) fn params_text(path: Option<&Path>) -> Result<Option<String>, CliError> {
    path.map(|p| read(&p.to_path_buf())).transpose()
}

/// A library error of `name` run with the parameters file `path`: a
/// parameters file that is not the algorithm's JSON is bad input about the
/// file.
pub(crate) fn lib_error(name: &str, path: Option<&Path>, e: &dmlsched::Error) -> CliError {
    match (e, path) {
        (dmlsched::Error::Json(j), Some(path)) => CliError::input(path, j),
        _ => CliError::lib(name, e),
    }
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
    let name = args.algorithm.as_str();
    let params = params_text(args.params.as_deref())?;
    let out = registry::solve(name, &inst, params.as_deref(), args.seed)
        .map_err(|e| lib_error(name, args.params.as_deref(), &e))?;
    verify(&inst, &out.schedule)
        .map_err(|v| CliError::Run(format!("the schedule fails the checker: {v}")))?;
    let admitted = out.schedule.jobs.iter().filter(|j| j.admitted).count();
    let headline = out
        .headline
        .clone()
        .unwrap_or_else(|| format!("{} jobs, {admitted} admitted", inst.jobs().len()));
    out!(
        "{name} on {}: {headline}; the schedule passed schedule::verify\n",
        args.instance.display(),
    );
    out!("{}\n", out.certificate);
    for note in &out.notes {
        out!("{note}");
    }
    if !out.notes.is_empty() {
        out!("");
    }
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
        let mut names = vec!["schedule.json", "certificate.json"];
        for (file, value) in &out.files {
            write_json(dir, file, value)?;
            names.push(file);
        }
        let (last, rest) = names.split_last().unwrap_or((&"", &[]));
        out!(
            "\nwrote {} and {last} to {}",
            rest.join(", "),
            dir.display()
        );
    }
    Ok(())
}

//! `dmlsched solve --algorithm smd`: the SMD-style scheduler over an
//! instance's arrivals, one certificate per epoch.

use std::path::Path;

use dmlsched::algorithms::smd::{SmdParams, solve_slotted};
use dmlsched::model::Instance;

use crate::CliError;
use crate::solve::{params, write_json};

/// Median of `v` (sorted in place); NaN when empty.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Runs the scheduler over `inst`'s arrivals as a slotted schedule stopped
/// at the horizon ([`solve_slotted`]: jobs checked up front, the schedule
/// verified and every epoch's certificate checked), prints a summary with
/// the completed and unfinished jobs and, with `out`, writes
/// `schedule.json` and `epochs.json`.
pub(crate) fn run(
    inst: &Instance,
    file: &Path,
    params_file: Option<&Path>,
    out: Option<&Path>,
) -> Result<(), CliError> {
    let run = solve_slotted(inst, &params::<SmdParams>(params_file)?)
        .map_err(|e| CliError::lib("smd", &e))?;
    let (result, schedule, reports) = (&run.result, &run.schedule, &run.reports);
    let s = result.summary();
    out!(
        "smd on {}: {} jobs, {} completed, {} unfinished ({}); \
         the schedule passed schedule::verify\n",
        file.display(),
        inst.jobs().len(),
        run.completed(),
        run.unfinished(),
        if result.stalled { "stalled" } else { "horizon" }
    );
    if s.completed > 0 {
        out!(
            "over the {} completed: mean JCT {:.0} s, p95 {:.0} s, makespan {:.0} s; GPU use {:.3}",
            s.completed,
            s.avg_jct_s,
            s.p95_jct_s,
            s.makespan_s,
            s.gpu_utilization
        );
    } else {
        out!("no job completed; GPU use {:.3}", s.gpu_utilization);
    }
    let mut ratios: Vec<f64> = reports
        .iter()
        .map(|r| r.certificate.achieved_ratio())
        .filter(|x| x.is_finite())
        .collect();
    let valid = reports
        .iter()
        .filter(|r| r.certificate.guarantees.iter().all(|g| g.valid))
        .count();
    let max_ratio = ratios.iter().copied().fold(f64::NAN, f64::max);
    out!(
        "{} epochs, every certificate checked; objective/bound median {:.4}, max {:.4}; \
         guarantees valid in {valid} of {} epochs; at most {} fractional groups (d = {})",
        reports.len(),
        median(&mut ratios),
        max_ratio,
        reports.len(),
        reports
            .iter()
            .map(|r| r.fractional_groups)
            .max()
            .unwrap_or(0),
        reports.iter().map(|r| r.capacity_rows).max().unwrap_or(0),
    );
    // The epoch farthest from its bound (the largest program on ties).
    let hardest = reports.iter().enumerate().max_by(|(_, a), (_, b)| {
        let key = |r: &dmlsched::algorithms::smd::SmdEpochReport| {
            let ratio = r.certificate.achieved_ratio();
            (if ratio.is_finite() { ratio } else { 0.0 }, r.lp_columns)
        };
        let (ka, kb) = (key(a), key(b));
        ka.0.total_cmp(&kb.0).then(ka.1.cmp(&kb.1))
    });
    if let Some((k, r)) = hardest {
        out!(
            "\nthe certificate of epoch {k} (farthest from its bound, {} LP columns):\n{}",
            r.lp_columns,
            r.certificate
        );
    }
    if let Some(dir) = out {
        std::fs::create_dir_all(dir).map_err(|e| CliError::input(dir, e))?;
        write_json(dir, "schedule.json", schedule)?;
        let epochs: Vec<_> = reports
            .iter()
            .map(|r| {
                serde_json::json!({
                    "mode": r.mode,
                    "fractional_groups": r.fractional_groups,
                    "capacity_rows": r.capacity_rows,
                    "plan_estimate_s": r.plan_estimate_s,
                    "lp_columns": r.lp_columns,
                    "downgraded": r.downgraded,
                    "certificate": r.certificate,
                })
            })
            .collect();
        write_json(dir, "epochs.json", &epochs)?;
        out!("\nwrote schedule.json and epochs.json to {}", dir.display());
    }
    Ok(())
}

//! `dmlsched solve --algorithm smd`: the SMD-style scheduler over an
//! instance's arrivals, one certificate per epoch.

use std::path::Path;

use dmlsched::algorithms::smd::{SmdParams, SmdScheduler};
use dmlsched::model::Instance;
use dmlsched::schedule::verify;
use dmlsched::sim::{Decisions, SimOptions, simulate};
use dmlsched::timing::ProgressMode;

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

/// Runs the scheduler in the simulator over `inst`'s arrivals (deciding at
/// slot boundaries), verifies the
/// schedule it produced, checks every epoch's certificate, prints a summary
/// and, with `out`, writes `schedule.json` and `epochs.json`.
pub(crate) fn run(
    inst: &Instance,
    file: &Path,
    params_file: Option<&Path>,
    out: Option<&Path>,
) -> Result<(), CliError> {
    let mut scheduler = SmdScheduler::new(params::<SmdParams>(params_file)?);
    // Decisions at slot boundaries with whole iterations per slot, so that
    // the run is exactly a slotted schedule the checker can verify.
    let options = SimOptions {
        decisions: Decisions::SlotBoundaries,
        progress: ProgressMode::Floor,
        ..SimOptions::default()
    };
    let result = simulate(inst, &mut scheduler, &options).map_err(|e| CliError::lib("smd", &e))?;
    let schedule = result.to_schedule(inst);
    verify(inst, &schedule)
        .map_err(|v| CliError::Run(format!("the schedule fails the checker: {v}")))?;
    let reports = scheduler.reports();
    for (k, r) in reports.iter().enumerate() {
        r.check(1e-9)
            .map_err(|e| CliError::Run(format!("epoch {k}: certificate check failed: {e}")))?;
    }
    let s = result.summary();
    out!(
        "smd on {}: {} jobs, {} completed; the schedule passed schedule::verify\n",
        file.display(),
        inst.jobs().len(),
        s.completed
    );
    out!(
        "mean JCT {:.0} s, p95 {:.0} s, makespan {:.0} s, GPU use {:.3}",
        s.avg_jct_s,
        s.p95_jct_s,
        s.makespan_s,
        s.gpu_utilization
    );
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
        write_json(dir, "schedule.json", &schedule)?;
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

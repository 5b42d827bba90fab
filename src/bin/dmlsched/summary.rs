//! The table of results `simulate` and `replay` print.

use dmlsched::model::Instance;
use dmlsched::model::units::Num;
use dmlsched::replay::scale_label;
use dmlsched::report::RunMeta;
use dmlsched::sim::{Fairness, RunSummary, SimResult, Unfinished};

/// Each job's solo run (the fairness metrics' reference), or none when
/// the instance is too large for it, with a note saying so.
pub(crate) fn solo_runs(inst: &Instance) -> Vec<Option<dmlsched::sim::Solo>> {
    dmlsched::replay::solo_runs(inst, &mut Printer)
}

/// Prints a library run's messages as they come.
pub(crate) struct Printer;

impl dmlsched::replay::ReplayObserver for Printer {
    fn message(&mut self, text: &str) {
        out!("{text}");
    }
}

/// A statistic cell: `-` when undefined (no job to take it over), in
/// exponent notation beyond 10¹⁵.
fn stat(x: f64, width: usize, decimals: usize) -> String {
    if x.is_nan() {
        format!("{:>width$}", "-")
    } else {
        let text = format!("{:.decimals$}", Num(x + 0.0));
        format!("{text:>width$}")
    }
}

/// Prints one row per run: the jobs' end states (done, rejected,
/// unfinished: they add up to the jobs), JCT and makespan over the jobs
/// done, the share of each resource held (GPU, CPU, NIC), utility,
/// preemptions and the resource that binds ([`ResourceUse::binding`](dmlsched::sim::ResourceUse::binding)); then a note for every run that left jobs unfinished.
///
/// `bound` is the policy's proven bound on the total utility, when its
/// certificate gives one: a `bound` column is shown when any run has one.
/// `fairness` gives the `max ρ` (finish-time fairness) and `Jain` columns.
pub(crate) fn print_table<'a>(
    runs: impl IntoIterator<
        Item = (
            &'a RunMeta,
            &'a SimResult,
            &'a Instance,
            Option<f64>,
            Option<Fairness>,
        ),
    >,
) {
    let runs: Vec<_> = runs.into_iter().collect();
    let bounds = runs.iter().any(|r| r.3.is_some());
    let bound_head = if bounds {
        format!(" {:>10}", "bound")
    } else {
        String::new()
    };
    out!(
        "{:<22} {:>5} {:>5} {:>6} {:>6} {:>6} {:>11} {:>11} {:>11} {:>5} {:>5} {:>5} {:>10}{bound_head} {:>7} {:>8} {:>5} {:<6}",
        "policy",
        "load",
        "seed",
        "done",
        "rej.",
        "unfin.",
        "mean JCT s",
        "p95 JCT s",
        "makespan s",
        "GPU",
        "CPU",
        "NIC",
        "utility",
        "preempt",
        "max ρ",
        "Jain",
        "binds"
    );
    let mut notes = Vec::new();
    for (meta, result, inst, bound, fairness) in runs {
        let s = result.summary();
        let u = result.resource_use(inst);
        let bound = match (bounds, bound) {
            (false, _) => String::new(),
            (true, Some(b)) => format!(" {}", stat(b, 10, 2)),
            (true, None) => format!(" {:>10}", "-"),
        };
        out!(
            "{:<22} {:>5} {:>5} {:>6} {:>6} {:>6} {} {} {} {:>5.2} {:>5.2} {:>5.2} {}{bound} {:>7} {} {} {:<6}",
            meta.policy,
            scale_label(meta.load_scale),
            meta.seed,
            s.completed,
            s.rejected,
            s.unfinished,
            stat(s.avg_jct_s, 11, 0),
            stat(s.p95_jct_s, 11, 0),
            stat(s.makespan_s, 11, 0),
            u.gpus,
            u.cpu_cores,
            u.nic,
            stat(s.total_utility, 10, 2),
            s.preemptions,
            stat(fairness.map_or(f64::NAN, |f| f.max_rho), 8, 2),
            stat(fairness.map_or(f64::NAN, |f| f.jain), 5, 2),
            u.binding().0
        );
        if let Some(note) = unfinished_note(meta, result, &s) {
            notes.push(note);
        }
    }
    out!(
        "(done + rej. + unfin. = jobs; mean JCT, p95 JCT and makespan: over the jobs done; \
         GPU, CPU, NIC: mean share of the cluster's capacity held over the run; binds: the \
         resource with the largest mean share, of GPU, CPU, memory and NIC; max ρ: the largest \
         finish-time fairness of a job done, its JCT over its time alone on a 1/n share of the \
         cluster with n jobs present at its arrival; Jain: Jain's index of the jobs' 1/ρ{})",
        if bounds {
            "; bound: the policy's proven upper bound on the utility of any schedule, \
             in its own model"
        } else {
            ""
        }
    );
    for note in notes {
        out!("{note}");
    }
}

/// The note under the table for a run that left jobs unfinished: whether
/// it stalled or stopped at the horizon, how many jobs for each reason,
/// and how many jobs its JCT statistics are over.
fn unfinished_note(meta: &RunMeta, result: &SimResult, s: &RunSummary) -> Option<String> {
    if s.unfinished == 0 && !s.stalled {
        return None;
    }
    let how = if s.stalled {
        format!("stalled at t = {:.0} s", Num(result.end_s))
    } else {
        format!("stopped at the horizon (t = {:.0} s)", Num(result.end_s))
    };
    let reasons: Vec<String> = Unfinished::ALL
        .iter()
        .filter(|&&r| s.unfinished_by.get(r) > 0)
        .map(|&r| format!("{} {}: {}", s.unfinished_by.get(r), r.label(), r.explain()))
        .collect();
    let over = match s.completed {
        0 => "no JCT statistics (no job done)".to_string(),
        1 => "its JCT statistics are over the 1 job done only".to_string(),
        n => format!("its JCT statistics are over the {n} jobs done only"),
    };
    Some(format!(
        "note: {} (load {}, seed {}) {how}: {} of {} jobs unfinished ({}); {over}",
        meta.policy,
        scale_label(meta.load_scale),
        meta.seed,
        s.unfinished,
        s.jobs,
        reasons.join("; "),
    ))
}

/// Prints, for every run that rejected jobs, how many for each reason the
/// policy gave (with one example of each reason's text).
pub(crate) fn print_rejections<'a>(runs: impl IntoIterator<Item = (&'a RunMeta, &'a SimResult)>) {
    for (meta, result) in runs {
        let rejected: Vec<_> = result.jobs.iter().filter(|j| j.rejected).collect();
        if rejected.is_empty() {
            continue;
        }
        let mut kinds: Vec<(&str, usize, String)> = Vec::new();
        for j in &rejected {
            let (kind, text) = match &j.rejection {
                Some(r) => (r.kind(), r.to_string()),
                None => ("no reason given", String::new()),
            };
            match kinds.iter_mut().find(|k| k.0 == kind) {
                Some(k) => k.1 += 1,
                None => kinds.push((kind, 1, text)),
            }
        }
        out!(
            "{} (load {}, seed {}): {} rejected",
            meta.policy,
            scale_label(meta.load_scale),
            meta.seed,
            rejected.len()
        );
        for (kind, n, example) in kinds {
            if example.is_empty() {
                out!("  {n:>6} {kind}");
            } else {
                out!("  {n:>6} {kind} (e.g. {example})");
            }
        }
    }
}

/// A 30-character progress bar, `[#####-----…]`, for `done` of `total`.
pub(crate) fn progress_bar(done: usize, total: usize) -> String {
    let width = 30;
    let filled = (width * done / total.max(1)).min(width);
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

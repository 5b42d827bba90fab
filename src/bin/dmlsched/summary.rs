//! The table of results `simulate` and `replay` print.

use dmlsched::model::Instance;
use dmlsched::sim::SimResult;
use dmlsched::sim::report::RunMeta;

/// Prints one row per run: completions, rejections, JCT, makespan, the
/// share of each resource held (GPU, CPU, NIC), utility and preemptions.
pub(crate) fn print_table<'a>(
    runs: impl IntoIterator<Item = (&'a RunMeta, &'a SimResult, &'a Instance)>,
) {
    out!(
        "{:<22} {:>5} {:>5} {:>6} {:>6} {:>11} {:>11} {:>11} {:>5} {:>5} {:>5} {:>10} {:>7}",
        "policy",
        "load",
        "seed",
        "done",
        "rej.",
        "mean JCT s",
        "p95 JCT s",
        "makespan s",
        "GPU",
        "CPU",
        "NIC",
        "utility",
        "preempt"
    );
    for (meta, result, inst) in runs {
        let s = result.summary();
        let u = result.resource_use(inst);
        out!(
            "{:<22} {:>5} {:>5} {:>6} {:>6} {:>11.0} {:>11.0} {:>11.0} {:>5.2} {:>5.2} {:>5.2} {:>10.2} {:>7}",
            meta.policy,
            meta.load_scale,
            meta.seed,
            s.completed,
            s.rejected,
            s.avg_jct_s,
            s.p95_jct_s,
            s.makespan_s,
            u.gpus,
            u.cpu_cores,
            u.nic,
            s.total_utility,
            s.preemptions
        );
    }
    out!("(GPU, CPU, NIC: mean share of the cluster's capacity held over the run)");
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
            meta.load_scale,
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

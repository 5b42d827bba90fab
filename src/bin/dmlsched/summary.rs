//! The table of results `simulate` and `replay` print.

use dmlsched::model::Instance;
use dmlsched::sim::SimResult;
use dmlsched::sim::report::RunMeta;

/// Prints one row per run: completions, rejections, JCT, makespan, the
/// share of each resource held (GPU, CPU, NIC), utility and preemptions.
pub(crate) fn print_table<'a>(
    runs: impl IntoIterator<Item = (&'a RunMeta, &'a SimResult, &'a Instance)>,
) {
    println!(
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
        println!(
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
    println!("(GPU, CPU, NIC: mean share of the cluster's capacity held over the run)");
}

//! OASiS's model plans every parameter-server trace row within the horizon
//! a replay gives it: moved here from `tests/trace_fidelity.rs` (which keeps
//! the simulator's side of the same rows) when the job and cluster models
//! became crate-private. The real traces come from the folder named by
//! `DMLSCHED_TRACES`; without it the test checks the synthetic rows only and
//! says so.

use std::path::PathBuf;

use super::error::OasisError;
use super::model::{OasisCluster, OasisJob};
use crate::model::{Cluster, Instance, Job, JobId};
use crate::trace::*;

/// The folder of real traces, or `None` (with a visible message) when
/// `DMLSCHED_TRACES` is not set.
fn traces() -> Option<PathBuf> {
    match std::env::var_os("DMLSCHED_TRACES") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            eprintln!("skipping: DMLSCHED_TRACES is not set");
            None
        }
    }
}

/// OASiS's model (machines hosting both roles) plans `job`, arriving at a
/// slot boundary, on the empty `cluster` within `⌈3·d/L⌉` slots of its
/// arrival — the room a replay's `cover:3` horizon leaves it even when it
/// arrives just after a boundary — so no trace job is "unschedulable:
/// horizon too short" on the empty cluster.
/// Returns `false` for a job beyond the size of OASiS's exact chunk
/// program.
fn assert_oasis_plans_within_cover(cluster: &Cluster, job: &Job, d: f64, slot: f64) -> bool {
    let slots = ((3.0 * d / slot) * (1.0 - 1e-12)).ceil().max(1.0) as u32;
    let inst = Instance::new(cluster.clone(), vec![job.clone()], slot, slots).unwrap();
    let model = OasisCluster::from_instance_with(&inst, true).unwrap();
    let oasis = match OasisJob::from_job(&inst, job) {
        Ok(o) => o,
        // Beyond the exact chunk program's size (a job of weeks, tens of
        // thousands of chunks over thousands of slots): a typed error for
        // `solve`, that job's rejection in the simulator and replays.
        Err(OasisError::JobTooLarge { .. }) => return false,
        Err(e) => panic!("a {d}-s job: {e}"),
    };
    if let Some(why) = oasis.unschedulable_why(&model) {
        panic!("a {d}-s job in {slots} slots of {slot} s: {why}");
    }
    true
}

/// Every row of `rows` as a parameter-server job (the PS recipe, 8-GPU
/// machines), arriving at 0, on `machines` 8-GPU machines: OASiS plans it
/// within a `cover:3` horizon (rows shorter than one mini-batch's
/// communication aside, as in the replay's check). Returns the rows and
/// those beyond the size of OASiS's chunk program.
fn assert_ps_rows_planned(rows: &[TraceJob], machines: u32) -> (usize, usize) {
    let opts = RecipeOptions::ps();
    let out = to_jobs(rows, &opts).unwrap();
    assert!(out.capped.is_empty());
    let cluster = gpu_cluster(machines * 8, 8).unwrap();
    let (n, mut beyond_oasis) = (out.jobs.len(), 0usize);
    for (k, (mut job, origin)) in out.jobs.into_iter().zip(&out.origins).enumerate() {
        job.id = JobId(0);
        job.arrival_s = 0.0;
        let d = rows[origin.trace_index].duration_s.unwrap();
        if !out.too_short.contains(&k)
            && !assert_oasis_plans_within_cover(&cluster, &job, d, opts.slot_length_s)
        {
            beyond_oasis += 1;
        }
    }
    (n, beyond_oasis)
}

#[test]
fn ps_recipe_rows_are_planned_within_a_replays_horizon() {
    let mut rows = Vec::new();
    for (i, d) in [0.01, 30.0, 1144.0, 86_400.0, 4_628_226.0]
        .into_iter()
        .enumerate()
    {
        for g in [1, 2, 3, 4, 8, 12, 16, 32] {
            let mut r = TraceJob::new(format!("{i}-{g}"), 0.0, g);
            r.duration_s = Some(d);
            rows.push(r);
        }
    }
    let (n, beyond) = assert_ps_rows_planned(&rows, 8);
    eprintln!("ps synthetic: {n} rows, {beyond} beyond OASiS's size");
    let Some(dir) = traces() else { return };
    for (name, jobs) in [
        (
            "philly",
            load_philly_pollux_csv(dir.join("philly.csv")).unwrap().jobs,
        ),
        (
            "itp",
            load_itp_csv(dir.join("itp-cluster02.csv")).unwrap().jobs,
        ),
        (
            "tiresias",
            load_tiresias_csv(dir.join("tiresias-60_job.csv"))
                .unwrap()
                .jobs,
        ),
        #[cfg(feature = "serde")]
        (
            "gavel",
            load_gavel_trace_with_rates(
                dir.join("gavel-msr-seed0-6214e9.trace"),
                &GavelThroughputs::load(dir.join(GAVEL_THROUGHPUTS_FILE)).unwrap(),
                &GavelConversion::default(),
            )
            .unwrap()
            .jobs,
        ),
    ] {
        // Every row that ran on a whole GPU.
        let mut rows = jobs;
        rows.retain(|r| r.num_gpus > 0 && r.duration_s.is_some_and(f64::is_finite));
        let machines = rows
            .iter()
            .map(|r| r.num_gpus.div_ceil(8))
            .max()
            .unwrap_or(1);
        let (n, beyond) = assert_ps_rows_planned(&rows, machines);
        eprintln!("ps {name}: {n} rows, {beyond} beyond OASiS's size");
    }
}

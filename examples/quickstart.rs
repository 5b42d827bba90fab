//! Quickstart: a small cluster, three parameter-server jobs, one placement
//! decision solved through the LP layer, checked by `schedule::verify`, and
//! reported with a `Certificate`.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! The placement program (one decision held for the first hours):
//!
//! ```text
//! minimise   Σ_j Σ_m price_m · (w_jm + p_jm)                 (machine rent per task)
//! subject to Σ_m w_jm ≥ W_j                    for every job   (covering: workers needed)
//!            4 · Σ_m p_jm ≥ Σ_m w_jm           for every job   (one PS per 4 workers)
//!            Σ_j d_j^r·w_jm + s_j^r·p_jm ≤ c_m^r  for every machine m and resource r (packing)
//!            w_jm, p_jm ∈ {0, 1, …} (only where machine m may host the task)
//! ```
//!
//! Its LP relaxation gives a lower bound on the optimum; the MIP gives the
//! integer placement and its own dual bound. The certificate sandwiches the
//! placement's cost between them.

use dmlsched::certificate::{
    Bound, BoundKind, Certificate, ConstraintClass, ExactInfo, ExactStatus, FeasibilityReport,
    RunInfo, Sense,
};
use dmlsched::lp::{self, ColumnKind, LinearProgram, LpStatus, SolveOptions};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::{JobSchedule, Schedule, Segment, Tasks, verify};

fn main() -> Result<(), dmlsched::Error> {
    // ---------------------------------------------------------------- model
    let gpu_box = |id, gpus, price| {
        (
            Machine::new(
                MachineId(id),
                Resources::new(gpus, 32.0, gb(256.0), gb(2000.0), gbps(25.0)),
                gbps(200.0),
            ),
            price,
        )
    };
    let ps_box = Machine::new(
        MachineId(3),
        Resources::new(0.0, 32.0, gb(128.0), 0.0, gbps(40.0)),
        gbps(100.0),
    )
    .hosting(Hosting::ParameterServers);
    let machines = [
        gpu_box(0, 8.0, 3.0),
        gpu_box(1, 4.0, 2.0),
        gpu_box(2, 4.0, 2.5),
        (ps_box, 1.0),
    ];
    let price: Vec<f64> = machines.iter().map(|(_, p)| *p).collect();
    let cluster = Cluster::new(machines.into_iter().map(|(m, _)| m).collect());

    let job = |id: u32, max_workers: u32, cpu: f64| {
        let ps = PsJob {
            epochs: 10,
            data_chunks: max_workers,
            minibatches_per_chunk: 200,
            minibatch_compute_s: 0.3,
            gradient_bytes: mb(100.0),
            worker: Resources::new(1.0, cpu, gb(24.0), 0.0, gbps(2.5)),
            ps: Resources::new(0.0, 4.0, gb(16.0), 0.0, gbps(5.0)),
            max_workers,
            max_ps: max_workers.div_ceil(2),
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        };
        Job::new(JobId(id), 0.0, Architecture::ParameterServer(ps)).with_utility(Utility::Sigmoid {
            g1: 10.0,
            g2: 0.5,
            g3: 6.0,
        })
    };
    let jobs = vec![job(0, 6, 4.0), job(1, 5, 6.0), job(2, 3, 8.0)];
    let needed = [6u32, 4, 3]; // workers each job needs now
    let instance = Instance::new(cluster, jobs, 3600.0, 24)?;
    println!(
        "instance: {} machines, {} jobs, {} slots of {} s",
        instance.cluster().machines.len(),
        instance.jobs().len(),
        instance.horizon_slots(),
        instance.slot_length_s()
    );

    // ------------------------------------------------------- the placement IP
    let machines = &instance.cluster().machines;
    let mut prog = LinearProgram::new(Sense::Minimise);
    // (job, machine, kind) -> column
    let mut cols: Vec<(usize, usize, TaskKind, usize)> = Vec::new();
    for (j, job) in instance.jobs().iter().enumerate() {
        for (m, machine) in machines.iter().enumerate() {
            for kind in [TaskKind::Worker, TaskKind::ParameterServer] {
                let Some(d) = job.task_demand(kind) else {
                    continue;
                };
                if !machine.can_host(kind, d) {
                    continue;
                }
                let cap = match kind {
                    TaskKind::Worker => job.max_workers(),
                    TaskKind::ParameterServer => job.max_ps(),
                };
                let c = prog.add_column(price[m], 0.0, f64::from(cap), ColumnKind::Integer);
                cols.push((j, m, kind, c));
            }
        }
    }
    for (j, &w) in needed.iter().enumerate() {
        let workers: Vec<(usize, f64)> = cols
            .iter()
            .filter(|c| c.0 == j && c.2 == TaskKind::Worker)
            .map(|c| (c.3, 1.0))
            .collect();
        prog.add_row(f64::from(w), f64::INFINITY, &workers);
        // 4·PS − workers ≥ 0, and the caps of the job model.
        let mut ratio = workers.iter().map(|&(c, _)| (c, -1.0)).collect::<Vec<_>>();
        ratio.extend(
            cols.iter()
                .filter(|c| c.0 == j && c.2 == TaskKind::ParameterServer)
                .map(|c| (c.3, 4.0)),
        );
        prog.add_row(0.0, f64::INFINITY, &ratio);
    }
    for (m, machine) in machines.iter().enumerate() {
        for (r, cap) in machine.capacity.iter() {
            let entries: Vec<(usize, f64)> = cols
                .iter()
                .filter(|c| c.1 == m)
                .filter_map(|&(j, _, kind, c)| {
                    let d = instance.jobs()[j].task_demand(kind)?.get(r);
                    (d > 0.0).then_some((c, d))
                })
                .collect();
            if !entries.is_empty() {
                prog.add_row(f64::NEG_INFINITY, cap, &entries);
            }
        }
    }
    println!(
        "placement program: {} columns, {} rows, {} non-zeros",
        prog.n_cols(),
        prog.n_rows(),
        prog.nnz()
    );

    let relaxed = lp::solve(&prog, &SolveOptions::default().with_relax_integrality(true))?;
    let exact = lp::solve(&prog, &SolveOptions::default().with_time_limit(10.0))?;
    if relaxed.status != LpStatus::Optimal {
        eprintln!("LP relaxation ended with {:?}", relaxed.status);
        std::process::exit(1);
    }
    let (Some(lp_value), Some(x), Some(objective)) =
        (relaxed.objective, exact.primal_point(), exact.objective)
    else {
        eprintln!("MIP ended with {:?} and no incumbent", exact.status);
        std::process::exit(1);
    };
    println!(
        "LP relaxation: {lp_value:.4} in {:.4} s; MIP: {objective:.4} ({:?}) in {:.4} s",
        relaxed.seconds, exact.status, exact.seconds
    );

    // ------------------------------------------------- schedule and checking
    let mut schedule = Schedule::default();
    for (j, job) in instance.jobs().iter().enumerate() {
        let mut placement: Vec<(MachineId, Tasks)> = Vec::new();
        for &(cj, m, kind, c) in &cols {
            let n = x[c].round() as u32;
            if cj != j || n == 0 {
                continue;
            }
            let id = machines[m].id;
            let entry = match placement.iter_mut().find(|(pm, _)| *pm == id) {
                Some(e) => e,
                None => {
                    placement.push((id, Tasks::default()));
                    placement.last_mut().expect("just pushed")
                }
            };
            match kind {
                TaskKind::Worker => entry.1.workers += n,
                TaskKind::ParameterServer => entry.1.ps += n,
            }
        }
        schedule.jobs.push(JobSchedule {
            job: job.id,
            admitted: true,
            segments: vec![Segment::new(0..4, placement)],
        });
    }
    print!("schedule (slots 0..4):\n{schedule}");
    verify(&instance, &schedule)?;
    println!("verify: ok");

    // A hand-built schedule that overloads machine 1 (4 GPUs) is caught.
    let overloaded = Schedule {
        jobs: vec![JobSchedule {
            job: JobId(0),
            admitted: true,
            segments: vec![Segment::new(
                0..2,
                vec![
                    (MachineId(1), Tasks::new(5, 0)),
                    (MachineId(3), Tasks::new(0, 2)),
                ],
            )],
        }],
    };
    match verify(&instance, &overloaded) {
        Err(v) => println!("verify on a hand-built overloaded schedule: {v}"),
        Ok(()) => unreachable!("machine 1 has 4 GPUs"),
    }

    // ------------------------------------------------------------ certificate
    let mut feasibility = FeasibilityReport::feasible();
    let activity = prog.row_activity(x)?;
    for (row, a) in activity.iter().enumerate() {
        let (lo, hi) = prog
            .row_bounds(row)
            .unwrap_or((f64::NEG_INFINITY, f64::INFINITY));
        let excess = (lo - a).max(a - hi).max(0.0);
        let class = if hi.is_finite() {
            ConstraintClass::Packing
        } else {
            ConstraintClass::Covering
        };
        feasibility.record(class, row, excess, if hi.is_finite() { hi } else { lo });
    }
    let mut run = RunInfo::new();
    run.lp_solves = 2;
    run.add_stage("lp_relaxation", relaxed.seconds);
    run.add_stage("mip", exact.seconds);
    let status = match exact.status {
        LpStatus::Optimal => ExactStatus::Optimal,
        ref other => ExactStatus::Limit {
            status: format!("{other:?}"),
        },
    };
    let certificate = Certificate::new(
        "quickstart::placement_mip",
        Sense::Minimise,
        objective,
        Bound::new(lp_value, BoundKind::LpPrimal),
    )
    .with_exact(ExactInfo {
        status,
        incumbent: Some(objective),
        dual_bound: exact.mip_dual_bound.unwrap_or(lp_value),
        rel_gap: exact.mip_gap.unwrap_or(0.0),
        seconds: exact.seconds,
        returned: true,
    })
    .with_feasibility(feasibility)
    .with_run(run);
    println!("\ncertificate:\n{certificate}");
    certificate.check(1e-6)?;
    println!(
        "LP-relaxation gap of the placement: {:.4} (objective / LP bound)",
        objective / lp_value
    );
    println!(
        "certificate check: ok (bound {:.4}, achieved ratio {:.4})",
        certificate.best_bound(),
        certificate.achieved_ratio()
    );
    Ok(())
}

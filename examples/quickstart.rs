//! Quickstart: a small cluster, three parameter-server jobs, one placement
//! decision formulated as a mixed packing–covering program, solved by the
//! `pcip` engine (LP relaxation, randomized rounding, repair), converted to a
//! `Schedule`, checked by `schedule::verify`, and reported with its
//! `Certificate`.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```
//!
//! The program (one placement held for the first four slots):
//!
//! ```text
//! minimise   Σ_j Σ_m price_m · (w_jm + p_jm)                    machine rent per task
//! subject to Σ_m speed_m · w_jm ≥ W_j          for every job      covering: throughput needed
//!            Σ_m p_jm ≥ ⌈W_j / 4⌉               for every job      covering: one PS per 4 units
//!            Σ_j d_j^r·w_jm + s_j^r·p_jm ≤ c_m^r for every machine m, resource r   packing
//!            w_jm ∈ {0, …, max_workers}, p_jm ∈ {0, …, max_ps}, only where m may host the task
//! ```

use dmlsched::certificate::Sense;
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::pcip::{PcBuilder, RoundingSolver, RowLabels};
use dmlsched::schedule::{JobSchedule, Schedule, Segment, Tasks, verify};

fn main() -> Result<(), dmlsched::Error> {
    // ---------------------------------------------------------------- model
    // Three GPU machines (speed: relative throughput of one worker) and one
    // PS-only machine without GPUs. SI units throughout.
    let gpu_box = |id, gpus| {
        Machine::new(
            MachineId(id),
            Resources::zero()
                .gpus(gpus)
                .cpu_cores(32.0)
                .memory(gb(256.0))
                .storage(gb(2000.0))
                .nic(gbps(25.0)),
            gbps(200.0),
        )
    };
    let ps_box = Machine::new(
        MachineId(3),
        Resources::zero()
            .cpu_cores(32.0)
            .memory(gb(128.0))
            .nic(gbps(40.0)),
        gbps(100.0),
    )
    .hosting(Hosting::ParameterServers);
    let cluster = Cluster::new(vec![
        gpu_box(0, 8.0),
        gpu_box(1, 4.0),
        gpu_box(2, 4.0),
        ps_box,
    ]);
    let price = [3.0, 2.0, 2.5, 1.0];
    let speed = [1.5, 1.0, 1.2, 0.0];

    let job = |id: u32, max_workers: u32, cpu: f64| {
        let ps = PsJob {
            epochs: 10,
            data_chunks: max_workers,
            minibatches_per_chunk: 200,
            minibatch_compute_s: 0.3,
            gradient_bytes: mb(100.0),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(cpu)
                .memory(gb(24.0))
                .nic(gbps(2.5)),
            ps: Resources::zero()
                .cpu_cores(4.0)
                .memory(gb(16.0))
                .nic(gbps(5.0)),
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
    let jobs = vec![job(0, 6, 4.0), job(1, 5, 6.0), job(2, 4, 8.0)];
    let throughput = [6.5_f64, 4.0, 3.5]; // W_j, in single-worker units
    let instance = Instance::new(cluster, jobs, 3600.0, 24)?;
    println!(
        "instance: {} machines, {} jobs, {} slots of {} s (validated)",
        instance.cluster().machines.len(),
        instance.jobs().len(),
        instance.horizon_slots(),
        instance.slot_length_s()
    );

    // ------------------------------------------------ packing–covering program
    let machines = &instance.cluster().machines;
    // Columns: (job index, machine index, task kind).
    let mut cols: Vec<(usize, usize, TaskKind)> = Vec::new();
    for (j, job) in instance.jobs().iter().enumerate() {
        for (m, machine) in machines.iter().enumerate() {
            for kind in [TaskKind::Worker, TaskKind::ParameterServer] {
                if job
                    .task_demand(kind)
                    .is_some_and(|d| machine.can_host(kind, d))
                {
                    cols.push((j, m, kind));
                }
            }
        }
    }
    let mut b = PcBuilder::new(Sense::Minimise, cols.len())
        .objective(cols.iter().map(|&(_, m, _)| price[m]).collect());
    for (c, &(j, _, kind)) in cols.iter().enumerate() {
        let job = &instance.jobs()[j];
        let cap = match kind {
            TaskKind::Worker => job.max_workers(),
            TaskKind::ParameterServer => job.max_ps(),
        };
        b = b.upper(c, Some(cap));
    }
    let mut labels = RowLabels::default();
    for (j, &w) in throughput.iter().enumerate() {
        let of = |kind| {
            cols.iter()
                .enumerate()
                .filter(move |(_, col)| col.0 == j && col.2 == kind)
        };
        let workers: Vec<(usize, f64)> = of(TaskKind::Worker)
            .map(|(c, col)| (c, speed[col.1]))
            .collect();
        b = b.covering_row(&workers, w);
        labels.covering.push(format!("job {j} throughput"));
        let ps: Vec<(usize, f64)> = of(TaskKind::ParameterServer)
            .map(|(c, _)| (c, 1.0))
            .collect();
        b = b.covering_row(&ps, (w / 4.0).ceil());
        labels.covering.push(format!("job {j} parameter servers"));
    }
    for (m, machine) in machines.iter().enumerate() {
        for (r, cap) in machine.capacity.iter() {
            let entries: Vec<(usize, f64)> = cols
                .iter()
                .enumerate()
                .filter(|(_, col)| col.1 == m)
                .filter_map(|(c, &(j, _, kind))| {
                    let d = instance.jobs()[j].task_demand(kind)?.get(r);
                    (d > 0.0).then_some((c, d))
                })
                .collect();
            if !entries.is_empty() {
                b = b.packing_row(&entries, cap);
                labels.packing.push(format!("machine {} {r}", machine.id.0));
            }
        }
    }
    let problem = b.labels(labels, Vec::new()).build()?;
    println!(
        "program: {} integer columns, {} packing rows, {} covering rows, {} non-zeros",
        problem.n_vars(),
        problem.n_rows(dmlsched::pcip::RowClass::Packing),
        problem.n_rows(dmlsched::pcip::RowClass::Covering),
        problem.nnz()
    );

    let solver = RoundingSolver {
        seed: 7,
        trials: 16,
        ..RoundingSolver::default()
    };
    let sol = solver.solve(&problem)?;
    println!(
        "LP relaxation {:.4}; best rounded and repaired point {:.4} ({:?}); {} trials",
        sol.lp.objective,
        sol.objective,
        sol.method,
        sol.trials.len()
    );

    // ------------------------------------------------- schedule and checking
    let mut schedule = Schedule::default();
    for (j, job) in instance.jobs().iter().enumerate() {
        let mut placement: Vec<(MachineId, Tasks)> = Vec::new();
        for (c, &(cj, m, kind)) in cols.iter().enumerate() {
            let n = sol.x[c] as u32;
            if cj != j || n == 0 {
                continue;
            }
            let id = machines[m].id;
            let i = match placement.iter().position(|(pm, _)| *pm == id) {
                Some(i) => i,
                None => {
                    placement.push((id, Tasks::default()));
                    placement.len() - 1
                }
            };
            match kind {
                TaskKind::Worker => placement[i].1.workers += n,
                TaskKind::ParameterServer => placement[i].1.ps += n,
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
    if let Err(v) = verify(&instance, &overloaded) {
        println!("verify on a hand-built overloaded schedule: {v}");
    }

    // ------------------------------------------------------------ certificate
    let certificate = &sol.certificate;
    println!("\ncertificate:\n{certificate}");
    certificate.check(1e-9)?;
    println!(
        "certificate check: ok (bound {:.4}, achieved ratio {:.4})",
        certificate.best_bound(),
        certificate.achieved_ratio()
    );
    Ok(())
}

//! Diagnosis of a real-trace replay: rebuilds the
//! instance `dmlsched replay` builds for a parameter-server window with its
//! defaults (8 GPUs per machine, as many PS-only machines as GPU machines,
//! horizon `cover:3`, `sigmoid:2:4` utilities, 1200-s slots, seed 0, load
//! scale 1), runs the named policies on it and writes, under OUT:
//!
//! - `jobs-<window>.csv`: every job's recipe numbers (GPUs, trace duration,
//!   worker/PS demands, `τ`, gradient, `E`, `N`, `M`, OASiS's `ω`, `ρ`, the
//!   chunks per slot one worker trains);
//! - `rejections-<window>.csv`: per rejected job and policy, the rejection,
//!   the recipe numbers and what the cluster held when it arrived (GPUs of
//!   the worker machines; CPU and NIC of the PS-only machines; the largest
//!   NIC left on one PS-only machine);
//! - `use-<window>.csv`: per policy, the mean share held of the worker
//!   machines' GPUs, CPU and NIC and of the PS-only machines' CPU, memory and
//!   NIC, over the run and over the time some job was waiting or running;
//! - `timeline-<window>.csv`: the same shares per slot, per policy.
//!
//! Run (no algorithm is changed; this only reads the library):
//!
//! ```text
//! cargo run --release --features cli --example real_trace_diagnosis -- \
//!     TRACE (START|-) JOBS OUT LABEL POLICY,POLICY,...
//! ```

use std::fmt::Write as _;
use std::path::PathBuf;

use dmlsched::baselines::BaselineParams;
use dmlsched::model::{Architecture, Hosting, Instance, Resources};
use dmlsched::sim::{SimOptions, SimResult, simulate};
use dmlsched::trace::{
    RecipeOptions, ReplayHorizon, ReplayOptions, UtilityRecipe, Window, WindowStart, load,
    replay_instance, select,
};

const GPUS: u32 = 64;
const PER_MACHINE: u32 = 8;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 6 {
        return Err("usage: TRACE (START|-) JOBS OUT LABEL POLICY,POLICY,...".into());
    }
    let trace = PathBuf::from(&args[0]);
    let start = (args[1] != "-").then(|| match args[1].parse::<f64>() {
        Ok(s) => WindowStart::Seconds(s),
        Err(_) => WindowStart::Date(args[1].clone()),
    });
    let jobs: usize = args[2].parse()?;
    let out = PathBuf::from(&args[3]);
    let label = &args[4];
    let policies: Vec<&str> = args[5].split(',').collect();
    std::fs::create_dir_all(&out)?;

    let rows = load(&trace, None)?;
    let window = Window {
        start,
        jobs: Some(jobs),
        ..Window::default()
    };
    let rows = select(&rows, &window)?;
    let (inst, recipe_out) = replay_instance(&rows, &{
        let mut built = ReplayOptions::default();
        built.gpus = GPUS.into();
        built.gpus_per_machine = PER_MACHINE;
        built.recipe = {
            let mut built = RecipeOptions::ps();
            built.seed = 0;
            built
        };
        built.ps_servers = GPUS / PER_MACHINE;
        built.horizon = ReplayHorizon::Cover { multiple: 3.0 };
        built.utility = UtilityRecipe::Sigmoid {
            multiple: 2.0,
            steepness: 4.0,
        };
        built
    })?;
    let slot = inst.slot_length_s();
    eprintln!(
        "{label}: {} jobs, horizon {} slots of {slot} s, {} machines",
        inst.jobs().len(),
        inst.horizon_slots(),
        inst.cluster().machines.len()
    );

    // The recipe's numbers per job.
    let mut jobs_csv = String::from(
        "job,gpus,duration_s,duration_slots,worker_cpu,worker_nic_gbps,ps_cpu,ps_nic_gbps,\
         tau_s,gradient_mb,epochs,chunks,minibatches_per_chunk,omega_slots,rho,chunks_per_worker_slot,\
         g3_slots\n",
    );
    let mut info = Vec::new();
    for (job, origin) in inst.jobs().iter().zip(&recipe_out.origins) {
        let Architecture::ParameterServer(p) = &job.architecture else {
            return Err("not a PS job".into());
        };
        let d = rows[origin.trace_index].duration_s.unwrap_or(0.0);
        let omega = (p.minibatch_compute_s + 2.0 * p.gradient_bytes / p.worker.nic_bps) / slot;
        let rho = f64::from(p.minibatches_per_chunk) * omega;
        let g3 = match job.utility {
            dmlsched::model::Utility::Sigmoid { g3, .. } => g3,
            _ => f64::NAN,
        };
        let line = format!(
            "{},{},{d},{:.4},{},{:.4},{},{:.4},{:.4},{:.2},{},{},{},{:.6},{:.6},{:.6},{g3:.4}",
            job.id.0,
            p.max_workers,
            d / slot,
            p.worker.cpu_cores,
            p.worker.nic_bps / 1.25e8,
            p.ps.cpu_cores,
            p.ps.nic_bps / 1.25e8,
            p.minibatch_compute_s,
            p.gradient_bytes / 1e6,
            p.epochs,
            p.data_chunks,
            p.minibatches_per_chunk,
            omega,
            rho,
            1.0 / rho,
        );
        writeln!(jobs_csv, "{line}")?;
        info.push(line);
    }
    std::fs::write(out.join(format!("jobs-{label}.csv")), jobs_csv)?;

    let mut rej = String::from(
        "policy,job,kind,reason,arrival_s,gpus,duration_s,ps_nic_gbps,worker_nic_gbps,rho,\
         held_worker_gpu_share,held_ps_cpu_share,held_ps_nic_share,max_ps_nic_left_gbps,\
         ps_machines_with_room_for_one_ps,window_slots_with_room_earlier_jobs,first_slot_with_room,horizon_end_s\n",
    );
    let mut use_csv = String::from(
        "policy,completed,rejected,unfinished,utility,worker_gpu,worker_cpu,worker_nic,ps_cpu,ps_mem,ps_nic,\
         busy_worker_gpu,busy_ps_nic,busy_s\n",
    );
    let mut timeline = String::from("policy,slot,worker_gpu,worker_nic,ps_cpu,ps_nic\n");
    for name in &policies {
        let mut policy =
            dmlsched::registry::policy(name, &inst, None, 0, &BaselineParams::default())?;
        let t0 = std::time::Instant::now();
        let result = simulate(&inst, policy.as_mut(), &SimOptions::default())?;
        eprintln!("{label} {name}: {:.1} s", t0.elapsed().as_secs_f64());
        let summary = result.summary();
        let shares = Shares::new(&inst, &result);
        let (wg, wc, wn, pc, pm, pn) = shares.mean(result.start_s, result.end_s);
        // "Busy": some job has arrived and not yet finished or been rejected.
        let busy = busy_intervals(&result);
        let busy_s: f64 = busy.iter().map(|(a, b)| b - a).sum();
        let (mut bg, mut bn) = (0.0, 0.0);
        for (a, b) in &busy {
            let m = shares.mean(*a, *b);
            bg += m.0 * (b - a);
            bn += m.5 * (b - a);
        }
        writeln!(
            use_csv,
            "{name},{},{},{},{:.4},{wg:.4},{wc:.4},{wn:.4},{pc:.4},{pm:.4},{pn:.4},{:.4},{:.4},{busy_s:.0}",
            summary.completed,
            summary.rejected,
            summary.unfinished,
            summary.total_utility,
            bg / busy_s.max(1e-9),
            bn / busy_s.max(1e-9),
        )?;
        let slots = ((result.end_s - result.start_s) / slot).ceil() as u64;
        for k in 0..slots {
            let a = result.start_s + k as f64 * slot;
            let m = shares.mean(a, (a + slot).min(result.end_s));
            writeln!(
                timeline,
                "{name},{k},{:.4},{:.4},{:.4},{:.4}",
                m.0, m.2, m.3, m.5
            )?;
        }
        for j in result.jobs.iter().filter(|j| j.rejected) {
            let (kind, reason) = match &j.rejection {
                Some(r) => (r.kind().to_string(), r.to_string()),
                None => (String::new(), String::new()),
            };
            let t = j.arrival_s;
            // What is held from the first slot boundary the job could use.
            let at = shares.at((t / slot).ceil() * slot);
            let parts: Vec<&str> = info[j.job.0 as usize].split(',').collect();
            let ps_nic: f64 = parts[7].parse()?;
            let room_window =
                shares.room_slots(t, (t / slot).ceil() * slot, slot, 64, ps_nic * 1.25e8);
            let room = at
                .ps_nic_left
                .iter()
                .filter(|&&left| left + 1e-9 >= ps_nic * 1.25e8)
                .count();
            writeln!(
                rej,
                "{name},{},{kind},\"{}\",{t},{},{},{},{},{},{:.4},{:.4},{:.4},{:.3},{room},{},{},{}",
                j.job.0,
                reason.replace('"', "'"),
                parts[1],
                parts[2],
                parts[7],
                parts[5],
                parts[14],
                at.worker_gpu,
                at.ps_cpu,
                at.ps_nic,
                at.ps_nic_left.iter().cloned().fold(0.0, f64::max) / 1.25e8,
                room_window.0,
                room_window
                    .1
                    .map_or(String::from("none"), |k| k.to_string()),
                f64::from(inst.horizon_slots()) * slot,
            )?;
        }
    }
    std::fs::write(out.join(format!("rejections-{label}.csv")), rej)?;
    std::fs::write(out.join(format!("use-{label}.csv")), use_csv)?;
    std::fs::write(out.join(format!("timeline-{label}.csv")), timeline)?;
    Ok(())
}

/// The intervals during which some job had arrived and not yet finished or
/// been rejected (merged).
fn busy_intervals(result: &SimResult) -> Vec<(f64, f64)> {
    let mut iv: Vec<(f64, f64)> = result
        .jobs
        .iter()
        .map(|j| {
            let end = j.finish_s.unwrap_or(if j.rejected {
                j.arrival_s
            } else {
                result.end_s
            });
            (j.arrival_s, end.max(j.arrival_s))
        })
        .filter(|(a, b)| b > a)
        .collect();
    iv.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (a, b) in iv {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

struct At {
    worker_gpu: f64,
    ps_cpu: f64,
    ps_nic: f64,
    ps_nic_left: Vec<f64>,
}

/// Per-allocation demands split by machine role.
struct Shares {
    /// (from, to, demand on worker machines, demand on PS-only machines,
    /// per PS-only machine NIC).
    pieces: Vec<(f64, f64, Resources, Resources, Vec<f64>)>,
    /// Arrival of each piece's job.
    arrivals: Vec<f64>,
    worker_cap: Resources,
    ps_cap: Resources,
    ps_machines: Vec<usize>,
    ps_nic_cap: Vec<f64>,
}

impl Shares {
    fn new(inst: &Instance, result: &SimResult) -> Shares {
        let machines = &inst.cluster().machines;
        let ps_machines: Vec<usize> = (0..machines.len())
            .filter(|&i| machines[i].hosts == Hosting::ParameterServers)
            .collect();
        let mut worker_cap = Resources::zero();
        let mut ps_cap = Resources::zero();
        for m in machines {
            if m.hosts == Hosting::ParameterServers {
                ps_cap = ps_cap.plus(&m.capacity);
            } else {
                worker_cap = worker_cap.plus(&m.capacity);
            }
        }
        let mut pieces = Vec::new();
        let mut arrivals = Vec::new();
        for a in &result.allocations {
            let Some(job) = inst.job(a.job) else { continue };
            arrivals.push(job.arrival_s);
            let spread = a.placement.iter().filter(|(_, t)| t.workers > 0).count();
            let (mut w, mut p) = (Resources::zero(), Resources::zero());
            let mut per = vec![0.0; ps_machines.len()];
            for (m, t) in a.placement.iter() {
                let d = job.demand_with_reservation(t.workers, t.ps, spread);
                let idx = m.0 as usize;
                if machines[idx].hosts == Hosting::ParameterServers {
                    p = p.plus(&d);
                    if let Some(k) = ps_machines.iter().position(|&i| i == idx) {
                        per[k] += d.nic_bps;
                    }
                } else {
                    w = w.plus(&d);
                }
            }
            pieces.push((a.from_s, a.to_s, w, p, per));
        }
        let ps_nic_cap = ps_machines
            .iter()
            .map(|&i| machines[i].capacity.nic_bps)
            .collect();
        Shares {
            pieces,
            arrivals,
            worker_cap,
            ps_cap,
            ps_machines,
            ps_nic_cap,
        }
    }

    /// Mean shares over [a, b]: worker GPU, CPU, NIC; PS-only CPU, memory,
    /// NIC.
    fn mean(&self, a: f64, b: f64) -> (f64, f64, f64, f64, f64, f64) {
        let span = b - a;
        if span <= 0.0 {
            return (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        }
        let (mut w, mut p) = (Resources::zero(), Resources::zero());
        for (from, to, dw, dp, _) in &self.pieces {
            let len = to.min(b) - from.max(a);
            if len > 0.0 {
                w = w.plus(&dw.scaled(len));
                p = p.plus(&dp.scaled(len));
            }
        }
        let s = |used: f64, cap: f64| if cap > 0.0 { used / (cap * span) } else { 0.0 };
        (
            s(w.gpus, self.worker_cap.gpus),
            s(w.cpu_cores, self.worker_cap.cpu_cores),
            s(w.nic_bps, self.worker_cap.nic_bps),
            s(p.cpu_cores, self.ps_cap.cpu_cores),
            s(p.memory_bytes, self.ps_cap.memory_bytes),
            s(p.nic_bps, self.ps_cap.nic_bps),
        )
    }

    /// The number of slots of `[t, t + slots·slot)`, and the first (0 for
    /// the slot starting at `t`), in which, counting only the allocations
    /// of jobs that arrived before `arrival`, some PS-only machine had
    /// `ps_nic` of NIC left and the worker machines at least one GPU.
    fn room_slots(
        &self,
        arrival: f64,
        t: f64,
        slot: f64,
        slots: u32,
        ps_nic: f64,
    ) -> (u32, Option<u32>) {
        let mut n = 0;
        let mut first = None;
        for k in 0..slots {
            let s = t + f64::from(k) * slot + 1e-6;
            let mut gpus = 0.0;
            let mut per = vec![0.0; self.ps_machines.len()];
            for ((from, to, dw, _, pm), a) in self.pieces.iter().zip(&self.arrivals) {
                if *a < arrival && *from <= s && s < *to {
                    gpus += dw.gpus;
                    for (k, v) in pm.iter().enumerate() {
                        per[k] += v;
                    }
                }
            }
            let ps_room = self
                .ps_nic_cap
                .iter()
                .zip(&per)
                .any(|(c, u)| c - u + 1e-6 >= ps_nic);
            if ps_room && self.worker_cap.gpus - gpus >= 1.0 - 1e-9 {
                n += 1;
                first.get_or_insert(k);
            }
        }
        (n, first)
    }

    /// What was held just after `t` (allocations with from ≤ t < to).
    fn at(&self, t: f64) -> At {
        let (mut w, mut p) = (Resources::zero(), Resources::zero());
        let mut per = vec![0.0; self.ps_machines.len()];
        for (from, to, dw, dp, pm) in &self.pieces {
            if *from <= t && t < *to {
                w = w.plus(dw);
                p = p.plus(dp);
                for (k, v) in pm.iter().enumerate() {
                    per[k] += v;
                }
            }
        }
        At {
            worker_gpu: w.gpus / self.worker_cap.gpus,
            ps_cpu: p.cpu_cores / self.ps_cap.cpu_cores.max(1e-9),
            ps_nic: p.nic_bps / self.ps_cap.nic_bps.max(1e-9),
            ps_nic_left: self
                .ps_nic_cap
                .iter()
                .zip(&per)
                .map(|(c, u)| c - u)
                .collect(),
        }
    }
}

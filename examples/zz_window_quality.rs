use dmlsched::algorithms::smd::{SmdParams, SmdScheduler, solve_slotted};
use dmlsched::experiments::smd::{SmdWorkloadOptions, generate};
use dmlsched::model::{Instance, JobId};
use dmlsched::sim::{SimOptions, SimResult, simulate};

fn grown(n: usize) -> Instance {
    let base = Instance::from_json(&std::fs::read_to_string("examples/data/instance_layered.json").unwrap()).unwrap();
    let spread = (0.75 * base.horizon_s()) as u64;
    let jobs = (0..n).map(|k| { let mut j = base.jobs()[k % base.jobs().len()].clone(); j.id = JobId(k as u32); j.arrival_s = (k as u64 * spread / n as u64) as f64; j }).collect();
    Instance::new(base.cluster().clone(), jobs, base.slot_length_s(), base.horizon_slots()).unwrap()
}
fn show(label: &str, r: &SimResult, end: f64) {
    let done: Vec<f64> = r.jobs.iter().filter_map(|j| j.jct_s).collect();
    let left = r.jobs.iter().filter(|j| j.finish_s.is_none()).count();
    let charged: f64 = r.jobs.iter().map(|j| j.jct_s.unwrap_or(end - j.arrival_s)).sum();
    println!("{label}: completed {} unfinished {left} mean JCT {:.0} s, mean time in system (unfinished to {end:.0} s) {:.0} s",
        done.len(), done.iter().sum::<f64>() / done.len().max(1) as f64, charged / r.jobs.len() as f64);
}
fn main() {
    let mode = std::env::args().nth(1).unwrap_or_default();
    for (name, w) in [("window none", None), ("window 32", Some(32))] {
        let params = SmdParams { window: w, ..SmdParams::default() };
        if mode == "grown" {
            for n in [100, 200, 400, 1000] {
                let inst = grown(n);
                let run = solve_slotted(&inst, &params).unwrap();
                show(&format!("{name} grown {n}"), &run.result, inst.horizon_s());
            }
        } else {
            for (jobs, load, machines) in [(200usize, 0.6, 16u32), (200, 1.2, 16), (400, 1.2, 8)] {
                let wl = generate(&SmdWorkloadOptions { jobs, load, machines, seed: 0 }).unwrap();
                let mut s = SmdScheduler::new(params);
                let r = simulate(&wl.instance, &mut s, &SimOptions::default()).unwrap();
                let maxcols = s.reports().iter().map(|x| x.lp_columns).max().unwrap_or(0);
                show(&format!("{name} experiment jobs {jobs} load {load} machines {machines} (max cols {maxcols})"), &r, r.jobs.iter().filter_map(|j| j.finish_s).fold(0.0, f64::max));
            }
        }
    }
}

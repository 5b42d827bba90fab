//! Quickstart: the locality-aware online scheduler on a small cluster.
//!
//! Four machines and four parameter-server jobs. In every slot a job runs
//! LOCAL (workers and one PS on one machine, gradients over the fast
//! intra-machine bandwidth, no NIC) or DISTRIBUTED (tasks anywhere, all
//! traffic over the NICs). One call schedules every job in arrival order;
//! the schedule is checked by both checkers and the certificate (total
//! utility, an upper bound on the optimum, the guarantee) is printed.
//!
//! ```sh
//! cargo run --release --example quickstart
//! ```

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{Locality, LocalityParams, verify_locality};
use dmlsched::model::units::{gb, gbps, mb};
use dmlsched::model::*;
use dmlsched::schedule::{Configuration, verify};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

fn main() -> Result<(), dmlsched::Error> {
    // Four machines [4 GPU, 32 vCPU, 128 GB, 10 Gbit/s NIC], 100 Gbit/s
    // between tasks on the same machine.
    let cap = Resources::zero()
        .gpus(4.0)
        .cpu_cores(32.0)
        .memory(gb(128.0))
        .nic(gbps(10.0));
    let machines = (0..4)
        .map(|h| Machine::new(MachineId(h), cap, gbps(100.0)))
        .collect();

    // A job: `epochs × chunks × minibatches` mini-batches of `tau` seconds of
    // compute each, a gradient of `grad_mb` MB pushed and pulled per
    // mini-batch, at most `chunks` workers; worker NIC 1 Gbit/s, PS 4.
    let job = |id, arrival_slot: f64, epochs, chunks, tau, grad_mb, utility| {
        let ps = PsJob {
            epochs,
            data_chunks: chunks,
            minibatches_per_chunk: 500,
            minibatch_compute_s: tau,
            gradient_bytes: mb(grad_mb),
            worker: Resources::zero()
                .gpus(1.0)
                .cpu_cores(4.0)
                .memory(gb(16.0))
                .nic(gbps(1.0)),
            ps: Resources::zero()
                .cpu_cores(2.0)
                .memory(gb(8.0))
                .nic(gbps(4.0)),
            max_workers: chunks,
            max_ps: chunks,
            ..PsJob::default()
        };
        Job::new(JobId(id), arrival_slot * 600.0, ps).with_utility(utility)
    };
    // Sigmoid utility g1 / (1 + exp(g2·(delay − g3))), delay in slots.
    let sig = |g1, g3| Utility::Sigmoid { g1, g2: 1.0, g3 };
    let jobs = vec![
        job(0, 0.0, 2, 4, 0.50, 550.0, sig(80.0, 2.0)), // big gradient: LOCAL pays
        job(1, 0.0, 3, 8, 0.45, 6.0, sig(150.0, 1.0)),  // wide, urgent
        job(2, 1.0, 4, 2, 0.57, 6.0, sig(20.0, 4.0)),   // compute-bound
        job(3, 2.0, 4, 6, 0.54, 250.0, sig(50.0, 4.0)),
    ];
    // 600-second slots, 16 of them.
    let instance = Instance::new(Cluster::new(machines), jobs, 600.0, 16)?;

    // Schedule every job in arrival order (LP rounding seeded by the RNG).
    let params = LocalityParams::default();
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let solved = Locality::new(params.clone())?.solve(&instance, &mut rng)?;

    // Per job: admitted or not, then per run of slots its configuration.
    for js in &solved.schedule.jobs {
        println!("{}: admitted {}", js.job, js.admitted);
        for seg in &js.segments {
            let tasks = seg.placement.iter();
            let what = match seg.config {
                Some(Configuration::Local { machine: h }) => {
                    let y = seg.placement.total().workers;
                    format!("LOCAL on machine {}, {y} workers + 1 PS", h.0)
                }
                _ => tasks.fold("DISTRIBUTED".into(), |s, (h, t)| {
                    format!("{s} | m{}: {} w + {} PS", h.0, t.workers, t.ps)
                }),
            };
            println!("  slots {}..{}: {what}", seg.slots.start, seg.slots.end);
        }
    }

    // Both checkers recompute capacities, rates and completions.
    verify(&instance, &solved.schedule)?;
    let check = verify_locality(&instance, &params, &solved.schedule)?;
    for j in &check.jobs {
        let (job, done) = (j.job, j.completion);
        println!("{job} completes in slot {done}, utility {:.2}", j.utility);
    }
    println!("\n{}", solved.certificate);
    Ok(())
}

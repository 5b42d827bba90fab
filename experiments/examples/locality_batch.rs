//! The offline batch variant of the locality-aware scheduler on one
//! instance of the locality workload generator with every job present in
//! the first slot: `T_lo`, `T_LP`, `T_hi` (and which list scheduler gave
//! it), `C_max`, the rounding per horizon, LP solves, runtime and the
//! certificate.
//!
//! ```text
//! cargo run --release -p dmlsched-experiments --example locality_batch -- [JOBS] [KAPPA] [SEED] [makespan|exact|weighted]
//! cargo run --release -p dmlsched-experiments --example locality_batch -- 10 10 1 makespan
//! ```

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::locality::{
    BatchObjective, InnerSolver, LocalityBatch, LocalityBatchParams,
};
use dmlsched_experiments::locality::{LocalityWorkload, generate_batch};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// Argument `k`, or `default` when absent; exit code 2 when it does not
/// parse.
fn arg<T: std::str::FromStr>(k: usize, default: T) -> T {
    match std::env::args().nth(k) {
        None => default,
        Some(s) => s.parse().unwrap_or_else(|_| {
            eprintln!(
                "error: argument {k} '{s}' is not valid\n\
                 usage: locality_batch [JOBS] [KAPPA] [SEED] [makespan|exact|weighted]"
            );
            std::process::exit(2)
        }),
    }
}

fn main() -> Result<(), dmlsched::Error> {
    let (jobs, kappa, seed) = (arg(1, 10usize), arg(2, 10.0f64), arg(3, 1u64));
    let mode: String = arg(4, "makespan".to_string());
    if !["makespan", "exact", "weighted"].contains(&mode.as_str()) {
        eprintln!("error: mode '{mode}': expected makespan, exact or weighted");
        std::process::exit(2);
    }
    let w = LocalityWorkload {
        jobs,
        intra_factor: kappa,
        ..LocalityWorkload::default()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let inst = generate_batch(&mut rng, &w)?;
    let mut params = LocalityBatchParams::default();
    params.intra_factor = Some(kappa);
    params.objective = match mode.as_str() {
        "weighted" => BatchObjective::WeightedCompletion,
        _ => BatchObjective::Makespan,
    };
    params.inner = match mode.as_str() {
        "exact" => InnerSolver::exact_mip(),
        _ => InnerSolver::lp_round(),
    };
    params.seed = Some(seed);
    let s = LocalityBatch::new(params)?.solve(&inst, &mut rng)?;
    let r = &s.report;
    println!(
        "I = {}, κ = {kappa}, seed {seed}, {mode}: T_lo = {}, T_LP = {}, T_hi = {} ({:?}; AlwaysLocal {:?}, AlwaysSpread {:?}), C_max = {}, exact {:?}",
        r.jobs.len(),
        r.t_lo,
        r.t_lp,
        r.t_hi,
        r.heuristic,
        r.local_makespan,
        r.spread_makespan,
        r.makespan,
        r.exact_makespan
    );
    for a in &r.attempts {
        println!(
            "  T = {}: LP {:?}, {} draws, success {:?}",
            a.slots, a.lp_objective, a.draws, a.success
        );
    }
    println!(
        "  source {:?}; Σ wt·C = {:.1} (proxy LP bound {:?}); {} LP and {} MIP solves; {:.2} s",
        r.source, r.weighted_completion, r.proxy_lp_bound, r.lp_solves, r.mip_solves, r.seconds
    );
    println!("{}", s.certificate);
    Ok(())
}

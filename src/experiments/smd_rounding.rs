//! Rounding quality of the SMD-style scheduler's epoch program on random
//! epochs of the layered workload (experiment E5): the rounded plan `J` against the LP
//! relaxation and the exact MIP, the fractional groups, and the additive
//! bound against the actual `J − LP`.

use rand::RngExt;

use crate::algorithms::smd::{
    EpochJob, ExactMode, Selection, SmdParams, build_problem, solve_mcmdk,
};
use crate::certificate::ExactStatus;

use crate::algorithms::smd::workload::{SmdWorkloadOptions, bad_option, generate, stream};

/// Options of [`run_e5`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct E5Options {
    /// Machines of 8 GPUs (default 16).
    pub machines: u32,
    /// Jobs per epoch (default 5, 10, 20, 30).
    pub sizes: Vec<usize>,
    /// Random epochs per size (default 10).
    pub instances: usize,
    /// Seed (default 0).
    pub seed: u64,
}

impl Default for E5Options {
    fn default() -> Self {
        E5Options {
            machines: 16,
            sizes: vec![5, 10, 20, 30],
            instances: 10,
            seed: 0,
        }
    }
}

/// One random epoch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct E5Row {
    /// Jobs (`n`).
    pub jobs: usize,
    /// Which epoch of its size.
    pub instance: usize,
    /// Capacity rows (`d`).
    pub rows: usize,
    /// The fraction of the cluster free at the epoch.
    pub free_share: f64,
    /// The LP relaxation's value.
    pub lp: f64,
    /// The rounded plan's cost `J` (after the improvement pass).
    pub objective: f64,
    /// The exact optimum (`None` if the MIP stopped at a limit).
    pub opt: Option<f64>,
    /// Fractional groups `|F|`.
    pub fractional: usize,
    /// The additive bound's right-hand side `LP + Σ_{i∈F}(ω_i − c_i^min)`.
    pub bound: f64,
}

/// Solves `opts.instances` random epochs per size: the jobs of a fresh
/// workload ([`generate`], all waiting, remaining work a uniform 5–100 %
/// of their total) on a uniform 25–100 % of the cluster's capacity, under
/// the joint program with the exact MIP.
///
/// ```
/// use dmlsched::experiments::smd_rounding::{E5Options, run_e5};
/// let mut options = E5Options::default();
/// options.machines = 2;
/// options.sizes = vec![4];
/// options.instances = 2;
/// options.seed = 0;
/// let rows = run_e5(&options)?;
/// for r in &rows {
///     assert!(r.fractional <= r.rows);
///     assert!(r.lp <= r.objective * (1.0 + 1e-9) && r.objective <= r.bound * (1.0 + 1e-9));
/// }
/// # Ok::<(), dmlsched::Error>(())
/// ```
///
/// # Errors
///
/// As [`generate`], and those of building and solving the epoch program
/// ([`SmdError`](crate::algorithms::smd::SmdError)); a size of 0 or above 30 is [`SmdError::InvalidOption`](crate::algorithms::smd::SmdError::InvalidOption).
pub fn run_e5(opts: &E5Options) -> crate::Result<Vec<E5Row>> {
    if let Some(&n) = opts.sizes.iter().find(|&&n| n == 0 || n > 30) {
        return Err(bad_option("sizes", &format!("{n} is not in 1..=30")));
    }
    let params = SmdParams {
        selection: Selection::Joint,
        exact: ExactMode::Always,
        ..SmdParams::default()
    };
    let mut rows = Vec::new();
    for (s, &n) in opts.sizes.iter().enumerate() {
        for k in 0..opts.instances {
            let seed = opts
                .seed
                .wrapping_mul(1_000_003)
                .wrapping_add((s * 10_007 + k) as u64);
            rows.push(one_epoch(opts.machines, n, k, seed, &params)?);
        }
    }
    Ok(rows)
}

fn one_epoch(
    machines: u32,
    n: usize,
    k: usize,
    seed: u64,
    params: &SmdParams,
) -> crate::Result<E5Row> {
    let w = generate(&SmdWorkloadOptions {
        machines,
        jobs: n,
        load: 1.0,
        seed,
    })?;
    let mut rng = stream(seed, 4);
    let inst = &w.instance;
    let jobs: Vec<EpochJob> = inst
        .jobs()
        .iter()
        .map(|j| {
            let share = rng.random_range(0.05..=1.0);
            EpochJob::waiting(j.id, (crate::sim::total_work(j) * share).ceil())
        })
        .collect();
    let free_share = rng.random_range(0.25..=1.0);
    let free = inst.cluster().total_capacity().scaled(free_share);
    let p = build_problem(inst, &jobs, &free, params)?;
    let s = solve_mcmdk(&p, &vec![false; n], false, params)?;
    let lp = s.lp.as_ref().map_or(f64::NAN, |l| l.value);
    let opt = s
        .exact
        .as_ref()
        .filter(|e| e.status == ExactStatus::Optimal)
        .and_then(|e| e.incumbent);
    Ok(E5Row {
        jobs: n,
        instance: k,
        rows: p.rows(),
        free_share,
        lp,
        objective: s.objective,
        opt,
        fractional: s.lp.as_ref().map_or(0, |l| l.fractional.len()),
        bound: s.guarantee_value.unwrap_or(f64::NAN),
    })
}

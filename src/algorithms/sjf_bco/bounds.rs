//! The closed-form lower bound on the makespan.

/// The optimum of the LP relaxation of the compact ring-all-reduce program
/// (per-GPU estimated busy time at most `θ`, each job on `G_j` GPUs, and the
/// valid row `θ ≥ ρ̂_j/u`), in closed form:
///
/// ```text
/// LB = max( max_j ρ̂_j/u ,  Σ_j G_j ρ̂_j / (u·N) )
/// ```
///
/// `jobs` lists `(G_j, ρ̂_j)`; `total_gpus` is `N`. Summing the per-GPU rows
/// gives `N·θ ≥ Σ_j G_j ρ̂_j/u`; spreading every job evenly
/// (`a_{j,g} = G_j/N ≤ 1`) attains the maximum. Without the valid row the
/// LP value is only the second term.
///
/// When `ρ̂_j/u` is at most job `j`'s true duration on every placement, LB is
/// a lower bound on the makespan of every schedule: every GPU is busy at
/// least its share and every job runs at least `ρ̂_j/u`. Returns 0 for no
/// jobs, and NaN for `total_gpus = 0` or a non-positive `u`.
///
/// ```
/// use dmlsched::algorithms::sjf_bco::lower_bound_closed_form;
/// // One server of 4 GPUs; jobs (G, d) = (2, 3), (1, 1), (2, 4); u = 1.
/// assert_eq!(lower_bound_closed_form(&[(2, 3.0), (1, 1.0), (2, 4.0)], 1.0, 4), 4.0);
/// // Two GPUs and five one-GPU jobs of 3, 3, 2, 2, 2 slots: (3+3+2+2+2)/2 = 6.
/// let five = [(1, 3.0), (1, 3.0), (1, 2.0), (1, 2.0), (1, 2.0)];
/// assert_eq!(lower_bound_closed_form(&five, 1.0, 2), 6.0);
/// ```
pub fn lower_bound_closed_form(jobs: &[(u32, f64)], u: f64, total_gpus: u64) -> f64 {
    if total_gpus == 0 || u.is_nan() || u <= 0.0 {
        return f64::NAN;
    }
    let longest = jobs.iter().map(|&(_, r)| r / u).fold(0.0, f64::max);
    let work: f64 = jobs.iter().map(|&(g, r)| f64::from(g) * r).sum();
    longest.max(work / (u * total_gpus as f64))
}

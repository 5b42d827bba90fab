//! The allocation policies of `dmlsched::allocate`: hand cases whose optima
//! are derived in the comments, property tests on random inputs (exact
//! feasibility, certificates, each objective re-evaluated from its formula,
//! comparisons with allocations built here), and robustness of the input's
//! checks (every bad input a typed error naming the job and field).
#![cfg(feature = "highs")]

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::allocate::{
    Allocation, AllocationError, AllocationInput, AllocationJob, AllocationPolicy, allocate,
};
use dmlsched::certificate::Sense;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

use AllocationPolicy::{
    FifoPerf, FinishTimeFairness, MaxMinFairness, MaxMinFairnessPerf, MaxSumThroughput,
    MaxThroughputPerCost, MinMakespan,
};

/// The policies solved as LPs (all but the FIFO ones).
const LP_POLICIES: [AllocationPolicy; 6] = [
    MaxMinFairness,
    MaxMinFairnessPerf,
    FinishTimeFairness,
    MaxSumThroughput,
    MaxThroughputPerCost,
    MinMakespan,
];

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

/// `|a − b| ≤ rel·max(|b|, 1e-300)`.
fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs().max(1e-300)
}

fn assert_close(what: &str, got: f64, want: f64, rel: f64) {
    assert!(
        close(got, want, rel),
        "{what}: got {got}, want {want} (relative error {:e})",
        (got - want).abs() / want.abs().max(1e-300)
    );
}

/// The allocation, failing the test with the error otherwise.
fn solve(policy: AllocationPolicy, input: &AllocationInput) -> Allocation {
    allocate(policy, input).unwrap_or_else(|e| panic!("{policy}: {e}"))
}

/// `X` of job `id` on type `t`.
fn x(a: &Allocation, id: u64, t: &str) -> f64 {
    a.fraction(id, t)
        .unwrap_or_else(|| panic!("no job {id} or type {t}"))
}

/// Job `id`'s effective throughput.
fn eff(a: &Allocation, id: u64) -> f64 {
    let i = a.job_ids.iter().position(|&j| j == id).unwrap();
    a.effective_throughput[i]
}

/// The `InvalidInput` error of `policy` on `input`, as `(what, message)`.
fn invalid(policy: AllocationPolicy, input: &AllocationInput) -> (String, String) {
    match allocate(policy, input) {
        Err(e @ AllocationError::InvalidInput { .. }) => {
            assert!(e.is_input(), "{e}");
            let msg = e.to_string();
            let AllocationError::InvalidInput { what, .. } = e else {
                unreachable!()
            };
            (what, msg)
        }
        Err(e) => panic!("{policy}: not InvalidInput: {e:?}"),
        Ok(a) => panic!("{policy}: accepted: {a:?}"),
    }
}

/// The input as dense arrays (jobs in input order, types by name), for
/// the tests' own evaluation of each policy's formula.
struct Dense {
    n: Vec<f64>,
    t: Vec<Vec<f64>>,
    s: Vec<f64>,
    w: Vec<f64>,
    r: Vec<f64>,
    e: Vec<f64>,
    price: Vec<f64>,
}

impl Dense {
    fn new(input: &AllocationInput) -> Dense {
        let types: Vec<&String> = input.gpu_types.keys().collect();
        Dense {
            n: input.gpu_types.values().map(|&v| f64::from(v)).collect(),
            t: input
                .jobs
                .iter()
                .map(|j| types.iter().map(|t| j.throughput[*t]).collect())
                .collect(),
            s: input
                .jobs
                .iter()
                .map(|j| f64::from(j.scale_factor))
                .collect(),
            w: input.jobs.iter().map(|j| j.weight).collect(),
            r: input
                .jobs
                .iter()
                .map(|j| j.steps_remaining.unwrap_or(0.0))
                .collect(),
            e: input
                .jobs
                .iter()
                .map(|j| j.elapsed_s.unwrap_or(0.0))
                .collect(),
            price: types
                .iter()
                .map(|t| input.prices.as_ref().map_or(1.0, |p| p[*t]))
                .collect(),
        }
    }

    fn m(&self) -> usize {
        self.t.len()
    }

    fn total(&self) -> f64 {
        self.n.iter().sum()
    }

    /// `t_i(X)`.
    fn tput(&self, i: usize, x: &[Vec<f64>]) -> f64 {
        self.t[i].iter().zip(&x[i]).map(|(a, b)| a * b).sum()
    }

    /// `p_i = Σ_j T_ij·n_j/N`.
    fn proportional_tput(&self, i: usize) -> f64 {
        let n = self.total();
        self.t[i]
            .iter()
            .zip(&self.n)
            .map(|(t, nj)| t * nj / n)
            .sum()
    }

    /// The isolated share `y_ij = (n_j/(m·s_i)) / max(1, N/(m·s_i))`.
    fn isolated(&self) -> Vec<Vec<f64>> {
        let m = self.m() as f64;
        (0..self.m())
            .map(|i| {
                let fair = self.total() / (m * self.s[i]);
                self.n
                    .iter()
                    .map(|nj| nj / (m * self.s[i]) / fair.max(1.0))
                    .collect()
            })
            .collect()
    }

    /// The proportional allocation `X_ij = n_j/N`, scaled by `min(1, N/S)`
    /// (`S = Σ_i s_i`) to fit: `X_ij = n_j/max(N, S)`.
    fn proportional(&self) -> Vec<Vec<f64>> {
        let total_scale: f64 = self.s.iter().sum();
        let d = self.total().max(total_scale);
        (0..self.m())
            .map(|_| self.n.iter().map(|nj| nj / d).collect())
            .collect()
    }

    /// A feasible allocation from raw values in `[0, 1]`: each row scaled
    /// to sum to at most 1, then each column to use at most `n_j` (with
    /// a 1e-12 margin against rounding).
    fn feasible_from(&self, raw: &[f64]) -> Vec<Vec<f64>> {
        let k = self.n.len();
        let mut x: Vec<Vec<f64>> = (0..self.m())
            .map(|i| {
                let row: Vec<f64> = (0..k).map(|j| raw[(i * k + j) % raw.len()]).collect();
                let sum: f64 = row.iter().sum();
                row.iter()
                    .map(|v| {
                        if sum > 1.0 {
                            v / sum * (1.0 - 1e-12)
                        } else {
                            *v
                        }
                    })
                    .collect()
            })
            .collect();
        for j in 0..k {
            let used: f64 = (0..self.m()).map(|i| self.s[i] * x[i][j]).sum();
            if used > self.n[j] {
                let f = self.n[j] / used * (1.0 - 1e-12);
                for row in &mut x {
                    row[j] *= f;
                }
            }
        }
        x
    }

    /// The policy's objective at `x`, evaluated from its formula.
    fn objective(&self, policy: AllocationPolicy, x: &[Vec<f64>]) -> f64 {
        let m = self.m();
        match policy {
            MaxMinFairness => (0..m)
                .map(|i| self.s[i] / self.w[i] * x[i].iter().sum::<f64>())
                .fold(f64::INFINITY, f64::min),
            MaxMinFairnessPerf => (0..m)
                .map(|i| self.s[i] / self.w[i] * self.tput(i, x) / self.proportional_tput(i))
                .fold(f64::INFINITY, f64::min),
            FinishTimeFairness => {
                let y = self.isolated();
                (0..m)
                    .map(|i| {
                        let iso = self.tput(i, &y);
                        (self.e[i] + self.r[i] / self.tput(i, x)) / (self.r[i] / iso)
                    })
                    .fold(0.0, f64::max)
            }
            MaxSumThroughput => (0..m).map(|i| self.tput(i, x)).sum(),
            MaxThroughputPerCost => (0..m)
                .map(|i| {
                    (0..self.n.len())
                        .map(|j| self.t[i][j] * x[i][j] / self.price[j])
                        .sum::<f64>()
                })
                .sum(),
            MinMakespan => (0..m)
                .filter(|&i| self.r[i] > 0.0)
                .map(|i| self.r[i] / self.tput(i, x))
                .fold(0.0, f64::max),
            other => panic!("{other} has no objective"),
        }
    }

    /// Whether job `i` has throughput 0 on every type with GPUs.
    fn cannot_run(&self, i: usize) -> bool {
        self.t[i]
            .iter()
            .zip(&self.n)
            .all(|(t, n)| *t == 0.0 || *n == 0.0)
    }
}

fn sense(policy: AllocationPolicy) -> Sense {
    match policy {
        FinishTimeFairness | MinMakespan => Sense::Minimise,
        _ => Sense::Maximise,
    }
}

/// `a` is at least as good as `b` for `policy`, within `rel` of `|b|`.
fn no_worse(policy: AllocationPolicy, a: f64, b: f64, rel: f64) -> bool {
    let slack = rel * b.abs();
    match sense(policy) {
        Sense::Minimise => a <= b + slack,
        Sense::Maximise => a >= b - slack,
    }
}

/// Gavel's constraints hold exactly, in floating point, with no tolerance:
/// every entry in `[0, 1]`, every row sum ≤ 1, every type's use
/// `Σ_i s_i·X_ij ≤ n_j`; and the rows and columns are the input's.
fn check_exactly_feasible(input: &AllocationInput, a: &Allocation) -> Result<(), String> {
    let types: Vec<&String> = input.gpu_types.keys().collect();
    let ids: Vec<u64> = input.jobs.iter().map(|j| j.id).collect();
    if a.types.iter().collect::<Vec<_>>() != types || a.job_ids != ids {
        return Err(format!(
            "rows {:?} / columns {:?} are not the input's",
            a.job_ids, a.types
        ));
    }
    if a.fractions.len() != ids.len() {
        return Err("one row per job".into());
    }
    for (job, row) in input.jobs.iter().zip(&a.fractions) {
        if row.len() != types.len() || !row.iter().all(|v| (0.0..=1.0).contains(v)) {
            return Err(format!("job {}: entries {row:?}", job.id));
        }
        let sum: f64 = row.iter().sum();
        if sum > 1.0 {
            return Err(format!("job {}: row sums to {sum:e} > 1", job.id));
        }
    }
    for (j, t) in types.iter().enumerate() {
        let used: f64 = input
            .jobs
            .iter()
            .zip(&a.fractions)
            .map(|(job, row)| f64::from(job.scale_factor) * row[j])
            .sum();
        let n = f64::from(input.gpu_types[*t]);
        if used > n {
            return Err(format!(
                "type {t}: uses {used:e} > {n} GPUs (by {:e})",
                used - n
            ));
        }
    }
    Ok(())
}

/// Certificate, bound side, objective and effective throughputs of an LP
/// policy's allocation.
fn check_certified(
    policy: AllocationPolicy,
    input: &AllocationInput,
    a: &Allocation,
) -> Result<(), String> {
    let d = Dense::new(input);
    let obj = a.objective.ok_or("no objective")?;
    let cert = a.certificate.as_ref().ok_or("no certificate")?;
    cert.check(1e-9).map_err(|e| format!("certificate: {e}"))?;
    if cert.sense != sense(policy) || cert.objective != obj {
        return Err(format!(
            "certificate says {:?} {} for objective {obj}",
            cert.sense, cert.objective
        ));
    }
    let bound = cert.relaxation_bound.value;
    // A bound on the optimum: on the far side of the objective.
    if !no_worse(policy, bound, obj, 1e-9) {
        return Err(format!("bound {bound} on the wrong side of {obj}"));
    }
    // ... and a tight one.
    // (The bound carries its own rounding margin, so an objective of 0 may
    // have a bound of about 1e-12.)
    let gap = (bound - obj).abs();
    if gap > 1e-6 * obj.abs() + 1e-9 {
        return Err(format!("bound {bound}, objective {obj}: gap {gap:e}"));
    }
    let formula = d.objective(policy, &a.fractions);
    if !close(obj, formula, 1e-12) && (obj - formula).abs() > 1e-300 {
        return Err(format!("objective {obj}, formula {formula}"));
    }
    for (i, &t) in a.effective_throughput.iter().enumerate() {
        let want = d.tput(i, &a.fractions);
        if !close(t, want, 1e-12) && (t - want).abs() > 1e-300 {
            return Err(format!("job {i}: effective throughput {t}"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Hand cases
// ---------------------------------------------------------------------------

/// One V100 and one K80; job 0 runs 4/1 steps/s on them, job 1 2/1.
fn two_by_two() -> AllocationInput {
    AllocationInput::new([("v100", 1), ("k80", 1)])
        .with_job(AllocationJob::new(0, [("v100", 4.0), ("k80", 1.0)]))
        .with_job(AllocationJob::new(1, [("v100", 2.0), ("k80", 1.0)]))
}

/// Max-sum throughput on [`two_by_two`]: the LP's feasible set is the
/// doubly sub-stochastic 2×2 matrices, whose vertices are the partial
/// assignments: {0→v100, 1→k80} = 4 + 1 = 5, {0→k80, 1→v100} = 1 + 2 = 3,
/// single jobs ≤ 4. The optimum 5 is unique.
#[test]
fn two_jobs_two_types_max_sum_throughput() {
    let input = two_by_two();
    let a = solve(MaxSumThroughput, &input);
    check_certified(MaxSumThroughput, &input, &a).unwrap();
    assert_close("objective", a.objective.unwrap(), 5.0, 1e-9);
    assert_close("X0 v100", x(&a, 0, "v100"), 1.0, 1e-9);
    assert_close("X1 k80", x(&a, 1, "k80"), 1.0, 1e-9);
    assert!(x(&a, 0, "k80") < 1e-9 && x(&a, 1, "v100") < 1e-9);
    assert_close("t0", eff(&a, 0), 4.0, 1e-9);
    assert_close("t1", eff(&a, 1), 1.0, 1e-9);
    // The certificate's bound is the LP's optimum.
    assert_close(
        "bound",
        a.certificate.unwrap().relaxation_bound.value,
        5.0,
        1e-9,
    );
}

/// Agnostic max-min fairness on [`two_by_two`]: each job's `Σ_j X_ij ≤ 1`,
/// and two GPUs for two jobs let both run all the time: optimum 1.
#[test]
fn two_jobs_two_types_max_min_fairness() {
    let input = two_by_two();
    let a = solve(MaxMinFairness, &input);
    check_certified(MaxMinFairness, &input, &a).unwrap();
    assert_close("objective", a.objective.unwrap(), 1.0, 1e-9);
    for row in &a.fractions {
        assert_close("row sum", row.iter().sum(), 1.0, 1e-9);
    }
}

/// Max-min fairness (perf) with job 0 at 4/1 on v100/k80 and job 1 at 1/2:
/// `p_0 = (4 + 1)/2 = 2.5`, `p_1 = (1 + 2)/2 = 1.5`. Job 1's throughput is
/// at most 2 (its row sums to ≤ 1, its best type is the K80), so the
/// optimum is ≤ 2/1.5 = 4/3; {0→v100, 1→k80} reaches it (job 0 at
/// 4/2.5 = 1.6). Any optimum has `t_1 = 2` and `t_0 ≥ (4/3)·2.5 = 10/3`.
/// The proportional allocation (`X = 1/2` everywhere) only reaches 1.
#[test]
fn two_jobs_two_types_max_min_fairness_perf() {
    let input = AllocationInput::new([("v100", 1), ("k80", 1)])
        .with_job(AllocationJob::new(0, [("v100", 4.0), ("k80", 1.0)]))
        .with_job(AllocationJob::new(1, [("v100", 1.0), ("k80", 2.0)]));
    let a = solve(MaxMinFairnessPerf, &input);
    check_certified(MaxMinFairnessPerf, &input, &a).unwrap();
    assert_close("objective", a.objective.unwrap(), 4.0 / 3.0, 1e-9);
    assert_close("t1", eff(&a, 1), 2.0, 1e-9);
    assert!(eff(&a, 0) >= 10.0 / 3.0 - 1e-9, "{a:?}");
    let d = Dense::new(&input);
    assert_close(
        "proportional",
        d.objective(MaxMinFairnessPerf, &d.proportional()),
        1.0,
        1e-12,
    );
}

/// Max-sum throughput and throughput per cost disagree. Job 0: 4/2 on
/// v100/k80, job 1: 2/1; prices 4 and 1. Sum: {0→v100, 1→k80} = 5 beats
/// {0→k80, 1→v100} = 4 (single jobs ≤ 4). Per cost (T/price: job 0 1/2,
/// job 1 0.5/1): {0→v100, 1→k80} = 2, {0→k80, 1→v100} = 2 + 0.5 = 2.5
/// (single jobs ≤ 2). Both optima unique.
#[test]
fn two_jobs_two_types_throughput_per_cost_against_sum() {
    let input = AllocationInput::new([("v100", 1), ("k80", 1)])
        .with_job(AllocationJob::new(0, [("v100", 4.0), ("k80", 2.0)]))
        .with_job(AllocationJob::new(1, [("v100", 2.0), ("k80", 1.0)]))
        .with_prices([("v100", 4.0), ("k80", 1.0)]);
    let sum = solve(MaxSumThroughput, &input);
    check_certified(MaxSumThroughput, &input, &sum).unwrap();
    assert_close("sum", sum.objective.unwrap(), 5.0, 1e-9);
    assert_close("sum X0 v100", x(&sum, 0, "v100"), 1.0, 1e-9);
    assert_close("sum X1 k80", x(&sum, 1, "k80"), 1.0, 1e-9);
    let cost = solve(MaxThroughputPerCost, &input);
    check_certified(MaxThroughputPerCost, &input, &cost).unwrap();
    assert_close("per cost", cost.objective.unwrap(), 2.5, 1e-9);
    assert_close("cost X0 k80", x(&cost, 0, "k80"), 1.0, 1e-9);
    assert_close("cost X1 v100", x(&cost, 1, "v100"), 1.0, 1e-9);
}

/// Min makespan with job 0 at 3/1 on v100/k80 and job 1 at 2/1, 3 steps
/// each: maximise `z = min(t_0, t_1)/3`. With both rows and columns full,
/// `X_0 = (a, 1−a)`, `X_1 = (1−a, a)`: `t_0 = 1 + 2a = t_1 = 2 − a` at
/// `a = 1/3`, both 5/3. Upper bound: `t_0/3 + 2t_1/3 = a + b/3 + 4c/3 +
/// 2d/3 ≤ (a + c) + (b + d)/3 + (c + d)/3 ≤ 5/3` (rows and columns ≤ 1),
/// so `min(t_0, t_1) ≤ 5/3`, with equality only at `t_0 = t_1 = 5/3`.
/// Makespan `3/(5/3) = 9/5`.
#[test]
fn two_jobs_two_types_min_makespan() {
    let input = AllocationInput::new([("v100", 1), ("k80", 1)])
        .with_job(AllocationJob::new(0, [("v100", 3.0), ("k80", 1.0)]).with_steps_remaining(3.0))
        .with_job(AllocationJob::new(1, [("v100", 2.0), ("k80", 1.0)]).with_steps_remaining(3.0));
    let a = solve(MinMakespan, &input);
    check_certified(MinMakespan, &input, &a).unwrap();
    assert_close("makespan", a.objective.unwrap(), 1.8, 1e-9);
    assert_close("t0", eff(&a, 0), 5.0 / 3.0, 1e-9);
    assert_close("t1", eff(&a, 1), 5.0 / 3.0, 1e-9);
    assert_close("X0 v100", x(&a, 0, "v100"), 1.0 / 3.0, 1e-9);
}

/// Min makespan on one type of 2 GPUs, three jobs at 1 step/s with 1, 2
/// and 3 steps left (and one with none, which does not count): makespan
/// `M` needs `X_i ≥ R_i/M ≤ 1` and `Σ_i X_i = 6/M ≤ 2`, so `M = 3` with
/// the unique `X = (1/3, 2/3, 1)`.
#[test]
fn min_makespan_one_type_by_hand() {
    let mut input = AllocationInput::new([("v100", 2)]);
    for (id, r) in [(0, 1.0), (1, 2.0), (2, 3.0), (3, 0.0)] {
        input = input.with_job(AllocationJob::new(id, [("v100", 1.0)]).with_steps_remaining(r));
    }
    let a = solve(MinMakespan, &input);
    check_certified(MinMakespan, &input, &a).unwrap();
    check_exactly_feasible(&input, &a).unwrap();
    assert_close("makespan", a.objective.unwrap(), 3.0, 1e-9);
    for (id, want) in [(0, 1.0 / 3.0), (1, 2.0 / 3.0), (2, 1.0)] {
        assert_close(&format!("X{id}"), x(&a, id, "v100"), want, 1e-9);
    }
    // Nothing left to run: makespan 0, all idle.
    let idle = AllocationInput::new([("v100", 2)])
        .with_job(AllocationJob::new(0, [("v100", 1.0)]).with_steps_remaining(0.0));
    let a = solve(MinMakespan, &idle);
    assert_eq!(a.objective, Some(0.0));
    assert_eq!(a.fractions, vec![vec![0.0]]);
    a.certificate.unwrap().check(0.0).unwrap();
}

/// Min makespan with a short fast job and a long slow one (job 0: 1 step
/// left at 1000/500 steps/s on v100/k80; job 1: `R` steps at 0.1/0.05).
/// Job 1 runs at most 0.1 steps/s, so the makespan is at least `10R`, and
/// job 1 alone on the V100 with job 0 on the K80 (done in 2 ms) reaches it:
/// `M* = 10R`. Regression: the LP's rows were divided by the largest
/// coefficient (1000), leaving job 1 a floor of `10⁻⁴/R/1000 ≤ 10⁻⁸`, within
/// the solver's tolerances; from `R = 10⁴` on every `X` came back 0 and the
/// makespan infinite (a certificate failing its own check).
#[test]
fn min_makespan_with_a_short_fast_job_and_a_long_slow_one() {
    for r in [1e3, 1e4, 1e5, 1e6, 1e7, 1e9] {
        let input = AllocationInput::new([("v100", 1), ("k80", 1)])
            .with_job(
                AllocationJob::new(0, [("v100", 1000.0), ("k80", 500.0)]).with_steps_remaining(1.0),
            )
            .with_job(
                AllocationJob::new(1, [("v100", 0.1), ("k80", 0.05)]).with_steps_remaining(r),
            );
        let a = solve(MinMakespan, &input);
        check_exactly_feasible(&input, &a).unwrap();
        check_certified(MinMakespan, &input, &a).unwrap_or_else(|e| panic!("R = {r:e}: {e}"));
        assert_close(&format!("R = {r:e}"), a.objective.unwrap(), 10.0 * r, 1e-6);
        assert!(eff(&a, 0) > 0.0, "R = {r:e}: {a:?}");
    }
}

/// Max-min fairness with weights `w` and `1/w` far apart, on
/// [`two_by_two`] (job 0 of weight `w`, job 1 of weight `1/w`): two GPUs for
/// two jobs, so both can run all the time and the optimum is the heavy
/// job's `1/(1/w) = w` (agnostic); max-min (perf)
/// gives the heavy job (job 1, 2/1 steps/s, `p_1 = 1.5`) the V100 for
/// `w·2/1.5`. Regression: divided by the largest coefficient, the heavy
/// job's floor fell within the solver's tolerances from `w = 10⁻⁴` on and
/// every GPU was left idle (objective 0).
#[test]
fn max_min_fairness_with_weights_far_apart() {
    for w in [1e-2, 1e-4, 1e-6] {
        let mut input = two_by_two();
        input.jobs[0].weight = w;
        input.jobs[1].weight = 1.0 / w;
        let a = solve(MaxMinFairness, &input);
        check_certified(MaxMinFairness, &input, &a).unwrap_or_else(|e| panic!("w = {w:e}: {e}"));
        assert_close(
            &format!("agnostic, w = {w:e}"),
            a.objective.unwrap(),
            w,
            1e-6,
        );
        let a = solve(MaxMinFairnessPerf, &input);
        check_certified(MaxMinFairnessPerf, &input, &a)
            .unwrap_or_else(|e| panic!("w = {w:e}: {e}"));
        assert_close(
            &format!("perf, w = {w:e}"),
            a.objective.unwrap(),
            w * 2.0 / 1.5,
            1e-6,
        );
        assert_close("heavy job on the V100", x(&a, 1, "v100"), 1.0, 1e-6);
    }
}

/// Rounding never over-commits a type. Finish-time fairness on one GPU
/// with 9 equal jobs keeps the isolated shares `y = 1/9` (optimal: `ρ* =
/// 1`), whose uses add up to `1.0000000000000002` in floating point; and
/// max-min fairness on 6 GPUs with the 8 jobs below (a case the property
/// test found) scaled its column to a use of `6.000000000000001`. Both are
/// exactly feasible now.
#[test]
fn rounding_never_overcommits_a_type() {
    let mut nine = AllocationInput::new([("v100", 1)]);
    for id in 0..9 {
        nine = nine.with_job(
            AllocationJob::new(id, [("v100", 2.0)])
                .with_steps_remaining(100.0)
                .with_elapsed_s(0.0),
        );
    }
    let a = solve(FinishTimeFairness, &nine);
    check_exactly_feasible(&nine, &a).unwrap();
    check_certified(FinishTimeFairness, &nine, &a).unwrap();
    assert_close("ρ", a.objective.unwrap(), 1.0, 1e-12);

    let mut eight = AllocationInput::new([("a100", 6)]);
    for (id, s, w) in [
        (100, 4, 1.7994534607116432),
        (121, 2, 1.2762276941729038),
        (103, 1, 1.7608042291099715),
        (124, 2, 2.6612957560463157),
        (106, 1, 1.59649330502041),
        (127, 1, 2.2347539340080234),
        (109, 1, 2.2043706199919577),
        (130, 1, 2.585884394546846),
    ] {
        eight = eight.with_job(
            AllocationJob::new(id, [("a100", 0.5)])
                .with_scale_factor(s)
                .with_weight(w),
        );
    }
    for p in [MaxMinFairness, MaxMinFairnessPerf, MaxSumThroughput] {
        let a = solve(p, &eight);
        check_exactly_feasible(&eight, &a).unwrap_or_else(|e| panic!("{p}: {e}"));
        check_certified(p, &eight, &a).unwrap();
    }
}

/// A job with throughput 0 on the K80 (job 0: 3/0 on v100/k80; job 1:
/// 2/1). Max-sum: {0→v100, 1→k80} = 4 beats {1→v100} = 2, unique.
/// Max-min (perf): `p_0 = p_1 = 1.5`; `t_0 = 3a` (a = job 0 on the V100),
/// `t_1 = 2c + d ≤ (c + d) + c ≤ 1 + (1 − a)`; `3a = 2 − a` at `a = 1/2`,
/// and `min(t_0, t_1) ≤ (t_0 + 3t_1)/4 ≤ (3(a + c) + 3(c + d))/4 ≤ 3/2`:
/// optimum `1.5/1.5 = 1`.
#[test]
fn a_job_with_zero_throughput_on_a_type() {
    let timed = |j: AllocationJob| j.with_steps_remaining(10.0).with_elapsed_s(0.0);
    let input = AllocationInput::new([("v100", 1), ("k80", 1)])
        .with_job(timed(AllocationJob::new(0, [("v100", 3.0), ("k80", 0.0)])))
        .with_job(timed(AllocationJob::new(1, [("v100", 2.0), ("k80", 1.0)])));
    let sum = solve(MaxSumThroughput, &input);
    check_certified(MaxSumThroughput, &input, &sum).unwrap();
    assert_close("sum", sum.objective.unwrap(), 4.0, 1e-9);
    assert_close("sum X0 v100", x(&sum, 0, "v100"), 1.0, 1e-9);
    assert_close("sum X1 k80", x(&sum, 1, "k80"), 1.0, 1e-9);
    let perf = solve(MaxMinFairnessPerf, &input);
    check_certified(MaxMinFairnessPerf, &input, &perf).unwrap();
    assert_close("perf", perf.objective.unwrap(), 1.0, 1e-9);
    assert_close("perf t0", eff(&perf, 0), 1.5, 1e-9);
    assert!(eff(&perf, 1) >= 1.5 - 1e-9);

    // A third job that runs nowhere: the policies that need every job to
    // run refuse it by id; the others give it nothing and keep their
    // optimum.
    let dead = input.clone().with_job(
        AllocationJob::new(7, [("v100", 0.0), ("k80", 0.0)])
            .with_steps_remaining(10.0)
            .with_elapsed_s(0.0),
    );
    for p in [MaxMinFairnessPerf, FinishTimeFairness, MinMakespan] {
        let (what, msg) = invalid(p, &dead);
        assert_eq!(what, "job 7: throughput", "{p}: {msg}");
    }
    let sum = solve(MaxSumThroughput, &dead);
    assert_close("sum with dead job", sum.objective.unwrap(), 4.0, 1e-9);
    assert_eq!(eff(&sum, 7), 0.0);
    // Agnostic max-min counts time, not throughput: three jobs share two
    // GPUs, 2/3 each.
    let mmf = solve(MaxMinFairness, &dead);
    check_certified(MaxMinFairness, &dead, &mmf).unwrap();
    assert_close("mmf with dead job", mmf.objective.unwrap(), 2.0 / 3.0, 1e-9);

    // Throughput only on a type without GPUs is running nowhere too.
    let empty_type = AllocationInput::new([("v100", 2), ("k80", 0)])
        .with_job(
            AllocationJob::new(1, [("v100", 1.0), ("k80", 0.0)])
                .with_steps_remaining(5.0)
                .with_elapsed_s(0.0),
        )
        .with_job(
            AllocationJob::new(4, [("v100", 0.0), ("k80", 9.0)])
                .with_steps_remaining(5.0)
                .with_elapsed_s(0.0),
        );
    for p in [MaxMinFairnessPerf, FinishTimeFairness, MinMakespan] {
        let (what, _) = invalid(p, &empty_type);
        assert_eq!(what, "job 4: throughput", "{p}");
    }
}

/// Weights, one type (so both max-min policies agree: `t_i/p_i = X_i`).
/// Two GPUs, jobs of weight 1 and 2: both run all the time; the weight-2
/// job's normalised share `X/w` is 1/2, half the other's, and is the
/// optimum. One GPU: `max min(X_0, X_1/2)` with `X_0 + X_1 ≤ 1` gives
/// `X = (1/3, 2/3)`, optimum 1/3: the weight-2 job gets twice the time.
#[test]
fn weights_scale_the_normalised_share() {
    for policy in [MaxMinFairness, MaxMinFairnessPerf] {
        let ample = AllocationInput::new([("v100", 2)])
            .with_job(AllocationJob::new(0, [("v100", 5.0)]))
            .with_job(AllocationJob::new(1, [("v100", 5.0)]).with_weight(2.0));
        let a = solve(policy, &ample);
        check_certified(policy, &ample, &a).unwrap();
        assert_close(&format!("{policy} ample"), a.objective.unwrap(), 0.5, 1e-9);
        assert_close("ample X1", x(&a, 1, "v100"), 1.0, 1e-9);

        let scarce = AllocationInput::new([("v100", 1)])
            .with_job(AllocationJob::new(0, [("v100", 5.0)]))
            .with_job(AllocationJob::new(1, [("v100", 5.0)]).with_weight(2.0));
        let a = solve(policy, &scarce);
        check_certified(policy, &scarce, &a).unwrap();
        assert_close(
            &format!("{policy} scarce"),
            a.objective.unwrap(),
            1.0 / 3.0,
            1e-9,
        );
        assert_close("scarce X0", x(&a, 0, "v100"), 1.0 / 3.0, 1e-9);
        assert_close("scarce X1", x(&a, 1, "v100"), 2.0 / 3.0, 1e-9);
    }
}

/// Scale factors on a type of 2 GPUs: job 0 uses 2 GPUs (10 steps/s), job
/// 1 one (4 steps/s); `2X_0 + X_1 ≤ 2`. Max-min: `2X_0 = X_1 = z`, `2z ≤ 2`
/// (and `X_1 ≤ 1`): `z = 1`, `X = (1/2, 1)`, unique. Max-sum: `10X_0 +
/// 4X_1` with `X_1 ≤ 2 − 2X_0`: `10X_0 + 4 min(1, 2 − 2X_0)` peaks at
/// `X_0 = 1` (10; `X_0 = 1/2` gives 9). A 2-GPU job on a 1-GPU type runs
/// at most half the time: max-min `2·(1/2) = 1`.
#[test]
fn scale_factors_count_gpus() {
    let input = AllocationInput::new([("v100", 2)])
        .with_job(AllocationJob::new(0, [("v100", 10.0)]).with_scale_factor(2))
        .with_job(AllocationJob::new(1, [("v100", 4.0)]));
    let a = solve(MaxMinFairness, &input);
    check_certified(MaxMinFairness, &input, &a).unwrap();
    assert_close("mmf", a.objective.unwrap(), 1.0, 1e-9);
    assert_close("mmf X0", x(&a, 0, "v100"), 0.5, 1e-9);
    assert_close("mmf X1", x(&a, 1, "v100"), 1.0, 1e-9);
    let a = solve(MaxSumThroughput, &input);
    check_certified(MaxSumThroughput, &input, &a).unwrap();
    assert_close("sum", a.objective.unwrap(), 10.0, 1e-9);
    assert_close("sum X0", x(&a, 0, "v100"), 1.0, 1e-9);
    assert!(x(&a, 1, "v100") < 1e-9);

    let small = AllocationInput::new([("v100", 1)])
        .with_job(AllocationJob::new(0, [("v100", 10.0)]).with_scale_factor(2));
    let a = solve(MaxMinFairness, &small);
    check_exactly_feasible(&small, &a).unwrap();
    assert_close("small mmf", a.objective.unwrap(), 1.0, 1e-9);
    assert_close("small X0", x(&a, 0, "v100"), 0.5, 1e-9);
    // FIFO needs the job's 2 GPUs free at once: it gets nothing.
    let f = solve(AllocationPolicy::Fifo, &small);
    assert_eq!(f.fractions, vec![vec![0.0]]);
}

/// Finish-time fairness on one V100, two jobs of 100 steps: job 0 at 2
/// steps/s (E = 0), job 1 at 1 (E = 50 s). `m = 2 > N = 1`, so `y = 1/2`:
/// `iso = (1, 1/2)`, `ρ_0 = 1/(2X_0)`, `ρ_1 = 50·0.5/100 + 0.5/X_1 = 1/4 +
/// 1/(2X_1)`. Both fall as their `X` grows, so the optimum has `X_0 + X_1
/// = 1` and `ρ_0 = ρ_1`: `x² − 5x + 2 = 0`, `X_0 = (5 − √17)/2`, `ρ* =
/// 1/(2X_0) = (5 + √17)/8 ≈ 1.1404`.
#[test]
fn finish_time_fairness_one_type_by_hand() {
    let input = AllocationInput::new([("v100", 1)])
        .with_job(
            AllocationJob::new(0, [("v100", 2.0)])
                .with_steps_remaining(100.0)
                .with_elapsed_s(0.0),
        )
        .with_job(
            AllocationJob::new(1, [("v100", 1.0)])
                .with_steps_remaining(100.0)
                .with_elapsed_s(50.0),
        );
    let rho = (5.0 + 17f64.sqrt()) / 8.0;
    let a = solve(FinishTimeFairness, &input);
    check_certified(FinishTimeFairness, &input, &a).unwrap();
    let b = a.bracket.unwrap();
    assert!(b.infeasible_below <= rho * (1.0 + 1e-12), "{b:?}, ρ* {rho}");
    assert!(b.feasible_at >= rho * (1.0 - 1e-12), "{b:?}, ρ* {rho}");
    assert_close("ρ", a.objective.unwrap(), rho, 1.1e-6);
    assert_close("X0", x(&a, 0, "v100"), (5.0 - 17f64.sqrt()) / 2.0, 1e-5);

    // Two equal jobs, nothing elapsed: the isolated share (1/2 each) is
    // optimal, `ρ* = 1` (any `ρ < 1` needs `X_0 + X_1 > 1`).
    let equal = AllocationInput::new([("v100", 1)])
        .with_job(
            AllocationJob::new(0, [("v100", 3.0)])
                .with_steps_remaining(60.0)
                .with_elapsed_s(0.0),
        )
        .with_job(
            AllocationJob::new(1, [("v100", 3.0)])
                .with_steps_remaining(600.0)
                .with_elapsed_s(0.0),
        );
    let a = solve(FinishTimeFairness, &equal);
    check_certified(FinishTimeFairness, &equal, &a).unwrap();
    check_exactly_feasible(&equal, &a).unwrap();
    assert_close("equal ρ", a.objective.unwrap(), 1.0, 1e-9);
    assert!(a.bracket.unwrap().infeasible_below <= 1.0);

    // More GPUs than jobs: `y = 1`, `ρ_i = E_i·T_i/R_i + 1/X_i`, optimum
    // `X = 1` and `ρ* = 1 + max_i E_i·T_i/R_i = 1 + 10·2/40 = 1.5`, known
    // before any LP.
    let ample = AllocationInput::new([("v100", 4)])
        .with_job(
            AllocationJob::new(0, [("v100", 2.0)])
                .with_steps_remaining(40.0)
                .with_elapsed_s(10.0),
        )
        .with_job(
            AllocationJob::new(1, [("v100", 1.0)])
                .with_steps_remaining(40.0)
                .with_elapsed_s(10.0),
        );
    let a = solve(FinishTimeFairness, &ample);
    check_certified(FinishTimeFairness, &ample, &a).unwrap();
    assert_close("ample ρ", a.objective.unwrap(), 1.5, 1e-12);
    assert_eq!(a.bracket.unwrap().steps, 0);
}

/// FIFO orders by id, not input order. Types by name: k80 (2 GPUs) before
/// v100 (1 GPU). Jobs (input order): id 5 (1 GPU, 1/4 on k80/v100), id 2
/// (2 GPUs, 1/3), id 7 (1 GPU, 0/5), id 1 (1 GPU, 1/2).
///
/// fifo, ids 1, 2, 5, 7, first type by name with room where it runs:
/// 1 → k80 (1 k80 left); 2 needs 2 GPUs: k80 has 1, v100 1 → nothing;
/// 5 → k80 (k80 full); 7 runs only on the v100 → v100.
///
/// fifo-perf, fastest type first: 1 → v100 (2 > 1; v100 full); 2 → v100
/// full, k80 has 2 → k80 (full); 5 → nothing; 7 → v100 full, k80 is 0 for
/// it → nothing.
#[test]
fn fifo_and_fifo_perf_follow_ids_while_capacity_lasts() {
    let input = AllocationInput::new([("v100", 1), ("k80", 2)])
        .with_job(AllocationJob::new(5, [("k80", 1.0), ("v100", 4.0)]))
        .with_job(AllocationJob::new(2, [("k80", 1.0), ("v100", 3.0)]).with_scale_factor(2))
        .with_job(AllocationJob::new(7, [("k80", 0.0), ("v100", 5.0)]))
        .with_job(AllocationJob::new(1, [("k80", 1.0), ("v100", 2.0)]));
    let fifo = solve(AllocationPolicy::Fifo, &input);
    assert_eq!(fifo.types, ["k80", "v100"]);
    assert_eq!(fifo.job_ids, [5, 2, 7, 1]);
    // Rows in input order: 5, 2, 7, 1.
    assert_eq!(
        fifo.fractions,
        vec![
            vec![1.0, 0.0],
            vec![0.0, 0.0],
            vec![0.0, 1.0],
            vec![1.0, 0.0]
        ]
    );
    assert_eq!(fifo.effective_throughput, [1.0, 0.0, 5.0, 1.0]);
    assert!(fifo.objective.is_none() && fifo.certificate.is_none() && fifo.bracket.is_none());
    check_exactly_feasible(&input, &fifo).unwrap();

    let perf = solve(FifoPerf, &input);
    assert_eq!(
        perf.fractions,
        vec![
            vec![0.0, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 0.0],
            vec![0.0, 1.0]
        ]
    );
    assert_eq!(perf.effective_throughput, [0.0, 1.0, 0.0, 2.0]);
    assert!(perf.objective.is_none() && perf.certificate.is_none());
    check_exactly_feasible(&input, &perf).unwrap();

    // fifo-perf breaks ties by name; fifo skips a type where the job's
    // throughput is 0 even when it has room.
    let tie = AllocationInput::new([("b", 1), ("a", 1), ("c", 1)])
        .with_job(AllocationJob::new(0, [("a", 0.0), ("b", 3.0), ("c", 3.0)]))
        .with_job(AllocationJob::new(1, [("a", 1.0), ("b", 3.0), ("c", 3.0)]));
    let perf = solve(FifoPerf, &tie);
    assert_eq!(
        perf.fractions,
        vec![vec![0.0, 1.0, 0.0], vec![0.0, 0.0, 1.0]]
    );
    let fifo = solve(AllocationPolicy::Fifo, &tie);
    assert_eq!(
        fifo.fractions,
        vec![vec![0.0, 1.0, 0.0], vec![1.0, 0.0, 0.0]]
    );
}

// ---------------------------------------------------------------------------
// Property tests
// ---------------------------------------------------------------------------

const TYPE_NAMES: [&str; 3] = ["a100", "k80", "v100"];

/// One drawn job: throughputs per type, scale factor, weight, steps,
/// elapsed seconds.
type RawJob = (Vec<f64>, u32, f64, f64, f64);

fn raw_job(k: usize) -> impl Strategy<Value = RawJob> {
    (
        prop::collection::vec(prop_oneof![1 => Just(0.0), 4 => 0.0f64..=50.0], k),
        prop::sample::select(vec![1u32, 2, 4]),
        0.5f64..=3.0,
        (3.0f64..=7.0).prop_map(|e| 10f64.powf(e)),
        0.0f64..=1e5,
    )
}

/// Random inputs: 1–3 types of 0–8 GPUs, 1–12 jobs (ids distinct, out of
/// order), throughputs in [0, 50] with some zeros, scale factors 1, 2, 4,
/// weights in [0.5, 3], steps in [1e3, 1e7], elapsed in [0, 1e5], prices in
/// [0.5, 4]. Unless `dead` (a quarter of the inputs), every job is made to
/// run somewhere (a positive throughput on a type with GPUs), so that most
/// inputs reach every policy; `dead` inputs keep what was drawn, which a
/// policy needing every job to run may refuse.
fn input() -> impl Strategy<Value = AllocationInput> {
    (1usize..=3)
        .prop_flat_map(|k| {
            (
                prop::collection::vec(0u32..=8, k),
                prop::collection::vec(raw_job(k), 1..=12),
                prop::collection::vec(0.5f64..=4.0, k),
                0u64..13,
                prop::bool::weighted(0.25),
                0.5f64..=50.0,
            )
        })
        .prop_map(|(mut counts, jobs, prices, rot, dead, rescue)| {
            let k = counts.len();
            if !dead && counts.iter().all(|&n| n == 0) {
                counts[0] = 1;
            }
            let mut input =
                AllocationInput::new(TYPE_NAMES[..k].iter().copied().zip(counts.clone()));
            for (i, (mut t, s, w, r, e)) in jobs.into_iter().enumerate() {
                if !dead && (0..k).all(|j| t[j] == 0.0 || counts[j] == 0) {
                    let j = (0..k).find(|&j| counts[j] > 0).unwrap();
                    t[j] = rescue;
                }
                // A permutation of 0..13 (7 is prime to 13), spread out.
                let id = ((i as u64 * 7 + rot) % 13) * 3 + 100;
                input = input.with_job(
                    AllocationJob::new(id, TYPE_NAMES[..k].iter().copied().zip(t))
                        .with_scale_factor(s)
                        .with_weight(w)
                        .with_steps_remaining(r)
                        .with_elapsed_s(e),
                );
            }
            input.with_prices(TYPE_NAMES[..k].iter().copied().zip(prices))
        })
}

/// Whether `policy` must refuse `input`, and the job it names: the first
/// job (input order) that runs nowhere, for the policies that need every
/// job to run (max-min fairness perf, finish-time fairness, min makespan).
fn expected_refusal(policy: AllocationPolicy, input: &AllocationInput) -> Option<u64> {
    if !matches!(
        policy,
        MaxMinFairnessPerf | FinishTimeFairness | MinMakespan
    ) {
        return None;
    }
    let d = Dense::new(input);
    (0..d.m())
        .find(|&i| d.cannot_run(i))
        .map(|i| input.jobs[i].id)
}

/// Every policy's answer on `input`: `Some` allocation, or `None` after
/// checking that the refusal is the expected `InvalidInput`.
fn answer(policy: AllocationPolicy, input: &AllocationInput) -> Option<Allocation> {
    let expected = expected_refusal(policy, input);
    match (allocate(policy, input), expected) {
        (Ok(a), None) => Some(a),
        (Err(AllocationError::InvalidInput { what, reason }), Some(id)) => {
            assert_eq!(what, format!("job {id}: throughput"), "{policy}: {reason}");
            None
        }
        (Ok(_), Some(id)) => panic!("{policy}: accepted job {id}, which runs nowhere"),
        (Err(e), _) => panic!("{policy}: {e:?} on {input:?}"),
    }
}

/// `cases` cases (or `PROPTEST_CASES` when set, for a deeper run), failures
/// recorded in `proptest-regressions/allocate.txt`.
fn config(cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(cases);
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(
            "proptest-regressions/allocate.txt",
        ))),
        ..ProptestConfig::default()
    }
}

/// fifo and fifo-perf as their docs say, written out again: jobs by id,
/// each on the first type (by name, or fastest first with ties by name)
/// where it runs and its scale factor fits the GPUs left.
fn reference_fifo(input: &AllocationInput, perf: bool) -> Vec<Vec<f64>> {
    let types: Vec<&String> = input.gpu_types.keys().collect();
    let mut free: Vec<u64> = input.gpu_types.values().map(|&n| u64::from(n)).collect();
    let mut x = vec![vec![0.0; types.len()]; input.jobs.len()];
    let mut order: Vec<usize> = (0..input.jobs.len()).collect();
    order.sort_by_key(|&i| input.jobs[i].id);
    for i in order {
        let job = &input.jobs[i];
        let mut candidates: Vec<usize> = (0..types.len())
            .filter(|&j| job.throughput[types[j]] > 0.0)
            .collect();
        if perf {
            candidates.sort_by(|&a, &b| {
                job.throughput[types[b]]
                    .partial_cmp(&job.throughput[types[a]])
                    .unwrap()
                    .then(a.cmp(&b))
            });
        }
        let s = u64::from(job.scale_factor);
        if let Some(j) = candidates.into_iter().find(|&j| free[j] >= s) {
            x[i][j] = 1.0;
            free[j] -= s;
        }
    }
    x
}

proptest! {
    #![proptest_config(config(32))]

    /// Every allocation of every policy meets Gavel's constraints exactly,
    /// with no tolerance; refusals are `InvalidInput` naming a job that
    /// runs nowhere, and only the policies that need every job to run
    /// refuse, exactly when some job runs nowhere.
    #[test]
    fn every_allocation_is_exactly_feasible(input in input()) {
        for policy in AllocationPolicy::ALL {
            if let Some(a) = answer(policy, &input) {
                prop_assert!(a.policy == policy);
                check_exactly_feasible(&input, &a)
                    .map_err(|e| TestCaseError::fail(format!("{policy}: {e}")))?;
            }
        }
    }

    /// Every LP policy's certificate checks at 1e-9; its bound is on the
    /// optimum's side of the objective (within 1e-9 relative) and within
    /// 1e-6 of it; the objective is the policy's formula at the returned
    /// fractions (within 1e-12), and so are the effective throughputs.
    #[test]
    fn certificates_check_and_objectives_match_their_formulas(input in input()) {
        for policy in LP_POLICIES {
            if let Some(a) = answer(policy, &input)
                && let Err(e) = check_certified(policy, &input, &a)
            {
                return Err(TestCaseError::fail(format!("{policy}: {e}")));
            }
        }
    }

    /// Max-min fairness (perf) reaches at least the proportional
    /// allocation's least normalised share, `X_ij = n_j/max(N, S)`, whose
    /// objective is `min(1, N/S)·min_i s_i/w_i`.
    #[test]
    fn max_min_fairness_perf_beats_the_proportional_allocation(input in input()) {
        let Some(a) = answer(MaxMinFairnessPerf, &input) else { return Ok(()) };
        let d = Dense::new(&input);
        let prop = d.proportional();
        let total_scale: f64 = d.s.iter().sum();
        let closed = (d.total() / total_scale).min(1.0)
            * (0..d.m()).map(|i| d.s[i] / d.w[i]).fold(f64::INFINITY, f64::min);
        let value = d.objective(MaxMinFairnessPerf, &prop);
        prop_assert!(close(value, closed, 1e-12), "proportional {value}, closed form {closed}");
        let obj = a.objective.unwrap();
        let bound = a.certificate.as_ref().unwrap().relaxation_bound.value;
        prop_assert!(obj >= value * (1.0 - 1e-9), "objective {obj} < proportional {value}");
        prop_assert!(bound >= value * (1.0 - 1e-9), "bound {bound} < proportional {value}");
    }

    /// Every LP policy's objective is at least as good (within 1e-6) as its
    /// formula at allocations built here, and its bound (within 1e-9) too:
    /// the proportional allocation, the isolated shares, fifo's and
    /// fifo-perf's, and two random feasible ones. For min makespan these
    /// are the makespans of allocations where every job got a share.
    #[test]
    fn lp_policies_beat_every_allocation_built_here(
        input in input(),
        raw_a in prop::collection::vec(0.0f64..=1.0, 36),
        raw_b in prop::collection::vec(prop_oneof![Just(0.0), 0.0f64..=1.0], 36),
    ) {
        let d = Dense::new(&input);
        let fifo = allocate(AllocationPolicy::Fifo, &input).unwrap().fractions;
        let fifo_perf = allocate(FifoPerf, &input).unwrap().fractions;
        let built = [
            ("proportional", d.proportional()),
            ("isolated", d.isolated()),
            ("fifo", fifo),
            ("fifo-perf", fifo_perf),
            ("random", d.feasible_from(&raw_a)),
            ("sparse random", d.feasible_from(&raw_b)),
        ];
        let mut compared = 0;
        for policy in LP_POLICIES {
            let Some(a) = answer(policy, &input) else { continue };
            let obj = a.objective.unwrap();
            let bound = a.certificate.as_ref().unwrap().relaxation_bound.value;
            for (name, x) in &built {
                let other = d.objective(policy, x);
                if !other.is_finite() {
                    continue; // a job without a share: no makespan, no ρ
                }
                compared += 1;
                prop_assert!(no_worse(policy, obj, other, 1e-6),
                    "{policy}: objective {obj}, {name} {other}");
                prop_assert!(no_worse(policy, bound, other, 1e-9),
                    "{policy}: bound {bound}, {name} {other}");
            }
        }
        prop_assert!(compared > 0);
    }

    /// Finish-time fairness: the bracket `infeasible_below ≤ feasible_at ≤
    /// infeasible_below·(1 + 1e-6)`, the objective is `feasible_at` and the
    /// certificate's bound `infeasible_below`.
    #[test]
    fn finish_time_fairness_brackets_its_optimum(input in input()) {
        let Some(a) = answer(FinishTimeFairness, &input) else { return Ok(()) };
        let b = a.bracket.unwrap();
        prop_assert!(b.infeasible_below <= b.feasible_at, "{b:?}");
        prop_assert!(b.feasible_at <= b.infeasible_below * (1.0 + 1e-6), "{b:?}");
        prop_assert_eq!(a.objective, Some(b.feasible_at));
        prop_assert_eq!(a.certificate.unwrap().relaxation_bound.value, b.infeasible_below);
    }

    /// Finish-time fairness with each job equally fast on every type is
    /// finish-time fairness on one type of all the GPUs (the homogeneous
    /// case), within 1e-6.
    #[test]
    fn finish_time_fairness_on_equal_types_is_one_merged_type(input in input()) {
        let mut split = input.clone();
        let mut merged = AllocationInput::new([("all", input.gpu_types.values().sum::<u32>())]);
        for job in &mut split.jobs {
            let best = job.throughput.values().fold(0.0, |a: f64, &b| a.max(b));
            for v in job.throughput.values_mut() {
                *v = best;
            }
            let mut one = job.clone();
            one.throughput = [("all".to_string(), best)].into();
            merged = merged.with_job(one);
        }
        match (answer(FinishTimeFairness, &split), answer(FinishTimeFairness, &merged)) {
            (Some(a), Some(b)) => {
                let (a, b) = (a.objective.unwrap(), b.objective.unwrap());
                let relative = (a - b).abs() / b;
                prop_assert!(close(a, b, 1e-6), "split {a}, merged {b}, relative {relative:e}");
            }
            (None, None) => {}
            (a, b) => prop_assert!(false, "split {a:?}, merged {b:?}"),
        }
    }

    /// fifo and fifo-perf are exactly the allocation their docs describe.
    #[test]
    fn fifo_policies_match_their_description(input in input()) {
        for (policy, perf) in [(AllocationPolicy::Fifo, false), (FifoPerf, true)] {
            let a = allocate(policy, &input).unwrap();
            prop_assert_eq!(&a.fractions, &reference_fifo(&input, perf), "{}", policy);
            prop_assert!(a.objective.is_none() && a.certificate.is_none());
            let d = Dense::new(&input);
            for i in 0..d.m() {
                prop_assert_eq!(a.effective_throughput[i], d.tput(i, &a.fractions));
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Robustness
// ---------------------------------------------------------------------------

/// A small valid input in JSON, with `job` spliced in as the second job.
#[cfg(feature = "serde")]
fn json_with_job(job: &str) -> String {
    format!(
        r#"{{"gpu_types": {{"v100": 2, "k80": 1}},
            "jobs": [{{"id": 3, "throughput": {{"v100": 4.0, "k80": 1.0}},
                      "steps_remaining": 1000, "elapsed_s": 5}},
                     {job}],
            "prices": {{"v100": 3.0, "k80": 1.0}}}}"#
    )
}

/// `text` is refused by `from_json` as `Json`, mentioning `needle`.
#[cfg(feature = "serde")]
fn assert_json_error(text: &str, needle: &str) {
    let owned = text.to_string();
    let r = within(WATCHDOG_S, text, move || AllocationInput::from_json(&owned));
    match r {
        Err(e @ AllocationError::Json(_)) => {
            assert!(e.is_input());
            let msg = e.to_string();
            assert!(
                msg.contains(needle),
                "{text}: {msg} does not mention {needle}"
            );
        }
        Err(e) => panic!("{text}: {e:?} is not a Json error"),
        Ok(i) => panic!("{text}: read as {i:?}"),
    }
}

/// Every policy of `policies` refuses `input` as `InvalidInput` with
/// exactly `what` (the job and field), and `validate` agrees.
fn assert_refused_by(policies: &[AllocationPolicy], input: &AllocationInput, what: &str) {
    for &p in policies {
        let i = input.clone();
        let (got, msg) = within(WATCHDOG_S, what, move || invalid(p, &i));
        assert_eq!(got, what, "{p}: {msg}");
        assert!(msg.starts_with(what), "{p}: {msg}");
        // `validate` says the same as `allocate`.
        match input.validate(p) {
            Err(AllocationError::InvalidInput { what: w, .. }) => assert_eq!(w, what),
            other => panic!("{p}: validate gives {other:?}"),
        }
    }
}

#[cfg(feature = "serde")]
#[test]
fn malformed_json_is_a_json_error() {
    for (text, needle) in [
        ("", "EOF"),
        ("{", "EOF"),
        ("null", "invalid type"),
        ("[]", "invalid length 0"),
        (r#"{"gpu_types": {"v100": 1}, "jobs": [}"#, "line 1"),
        (r#"{"gpu_types": {"v100": 1}}"#, "missing field `jobs`"),
        (r#"{"jobs": []}"#, "missing field `gpu_types`"),
        (
            r#"{"gpu_types": {"v100": -1}, "jobs": []}"#,
            "invalid value",
        ),
        (
            r#"{"gpu_types": {"v100": 1.5}, "jobs": []}"#,
            "invalid type",
        ),
        (
            r#"{"gpu_types": {"v100": 4294967296}, "jobs": []}"#,
            "invalid value",
        ),
        (
            r#"{"gpu_types": {"v100": 1}, "jobs": [], "extra": 1}"#,
            "unknown field `extra`",
        ),
        (
            r#"{"gpu_types": {"v100": 1}, "jobs": [], "prices": [1]}"#,
            "invalid type",
        ),
    ] {
        assert_json_error(text, needle);
    }
    // Job-level: unknown field, wrong kinds, out-of-range integers, values
    // JSON cannot hold (NaN, infinities, 1e400).
    for (job, needle) in [
        (
            r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}, "colour": "red"}"#,
            "unknown field `colour`",
        ),
        (
            r#"{"id": -4, "throughput": {"v100": 1, "k80": 1}}"#,
            "invalid value",
        ),
        (
            r#"{"id": "4", "throughput": {"v100": 1, "k80": 1}}"#,
            "invalid type",
        ),
        (
            r#"{"throughput": {"v100": 1, "k80": 1}}"#,
            "missing field `id`",
        ),
        (r#"{"id": 4}"#, "missing field `throughput`"),
        (
            r#"{"id": 4, "throughput": {"v100": NaN, "k80": 1}}"#,
            "expected value",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": Infinity, "k80": 1}}"#,
            "expected value",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": 1e400, "k80": 1}}"#,
            "out of range",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": null, "k80": 1}}"#,
            "invalid type",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}, "scale_factor": -1}"#,
            "invalid value",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}, "scale_factor": 1.5}"#,
            "invalid type",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}, "scale_factor": 4294967296}"#,
            "invalid value",
        ),
        (
            r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}, "weight": "heavy"}"#,
            "invalid type",
        ),
    ] {
        assert_json_error(&json_with_job(job), needle);
    }
    // The valid base reads.
    let ok = json_with_job(r#"{"id": 4, "throughput": {"v100": 1, "k80": 1}}"#);
    let input = AllocationInput::from_json(&ok).unwrap();
    for p in AllocationPolicy::ALL {
        if !p.needs_steps() {
            solve(p, &input);
        }
    }
}

/// Values JSON holds but the input's checks refuse, each named by job id
/// and field.
#[cfg(feature = "serde")]
#[test]
fn out_of_range_values_in_json_name_the_job_and_field() {
    let all = &AllocationPolicy::ALL[..];
    let steps = &[FinishTimeFairness, MinMakespan][..];
    let ftf = &[FinishTimeFairness][..];
    let t = r#""v100": 1, "k80": 1"#;
    let timed = r#""steps_remaining": 50, "elapsed_s": 0"#;
    for (id, throughput, rest, policies, what) in [
        (
            9,
            r#""v100": -1, "k80": 1"#,
            timed,
            all,
            "job 9: throughput.v100",
        ),
        (
            9,
            r#""v100": 1, "k80": -0.5"#,
            timed,
            all,
            "job 9: throughput.k80",
        ),
        (9, r#""v100": 1"#, timed, all, "job 9: throughput.k80"),
        (
            9,
            r#""v100": 1, "k80": 1, "a100": 1"#,
            timed,
            all,
            "job 9: throughput.a100",
        ),
        (
            9,
            t,
            r#""scale_factor": 0, "steps_remaining": 5, "elapsed_s": 0"#,
            all,
            "job 9: scale_factor",
        ),
        (
            9,
            t,
            r#""weight": 0, "steps_remaining": 5, "elapsed_s": 0"#,
            all,
            "job 9: weight",
        ),
        (
            9,
            t,
            r#""weight": -2, "steps_remaining": 5, "elapsed_s": 0"#,
            all,
            "job 9: weight",
        ),
        (9, t, r#""elapsed_s": 0"#, steps, "job 9: steps_remaining"),
        (
            9,
            t,
            r#""steps_remaining": -5, "elapsed_s": 0"#,
            steps,
            "job 9: steps_remaining",
        ),
        (
            9,
            t,
            r#""steps_remaining": 0, "elapsed_s": 0"#,
            ftf,
            "job 9: steps_remaining",
        ),
        (9, t, r#""steps_remaining": 5"#, ftf, "job 9: elapsed_s"),
        (
            9,
            t,
            r#""steps_remaining": 5, "elapsed_s": -1"#,
            ftf,
            "job 9: elapsed_s",
        ),
        (3, t, timed, all, "job 3"),
    ] {
        let job = format!(r#"{{"id": {id}, "throughput": {{{throughput}}}, {rest}}}"#);
        let input = AllocationInput::from_json(&json_with_job(&job))
            .unwrap_or_else(|e| panic!("{job}: {e}"));
        assert_refused_by(policies, &input, what);
    }
    // Steps 0 is fine for min makespan (the job is done), and a job
    // without steps or elapsed time is fine for the policies that do not
    // read them.
    let done = AllocationInput::from_json(&json_with_job(
        r#"{"id": 9, "throughput": {"v100": 1, "k80": 1}, "steps_remaining": 0}"#,
    ))
    .unwrap();
    let a = solve(MinMakespan, &done);
    check_certified(MinMakespan, &done, &a).unwrap();
    assert_close("makespan", a.objective.unwrap(), 1000.0 / 4.0, 1e-9);

    // Prices: missing, missing one type, unknown type, not positive.
    let base = |prices: &str| {
        format!(
            r#"{{"gpu_types": {{"v100": 2, "k80": 1}},
                "jobs": [{{"id": 3, "throughput": {{"v100": 4.0, "k80": 1.0}}}}]{prices}}}"#
        )
    };
    for (prices, what) in [
        ("", "prices"),
        (r#", "prices": {"v100": 3.0}"#, "prices.k80"),
        (
            r#", "prices": {"v100": 3.0, "k80": 1.0, "a100": 5}"#,
            "prices.a100",
        ),
        (r#", "prices": {"v100": 0, "k80": 1.0}"#, "prices.v100"),
        (r#", "prices": {"v100": 3.0, "k80": -1.0}"#, "prices.k80"),
    ] {
        let input = AllocationInput::from_json(&base(prices)).unwrap();
        assert_refused_by(&[MaxThroughputPerCost], &input, what);
        // The other policies do not read prices.
        solve(MaxSumThroughput, &input);
    }

    // No job, no type.
    let input = AllocationInput::from_json(r#"{"gpu_types": {"v100": 1}, "jobs": []}"#).unwrap();
    assert_refused_by(all, &input, "jobs");
    let input =
        AllocationInput::from_json(r#"{"gpu_types": {}, "jobs": [{"id": 0, "throughput": {}}]}"#)
            .unwrap();
    assert_refused_by(all, &input, "gpu_types");
    let input = AllocationInput::from_json(
        r#"{"gpu_types": {"": 1}, "jobs": [{"id": 0, "throughput": {"": 1}}]}"#,
    )
    .unwrap();
    assert_refused_by(all, &input, "gpu_types");
}

/// NaN, infinite and negative values set through the builders (JSON
/// cannot hold NaN or infinities), each named by job id and field.
#[test]
fn non_finite_values_name_the_job_and_field() {
    let all = &AllocationPolicy::ALL[..];
    let job = || {
        AllocationJob::new(11, [("v100", 2.0), ("k80", 1.0)])
            .with_steps_remaining(100.0)
            .with_elapsed_s(1.0)
    };
    let with = |j: AllocationJob| {
        AllocationInput::new([("v100", 1), ("k80", 1)])
            .with_job(
                AllocationJob::new(0, [("v100", 1.0), ("k80", 1.0)])
                    .with_steps_remaining(10.0)
                    .with_elapsed_s(0.0),
            )
            .with_job(j)
            .with_prices([("v100", 2.0), ("k80", 1.0)])
    };
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0] {
        let mut j = job();
        j.throughput.insert("v100".into(), bad);
        assert_refused_by(all, &with(j), "job 11: throughput.v100");
        assert_refused_by(all, &with(job().with_weight(bad)), "job 11: weight");
        assert_refused_by(
            &[FinishTimeFairness, MinMakespan],
            &with(job().with_steps_remaining(bad)),
            "job 11: steps_remaining",
        );
        assert_refused_by(
            &[FinishTimeFairness],
            &with(job().with_elapsed_s(bad)),
            "job 11: elapsed_s",
        );
        assert_refused_by(
            &[MaxThroughputPerCost],
            &with(job()).with_prices([("v100", 2.0), ("k80", bad)]),
            "prices.k80",
        );
    }
    // A duplicate id names the id.
    let dup = with(job()).with_job(job());
    assert_refused_by(all, &dup, "job 11");
    // Unknown policy names are typed input errors too.
    let e = "max-fun".parse::<AllocationPolicy>().unwrap_err();
    assert!(matches!(e, AllocationError::UnknownPolicy { .. }) && e.is_input());
    assert!(e.to_string().contains("max-fun"));
    for p in AllocationPolicy::ALL {
        assert_eq!(p.name().parse::<AllocationPolicy>().unwrap(), p);
    }
}

/// Huge (finite) values are valid input: every policy answers with an
/// exactly feasible allocation whose certificate checks, or refuses with
/// a typed input error; never a panic or a hang.
#[test]
fn huge_values_are_answered_or_refused_cleanly() {
    let cases: Vec<(&str, AllocationInput)> = vec![
        (
            "throughputs 1e300 and 1e-300",
            AllocationInput::new([("v100", 3), ("k80", 2)])
                .with_job(AllocationJob::new(0, [("v100", 1e300), ("k80", 1.0)]))
                .with_job(AllocationJob::new(1, [("v100", 1e-300), ("k80", 2.0)]))
                .with_job(AllocationJob::new(2, [("v100", 5.0), ("k80", 5.0)])),
        ),
        (
            "u32::MAX GPUs and scale factor",
            AllocationInput::new([("v100", u32::MAX), ("k80", 1)])
                .with_job(
                    AllocationJob::new(0, [("v100", 3.0), ("k80", 1.0)])
                        .with_scale_factor(u32::MAX),
                )
                .with_job(AllocationJob::new(u64::MAX, [("v100", 1.0), ("k80", 2.0)])),
        ),
        (
            "weights 1e300 and 1e-300",
            AllocationInput::new([("v100", 1), ("k80", 1)])
                .with_job(AllocationJob::new(0, [("v100", 3.0), ("k80", 1.0)]).with_weight(1e300))
                .with_job(AllocationJob::new(1, [("v100", 1.0), ("k80", 2.0)]).with_weight(1e-300)),
        ),
        (
            "steps 1e300, elapsed 1e300, price 1e300",
            AllocationInput::new([("v100", 1), ("k80", 1)])
                .with_job(AllocationJob::new(0, [("v100", 3.0), ("k80", 1.0)]))
                .with_job(AllocationJob::new(1, [("v100", 1.0), ("k80", 2.0)])),
        ),
    ];
    for (name, input) in cases {
        let input = if name.starts_with("steps") {
            let mut i = input.with_prices([("v100", 1e300), ("k80", 1.0)]);
            i.jobs[0].steps_remaining = Some(1e300);
            i.jobs[0].elapsed_s = Some(1e300);
            i.jobs[1].steps_remaining = Some(1.0);
            i.jobs[1].elapsed_s = Some(0.0);
            i
        } else {
            let mut i = input.with_prices([("v100", 3.0), ("k80", 1.0)]);
            for j in &mut i.jobs {
                j.steps_remaining = Some(1e4);
                j.elapsed_s = Some(10.0);
            }
            i
        };
        for p in AllocationPolicy::ALL {
            let i = input.clone();
            let what = format!("{name}: {p}");
            match within(WATCHDOG_S, &what, move || allocate(p, &i)) {
                Ok(a) => {
                    check_exactly_feasible(&input, &a).unwrap_or_else(|e| panic!("{what}: {e}"));
                    if let Some(c) = &a.certificate {
                        c.check(1e-9).unwrap_or_else(|e| panic!("{what}: {e}"));
                    }
                }
                Err(e @ AllocationError::InvalidInput { .. }) => {
                    eprintln!("{what}: refused: {e}");
                }
                Err(e) => panic!("{what}: {e:?}"),
            }
        }
    }
}

/// 20,000 jobs on 3 types: max-sum throughput answers, exactly feasible
/// and certified, at least as good as fifo-perf. Every job is fastest on
/// the V100 (20 GPUs), then the P100 (2,000), then the K80 (8,000), and
/// the jobs outnumber the GPUs; max-sum fills every GPU.
#[test]
fn twenty_thousand_jobs_on_three_types() {
    let mut input = AllocationInput::new([("v100", 20), ("p100", 2000), ("k80", 8000)]);
    for i in 0..20_000u64 {
        let k80 = 1.0 + (i % 17) as f64 / 4.0;
        let p100 = k80 * (1.2 + (i % 5) as f64 / 10.0);
        let v100 = p100 * (1.1 + (i % 7) as f64 / 20.0);
        input = input.with_job(
            AllocationJob::new(i, [("v100", v100), ("p100", p100), ("k80", k80)])
                .with_scale_factor(if i % 10 == 0 { 2 } else { 1 }),
        );
    }
    let start = std::time::Instant::now();
    let i = input.clone();
    let a = within(WATCHDOG_S, "20,000 jobs", move || {
        allocate(MaxSumThroughput, &i)
    })
    .unwrap();
    eprintln!("20,000 jobs: {:.2} s", start.elapsed().as_secs_f64());
    check_exactly_feasible(&input, &a).unwrap();
    check_certified(MaxSumThroughput, &input, &a).unwrap();
    let d = Dense::new(&input);
    let fifo = solve(FifoPerf, &input);
    let greedy = d.objective(MaxSumThroughput, &fifo.fractions);
    assert!(
        a.objective.unwrap() >= greedy,
        "{:?} < fifo-perf {greedy}",
        a.objective
    );
    // Every GPU is busy.
    for (j, t) in a.types.iter().enumerate() {
        let used: f64 = (0..d.m()).map(|i| d.s[i] * a.fractions[i][j]).sum();
        assert_close(&format!("{t} use"), used, d.n[j], 1e-6);
    }
}

/// An input with more (job, type) pairs than the LP may have is refused
/// before any program is built, naming the limit.
#[test]
fn too_many_job_type_pairs_are_refused() {
    use dmlsched::allocate::MAX_CELLS;
    let types: Vec<(String, u32)> = (0..4).map(|t| (format!("t{t}"), 1)).collect();
    let mut input = AllocationInput::new(types.clone());
    let jobs = MAX_CELLS / 4 + 1;
    for id in 0..jobs as u64 {
        input = input.with_job(AllocationJob::new(
            id,
            types.iter().map(|(t, _)| (t.clone(), 1.0)),
        ));
    }
    let err = allocate(AllocationPolicy::MaxSumThroughput, &input).unwrap_err();
    assert!(err.is_input(), "{err}");
    assert!(err.to_string().contains("beyond the limit of"), "{err}");
}

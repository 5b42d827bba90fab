//! Calibration of the timing models on the synthetic recipes: parameter
//! recovery within tolerances, held-out accuracy, the typed errors of
//! degenerate data, NNLS known answers, the ill-conditioning warning,
//! fold determinism and the predictor's target.
//!
//! On synthetic data the held-out MAPE echoes the injected log-normal noise
//! (about `0.8σ` even for the true model), so these tests show that the
//! fitting works, not that a timing model describes a real cluster.

use dmlsched::algorithms::Algorithm;
use dmlsched::calibrate::synthetic::{self, RAR_C_THETA};
use dmlsched::calibrate::*;
use dmlsched::certificate::RunInfo;
use dmlsched::timing::{
    IterationTime, LinearInParameters, PsConfig, PsLocality, PsPlacement, Sign, TimingError,
};
use rand::SeedableRng;

/// `|got/want − 1|`.
fn rel(got: f64, want: f64) -> f64 {
    (got / want - 1.0).abs()
}

/// `n_train + n_test` samples of one seed, split in that order.
fn split<C: Clone>(all: Vec<Sample<C>>, n_train: usize) -> (Vec<Sample<C>>, Vec<Sample<C>>) {
    let test = all[n_train..].to_vec();
    let mut train = all;
    train.truncate(n_train);
    (train, test)
}

fn rar_config(workers: u32, servers: u32, contention: u32) -> RarJobConfig {
    RarJobConfig {
        workers,
        servers,
        contention,
    }
}

/// Exact samples of `model` at `configs`.
fn exact<M: IterationTime>(model: &M, configs: &[M::Config]) -> Vec<Sample<M::Config>>
where
    M::Config: Clone,
{
    configs
        .iter()
        .map(|c| Sample::new(c.clone(), model.iteration_time_s(c).unwrap()))
        .collect()
}

// ---------------------------------------------------------------------------
// R1: RAR-C
// ---------------------------------------------------------------------------

#[test]
fn r1_noise_free_recovers_the_parameters() {
    let samples = synthetic::rar_c_samples(200, 0.0, 11).unwrap();
    let (fitted, report) = fit_linear(
        &synthetic::rar_c_template(),
        &samples,
        &FitOptions::default(),
    )
    .unwrap();
    for (j, want) in RAR_C_THETA.iter().enumerate() {
        assert!(
            rel(report.theta[j], *want) < 1e-6,
            "{}: {}",
            report.names[j],
            report.theta[j]
        );
    }
    assert!(report.accuracy.mape_pct < 1e-6);
    assert_eq!(report.rank, Some(5));
    assert!(report.at_bound.is_empty() && report.warnings.is_empty());
    // Column scaling leaves a condition number of about 6 on this recipe.
    let cond = report.cond.unwrap();
    assert!(cond > 1.0 && cond < 20.0, "cond {cond}");
    // The physical model is the truth, and predicts through RarTiming.
    let truth = synthetic::rar_c_truth();
    let physical = fitted.physical().unwrap();
    assert!(rel(physical.timing.external_bps, 1.25e9) < 1e-6);
    assert!(rel(physical.timing.intra_bps, 1e10) < 1e-6);
    let cfg = rar_config(64, 8, 3);
    let want = truth.iteration_time_s(&cfg).unwrap();
    assert!(rel(fitted.iteration_time_s(&cfg).unwrap(), want) < 1e-9);
    let ring = physical.timing(64).unwrap();
    let k = dmlsched::timing::effective_contenders(3, 0.8);
    assert!(rel(ring.iteration_time_s(8, k), want) < 1e-9);
}

/// The RAR-C fit at noise `sigma` on 200 training and 40 test samples:
/// per-parameter relative errors, held-out MAPE, R².
fn r1_fit(sigma: f64, seed: u64) -> (Vec<f64>, f64, f64) {
    let (train, test) = split(synthetic::rar_c_samples(240, sigma, seed).unwrap(), 200);
    let (fitted, report) =
        fit_linear(&synthetic::rar_c_template(), &train, &FitOptions::default()).unwrap();
    let errors = (0..5)
        .map(|j| rel(report.theta[j], RAR_C_THETA[j]))
        .collect();
    let held = evaluate(&fitted, &test).unwrap();
    (errors, held.mape_pct, report.accuracy.r2.unwrap())
}

#[test]
fn r1_noise_two_percent() {
    for seed in [1, 2, 3] {
        let (e, mape, r2) = r1_fit(0.02, seed);
        let limits = [0.05, 0.03, 0.15, 0.35, 0.025];
        for (j, lim) in limits.iter().enumerate() {
            assert!(e[j] <= *lim, "seed {seed}: parameter {j} off by {}", e[j]);
        }
        assert!(
            mape <= 3.0 && r2 >= 0.99,
            "seed {seed}: MAPE {mape}, R² {r2}"
        );
    }
}

#[test]
fn r1_noise_five_percent() {
    for seed in [1, 2, 3] {
        let (e, mape, r2) = r1_fit(0.05, seed);
        for (j, lim) in [(0, 0.12), (1, 0.06), (2, 0.30), (4, 0.05)] {
            assert!(e[j] <= lim, "seed {seed}: parameter {j} off by {}", e[j]);
        }
        assert!(
            mape <= 7.0 && r2 >= 0.97,
            "seed {seed}: MAPE {mape}, R² {r2}"
        );
    }
}

#[test]
fn r1_noise_ten_percent_stays_near_the_target() {
    for seed in [1, 2, 3] {
        let (_, mape, r2) = r1_fit(0.10, seed);
        assert!(
            mape <= 12.0 && r2 >= 0.90,
            "seed {seed}: MAPE {mape}, R² {r2}"
        );
    }
}

#[test]
fn r1_profile_recovers_the_contender_ratio() {
    let samples = synthetic::rar_c_samples(200, 0.0, 5).unwrap();
    // Start from a wrong ξ₁: the profile must find 0.8.
    let template = RarFamily::new(synthetic::rar_c_template().timing, 0.3).unwrap();
    let (fitted, report) = fit_contention_profile(
        &template,
        &samples,
        &FitOptions::default(),
        &ProfileOptions::default(),
    )
    .unwrap();
    let FitMethod::ContentionProfile {
        contender_ratio,
        profile,
        ..
    } = &report.method
    else {
        panic!("not a profile: {:?}", report.method);
    };
    assert!(
        (contender_ratio - 0.8).abs() <= 1e-3,
        "ξ₁ = {contender_ratio}"
    );
    assert_eq!(fitted.template.contender_ratio, *contender_ratio);
    assert_eq!(profile.len(), 10);
    // At ξ₁ ∈ {0.1, 0.2}, every k = max(1, ξ₁p) = 1 for p ≤ 4: θ_B has no
    // feature, so those grid points have no loss.
    assert_eq!(profile[0].1, None);
    assert_eq!(profile[1].1, None);
    let at = |x: f64| {
        profile
            .iter()
            .find(|(xi, _)| (xi - x).abs() < 1e-12)
            .unwrap()
            .1
            .unwrap()
    };
    assert!(at(0.8) < 1e-20 && at(0.6) > 1e-6 && at(1.0) > 1e-6);
    for (j, want) in RAR_C_THETA.iter().enumerate() {
        assert!(rel(report.theta[j], *want) < 1e-4, "{}", report.names[j]);
    }
}

#[test]
fn r1_profile_with_noise_stays_close() {
    let (train, test) = split(synthetic::rar_c_samples(240, 0.02, 8).unwrap(), 200);
    let cal = ContentionProfile {
        model: synthetic::rar_c_template(),
        options: FitOptions::default(),
        profile: ProfileOptions::default(),
    };
    let (fitted, report) = cal.fit(&train).unwrap();
    let xi = fitted.template.contender_ratio;
    assert!((xi - 0.8).abs() <= 0.1, "ξ₁ = {xi}");
    assert!(evaluate(&fitted, &test).unwrap().mape_pct <= 3.0);
    assert!(report.accuracy.r2.unwrap() >= 0.99);
}

// ---------------------------------------------------------------------------
// R2: PS-L placement-level form, by alternation
// ---------------------------------------------------------------------------

/// `(t_c, 1/b_int, 1/b_w, 1/B_s, ξ₂)` of the recipe.
const PS_L_THETA: [f64; 5] = [0.12, 1.0 / 1.6e10, 1.0 / 1.25e9, 1.0 / 2.5e9, 0.004];

fn r2_fit(
    sigma: f64,
    seed: u64,
) -> (
    MaxLinearModel<dmlsched::timing::PsLocalityPlacement>,
    FitReport,
    Vec<Sample<PsPlacement>>,
) {
    let (train, test) = split(synthetic::ps_l_samples(240, sigma, seed).unwrap(), 200);
    let (m, r) = fit_alternating(
        &synthetic::ps_l_template(),
        &train,
        &FitOptions::default(),
        &AlternationOptions::ps_locality(),
    )
    .unwrap();
    (m, r, test)
}

#[test]
fn r2_noise_free_recovers_the_parameters() {
    let (fitted, report, test) = r2_fit(0.0, 21);
    for (j, want) in PS_L_THETA.iter().enumerate() {
        assert!(
            rel(report.theta[j], *want) < 1e-6,
            "{}: {}",
            report.names[j],
            report.theta[j]
        );
    }
    let FitMethod::Alternation { rounds, converged } = report.method else {
        panic!("not an alternation");
    };
    assert!(converged && rounds <= 50, "{rounds} rounds");
    assert!(report.accuracy.mape_pct < 1e-6);
    assert!(evaluate(&fitted, &test).unwrap().mape_pct < 1e-6);
    let physical = fitted.physical().unwrap();
    assert!(rel(physical.0.ps_bps, 2.5e9) < 1e-6);
}

#[test]
fn r2_noise_two_and_five_percent() {
    for seed in [1, 2, 3] {
        let (fitted, report, test) = r2_fit(0.02, seed);
        for (j, lim) in [(0, 0.08), (2, 0.07), (3, 0.04), (4, 0.35)] {
            let e = rel(report.theta[j], PS_L_THETA[j]);
            assert!(e <= lim, "seed {seed}: {} off by {e}", report.names[j]);
        }
        let mape = evaluate(&fitted, &test).unwrap().mape_pct;
        assert!(mape <= 3.0, "seed {seed}: MAPE {mape}");
        let (fitted, _, test) = r2_fit(0.05, seed);
        let mape = evaluate(&fitted, &test).unwrap().mape_pct;
        assert!(mape <= 7.0, "seed {seed}: MAPE {mape} at σ = 0.05");
    }
}

// ---------------------------------------------------------------------------
// R4: PS-W, by pattern search
// ---------------------------------------------------------------------------

fn r4_fit(sigma: f64, seed: u64, search: &SearchOptions) -> (FitReport, f64) {
    let (train, test) = split(synthetic::ps_w_samples(60, sigma, seed).unwrap(), 48);
    let (fitted, report) = fit_layered(
        &synthetic::ps_w_template(),
        &train,
        &FitOptions::default(),
        search,
    )
    .unwrap();
    (report, evaluate(&fitted, &test).unwrap().mape_pct)
}

#[test]
fn r4_noise_free_recovers_kappa_and_bandwidth() {
    // The compass search spends its 400 evaluations creeping along the
    // valley of the max-plus loss: noise-free data give κ and 1/B to a few
    // 10⁻⁴, far inside the noisy recipes' tolerances.
    let (report, mape) = r4_fit(0.0, 31, &SearchOptions::default());
    assert!(rel(report.theta[0], 1.3) < 1e-3, "κ = {}", report.theta[0]);
    assert!(
        rel(report.theta[1], 1.0 / 1.25e9) < 1e-3,
        "1/B = {}",
        report.theta[1]
    );
    assert!(mape < 0.1, "MAPE {mape}");
    let FitMethod::PatternSearch {
        grid_evaluations,
        search_evaluations,
        ..
    } = report.method
    else {
        panic!("not a pattern search");
    };
    assert_eq!(grid_evaluations, 625);
    assert!(search_evaluations <= 400);
}

#[test]
fn r4_noise_two_and_five_percent() {
    for seed in [1, 2, 3] {
        let (r, mape) = r4_fit(0.02, seed, &SearchOptions::default());
        let (ek, eb) = (rel(r.theta[0], 1.3), rel(r.theta[1], 1.0 / 1.25e9));
        assert!(
            ek <= 0.10 && eb <= 0.03 && mape <= 3.0,
            "seed {seed}: κ {ek}, 1/B {eb}, MAPE {mape}"
        );
        let (r, mape) = r4_fit(0.05, seed, &SearchOptions::default());
        let (ek, eb) = (rel(r.theta[0], 1.3), rel(r.theta[1], 1.0 / 1.25e9));
        assert!(
            ek <= 0.25 && eb <= 0.07 && mape <= 7.0,
            "seed {seed}: κ {ek}, 1/B {eb}, MAPE {mape}"
        );
    }
}

#[test]
fn r4_three_parameter_variant() {
    let mut search = SearchOptions::default();
    search.separate_bandwidths = true;
    let (r, mape) = r4_fit(0.02, 4, &search);
    assert_eq!(r.names, vec!["kappa", "inv_B_w", "inv_B_s"]);
    let FitMethod::PatternSearch {
        grid_evaluations, ..
    } = r.method
    else {
        panic!("not a pattern search");
    };
    assert_eq!(grid_evaluations, 12 * 12 * 12);
    assert!(mape <= 3.0, "MAPE {mape}");
}

// ---------------------------------------------------------------------------
// Negative recipes: degenerate data give the typed errors
// ---------------------------------------------------------------------------

fn fit_rar(samples: &[Sample<RarJobConfig>]) -> Result<FitReport, CalibrateError> {
    fit_linear(
        &synthetic::rar_c_template(),
        samples,
        &FitOptions::default(),
    )
    .map(|(_, r)| r)
}

#[test]
fn n1_single_server_only_leaves_theta_a_unidentified() {
    let truth = synthetic::rar_c_truth();
    let configs: Vec<_> = [1, 2, 4, 8, 16, 32, 2, 4]
        .iter()
        .map(|&w| rar_config(w, 1, 0))
        .collect();
    let err = fit_rar(&exact(&truth, &configs)).unwrap_err();
    assert_eq!(err, CalibrateError::ZeroFeature { param: "theta_A" });
}

#[test]
fn n2_no_contention_leaves_theta_b_unidentified() {
    let truth = synthetic::rar_c_truth();
    // p = 1 everywhere: k = max(1, 0.8) = 1.
    let configs: Vec<_> = [(2, 2), (4, 2), (4, 4), (8, 2), (8, 8), (16, 4), (32, 8)]
        .iter()
        .map(|&(w, s)| rar_config(w, s, 1))
        .collect();
    let err = fit_rar(&exact(&truth, &configs)).unwrap_err();
    assert_eq!(err, CalibrateError::ZeroFeature { param: "theta_B" });
}

#[test]
fn n3_one_multi_server_shape_is_rank_deficient() {
    let truth = synthetic::rar_c_truth();
    let mut configs: Vec<_> = [1, 2, 4, 8, 16]
        .iter()
        .map(|&w| rar_config(w, 1, 0))
        .collect();
    configs.extend((1..=4).map(|p| rar_config(4, 2, p)));
    let err = fit_rar(&exact(&truth, &configs)).unwrap_err();
    // φ_D = φ_E + φ_A/D(4): the overhead, the compute and θ_A trade off.
    let CalibrateError::RankDeficient {
        rank,
        params,
        suspects,
    } = err
    else {
        panic!("expected RankDeficient, got {err:?}");
    };
    assert_eq!((rank, params), (4, 5));
    for p in ["theta_A", "xi2", "t_c"] {
        assert!(suspects.contains(&p), "{p} not in {suspects:?}");
    }
}

/// RAR-C with a separate reduction column `m(w−1)/w` for `1/C`: the
/// reduction feature is `(φ_A + φ_C)/2`, so `C` can never be separated.
#[derive(Debug, Clone)]
struct WithReductionColumn(RarFamily);

const WITH_C: [&str; 6] = ["theta_A", "theta_B", "theta_C", "xi2", "t_c", "inv_C"];

impl IterationTime for WithReductionColumn {
    type Config = RarJobConfig;
    fn iteration_time_s(&self, cfg: &RarJobConfig) -> Result<f64, TimingError> {
        self.0.iteration_time_s(cfg)
    }
    fn samples_per_iteration(&self, cfg: &RarJobConfig) -> f64 {
        self.0.samples_per_iteration(cfg)
    }
}

impl LinearInParameters for WithReductionColumn {
    fn param_names(&self) -> &'static [&'static str] {
        &WITH_C
    }
    fn features(&self, cfg: &RarJobConfig) -> Result<Vec<f64>, TimingError> {
        let mut phi = self.0.features(cfg)?;
        let w = f64::from(cfg.workers);
        phi.push(self.0.timing.model_bytes * (w - 1.0) / w);
        Ok(phi)
    }
    fn signs(&self) -> Vec<Sign> {
        vec![Sign::NonNeg; 6]
    }
    fn params(&self) -> Vec<f64> {
        let mut p = self.0.params();
        p.push(1.0 / self.0.timing.reduction_bps);
        p
    }
    fn with_params(&self, _theta: &[f64]) -> Result<Self, TimingError> {
        Ok(self.clone())
    }
}

#[test]
fn n4_a_separate_reduction_column_is_rank_deficient() {
    let samples = synthetic::rar_c_samples(100, 0.02, 9).unwrap();
    let model = WithReductionColumn(synthetic::rar_c_template());
    let err = fit_linear(&model, &samples, &FitOptions::default()).unwrap_err();
    let CalibrateError::RankDeficient { rank, suspects, .. } = err else {
        panic!("expected RankDeficient, got {err:?}");
    };
    assert_eq!(rank, 5);
    assert!(suspects.contains(&"inv_C"), "{suspects:?}");
}

#[test]
fn n5_zero_or_negative_measurement() {
    for bad in [0.0, -0.3] {
        let mut samples = synthetic::rar_c_samples(20, 0.02, 1).unwrap();
        samples[7].measured_s = bad;
        assert_eq!(
            fit_rar(&samples).unwrap_err(),
            CalibrateError::NonPositiveMeasurement {
                index: 7,
                value: bad
            }
        );
    }
    let mut samples = synthetic::rar_c_samples(20, 0.02, 1).unwrap();
    samples[3].measured_s = f64::INFINITY;
    assert!(matches!(
        fit_rar(&samples),
        Err(CalibrateError::NonFiniteMeasurement { index: 3, .. })
    ));
    samples[3].measured_s = 0.3;
    samples[4].weight = -1.0;
    assert!(matches!(
        fit_rar(&samples),
        Err(CalibrateError::BadWeight { index: 4, .. })
    ));
}

#[test]
fn n6_as_many_samples_as_parameters() {
    let samples = synthetic::rar_c_samples(5, 0.02, 1).unwrap();
    assert_eq!(
        fit_rar(&samples).unwrap_err(),
        CalibrateError::TooFewSamples { n: 5, needed: 6 }
    );
    assert!(fit_rar(&synthetic::rar_c_samples(40, 0.02, 1).unwrap()).is_ok());
}

#[test]
fn ps_l_two_configuration_form_is_rank_deficient_for_one_job() {
    let truth = PsLocality::new(0.1, 1e8, 1.6e10, 1.25e9, 2.5e9, 0.0).unwrap();
    let configs: Vec<_> = (1..=6)
        .map(|w| {
            if w % 2 == 0 {
                PsConfig::Local { workers: w }
            } else {
                PsConfig::Distributed { workers: w }
            }
        })
        .collect();
    let err = fit_linear(&truth, &exact(&truth, &configs), &FitOptions::default()).unwrap_err();
    let CalibrateError::RankDeficient { rank, suspects, .. } = err else {
        panic!("expected RankDeficient, got {err:?}");
    };
    assert_eq!(rank, 2);
    assert_eq!(suspects.len(), 3);
    // A ridge makes it solvable (biased towards small parameters).
    let mut ridge = FitOptions::default();
    ridge.ridge = 1e-6;
    let (_, r) = fit_linear(&truth, &exact(&truth, &configs), &ridge).unwrap();
    assert!(r.accuracy.mape_pct < 1.0);
}

#[test]
fn zero_weight_ignores_an_outlier() {
    let mut samples = synthetic::rar_c_samples(60, 0.0, 2).unwrap();
    samples[10].measured_s *= 3.0;
    let (_, skewed) = fit_linear(
        &synthetic::rar_c_template(),
        &samples,
        &FitOptions::default(),
    )
    .unwrap();
    assert!(rel(skewed.theta[4], RAR_C_THETA[4]) > 1e-3);
    samples[10].weight = 0.0;
    let (_, r) = fit_linear(
        &synthetic::rar_c_template(),
        &samples,
        &FitOptions::default(),
    )
    .unwrap();
    for (j, want) in RAR_C_THETA.iter().enumerate() {
        assert!(rel(r.theta[j], *want) < 1e-6);
    }
}

#[test]
fn unphysical_parameters_still_predict() {
    // θ_B < θ_A − 1/(2C): a degradation slope α = θ_B·b_e − 1 < 0.
    let theta = vec![8.25e-10, 4e-10, 1.25e-10, 0.005, 0.105];
    let truth = LinearModel {
        template: synthetic::rar_c_template(),
        theta: theta.clone(),
    };
    let configs: Vec<_> = synthetic::rar_c_samples(80, 0.0, 3)
        .unwrap()
        .into_iter()
        .map(|s| s.config)
        .collect();
    let samples = exact(&truth, &configs);
    let (fitted, report) = fit_linear(
        &synthetic::rar_c_template(),
        &samples,
        &FitOptions::default(),
    )
    .unwrap();
    assert!(report.accuracy.mape_pct < 1e-6);
    assert!(matches!(
        fitted.physical(),
        Err(CalibrateError::Unphysical { .. })
    ));
    let cfg = rar_config(32, 8, 4);
    assert!(
        rel(
            fitted.iteration_time_s(&cfg).unwrap(),
            truth.iteration_time_s(&cfg).unwrap()
        ) < 1e-9
    );
}

// ---------------------------------------------------------------------------
// NNLS, conditioning, folds
// ---------------------------------------------------------------------------

/// A model whose configuration is its feature row: `τ = θ·cfg`.
#[derive(Debug, Clone)]
struct Rows {
    signs: Vec<Sign>,
}

const ROW_NAMES: [&str; 3] = ["a", "b", "c"];

impl IterationTime for Rows {
    type Config = Vec<f64>;
    fn iteration_time_s(&self, cfg: &Vec<f64>) -> Result<f64, TimingError> {
        Ok(cfg.iter().sum())
    }
    fn samples_per_iteration(&self, _cfg: &Vec<f64>) -> f64 {
        1.0
    }
}

impl LinearInParameters for Rows {
    fn param_names(&self) -> &'static [&'static str] {
        &ROW_NAMES[..self.signs.len()]
    }
    fn features(&self, cfg: &Vec<f64>) -> Result<Vec<f64>, TimingError> {
        Ok(cfg.clone())
    }
    fn signs(&self) -> Vec<Sign> {
        self.signs.clone()
    }
    fn params(&self) -> Vec<f64> {
        vec![1.0; self.signs.len()]
    }
    fn with_params(&self, _theta: &[f64]) -> Result<Self, TimingError> {
        Ok(self.clone())
    }
}

fn rows(data: &[(&[f64], f64)]) -> Vec<Sample<Vec<f64>>> {
    data.iter()
        .map(|(x, y)| Sample::new(x.to_vec(), *y))
        .collect()
}

fn absolute() -> FitOptions {
    let mut built = FitOptions::default();
    built.loss = Loss::Absolute;
    built.constraints = Constraints::FromModelSigns;
    built.ridge = 0.0;
    built.rank_tol = None;
    built.cond_warn = 1e8;
    built
}

#[test]
fn nnls_clamps_a_negative_coordinate() {
    // Rows (1,0), (0,1), (1,1) with y = (5, 1, 2): the unconstrained
    // optimum is (11/3, −1/3); with θ ≥ 0 it is (3.5, 0).
    let data = rows(&[(&[1.0, 0.0], 5.0), (&[0.0, 1.0], 1.0), (&[1.0, 1.0], 2.0)]);
    let model = Rows {
        signs: vec![Sign::NonNeg; 2],
    };
    let (_, r) = fit_linear(&model, &data, &absolute()).unwrap();
    assert!(
        (r.theta[0] - 3.5).abs() < 1e-12 && r.theta[1] == 0.0,
        "{:?}",
        r.theta
    );
    assert_eq!(r.at_bound, vec!["b"]);
    // Loss at (3.5, 0): 1.5² + 1² + 1.5².
    assert!((r.loss_value - 5.5).abs() < 1e-12);
    let mut free = absolute();
    free.constraints = Constraints::Unconstrained;
    let (_, r) = fit_linear(&model, &data, &free).unwrap();
    assert!((r.theta[0] - 11.0 / 3.0).abs() < 1e-12 && (r.theta[1] + 1.0 / 3.0).abs() < 1e-12);
    assert!(r.at_bound.is_empty());
}

#[test]
fn nnls_with_a_free_intercept() {
    // y = a + b·t at t = 0, 1, 2 with y = (1, 0.5, 0.1): the unconstrained
    // slope is −0.45; with b ≥ 0 (a free) b = 0 and a = mean(y).
    let data = rows(&[(&[1.0, 0.0], 1.0), (&[1.0, 1.0], 0.5), (&[1.0, 2.0], 0.1)]);
    let model = Rows {
        signs: vec![Sign::Free, Sign::NonNeg],
    };
    let (_, r) = fit_linear(&model, &data, &absolute()).unwrap();
    assert!(
        (r.theta[0] - 1.6 / 3.0).abs() < 1e-12 && r.theta[1] == 0.0,
        "{:?}",
        r.theta
    );
    assert_eq!(r.at_bound, vec!["b"]);
}

#[test]
fn nearly_collinear_features_warn() {
    let data: Vec<_> = (0..11)
        .map(|i| {
            let t = 1.0 + 1e-9 * f64::from(i);
            Sample::new(vec![1.0, t], 1.0 + t)
        })
        .collect();
    let model = Rows {
        signs: vec![Sign::Free; 2],
    };
    let (_, r) = fit_linear(&model, &data, &FitOptions::default()).unwrap();
    let cond = r.cond.unwrap();
    assert!(cond > 1e8, "cond {cond}");
    assert_eq!(r.warnings, vec![FitWarning::IllConditioned { cond }]);
    let mut quiet = FitOptions::default();
    quiet.cond_warn = f64::INFINITY;
    assert!(
        fit_linear(&model, &data, &quiet)
            .unwrap()
            .1
            .warnings
            .is_empty()
    );
    // With a rank tolerance above σ_min the same data are rank-deficient.
    let mut strict = FitOptions::default();
    strict.rank_tol = Some(1e-3);
    assert!(matches!(
        fit_linear(&model, &data, &strict),
        Err(CalibrateError::RankDeficient { rank: 1, .. })
    ));
}

#[test]
fn folds_are_fixed_for_a_seed() {
    // The portable shuffle: the same on every platform, for ever.
    assert_eq!(shuffled_indices(10, 7), vec![4, 6, 2, 0, 8, 3, 7, 5, 9, 1]);
    assert_eq!(
        k_fold(12, 3, 2024).unwrap(),
        vec![2, 1, 2, 0, 0, 1, 0, 0, 2, 1, 1, 2]
    );
    assert_eq!(
        k_fold(12, 3, 2025).unwrap(),
        vec![1, 2, 0, 0, 2, 1, 2, 1, 1, 0, 0, 2]
    );
    assert_ne!(k_fold(40, 5, 1).unwrap(), k_fold(40, 5, 2).unwrap());
    assert!(matches!(
        k_fold(5, 1, 0),
        Err(CalibrateError::BadOption { .. })
    ));
    assert!(matches!(
        k_fold(5, 6, 0),
        Err(CalibrateError::BadOption { .. })
    ));
    // Hold-out: 20% of 240 held out, the same split for the same seed.
    let samples = synthetic::rar_c_samples(240, 0.02, 1).unwrap();
    let (train, test) = split_holdout(&samples, 0.2, 9).unwrap();
    assert_eq!((train.len(), test.len()), (192, 48));
    assert_eq!(split_holdout(&samples, 0.2, 9).unwrap().1, test);
    assert_ne!(split_holdout(&samples, 0.2, 10).unwrap().1, test);
    for f in [0.0, 1.0, f64::NAN] {
        assert!(matches!(
            split_holdout(&samples, f, 9),
            Err(CalibrateError::BadOption { .. })
        ));
    }
}

// ---------------------------------------------------------------------------
// Predictor and its target
// ---------------------------------------------------------------------------

/// An intercept-only model of RAR-C data: a deliberately wrong model.
#[derive(Debug, Clone)]
struct Intercept;

impl IterationTime for Intercept {
    type Config = RarJobConfig;
    fn iteration_time_s(&self, _cfg: &RarJobConfig) -> Result<f64, TimingError> {
        Ok(1.0)
    }
    fn samples_per_iteration(&self, _cfg: &RarJobConfig) -> f64 {
        1.0
    }
}

impl LinearInParameters for Intercept {
    fn param_names(&self) -> &'static [&'static str] {
        &["constant"]
    }
    fn features(&self, _cfg: &RarJobConfig) -> Result<Vec<f64>, TimingError> {
        Ok(vec![1.0])
    }
    fn signs(&self) -> Vec<Sign> {
        vec![Sign::NonNeg]
    }
    fn params(&self) -> Vec<f64> {
        vec![1.0]
    }
    fn with_params(&self, _theta: &[f64]) -> Result<Self, TimingError> {
        Ok(Intercept)
    }
}

#[test]
fn predictor_meets_the_target_on_r1() {
    let samples = synthetic::rar_c_samples(240, 0.02, 12).unwrap();
    let cal = Linear::new(synthetic::rar_c_template(), FitOptions::default());
    let p = Predictor::holdout(&cal, &samples, 0.2, 3).unwrap();
    let mape = p.heldout_mape_pct().unwrap();
    assert!(mape < 3.0, "held-out MAPE {mape}");
    assert!(p.meets_target(10.0) && p.validated());
    assert!(!p.meets_target(mape));
    let Some(Validation::Holdout { n_train, test }) = &p.validation else {
        panic!("no hold-out");
    };
    assert_eq!((*n_train, test.n), (192, 48));
    assert_eq!(p.certify(RunInfo::new()).timing_model_validated, Some(true));
    // The predictor is a timing model: it delegates to the fitted one.
    let cfg = rar_config(32, 4, 2);
    assert_eq!(
        p.iteration_time_s(&cfg).unwrap(),
        p.model.iteration_time_s(&cfg).unwrap()
    );
    assert_eq!(p.samples_per_iteration(&cfg), 32.0 * 32.0);
    // Cross-validated: the mean of the folds, each below the target.
    let cv = Predictor::cross_validated(&cal, &samples, 5, 3).unwrap();
    let Some(Validation::CrossValidation(report)) = &cv.validation else {
        panic!("no cross-validation");
    };
    assert_eq!(report.fold_mape_pct.len(), 5);
    let mean = report.fold_mape_pct.iter().sum::<f64>() / 5.0;
    assert!((report.mean_mape_pct - mean).abs() < 1e-12);
    assert!(report.max_fold_mape_pct < 3.0 && report.mean_r2.unwrap() > 0.99);
    assert_eq!(cv.heldout_mape_pct(), Some(report.mean_mape_pct));
    assert_eq!(cv.fit.n, 240);
}

#[test]
fn a_wrong_model_misses_the_target_and_the_certificate_says_so() {
    let samples = synthetic::rar_c_samples(240, 0.02, 12).unwrap();
    let p = Predictor::holdout(
        &Linear::new(Intercept, FitOptions::default()),
        &samples,
        0.2,
        3,
    )
    .unwrap();
    let mape = p.heldout_mape_pct().unwrap();
    assert!(mape > 25.0, "held-out MAPE {mape}");
    assert!(!p.meets_target(10.0) && !p.validated());
    let run = p.certify(RunInfo::new());
    assert_eq!(run.timing_model_validated, Some(false));
    let cert = dmlsched::Certificate::new(
        "test",
        dmlsched::certificate::Sense::Minimise,
        1.0,
        dmlsched::certificate::Bound::new(1.0, dmlsched::certificate::BoundKind::LpPrimal),
    );
    let cert = dmlsched::Certificate { run, ..cert };
    assert!(cert.to_string().contains("timing model NOT validated"));
    // Without validation a predictor never meets a target.
    let bare = Predictor {
        validation: None,
        ..p
    };
    assert!(bare.heldout_mape_pct().is_none() && !bare.meets_target(100.0));
    assert_eq!(RunInfo::new().timing_model_validated, None);
}

#[test]
fn cross_validation_needs_enough_training_samples() {
    let samples = synthetic::rar_c_samples(10, 0.02, 1).unwrap();
    let cal = Linear::new(synthetic::rar_c_template(), FitOptions::default());
    assert_eq!(
        cross_validate(&cal, &samples, 2, 0).unwrap_err(),
        CalibrateError::EmptyFold {
            fold: 0,
            train: 5,
            needed: 6
        }
    );
}

#[cfg(feature = "serde")]
#[test]
fn run_info_flag_round_trips_and_defaults() {
    let run = RunInfo::new().with_timing_model_validated(false);
    let json = serde_json::to_string(&run).unwrap();
    assert!(json.contains("\"timing_model_validated\":false"));
    let back: RunInfo = serde_json::from_str(&json).unwrap();
    assert_eq!(back, run);
    // Unset: not written, and read back as None (older certificates).
    let json = serde_json::to_string(&RunInfo::new()).unwrap();
    assert!(!json.contains("timing_model_validated"));
    let back: RunInfo = serde_json::from_str(&json).unwrap();
    assert_eq!(back.timing_model_validated, None);
}

#[test]
fn alternation_stops_on_ties_and_cycles() {
    // Exact ties between a worker and a PS term must not count as a change,
    // and a deterministic iteration that returns to an earlier assignment
    // must stop: a few rounds on every seed, never the cap of 50.
    for seed in 1..=12 {
        for sigma in [0.0, 0.02] {
            let samples = synthetic::ps_l_samples(200, sigma, seed).unwrap();
            let (_, r) = fit_alternating(
                &synthetic::ps_l_template(),
                &samples,
                &FitOptions::default(),
                &AlternationOptions::ps_locality(),
            )
            .unwrap();
            let FitMethod::Alternation { rounds, converged } = r.method else {
                panic!("not an alternation");
            };
            assert!(rounds <= 5, "seed {seed}, σ {sigma}: {rounds} rounds");
            assert!(
                converged || sigma > 0.0,
                "seed {seed}: noise-free data must converge"
            );
        }
    }
}

/// Calibrate, then schedule: the fitted RAR-C parameters become a cluster's
/// ring parameters and a job's timing, SJF-BCO schedules on them, and the
/// certificate records whether the timing model met its target. The
/// scheduler's own iteration time on a placement equals the predictor's.
#[test]
fn a_scheduler_runs_on_the_calibrated_model_and_its_certificate_says_so() {
    use dmlsched::algorithms::sjf_bco::{SjfBco, SjfBcoParams};
    use dmlsched::model::{Cluster, Instance, Job, JobId, RarJob, Resources, WorkerCounts};

    let samples = synthetic::rar_c_samples(240, 0.02, 12).unwrap();
    let cal = Linear::new(synthetic::rar_c_template(), FitOptions::default());
    let p = Predictor::holdout(&cal, &samples, 0.2, 3).unwrap();
    let family = p.model.physical().unwrap();
    let t = family.timing;
    let mut cluster = Cluster::homogeneous(4, Resources::zero().gpus(8.0), t.intra_bps);
    cluster.ring = family.ring_params();
    let job = |id: u32, workers: u32| {
        let ring = RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations: 2_000,
            model_bytes: t.model_bytes,
            minibatch_size: t.minibatch_size,
            forward_per_sample_s: 0.0,
            backward_per_iteration_s: t.compute_s,
            worker: Resources::zero().gpus(1.0),
            ..RarJob::default()
        };
        Job::new(JobId(id), 0.0, ring)
    };
    let jobs = vec![job(0, 8), job(1, 16), job(2, 4), job(3, 12)];
    let instance = Instance::new(cluster.clone(), jobs, 10.0, 100_000).unwrap();
    let mut solved = SjfBco::new(SjfBcoParams::default())
        .and_then(|a| a.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    // The scheduler evaluates the same formula as the predictor: a 16-worker
    // ring over 2 servers with one contender.
    let timing = dmlsched::timing::RarTiming::from_job(
        match &instance.jobs()[1].architecture {
            dmlsched::model::Architecture::RingAllReduce(r) => r,
            _ => unreachable!(),
        },
        16,
        t.intra_bps,
        &cluster.ring,
    )
    .unwrap();
    let predicted = p.iteration_time_s(&rar_config(16, 2, 1)).unwrap();
    let scheduled = timing.iteration_time_s(2, 1.0);
    assert!(
        (predicted - scheduled).abs() <= 1e-9 * predicted,
        "{predicted} vs {scheduled}"
    );
    solved.certificate.run = p.certify(solved.certificate.run.clone());
    assert_eq!(solved.certificate.run.timing_model_validated, Some(true));
    solved.certificate.check(1e-9).unwrap();
    dmlsched::schedule::verify(&instance, &solved.schedule).unwrap();
}

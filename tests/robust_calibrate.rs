//! Robustness of calibration: hostile measurements, weights, configurations
//! and options give a finite fit or a typed error, never a panic, never a
//! hang (every case under the watchdog).

mod common;

use common::{WATCHDOG_S, within};
use dmlsched::calibrate::*;
use dmlsched::timing::PsPlacement;
use proptest::prelude::*;

/// A fit is an answer if its parameters are finite and its metrics are not
/// NaN; an error is an answer if it says something.
fn finite_or_typed(result: Result<FitReport, CalibrateError>, what: &str) {
    match result {
        Ok(r) => {
            assert!(
                r.theta.iter().all(|t| t.is_finite()),
                "{what}: θ = {:?}",
                r.theta
            );
            let a = &r.accuracy;
            assert!(
                !(a.mape_pct.is_nan() || a.rmse_s.is_nan() || a.max_ape_pct.is_nan()),
                "{what}: NaN metric {a:?}"
            );
            assert!(!r.loss_value.is_nan(), "{what}: NaN loss");
        }
        Err(e) => assert!(!e.to_string().is_empty(), "{what}: empty message"),
    }
}

/// Runs the linear fit, the ξ₁ profile and hold-out validation on RAR-C
/// samples, each under the watchdog.
fn rar_answers(samples: Vec<Sample<RarJobConfig>>, opts: FitOptions, what: String) {
    let s = samples.clone();
    let w = what.clone();
    within(WATCHDOG_S, &what, move || {
        let t = synthetic::rar_c_template();
        finite_or_typed(
            fit_linear(&t, &s, &opts).map(|(_, r)| r),
            &format!("{w}: linear"),
        );
        let profile = ProfileOptions::default();
        finite_or_typed(
            fit_contention_profile(&t, &s, &opts, &profile).map(|(_, r)| r),
            &format!("{w}: profile"),
        );
        match Predictor::holdout(&Linear::new(t, opts), &s, 0.25, 1) {
            Ok(p) => assert!(!p.heldout_mape_pct().unwrap().is_nan()),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
        let _ = cross_validate(&Linear::new(t, opts), &s, 3, 1);
    });
}

fn cfg(workers: u32, servers: u32, contention: u32) -> RarJobConfig {
    RarJobConfig {
        workers,
        servers,
        contention,
    }
}

#[test]
fn hostile_measurements_and_counts() {
    let base = synthetic::rar_c_samples(30, 0.02, 4).unwrap();
    let with = |i: usize, v: f64| {
        let mut s = base.clone();
        s[i].measured_s = v;
        s
    };
    let cases: Vec<(&str, Vec<Sample<RarJobConfig>>)> = vec![
        ("NaN", with(3, f64::NAN)),
        ("+inf", with(3, f64::INFINITY)),
        ("zero", with(0, 0.0)),
        ("negative zero", with(0, -0.0)),
        ("1e-300", with(5, 1e-300)),
        ("subnormal", with(5, 5e-324)),
        ("1e300", with(5, 1e300)),
        ("f64::MAX", with(5, f64::MAX)),
        (
            "all 1e-300",
            base.iter().map(|s| Sample::new(s.config, 1e-300)).collect(),
        ),
        (
            "all f64::MAX",
            base.iter()
                .map(|s| Sample::new(s.config, f64::MAX))
                .collect(),
        ),
        ("one sample", base[..1].to_vec()),
        ("no sample", Vec::new()),
        (
            "huge counts",
            (0..12)
                .map(|i| {
                    Sample::new(
                        cfg(u32::MAX - i, (i % 4) + 1, u32::MAX - i),
                        1.0 + f64::from(i),
                    )
                })
                .collect(),
        ),
        (
            "servers = workers = u32::MAX",
            (0..8)
                .map(|i| Sample::new(cfg(u32::MAX, u32::MAX - i, i), 0.5))
                .collect(),
        ),
        ("invalid configuration", {
            let mut s = base.clone();
            s[2].config = cfg(0, 1, 0);
            s
        }),
        (
            "all weights zero",
            base.iter().map(|s| s.clone().with_weight(0.0)).collect(),
        ),
        ("NaN weight", {
            let mut s = base.clone();
            s[1].weight = f64::NAN;
            s
        }),
        (
            "huge weights",
            base.iter().map(|s| s.clone().with_weight(1e300)).collect(),
        ),
        ("identical samples", vec![base[0].clone(); 20]),
    ];
    for (what, samples) in cases {
        for opts in [
            FitOptions::default(),
            {
                let mut built = FitOptions::default();
                built.loss = Loss::Absolute;
                built.constraints = Constraints::Unconstrained;
                built
            },
            {
                let mut built = FitOptions::default();
                built.ridge = 1e-3;
                built
            },
        ] {
            rar_answers(samples.clone(), opts, format!("{what} {opts:?}"));
        }
    }
}

#[test]
fn hostile_options() {
    let samples = synthetic::rar_c_samples(30, 0.02, 4).unwrap();
    for opts in [
        {
            let mut built = FitOptions::default();
            built.ridge = f64::NAN;
            built
        },
        {
            let mut built = FitOptions::default();
            built.ridge = -1.0;
            built
        },
        {
            let mut built = FitOptions::default();
            built.ridge = f64::INFINITY;
            built
        },
        {
            let mut built = FitOptions::default();
            built.ridge = 1e300;
            built
        },
        {
            let mut built = FitOptions::default();
            built.rank_tol = Some(f64::NAN);
            built
        },
        {
            let mut built = FitOptions::default();
            built.rank_tol = Some(1e300);
            built
        },
        {
            let mut built = FitOptions::default();
            built.rank_tol = Some(0.0);
            built
        },
        {
            let mut built = FitOptions::default();
            built.cond_warn = 0.0;
            built
        },
        {
            let mut built = FitOptions::default();
            built.cond_warn = f64::NAN;
            built
        },
    ] {
        rar_answers(samples.clone(), opts, format!("{opts:?}"));
    }
    let t = synthetic::rar_c_template();
    for grid in [vec![], vec![f64::NAN], vec![1e-300], vec![1.0; 50]] {
        let mut p = ProfileOptions::default();
        p.grid = grid;
        finite_or_typed(
            fit_contention_profile(&t, &samples, &FitOptions::default(), &p).map(|(_, r)| r),
            "profile grid",
        );
    }
    for tolerance in [0.0, f64::NAN, 1e-300] {
        let mut p = ProfileOptions::default();
        p.tolerance = tolerance;
        finite_or_typed(
            fit_contention_profile(&t, &samples, &FitOptions::default(), &p).map(|(_, r)| r),
            "profile tolerance",
        );
    }
}

#[test]
fn hostile_placements_and_layered_configurations() {
    let huge = PsPlacement {
        machines: vec![(u32::MAX, 1), (0, u32::MAX), (u32::MAX, u32::MAX)],
    };
    // Counting machines must not add two u32 counts (it once overflowed).
    assert_eq!(huge.machines_used(), 3);
    let empty = PsPlacement { machines: vec![] };
    let base = synthetic::ps_l_samples(30, 0.02, 2).unwrap();
    let variants: Vec<Vec<Sample<PsPlacement>>> = vec![
        base.iter()
            .map(|s| Sample::new(huge.clone(), s.measured_s))
            .collect(),
        {
            let mut s = base.clone();
            s[4].config = empty.clone();
            s
        },
        {
            let mut s = base.clone();
            s[4].config = huge.clone();
            s[5].measured_s = 1e-300;
            s
        },
        base[..3].to_vec(),
    ];
    for (i, samples) in variants.into_iter().enumerate() {
        within(WATCHDOG_S, &format!("placement variant {i}"), move || {
            for alt in [
                AlternationOptions::ps_locality(),
                AlternationOptions::default(),
                {
                    let mut built = AlternationOptions::default();
                    built.start = Some(vec![f64::NAN; 5]);
                    built.max_rounds = 3;
                    built
                },
                {
                    let mut built = AlternationOptions::default();
                    built.start = Some(vec![1.0]);
                    built.max_rounds = 50;
                    built
                },
                {
                    let mut built = AlternationOptions::default();
                    built.start = None;
                    built.max_rounds = 0;
                    built
                },
            ] {
                let r = fit_alternating(
                    &synthetic::ps_l_template(),
                    &samples,
                    &FitOptions::default(),
                    &alt,
                );
                finite_or_typed(r.map(|(_, r)| r), "alternation");
            }
        });
    }
    let pw = synthetic::ps_w_samples(20, 0.02, 2).unwrap();
    let layered: Vec<Vec<Sample<(u32, u32)>>> = vec![
        pw.iter()
            .map(|s| Sample::new((u32::MAX, 1), s.measured_s))
            .collect(),
        pw.iter()
            .map(|s| Sample::new((1, u32::MAX), s.measured_s))
            .collect(),
        {
            let mut s = pw.clone();
            s[0].config = (0, 3);
            s
        },
        pw.iter().map(|s| Sample::new(s.config, 1e-300)).collect(),
        pw.iter().map(|s| Sample::new(s.config, f64::MAX)).collect(),
    ];
    for (i, samples) in layered.into_iter().enumerate() {
        within(WATCHDOG_S, &format!("layered variant {i}"), move || {
            for search in [
                SearchOptions::default(),
                {
                    let mut built = SearchOptions::default();
                    built.kappa_range = (0.0, 1.0);
                    built
                },
                {
                    let mut built = SearchOptions::default();
                    built.inverse_bandwidth_range = (1.0, f64::INFINITY);
                    built
                },
                {
                    let mut built = SearchOptions::default();
                    built.grid_points = Some(1);
                    built
                },
                {
                    let mut built = SearchOptions::default();
                    built.min_step = 0.0;
                    built
                },
                {
                    let mut built = SearchOptions::default();
                    built.max_evaluations = 0;
                    built.separate_bandwidths = true;
                    built
                },
                {
                    let mut built = SearchOptions::default();
                    built.kappa_range = (1e-300, 1e300);
                    built.inverse_bandwidth_range = (1e-300, 1e300);
                    built
                },
            ] {
                let r = fit_layered(
                    &synthetic::ps_w_template(),
                    &samples,
                    &FitOptions::default(),
                    &search,
                );
                finite_or_typed(r.map(|(_, r)| r), "layered");
            }
        });
    }
}

#[test]
fn many_samples_in_bounded_time() {
    let samples = synthetic::rar_c_samples(20_000, 0.05, 3).unwrap();
    within(WATCHDOG_S, "20 000 RAR-C samples", move || {
        let (_, r) = fit_linear(
            &synthetic::rar_c_template(),
            &samples,
            &FitOptions::default(),
        )
        .unwrap();
        assert!(r.accuracy.mape_pct < 6.0);
    });
}

/// A hostile measurement: normal values mixed with NaN, infinities, 0,
/// negatives, subnormals and extremes.
fn measurement() -> impl Strategy<Value = f64> {
    prop_oneof![
        6 => 1e-3f64..10.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(0.0),
        1 => -10.0f64..0.0,
        1 => Just(5e-324),
        1 => Just(1e-300),
        1 => Just(f64::MAX),
    ]
}

fn count() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..40, 1 => Just(u32::MAX), 1 => (u32::MAX - 3)..=u32::MAX]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn random_hostile_samples(
        rows in prop::collection::vec((count(), count(), count(), measurement(), prop_oneof![4 => Just(1.0), 1 => 0.0f64..1e6, 1 => Just(f64::NAN)]), 0..40),
        absolute in any::<bool>(),
        unconstrained in any::<bool>(),
        ridge in prop_oneof![3 => Just(0.0), 1 => 0.0f64..10.0, 1 => Just(f64::NAN)],
    ) {
        let samples: Vec<_> = rows
            .iter()
            .map(|&(w, s, p, y, wt)| Sample::new(cfg(w, s, p), y).with_weight(wt))
            .collect();
        let mut opts = FitOptions::default();
        opts.loss = if absolute { Loss::Absolute } else { Loss::Relative };
        opts.constraints = if unconstrained { Constraints::Unconstrained } else { Constraints::FromModelSigns };
        opts.ridge = ridge;
        rar_answers(samples, opts, format!("{rows:?} {opts:?}"));
    }

    #[test]
    fn random_valid_data_fit_finitely(
        n in 6usize..80,
        sigma in 0.0f64..0.5,
        seed in any::<u64>(),
    ) {
        let samples = synthetic::rar_c_samples(n, sigma, seed).unwrap();
        // Valid but possibly degenerate data: a finite fit or a typed
        // identifiability error, never another failure.
        match fit_linear(&synthetic::rar_c_template(), &samples, &FitOptions::default()) {
            Ok((_, r)) => prop_assert!(r.theta.iter().all(|t| t.is_finite() && *t >= 0.0)),
            Err(e) => prop_assert!(
                matches!(e, CalibrateError::ZeroFeature { .. } | CalibrateError::RankDeficient { .. }),
                "{e}"
            ),
        }
    }
}

//! The acceptance thresholds of the SJF-BCO reproduction (seeds 0..=9,
//! paper-synthetic calibration), asserted. Compiled in release mode only
//! (27 s in a debug build, 4 s in release): `cargo test --release -p dmlsched-experiments --test
//! sjf_bco_thresholds`, which `.ci/run` runs.
#![cfg(not(debug_assertions))]

use dmlsched::algorithms::sjf_bco::{
    KappaSpec, LambdaSpec, RarFf, RarLs, RarRand, SjfBco, SjfBcoParams, SjfBcoReport,
};
use dmlsched::algorithms::{Algorithm, Solved};
use dmlsched::model::Instance;
use dmlsched::schedule::verify;
use dmlsched_experiments::sjf_bco::{
    Calibration, HORIZON_20, HORIZON_FIG6, paper_instance, paper_params, rand_rng,
};

const SEEDS: std::ops::RangeInclusive<u64> = 0..=9;

fn checked(inst: &Instance, s: dmlsched::Result<Solved<SjfBcoReport>>) -> u64 {
    let s = s.expect("a schedule");
    verify(inst, &s.schedule).expect("verify");
    s.certificate.check(1e-9).expect("certificate");
    s.report.makespan_reported
}

/// Makespans of SJF-BCO, LS, FF, RAND on one instance with horizon `t`.
fn four(inst: &Instance, seed: u64, t: u64) -> [u64; 4] {
    let p = paper_params(t);
    [
        checked(
            inst,
            SjfBco::new(p.clone()).and_then(|a| a.solve(inst, &mut rand_rng(0))),
        ),
        checked(
            inst,
            RarLs::new(p.clone()).and_then(|a| a.solve(inst, &mut rand_rng(0))),
        ),
        checked(
            inst,
            RarFf::new(p.clone()).and_then(|a| a.solve(inst, &mut rand_rng(0))),
        ),
        checked(
            inst,
            RarRand::new(p).and_then(|a| a.solve(inst, &mut rand_rng(seed))),
        ),
    ]
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

fn column(rows: &[[u64; 4]], i: usize) -> Vec<u64> {
    rows.iter().map(|r| r[i]).collect()
}

fn inst(seed: u64, servers: u32) -> Instance {
    paper_instance(seed, servers, Calibration::PaperSynthetic).unwrap()
}

#[test]
fn e4_and_e6_policies_by_cluster_size() {
    let mut means_by_size = Vec::new();
    for (servers, t) in [
        (20, HORIZON_20),
        (10, HORIZON_FIG6),
        (15, HORIZON_FIG6),
        (20, HORIZON_FIG6),
    ] {
        let rows: Vec<[u64; 4]> = SEEDS
            .map(|seed| four(&inst(seed, servers), seed, t))
            .collect();
        let m: Vec<f64> = (0..4).map(|i| mean(&column(&rows, i))).collect();
        println!(
            "{servers} servers, T = {t}: SJF-BCO {:.1}, LS {:.1}, FF {:.1}, RAND {:.1}; ratios LS {:.3} FF {:.3} RAND {:.3}; rows {rows:?}",
            m[0],
            m[1],
            m[2],
            m[3],
            m[0] / m[1],
            m[0] / m[2],
            m[0] / m[3]
        );
        if t == HORIZON_20 {
            assert!(m[0] <= 0.92 * m[1], "E4: SJF-BCO {} vs LS {}", m[0], m[1]);
            assert!(m[0] <= 0.92 * m[2], "E4: SJF-BCO {} vs FF {}", m[0], m[2]);
            assert!(m[0] <= 0.65 * m[3], "E4: SJF-BCO {} vs RAND {}", m[0], m[3]);
            let wins = rows.iter().filter(|r| r[0] <= r[1]).count();
            assert!(wins >= 8, "E4: SJF-BCO ≤ LS on {wins} of 10 seeds");
        } else {
            assert!(
                m[0] <= m[1] && m[0] <= m[2] && m[0] <= m[3],
                "E6 at {servers}: {m:?}"
            );
            means_by_size.push(m[0]);
        }
    }
    assert!(
        means_by_size[0] > means_by_size[1] && means_by_size[1] > means_by_size[2],
        "E6: SJF-BCO means by 10, 15, 20 servers {means_by_size:?}"
    );
}

fn sjf_mean(params: &SjfBcoParams) -> (f64, Vec<u64>) {
    let v: Vec<u64> = SEEDS
        .map(|seed| {
            let i = inst(seed, 20);
            checked(
                &i,
                SjfBco::new(params.clone()).and_then(|a| a.solve(&i, &mut rand_rng(0))),
            )
        })
        .collect();
    (mean(&v), v)
}

#[test]
fn e5_kappa_sweep() {
    let mut by_kappa = Vec::new();
    for k in [1, 2, 4, 8, 10, 16, 32] {
        let mut p = paper_params(HORIZON_20);
        p.kappas = KappaSpec::Fixed(k);
        let (m, v) = sjf_mean(&p);
        println!("E5 κ = {k}: mean {m:.1} {v:?}");
        by_kappa.push((k, m, v));
    }
    let k32 = by_kappa[6].1;
    let best = by_kappa
        .iter()
        .filter(|(k, _, _)| [1, 2, 4, 8, 16].contains(k))
        .map(|(_, m, _)| *m)
        .fold(f64::INFINITY, f64::min);
    assert!(best <= 0.95 * k32, "E5: best mixed {best} vs κ = 32 {k32}");
    assert_eq!(by_kappa[3].2, by_kappa[4].2, "E5: κ = 8 and κ = 10 differ");
}

#[test]
fn e7_lambda_sweep() {
    let mut by_lambda = Vec::new();
    for l in [1.0, 2.0, 4.0, 8.0] {
        let mut p = paper_params(HORIZON_20);
        p.kappas = KappaSpec::Fixed(1);
        p.lambda = LambdaSpec::Uniform(l);
        let (m, v) = sjf_mean(&p);
        println!("E7 λ = {l}: mean {m:.1} {v:?}");
        by_lambda.push(m);
    }
    let best = by_lambda[1..].iter().copied().fold(f64::INFINITY, f64::min);
    assert!(best <= by_lambda[0], "E7: {by_lambda:?}");
}

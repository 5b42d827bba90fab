//! The allocation policies against Gavel's own answers: every case of
//! `../shared/gavel-cases/` (inputs with the objective Gavel's code reaches
//! and an independent exact LP's optimum), read by path.
#![cfg(all(feature = "highs", feature = "serde"))]

use dmlsched::allocate::{AllocationInput, AllocationPolicy, allocate};

/// The folder of Gavel's cases: `DMLSCHED_GAVEL_CASES` when set, else
/// `../shared/gavel-cases` beside the checkout. Fails, saying so, when it
/// is absent.
fn cases_dir() -> std::path::PathBuf {
    let dir = std::env::var_os("DMLSCHED_GAVEL_CASES")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/gavel-cases")
        });
    assert!(
        dir.join("README.md").is_file(),
        "Gavel's policy cases are not at {} (set DMLSCHED_GAVEL_CASES)",
        dir.display()
    );
    dir
}

/// Gavel's policy name → ours.
fn policy(gavel: &str) -> AllocationPolicy {
    match gavel {
        "max_min_fairness" => AllocationPolicy::MaxMinFairness,
        "max_min_fairness_perf" => AllocationPolicy::MaxMinFairnessPerf,
        "finish_time_fairness_perf" => AllocationPolicy::FinishTimeFairness,
        "max_sum_throughput_perf" => AllocationPolicy::MaxSumThroughput,
        "max_sum_throughput_normalized_by_cost_perf" => AllocationPolicy::MaxThroughputPerCost,
        "min_total_duration_perf" => AllocationPolicy::MinMakespan,
        other => panic!("unknown Gavel policy {other}"),
    }
}

#[test]
fn every_gavel_case_agrees_with_gavel() {
    let mut files: Vec<_> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 18, "{files:?}");
    let mut seen = std::collections::BTreeSet::new();
    for path in files {
        let case: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let p = policy(case["policy"].as_str().unwrap());
        seen.insert(p);
        let input = AllocationInput::from_json(&case["input"].to_string()).unwrap();
        let a = allocate(p, &input).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ours = a.objective.unwrap();
        let gavel = case["gavel_objective"].as_f64().unwrap();
        let exact = case["check_objective"].as_f64().unwrap();
        let cert = a.certificate.as_ref().unwrap();
        cert.check(1e-9).unwrap_or_else(|e| panic!("{name}: {e}"));
        let bound = cert.relaxation_bound.value;
        if p == AllocationPolicy::MinMakespan {
            // Gavel's bisection stops above the optimum: ours is at most
            // Gavel's, and at the exact LP's optimum.
            assert!(
                ours <= gavel * (1.0 + 1e-9),
                "{name}: ours {ours}, Gavel {gavel}"
            );
            assert!(
                (ours - exact).abs() <= 1e-4 * exact,
                "{name}: ours {ours}, exact {exact}"
            );
        } else {
            assert!(
                (ours - gavel).abs() <= 1e-4 * gavel.abs(),
                "{name}: ours {ours}, Gavel {gavel}"
            );
        }
        // The bound brackets the optimum with the objective, tightly.
        assert!(
            (bound - ours).abs() <= 1e-6 * ours.abs().max(1e-12),
            "{name}: objective {ours}, bound {bound}"
        );
        check_feasible(&name, &input, &a);
    }
    assert_eq!(seen.len(), 6);
}

/// Gavel's constraints hold exactly.
fn check_feasible(name: &str, input: &AllocationInput, a: &dmlsched::allocate::Allocation) {
    for (i, row) in a.fractions.iter().enumerate() {
        assert!(
            row.iter().all(|&x| (0.0..=1.0).contains(&x)),
            "{name}: job {i}"
        );
        assert!(
            row.iter().sum::<f64>() <= 1.0,
            "{name}: job {i} sums {row:?}"
        );
    }
    for (j, t) in a.types.iter().enumerate() {
        let used: f64 = input
            .jobs
            .iter()
            .zip(&a.fractions)
            .map(|(job, row)| f64::from(job.scale_factor) * row[j])
            .sum();
        assert!(
            used <= f64::from(input.gpu_types[t]),
            "{name}: type {t} uses {used}"
        );
    }
}

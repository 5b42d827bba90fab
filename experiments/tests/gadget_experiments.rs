//! The GADGET-style scenarios (`experiments::gadget`): determinism, the
//! drawn counts and distributions, valid instances the scheduler runs on,
//! typed errors, and the Philly window (only when `DMLSCHED_TRACES` names
//! the folder of the public traces; skipped with a message otherwise).

use std::collections::BTreeMap;
use std::path::PathBuf;

use dmlsched::algorithms::gadget::{FairnessWeighting, GadgetParams};
use dmlsched::model::units::{gb, gbps, slot_of};
use dmlsched::model::{Architecture, Discipline, Instance, RarJob};
use dmlsched_experiments::gadget::*;
use dmlsched_experiments::oasis::repro::JobClass;

fn ring(instance: &Instance, i: usize) -> &RarJob {
    match &instance.jobs()[i].architecture {
        Architecture::RingAllReduce(r) => r,
        Architecture::ParameterServer(_) => panic!("job {i} is not a ring"),
    }
}

fn share<T>(items: &[T], keep: impl Fn(&T) -> bool) -> f64 {
    items.iter().filter(|x| keep(x)).count() as f64 / items.len() as f64
}

#[test]
fn same_seed_same_instance_and_loads_keep_job_attributes() {
    let a = GadgetScenario::synthetic(0.5)
        .generate(11, GadgetVariant::BASE)
        .unwrap();
    let b = GadgetScenario::synthetic(0.5)
        .generate(11, GadgetVariant::BASE)
        .unwrap();
    assert_eq!(a.instance, b.instance);
    assert_eq!(a.draws, b.draws);
    assert_eq!(a.params, b.params);
    let c = GadgetScenario::synthetic(0.5)
        .generate(12, GadgetVariant::BASE)
        .unwrap();
    assert_ne!(a.draws, c.draws);
    // Job i keeps its size, model and utility draws at another load.
    let twice = GadgetScenario::synthetic(1.0)
        .generate(11, GadgetVariant::BASE)
        .unwrap();
    for (x, y) in a.draws.iter().zip(&twice.draws) {
        assert_eq!((x.gpus, x.model, x.g1), (y.gpus, y.model, y.g1));
        assert_eq!(x.iterations_requested, y.iterations_requested);
    }
}

#[test]
fn synthetic_counts_cluster_and_arrivals() {
    for (load, jobs) in [(1.0, 400), (2.0, 800), (0.25, 100)] {
        let s = GadgetScenario::synthetic(load)
            .generate(0, GadgetVariant::BASE)
            .unwrap();
        let inst = &s.instance;
        assert_eq!(inst.jobs().len(), jobs);
        assert_eq!(s.draws.len(), jobs);
        assert_eq!(inst.horizon_slots(), 720);
        assert_eq!(inst.slot_length_s(), 60.0);
        let machines = &inst.cluster().machines;
        assert_eq!(machines.len(), 16);
        for m in machines {
            assert_eq!(m.capacity.gpus, 8.0);
            assert_eq!(m.capacity.nic_bps, gbps(25.0));
            assert_eq!(m.intra_bandwidth_bps, gb(150.0));
        }
        let mut last = 0.0;
        for j in inst.jobs() {
            assert!(j.arrival_s >= last, "arrivals are sorted");
            last = j.arrival_s;
            assert_eq!(j.arrival_s % 60.0, 0.0, "arrivals on slot boundaries");
            assert!(
                slot_of(j.arrival_s, 60.0) < 600,
                "arrivals in the first 10 h"
            );
            assert_eq!(j.discipline, Discipline::RIGID_GANG);
        }
    }
}

#[test]
fn synthetic_distributions_on_a_large_sample() {
    let s = GadgetScenario::synthetic(10.0)
        .generate(3, GadgetVariant::BASE)
        .unwrap();
    let d = &s.draws;
    assert_eq!(d.len(), 4000);
    for (g, p) in [
        (1, 0.50),
        (2, 0.0875),
        (4, 0.1625),
        (8, 0.1875),
        (16, 0.05),
        (32, 0.0125),
    ] {
        let got = share(d, |x| x.gpus == g);
        assert!((got - p).abs() < 0.025, "{g} GPUs: {got} vs {p}");
    }
    for m in ["resnet50", "googlenet", "alexnet"] {
        let got = share(d, |x| x.model == m);
        assert!((got - 1.0 / 3.0).abs() < 0.03, "{m}: {got}");
    }
    for (c, p) in [
        (JobClass::TimeInsensitive, 0.10),
        (JobClass::TimeSensitive, 0.55),
        (JobClass::TimeCritical, 0.35),
    ] {
        let got = share(d, |x| x.class == c);
        assert!((got - p).abs() < 0.03, "{c:?}: {got} vs {p}");
    }
    // LogUniform[5, 120]: ln d uniform, so its mean is the midpoint.
    let ln_mean = d.iter().map(|x| x.target_slots.ln()).sum::<f64>() / d.len() as f64;
    assert!((ln_mean - (5f64.ln() + 120f64.ln()) / 2.0).abs() < 0.05);
    let tenants: BTreeMap<&str, usize> =
        s.instance
            .jobs()
            .iter()
            .fold(BTreeMap::new(), |mut acc, j| {
                *acc.entry(j.tenant.as_deref().unwrap()).or_default() += 1;
                acc
            });
    assert_eq!(tenants.len(), 8);
    assert!(
        tenants.values().all(|&n| (400..600).contains(&n)),
        "{tenants:?}"
    );
    let arrivals_first_half = share(s.instance.jobs(), |j| j.arrival_s < 300.0 * 60.0);
    assert!((arrivals_first_half - 0.5).abs() < 0.03);
}

#[test]
fn variants_change_only_the_parameters() {
    let scenario = GadgetScenario::synthetic(0.5);
    let base = scenario.generate(2, GadgetVariant::BASE).unwrap();
    let energy = scenario.generate(2, GadgetVariant::ENERGY).unwrap();
    let fair = scenario.generate(2, GadgetVariant::FAIRNESS).unwrap();
    assert_eq!(base.instance, energy.instance);
    assert_eq!(base.instance, fair.instance);
    assert_eq!(base.params, GadgetParams::default());
    assert_eq!(fair.params, {
        let mut built = GadgetParams::default();
        built.fairness = FairnessWeighting::TenantShare { beta: 1.0 };
        built
    });
    let mut per: Vec<f64> = base
        .draws
        .iter()
        .map(|d| d.g1 / (f64::from(d.gpus) * f64::from(d.min_slots)))
        .collect();
    per.sort_by(f64::total_cmp);
    let median = per[per.len() / 2];
    assert!((energy.params.energy_price - 0.01 * median).abs() < 1e-15);
    assert_eq!(energy.params, {
        let mut built = GadgetParams::default();
        built.energy_price = energy.params.energy_price;
        built
    });
}

#[test]
fn the_scheduler_runs_on_every_variant_at_a_small_load() {
    for variant in [
        GadgetVariant::BASE,
        GadgetVariant::ENERGY,
        GadgetVariant::FAIRNESS,
    ] {
        let s = GadgetScenario::synthetic(0.1).generate(4, variant).unwrap();
        let solved = s.solve().unwrap();
        solved.certificate.check(1e-9).unwrap();
        let report = &solved.report;
        assert_eq!(report.jobs.len(), 40);
        assert!(
            report.admitted() >= 30,
            "{variant:?}: {}",
            report.admitted()
        );
        assert!(report.jobs.iter().all(|j| j.best_value.is_some()));
        assert_eq!(report.energy_price, s.params.energy_price);
    }
}

#[test]
fn custom_cluster_and_horizon() {
    let mut o = SyntheticOptions::default();
    o.load = 0.1;
    o.servers = 64;
    o.horizon_slots = 300;
    o.arrival_slots = 250;
    let s = GadgetScenario::Synthetic(o)
        .generate(0, GadgetVariant::BASE)
        .unwrap();
    assert_eq!(s.instance.cluster().machines.len(), 64);
    assert_eq!(s.instance.horizon_slots(), 300);
    assert!(s.instance.jobs().iter().all(|j| j.arrival_s < 250.0 * 60.0));
}

#[test]
fn philly_errors_are_typed() {
    let missing = GadgetScenario::philly_window(Some("/nonexistent/philly.csv".into()));
    assert!(matches!(
        missing.generate(0, GadgetVariant::BASE),
        Err(GadgetExperimentError::TraceMissing { .. })
    ));
    // A trace whose every job predates the window.
    let dir = std::env::temp_dir().join(format!("dmlsched-gadget-exp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("philly.csv");
    std::fs::write(
        &path,
        "timestamp,duration,num_gpus,gpu_time,cluster\n\
         2017-10-07 01:11:39,600.0,8,4800.0,vc1\n\
         2017-10-31 23:59:59,60.0,1,60.0,vc2\n",
    )
    .unwrap();
    let early = GadgetScenario::philly_window(Some(path.clone())).generate(0, GadgetVariant::BASE);
    assert!(matches!(
        early,
        Err(GadgetExperimentError::EmptyWindow { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
    match std::env::var_os(TRACES_ENV) {
        None => assert!(matches!(
            PhillyWindowOptions::new(None).trace_path(),
            Err(GadgetExperimentError::NoTracePath)
        )),
        Some(d) => assert_eq!(
            PhillyWindowOptions::new(None).trace_path().unwrap(),
            PathBuf::from(d).join("philly.csv")
        ),
    }
}

#[test]
fn philly_window_from_the_real_trace() {
    if std::env::var_os(TRACES_ENV).is_none() {
        eprintln!("skipping philly_window_from_the_real_trace: {TRACES_ENV} is not set");
        return;
    }
    let scenario = GadgetScenario::philly_window(None);
    let s = scenario.generate(0, GadgetVariant::BASE).unwrap();
    let again = scenario.generate(0, GadgetVariant::BASE).unwrap();
    assert_eq!(s.instance, again.instance);
    let inst = &s.instance;
    assert_eq!(inst.jobs().len(), 1000);
    assert_eq!(inst.slot_length_s(), 300.0);
    assert_eq!(inst.cluster().machines.len(), 32);
    let last = inst.jobs().iter().map(|j| j.arrival_s).fold(0.0, f64::max);
    assert_eq!(inst.horizon_slots(), slot_of(last, 300.0) + 1 + 288);
    assert_eq!(inst.jobs()[0].arrival_s, 0.0);
    for (i, d) in s.draws.iter().enumerate() {
        assert!((1..=32).contains(&d.gpus));
        assert!(d.target_slots <= 288.0 + 1e-9);
        assert!(ring(inst, i).reserved_bandwidth_bps.is_some());
        assert!(inst.jobs()[i].tenant.is_some());
    }
    // Single-server rings run about as long as the trace says.
    let one_server: Vec<_> = s.draws.iter().filter(|d| d.gpus <= 8).collect();
    let close = share(&one_server, |d| {
        let expect = d.convergence_share * d.target_slots;
        f64::from(d.min_slots) <= 1.1 * expect.ceil() + 1.0
    });
    assert!(close > 0.99, "{close}");
    let solved = s.solve().unwrap();
    solved.certificate.check(1e-9).unwrap();
    assert!(solved.report.admitted() > 0);
}

#[test]
fn experiment_errors_are_typed() {
    use dmlsched_experiments::gadget::{GadgetExperimentError, GadgetScenario, GadgetVariant};
    // A non-positive load is refused with the option's name.
    let err = GadgetScenario::synthetic(0.0)
        .generate(0, GadgetVariant::BASE)
        .unwrap_err();
    assert!(
        matches!(
            err,
            GadgetExperimentError::InvalidOption { name: "load", .. }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("invalid GADGET-style scenario option load:"),
        "{err}"
    );
}

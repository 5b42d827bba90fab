//! Every algorithm's certificate states its scope (what `OPT` ranges over:
//! the model, the horizon and the jobs), and its display never labels a
//! guarantee that bounds nothing on the instance as `[valid]`.

use dmlsched::algorithms::Algorithm;
use dmlsched::algorithms::oasis::{Oasis, OasisParams};
use dmlsched::algorithms::sjf_bco::SjfBco;
use dmlsched::certificate::{Certificate, GuaranteeStanding};
use dmlsched_experiments::gadget::GadgetMetrics;
use dmlsched_experiments::gadget::{GadgetScenario, GadgetVariant};
use dmlsched_experiments::oasis::repro::{ReproParams, generate};
use dmlsched_experiments::sjf_bco::{Calibration, paper_instance, paper_params};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// The scope names the job count and, when given, the horizon; every
/// guarantee labelled `[valid]` in the display stands as valid.
fn assert_readable(cert: &Certificate, jobs: usize, horizon: Option<u32>) {
    let scope = cert.scope.as_deref().expect("a scope");
    assert!(scope.contains(&format!("{jobs} ")), "{scope}");
    if let Some(t) = horizon {
        assert!(scope.contains(&format!("horizon of {t} slots")), "{scope}");
    }
    let text = cert.to_string();
    assert!(text.contains(&format!("\n  scope: {scope}")), "{text}");
    let valid = cert
        .guarantees
        .iter()
        .filter(|g| cert.standing(g) == GuaranteeStanding::Valid)
        .count();
    assert_eq!(text.matches("guarantee [valid]").count(), valid, "{text}");
    for g in &cert.guarantees {
        if let GuaranteeStanding::Vacuous(reason) = cert.standing(g) {
            assert!(
                text.contains(&format!("[vacuous here: {reason}]")),
                "{text}"
            );
        }
    }
}

#[test]
fn gadget_certificate_states_its_scope() {
    let setup = GadgetScenario::synthetic(0.05)
        .generate(3, GadgetVariant::BASE)
        .unwrap();
    let solved = setup.solve().unwrap();
    let n = setup.instance.jobs().len();
    assert_readable(&solved.certificate, n, Some(setup.instance.horizon_slots()));
    let metrics = GadgetMetrics::from_solved(&setup.instance, &solved);
    assert_eq!(metrics.arrived, n);
}

#[test]
fn oasis_certificate_states_its_scope() {
    let mut params = ReproParams::default();
    params.jobs = 12;
    params.horizon_slots = 60;
    let generated = generate(&mut ChaCha8Rng::seed_from_u64(5), &params).unwrap();
    let inst = &generated.instance;
    let solved = Oasis::new(OasisParams::default())
        .and_then(|a| a.solve(inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    assert_readable(&solved.certificate, 12, Some(60));
    assert!(
        solved
            .certificate
            .scope
            .as_deref()
            .unwrap()
            .contains("OASiS model")
    );
}

#[test]
fn sjf_bco_certificate_states_its_scope() {
    let inst = paper_instance(2, 4, Calibration::PaperSynthetic).unwrap();
    let solved = SjfBco::new(paper_params(1200))
        .and_then(|a| a.solve(&inst, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0)))
        .unwrap();
    assert_readable(&solved.certificate, inst.jobs().len(), None);
    assert!(
        solved
            .certificate
            .scope
            .as_deref()
            .unwrap()
            .contains("makespan")
    );
}

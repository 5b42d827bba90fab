//! The GADGET-style scheduler under overload (release; `.ci/run` runs it with
//! `cargo test --release -p dmlsched-experiments --test gadget_load`): on the synthetic scenario at
//! load 2.0 over seeds 0..=4, its mean gross utility is at least twice that
//! of strict FIFO-FF. Both are measured by `GadgetMetrics`, FIFO-FF in the
//! simulator under the same options (reserved bandwidth, stop at
//! convergence), and every schedule is verified. Release only: a debug
//! build runs it in about a minute, and `.ci/run` runs it in release anyway.
#![cfg(not(debug_assertions))]

use dmlsched::baselines::FifoFirstFitBandwidth;
use dmlsched::schedule::verify;
use dmlsched::sim::simulate;
use dmlsched_experiments::gadget::GadgetMetrics;
use dmlsched_experiments::gadget::{GadgetScenario, GadgetVariant};

#[test]
fn gadget_like_doubles_strict_fifo_ff_at_load_two() {
    let (mut ours, mut fifo) = (Vec::new(), Vec::new());
    for seed in 0..=4u64 {
        let setup = GadgetScenario::synthetic(2.0)
            .generate(seed, GadgetVariant::BASE)
            .unwrap();
        let solved = setup.solve().unwrap();
        verify(&setup.instance, &solved.schedule).unwrap();
        solved.certificate.check(1e-9).unwrap();
        let g = GadgetMetrics::from_solved(&setup.instance, &solved);
        let options = setup.params.sim_options();
        let mut policy = FifoFirstFitBandwidth::default();
        let result = simulate(&setup.instance, &mut policy, &options).unwrap();
        let f = GadgetMetrics::from_sim(&setup.instance, &result, &options, &setup.params).unwrap();
        eprintln!(
            "seed {seed}: GadgetLike {:.1} ({} admitted, {} completed), strict FIFO-FF {:.1} ({} completed)",
            g.gross_utility, g.admitted, g.completed, f.gross_utility, f.completed
        );
        ours.push(g.gross_utility);
        fifo.push(f.gross_utility);
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let (a, b) = (mean(&ours), mean(&fifo));
    eprintln!(
        "mean: GadgetLike {a:.1}, strict FIFO-FF {b:.1}, ratio {:.2}",
        a / b
    );
    assert!(a >= 2.0 * b, "GadgetLike {a} vs strict FIFO-FF {b}");
}

//! GADGET-style scheduler (after the abstract of GADGET, Yu, Tian, Ji, Wu,
//! Rajan, Liu, IEEE INFOCOM 2022; the crate's own design): per-job decision
//! time and whole runs. Target: p50 ≤ 5 ms per decision.
//!
//! * `gadget_decision`: the synthetic scenario on 64 servers × 8 GPUs with
//!   a 300-slot horizon and 800 jobs arriving over the first 250 slots
//!   (seed 0, default parameters, greedy embedding). The online loop
//!   ([`Gadget::engine`]) steps the first 400 jobs; then the oracle's best
//!   response (the search over start, shape and embedding at the current
//!   prices, which is the whole decision but for committing the plan;
//!   [`PricingOracle::best_response`] of a copy of the engine's oracle) is
//!   timed on each of the other 400 jobs at that state. Criterion measures
//!   the mean (one job per iteration, cycling); the bench also times every
//!   job alone (best of 5) and prints p50, p90 and the maximum, and the
//!   p50/p90 of the recorded wall time of decisions 400..800 of a whole
//!   run ([`GadgetReport::decision_seconds`], commit included).
//! * `gadget_run`: [`GadgetSetup::solve`] on the default synthetic
//!   scenario (16 servers × 8 GPUs, 720 slots) at load 1 (400 jobs) and 2
//!   (800 jobs), seed 0: the whole online loop, the certificate and the
//!   verified schedule.
//!
//! [`GadgetReport::decision_seconds`]: dmlsched::algorithms::gadget::GadgetReport::decision_seconds
//! [`PricingOracle::best_response`]: dmlsched::online::PricingOracle::best_response
//! [`GadgetSetup::solve`]: dmlsched_experiments::gadget::GadgetSetup::solve

#[path = "../../benches/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use rand::SeedableRng;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::algorithms::gadget::{Gadget, GadgetJob, GadgetOracle};
use dmlsched::online::{Ledger, PriceBounds, PriceView, PricingOracle};
use dmlsched_experiments::gadget::{GadgetScenario, GadgetVariant, SyntheticOptions};

/// Jobs stepped before the timed decisions.
const WARM: usize = 400;

struct State {
    oracle: GadgetOracle,
    ledger: Ledger,
    bounds: PriceBounds,
    /// The jobs after the first [`WARM`], with their index in arrival order.
    rest: Vec<(usize, GadgetJob)>,
    recorded: Vec<f64>,
}

fn scenario() -> GadgetScenario {
    GadgetScenario::Synthetic({
        let mut built = SyntheticOptions::default();
        built.load = 2.0;
        built.servers = 64;
        built.horizon_slots = 300;
        built.arrival_slots = 250;
        built
    })
}

fn state() -> State {
    let setup = scenario()
        .generate(0, GadgetVariant::BASE)
        .expect("scenario");
    assert_eq!(setup.instance.jobs().len(), 2 * WARM);
    let gadget = Gadget::new(setup.params.clone()).expect("valid parameters");
    let (mut engine, jobs) = gadget.engine(&setup.instance).expect("engine");
    for j in &jobs[..WARM] {
        engine.step(j).expect("step");
    }
    let admitted = engine.outcomes().iter().filter(|o| o.admitted()).count();
    println!("gadget_decision: {admitted} of the first {WARM} jobs admitted");
    let solved = gadget
        .solve(
            &setup.instance,
            &mut rand::rngs::ChaCha8Rng::seed_from_u64(0),
        )
        .expect("solve");
    State {
        oracle: engine.oracle().clone(),
        ledger: engine.ledger().clone(),
        bounds: engine.bounds().clone(),
        rest: jobs.into_iter().enumerate().skip(WARM).collect(),
        recorded: solved.report.decision_seconds[WARM..].to_vec(),
    }
}

fn print_quantiles(s: &mut State) {
    let view = PriceView::new(&s.ledger, &s.bounds);
    let oracle = &mut s.oracle;
    let times = common::best_of_each(&s.rest, 5, |(i, j)| oracle.best_response(*i, j, &view));
    common::print_quantiles("gadget_decision/best_response", times);
    common::print_quantiles(
        &format!(
            "gadget_decision/recorded_in_run (decisions {WARM}..{})",
            2 * WARM
        ),
        s.recorded.clone(),
    );
}

fn decision(c: &mut Criterion) {
    let mut s = state();
    print_quantiles(&mut s);
    let view = PriceView::new(&s.ledger, &s.bounds);
    let mut k = 0usize;
    let mut group = c.benchmark_group("gadget_decision");
    group.bench_function("64x8_T300_after_400_of_800", |b| {
        b.iter(|| {
            let (i, j) = &s.rest[k % s.rest.len()];
            k += 1;
            black_box(s.oracle.best_response(*i, j, &view))
        })
    });
    group.finish();
}

fn run(c: &mut Criterion) {
    let mut group = c.benchmark_group("gadget_run");
    for load in [1.0, 2.0] {
        let setup = GadgetScenario::synthetic(load)
            .generate(0, GadgetVariant::BASE)
            .expect("scenario");
        let solved = setup.solve().expect("solve");
        println!(
            "gadget_run/load_{load}: {} jobs, {} admitted, total utility {:.1}, α {:.2}",
            setup.instance.jobs().len(),
            solved.report.admitted(),
            solved.report.total_value(),
            solved.report.alpha
        );
        group.bench_function(format!("synthetic_load_{load}"), |b| {
            b.iter(|| black_box(setup.solve().expect("solve")))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = decision, run
}
criterion_main!(benches);

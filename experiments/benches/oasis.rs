//! OASiS per-job decision time (the paper reports under 1 s per job): the
//! default generator (T = 300, 50 worker + 50 PS servers, 300 jobs, seed
//! `seed_for(17, 300, 0)`), the ledger state reached after admitting or
//! rejecting the first 200 jobs ([`Oasis::engine`]), then Algorithm 2 on
//! each of the remaining 100 jobs at that state (no commit:
//! [`PricingOracle::best_response`] of a copy of the engine's oracle), under
//! both bound rules, early stop on. Targets: p50 ≤ 5 ms (η rule), ≤ 50 ms
//! (value floor).
//!
//! Criterion measures the mean over the 100 jobs (one job per iteration,
//! cycling); the bench also times every job alone (best of 5) and prints
//! p50, p90 and the maximum, which `docs/benchmarks.md` records.
//!
//! [`Oasis::engine`]: dmlsched::algorithms::oasis::Oasis::engine
//! [`PricingOracle::best_response`]: dmlsched::online::PricingOracle::best_response

#[path = "../../benches/common/mod.rs"]
mod common;

use dmlsched::algorithms::Algorithm;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dmlsched::algorithms::oasis::{Oasis, OasisJob, OasisOracle, OasisParams};
use dmlsched::online::{BoundsChoice, Ledger, PriceBounds, PriceView, PricingOracle};
use dmlsched_experiments::oasis::repro::{self, ReproParams};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

struct State {
    /// The engine's oracle (a copy answers as the engine's would).
    oracle: OasisOracle,
    ledger: Ledger,
    bounds: PriceBounds,
    /// The jobs after the first 200, with their index in arrival order.
    rest: Vec<(usize, OasisJob)>,
}

fn state(bounds: BoundsChoice) -> State {
    let mut rng = ChaCha8Rng::seed_from_u64(repro::seed_for(17, 300, 0));
    let g = repro::generate(&mut rng, &ReproParams::figure3(300)).expect("generator");
    let mut params = OasisParams::default();
    params.bounds = bounds;
    let (mut engine, jobs) = Oasis::new(params)
        .unwrap()
        .engine(&g.instance)
        .expect("engine");
    for j in &jobs[..200] {
        engine.step(j).expect("step");
    }
    State {
        oracle: engine.oracle().clone(),
        ledger: engine.ledger().clone(),
        bounds: engine.bounds().clone(),
        rest: jobs.into_iter().enumerate().skip(200).collect(),
    }
}

fn quantiles(s: &State, name: &str) {
    let view = PriceView::new(&s.ledger, &s.bounds);
    let mut oracle = s.oracle.clone();
    let times = common::best_of_each(&s.rest, 5, |(i, j)| oracle.best_response(*i, j, &view));
    common::print_quantiles(&format!("oasis_decision/{name}"), times);
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("oasis_decision");
    for (name, rule) in [
        ("eta", BoundsChoice::Eta),
        ("value_floor", BoundsChoice::ValueFloor { v_floor: None }),
    ] {
        let s = state(rule);
        quantiles(&s, name);
        let view = PriceView::new(&s.ledger, &s.bounds);
        let mut oracle = s.oracle.clone();
        let mut k = 0usize;
        group.bench_function(name, |b| {
            b.iter(|| {
                let (i, j) = &s.rest[k % s.rest.len()];
                k += 1;
                black_box(oracle.best_response(*i, j, &view))
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench
}
criterion_main!(benches);

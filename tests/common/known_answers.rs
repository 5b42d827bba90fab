//! The hand-computed known-answer programs KA1–KA6 (the instances of
//! `examples/pcip/`), test fixtures of the packing–covering engine. One
//! file serves both kinds of tests: the integration tests declare it in
//! `tests/common/mod.rs`, the library's unit tests include it as the
//! crate-private `pcip::known_answers` (`#[cfg(test)]`). The parent module
//! brings `PcBuilder`, `PcProblem`, `RowLabels` and `Sense` into scope.
//!
//! Every value below was computed exactly by hand (LP optima
//! certified by rational primal–dual pairs, integer optima by enumeration)
//! and is asserted by this crate's tests. Column indices are 0-based.
//!
//! | program | sense | LP | OPT |
//! |---|---|---|---|
//! | [`ka1`] triangle set cover | min | 3/2 at (½,½,½) | 2 (three optima) |
//! | [`ka2`] two-resource knapsack cover | min | 7 at (½,½,1) | 10 at (1,1,1) |
//! | [`ka2b`] KA2 with u = 2 | min | 6 at (0,0,3/2) | 8 at (0,0,2) |
//! | [`ka3`] totally unimodular interval cover | min | 6 at (2,1,0,0) | 6 |
//! | [`ka4`] two-dimensional 0/1 knapsack | max | 18 at (1,½,0,1) | 15 at (0,1,0,1) |
//! | [`ka5`] mixed placement (plain greedy repair stalls; its unblocking step recovers) | min | 25/2 at (½,3/2,2,½) | 15 at (1,1,2,1) |
//! | [`ka6_infeasible`] | min | infeasible | — |

use super::{PcBuilder, PcProblem, RowLabels, Sense};

/// The data below are constants that pass validation (asserted by tests).
const VALID: &str = "known-answer programs are valid";

/// KA1: triangle set cover. LP 3/2 at (1/2,1/2,1/2); OPT 2.
pub fn ka1() -> PcProblem {
    PcBuilder::new(Sense::Minimise, 3)
        .objective(vec![1.0, 1.0, 1.0])
        .covering_row(&[(0, 1.0), (2, 1.0)], 1.0)
        .covering_row(&[(0, 1.0), (1, 1.0)], 1.0)
        .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
        .build()
        .expect(VALID)
}

/// KA2: two-resource knapsack cover. LP 7 at (1/2,1/2,1); OPT 10 at (1,1,1).
pub fn ka2() -> PcProblem {
    PcBuilder::new(Sense::Minimise, 3)
        .objective(vec![3.0, 3.0, 4.0])
        .covering_row(&[(0, 2.0), (2, 2.0)], 3.0)
        .covering_row(&[(1, 2.0), (2, 2.0)], 3.0)
        .build()
        .expect(VALID)
}

/// KA2b: KA2 with u = 2. LP 6 at (0,0,3/2); OPT 8 at (0,0,2).
pub fn ka2b() -> PcProblem {
    PcBuilder::new(Sense::Minimise, 3)
        .objective(vec![3.0, 3.0, 4.0])
        .upper(0, Some(2))
        .upper(1, Some(2))
        .upper(2, Some(2))
        .covering_row(&[(0, 2.0), (2, 2.0)], 3.0)
        .covering_row(&[(1, 2.0), (2, 2.0)], 3.0)
        .build()
        .expect(VALID)
}

/// KA3: TU interval cover. LP = OPT = 6 at (2,1,0,0).
pub fn ka3() -> PcProblem {
    let mut b = PcBuilder::new(Sense::Minimise, 4).objective(vec![2.0, 2.0, 1.0, 1.5]);
    for j in 0..4 {
        b = b.upper(j, Some(3));
    }
    b.covering_row(&[(0, 1.0), (3, 1.0)], 2.0)
        .covering_row(&[(0, 1.0), (1, 1.0)], 3.0)
        .covering_row(&[(1, 1.0), (2, 1.0)], 1.0)
        .build()
        .expect(VALID)
}

/// KA4: 2-D 0/1 knapsack, max form. LP 18 at (1,1/2,0,1); OPT 15 at (0,1,0,1).
pub fn ka4() -> PcProblem {
    PcBuilder::new(Sense::Maximise, 4)
        .objective(vec![8.0, 10.0, 3.0, 5.0])
        .packing_row(&[(0, 1.0), (1, 2.0), (2, 4.0), (3, 3.0)], 6.0)
        .packing_row(&[(0, 2.0), (1, 4.0), (2, 2.0), (3, 1.0)], 5.0)
        .build()
        .expect(VALID)
}

/// KA5: mixed placement. LP 25/2 at (1/2,3/2,2,1/2); OPT 15 at (1,1,2,1).
pub fn ka5() -> PcProblem {
    let mut b = PcBuilder::new(Sense::Minimise, 4).objective(vec![4.0, 3.0, 2.0, 4.0]);
    for j in 0..4 {
        b = b.upper(j, Some(2));
    }
    b.packing_row(&[(0, 1.0), (2, 1.0)], 3.0)
        .packing_row(&[(1, 1.0), (3, 1.0)], 2.0)
        .covering_row(&[(0, 1.0), (1, 1.0)], 2.0)
        .covering_row(&[(2, 2.0), (3, 2.0)], 5.0)
        .labels(
            RowLabels {
                packing: vec!["M1".into(), "M2".into()],
                covering: vec!["A".into(), "B".into()],
                linking: vec![],
            },
            vec!["A@M1".into(), "A@M2".into(), "B@M1".into(), "B@M2".into()],
        )
        .build()
        .expect(VALID)
}

/// KA6: LP infeasible (x ≤ 1, x ≥ 2, u = 2).
pub fn ka6_infeasible() -> PcProblem {
    PcBuilder::new(Sense::Minimise, 1)
        .objective(vec![1.0])
        .upper(0, Some(2))
        .packing_row(&[(0, 1.0)], 1.0)
        .covering_row(&[(0, 1.0)], 2.0)
        .build()
        .expect(VALID)
}

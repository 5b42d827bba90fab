//! Instances of the default locality workload (drawn by the repository's
//! `dmlsched-experiments` crate, whose `locality_fixtures` test checks the
//! stored files are exactly its draws) for the shortcut equality tests.

use crate::algorithms::locality::LocalityParams;
use crate::model::Instance;

/// The stored instance `name` (`busy-seed3`, `busy-seed11`,
/// `quiet-seed5`: 14 jobs on 6 machines with a 12-slot window, or 4 jobs on
/// 4 machines with a 16-slot window, over 40 slots) and the scheduler's
/// parameters of the set-up (its window, `κ = 10`) with `seed`.
pub(crate) fn fixture(name: &str, seed: u64) -> (Instance, LocalityParams) {
    let (text, window) = match name {
        "busy-seed3" => (
            include_str!("../../../tests/data/locality-busy-seed3.json"),
            12,
        ),
        "busy-seed11" => (
            include_str!("../../../tests/data/locality-busy-seed11.json"),
            12,
        ),
        "quiet-seed5" => (
            include_str!("../../../tests/data/locality-quiet-seed5.json"),
            16,
        ),
        _ => panic!("no locality fixture {name}"),
    };
    let instance = Instance::from_json(text).expect("a stored locality instance");
    let params = LocalityParams {
        horizon: window,
        intra_factor: Some(10.0),
        seed: Some(seed),
        ..LocalityParams::default()
    };
    (instance, params)
}

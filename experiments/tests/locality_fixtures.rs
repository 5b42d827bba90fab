//! The library's unit tests of the locality scheduler's shortcuts run on
//! instances of this crate's default locality workload, stored as JSON in
//! `tests/data/` (the library cannot depend on this crate). This test
//! draws them again and checks the stored files are exactly those draws;
//! `DMLSCHED_UPDATE_FIXTURES=1` rewrites them.

use dmlsched::model::Instance;
use dmlsched_experiments::locality::{LocalityWorkload, generate};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

/// `(file, jobs, machines, window, seed)`: busy runs (prices that differ
/// per slot, jobs rejected on their LP bounds) and a quiet one (repeated
/// LP optima), over 40 slots with arrivals in the last 8.
const FIXTURES: [(&str, usize, u32, u32, u64); 3] = [
    ("locality-busy-seed3.json", 14, 6, 12, 3),
    ("locality-busy-seed11.json", 14, 6, 12, 11),
    ("locality-quiet-seed5.json", 4, 4, 16, 5),
];

fn workload(jobs: usize, machines: u32, window: u32) -> LocalityWorkload {
    LocalityWorkload {
        jobs,
        machines,
        horizon_slots: 40,
        window_slots: window,
        arrival_tail_slots: 8,
        ..LocalityWorkload::default()
    }
}

#[test]
fn stored_locality_instances_are_the_workload_draws() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data");
    let update = std::env::var_os("DMLSCHED_UPDATE_FIXTURES").is_some();
    for (file, jobs, machines, window, seed) in FIXTURES {
        let w = workload(jobs, machines, window);
        let drawn = generate(&mut ChaCha8Rng::seed_from_u64(seed), &w).unwrap();
        let path = dir.join(file);
        if update {
            std::fs::write(&path, drawn.to_json().unwrap() + "\n").unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let stored = Instance::from_json(&text).unwrap();
        assert_eq!(stored, drawn, "{file}: run with DMLSCHED_UPDATE_FIXTURES=1");
        // The unit tests run the scheduler with the set-up's window and κ.
        assert_eq!(w.params().horizon, window);
        assert_eq!(w.params().intra_factor, Some(10.0));
    }
}

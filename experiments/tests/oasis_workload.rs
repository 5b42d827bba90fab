//! The OASiS-like parameter-server workload generator: seeded, valid in an
//! instance, with a diurnal variant, and typed errors for a bad set-up.

use dmlsched::model::units::{gb, gbps};
use dmlsched::model::{Cluster, Instance, Resources};
use dmlsched_experiments::oasis::{OasisWorkload, oasis_like_ps_jobs};
use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

#[test]
fn oasis_jobs_validate_in_an_instance() {
    let p = OasisWorkload {
        jobs: 80,
        horizon_slots: 200,
        ..OasisWorkload::default()
    };
    let jobs = oasis_like_ps_jobs(&mut rng(17), &p).unwrap();
    assert_eq!(jobs.len(), 80);
    assert_eq!(oasis_like_ps_jobs(&mut rng(17), &p).unwrap(), jobs);
    let machine = Resources::zero()
        .gpus(8.0)
        .cpu_cores(64.0)
        .memory(gb(256.0))
        .storage(gb(1000.0))
        .nic(gbps(50.0));
    let cluster = Cluster::homogeneous(10, machine, gbps(100.0));
    Instance::new(cluster, jobs, p.slot_length_s, p.horizon_slots).unwrap();

    let diurnal = OasisWorkload {
        diurnal_amplitude: 0.8,
        ..p.clone()
    };
    assert!(
        !oasis_like_ps_jobs(&mut rng(17), &diurnal)
            .unwrap()
            .is_empty()
    );
    let bad = OasisWorkload {
        horizon_slots: 0,
        ..p
    };
    assert!(oasis_like_ps_jobs(&mut rng(17), &bad).is_err());
}

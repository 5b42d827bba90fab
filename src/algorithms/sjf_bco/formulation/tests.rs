//! Unit tests of the formulations' input that read SJF-BCO's crate-private
//! model (moved from `tests/sjf_bco_formulations.rs`).

use super::*;
use crate::algorithms::sjf_bco::{RarModel, TimeModel};
use crate::model::units::{gbps, mb};
use crate::model::{
    Cluster, Hosting, Instance, Job, JobId, Machine, MachineId, RarJob, Resources, WorkerCounts,
};

const INTRA: f64 = 1e10;

fn ring_cluster(gpus: &[f64]) -> Cluster {
    let mut c = Cluster::new(
        gpus.iter()
            .enumerate()
            .map(|(i, &g)| {
                Machine::new(
                    MachineId(i as u32),
                    Resources::zero().gpus(g).cpu_cores(64.0).nic(gbps(10.0)),
                    INTRA,
                )
            })
            .collect(),
    );
    c.ring.external_bandwidth_bps = 1.25e9;
    c.ring.reduction_speed_bps = 2e10;
    c.ring.overhead_per_server_s = 0.005;
    c
}

fn ring_job(id: u32, workers: u32, iterations: u64) -> Job {
    Job::new(
        JobId(id),
        0.0,
        RarJob {
            workers: WorkerCounts::Fixed(workers),
            iterations,
            model_bytes: mb(100.0),
            minibatch_size: 32,
            forward_per_sample_s: 0.001,
            backward_per_iteration_s: 0.05,
            ..RarJob::default()
        },
    )
}

fn assert_close(got: f64, want: f64) {
    assert!((got - want).abs() <= 1e-9 * want, "{got} vs {want}");
}

#[test]
fn from_instance_equals_the_rar_model() {
    // Heterogeneous: a CPU-bound machine (4 GPUs, 3 cores), a slow link,
    // a machine without GPUs, a parameter-server machine.
    let mut cluster = ring_cluster(&[4.0, 2.0, 0.0, 4.0, 8.0]);
    cluster.machines[0].capacity = Resources::zero().gpus(4.0).cpu_cores(3.0).nic(gbps(10.0));
    cluster.machines[1].intra_bandwidth_bps = 5e8;
    cluster.machines[3].hosts = Hosting::ParameterServers;
    let jobs = vec![
        ring_job(4, 3, 500),
        ring_job(1, 1, 200),
        ring_job(9, 8, 100),
        ring_job(2, 12, 50),
    ];
    let inst = Instance::new(cluster, jobs, 10.0, 1000).unwrap();
    let model = RarModel::new(&inst, TimeModel::Rar, None).unwrap();
    let inp = FormulationInput::from_instance(&inst, 1.0).unwrap();
    let servers: Vec<_> = model
        .servers
        .iter()
        .filter(|s| s.gpus > 0)
        .map(|s| FormulationServer {
            machine: s.machine,
            gpus: s.gpus,
        })
        .collect();
    assert_eq!(inp.servers(), servers);
    // Resource by resource: the cores limit machine 0 to 3 workers.
    assert_eq!(
        inp.servers(),
        [(0, 3), (1, 2), (4, 8)].map(|(m, gpus)| FormulationServer {
            machine: MachineId(m),
            gpus,
        })
    );
    let jobs: Vec<_> = model
        .jobs
        .iter()
        .map(|j| FormulationJob {
            id: j.id,
            gpus: j.gpus,
            est_exec_slots: j.min_duration,
        })
        .collect();
    assert_eq!(inp.jobs(), jobs);
    assert_eq!(
        inp.jobs().iter().map(|j| j.id.0).collect::<Vec<_>>(),
        [4, 1, 9, 2]
    );
    assert_eq!(
        FormulationInput::from_model(&model, 1.0, EstimateSource::MinDuration).unwrap(),
        inp
    );
    // The model's own estimate F·τ⁰, with b_i = 1e10 > b_e the same here.
    let est = FormulationInput::from_model(&model, 1.3, EstimateSource::Estimate).unwrap();
    for (e, m) in est.jobs().iter().zip(&model.jobs) {
        assert_eq!(e.est_exec_slots, m.estimate);
        assert_close(e.est_exec_slots, m.min_duration);
    }
    // Given estimates go through the model unchanged.
    let given = [7.0, 1.5, 30.0, 2.25];
    let with = FormulationInput::from_instance_with_estimates(&inst, &given, 1.0).unwrap();
    let model = RarModel::new(&inst, TimeModel::Rar, Some(&given)).unwrap();
    for ((w, m), g) in with.jobs().iter().zip(&model.jobs).zip(given) {
        assert_eq!((w.id, w.gpus, w.est_exec_slots), (m.id, m.gpus, g));
    }
}

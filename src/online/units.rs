//! The resource units of the parameter-server pricing schedulers' ledgers
//! (OASiS and the locality-aware scheduler): one conversion from the
//! model's SI units, and the instance's machines in those units.

use crate::model::units::{GB, to_gbps};
use crate::model::{Cluster, Instance, MachineId, Resources};

use super::ledger::{Ledger, PoolId};

/// Resource types of a parameter-server ledger, in order: GPU, vCPU,
/// memory (GB), storage (GB), NIC (Gbit/s).
pub const PS_RESOURCES: usize = 5;
/// Names of the [`PS_RESOURCES`], for reports.
pub const PS_RESOURCE_NAMES: [&str; PS_RESOURCES] =
    ["gpu", "vcpu", "memory_gb", "storage_gb", "nic_gbps"];

/// A resource vector in [`ps_units`]: `[GPU, vCPU, GB memory, GB storage,
/// Gbit/s NIC]`.
pub type PsVector = [f64; PS_RESOURCES];

/// Converts SI [`Resources`] to the parameter-server ledgers' units
/// (decimal GB, Gbit/s). The price constants and normalisers sum resources
/// of different kinds, so the unit choice is part of the algorithms; these
/// keep every entry of order 1 and are the units the OASiS paper (Bao,
/// Peng, Wu, Li, IEEE INFOCOM 2018) states its constants in.
///
/// ```
/// use dmlsched::online::ps_units;
/// use dmlsched::model::{Resources, units::{gb, gbps}};
/// let r = Resources::zero().gpus(2.0).cpu_cores(8.0).memory(gb(61.0)).storage(gb(1000.0)).nic(gbps(25.0));
/// assert_eq!(ps_units(&r), [2.0, 8.0, 61.0, 1000.0, 25.0]);
/// ```
pub fn ps_units(r: &Resources) -> PsVector {
    [
        r.gpus,
        r.cpu_cores,
        r.memory_bytes / GB,
        r.storage_bytes / GB,
        to_gbps(r.nic_bps),
    ]
}

/// The machines of `instance` by position: their ids and capacities in
/// [`ps_units`].
pub fn ps_machines(instance: &Instance) -> (Vec<MachineId>, Vec<PsVector>) {
    ps_cluster_machines(instance.cluster())
}

/// The machines of `cluster` by position: their ids and capacities in
/// [`ps_units`].
pub fn ps_cluster_machines(cluster: &Cluster) -> (Vec<MachineId>, Vec<PsVector>) {
    let machines = &cluster.machines;
    (
        machines.iter().map(|m| m.id).collect(),
        machines.iter().map(|m| ps_units(&m.capacity)).collect(),
    )
}

/// An empty ledger of `horizon` slots over machines with `capacity` in
/// [`ps_units`] (ledger machine `MachineId(p)` at position `p`), machine
/// `p` in pool `pool(p)`.
///
/// # Errors
///
/// The ledger's validation errors.
pub fn ps_ledger(
    horizon: u32,
    capacity: &[PsVector],
    pool: impl Fn(usize) -> PoolId,
) -> crate::Result<Ledger> {
    let machines = capacity
        .iter()
        .enumerate()
        .map(|(p, c)| (pool(p), c.to_vec()))
        .collect();
    Ok(Ledger::new(horizon, PS_RESOURCES, machines)?)
}

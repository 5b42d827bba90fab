//! Machines, resources, racks and the cluster.

use std::fmt;

use super::units::{BitRate, Bytes, Num};

/// Implements the shared shape of the id newtypes.
macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
        #[cfg_attr(feature = "serde", serde(transparent))]
        pub struct $name(pub u32);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, concat!($prefix, "{}"), self.0)
            }
        }
    };
}

id_type!(
    /// Identifier of a machine (server). Unique within a cluster.
    MachineId,
    "machine "
);
id_type!(
    /// Identifier of a rack. Unique within a cluster.
    RackId,
    "rack "
);

/// One GPU: a machine and the GPU's index on it (`0..gpus`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct GpuId {
    /// The machine that holds the GPU.
    pub machine: MachineId,
    /// Index of the GPU on its machine, `0..capacity.gpus`.
    pub index: u32,
}

impl fmt::Display for GpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "GPU {} of {}", self.index, self.machine)
    }
}

/// The kinds of resource a machine offers and a task consumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ResourceKind {
    /// GPUs (count; fractional demands allowed for GPU sharing).
    Gpu,
    /// CPU cores.
    Cpu,
    /// Memory, bytes.
    Memory,
    /// Storage, bytes.
    Storage,
    /// NIC bandwidth, bytes per second.
    Nic,
}

impl ResourceKind {
    /// Every kind, in the order of [`Resources::get`].
    pub const ALL: [ResourceKind; 5] = [
        ResourceKind::Gpu,
        ResourceKind::Cpu,
        ResourceKind::Memory,
        ResourceKind::Storage,
        ResourceKind::Nic,
    ];

    /// The field name used in [`Resources`] and in error messages.
    pub fn name(self) -> &'static str {
        match self {
            ResourceKind::Gpu => "gpus",
            ResourceKind::Cpu => "cpu_cores",
            ResourceKind::Memory => "memory_bytes",
            ResourceKind::Storage => "storage_bytes",
            ResourceKind::Nic => "nic_bps",
        }
    }
}

impl ResourceKind {
    /// An amount of this resource formatted for messages with its unit:
    /// GPUs and cores as plain numbers, memory and storage in bytes with a
    /// decimal prefix (`256 GB`), NIC bandwidth in bits per second
    /// (`25 Gbit/s`).
    ///
    /// ```
    /// use dmlsched::model::{ResourceKind, units::gbps};
    /// assert_eq!(ResourceKind::Nic.amount(gbps(25.0)).to_string(), "25 Gbit/s");
    /// assert_eq!(ResourceKind::Gpu.amount(4.0).to_string(), "4");
    /// ```
    pub fn amount(self, value: f64) -> Amount {
        Amount { kind: self, value }
    }
}

/// An amount of one resource, displayed with its unit
/// (see [`ResourceKind::amount`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Amount {
    kind: ResourceKind,
    value: f64,
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            ResourceKind::Gpu | ResourceKind::Cpu => fmt::Display::fmt(&Num(self.value), f),
            ResourceKind::Memory | ResourceKind::Storage => {
                fmt::Display::fmt(&Bytes(self.value), f)
            }
            ResourceKind::Nic => fmt::Display::fmt(&BitRate(self.value), f),
        }
    }
}

impl fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A vector of resources: a machine's capacity or a task's demand, in SI
/// units. Build it by name, from [`Resources::zero`] and one setter per
/// component (components not named are 0), or as a struct literal
/// (`Resources { gpus: 1.0, nic_bps: gbps(10.0), ..Resources::default() }`).
///
/// ```
/// use dmlsched::model::{Resources, units::{gb, gbps}};
/// let machine = Resources::zero().gpus(8.0).cpu_cores(64.0).memory(gb(512.0)).storage(gb(2000.0)).nic(gbps(100.0));
/// let worker = Resources::zero().gpus(1.0).cpu_cores(4.0).memory(gb(32.0)).nic(gbps(10.0));
/// assert!(worker.scaled(8.0).fits_in(&machine, 1e-9));
/// assert!(!worker.scaled(9.0).fits_in(&machine, 1e-9));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Resources {
    /// GPUs (count; may be fractional in a demand).
    pub gpus: f64,
    /// CPU cores.
    pub cpu_cores: f64,
    /// Memory in bytes.
    pub memory_bytes: f64,
    /// Storage in bytes.
    #[cfg_attr(feature = "serde", serde(default))]
    pub storage_bytes: f64,
    /// NIC bandwidth in bytes per second (per direction).
    pub nic_bps: f64,
}

impl Resources {
    /// The zero vector; the start of a named construction:
    ///
    /// ```
    /// use dmlsched::model::{Resources, units::{gb, gbps}};
    /// let machine = Resources::zero().gpus(4.0).cpu_cores(32.0).memory(gb(256.0)).nic(gbps(25.0));
    /// assert_eq!(machine.memory_bytes, 256e9);
    /// assert_eq!(machine.storage_bytes, 0.0);
    /// assert_eq!(machine.to_string(), "{gpus 4, cpu 32, mem 256 GB, storage 0 B, nic 25 Gbit/s}");
    /// ```
    pub fn zero() -> Self {
        Resources::default()
    }

    /// The same vector with `gpus` GPUs.
    #[must_use]
    pub fn gpus(mut self, gpus: f64) -> Self {
        self.gpus = gpus;
        self
    }

    /// The same vector with `cores` CPU cores.
    #[must_use]
    pub fn cpu_cores(mut self, cores: f64) -> Self {
        self.cpu_cores = cores;
        self
    }

    /// The same vector with `bytes` of memory (see [`units::gb`](super::units::gb)).
    #[must_use]
    pub fn memory(mut self, bytes: f64) -> Self {
        self.memory_bytes = bytes;
        self
    }

    /// The same vector with `bytes` of storage.
    #[must_use]
    pub fn storage(mut self, bytes: f64) -> Self {
        self.storage_bytes = bytes;
        self
    }

    /// The same vector with `bytes_per_s` of NIC bandwidth (see
    /// [`units::gbps`](super::units::gbps)).
    #[must_use]
    pub fn nic(mut self, bytes_per_s: f64) -> Self {
        self.nic_bps = bytes_per_s;
        self
    }

    /// One component.
    pub fn get(&self, kind: ResourceKind) -> f64 {
        match kind {
            ResourceKind::Gpu => self.gpus,
            ResourceKind::Cpu => self.cpu_cores,
            ResourceKind::Memory => self.memory_bytes,
            ResourceKind::Storage => self.storage_bytes,
            ResourceKind::Nic => self.nic_bps,
        }
    }

    /// Mutable access to one component.
    pub fn get_mut(&mut self, kind: ResourceKind) -> &mut f64 {
        match kind {
            ResourceKind::Gpu => &mut self.gpus,
            ResourceKind::Cpu => &mut self.cpu_cores,
            ResourceKind::Memory => &mut self.memory_bytes,
            ResourceKind::Storage => &mut self.storage_bytes,
            ResourceKind::Nic => &mut self.nic_bps,
        }
    }

    /// The components with their kinds, in [`ResourceKind::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (ResourceKind, f64)> + '_ {
        ResourceKind::ALL.into_iter().map(|k| (k, self.get(k)))
    }

    /// Component-wise sum.
    pub fn plus(&self, other: &Resources) -> Resources {
        self.zip(other, |a, b| a + b)
    }

    /// Component-wise difference (may go negative).
    pub fn minus(&self, other: &Resources) -> Resources {
        self.zip(other, |a, b| a - b)
    }

    /// Every component multiplied by `factor`.
    pub fn scaled(&self, factor: f64) -> Resources {
        self.map(|a| a * factor)
    }

    /// Component-wise maximum.
    pub fn max(&self, other: &Resources) -> Resources {
        self.zip(other, f64::max)
    }

    /// The component-wise minimum.
    #[must_use]
    pub fn min(&self, other: &Resources) -> Resources {
        self.zip(other, f64::min)
    }

    /// Whether every component is at most `capacity`'s, up to a relative
    /// tolerance `rel_tol` of the capacity (absolute for zero capacity).
    pub fn fits_in(&self, capacity: &Resources, rel_tol: f64) -> bool {
        ResourceKind::ALL.into_iter().all(|k| {
            let (d, c) = (self.get(k), capacity.get(k));
            d <= c + rel_tol * c.abs().max(1.0)
        })
    }

    /// The first component (in [`ResourceKind::ALL`] order) above
    /// `capacity`'s beyond the tolerance of [`Resources::fits_in`].
    pub fn first_excess(&self, capacity: &Resources, rel_tol: f64) -> Option<ResourceKind> {
        ResourceKind::ALL.into_iter().find(|&k| {
            let (d, c) = (self.get(k), capacity.get(k));
            d > c + rel_tol * c.abs().max(1.0)
        })
    }

    /// Whether every component is exactly zero.
    pub fn is_zero(&self) -> bool {
        self.iter().all(|(_, v)| v == 0.0)
    }

    fn map(&self, f: impl Fn(f64) -> f64) -> Resources {
        Resources::zero()
            .gpus(f(self.gpus))
            .cpu_cores(f(self.cpu_cores))
            .memory(f(self.memory_bytes))
            .storage(f(self.storage_bytes))
            .nic(f(self.nic_bps))
    }

    fn zip(&self, o: &Resources, f: impl Fn(f64, f64) -> f64) -> Resources {
        Resources::zero()
            .gpus(f(self.gpus, o.gpus))
            .cpu_cores(f(self.cpu_cores, o.cpu_cores))
            .memory(f(self.memory_bytes, o.memory_bytes))
            .storage(f(self.storage_bytes, o.storage_bytes))
            .nic(f(self.nic_bps, o.nic_bps))
    }
}

impl fmt::Display for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{{gpus {}, cpu {}, mem {}, storage {}, nic {}}}",
            Num(self.gpus),
            Num(self.cpu_cores),
            Bytes(self.memory_bytes),
            Bytes(self.storage_bytes),
            BitRate(self.nic_bps)
        )
    }
}

/// The kinds of task in a training job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum TaskKind {
    /// A worker: computes gradients (a ring-all-reduce rank is a worker).
    Worker,
    /// A parameter server.
    ParameterServer,
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TaskKind::Worker => "worker",
            TaskKind::ParameterServer => "parameter server",
        })
    }
}

/// Which task kinds a machine may host (OASiS splits the cluster into
/// worker-only and PS-only servers; the locality scheduler lets every machine
/// host both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Hosting {
    /// Workers and parameter servers.
    #[default]
    Both,
    /// Workers only.
    Workers,
    /// Parameter servers only.
    ParameterServers,
}

impl Hosting {
    /// Whether a task of this kind may run here.
    pub fn allows(self, task: TaskKind) -> bool {
        matches!(
            (self, task),
            (Hosting::Both, _)
                | (Hosting::Workers, TaskKind::Worker)
                | (Hosting::ParameterServers, TaskKind::ParameterServer)
        )
    }
}

/// One machine (server) of the cluster.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Machine {
    /// Unique id.
    pub id: MachineId,
    /// Capacity of each resource. A single zero component is allowed (a
    /// PS-only machine without GPUs); all zero is not.
    pub capacity: Resources,
    /// The rack the machine sits in, if racks are modelled.
    #[cfg_attr(feature = "serde", serde(default))]
    pub rack: Option<RackId>,
    /// Bandwidth between tasks on this machine (NVLink, PCIe, loopback), bytes
    /// per second. Used for co-located workers and PSs and for single-machine
    /// rings.
    pub intra_bandwidth_bps: f64,
    /// Which task kinds the machine may host.
    #[cfg_attr(feature = "serde", serde(default))]
    pub hosts: Hosting,
    /// The type of its GPUs, one of the cluster's
    /// [`gpu_types`](Cluster::gpu_types); `None` in a cluster that names no
    /// types (one default type) and on a machine without GPUs.
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Option::is_none")
    )]
    pub gpu_type: Option<String>,
}

impl Machine {
    /// A machine hosting both task kinds, without a rack.
    pub fn new(id: MachineId, capacity: Resources, intra_bandwidth_bps: f64) -> Self {
        Machine {
            id,
            capacity,
            rack: None,
            intra_bandwidth_bps,
            hosts: Hosting::Both,
            gpu_type: None,
        }
    }

    /// The same machine with GPUs of type `gpu_type` (a name of the
    /// cluster's [`gpu_types`](Cluster::gpu_types)).
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Machine, MachineId, Resources};
    /// let gpus = Resources::zero().gpus(4.0).cpu_cores(16.0);
    /// let cluster = Cluster::new(vec![
    ///     Machine::new(MachineId(0), gpus, 1e11).with_gpu_type("v100"),
    ///     Machine::new(MachineId(1), gpus, 1e11).with_gpu_type("k80"),
    /// ])
    /// .with_gpu_types(["v100", "k80"]);
    /// assert_eq!(cluster.machines[1].gpu_type.as_deref(), Some("k80"));
    /// ```
    pub fn with_gpu_type(mut self, gpu_type: impl Into<String>) -> Self {
        self.gpu_type = Some(gpu_type.into());
        self
    }

    /// The same machine in a rack.
    pub fn in_rack(mut self, rack: RackId) -> Self {
        self.rack = Some(rack);
        self
    }

    /// The same machine restricted to some task kinds.
    pub fn hosting(mut self, hosts: Hosting) -> Self {
        self.hosts = hosts;
        self
    }

    /// Whether a task of `kind` with `demand` may run here on an empty machine.
    pub fn can_host(&self, kind: TaskKind, demand: &Resources) -> bool {
        self.hosts.allows(kind) && demand.fits_in(&self.capacity, FIT_TOL)
    }
}

/// Relative tolerance used when comparing demands with capacities.
pub const FIT_TOL: f64 = 1e-9;

/// A rack: a group of machines behind one top-of-rack switch.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Rack {
    /// Unique id.
    pub id: RackId,
    /// Uplink bandwidth of the rack switch, bytes per second, if modelled.
    #[cfg_attr(feature = "serde", serde(default))]
    pub uplink_bps: Option<f64>,
}

/// How shared inter-server bandwidth degrades with `k` effective contenders:
/// a ring's bottleneck bandwidth is `b_ext / f(k)`. Every variant has `f(1) = 1` and is increasing in `k`.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(
    feature = "serde",
    serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)
)]
pub enum Degradation {
    /// `f(α, k) = k + α(k − 1)`: fair sharing plus an extra loss α ≥ 0 per
    /// additional contender (the SJF-BCO paper's example; default α = 0.09).
    Linear {
        /// Extra loss per additional contender, ≥ 0 (0.09 when omitted in
        /// JSON).
        #[cfg_attr(feature = "serde", serde(default = "default_alpha"))]
        alpha: f64,
    },
    /// `f(k) = k`: ideal fair sharing.
    FairShare,
}

/// The default extra loss per contender of [`Degradation::Linear`].
const DEFAULT_ALPHA: f64 = 0.09;

#[cfg(feature = "serde")]
fn default_alpha() -> f64 {
    DEFAULT_ALPHA
}

impl Default for Degradation {
    fn default() -> Self {
        Degradation::Linear {
            alpha: DEFAULT_ALPHA,
        }
    }
}

impl Degradation {
    /// `f(k)` for `k ≥ 1` effective contenders.
    pub fn factor(&self, k: f64) -> f64 {
        match *self {
            Degradation::Linear { alpha } => k + alpha * (k - 1.0),
            Degradation::FairShare => k,
        }
    }
}

/// Cluster-level parameters of the ring-all-reduce timing model (contention
/// and per-server overhead), in SI units.
///
/// In JSON every field may be left out and takes its value from
/// [`RingParams::default`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default, deny_unknown_fields))]
#[non_exhaustive]
pub struct RingParams {
    /// Inter-server link bandwidth `b^e`, bytes per second.
    pub external_bandwidth_bps: f64,
    /// Reduction speed of one GPU `C`, bytes summed per second.
    pub reduction_speed_bps: f64,
    /// Communication overhead per server used, per iteration (`ξ2`), seconds.
    pub overhead_per_server_s: f64,
    /// Ratio of effective to counted contenders (`ξ1`), in (0, 1].
    pub contender_ratio: f64,
    /// Bandwidth degradation under contention.
    pub degradation: Degradation,
}

impl Default for RingParams {
    /// 25 Gbit/s links, 100 GB/s reduction, 1 ms per-server overhead, ξ1 = 1,
    /// linear degradation with α = 0.09.
    fn default() -> Self {
        RingParams {
            external_bandwidth_bps: super::units::gbps(25.0),
            reduction_speed_bps: 100.0 * super::units::GB,
            overhead_per_server_s: 1e-3,
            contender_ratio: 1.0,
            degradation: Degradation::default(),
        }
    }
}

/// A cluster: machines, racks and network parameters.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(deny_unknown_fields))]
pub struct Cluster {
    /// The machines, in any order (ids need not be dense).
    pub machines: Vec<Machine>,
    /// The racks machines may refer to.
    #[cfg_attr(feature = "serde", serde(default))]
    pub racks: Vec<Rack>,
    /// Ring-all-reduce network parameters.
    #[cfg_attr(feature = "serde", serde(default))]
    pub ring: RingParams,
    /// The names of the cluster's GPU types (for example `v100`, `k80`),
    /// each once. Empty: one default type, as in a cluster that does not
    /// model types. When types are named, every machine with GPUs names
    /// its type ([`Machine::gpu_type`]).
    #[cfg_attr(
        feature = "serde",
        serde(default, skip_serializing_if = "Vec::is_empty")
    )]
    pub gpu_types: Vec<String>,
}

impl Cluster {
    /// A cluster without racks and with default ring parameters.
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Hosting, Machine, MachineId, Resources, TaskKind};
    /// use dmlsched::model::units::{gb, gbps};
    ///
    /// let gpu_box = Resources::zero().gpus(8.0).cpu_cores(64.0).memory(gb(512.0)).nic(gbps(25.0));
    /// let cpu_box = Resources::zero().cpu_cores(32.0).memory(gb(128.0)).nic(gbps(25.0));
    /// let cluster = Cluster::new(vec![
    ///     Machine::new(MachineId(0), gpu_box, gbps(300.0)),
    ///     Machine::new(MachineId(7), cpu_box, gbps(100.0)).hosting(Hosting::ParameterServers),
    /// ]);
    /// assert_eq!(cluster.total_capacity().gpus, 8.0);
    /// assert_eq!(cluster.total_capacity().cpu_cores, 96.0);
    /// let ps_box = cluster.machine(MachineId(7)).expect("machine 7 is listed");
    /// assert!(!ps_box.hosts.allows(TaskKind::Worker));
    /// assert!(cluster.machine(MachineId(1)).is_none());
    /// ```
    pub fn new(machines: Vec<Machine>) -> Self {
        Cluster {
            machines,
            racks: Vec::new(),
            ring: RingParams::default(),
            gpu_types: Vec::new(),
        }
    }

    /// `n` identical machines with ids `0..n` hosting both task kinds.
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Hosting, MachineId, Resources};
    /// use dmlsched::model::units::gbps;
    ///
    /// let machine = Resources::zero().gpus(4.0).cpu_cores(32.0);
    /// let cluster = Cluster::homogeneous(3, machine, gbps(200.0));
    /// assert_eq!(cluster.machines.len(), 3);
    /// assert_eq!(cluster.machines[2].id, MachineId(2));
    /// assert_eq!(cluster.machines[2].hosts, Hosting::Both);
    /// assert_eq!(cluster.total_capacity().gpus, 12.0);
    /// ```
    pub fn homogeneous(n: u32, capacity: Resources, intra_bandwidth_bps: f64) -> Self {
        Cluster::new(
            (0..n)
                .map(|i| Machine::new(MachineId(i), capacity, intra_bandwidth_bps))
                .collect(),
        )
    }

    /// The same cluster naming its GPU types (see
    /// [`Machine::with_gpu_type`]).
    pub fn with_gpu_types<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.gpu_types = names.into_iter().map(Into::into).collect();
        self
    }

    /// The distinct types of its machines with GPUs, in machine order
    /// (`None`: the default type).
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Resources};
    /// let c = Cluster::homogeneous(2, Resources::zero().gpus(8.0), 1e11);
    /// assert_eq!(c.gpu_types_present(), vec![None]);
    /// ```
    pub fn gpu_types_present(&self) -> Vec<Option<&str>> {
        let mut out: Vec<Option<&str>> = Vec::new();
        for m in self.machines.iter().filter(|m| m.capacity.gpus > 0.0) {
            let t = m.gpu_type.as_deref();
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// Whether the cluster has GPUs of more than one type.
    ///
    /// ```
    /// use dmlsched::model::{Cluster, Resources};
    /// let c = Cluster::homogeneous(2, Resources::zero().gpus(8.0), 1e11);
    /// assert!(!c.is_mixed());
    /// ```
    pub fn is_mixed(&self) -> bool {
        self.gpu_types_present().len() > 1
    }

    /// The machine with this id (linear scan; use [`crate::model::Instance`]
    /// for indexed lookup).
    pub fn machine(&self, id: MachineId) -> Option<&Machine> {
        self.machines.iter().find(|m| m.id == id)
    }

    /// Sum of all machines' capacities.
    pub fn total_capacity(&self) -> Resources {
        self.machines
            .iter()
            .fold(Resources::zero(), |acc, m| acc.plus(&m.capacity))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_arithmetic() {
        let a = Resources::zero()
            .gpus(1.0)
            .cpu_cores(2.0)
            .memory(3.0)
            .storage(4.0)
            .nic(5.0);
        let b = Resources::zero()
            .gpus(0.5)
            .cpu_cores(0.5)
            .memory(0.5)
            .storage(0.5)
            .nic(0.5);
        assert_eq!(
            a.plus(&b),
            Resources::zero()
                .gpus(1.5)
                .cpu_cores(2.5)
                .memory(3.5)
                .storage(4.5)
                .nic(5.5)
        );
        assert_eq!(
            a.minus(&b),
            Resources::zero()
                .gpus(0.5)
                .cpu_cores(1.5)
                .memory(2.5)
                .storage(3.5)
                .nic(4.5)
        );
        assert_eq!(
            b.scaled(2.0),
            Resources::zero()
                .gpus(1.0)
                .cpu_cores(1.0)
                .memory(1.0)
                .storage(1.0)
                .nic(1.0)
        );
        assert!(b.fits_in(&a, 0.0));
        assert!(!a.fits_in(&b, 0.0));
        assert_eq!(a.first_excess(&b, 0.0), Some(ResourceKind::Gpu));
        assert_eq!(a.get(ResourceKind::Nic), 5.0);
        assert!(Resources::zero().is_zero());
    }

    #[test]
    fn hosting_rules() {
        assert!(Hosting::Both.allows(TaskKind::Worker));
        assert!(Hosting::Both.allows(TaskKind::ParameterServer));
        assert!(Hosting::Workers.allows(TaskKind::Worker));
        assert!(!Hosting::Workers.allows(TaskKind::ParameterServer));
        assert!(!Hosting::ParameterServers.allows(TaskKind::Worker));
    }

    #[test]
    fn degradation_factor() {
        let lin = Degradation::Linear { alpha: 0.1 };
        assert_eq!(lin.factor(1.0), 1.0);
        assert!((lin.factor(3.0) - 3.2).abs() < 1e-12);
        assert_eq!(Degradation::FairShare.factor(4.0), 4.0);
    }
}

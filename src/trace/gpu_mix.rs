//! The GPUs of a replay's cluster: a number of GPUs of one unnamed kind, or
//! counts per named GPU type ([`GpuMix`]), and the cluster they make
//! ([`GpuMix::cluster`]).

use std::fmt;
use std::str::FromStr;

use super::TraceError;
use super::recipe::gpu_cluster;
use crate::model::{Cluster, MachineId};

/// The GPUs of a replay's cluster.
///
/// Written as `dmlsched replay --gpus` reads it: a number (`64`, GPUs of one
/// unnamed kind, the model without GPU types) or comma-separated
/// `<type>:<count>` pairs (`v100:36,p100:36,k80:36`), each type named once.
///
/// ```
/// use dmlsched::trace::GpuMix;
///
/// let mix: GpuMix = "v100:16,k80:8".parse()?;
/// assert_eq!(mix.total(), 24);
/// assert_eq!(mix.types(), ["v100", "k80"]);
/// assert_eq!(mix.to_string(), "v100:16,k80:8");
/// assert_eq!("64".parse::<GpuMix>()?, GpuMix::Untyped(64));
/// assert!("v100:8,v100:8".parse::<GpuMix>().is_err()); // named twice
/// # Ok::<(), dmlsched::trace::TraceError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GpuMix {
    /// This many GPUs, of no named type.
    Untyped(u32),
    /// GPUs per named type, in the order the cluster lists its machines.
    Typed(Vec<(String, u32)>),
}

impl From<u32> for GpuMix {
    fn from(gpus: u32) -> GpuMix {
        GpuMix::Untyped(gpus)
    }
}

impl Default for GpuMix {
    /// 64 untyped GPUs.
    fn default() -> GpuMix {
        GpuMix::Untyped(64)
    }
}

impl fmt::Display for GpuMix {
    /// `64` or `v100:36,p100:36`, as [`FromStr`] reads it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuMix::Untyped(n) => write!(f, "{n}"),
            GpuMix::Typed(pools) => {
                for (i, (t, n)) in pools.iter().enumerate() {
                    let sep = if i == 0 { "" } else { "," };
                    write!(f, "{sep}{t}:{n}")?;
                }
                Ok(())
            }
        }
    }
}

impl FromStr for GpuMix {
    type Err = TraceError;

    /// Reads `64` or `v100:36,p100:36,k80:36`.
    ///
    /// # Errors
    ///
    /// [`TraceError::InvalidArgument`] for a count that is not a whole
    /// number ≥ 1, an empty or repeated type name, a name with whitespace,
    /// or a total beyond `u32::MAX` GPUs.
    fn from_str(s: &str) -> Result<GpuMix, TraceError> {
        let s = s.trim();
        let bad = |why: String| TraceError::invalid("gpus", format!("`{s}`: {why}"));
        if !s.contains(':') {
            let n: u32 = s
                .parse()
                .map_err(|_| bad("expected a number of GPUs or <type>:<count> pairs".into()))?;
            return Ok(GpuMix::Untyped(n));
        }
        let mut pools: Vec<(String, u32)> = Vec::new();
        let mut total: u32 = 0;
        for part in s.split(',') {
            let (name, count) = part
                .split_once(':')
                .ok_or_else(|| bad(format!("`{}` is not <type>:<count>", part.trim())))?;
            let name = name.trim();
            if name.is_empty() || name.chars().any(char::is_whitespace) || name.contains(':') {
                return Err(bad(format!(
                    "`{name}` is not a GPU type name (non-empty, no spaces or colons)"
                )));
            }
            let count: u32 = count
                .trim()
                .parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| bad(format!("{name}: `{}` is not a count ≥ 1", count.trim())))?;
            if pools.iter().any(|(t, _)| t == name) {
                return Err(bad(format!("GPU type `{name}` is named twice")));
            }
            total = total
                .checked_add(count)
                .ok_or_else(|| bad("more than u32::MAX GPUs in all".into()))?;
            pools.push((name.to_string(), count));
        }
        Ok(GpuMix::Typed(pools))
    }
}

impl GpuMix {
    /// GPUs in all.
    pub fn total(&self) -> u32 {
        match self {
            GpuMix::Untyped(n) => *n,
            GpuMix::Typed(pools) => pools.iter().map(|p| p.1).fold(0, u32::saturating_add),
        }
    }

    /// The named types, in order; empty for [`GpuMix::Untyped`].
    pub fn types(&self) -> Vec<&str> {
        match self {
            GpuMix::Untyped(_) => Vec::new(),
            GpuMix::Typed(pools) => pools.iter().map(|p| p.0.as_str()).collect(),
        }
    }

    /// The [`gpu_cluster`] of these GPUs: for each type in turn, its
    /// machines of `gpus_per_machine` GPUs of that type (every type's count
    /// a whole number of machines), the cluster naming the types.
    ///
    /// ```
    /// use dmlsched::trace::GpuMix;
    ///
    /// let mix: GpuMix = "v100:16,k80:8".parse()?;
    /// let cluster = mix.cluster(8)?;
    /// assert_eq!(cluster.gpu_types, ["v100", "k80"]);
    /// let types: Vec<_> = cluster.machines.iter().map(|m| m.gpu_type.as_deref()).collect();
    /// assert_eq!(types, [Some("v100"), Some("v100"), Some("k80")]);
    /// assert!(mix.cluster(16).is_err()); // 8 K80s are not a 16-GPU machine
    /// # Ok::<(), dmlsched::trace::TraceError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`gpu_cluster`], for each type's count.
    pub fn cluster(&self, gpus_per_machine: u32) -> Result<Cluster, TraceError> {
        let pools = match self {
            GpuMix::Untyped(n) => return gpu_cluster(*n, gpus_per_machine),
            GpuMix::Typed(pools) => pools,
        };
        let mut out: Option<Cluster> = None;
        for (name, count) in pools {
            let part = gpu_cluster(*count, gpus_per_machine).map_err(|e| match e {
                TraceError::InvalidArgument { name: arg, reason } => TraceError::InvalidArgument {
                    name: arg,
                    reason: format!("GPU type `{name}`: {reason}"),
                },
                other => other,
            })?;
            let cluster = out.get_or_insert_with(|| Cluster {
                machines: Vec::new(),
                ..part.clone()
            });
            if cluster.machines.len() + part.machines.len() > super::MAX_CLUSTER_MACHINES as usize {
                return Err(TraceError::invalid(
                    "cluster size",
                    format!(
                        "more machines than the limit of {}",
                        super::MAX_CLUSTER_MACHINES
                    ),
                ));
            }
            for mut m in part.machines {
                // Fewer than 2^20 machines in all: the index fits a u32.
                m.id = MachineId(cluster.machines.len() as u32);
                cluster.machines.push(m.with_gpu_type(name.clone()));
            }
        }
        let mut cluster = out.ok_or_else(|| TraceError::invalid("gpus", "no GPU type given"))?;
        cluster.gpu_types = pools.iter().map(|p| p.0.clone()).collect();
        Ok(cluster)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let mix: GpuMix = " v100:36, p100:36 ,k80:36".parse().unwrap();
        assert_eq!(mix.total(), 108);
        assert_eq!(mix.to_string(), "v100:36,p100:36,k80:36");
        for bad in [
            "",
            "x",
            "-1",
            "v100",
            "v100:",
            ":8",
            "v100:0",
            "v100:-2",
            "v100:1.5",
            "v 100:8",
            "v100:8,",
            "v100:8,k80:8,v100:1",
            "a:4294967295,b:1",
        ] {
            let e = bad.parse::<GpuMix>().unwrap_err();
            assert!(
                matches!(e, TraceError::InvalidArgument { ref name, .. } if name == "gpus"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn clusters() {
        let untyped = GpuMix::Untyped(16).cluster(8).unwrap();
        assert_eq!(untyped, gpu_cluster(16, 8).unwrap());
        let mix: GpuMix = "a:2,b:4".parse().unwrap();
        let c = mix.cluster(2).unwrap();
        let ids: Vec<u32> = c.machines.iter().map(|m| m.id.0).collect();
        assert_eq!(ids, [0, 1, 2]);
        assert_eq!(c.machines[2].gpu_type.as_deref(), Some("b"));
        let e = mix.cluster(4).unwrap_err().to_string();
        assert!(e.contains("GPU type `a`"), "{e}");
    }
}

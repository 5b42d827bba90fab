//! Saving a [`ClusterState`] to JSON and restoring it: the cells are saved
//! as they are (bit-exact with `serde_json`'s round-trip floats), so a
//! restored state prices and fits exactly as the saved one; a restored
//! state is checked before use.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::model::{Cluster, JobId};

use super::cells::{MachineCells, Stamp};
use super::{ClusterState, Holder, StateError, Use};

/// The saved form of a [`ClusterState`].
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Saved {
    cluster: Cluster,
    slot_length_s: f64,
    now_s: f64,
    current_slot: u32,
    cells: Vec<MachineCells>,
    holds: Vec<(Holder, Vec<Use>)>,
    committed_jobs: Vec<JobId>,
    next_usage: u64,
    #[serde(default)]
    version: u64,
    #[serde(default)]
    refused_jobs: Vec<JobId>,
}

impl From<ClusterState> for Saved {
    fn from(s: ClusterState) -> Self {
        Saved {
            cluster: s.cluster,
            slot_length_s: s.slot_length_s,
            now_s: s.now_s,
            current_slot: s.origin,
            cells: s.cells,
            holds: s.holds.into_iter().collect(),
            committed_jobs: s.seen.into_iter().collect(),
            next_usage: s.next_usage,
            version: s.version.0,
            refused_jobs: s.refused.into_iter().collect(),
        }
    }
}

impl TryFrom<Saved> for ClusterState {
    type Error = StateError;

    fn try_from(s: Saved) -> Result<Self, StateError> {
        let bad = |reason: String| StateError::Inconsistent { reason };
        if s.cells.len() != s.cluster.machines.len() {
            return Err(bad(
                "the cluster's machines and the cells differ in number".into()
            ));
        }
        let mut state = ClusterState::new(&s.cluster, s.slot_length_s)?;
        state.advance(s.now_s).map_err(|e| bad(e.to_string()))?;
        if state.origin != s.current_slot {
            return Err(bad(format!(
                "current slot {} is not the slot of time {} s",
                s.current_slot, s.now_s
            )));
        }
        let fresh: Vec<MachineCells> = state
            .gpu_ids
            .iter()
            .map(|&g| MachineCells::new(g))
            .collect();
        if s.cells.iter().zip(&fresh).any(|(c, f)| !c.same_shape(f)) {
            return Err(bad("a machine's cells do not have its GPU count".into()));
        }
        state.cells = s.cells;
        state.holds = s.holds.into_iter().collect::<BTreeMap<_, _>>();
        state.seen = s.committed_jobs.into_iter().collect::<BTreeSet<_>>();
        state.refused = s.refused_jobs.into_iter().collect::<BTreeSet<_>>();
        state.next_usage = s.next_usage;
        // The version is at least every stamp (0 for both in a state saved
        // before stamps existed).
        let newest = state
            .cells
            .iter()
            .map(MachineCells::stamp)
            .max()
            .unwrap_or(0);
        if s.version < newest {
            return Err(bad(format!(
                "version {} is older than a cell's stamp {newest}",
                s.version
            )));
        }
        state.version = Stamp(s.version);
        check_ids(&state)?;
        state.check()?;
        Ok(state)
    }
}

/// Every held job was committed, and every usage id is below the next one.
fn check_ids(state: &ClusterState) -> Result<(), StateError> {
    for h in state.holds.keys() {
        let ok = match h {
            Holder::Job(j) => state.seen.contains(j),
            Holder::Usage(u) => u.0 < state.next_usage,
        };
        if !ok {
            return Err(StateError::Inconsistent {
                reason: format!("{h} is held but was never committed or recorded"),
            });
        }
    }
    Ok(())
}

impl Serialize for ClusterState {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Saved::from(self.clone()).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ClusterState {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let saved = Saved::deserialize(deserializer)?;
        ClusterState::try_from(saved).map_err(serde::de::Error::custom)
    }
}

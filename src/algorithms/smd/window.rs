//! The queue window ([`SmdParams::window`]): when more jobs are active
//! than the window holds, an epoch's program keeps only the first jobs of
//! the shortest-remaining-first order, and the others wait, as the jobs
//! after `q` do in the prefix plan `Prefix(q)`. The order is the epoch
//! program's own (best standalone time, then arrival, then id), so the
//! window's wait charges are those of the whole queue: every job ahead of
//! a window job is in the window.

use std::collections::HashMap;

use crate::model::JobId;
use crate::sim::{JobView, SimView};

use super::build::{at_one_speed, best_time};
use super::{Selection, SmdError, SmdParams};

/// Each job's order key, for the remaining work it was computed at (a
/// waiting job's work does not change, so its key is computed once), kept
/// for one simulation run (by its stamp).
#[derive(Debug, Clone, Default)]
pub(crate) struct OrderKeys {
    stamp: u64,
    keys: HashMap<JobId, (u64, f64)>,
}

impl OrderKeys {
    /// Which of `managed` (the jobs the epoch decides) are in the window,
    /// or `None` when the window does not apply: no window, a selection
    /// other than `Best` or `Prefix`, or no more jobs than the window.
    ///
    /// # Errors
    ///
    /// As [`best_time`] (the errors the epoch program would give).
    pub(crate) fn window(
        &mut self,
        view: &SimView<'_>,
        managed: &[JobView<'_>],
        params: &SmdParams,
    ) -> Result<Option<Vec<bool>>, SmdError> {
        let Some(size) = params.window else {
            return Ok(None);
        };
        if managed.len() <= size || !matches!(params.selection, Selection::Best | Selection::Prefix)
        {
            return Ok(None);
        }
        if self.stamp != view.run_stamp() {
            self.stamp = view.run_stamp();
            self.keys.clear();
        }
        let total = view.instance().cluster().total_capacity();
        let mut order = Vec::with_capacity(managed.len());
        for (i, j) in managed.iter().enumerate() {
            let work = j.remaining_work();
            let key = match self.keys.get(&j.id()) {
                Some(&(bits, key)) if bits == work.to_bits() => key,
                _ => {
                    let job = at_one_speed(view.instance(), j.job())?;
                    let key = best_time(&job, work, &total, params)?;
                    self.keys.insert(j.id(), (work.to_bits(), key));
                    key
                }
            };
            order.push((key, j.job().arrival_s, j.id(), i));
        }
        order.sort_by(|a, b| {
            a.0.total_cmp(&b.0)
                .then(a.1.total_cmp(&b.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        let mut inside = vec![false; managed.len()];
        for &(_, _, _, i) in order.iter().take(size) {
            inside[i] = true;
        }
        Ok(Some(inside))
    }
}

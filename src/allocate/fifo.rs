//! FIFO without an LP: each job in id order takes one type whole (`X_ij =
//! 1`) while that type has room for its scale factor: the first type by
//! name where it runs (`fifo`), or its fastest (`fifo-perf`, ties by name).
//! Stateless: the same input always gives the same allocation.

use super::program::{self, View};
use super::{Allocation, AllocationPolicy};

pub(super) fn solve(view: &View, perf: bool) -> Allocation {
    let policy = if perf {
        AllocationPolicy::FifoPerf
    } else {
        AllocationPolicy::Fifo
    };
    let k = view.types.len();
    let mut x = vec![vec![0.0; k]; view.jobs()];
    let mut free = view.counts.clone();
    let mut order: Vec<usize> = (0..view.jobs()).collect();
    order.sort_by_key(|&i| view.ids[i]);
    for i in order {
        let mut types: Vec<usize> = (0..k).filter(|&j| view.tput[i][j] > 0.0).collect();
        if perf {
            // Stable: equal throughputs keep the order by name.
            types.sort_by(|&a, &b| view.tput[i][b].total_cmp(&view.tput[i][a]));
        }
        if let Some(j) = types.into_iter().find(|&j| free[j] >= view.scale[i]) {
            x[i][j] = 1.0;
            free[j] -= view.scale[i];
        }
    }
    program::finish(view, policy, x, None, None)
}

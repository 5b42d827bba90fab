//! Shared servers (machines that host workers and PSs, with
//! [`OasisParams::shared_machines`](super::OasisParams::shared_machines)):
//! the cheapest placement of `a` workers and `b` PSs of one job on them in
//! one slot ([algorithms guide, section
//! 7.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-shared)).
//!
//! On a shared server the two task kinds draw on the same residual, so the
//! per-server caps of the split model no longer separate: `a_m` workers and
//! `b_m` PSs fit iff `a_m·w + b_m·s ≤ residual` in every resource. Prices
//! are fixed within a slot, so a placement's cost is linear,
//! `Σ_m π_m·a_m + σ_m·b_m` (`π_m = Σ_r p_m^r·w^r`, `σ_m = Σ_r p_m^r·s^r`,
//! both from the machine's one set of cells). [`SharedTable`] is the exact
//! minimum over all placements, a dynamic program over the servers with
//! state `(a, b)`; [`SharedTable::cheapest`] combines it with the dedicated
//! servers' prefix costs.

use std::collections::VecDeque;

use super::model::{OasisJob, SpecVector};

/// One shared server in one slot: its residual and the unit prices of one
/// worker and one PS of the job there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SharedServer {
    /// Position of the machine.
    pub(crate) position: u32,
    /// Residual capacity in every resource, [`spec_units`](super::spec_units).
    pub(crate) residual: SpecVector,
    /// `π = Σ_r p^r·w^r` over positive worker demands.
    pub(crate) worker_price: f64,
    /// `σ = Σ_r p^r·s^r` over positive PS demands.
    pub(crate) ps_price: f64,
}

impl SharedServer {
    /// Workers of `job` that fit the residual alone.
    pub(crate) fn worker_cap(&self, job: &OasisJob) -> u32 {
        OasisJob::units_fitting(&job.worker_demand, |r| self.residual[r])
    }

    /// PSs of `job` that fit beside `a` of its workers: `min_{r: s^r > 0}
    /// ⌊(residual^r − a·w^r)/s^r⌋` (tolerant floor).
    pub(crate) fn ps_beside(&self, job: &OasisJob, a: u32) -> u32 {
        let a = f64::from(a);
        OasisJob::units_fitting(&job.ps_demand, |r| {
            self.residual[r] - a * job.worker_demand[r]
        })
    }
}

/// `S(a, b)`: the least cost of `a` workers and `b` PSs of one job on a
/// list of shared servers (`+∞` when they do not fit), for
/// `a ≤ A = min(max_workers, Σ_m worker caps)` and
/// `b ≤ B = min(max_ps, zreq(max_workers), Σ_m PS caps)`.
///
/// Built by a dynamic program over the servers: server `m` may take any
/// `(a_m, b_m)` with `a_m ≤ worker cap` and `b_m ≤ ps_beside(a_m)`, so
///
/// ```text
/// S_m(a, b) = min_{a_m} min_{b_m ≤ ps_beside(a_m)} S_{m−1}(a − a_m, b − b_m) + π_m·a_m + σ_m·b_m
/// ```
///
/// with the inner minimum a sliding-window minimum over `b`. Cost
/// `O(Σ_m (worker cap_m + 1)·(A + 1)·(B + 1))`. The feasible states are
/// closed downwards (dropping a task keeps a placement feasible) and every
/// price is `≥ 0`, so `S` is non-decreasing in `a` and in `b`.
#[derive(Debug, Default)]
pub(crate) struct SharedTable {
    a_max: u32,
    b_max: u32,
    /// `S(a, b)` at `a·(B + 1) + b`.
    cost: Vec<f64>,
    next: Vec<f64>,
    /// Per server `m`, per state: the `(a_m, b_m)` of the minimum (only
    /// when recorded).
    back: Vec<(u32, u32)>,
    /// Servers of the recorded build.
    servers: usize,
    window: VecDeque<usize>,
}

impl SharedTable {
    /// Most workers the table holds, `A`.
    pub(crate) fn workers(&self) -> u32 {
        self.a_max
    }

    /// Most PSs the table holds, `B`.
    pub(crate) fn ps(&self) -> u32 {
        self.b_max
    }

    fn width(&self) -> usize {
        self.b_max as usize + 1
    }

    /// `S(a, b)` (`+∞` outside the table).
    pub(crate) fn cost(&self, a: u32, b: u32) -> f64 {
        if a > self.a_max || b > self.b_max {
            return f64::INFINITY;
        }
        self.cost[a as usize * self.width() + b as usize]
    }

    /// Builds `S` for `job` over `servers` (in their order); `record` keeps
    /// the back-pointers [`placement`](Self::placement) needs.
    pub(crate) fn build(&mut self, job: &OasisJob, servers: &[SharedServer], record: bool) {
        let a_sum: u64 = servers.iter().map(|s| u64::from(s.worker_cap(job))).sum();
        let b_sum: u64 = servers.iter().map(|s| u64::from(s.ps_beside(job, 0))).sum();
        self.a_max = a_sum.min(u64::from(job.max_workers)) as u32;
        self.b_max = b_sum.min(u64::from(job.ps_limit())) as u32;
        let width = self.width();
        let states = (self.a_max as usize + 1) * width;
        self.cost.clear();
        self.cost.resize(states, f64::INFINITY);
        self.cost[0] = 0.0;
        self.back.clear();
        self.servers = 0;
        if record {
            self.back.resize(servers.len() * states, (0, 0));
            self.servers = servers.len();
        }
        for (k, server) in servers.iter().enumerate() {
            self.next.clear();
            self.next.resize(states, f64::INFINITY);
            let a_cap = server.worker_cap(job).min(self.a_max);
            for a_m in 0..=a_cap {
                let b_cap = server.ps_beside(job, a_m).min(self.b_max) as usize;
                for a in a_m..=self.a_max {
                    let back = record.then_some(k * states);
                    self.relax_row(server, a_m, a, b_cap, back);
                }
            }
            std::mem::swap(&mut self.cost, &mut self.next);
        }
    }

    /// `next(a, ·) ← min(next(a, ·), S(a − a_m, b − b_m) + π·a_m + σ·b_m)`
    /// over `b_m ≤ b_cap`, by a sliding-window minimum of
    /// `S(a − a_m, b') − σ·b'`; the value itself is summed directly.
    fn relax_row(
        &mut self,
        server: &SharedServer,
        a_m: u32,
        a: u32,
        b_cap: usize,
        back: Option<usize>,
    ) {
        let width = self.width();
        let src = (a - a_m) as usize * width;
        if self.cost[src] == f64::INFINITY {
            // States are closed downwards: the whole row is infeasible.
            return;
        }
        let dst = a as usize * width;
        let sigma = server.ps_price;
        let add = server.worker_price * f64::from(a_m);
        let cost = &self.cost;
        let key = |i: usize| cost[src + i] - sigma * i as f64;
        self.window.clear();
        for b in 0..width {
            while self.window.back().is_some_and(|&j| key(j) >= key(b)) {
                self.window.pop_back();
            }
            self.window.push_back(b);
            while self.window.front().is_some_and(|&j| j + b_cap < b) {
                self.window.pop_front();
            }
            let Some(&i) = self.window.front() else {
                continue;
            };
            let v = cost[src + i] + sigma * (b - i) as f64 + add;
            if v < self.next[dst + b] {
                self.next[dst + b] = v;
                if let Some(base) = back {
                    self.back[base + dst + b] = (a_m, (b - i) as u32);
                }
            }
        }
    }

    /// The least cost of `y` workers and `z` PSs with `a` workers and `b`
    /// PSs on the shared servers and the rest on the cheapest dedicated
    /// positions, whose prefix costs are `wc` and `pc` (`wc[n]`: the `n`
    /// cheapest dedicated worker positions; as many entries as there are
    /// positions, plus one): `(cost, a, b)`, `None` when nothing fits.
    pub(crate) fn cheapest(
        &self,
        wc: &[f64],
        pc: &[f64],
        y: u32,
        z: u32,
    ) -> Option<(f64, u32, u32)> {
        let (wn, pn) = (
            wc.len().saturating_sub(1) as u32,
            pc.len().saturating_sub(1) as u32,
        );
        let mut best: Option<(f64, u32, u32)> = None;
        for a in y.saturating_sub(wn)..=y.min(self.a_max) {
            for b in z.saturating_sub(pn)..=z.min(self.b_max) {
                let s = self.cost(a, b);
                if s == f64::INFINITY {
                    break; // closed downwards: every larger b fails too
                }
                let v = s + wc[(y - a) as usize] + pc[(z - b) as usize];
                if best.is_none_or(|(c, _, _)| v < c) {
                    best = Some((v, a, b));
                }
            }
        }
        best
    }

    /// The recorded placement of `a` workers and `b` PSs on the shared
    /// servers: `(index of the server in the build's list, workers, PSs)`
    /// per server used, in list order. Empty when the table was not built
    /// with `record` or `S(a, b) = +∞`.
    pub(crate) fn placement(&self, a: u32, b: u32) -> Vec<(usize, u32, u32)> {
        if self.back.is_empty() || self.cost(a, b) == f64::INFINITY {
            return Vec::new();
        }
        let width = self.width();
        let states = (self.a_max as usize + 1) * width;
        let (mut a, mut b) = (a, b);
        let mut out = Vec::new();
        for k in (0..self.servers).rev() {
            let (a_m, b_m) = self.back[k * states + a as usize * width + b as usize];
            if a_m > 0 || b_m > 0 {
                out.push((k, a_m, b_m));
            }
            a -= a_m;
            b -= b_m;
        }
        out.reverse();
        out
    }
}

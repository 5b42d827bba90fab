//! The pricing oracle: the best schedule `(s, w, n, y)` of a job at the
//! current prices, with the greedy or the exhaustive ring embedding.

use std::collections::VecDeque;

use crate::model::MachineId;
use crate::online::{
    BoundInputs, OracleQuality, PriceView, PricingOracle, Reservation, Response, UnitDemand,
};

use super::model::{GPU, GadgetCluster, GadgetJob, NIC, POOL, Shape, nic_fits};
use super::params::EmbeddingOracle;
use super::plan::GadgetPlan;

/// One server over a window `W = [s, s + d)`: free GPUs `κ_h`, free NIC
/// `β_h`, price sums `π_h = Σ_W p_h(t)` and `ψ_h = Σ_W q_h(t)`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct ServerWindow {
    /// Server index.
    k: u32,
    /// `κ_h`.
    free_gpus: u32,
    /// `β_h`.
    free_nic: f64,
    /// `B_h`.
    nic_capacity: f64,
    /// `π_h`.
    gpu_price: f64,
    /// `ψ_h`.
    nic_price: f64,
    /// Internal-bandwidth class.
    class: u32,
}

/// Residuals and price prefix sums of every server over the slots
/// `first..first + filled` of one job's search, read from the view on
/// demand, slot by slot, as the search reaches them (a search that stops
/// early reads few slots), and afresh on every call (so a commit between
/// calls never leaves stale sums).
#[derive(Debug, Default, Clone)]
struct Window {
    first: u32,
    servers: usize,
    /// Slots read so far.
    filled: usize,
    /// `[i·servers + k]`: residual GPUs of server `k` in slot `first + i`.
    free_gpu: Vec<f64>,
    /// `[i·servers + k]`: residual NIC.
    free_nic: Vec<f64>,
    /// `[i·servers + k]`: GPU price summed over `first..first + i`.
    pre_gpu: Vec<f64>,
    /// `[i·servers + k]`: NIC price summed likewise.
    pre_nic: Vec<f64>,
}

impl Window {
    fn reset(&mut self, servers: usize, first: u32) {
        self.first = first;
        self.servers = servers;
        self.filled = 0;
        for v in [
            &mut self.free_gpu,
            &mut self.free_nic,
            &mut self.pre_gpu,
            &mut self.pre_nic,
        ] {
            v.clear();
        }
        self.pre_gpu.resize(servers, 0.0);
        self.pre_nic.resize(servers, 0.0);
    }

    /// Reads the slots up to `end` (exclusive).
    fn ensure(&mut self, view: &PriceView<'_>, end: u32) {
        while self.first as usize + self.filled < end as usize {
            let t = self.first + self.filled as u32;
            let base = self.filled * self.servers;
            for k in 0..self.servers {
                let m = MachineId(k as u32);
                self.free_gpu.push(view.residual(m, GPU, t));
                self.free_nic.push(view.residual(m, NIC, t));
                let g = self.pre_gpu[base + k] + view.price(m, GPU, t);
                let n = self.pre_nic[base + k] + view.price(m, NIC, t);
                self.pre_gpu.push(g);
                self.pre_nic.push(n);
            }
            self.filled += 1;
        }
    }

    /// `Σ_{t ∈ [s, s+d)}` of the prefix sums `pre` for server `k` (the
    /// slots must have been read).
    fn sum(&self, pre: &[f64], k: usize, s: u32, d: u32) -> f64 {
        let i = (s - self.first) as usize;
        pre[(i + d as usize) * self.servers + k] - pre[i * self.servers + k]
    }
}

/// A minimum over a sliding window of slots (monotone queue).
#[derive(Debug, Default, Clone)]
struct MinQueue(VecDeque<(u32, f64)>);

impl MinQueue {
    fn push(&mut self, t: u32, v: f64) {
        while self.0.back().is_some_and(|&(_, b)| b >= v) {
            self.0.pop_back();
        }
        self.0.push_back((t, v));
    }

    /// The minimum over the pushed slots `≥ from`.
    fn min_from(&mut self, from: u32) -> f64 {
        while self.0.front().is_some_and(|&(t, _)| t < from) {
            self.0.pop_front();
        }
        self.0.front().map_or(0.0, |&(_, v)| v)
    }
}

/// One shape's start loop: the job, the shape (and its index) and its
/// latest start.
#[derive(Debug, Clone, Copy)]
struct Search<'a> {
    job: &'a GadgetJob,
    index: usize,
    shape: &'a Shape,
    last: u32,
}

/// The best candidate so far.
#[derive(Debug, Clone, PartialEq)]
struct Best {
    start: u32,
    shape: usize,
    payoff: f64,
    value: f64,
    /// `(t̂, n, w)` of the tie rule.
    key: (u32, u32, u32),
    placement: Vec<(u32, u32)>,
}

/// The GADGET-style best response ([module docs](super)): enumerate the
/// worker count `w ∈ W_i`, the server count `n` and the start `s`, embed
/// the ring at the window's prices, keep the largest payoff
/// `v − Σ_h (π_h y_h + φ_h)`.
///
/// # Complexity
///
/// Per call `O(|H|·T')` to read residuals and prices (`T'` slots from the
/// job's first slot to the last the search reaches), then per shape
/// `O(|H|·T')` for the sliding minima and per examined start
/// `O(|H| log |H|)` (greedy) or `O(|H| + C(|H|, n)·n log n)` (exhaustive).
/// Shapes that do not embed on the empty cluster are skipped; the start loop
/// stops as soon as the value `v(s)` cannot beat the best payoff (prices
/// are non-negative, so the stop is exact).
///
/// Outside the crate it is the oracle of the engine
/// [`Gadget::engine`](super::Gadget::engine) returns, asked through
/// [`PricingOracle::best_response`]; a clone answers as the original.
#[derive(Debug, Clone)]
pub struct GadgetOracle {
    cluster: GadgetCluster,
    kind: EmbeddingOracle,
    window: Window,
    gpu_queues: Vec<MinQueue>,
    nic_queues: Vec<MinQueue>,
    scratch: Vec<ServerWindow>,
    order: Vec<usize>,
    placement: Vec<(u32, u32)>,
    embeddings: u64,
}

impl GadgetOracle {
    /// An oracle over `cluster` with the given embedding.
    pub(crate) fn new(cluster: GadgetCluster, kind: EmbeddingOracle) -> Self {
        GadgetOracle {
            cluster,
            kind,
            window: Window::default(),
            gpu_queues: Vec::new(),
            nic_queues: Vec::new(),
            scratch: Vec::new(),
            order: Vec::new(),
            placement: Vec::new(),
            embeddings: 0,
        }
    }

    /// The cluster.
    pub(crate) fn cluster(&self) -> &GadgetCluster {
        &self.cluster
    }

    /// The embedding oracle.
    pub fn kind(&self) -> EmbeddingOracle {
        self.kind
    }

    /// Embeddings attempted so far, over all calls.
    pub fn embeddings(&self) -> u64 {
        self.embeddings
    }

    /// The best plan of `job` at the prices and residuals of `view`, with
    /// its value and cost (the cost recomputed from the plan's consumption
    /// at the view's prices); `None` when no feasible plan has a positive
    /// payoff.
    pub(crate) fn best_plan(
        &mut self,
        job: &GadgetJob,
        view: &PriceView<'_>,
    ) -> Option<(GadgetPlan, f64, f64)> {
        let horizon = view.horizon().min(self.cluster.horizon);
        let servers = self.cluster.servers.len().min(view.machines());
        self.window.reset(servers, job.earliest);
        self.gpu_queues.resize(servers, MinQueue::default());
        self.nic_queues.resize(servers, MinQueue::default());
        let mut best: Option<Best> = None;
        for (index, shape) in job.shapes.iter().enumerate() {
            // A shape that does not embed on the empty cluster never does.
            if let Some(last) = job.latest_start(shape, horizon)
                && job.fits_empty(&self.cluster, shape)
            {
                let search = Search {
                    job,
                    index,
                    shape,
                    last,
                };
                self.search_shape(view, &search, &mut best);
            }
        }
        let best = best?;
        let plan = plan_of(job, &job.shapes[best.shape], best.start, best.placement);
        let cost = view.cost_of(plan.consumption());
        Some((plan, best.value, cost))
    }

    /// The start loop of one shape (starts `earliest..=last`), updating
    /// `best`.
    fn search_shape(&mut self, view: &PriceView<'_>, search: &Search<'_>, best: &mut Option<Best>) {
        let Search {
            job,
            index,
            shape,
            last,
        } = *search;
        let servers = self.window.servers;
        let d = shape.slots;
        for q in self.gpu_queues.iter_mut().chain(self.nic_queues.iter_mut()) {
            q.0.clear();
        }
        let mut pushed = job.earliest;
        for s in job.earliest..=last {
            let value = job.value(s, shape);
            let key = (s + d - 1, shape.servers, shape.workers);
            let stop = match best.as_ref() {
                None => value <= 0.0,
                Some(b) => {
                    let t = tie_tolerance(b.payoff);
                    value < b.payoff - t || (value <= b.payoff + t && key > b.key)
                }
            };
            if stop {
                break;
            }
            self.window.ensure(view, s + d);
            while pushed < s + d {
                let i = (pushed - self.window.first) as usize;
                for k in 0..servers {
                    let at = i * servers + k;
                    self.gpu_queues[k].push(pushed, self.window.free_gpu[at]);
                    self.nic_queues[k].push(pushed, self.window.free_nic[at]);
                }
                pushed += 1;
            }
            self.fill_scratch(job, s, d, servers);
            self.embeddings += 1;
            let Some(cost) = self.embed(shape, job.ring_nic) else {
                continue;
            };
            let payoff = value - cost;
            let better = match best.as_ref() {
                None => payoff > 0.0,
                Some(b) => {
                    let t = tie_tolerance(b.payoff);
                    payoff > b.payoff + t
                        || (payoff >= b.payoff - t
                            && (key, self.placement.as_slice()) < (b.key, b.placement.as_slice()))
                }
            };
            if better {
                *best = Some(Best {
                    start: s,
                    shape: index,
                    payoff,
                    value,
                    key,
                    placement: self.placement.clone(),
                });
            }
        }
    }

    /// `κ, β, π, ψ` of every server the job may use over `[s, s + d)`.
    fn fill_scratch(&mut self, job: &GadgetJob, s: u32, d: u32, servers: usize) {
        self.scratch.clear();
        for k in 0..servers {
            if !job.may_use(k) {
                continue;
            }
            let free = self.gpu_queues[k].min_from(s);
            let free_gpus = (free + 1e-9).floor().clamp(0.0, f64::from(u32::MAX)) as u32;
            let server = &self.cluster.servers[k];
            self.scratch.push(ServerWindow {
                k: k as u32,
                free_gpus,
                free_nic: self.nic_queues[k].min_from(s),
                nic_capacity: server.nic,
                gpu_price: self.window.sum(&self.window.pre_gpu, k, s, d),
                nic_price: self.window.sum(&self.window.pre_nic, k, s, d),
                class: server.class,
            });
        }
    }

    /// EMBED on the current scratch: the cost, with the placement in
    /// `self.placement`; `None` when no embedding exists.
    fn embed(&mut self, shape: &Shape, ring_nic: f64) -> Option<f64> {
        self.placement.clear();
        if shape.servers == 1 {
            let w = shape.workers;
            let mut best: Option<(f64, u32)> = None;
            for h in &self.scratch {
                if shape.class.is_none_or(|c| c == h.class) && h.free_gpus >= w {
                    let cost = f64::from(w) * h.gpu_price;
                    if best.is_none_or(|(b, _)| cost < b - tie_tolerance(b)) {
                        best = Some((cost, h.k));
                    }
                }
            }
            let (cost, k) = best?;
            self.placement.push((k, w));
            return Some(cost);
        }
        // Eligible servers: κ ≥ 1 and β ≥ 2b; keep them at the front.
        self.scratch
            .retain(|h| h.free_gpus >= 1 && nic_fits(h.free_nic, h.nic_capacity, ring_nic));
        let (w, n) = (shape.workers, shape.servers as usize);
        if self.scratch.len() < n {
            return None;
        }
        match self.kind {
            EmbeddingOracle::Greedy => self.embed_greedy(w, n, ring_nic),
            EmbeddingOracle::Exhaustive => self.embed_exhaustive(w, n, ring_nic),
        }
    }

    /// Steps 2–6 of the greedy embedding: score `σ_h = π_h + φ_h/cap_h`,
    /// take the `n` cheapest (ties by `π_h`, then index), distribute.
    fn embed_greedy(&mut self, w: u32, n: usize, ring_nic: f64) -> Option<f64> {
        let cap_bound = w - n as u32 + 1;
        let score = |h: &ServerWindow| {
            let cap = f64::from(h.free_gpus.min(cap_bound));
            h.gpu_price + ring_nic * h.nic_price / cap
        };
        self.order.clear();
        self.order.extend(0..self.scratch.len());
        let scratch = &self.scratch;
        self.order.sort_by(|&a, &b| {
            let (ha, hb) = (&scratch[a], &scratch[b]);
            score(ha)
                .total_cmp(&score(hb))
                .then(ha.gpu_price.total_cmp(&hb.gpu_price))
                .then(ha.k.cmp(&hb.k))
        });
        self.order.truncate(n);
        let chosen = std::mem::take(&mut self.order);
        let cost = distribute(&self.scratch, &chosen, w, ring_nic, &mut self.placement);
        self.order = chosen;
        cost
    }

    /// Every `n`-subset of the eligible servers in lexicographic order,
    /// each distributed optimally; the cheapest (the first on ties).
    fn embed_exhaustive(&mut self, w: u32, n: usize, ring_nic: f64) -> Option<f64> {
        let m = self.scratch.len();
        let mut subset: Vec<usize> = (0..n).collect();
        let mut best: Option<(f64, Vec<(u32, u32)>)> = None;
        let mut out = Vec::with_capacity(n);
        loop {
            if let Some(c) = distribute(&self.scratch, &subset, w, ring_nic, &mut out)
                && best
                    .as_ref()
                    .is_none_or(|(b, _)| c < *b - tie_tolerance(*b))
            {
                best = Some((c, out.clone()));
            }
            // Next combination.
            let Some(i) = (0..n).rev().find(|&i| subset[i] < m - n + i) else {
                break;
            };
            subset[i] += 1;
            for j in i + 1..n {
                subset[j] = subset[j - 1] + 1;
            }
        }
        let (cost, placement) = best?;
        self.placement = placement;
        Some(cost)
    }
}

/// The plan of `job` running `shape` from slot `start` with `placement`
/// (`(server index, y_h)`, server index ascending): each used server also
/// reserves `2b_i` of NIC when the ring spans `n ≥ 2` servers.
pub(super) fn plan_of(
    job: &GadgetJob,
    shape: &Shape,
    start: u32,
    placement: Vec<(u32, u32)>,
) -> GadgetPlan {
    GadgetPlan {
        job: job.id,
        start,
        slots: shape.slots,
        workers: shape.workers,
        nic_per_server: if shape.servers >= 2 {
            job.ring_nic
        } else {
            0.0
        },
        placement,
        tau_slots: shape.tau_slots,
        iterations: shape.iterations,
    }
}

/// Relative tolerance under which two payoffs or costs count as tied: price
/// sums over different windows of equal prices differ in their last bits,
/// and ties go to the documented rules (earlier completion, fewer servers,
/// fewer workers, smaller server list; lowest index; first subset), not to
/// rounding.
const TIE_REL: f64 = 1e-12;

/// `TIE_REL·max(1, |x|)`.
fn tie_tolerance(x: f64) -> f64 {
    TIE_REL * x.abs().max(1.0)
}

/// Steps 5–6 for the servers `chosen` (indices into `servers`): one worker
/// each, the other `w − n` by ascending `π_h` (then index) up to
/// `cap_h = min(κ_h, w − n + 1)`; cost `Σ (π_h y_h + φ_h)` with
/// `φ_h = 2b·ψ_h`. `None` when `Σ cap_h < w`. The placement, server index
/// ascending, goes to `out`.
fn distribute(
    servers: &[ServerWindow],
    chosen: &[usize],
    w: u32,
    ring_nic: f64,
    out: &mut Vec<(u32, u32)>,
) -> Option<f64> {
    let n = chosen.len() as u32;
    let cap_bound = w.checked_sub(n)? + 1;
    let cap = |i: usize| servers[i].free_gpus.min(cap_bound);
    let total: u64 = chosen.iter().map(|&i| u64::from(cap(i))).sum();
    if total < u64::from(w) {
        return None;
    }
    let mut by_price: Vec<usize> = chosen.to_vec();
    by_price.sort_by(|&a, &b| {
        servers[a]
            .gpu_price
            .total_cmp(&servers[b].gpu_price)
            .then(servers[a].k.cmp(&servers[b].k))
    });
    out.clear();
    let mut rest = w - n;
    let mut cost = 0.0;
    for &i in &by_price {
        let extra = (cap(i) - 1).min(rest);
        rest -= extra;
        let y = 1 + extra;
        let h = &servers[i];
        cost += h.gpu_price * f64::from(y) + ring_nic * h.nic_price;
        out.push((h.k, y));
    }
    out.sort_unstable();
    Some(cost)
}

impl PricingOracle for GadgetOracle {
    type Job = GadgetJob;
    type Plan = GadgetPlan;

    /// The bound inputs on the empty cluster: `schedulable` when some shape
    /// embeds, fits the horizon and has a positive value; `ln v̄` (earliest
    /// start, best shape); `ln v^late` (the best value among shapes
    /// completing in the latest slot any shape can complete in, `−∞` when
    /// not positive); unit kinds *worker* `(GPU 1, NIC 0)` and, when the job
    /// reserves bandwidth and allows `w ≥ 2`, *ring endpoint*
    /// `(GPU 0, NIC 2b_i)`; normaliser `w·d + 1{n≥2}·n·2b_i·d` of the
    /// fastest shape (GPU-slots plus NIC data, mixed as the framework's
    /// resource sum).
    fn bound_inputs(&self, job: &GadgetJob, horizon: u32) -> crate::Result<BoundInputs> {
        let empty = job.empty_cluster(&self.cluster, horizon.min(self.cluster.horizon));
        let best = empty.best.filter(|(_, ln)| ln.is_finite());
        let mut inputs = BoundInputs {
            arrival: job.arrival,
            schedulable: false,
            ln_u_max: f64::NEG_INFINITY,
            ln_u_min: f64::NEG_INFINITY,
            unit_demands: vec![UnitDemand {
                pool: POOL,
                demand: vec![1.0, 0.0],
            }],
            normalisers: Vec::new(),
        };
        let (Some((_, ln_best)), Some(fastest)) = (best, empty.fastest) else {
            return Ok(inputs);
        };
        let f = &job.shapes[fastest];
        let mut m = f64::from(f.workers) * f64::from(f.slots);
        if f.servers >= 2 {
            m += f64::from(f.servers) * job.ring_nic * f64::from(f.slots);
        }
        let max_w = job.shapes.iter().map(|s| s.workers).max().unwrap_or(1);
        if job.ring_nic > 0.0 && max_w >= 2 {
            inputs.unit_demands.push(UnitDemand {
                pool: POOL,
                demand: vec![0.0, job.ring_nic],
            });
        }
        inputs.schedulable = true;
        inputs.ln_u_max = ln_best;
        inputs.ln_u_min = empty.ln_late.min(ln_best);
        inputs.normalisers = vec![(POOL, m)];
        Ok(inputs)
    }

    /// `ln v̄` is the value of a plan that fits the empty cluster alone.
    fn u_max_attained(&self) -> bool {
        true
    }

    fn best_response(
        &mut self,
        _job_index: usize,
        job: &GadgetJob,
        view: &PriceView<'_>,
    ) -> crate::Result<Response<GadgetPlan>> {
        let quality = if self.kind.is_exact() {
            OracleQuality::Exact
        } else {
            OracleQuality::Heuristic
        };
        Ok(match self.best_plan(job, view) {
            Some((plan, value, cost)) => Response::exact(plan, value, cost),
            None => Response::none(),
        }
        .with_quality(quality))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sliding_minimum() {
        let mut q = MinQueue::default();
        let values = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        // Windows of 3 slots.
        let mut got = Vec::new();
        for (t, &v) in values.iter().enumerate() {
            q.push(t as u32, v);
            if t >= 2 {
                got.push(q.min_from(t as u32 - 2));
            }
        }
        assert_eq!(got, vec![1.0, 1.0, 1.0, 1.0, 2.0, 2.0]);
    }

    fn server(k: u32, free_gpus: u32, gpu_price: f64, nic_price: f64) -> ServerWindow {
        ServerWindow {
            k,
            free_gpus,
            free_nic: 100.0,
            nic_capacity: 100.0,
            gpu_price,
            nic_price,
            class: 0,
        }
    }

    #[test]
    fn distribution_fills_cheap_servers_first() {
        // π = (3, 6, 9), ψ = (1.5, 0.3, 0.3), 2b = 4: w = 6 on {h0, h1} is
        // (4, 2) at 12 + 12 + 6 + 1.2; on all three (4, 1, 1).
        let s = [
            server(0, 4, 3.0, 1.5),
            server(1, 4, 6.0, 0.3),
            server(2, 4, 9.0, 0.3),
        ];
        let mut out = Vec::new();
        let c = distribute(&s, &[1, 0], 6, 4.0, &mut out).unwrap();
        assert!((c - 31.2).abs() < 1e-12);
        assert_eq!(out, vec![(0, 4), (1, 2)]);
        distribute(&s, &[0, 1, 2], 6, 4.0, &mut out).unwrap();
        assert_eq!(out, vec![(0, 4), (1, 1), (2, 1)]);
        // Too few GPUs, or more servers than workers.
        assert!(distribute(&s, &[0], 6, 4.0, &mut out).is_none());
        assert!(distribute(&s, &[0, 1, 2], 2, 4.0, &mut out).is_none());
        assert!(tie_tolerance(1e6) > tie_tolerance(1.0));
    }
}

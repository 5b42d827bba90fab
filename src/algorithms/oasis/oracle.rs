//! Algorithm 2 of the OASiS paper: the per-job best response.
//!
//! The crate's forward dynamic program over per-slot option lists
//! ([algorithms guide, section 7.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-forward-dp); same optimum,
//! much faster), and the paper's memoised DP as published, kept as a
//! reference.

use crate::model::MachineId;
use crate::online::{
    BoundInputs, OracleQuality, PriceView, PricingOracle, ResourceId, Response, UnitDemand,
};

use super::model::{OasisCluster, OasisJob, Role, SpecVector};
use super::plan::{OasisPlan, SlotPlan};
use super::shared::{SharedServer, SharedTable};

/// One dedicated server in a slot: its position, how many units of the job
/// fit its residual, and the unit price `Σ_r p^r·d^r`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Server {
    position: u32,
    cap: u32,
    unit_price: f64,
}

/// The dedicated servers of `role` the job may use in slot `t`, with room
/// for at least one unit, sorted by `(unit price, position)` (per-server
/// caps over positive demands, unit prices `Σ_r p·w^r`; equal prices: lower
/// position first).
fn sorted_servers(
    cluster: &OasisCluster,
    job: &OasisJob,
    role: Role,
    view: &PriceView<'_>,
    t: u32,
    out: &mut Vec<Server>,
) {
    let demand: &SpecVector = job.demand(role);
    out.clear();
    for &m in cluster.dedicated(role) {
        if !job.may_use(m) {
            continue;
        }
        let id = MachineId(m);
        let cap = OasisJob::units_fitting(demand, |r| view.residual(id, ResourceId(r as u8), t));
        if cap == 0 {
            continue;
        }
        let unit_price = demand
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 0.0)
            .map(|(r, d)| view.price(id, ResourceId(r as u8), t) * d)
            .sum();
        out.push(Server {
            position: m,
            cap,
            unit_price,
        });
    }
    out.sort_by(|a, b| {
        a.unit_price
            .total_cmp(&b.unit_price)
            .then(a.position.cmp(&b.position))
    });
}

/// `prefix[n]` = cost of the `n` cheapest unit positions, `n = 0..=limit`
/// (fewer if the servers run out), filling the sorted servers up to their
/// caps.
fn prefix_costs(servers: &[Server], limit: u32, prefix: &mut Vec<f64>) {
    prefix.clear();
    prefix.push(0.0);
    let mut acc = 0.0;
    'outer: for s in servers {
        for _ in 0..s.cap {
            if prefix.len() > limit as usize {
                break 'outer;
            }
            acc += s.unit_price;
            prefix.push(acc);
        }
    }
}

/// Fills `n` units on the sorted servers, cheapest first: `(position,
/// units)` per server used, and their cost.
fn fill(servers: &[Server], mut n: u32) -> (Vec<(u32, u32)>, f64) {
    let mut out = Vec::new();
    let mut cost = 0.0;
    for s in servers {
        if n == 0 {
            break;
        }
        let k = s.cap.min(n);
        out.push((s.position, k));
        cost += s.unit_price * f64::from(k);
        n -= k;
    }
    (out, cost)
}

/// The per-slot data of the forward DP.
#[derive(Debug, Default)]
struct Slot {
    workers: Vec<Server>,
    ps: Vec<Server>,
    /// Shared servers with room for a worker or a PS (empty in the paper's
    /// model: the slot then takes the dedicated path unchanged).
    shared: Vec<SharedServer>,
    /// Options `(x chunks, y workers)`, ascending in `x` (and `y`).
    options: Vec<(u64, u32)>,
    /// `C_t(y)` of every option.
    option_cost: Vec<f64>,
}

/// Prefix costs and the shared servers' table, reused across slots.
#[derive(Debug, Default)]
struct Buffers {
    wc: Vec<f64>,
    pc: Vec<f64>,
    table: SharedTable,
}

/// Scratch buffers reused across jobs.
#[derive(Debug, Default)]
struct Scratch {
    slots: Vec<Slot>,
    g_prev: Vec<f64>,
    g_cur: Vec<f64>,
    back: Vec<u32>,
    bufs: Buffers,
}

/// The shared servers the job may use in slot `t` with room for at least
/// one worker or one PS, by position, with their residuals and unit prices.
fn shared_servers(
    cluster: &OasisCluster,
    job: &OasisJob,
    view: &PriceView<'_>,
    t: u32,
    out: &mut Vec<SharedServer>,
) {
    out.clear();
    let unit_price = |id: MachineId, demand: &SpecVector| -> f64 {
        demand
            .iter()
            .enumerate()
            .filter(|(_, d)| **d > 0.0)
            .map(|(r, d)| view.price(id, ResourceId(r as u8), t) * d)
            .sum()
    };
    for &m in &cluster.shared_servers {
        if !job.may_use(m) {
            continue;
        }
        let id = MachineId(m);
        let residual: SpecVector =
            std::array::from_fn(|r| view.residual(id, ResourceId(r as u8), t));
        let server = SharedServer {
            position: m,
            residual,
            worker_price: unit_price(id, &job.worker_demand),
            ps_price: unit_price(id, &job.ps_demand),
        };
        if server.worker_cap(job) > 0 || server.ps_beside(job, 0) > 0 {
            out.push(server);
        }
    }
}

/// Builds the option list of slot `t` into `slot`: caps, unit prices,
/// sorted servers, prefix costs, the PS count `zreq(y) = ⌈y·b/B⌉`, the
/// largest usable worker count and the options `(x, ⌈x·ρ⌉)` keeping the
/// largest `x` per worker count. With shared servers in the slot, the
/// option costs come from [`SharedTable::cheapest`], and a slot whose
/// servers, residuals and prices equal those of the slot before (`prev`)
/// copies its options.
fn build_slot(
    cluster: &OasisCluster,
    job: &OasisJob,
    view: &PriceView<'_>,
    t: u32,
    slot: &mut Slot,
    prev: Option<&Slot>,
    bufs: &mut Buffers,
) {
    sorted_servers(cluster, job, Role::Worker, view, t, &mut slot.workers);
    sorted_servers(cluster, job, Role::Ps, view, t, &mut slot.ps);
    shared_servers(cluster, job, view, t, &mut slot.shared);
    if slot.shared.is_empty() {
        dedicated_options(job, slot, &mut bufs.wc, &mut bufs.pc);
        return;
    }
    if let Some(p) =
        prev.filter(|p| p.shared == slot.shared && p.workers == slot.workers && p.ps == slot.ps)
    {
        slot.options.clone_from(&p.options);
        slot.option_cost.clone_from(&p.option_cost);
        return;
    }
    shared_options(job, slot, bufs);
}

/// Total tasks the servers hold.
fn cap_sum(servers: &[Server]) -> u64 {
    servers.iter().map(|s| u64::from(s.cap)).sum()
}

/// The options of a slot on dedicated servers only (the paper's model):
/// `C_t(y) = WC_t(y) + PC_t(zreq(y))`.
fn dedicated_options(job: &OasisJob, slot: &mut Slot, wc: &mut Vec<f64>, pc: &mut Vec<f64>) {
    let ycap = cap_sum(&slot.workers).min(u64::from(job.max_workers)) as u32;
    let zcap = cap_sum(&slot.ps).min(u64::from(u32::MAX)) as u32;
    let y_t = ycap.min(job.workers_for_ps(zcap));
    prefix_costs(&slot.workers, y_t, wc);
    prefix_costs(&slot.ps, job.zreq(y_t), pc);
    slot.options.clear();
    slot.option_cost.clear();
    slot.options.push((0, 0));
    slot.option_cost.push(0.0);
    let d = job.total_chunks;
    let mut last_x = 0u64;
    for y in 1..=y_t {
        if last_x >= d {
            break;
        }
        let x = job.chunks_for(u64::from(y));
        if x > last_x {
            let need = job.workers_for(x) as u32; // ≤ y
            let z = job.zreq(need) as usize;
            slot.options.push((x, need));
            slot.option_cost.push(wc[need as usize] + pc[z]);
            last_x = x;
        }
    }
}

/// The options of a slot with shared servers: `C_t(y)` is the least cost of
/// `y` workers and `zreq(y)` PSs over dedicated and shared servers
/// ([`SharedTable::cheapest`]); the options stop at the first `y` that does
/// not fit (feasibility is closed downwards).
fn shared_options(job: &OasisJob, slot: &mut Slot, bufs: &mut Buffers) {
    bufs.table.build(job, &slot.shared, false);
    let y_hi = job.shared_worker_bound(cap_sum(&slot.workers), cap_sum(&slot.ps), &bufs.table);
    prefix_costs(&slot.workers, y_hi, &mut bufs.wc);
    prefix_costs(&slot.ps, job.zreq(y_hi), &mut bufs.pc);
    slot.options.clear();
    slot.option_cost.clear();
    slot.options.push((0, 0));
    slot.option_cost.push(0.0);
    let d = job.total_chunks;
    let mut last_x = 0u64;
    for y in 1..=y_hi {
        if last_x >= d {
            break;
        }
        let x = job.chunks_for(u64::from(y));
        if x > last_x {
            let need = job.workers_for(x) as u32; // ≤ y
            let Some((cost, _, _)) = bufs
                .table
                .cheapest(&bufs.wc, &bufs.pc, need, job.zreq(need))
            else {
                break;
            };
            slot.options.push((x, need));
            slot.option_cost.push(cost);
            last_x = x;
        }
    }
}

/// Workers and PSs of one slot as `(position, count)` lists, and their cost.
type Placed = (Vec<(u32, u32)>, Vec<(u32, u32)>, f64);

/// Places `y` workers and `z = zreq(y)` PSs in a slot, cheapest first:
/// `(workers, PSs, cost)` as `(position, count)` lists (dedicated servers
/// first, then shared ones by position); `None` when they do not fit (not
/// reached for an option of the slot).
fn place(job: &OasisJob, slot: &Slot, y: u32, z: u32, bufs: &mut Buffers) -> Option<Placed> {
    if slot.shared.is_empty() {
        let (workers, worker_cost) = fill(&slot.workers, y);
        let (ps, ps_cost) = fill(&slot.ps, z);
        return Some((workers, ps, worker_cost + ps_cost));
    }
    bufs.table.build(job, &slot.shared, true);
    prefix_costs(&slot.workers, y, &mut bufs.wc);
    prefix_costs(&slot.ps, z, &mut bufs.pc);
    let (_, a, b) = bufs.table.cheapest(&bufs.wc, &bufs.pc, y, z)?;
    let (mut workers, worker_cost) = fill(&slot.workers, y - a);
    let (mut ps, ps_cost) = fill(&slot.ps, z - b);
    let mut cost = worker_cost + ps_cost;
    for (k, a_m, b_m) in bufs.table.placement(a, b) {
        let s = slot.shared.get(k)?;
        if a_m > 0 {
            workers.push((s.position, a_m));
            cost += s.worker_price * f64::from(a_m);
        }
        if b_m > 0 {
            ps.push((s.position, b_m));
            cost += s.ps_price * f64::from(b_m);
        }
    }
    Some((workers, ps, cost))
}

/// OASiS's Algorithm 2 ([algorithms guide, section
/// 7.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-forward-dp)): the exact best response of a job at the
/// current prices, by the forward DP over slots with deadline enumeration.
///
/// # Complexity
///
/// Per job `O(Σ_t [H log H + K log K + (H+K)·R + (D_i+1)·|O_t|])` with
/// `|O_t| ≤ N_i + 1`, `t` from the job's first slot to the last examined
/// deadline (the loop stops when `f(t + 1 − a) ≤` the best payoff: no
/// later deadline can do better). A slot with `S` usable shared servers adds
/// the shared servers' table, `O(Σ_m (cap_m + 1)·A·B)`, and `O(A·B)` per option
/// (`A ≤ N_i` workers, `B ≤ min(max_ps, zreq(N_i))` PSs on them, `cap_m`
/// the workers server `m` holds), once per run of slots with equal prices and
/// residuals.
///
/// Outside the crate it is the oracle of the engine
/// [`Oasis::engine`](super::Oasis::engine) returns, asked through
/// [`PricingOracle::best_response`].
#[derive(Debug)]
pub struct OasisOracle {
    cluster: OasisCluster,
    early_stop: bool,
    scratch: Scratch,
    deadlines_examined: u64,
}

/// A clone answers as the original: the same cluster and early stop, the
/// same count of deadlines examined, fresh scratch buffers.
impl Clone for OasisOracle {
    fn clone(&self) -> Self {
        OasisOracle {
            cluster: self.cluster.clone(),
            early_stop: self.early_stop,
            scratch: Scratch::default(),
            deadlines_examined: self.deadlines_examined,
        }
    }
}

impl OasisOracle {
    /// An oracle over `cluster`; `early_stop` (default `true` in
    /// [`OasisParams`](super::OasisParams)) stops the deadline loop once no
    /// later deadline can do better. It never changes the result.
    pub(crate) fn new(cluster: OasisCluster, early_stop: bool) -> Self {
        OasisOracle {
            cluster,
            early_stop,
            scratch: Scratch::default(),
            deadlines_examined: 0,
        }
    }

    /// Deadlines (slots) the DP has examined so far, over all calls.
    pub fn deadlines_examined(&self) -> u64 {
        self.deadlines_examined
    }

    /// The best plan of `job` at the prices and residuals of `view`, with
    /// its utility and cost; `None` when no feasible plan has a positive
    /// payoff (strict: a payoff of exactly 0 is rejected).
    pub(crate) fn best_plan(
        &mut self,
        job: &OasisJob,
        view: &PriceView<'_>,
    ) -> Option<(OasisPlan, f64, f64)> {
        let horizon = view.horizon().min(self.cluster.horizon).min(job.end);
        if job.earliest >= horizon || job.total_chunks == 0 {
            return None;
        }
        let d_total = job.total_chunks as usize;
        let width = d_total + 1;
        let n_slots = (horizon - job.earliest) as usize;
        let sc = &mut self.scratch;
        if sc.slots.len() < n_slots {
            sc.slots.resize_with(n_slots, Slot::default);
        }
        sc.g_prev.clear();
        sc.g_prev.resize(width, f64::INFINITY);
        sc.g_prev[0] = 0.0;
        sc.g_cur.clear();
        sc.g_cur.resize(width, f64::INFINITY);
        sc.back.clear();
        let mut best_payoff = 0.0_f64;
        let mut best: Option<(usize, f64)> = None; // (slot index, G(D))
        for k in 0..n_slots {
            let t = job.earliest + k as u32;
            self.deadlines_examined += 1;
            let (before, after) = sc.slots.split_at_mut(k);
            let slot = &mut after[0];
            build_slot(
                &self.cluster,
                job,
                view,
                t,
                slot,
                before.last(),
                &mut sc.bufs,
            );
            sc.back.resize((k + 1) * width, 0);
            let back = &mut sc.back[k * width..];
            for (d, (g, bp)) in sc
                .g_cur
                .iter_mut()
                .zip(back.iter_mut())
                .enumerate()
                .take(width)
            {
                let mut min = f64::INFINITY;
                let mut arg = 0u32;
                for (j, (&(x, _), &c)) in slot.options.iter().zip(&slot.option_cost).enumerate() {
                    let rest = (d as u64).saturating_sub(x) as usize;
                    let v = c + sc.g_prev[rest];
                    if v < min {
                        min = v;
                        arg = j as u32;
                    }
                    if rest == 0 {
                        // Later options cost at least as much and also finish d.
                        break;
                    }
                }
                *g = min;
                *bp = arg;
            }
            std::mem::swap(&mut sc.g_prev, &mut sc.g_cur);
            let g = sc.g_prev[d_total];
            if g < f64::INFINITY {
                let payoff = job.utility_at(t) - g;
                if payoff > best_payoff {
                    best_payoff = payoff;
                    best = Some((k, g));
                }
            }
            if self.early_stop && t + 1 < horizon && job.utility_at(t + 1) <= best_payoff {
                break;
            }
        }
        let (k_best, g_best) = best?;
        // Reconstruction: walk the back-pointers, trim the last option to the
        // chunks still needed, place ⌈x·ρ⌉ workers then zreq PSs on the
        // cheapest servers (with shared servers, the cheapest joint placement).
        let mut d = job.total_chunks;
        let mut slots = Vec::new();
        let mut cost = 0.0;
        for k in (0..=k_best).rev() {
            let slot = &sc.slots[k];
            let j = sc.back[k * width + d as usize] as usize;
            let (x, _) = slot.options[j];
            let x_t = x.min(d);
            d -= x_t;
            if x_t == 0 {
                continue;
            }
            let y = job.workers_for(x_t) as u32;
            let placed = place(job, slot, y, job.zreq(y), &mut sc.bufs);
            debug_assert!(placed.is_some(), "an option of slot {k} does not fit");
            let (workers, ps, slot_cost) = placed?;
            cost += slot_cost;
            slots.push(SlotPlan {
                slot: job.earliest + k as u32,
                chunks: x_t,
                workers,
                ps,
            });
        }
        slots.reverse();
        debug_assert_eq!(d, 0, "reconstruction must train every chunk");
        debug_assert!(
            (cost - g_best).abs() <= 1e-9 * cost.abs().max(1.0),
            "reconstructed cost {cost} differs from the DP's {g_best}"
        );
        debug_assert_eq!(
            slots.last().map(|s| s.slot),
            Some(job.earliest + k_best as u32),
            "the winner has work in its deadline slot (an earlier last slot would have won the strict, earliest-first comparison)"
        );
        let t_hat = slots.last()?.slot;
        let plan = OasisPlan {
            job: job.id,
            slots,
            worker_demand: job.worker_demand,
            ps_demand: job.ps_demand,
        };
        Some((plan, job.utility_at(t_hat), cost))
    }
}

impl PricingOracle for OasisOracle {
    type Job = OasisJob;
    type Plan = OasisPlan;

    /// The OASiS bound inputs ([algorithms guide, section
    /// 7.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-bounds)): `schedulable` by the chunk model on the empty
    /// cluster, `ln f_i(δ_min)` with `δ_min = (earliest − a_i) + d_min − 1`
    /// (the elapsed-time convention `δ = t̂ − a`, where the paper evaluates
    /// `f` at a duration minus an arrival slot), `ln f_i(T − 1 − a_i)` (the
    /// paper's `f(T − a)` without its stray ceiling, 0-based), the unit
    /// kinds of each pool and the normalisers `m_iH = W_i·Σ_r w_i^r`,
    /// `m_iK = W_i·Σ_r s_i^r`. The pool of shared servers
    /// ([algorithms guide, section
    /// 7.6](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#oasis-shared))
    /// takes both unit kinds (so its `U^r` is at least the value per unit of
    /// either) and `m_iS = m_iH + m_iK`, the consumption of the reference
    /// plan placing all its `W_i` worker-slots and as many PS-slots there.
    fn bound_inputs(&self, job: &OasisJob, horizon: u32) -> crate::Result<BoundInputs> {
        let horizon = horizon.min(job.end);
        let delta_min = job
            .earliest
            .saturating_sub(job.arrival)
            .saturating_add(job.d_min().saturating_sub(1));
        let w = job.worker_slots_ceil();
        let mut normalisers = Vec::new();
        let mut unit_demands = Vec::new();
        let sw: f64 = job.worker_demand.iter().sum();
        let ss: f64 = job.ps_demand.iter().sum();
        let unit = |pool, demand: &SpecVector| UnitDemand {
            pool,
            demand: demand.to_vec(),
        };
        if let Some(pool) = self.cluster.worker_pool() {
            if sw > 0.0 {
                normalisers.push((pool, w * sw));
            }
            unit_demands.push(unit(pool, &job.worker_demand));
        }
        if let Some(pool) = self.cluster.ps_pool() {
            if ss > 0.0 {
                normalisers.push((pool, w * ss));
            }
            unit_demands.push(unit(pool, &job.ps_demand));
        }
        if let Some(pool) = self.cluster.shared_pool() {
            if sw + ss > 0.0 {
                normalisers.push((pool, w * sw + w * ss));
            }
            unit_demands.push(unit(pool, &job.worker_demand));
            unit_demands.push(unit(pool, &job.ps_demand));
        }
        Ok(BoundInputs {
            arrival: job.arrival,
            schedulable: job.schedulable(&self.cluster) && job.earliest < horizon,
            ln_u_max: job.utility.ln_value(delta_min),
            ln_u_min: job
                .utility
                .ln_value(horizon.saturating_sub(1).saturating_sub(job.arrival)),
            unit_demands,
            normalisers,
        })
    }

    fn best_response(
        &mut self,
        _job_index: usize,
        job: &OasisJob,
        view: &PriceView<'_>,
    ) -> crate::Result<Response<OasisPlan>> {
        Ok(match self.best_plan(job, view) {
            Some((plan, utility, cost)) => Response::exact(plan, utility, cost),
            None => Response::none(),
        }
        .with_quality(OracleQuality::Exact))
    }
}

/// The paper's Algorithm 2 as published: for every deadline, the
/// memoised `DP_COST` over exact chunk counts per slot with the greedy
/// `COST_t`. `O(T·D_i²)` `COST_t` calls: a reference for tests on small
/// instances, not for production. It places tasks on the dedicated servers
/// only (the paper's model has no shared ones): on a cluster with shared
/// servers it answers for the rest of the cluster, not for the model
/// [`OasisOracle`] searches.
///
/// Returns `(payoff, completion slot, cost)` of the best plan with a
/// strictly positive payoff, or `None`. Ties as in the forward DP (earliest deadline).
#[cfg(test)]
pub(crate) fn paper_best_response(
    cluster: &OasisCluster,
    job: &OasisJob,
    view: &PriceView<'_>,
) -> Option<(f64, u32, f64)> {
    let horizon = view.horizon().min(cluster.horizon).min(job.end);
    if job.earliest >= horizon {
        return None;
    }
    let d_total = job.total_chunks as usize;
    let n_slots = (horizon - job.earliest) as usize;
    // cost_t[k][d]: COST_t of d chunks in slot earliest + k.
    let mut cost_t = vec![vec![f64::INFINITY; d_total + 1]; n_slots];
    let mut servers_w = Vec::new();
    let mut servers_p = Vec::new();
    for (k, row) in cost_t.iter_mut().enumerate() {
        let t = job.earliest + k as u32;
        sorted_servers(cluster, job, Role::Worker, view, t, &mut servers_w);
        sorted_servers(cluster, job, Role::Ps, view, t, &mut servers_p);
        for (d, c) in row.iter_mut().enumerate() {
            *c = paper_cost_t(job, &servers_w, &servers_p, d as u64);
        }
    }
    // dp[k][d]: DP_COST(earliest + k, d); exactly d chunks in slots ≤ k.
    let mut dp = vec![vec![f64::INFINITY; d_total + 1]; n_slots];
    for k in 0..n_slots {
        for dcur in 0..=d_total {
            let mut min = f64::INFINITY;
            for d in 0..=dcur {
                let prev = if k == 0 {
                    if dcur - d == 0 { 0.0 } else { f64::INFINITY }
                } else {
                    dp[k - 1][dcur - d]
                };
                let v = cost_t[k][d] + prev;
                if v < min {
                    min = v;
                }
            }
            dp[k][dcur] = min;
        }
    }
    let mut best: Option<(f64, u32, f64)> = None;
    let mut best_payoff = 0.0;
    for (k, row) in dp.iter().enumerate() {
        let t = job.earliest + k as u32;
        let c = row[d_total];
        if c < f64::INFINITY {
            let payoff = job.utility_at(t) - c;
            if payoff > best_payoff {
                best_payoff = payoff;
                best = Some((payoff, t, c));
            }
        }
    }
    best
}

/// The paper's `COST_t(t, d)` (the greedy cheapest cost of training `d`
/// chunks in slot `t`) on sorted servers.
#[cfg(test)]
fn paper_cost_t(job: &OasisJob, workers: &[Server], ps: &[Server], d: u64) -> f64 {
    let mut need = job.workers_for(d);
    let mut placed = 0u64;
    let mut cost = 0.0;
    for s in workers {
        let y = u64::from(s.cap)
            .min(u64::from(job.max_workers).saturating_sub(placed))
            .min(need);
        cost += s.unit_price * y as f64;
        placed += y;
        need -= y;
    }
    if need > 0 {
        return f64::INFINITY;
    }
    let y_total = placed as u32;
    let zmax = job.zreq(y_total).min(job.max_ps);
    let mut z = 0u32;
    for s in ps {
        let k = s.cap.min(zmax - z).min(y_total - z);
        cost += s.unit_price * f64::from(k);
        z += k;
    }
    if z < job.zreq(y_total) {
        return f64::INFINITY;
    }
    cost
}

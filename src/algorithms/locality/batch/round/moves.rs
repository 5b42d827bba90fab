//! The batch's repair moves.
//!
//! * **Shrink** (joint capacity and per-job rows): for every cell
//!   (machine, slot) over capacity, one move: remove one worker of the job
//!   with the most workers on that machine in that slot (ties to the lower
//!   job), re-deriving its PSs (those `zreq` no longer needs are dropped,
//!   from that machine first; missing ones are added where there is room;
//!   the slot closes with its last worker); when only PSs sit there, move
//!   one PS of the job with the most PSs there to a machine with room, or
//!   else drop it with the workers it served. For a (job, slot) whose own
//!   rows fail (`Σy > N`, too few PSs), remove one worker from its machine
//!   with the most workers.
//! * **Grow** (covering), one job at a time in decreasing order of the
//!   deficit they have when covering repair starts: the moves of the
//!   online covering repair (one more LOCAL worker, one more DISTRIBUTED
//!   worker with a PS when `zreq` grows, opening an IDLE slot LOCAL or
//!   DISTRIBUTED, switching a DISTRIBUTED slot to LOCAL), at the cost of
//!   [`MoveCost`](super::MoveCost), in slot order (the driver breaks ties
//!   to the earliest). Room is the joint capacity's: the driver never
//!   applies a move that breaks a packing row.
//! * **Prune**: single-worker removals and surplus PSs, priced by the
//!   program's objective (later work first).

use crate::pcip::{Move, MoveSource, PcProblem};

use super::super::super::model::{RESOURCES, Vector};
use super::{BatchRounding, Deltas, JobSlot, Pass, add_to, at};

impl BatchRounding<'_> {
    /// Workers of job `i` on machine `h` in `s` at `x`.
    fn workers_on(s: &JobSlot, x: &[f64], h: usize) -> u32 {
        let local: u32 = s
            .local
            .iter()
            .filter(|l| l.0 == h)
            .map(|l| at(x, l.2))
            .sum();
        let dist: u32 = s
            .dist
            .iter()
            .filter(|d| d.0 == h)
            .filter_map(|d| d.1)
            .map(|j| at(x, j))
            .sum();
        local + dist
    }

    /// PSs (DISTRIBUTED) of a job on `h` in `s` at `x`.
    fn ps_on(s: &JobSlot, x: &[f64], h: usize) -> u32 {
        s.dist
            .iter()
            .filter(|d| d.0 == h)
            .filter_map(|d| d.2)
            .map(|j| at(x, j))
            .sum()
    }

    /// The slot of job `i` at time `t`, if it has columns there.
    fn slot_at(&self, i: usize, t: u32) -> Option<&JobSlot> {
        let slots = &self.slots[i];
        slots
            .binary_search_by_key(&t, |s| s.t)
            .ok()
            .map(|k| &slots[k])
    }

    /// Removes one worker of job `i` from machine `h` in `s`, re-deriving
    /// its PSs (dropping first from `prefer`).
    fn remove_worker(
        &self,
        i: usize,
        s: &JobSlot,
        x: &[f64],
        used: &[Vector],
        h: usize,
        prefer: Option<usize>,
    ) -> Option<Move> {
        let job = &self.jobs[i];
        let mut d = Deltas::default();
        if let Some(&(_, u, y)) = s.local.iter().find(|l| l.0 == h && at(x, l.2) > 0) {
            d.add(y, -1.0);
            if at(x, y) == 1 && at(x, u) == 1 {
                d.add(u, -1.0);
            }
            return Some(d.into_move());
        }
        let y = s
            .dist
            .iter()
            .find(|e| e.0 == h)
            .and_then(|e| e.1)
            .filter(|&y| at(x, y) > 0)?;
        d.add(y, -1.0);
        let (ys, zs) = Self::dist_counts(s, x);
        let left = ys - 1;
        let target = if left == 0 {
            0
        } else {
            job.zreq(left).min(job.max_ps)
        };
        if left == 0
            && let Some(v) = s.v.filter(|&v| at(x, v) == 1)
        {
            d.add(v, -1.0);
        }
        if zs > target {
            self.drop_ps(i, s, x, zs - target, prefer, &mut d);
        } else if zs < target {
            let mut extra = vec![[0.0; RESOURCES]; self.cluster.machines()];
            add_to(&mut extra[h], &job.worker, -1.0);
            let mut xz = x.to_vec();
            for _ in zs..target {
                let ex = |k: usize| extra[k];
                let Some((k, z)) = self.ps_machine(i, s, &xz, used, &ex) else {
                    break;
                };
                d.add(z, 1.0);
                xz[z] += 1.0;
                add_to(&mut extra[k], &job.ps, 1.0);
            }
        }
        Some(d.into_move())
    }

    /// Drops `n` PSs of job `i` in `s`: from `prefer` first, then by
    /// decreasing normalised PS use (ties to the higher machine).
    fn drop_ps(
        &self,
        i: usize,
        s: &JobSlot,
        x: &[f64],
        mut n: u32,
        prefer: Option<usize>,
        d: &mut Deltas,
    ) {
        let ps = &self.jobs[i].ps;
        let mut zs: Vec<(bool, f64, usize, usize)> = s
            .dist
            .iter()
            .filter_map(|&(h, _, z)| z.map(|z| (prefer == Some(h), h, z)))
            .filter(|&(_, _, z)| at(x, z) > 0)
            .map(|(p, h, z)| (p, self.norm(h, ps), h, z))
            .collect();
        zs.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.total_cmp(&a.1)).then(b.2.cmp(&a.2)));
        for (_, _, _, z) in zs {
            if n == 0 {
                break;
            }
            let k = at(x, z).min(n);
            d.add(z, -f64::from(k));
            n -= k;
        }
    }

    /// A cell over capacity holding only PSs: move one PS of the job with
    /// the most PSs there to a machine with room, or drop it with the
    /// workers it served.
    fn relieve_ps(&self, t: u32, h: usize, x: &[f64], used: &[Vector]) -> Option<Move> {
        let mut best: Option<(u32, usize)> = None;
        for i in 0..self.jobs.len() {
            let Some(s) = self.slot_at(i, t) else {
                continue;
            };
            let n = Self::ps_on(s, x, h);
            if n > 0 && best.is_none_or(|b| n > b.0) {
                best = Some((n, i));
            }
        }
        let (_, i) = best?;
        let s = self.slot_at(i, t)?;
        let z = s.dist.iter().find(|e| e.0 == h).and_then(|e| e.2)?;
        let mut d = Deltas::default();
        d.add(z, -1.0);
        let none = |_: usize| [0.0; RESOURCES];
        let other = self
            .ps_machine(i, s, x, used, &none)
            .filter(|&(k, _)| k != h);
        if let Some((_, z2)) = other {
            d.add(z2, 1.0);
            return Some(d.into_move());
        }
        let job = &self.jobs[i];
        let (ys, zs) = Self::dist_counts(s, x);
        let mut keep = ys;
        while keep > 0 && job.zreq(keep) > zs - 1 {
            keep -= 1;
        }
        let mut ws: Vec<(u32, usize, usize)> = s
            .dist
            .iter()
            .filter_map(|&(k, y, _)| y.map(|y| (at(x, y), k, y)))
            .filter(|w| w.0 > 0)
            .collect();
        ws.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut remove = ys - keep;
        for (n, _, y) in ws {
            let k = n.min(remove);
            if k > 0 {
                d.add(y, -f64::from(k));
                remove -= k;
            }
        }
        if keep == 0 {
            for (_, _, z) in &s.dist {
                if let Some(z) = z.filter(|&z| at(x, z) > 0) {
                    d.add(z, -f64::from(at(x, z)));
                }
            }
            // The one dropped above is part of the total now.
            d.add(z, 1.0);
            if let Some(v) = s.v.filter(|&v| at(x, v) == 1) {
                d.add(v, -1.0);
            }
        }
        Some(d.into_move())
    }

    /// Shrink moves for the cells over joint capacity.
    fn capacity_moves(&self, x: &[f64], used: &[Vec<Vector>], out: &mut Vec<Move>) {
        for t in 0..self.joint.slots {
            let row = &used[t as usize];
            for h in 0..self.cluster.machines() {
                if !self.over(h, &row[h]) {
                    continue;
                }
                let mut best: Option<(u32, usize)> = None;
                for i in 0..self.jobs.len() {
                    let Some(s) = self.slot_at(i, t) else {
                        continue;
                    };
                    let n = Self::workers_on(s, x, h);
                    if n > 0 && best.is_none_or(|b| n > b.0) {
                        best = Some((n, i));
                    }
                }
                let mv = match best {
                    Some((_, i)) => self
                        .slot_at(i, t)
                        .and_then(|s| self.remove_worker(i, s, x, row, h, Some(h))),
                    None => self.relieve_ps(t, h, x, row),
                };
                out.extend(mv);
            }
        }
    }

    /// Shrink moves for (job, slot)s whose own rows fail.
    fn own_row_moves(&self, x: &[f64], used: &[Vec<Vector>], out: &mut Vec<Move>) {
        for (i, slots) in self.slots.iter().enumerate() {
            let job = &self.jobs[i];
            for s in slots {
                let (ys, zs) = Self::dist_counts(s, x);
                let local: u32 = s.local.iter().map(|l| at(x, l.2)).sum();
                let broken = ys + local > job.max_workers
                    || (ys > 0 && (zs < job.zreq(ys) || zs > ys || zs > job.max_ps));
                if !broken {
                    continue;
                }
                let h = s
                    .local
                    .iter()
                    .map(|l| l.0)
                    .chain(s.dist.iter().map(|d| d.0))
                    .max_by(|&a, &b| {
                        Self::workers_on(s, x, a)
                            .cmp(&Self::workers_on(s, x, b))
                            .then(b.cmp(&a))
                    });
                if let Some(h) = h {
                    out.extend(self.remove_worker(i, s, x, &used[s.t as usize], h, None));
                }
            }
        }
    }
}

impl MoveSource for Pass<'_, '_> {
    fn shrink_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let used = self.model.usage(x);
        self.model.capacity_moves(x, &used, out);
        self.model.own_row_moves(x, &used, out);
    }

    fn grow_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let m = self.model;
        let order = self.order.get_or_init(|| {
            let mut d: Vec<(f64, usize)> = (0..m.jobs.len())
                .map(|i| {
                    let (act, thr) = m.cover(i, x);
                    (thr - act, i)
                })
                .collect();
            d.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            d.into_iter().map(|e| e.1).collect()
        });
        let Some(&i) = order.iter().find(|&&i| {
            let (act, thr) = m.cover(i, x);
            act < thr
        }) else {
            return;
        };
        let used = m.usage(x);
        for s in &m.slots[i] {
            m.grows(i, s, x, &used[s.t as usize], out);
        }
    }

    fn prune_moves(&self, _: &PcProblem, x: &[f64], out: &mut Vec<Move>) {
        let m = self.model;
        let used = m.usage(x);
        for (i, slots) in m.slots.iter().enumerate() {
            let job = &m.jobs[i];
            for s in slots {
                let row = &used[s.t as usize];
                for &(h, _, y) in &s.local {
                    if at(x, y) > 0 {
                        out.extend(m.remove_worker(i, s, x, row, h, None));
                    }
                }
                for &(h, y, _) in &s.dist {
                    if y.is_some_and(|y| at(x, y) > 0) {
                        out.extend(m.remove_worker(i, s, x, row, h, None));
                    }
                }
                let (ys, zs) = BatchRounding::dist_counts(s, x);
                let keep = if ys == 0 { 0 } else { job.zreq(ys) };
                if zs > keep {
                    let mut d = Deltas::default();
                    m.drop_ps(i, s, x, 1, None, &mut d);
                    out.push(d.into_move());
                }
            }
        }
    }
}

impl BatchRounding<'_> {
    /// Grow moves of job `i` in one slot (see the module documentation).
    fn grows(&self, i: usize, s: &JobSlot, x: &[f64], used: &[Vector], out: &mut Vec<Move>) {
        let job = &self.jobs[i];
        let (wl, sl) = (job.worker_local(), job.ps_local());
        let t = s.t;
        if let Some(&(h, _, y)) = s.local.iter().find(|l| at(x, l.1) == 1) {
            let c = self.grow_cost(i, t, &[(h, wl, 1.0)], job.rate_local[h]);
            out.push(Move::unit(y, 1.0).with_objective(c));
            return;
        }
        let (ys, zs) = Self::dist_counts(s, x);
        let dist_on = s.v.is_some_and(|v| at(x, v) == 1);
        if dist_on {
            for &(h, y, _) in &s.dist {
                let Some(y) = y else { continue };
                let mut d = vec![(y, 1.0)];
                let mut units = vec![(h, job.worker, 1.0)];
                if job.zreq(ys + 1) > zs {
                    let ex = |k: usize| if k == h { job.worker } else { [0.0; RESOURCES] };
                    match self
                        .ps_machine(i, s, x, used, &ex)
                        .filter(|_| zs < job.max_ps)
                    {
                        Some((k, z)) => {
                            d.push((z, 1.0));
                            units.push((k, job.ps, 1.0));
                        }
                        None => continue,
                    }
                }
                let c = self.grow_cost(i, t, &units, job.rate_dist);
                out.push(Move::new(d).with_objective(c));
            }
            self.switches(i, s, x, ys, out);
            return;
        }
        if ys > 0 {
            return;
        }
        for &(h, u, y) in &s.local {
            let c = self.grow_cost(i, t, &[(h, wl, 1.0), (h, sl, 1.0)], job.rate_local[h]);
            out.push(Move::new(vec![(u, 1.0), (y, 1.0)]).with_objective(c));
        }
        if let Some(v) = s.v {
            for &(h, y, _) in &s.dist {
                let Some(y) = y else { continue };
                let ex = |k: usize| if k == h { job.worker } else { [0.0; RESOURCES] };
                if let Some((k, z)) = self.ps_machine(i, s, x, used, &ex) {
                    let units = [(h, job.worker, 1.0), (k, job.ps, 1.0)];
                    let c = self.grow_cost(i, t, &units, job.rate_dist);
                    out.push(Move::new(vec![(v, 1.0), (y, 1.0), (z, 1.0)]).with_objective(c));
                }
            }
        }
    }

    /// Switches of a DISTRIBUTED slot with `ys` workers to LOCAL on a
    /// machine whose bound holds them all.
    fn switches(&self, i: usize, s: &JobSlot, x: &[f64], ys: u32, out: &mut Vec<Move>) {
        let Some(v) = s.v else { return };
        if ys == 0 {
            return;
        }
        let job = &self.jobs[i];
        let (wl, sl) = (job.worker_local(), job.ps_local());
        let n = f64::from(ys);
        for &(h, u, y) in &s.local {
            if n > self.problem().upper(y) {
                continue;
            }
            let mut deltas = vec![(v, -1.0), (u, 1.0), (y, n)];
            let mut units = vec![(h, wl, n), (h, sl, 1.0)];
            for &(k, yd, zd) in &s.dist {
                if let Some(j) = yd.filter(|&j| at(x, j) > 0) {
                    deltas.push((j, -f64::from(at(x, j))));
                    units.push((k, job.worker, -f64::from(at(x, j))));
                }
                if let Some(j) = zd.filter(|&j| at(x, j) > 0) {
                    deltas.push((j, -f64::from(at(x, j))));
                    units.push((k, job.ps, -f64::from(at(x, j))));
                }
            }
            let dwork = n * (job.rate_local[h] - job.rate_dist);
            let c = self.grow_cost(i, s.t, &units, dwork);
            out.push(Move::new(deltas).with_objective(c));
        }
    }
}

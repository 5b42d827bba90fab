//! The GPU choice rules of SJF-BCO (FA-FFP and LBSGF) and of its
//! baselines (FF, LS, RAND) over a set of candidate GPUs, shared by the
//! offline trials and the online ring baseline
//! ([`SjfBcoOnline`](super::SjfBcoOnline)).
//!
//! GPUs are numbered flat, server-major; every rule reads the accumulated
//! load `U[g]` of each GPU, the server of each GPU, and (FA-FFP's packing
//! strategy only) whether a server already runs a job.

use rand::Rng;
use rand::rngs::ChaCha8Rng;

use super::model::RarServer;
use super::params::FaFfpStrategy;

/// How one job picks its GPUs among the candidates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Choice {
    /// FA-FFP with a strategy (LS is FA-FFP's `LeastAccumulated` for every job).
    FaFfp(FaFfpStrategy),
    /// LBSGF with spreading factor λ.
    Lbsgf(f64),
    /// First fit in server, then local index order.
    FirstFit,
    /// A uniformly random subset of the candidates.
    Random,
}

/// The GPU state a rule chooses from.
#[derive(Clone, Copy)]
pub(crate) struct GpuLoad<'a> {
    /// The servers in cluster order (first flat GPU and GPU count).
    pub(crate) servers: &'a [RarServer],
    /// The server of every flat GPU.
    pub(crate) gpu_server: &'a [u32],
    /// `U[g]` of every flat GPU.
    pub(crate) u: &'a [f64],
    /// Whether a server runs a job now (read by FA-FFP's packing strategy
    /// only).
    pub(crate) occupied: &'a dyn Fn(u32) -> bool,
}

impl GpuLoad<'_> {
    /// Applies a rule to the candidates `cands` (flat GPUs, ascending);
    /// `None` if it cannot pick `g` of them (or `Random` has no
    /// generator). The choice comes sorted.
    pub fn choose(
        &self,
        choice: Choice,
        cands: &[usize],
        g: usize,
        rng: Option<&mut ChaCha8Rng>,
    ) -> Option<Vec<usize>> {
        if cands.len() < g {
            return None;
        }
        let mut sel = match choice {
            Choice::FaFfp(FaFfpStrategy::LeastAccumulated) => self.least_u(cands.to_vec(), g),
            Choice::FaFfp(FaFfpStrategy::PackOccupied) => self.pack_occupied(cands, g),
            Choice::Lbsgf(lambda) => self.lbsgf(cands, g, lambda)?,
            Choice::FirstFit => cands[..g].to_vec(),
            Choice::Random => random_subset(cands, g, rng?),
        };
        sel.sort_unstable();
        Some(sel)
    }

    /// The `g` GPUs of `v` with least `U`, ties by flat index (= server,
    /// then local index).
    fn least_u(&self, mut v: Vec<usize>, g: usize) -> Vec<usize> {
        let key = |&a: &usize, &b: &usize| self.u[a].total_cmp(&self.u[b]).then(a.cmp(&b));
        if g < v.len() && g > 0 {
            v.select_nth_unstable_by(g - 1, key);
        }
        v.truncate(g);
        v
    }

    /// FA-FFP's packing strategy: occupied servers first, then best fit,
    /// then index; all from the first server that holds the job, else
    /// server by server.
    fn pack_occupied(&self, cands: &[usize], g: usize) -> Vec<usize> {
        let mut groups: Vec<(u32, Vec<usize>)> = Vec::new();
        for &c in cands {
            let s = self.gpu_server[c];
            match groups.last_mut() {
                Some((last, v)) if *last == s => v.push(c),
                _ => groups.push((s, vec![c])),
            }
        }
        groups.sort_by_key(|(s, v)| (!(self.occupied)(*s), v.len(), *s));
        if let Some((_, v)) = groups.iter().find(|(_, v)| v.len() >= g) {
            let mut one = v.clone();
            self.sort_by_u(&mut one);
            one.truncate(g);
            return one;
        }
        let mut out = Vec::with_capacity(g);
        for (_, v) in groups {
            let mut v = v;
            self.sort_by_u(&mut v);
            out.extend(v.into_iter().take(g - out.len()));
            if out.len() == g {
                break;
            }
        }
        out
    }

    /// Stable sort by `U` (ties keep the current order).
    fn sort_by_u(&self, v: &mut [usize]) {
        v.sort_by(|&a, &b| self.u[a].total_cmp(&self.u[b]));
    }

    /// LBSGF: the least-busy servers (average `U`) until their capacity
    /// reaches `λ·G_j`, then the globally least-`U` candidates among them.
    fn lbsgf(&self, cands: &[usize], g: usize, lambda: f64) -> Option<Vec<usize>> {
        let mut servers: Vec<(f64, usize)> = self
            .servers
            .iter()
            .enumerate()
            .filter(|(_, s)| s.gpus > 0)
            .map(|(i, s)| {
                let load: f64 = self.u[s.first_gpu..s.first_gpu + s.gpus as usize]
                    .iter()
                    .sum();
                (load / f64::from(s.gpus), i)
            })
            .collect();
        servers.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let need = lambda * g as f64;
        let mut chosen = vec![false; self.servers.len()];
        let mut cap = 0.0;
        for &(_, i) in &servers {
            chosen[i] = true;
            cap += f64::from(self.servers[i].gpus);
            if cap >= need {
                break;
            }
        }
        let mut by_server: Vec<Vec<usize>> = vec![Vec::new(); self.servers.len()];
        for &c in cands {
            let s = self.gpu_server[c] as usize;
            if chosen[s] {
                by_server[s].push(c);
            }
        }
        let mut list = Vec::new();
        for &(_, i) in servers.iter().filter(|(_, i)| chosen[*i]) {
            let own = &mut by_server[i];
            self.sort_by_u(own);
            list.append(own);
        }
        if list.len() < g {
            return None;
        }
        self.sort_by_u(&mut list);
        list.truncate(g);
        Some(list)
    }
}

/// A uniformly random `g`-subset of `cands` (`g ≤ cands.len()`), in the
/// order drawn.
pub(crate) fn random_subset(cands: &[usize], g: usize, rng: &mut impl Rng) -> Vec<usize> {
    rand::seq::index::sample(rng, cands.len(), g)
        .into_iter()
        .map(|i| cands[i])
        .collect()
}

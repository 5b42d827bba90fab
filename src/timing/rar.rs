//! Model RAR-C: ring all-reduce with inter-server contention and per-server
//! overhead, in seconds ([algorithms guide, section
//! 3.2](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-ring-allreduce)).
//!
//! **Provenance.** Restates the per-iteration model of Yu, Ji, Rajan, Liu
//! (ACM MobiHoc 2022), eqs. (6)–(8). Crate decisions: the clamp `k = max(1, ξ₁p)`
//! (the paper has `k = ξ₁p`), the pluggable [`Degradation`] (the paper's
//! example is `Linear`), the option to drop the overhead of single-GPU jobs,
//! and a calibration parametrisation that is linear in its parameters
//! ([`RarTiming`]'s [`LinearInParameters`] implementation).
//!
//! ```text
//! B   = b_i                  one server
//! B   = b_e / f(α, k)        several servers (k effective contenders)
//! τ   = 2(m/w)(w−1)/B + (m/w)(w−1)/C + ξ₂·n_srv + t_c
//! ```
//!
//! The four terms are the ring exchange (reduce-scatter plus all-gather), the
//! reductions, the per-server overhead and the compute `t_c = Δ^f·M + Δ^b`.
//! A ring with a reserved bandwidth `b` per cross-server edge runs on
//! several servers at `B = b`, without contention
//! ([`RarTiming::iteration_time_reserved_s`]). The formula has one
//! implementation, shared by [`RarTiming::iteration_time_s`] and
//! [`RarTiming::iteration_time_reserved_s`]; it is unit-free (seconds with bytes, B/s and seconds; slots with per-slot rates
//! and compute in slots).

use std::collections::HashMap;

use super::{
    IterationTime, LinearInParameters, Sign, TimingError, bad, bandwidth_from_inverse, check_count,
    check_non_negative, check_positive, check_theta_len,
};
use crate::model::{Degradation, RarJob, RingParams};

/// Tolerance below which a recovered degradation slope `α` (from
/// [`LinearInParameters::with_params`]) counts as 0 rather than negative.
const ALPHA_TOL: f64 = 1e-9;

/// The RAR-C model of one ring-all-reduce job at a fixed worker count, in SI
/// units. Build with [`RarTiming::new`] or [`RarTiming::from_job`], which
/// validate it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RarTiming {
    /// `m`: model (= gradient) bytes all-reduced per iteration.
    pub model_bytes: f64,
    /// `w`: workers, one per GPU, ≥ 1.
    pub workers: u32,
    /// `M`: samples per mini-batch per worker, ≥ 1 (only for
    /// [`IterationTime::samples_per_iteration`] = `w·M`).
    pub minibatch_size: u32,
    /// `t_c = Δ^f·M + Δ^b`: compute per iteration, seconds.
    pub compute_s: f64,
    /// `b_i`: bandwidth inside one server, bytes per second.
    pub intra_bps: f64,
    /// `b_e`: inter-server (NIC) bandwidth, bytes per second.
    pub external_bps: f64,
    /// `C`: reduction speed of one GPU, bytes per second.
    pub reduction_bps: f64,
    /// `ξ₂`: overhead per server used, seconds per iteration.
    pub overhead_per_server_s: f64,
    /// `f(α, k)`: how shared inter-server bandwidth degrades.
    pub degradation: Degradation,
    /// Whether a single-GPU job pays `ξ₂` for its one server (the literal
    /// formula; default `true`).
    pub overhead_for_single_gpu: bool,
}

impl RarTiming {
    /// A validated model for `workers` workers with mini-batch
    /// `minibatch_size` and compute `compute_s` per iteration, on a cluster
    /// with intra-server bandwidth `intra_bps` and ring parameters `ring`
    /// (`b_e`, `C`, `ξ₂`, `f`; `ξ₁` enters through
    /// [`effective_contenders`]). Single-GPU jobs pay the overhead; see
    /// [`RarTiming::with_single_gpu_overhead`].
    ///
    /// # Errors
    ///
    /// [`TimingError::NonFinite`], [`TimingError::Negative`] or
    /// [`TimingError::ZeroBandwidth`] naming the field; `BadConfig` for zero
    /// workers or an empty mini-batch.
    pub fn new(
        model_bytes: f64,
        workers: u32,
        minibatch_size: u32,
        compute_s: f64,
        intra_bps: f64,
        ring: &RingParams,
    ) -> Result<Self, TimingError> {
        RarTiming {
            model_bytes,
            workers,
            minibatch_size,
            compute_s,
            intra_bps,
            external_bps: ring.external_bandwidth_bps,
            reduction_bps: ring.reduction_speed_bps,
            overhead_per_server_s: ring.overhead_per_server_s,
            degradation: ring.degradation,
            overhead_for_single_gpu: true,
        }
        .validated()
    }

    /// The model of `job` run with `workers` workers: `m` = `model_bytes`,
    /// `M` = `minibatch_size`, `t_c = forward_per_sample_s·M +
    /// backward_per_iteration_s`. `intra_bps` is the machine's
    /// [`crate::model::Machine::intra_bandwidth_bps`].
    ///
    /// # Errors
    ///
    /// As [`RarTiming::new`], and `BadConfig` if the job does not allow
    /// `workers` workers.
    pub fn from_job(
        job: &RarJob,
        workers: u32,
        intra_bps: f64,
        ring: &RingParams,
    ) -> Result<Self, TimingError> {
        if !job.workers.allows(workers) {
            return Err(bad(format!("the job does not allow {workers} workers")));
        }
        check_non_negative("forward_per_sample_s", job.forward_per_sample_s)?;
        check_non_negative("backward_per_iteration_s", job.backward_per_iteration_s)?;
        let compute_s =
            job.forward_per_sample_s * f64::from(job.minibatch_size) + job.backward_per_iteration_s;
        RarTiming::new(
            job.model_bytes,
            workers,
            job.minibatch_size,
            compute_s,
            intra_bps,
            ring,
        )
    }

    /// The same model, with or without the overhead `ξ₂` for single-GPU jobs.
    pub fn with_single_gpu_overhead(mut self, charged: bool) -> Self {
        self.overhead_for_single_gpu = charged;
        self
    }

    /// Seconds per iteration on `servers` servers (`n_j`) with `k` effective
    /// contenders ([`effective_contenders`]; ignored on one server): the one
    /// implementation of the RAR-C formula.
    ///
    /// Unchecked: the caller ensures `1 ≤ servers ≤ workers`; `k` below 1 is
    /// read as 1 (the crate's clamp `k = max(1, ξ₁p)`). The checked form is
    /// [`IterationTime::iteration_time_s`] with a [`RarConfig`].
    ///
    /// ```
    /// use dmlsched::model::{Degradation, RingParams};
    /// use dmlsched::timing::RarTiming;
    /// let mut ring = RingParams::default();
    /// ring.external_bandwidth_bps = 1.25e9;
    /// ring.reduction_speed_bps = 2e10;
    /// ring.overhead_per_server_s = 0.005;
    /// ring.contender_ratio = 1.0;
    /// ring.degradation = Degradation::Linear { alpha: 0.1 };
    /// // 4 workers on 2 servers, 2 contenders: B = b_e/(2 + 0.1), exchange 0.252 s,
    /// // reduction 0.00375 s, overhead 2·0.005 s, compute 0.164 s.
    /// let m = RarTiming::new(1e8, 4, 32, 0.164, 1e10, &ring)?;
    /// assert!((m.iteration_time_s(2, 2.0) - 0.42975).abs() < 1e-12);
    /// # Ok::<(), dmlsched::timing::TimingError>(())
    /// ```
    pub fn iteration_time_s(&self, servers: u32, k: f64) -> f64 {
        let bandwidth = if servers <= 1 {
            self.intra_bps
        } else {
            self.external_bps / self.degradation.factor(k.max(1.0))
        };
        self.time_at(servers, bandwidth)
    }

    /// Seconds per iteration on `servers` servers of a ring that reserves
    /// `reserved_bps` (bytes per second per direction) on each of its
    /// cross-server edges, as in GADGET (Yu, Tian, Ji, Wu, Rajan, Liu,
    /// IEEE INFOCOM 2022): on two or more servers the ring runs without
    /// contention at its reserved rate — the model with `b_e` replaced by
    /// `reserved_bps` and one contender (`f(α, 1) = 1`) — and on one server
    /// at the intra-server bandwidth, as any ring:
    ///
    /// ```text
    /// B = b_i               one server
    /// B = reserved_bps      several servers
    /// τ = 2(m/w)(w−1)/B + (m/w)(w−1)/C + ξ₂·n_srv + t_c
    /// ```
    ///
    /// The time depends on nothing but the ring itself. Unchecked like
    /// [`RarTiming::iteration_time_s`]: the caller ensures `1 ≤ servers ≤
    /// workers` and `reserved_bps > 0` (a job's
    /// [`RarJob::reserved_bandwidth_bps`] is, by instance validation).
    ///
    /// ```
    /// use dmlsched::model::{Degradation, RingParams};
    /// use dmlsched::timing::RarTiming;
    /// // m = 0.8, w = 4, b_i = 20, C = 40, ξ₂ = 0.01, t_c = 0.08, reserved b = 4
    /// // (per-slot units; b_e and α do not matter to a reserving ring).
    /// let mut ring = RingParams::default();
    /// ring.external_bandwidth_bps = 100.0;
    /// ring.reduction_speed_bps = 40.0;
    /// ring.overhead_per_server_s = 0.01;
    /// ring.contender_ratio = 1.0;
    /// ring.degradation = Degradation::Linear { alpha: 0.5 };
    /// let m = RarTiming::new(0.8, 4, 1, 0.08, 20.0, &ring)?;
    /// let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    /// assert!(close(m.iteration_time_reserved_s(1, 4.0), 0.165)); // 1.2/20 + 0.6/40 + 0.01 + 0.08
    /// assert!(close(m.iteration_time_reserved_s(2, 4.0), 0.415)); // 1.2/4 + 0.015 + 0.02 + 0.08
    /// assert!(close(m.iteration_time_reserved_s(3, 4.0), 0.425));
    /// # Ok::<(), dmlsched::timing::TimingError>(())
    /// ```
    pub fn iteration_time_reserved_s(&self, servers: u32, reserved_bps: f64) -> f64 {
        let bandwidth = if servers <= 1 {
            self.intra_bps
        } else {
            reserved_bps
        };
        self.time_at(servers, bandwidth)
    }

    /// The formula at ring bandwidth `bandwidth`.
    fn time_at(&self, servers: u32, bandwidth: f64) -> f64 {
        let w = f64::from(self.workers);
        // (m/w)(w − 1): bytes each worker sends per ring phase.
        let shard_steps = self.model_bytes / w * (w - 1.0);
        2.0 * shard_steps / bandwidth
            + shard_steps / self.reduction_bps
            + self.overhead_per_server_s * self.overhead_servers(servers)
            + self.compute_s
    }

    /// The number of servers charged `ξ₂`: `servers`, or 0 for a single-GPU
    /// job without the overhead.
    fn overhead_servers(&self, servers: u32) -> f64 {
        if self.workers == 1 && !self.overhead_for_single_gpu {
            0.0
        } else {
            f64::from(servers)
        }
    }

    /// Checks every field: finite, times and sizes ≥ 0, bandwidths and speeds
    /// > 0, counts ≥ 1.
    fn validated(self) -> Result<Self, TimingError> {
        check_non_negative("model_bytes", self.model_bytes)?;
        check_count("workers", self.workers)?;
        check_count("minibatch_size", self.minibatch_size)?;
        check_non_negative("compute_s", self.compute_s)?;
        check_positive("intra_bps", self.intra_bps)?;
        check_positive("external_bps", self.external_bps)?;
        check_positive("reduction_bps", self.reduction_bps)?;
        check_non_negative("overhead_per_server_s", self.overhead_per_server_s)?;
        if let Degradation::Linear { alpha } = self.degradation {
            check_non_negative("degradation.alpha", alpha)?;
        }
        Ok(self)
    }

    /// Checks a configuration against this model.
    fn check_config(&self, cfg: &RarConfig) -> Result<(), TimingError> {
        check_count("servers", cfg.servers)?;
        if cfg.servers > self.workers {
            return Err(bad(format!(
                "a ring of {} workers cannot span {} servers",
                self.workers, cfg.servers
            )));
        }
        if cfg.servers > 1 && !(cfg.contenders.is_finite() && cfg.contenders >= 1.0) {
            return Err(bad(format!(
                "effective contenders must be finite and ≥ 1 (see effective_contenders), got {}",
                cfg.contenders
            )));
        }
        Ok(())
    }
}

/// `1 + α`: the slope of `f(α, k) = k + α(k − 1)` in `k` (1 for
/// [`Degradation::FairShare`]).
fn degradation_slope(d: &Degradation) -> f64 {
    match *d {
        Degradation::Linear { alpha } => 1.0 + alpha,
        Degradation::FairShare => 1.0,
    }
}

/// A configuration of a ring-all-reduce job for [`RarTiming`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RarConfig {
    /// `n_j`: servers the ring spans, `1 ≤ servers ≤ workers`.
    pub servers: u32,
    /// `k_j`: effective contenders, ≥ 1 ([`effective_contenders`]); ignored
    /// when `servers == 1`.
    pub contenders: f64,
}

impl IterationTime for RarTiming {
    type Config = RarConfig;

    fn iteration_time_s(&self, cfg: &RarConfig) -> Result<f64, TimingError> {
        self.check_config(cfg)?;
        Ok(RarTiming::iteration_time_s(
            self,
            cfg.servers,
            cfg.contenders,
        ))
    }

    /// `w·M` samples.
    fn samples_per_iteration(&self, _cfg: &RarConfig) -> f64 {
        f64::from(self.workers) * f64::from(self.minibatch_size)
    }
}

/// Parameter names of the linear calibration parametrisation.
const RAR_PARAMS: [&str; 5] = ["theta_A", "theta_B", "theta_C", "xi2", "t_c"];

/// Calibration form, linear in a re-parametrisation, with `D = 2m(w−1)/w`
/// (`multi`, `single`: the job spans more than one server, exactly one):
///
/// | feature | parameter (all `NonNeg`) |
/// |---|---|
/// | `multi·D` | `θ_A = 1/b_e + 1/(2C)` |
/// | `multi·D·(k−1)` | `θ_B = (1+α)/b_e` |
/// | `single·D` | `θ_C = 1/b_i + 1/(2C)` |
/// | `n_srv` (0 for a single-GPU job without overhead) | `ξ₂` |
/// | `1` | `t_c` |
///
/// `C` cannot be identified from iteration times; [`with_params`] keeps this
/// model's `C` and recovers `1/b_e = θ_A − 1/(2C)`, `1/b_i = θ_C − 1/(2C)`
/// and `α = θ_B·b_e − 1`. The result has `Degradation::Linear { alpha }`
/// (or stays `FairShare` if this model is `FairShare` and `|α| ≤ 10⁻⁹`).
///
/// [`with_params`]: LinearInParameters::with_params
impl LinearInParameters for RarTiming {
    fn param_names(&self) -> &'static [&'static str] {
        &RAR_PARAMS
    }

    fn features(&self, cfg: &RarConfig) -> Result<Vec<f64>, TimingError> {
        self.check_config(cfg)?;
        let w = f64::from(self.workers);
        let d = 2.0 * self.model_bytes * (w - 1.0) / w;
        let n = self.overhead_servers(cfg.servers);
        Ok(if cfg.servers > 1 {
            vec![d, d * (cfg.contenders - 1.0), 0.0, n, 1.0]
        } else {
            vec![0.0, 0.0, d, n, 1.0]
        })
    }

    fn signs(&self) -> Vec<Sign> {
        vec![Sign::NonNeg; RAR_PARAMS.len()]
    }

    fn params(&self) -> Vec<f64> {
        let half_inv_c = 0.5 / self.reduction_bps;
        vec![
            1.0 / self.external_bps + half_inv_c,
            degradation_slope(&self.degradation) / self.external_bps,
            1.0 / self.intra_bps + half_inv_c,
            self.overhead_per_server_s,
            self.compute_s,
        ]
    }

    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError> {
        check_theta_len(&RAR_PARAMS, theta)?;
        let half_inv_c = 0.5 / self.reduction_bps;
        let external_bps = bandwidth_from_inverse("theta_A − 1/(2C)", theta[0] - half_inv_c)?;
        let intra_bps = bandwidth_from_inverse("theta_C − 1/(2C)", theta[2] - half_inv_c)?;
        let alpha = theta[1] * external_bps - 1.0;
        if !alpha.is_finite() || alpha < -ALPHA_TOL {
            return Err(bad(format!(
                "theta_B·b_e − 1 = {alpha} gives no degradation α ≥ 0"
            )));
        }
        let degradation = match self.degradation {
            Degradation::FairShare if alpha.abs() <= ALPHA_TOL => Degradation::FairShare,
            _ => Degradation::Linear {
                alpha: alpha.max(0.0),
            },
        };
        RarTiming {
            external_bps,
            intra_bps,
            degradation,
            overhead_per_server_s: theta[3],
            compute_s: theta[4],
            ..*self
        }
        .validated()
    }
}

/// Effective contenders `k = max(1, ξ₁·p)` for a contention count `p` and
/// contender ratio `ξ₁` ([`RingParams::contender_ratio`]). The clamp is a
/// crate decision (the paper has `k = ξ₁p`): it keeps a ring's bandwidth at
/// most `b_e`.
///
/// ```
/// use dmlsched::timing::effective_contenders;
///
/// assert_eq!(effective_contenders(4, 0.5), 2.0);
/// assert_eq!(effective_contenders(3, 1.0), 3.0);
/// // Never below one contender, even for a ring alone or uncounted.
/// assert_eq!(effective_contenders(1, 0.5), 1.0);
/// assert_eq!(effective_contenders(0, 1.0), 1.0);
/// ```
pub fn effective_contenders(p: u32, contender_ratio: f64) -> f64 {
    (contender_ratio * f64::from(p)).max(1.0)
}

/// Contention counts `p_j` of a snapshot of active jobs: `jobs[j]` lists the servers on which job `j`
/// has at least one worker (duplicates allowed).
///
/// A job is multi-server if it uses two or more distinct servers. For each
/// server `s`, `n_s` counts the active multi-server jobs on `s`; a
/// multi-server job gets `p_j = max_{s ∈ servers(j)} n_s` (so a lone
/// multi-server job has `p_j = 1`), and a single-server job gets 0, even when
/// it shares a server with multi-server jobs.
///
/// # Complexity
///
/// `O(Σ_j |jobs[j]|)` expected time (one hash-map entry per server).
///
/// ```
/// use dmlsched::timing::contention_counts;
/// // Jobs 0 and 1 share server 1; job 2 sits alone on server 0.
/// let p = contention_counts(&[&[0, 1], &[1, 2, 2], &[0]]);
/// assert_eq!(p, vec![2, 2, 0]);
/// ```
pub fn contention_counts(jobs: &[&[u32]]) -> Vec<u32> {
    // server → (last job index + 1 that listed it, multi-server jobs on it)
    let mut servers: HashMap<u32, (usize, u32)> = HashMap::new();
    let mut multi = vec![false; jobs.len()];
    let mut distinct = Vec::new();
    for (j, list) in jobs.iter().enumerate() {
        distinct.clear();
        for &s in list.iter() {
            let entry = servers.entry(s).or_insert((0, 0));
            if entry.0 != j + 1 {
                entry.0 = j + 1;
                distinct.push(s);
            }
        }
        if distinct.len() >= 2 {
            multi[j] = true;
            for s in &distinct {
                if let Some(entry) = servers.get_mut(s) {
                    entry.1 += 1;
                }
            }
        }
    }
    jobs.iter()
        .zip(multi)
        .map(|(list, is_multi)| {
            if is_multi {
                list.iter()
                    .filter_map(|s| servers.get(s).map(|e| e.1))
                    .max()
                    .unwrap_or(0)
            } else {
                0
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Resources, WorkerCounts};
    use crate::timing::dot;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    /// The parameters of the hand-computed worked example.
    fn ring() -> RingParams {
        RingParams {
            external_bandwidth_bps: 1.25e9,
            reduction_speed_bps: 2e10,
            overhead_per_server_s: 0.005,
            contender_ratio: 1.0,
            degradation: Degradation::Linear { alpha: 0.1 },
        }
    }

    fn job() -> RarJob {
        RarJob {
            workers: WorkerCounts::Allowed(vec![1, 4]),
            iterations: 1000,
            convergence_iterations: None,
            model_bytes: 1e8,
            minibatch_size: 32,
            forward_per_sample_s: 0.002,
            backward_per_iteration_s: 0.1,
            reserved_bandwidth_bps: None,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0),
        }
    }

    fn checked(m: &RarTiming, servers: u32, contenders: f64) -> f64 {
        IterationTime::iteration_time_s(
            m,
            &RarConfig {
                servers,
                contenders,
            },
        )
        .unwrap()
    }

    #[test]
    fn worked_example_table() {
        let r = ring();
        let m = RarTiming::from_job(&job(), 4, 1e10, &r).unwrap();
        assert!(close(m.compute_s, 0.164));
        let k2 = effective_contenders(2, r.contender_ratio);
        let k1 = effective_contenders(1, r.contender_ratio);
        assert_eq!((k2, k1), (2.0, 1.0));
        assert!(close(checked(&m, 2, k2), 0.42975));
        assert!(close(checked(&m, 2, k1), 0.29775));
        assert!(close(checked(&m, 1, 7.0), 0.18775));
        let single = RarTiming::from_job(&job(), 1, 1e10, &r).unwrap();
        assert!(close(checked(&single, 1, 1.0), 0.169));
        assert_eq!(
            m.samples_per_iteration(&RarConfig {
                servers: 2,
                contenders: 2.0
            }),
            128.0
        );
    }

    /// The reserved-bandwidth numbers of the GADGET-style job (per-slot
    /// units): m = 0.8, w = 4, b_i = 20, b = 4, C = 40, ξ₂ = 0.01,
    /// t_c = 0.08.
    #[test]
    fn reserved_bandwidth_times() {
        let ring = RingParams {
            external_bandwidth_bps: 100.0,
            reduction_speed_bps: 40.0,
            overhead_per_server_s: 0.01,
            contender_ratio: 1.0,
            degradation: Degradation::Linear { alpha: 0.3 },
        };
        let m = RarTiming::new(0.8, 4, 1, 0.08, 20.0, &ring).unwrap();
        for (n, tau) in [(1, 0.165), (2, 0.415), (3, 0.425), (4, 0.435)] {
            assert!(close(m.iteration_time_reserved_s(n, 4.0), tau), "n = {n}");
        }
        // The same as the contention model with b_e = b and one contender,
        // whatever the degradation; on one server b plays no part.
        for degradation in [Degradation::FairShare, Degradation::Linear { alpha: 2.0 }] {
            let as_external = RarTiming {
                external_bps: 4.0,
                degradation,
                ..m
            };
            for n in 1..=4 {
                assert!(close(
                    m.iteration_time_reserved_s(n, 4.0),
                    as_external.iteration_time_s(n, 1.0)
                ));
            }
        }
        assert!(close(m.iteration_time_reserved_s(1, 1e-9), 0.165));
    }

    #[test]
    fn slot_counts_of_the_example() {
        use crate::timing::{ProgressMode, iterations_in};
        let m = RarTiming::from_job(&job(), 4, 1e10, &ring()).unwrap();
        let tau = m.iteration_time_s(2, 2.0);
        let frac = iterations_in(60.0, tau, ProgressMode::Fractional);
        assert!(close(frac, 60.0 / 0.42975));
        assert_eq!((frac * 1000.0).round() / 1000.0, 139.616);
        assert_eq!(iterations_in(60.0, tau, ProgressMode::Floor), 139.0);
    }

    #[test]
    fn single_gpu_rule_both_ways() {
        let m = RarTiming::from_job(&job(), 1, 1e10, &ring()).unwrap();
        assert!(m.overhead_for_single_gpu);
        assert!(close(m.iteration_time_s(1, 1.0), 0.169));
        let no = m.with_single_gpu_overhead(false);
        assert!(close(no.iteration_time_s(1, 1.0), 0.164));
        // The linear form follows the option.
        for mm in [m, no] {
            let cfg = RarConfig {
                servers: 1,
                contenders: 1.0,
            };
            let lin = dot(&mm.params(), &mm.features(&cfg).unwrap());
            assert!(close(lin, mm.iteration_time_s(1, 1.0)));
        }
        // Multi-GPU jobs always pay it.
        let four = RarTiming::from_job(&job(), 4, 1e10, &ring())
            .unwrap()
            .with_single_gpu_overhead(false);
        assert!(close(four.iteration_time_s(1, 1.0), 0.18775));
    }

    #[test]
    fn contention_counts_by_hand() {
        // A lone multi-server job.
        assert_eq!(contention_counts(&[&[3, 5]]), vec![1]);
        // Two multi-server jobs sharing server 1.
        assert_eq!(contention_counts(&[&[0, 1], &[1, 2]]), vec![2, 2]);
        // Single-server jobs get 0 even when sharing with multi-server jobs,
        // and do not count towards others.
        assert_eq!(
            contention_counts(&[&[0, 1], &[1], &[1, 1, 1], &[4]]),
            vec![1, 0, 0, 0]
        );
        // The maximum over the job's servers: n = (1, 1, 3, 2, 2) on servers 0..5.
        assert_eq!(
            contention_counts(&[&[0, 1, 2], &[2, 3], &[3, 4], &[2, 4]]),
            vec![3, 3, 2, 3]
        );
        assert_eq!(
            contention_counts(&[&[0, 1], &[1, 2], &[5, 6]]),
            vec![2, 2, 1]
        );
        assert_eq!(contention_counts(&[]), Vec::<u32>::new());
        assert_eq!(contention_counts(&[&[]]), vec![0]);
        // Huge server indices are fine.
        assert_eq!(
            contention_counts(&[&[u32::MAX, 0], &[u32::MAX, 7]]),
            vec![2, 2]
        );
    }

    #[test]
    fn effective_contenders_clamp() {
        assert_eq!(effective_contenders(0, 1.0), 1.0);
        assert_eq!(effective_contenders(1, 0.5), 1.0);
        assert_eq!(effective_contenders(4, 0.5), 2.0);
        assert!(close(effective_contenders(3, 0.8), 2.4));
    }

    #[test]
    fn degradation_linear_and_fair_share() {
        let lin = RarTiming::from_job(&job(), 4, 1e10, &ring()).unwrap();
        let fair = RarTiming {
            degradation: Degradation::FairShare,
            ..lin
        };
        // k = 3: f = 3.2 (linear, α = 0.1) or 3 (fair share).
        let exchange = |f: f64| 2.0 * 7.5e7 * f / 1.25e9;
        let rest = 7.5e7 / 2e10 + 0.010 + 0.164;
        assert!(close(lin.iteration_time_s(2, 3.0), exchange(3.2) + rest));
        assert!(close(fair.iteration_time_s(2, 3.0), exchange(3.0) + rest));
        // With one contender both give the full bandwidth.
        assert!(close(
            lin.iteration_time_s(2, 1.0),
            fair.iteration_time_s(2, 1.0)
        ));
        assert!(close(fair.iteration_time_s(2, 1.0), 0.29775));
    }

    #[test]
    fn linear_parametrisation() {
        let m = RarTiming::from_job(&job(), 4, 1e10, &ring()).unwrap();
        // θ of the linear parametrisation with α = 0.1.
        let theta = m.params();
        assert!(close(theta[0], 8.25e-10));
        assert!(close(theta[1], 1.1 / 1.25e9));
        assert!(close(theta[2], 1.25e-10));
        for (servers, k) in [(1, 1.0), (2, 1.0), (2, 2.0), (3, 2.4), (4, 4.0)] {
            let cfg = RarConfig {
                servers,
                contenders: k,
            };
            let lin = dot(&theta, &m.features(&cfg).unwrap());
            assert!(close(lin, checked(&m, servers, k)));
        }
        let back = m.with_params(&theta).unwrap();
        assert!(close(back.external_bps, m.external_bps));
        assert!(close(back.intra_bps, m.intra_bps));
        match back.degradation {
            Degradation::Linear { alpha } => assert!((alpha - 0.1).abs() < 1e-12),
            Degradation::FairShare => panic!("expected linear degradation"),
        }
        let fair = RarTiming {
            degradation: Degradation::FairShare,
            ..m
        };
        let back = fair.with_params(&fair.params()).unwrap();
        assert_eq!(back.degradation, Degradation::FairShare);
        // θ_A ≤ 1/(2C) would need an infinite external bandwidth.
        let mut bad_theta = theta.clone();
        bad_theta[0] = 0.25e-10;
        assert!(matches!(
            m.with_params(&bad_theta),
            Err(TimingError::BadConfig { .. })
        ));
    }

    #[test]
    fn config_checks() {
        let m = RarTiming::from_job(&job(), 4, 1e10, &ring()).unwrap();
        for (servers, contenders) in [(0, 1.0), (5, 1.0), (2, 0.5), (2, f64::NAN)] {
            assert!(matches!(
                IterationTime::iteration_time_s(
                    &m,
                    &RarConfig {
                        servers,
                        contenders
                    }
                ),
                Err(TimingError::BadConfig { .. })
            ));
        }
        // k is ignored on one server.
        assert!(close(checked(&m, 1, f64::NAN), 0.18775));
        assert!(matches!(
            RarTiming::from_job(&job(), 3, 1e10, &ring()),
            Err(TimingError::BadConfig { .. })
        ));
        let neg = RingParams {
            degradation: Degradation::Linear { alpha: -0.5 },
            ..ring()
        };
        assert_eq!(
            RarTiming::from_job(&job(), 4, 1e10, &neg).unwrap_err(),
            TimingError::Negative {
                field: "degradation.alpha",
                value: -0.5
            }
        );
    }
}

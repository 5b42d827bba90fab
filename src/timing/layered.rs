//! Model PS-W: a parameter-server job with per-layer timing and wait-free
//! back-propagation ([algorithms guide, section
//! 3.3](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-layered-ps)).
//!
//! **Provenance.** The crate's own design, after the abstract of Yu, Wu, Ji,
//! Liu (IEEE INFOCOM 2021), which says the model uses DNN layer structure. The
//! overlap of each layer's gradient transfer with the backward pass of the
//! layers below it is the standard wait-free back-propagation idea (Poseidon,
//! Zhang et al., USENIX ATC 2017); the recursion below and its test values are the
//! project's, not the paper's.
//!
//! Layers `l = 1..L` (1 = input side) are stored in order in
//! [`PsLayered::layers`] (index 0 is layer 1). With `w` workers and `p` PSs
//! (synchronous training, barrier at the iteration boundary):
//!
//! ```text
//! π_l = m_l·max(1/B_w, w/(p·B_s)) + λ         push (= pull) time of layer l
//! F   = Σ f_l ;  R_l = F + Σ_{k=l..L} g_k       gradient of layer l ready
//! for l = L down to 1 (E, U, Q = 0 beyond L):
//!     E_l = max(R_l, E_{l+1}) + π_l             push ends (FIFO push channel)
//!     U_l = max(E_l, U_{l+1}) + u_l/p           PS update ends
//!     Q_l = max(U_l, Q_{l+1}) + π_l             pull ends (FIFO pull channel)
//! τ = Q_1
//! ```
//!
//! Asynchronous training: every worker runs the recursion without PS
//! contention (`π_l = m_l/B_w + λ`, giving `τ_local`), and the PSs' aggregate
//! capacity caps the speed:
//! `τ_async = max(τ_local, w·Σm_l/(p·B_s), w·Σu_l/p)`.
//!
//! Weak scaling only: the per-worker batch `M` is fixed and the per-layer
//! times are given for it; samples per iteration are `w·M`. (Strong
//! scaling, a fixed global batch `B_g` split as `M = B_g/w` with per-layer
//! times affine in `M`, is not implemented.)

use super::{IterationTime, TimingError, bad, check_count, check_non_negative, check_positive};
use crate::model::{Layer, PsJob, SyncMode};

/// Model PS-W of one job, in SI units. Build with [`PsLayered::new`] or
/// [`PsLayered::from_job`], which validate it. As an [`IterationTime`] its
/// configuration is `(w, p)`: workers and PSs, both ≥ 1.
///
/// ```
/// use dmlsched::model::{Layer, SyncMode};
/// use dmlsched::timing::{IterationTime, PsLayered};
/// // A hand-computed job: three layers, 1 GB/s NICs, 32 samples per worker.
/// let layer = |f: f64, g: f64, mb: f64| Layer {
///     forward_s: f * 1e-3, backward_s: g * 1e-3, bytes: mb * 1e6, update_s: 0.0,
/// };
/// let layers = vec![layer(3.0, 6.0, 2.0), layer(3.0, 6.0, 4.0), layer(4.0, 8.0, 8.0)];
/// let m = PsLayered::new(layers, 1e9, 1e9, 0.0, 32, SyncMode::Synchronous)?;
/// assert!((m.iteration_time_s(&(4, 2))? - 0.062).abs() < 1e-12);
/// assert!((m.throughput(&(4, 2))? - 128.0 / 0.062).abs() < 1e-9);
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct PsLayered {
    /// Per-layer profile `(f_l, g_l, m_l, u_l)` for one worker and one
    /// mini-batch of `batch_per_worker` samples, input side first; non-empty.
    pub layers: Vec<Layer>,
    /// `B_w`: NIC bandwidth of one worker per direction, bytes per second.
    pub worker_bps: f64,
    /// `B_s`: NIC bandwidth of one PS per direction, bytes per second.
    pub ps_bps: f64,
    /// `λ`: latency per layer message, seconds.
    pub latency_s: f64,
    /// `M`: samples per mini-batch per worker, ≥ 1.
    pub batch_per_worker: u32,
    /// Synchronous or asynchronous training.
    pub sync: SyncMode,
}

/// The event times of one iteration of the recursion, per layer, index
/// 0 being layer 1 (the input side). Times in seconds from the start of the
/// iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct LayeredTrace {
    /// `π_l`: push (= pull) time of layer `l`.
    pub transfer_s: Vec<f64>,
    /// `R_l`: when the gradient of layer `l` is ready.
    pub ready_s: Vec<f64>,
    /// `E_l`: when the push of layer `l` ends.
    pub push_end_s: Vec<f64>,
    /// `U_l`: when the PS update of layer `l` ends.
    pub update_end_s: Vec<f64>,
    /// `Q_l`: when the pull of layer `l` ends.
    pub pull_end_s: Vec<f64>,
}

impl LayeredTrace {
    /// `Q_1`: the end of the last pull, seconds.
    pub fn iteration_time_s(&self) -> f64 {
        self.pull_end_s.first().copied().unwrap_or(0.0)
    }
}

impl PsLayered {
    /// A validated model: at least one layer, every layer time and size
    /// finite and ≥ 0, bandwidths finite and > 0, `λ ≥ 0`, `M ≥ 1`.
    ///
    /// # Errors
    ///
    /// [`TimingError::NonFinite`], [`TimingError::Negative`] or
    /// [`TimingError::ZeroBandwidth`] naming the field (`layers.forward_s`,
    /// …); `BadConfig` for no layers or `M = 0`.
    pub fn new(
        layers: Vec<Layer>,
        worker_bps: f64,
        ps_bps: f64,
        latency_s: f64,
        batch_per_worker: u32,
        sync: SyncMode,
    ) -> Result<Self, TimingError> {
        if layers.is_empty() {
            return Err(bad("a layered model needs at least one layer".into()));
        }
        for l in &layers {
            check_non_negative("layers.forward_s", l.forward_s)?;
            check_non_negative("layers.backward_s", l.backward_s)?;
            check_non_negative("layers.bytes", l.bytes)?;
            check_non_negative("layers.update_s", l.update_s)?;
        }
        check_positive("worker_bps", worker_bps)?;
        check_positive("ps_bps", ps_bps)?;
        check_non_negative("latency_s", latency_s)?;
        check_count("batch_per_worker", batch_per_worker)?;
        Ok(PsLayered {
            layers,
            worker_bps,
            ps_bps,
            latency_s,
            batch_per_worker,
            sync,
        })
    }

    /// The model of a PS job with a layer profile: its layers, `B_w` and
    /// `B_s` from the worker's and the PS's NIC demands, `λ = 0`, its sync
    /// mode. `None` if the job has no layer profile.
    ///
    /// # Errors
    ///
    /// As [`PsLayered::new`].
    pub fn from_job(job: &PsJob, batch_per_worker: u32) -> Result<Option<Self>, TimingError> {
        job.layers
            .as_ref()
            .map(|layers| {
                PsLayered::new(
                    layers.clone(),
                    job.worker.nic_bps,
                    job.ps.nic_bps,
                    0.0,
                    batch_per_worker,
                    job.sync,
                )
            })
            .transpose()
    }

    /// The recursion for `w` workers and `p` PSs: with PS contention
    /// (`π_l = m_l·max(1/B_w, w/(p·B_s)) + λ`) for synchronous training, and
    /// without it (`π_l = m_l/B_w + λ`, the per-worker `τ_local`) for
    /// asynchronous training.
    ///
    /// # Errors
    ///
    /// [`TimingError::BadConfig`] if `w = 0` or `p = 0`.
    pub fn trace(&self, w: u32, p: u32) -> Result<LayeredTrace, TimingError> {
        check_count("workers", w)?;
        check_count("parameter servers", p)?;
        Ok(self.recursion(self.per_byte_s(w, p), f64::from(p)))
    }

    /// Seconds per byte of one layer transfer: `max(1/B_w, w/(p·B_s))`
    /// (synchronous) or `1/B_w` (asynchronous).
    fn per_byte_s(&self, w: u32, p: u32) -> f64 {
        let worker = 1.0 / self.worker_bps;
        match self.sync {
            SyncMode::Synchronous => worker.max(f64::from(w) / (f64::from(p) * self.ps_bps)),
            SyncMode::Asynchronous => worker,
        }
    }

    /// The one implementation of the recursion.
    fn recursion(&self, per_byte_s: f64, p: f64) -> LayeredTrace {
        let n = self.layers.len();
        let transfer_s: Vec<f64> = self
            .layers
            .iter()
            .map(|l| l.bytes * per_byte_s + self.latency_s)
            .collect();
        let mut ready_s = vec![0.0; n];
        let mut acc: f64 = self.layers.iter().map(|l| l.forward_s).sum();
        for (r, l) in ready_s.iter_mut().zip(&self.layers).rev() {
            acc += l.backward_s;
            *r = acc;
        }
        let (mut push_end_s, mut update_end_s, mut pull_end_s) =
            (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let (mut e, mut u, mut q) = (0.0_f64, 0.0_f64, 0.0_f64);
        for l in (0..n).rev() {
            e = ready_s[l].max(e) + transfer_s[l];
            u = e.max(u) + self.layers[l].update_s / p;
            q = u.max(q) + transfer_s[l];
            (push_end_s[l], update_end_s[l], pull_end_s[l]) = (e, u, q);
        }
        LayeredTrace {
            transfer_s,
            ready_s,
            push_end_s,
            update_end_s,
            pull_end_s,
        }
    }
}

impl IterationTime for PsLayered {
    type Config = (u32, u32);

    /// `τ = Q_1` (synchronous) or
    /// `max(τ_local, w·Σm_l/(p·B_s), w·Σu_l/p)` (asynchronous), for
    /// `(w, p)`.
    fn iteration_time_s(&self, &(w, p): &(u32, u32)) -> Result<f64, TimingError> {
        let tau = self.trace(w, p)?.iteration_time_s();
        Ok(match self.sync {
            SyncMode::Synchronous => tau,
            SyncMode::Asynchronous => {
                let load = f64::from(w) / f64::from(p);
                let bytes: f64 = self.layers.iter().map(|l| l.bytes).sum();
                let update: f64 = self.layers.iter().map(|l| l.update_s).sum();
                tau.max(load * bytes / self.ps_bps).max(load * update)
            }
        })
    }

    /// `w·M` samples.
    fn samples_per_iteration(&self, &(w, _): &(u32, u32)) -> f64 {
        f64::from(w) * f64::from(self.batch_per_worker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Resources;
    use crate::timing::remaining_time_s;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs()
    }

    fn layer(f_ms: f64, g_ms: f64, m_mb: f64) -> Layer {
        Layer {
            forward_s: f_ms * 1e-3,
            backward_s: g_ms * 1e-3,
            bytes: m_mb * 1e6,
            update_s: 0.0,
        }
    }

    /// The hand-computed three-layer job with NICs of `bps` bytes/s.
    fn example(bps: f64, sync: SyncMode) -> PsLayered {
        let layers = vec![
            layer(3.0, 6.0, 2.0),
            layer(3.0, 6.0, 4.0),
            layer(4.0, 8.0, 8.0),
        ];
        PsLayered::new(layers, bps, bps, 0.0, 32, sync).unwrap()
    }

    fn ms(v: &[f64]) -> Vec<f64> {
        v.iter().map(|x| x * 1e-3).collect()
    }

    fn all_close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| close(*x, *y))
    }

    #[test]
    fn worked_example_trace() {
        let m = example(1e9, SyncMode::Synchronous);
        let t = m.trace(4, 2).unwrap();
        assert!(all_close(&t.transfer_s, &ms(&[4.0, 8.0, 16.0])));
        assert!(all_close(&t.ready_s, &ms(&[30.0, 24.0, 18.0])));
        assert!(all_close(&t.push_end_s, &ms(&[46.0, 42.0, 34.0])));
        assert!(all_close(&t.update_end_s, &t.push_end_s));
        assert!(all_close(&t.pull_end_s, &ms(&[62.0, 58.0, 50.0])));
        assert!(close(t.iteration_time_s(), 0.062));
    }

    /// `(w, p)`, π, τ, θ, remaining time.
    type Row = ((u32, u32), [f64; 3], f64, f64, f64);

    #[test]
    fn worked_example_table() {
        let m = example(1e9, SyncMode::Synchronous);
        // (w, p), π (ms), τ (ms), θ (samples/s, 3 decimals), remaining time
        // for 2·10⁶ samples (s, 3 decimals).
        let rows: [Row; 11] = [
            ((1, 1), [2.0, 4.0, 8.0], 40.0, 800.0, 2500.0),
            ((1, 2), [2.0, 4.0, 8.0], 40.0, 800.0, 2500.0),
            ((2, 1), [4.0, 8.0, 16.0], 62.0, 1032.258, 1937.5),
            ((2, 2), [2.0, 4.0, 8.0], 40.0, 1600.0, 1250.0),
            ((3, 1), [6.0, 12.0, 24.0], 84.0, 1142.857, 1750.0),
            ((3, 2), [3.0, 6.0, 12.0], 51.0, 1882.353, 1062.5),
            ((3, 3), [2.0, 4.0, 8.0], 40.0, 2400.0, 833.333),
            ((4, 1), [8.0, 16.0, 32.0], 106.0, 1207.547, 1656.25),
            ((4, 2), [4.0, 8.0, 16.0], 62.0, 2064.516, 968.75),
            ((4, 4), [2.0, 4.0, 8.0], 40.0, 3200.0, 625.0),
            ((8, 2), [8.0, 16.0, 32.0], 106.0, 2415.094, 828.125),
        ];
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        for ((w, p), pi, tau_ms, theta, remaining) in rows {
            let t = m.trace(w, p).unwrap();
            assert!(all_close(&t.transfer_s, &ms(&pi)), "π at ({w},{p})");
            let tau = m.iteration_time_s(&(w, p)).unwrap();
            assert!(close(tau, tau_ms * 1e-3), "τ at ({w},{p}): {tau}");
            let thr = m.throughput(&(w, p)).unwrap();
            assert!(close(thr, f64::from(w * 32) / (tau_ms * 1e-3)));
            assert_eq!(round3(thr), theta, "θ at ({w},{p})");
            assert_eq!(round3(remaining_time_s(2e6, thr)), remaining);
        }
    }

    #[test]
    fn fast_network() {
        let m = example(4e9, SyncMode::Synchronous);
        let t = m.trace(1, 1).unwrap();
        assert!(all_close(&t.transfer_s, &ms(&[0.5, 1.0, 2.0])));
        assert!(all_close(&t.push_end_s, &ms(&[30.5, 25.0, 20.0])));
        assert!(all_close(&t.pull_end_s, &ms(&[31.0, 26.0, 22.0])));
        let tau = m.iteration_time_s(&(1, 1)).unwrap();
        assert!(close(tau, 0.031));
        // The lower bound F + G + 2π_1: only layer 1's transfer is exposed.
        assert!(close(tau, 0.010 + 0.020 + 2.0 * 0.0005));
    }

    #[test]
    fn asynchronous_variant() {
        let sync = example(1e9, SyncMode::Synchronous);
        let asyn = example(1e9, SyncMode::Asynchronous);
        // (4, 2): τ_local uses π = m/B_w = (2, 4, 8) ms, i.e. 40 ms; the PS
        // cap is 4·14 MB/(2 GB/s) = 28 ms.
        assert!(close(asyn.iteration_time_s(&(4, 2)).unwrap(), 0.040));
        // (8, 1): the PS cap 8·14 MB/(1 GB/s) = 112 ms binds.
        assert!(close(asyn.iteration_time_s(&(8, 1)).unwrap(), 0.112));
        // Sync (8, 1): π = (16, 32, 64) ms, E = (130, 114, 82), Q = (194, 178, 146).
        assert!(close(sync.iteration_time_s(&(8, 1)).unwrap(), 0.194));
        // The async trace is the contention-free recursion.
        assert!(close(asyn.trace(8, 1).unwrap().iteration_time_s(), 0.040));
        // With PS update work the async variant can be slower: every
        // worker's gradient needs its own update.
        let mut heavy = asyn.clone();
        heavy.layers[0].update_s = 0.05;
        let mut heavy_sync = heavy.clone();
        heavy_sync.sync = SyncMode::Synchronous;
        assert!(close(heavy.iteration_time_s(&(4, 1)).unwrap(), 0.2));
        // Sync: U_1 = 74 + 50 ms, then the last pull of 8 ms.
        assert!(close(heavy_sync.iteration_time_s(&(4, 1)).unwrap(), 0.132));
    }

    #[test]
    fn from_job() {
        let mut job = PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: 1,
            minibatch_compute_s: 0.01,
            gradient_bytes: 1.4e7,
            worker: Resources::zero().gpus(1.0).cpu_cores(1.0).nic(1e9),
            ps: Resources::zero().cpu_cores(1.0).nic(1e9),
            max_workers: 4,
            max_ps: 4,
            ps_at_most_workers: true,
            sync: SyncMode::Synchronous,
            layers: None,
        };
        assert_eq!(PsLayered::from_job(&job, 32).unwrap(), None);
        job.layers = Some(example(1e9, SyncMode::Synchronous).layers);
        let m = PsLayered::from_job(&job, 32).unwrap().unwrap();
        assert_eq!(m, example(1e9, SyncMode::Synchronous));
        job.layers = Some(vec![]);
        assert!(matches!(
            PsLayered::from_job(&job, 32),
            Err(TimingError::BadConfig { .. })
        ));
    }
}

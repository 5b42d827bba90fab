//! Model PS-L: a synchronous parameter-server job whose communication time
//! depends on worker–PS co-location ([algorithms guide, section
//! 3.1](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md#timing-ps-locality)).
//!
//! **Provenance.** The crate's own design. The two-configuration form
//! (LOCAL / DISTRIBUTED) is the one a locality-aware planner optimises over;
//! the placement-level form is the crate's generalisation of it to any
//! placement, used by simulators and what-if evaluation. Sources: the OASiS
//! PS time `compute + 2·gradient/bandwidth` (Bao, Peng, Wu, Li, IEEE INFOCOM
//! 2018) and the abstract of Yu, Liu, Wu, Ji, Bentley (IEEE TNSE), whose model
//! body the project has not seen.
//!
//! Assumptions: every worker computes one mini-batch in `t_c` seconds
//! per iteration; the `S`-byte gradient is sharded evenly over the `p` PSs;
//! every worker pushes `S/p` bytes to every PS and pulls as many back (the
//! factor 2); bandwidth is reserved per task: `b_w` per worker NIC, `B_s` per
//! PS NIC, and `b_int` per worker for a PS on its own machine; each machine
//! the job touches costs `ξ₂` seconds (placement-level form only).
//!
//! **Unit of work.** The crate measures PS work in mini-batches (`PsJob`), so
//! [`IterationTime::samples_per_iteration`] is `w`, one mini-batch per worker.
//!
//! | form | type | config | time |
//! |---|---|---|---|
//! | two-configuration | [`PsLocality`] | [`PsConfig`] | `τ^L = t_c + 2S/b_int`, `τ^D = t_c + 2S/b_w` |
//! | placement-level | [`PsLocalityPlacement`] | [`PsPlacement`] | `t_c + 2·max(max_h T^W_h, max_h T^S_h) + ξ₂·machines` |

use super::{
    IterationTime, LinearInParameters, MaxOfLinear, Sign, TimingError, bad, bandwidth_from_inverse,
    check_count, check_non_negative, check_positive, check_theta_len, dot,
};
use crate::model::PsJob;

/// Parameters of model PS-L, in SI units. Build with [`PsLocality::new`] or
/// [`PsLocality::from_job`], which validate them.
///
/// As an [`IterationTime`] it is the two-configuration form; wrap it in
/// [`PsLocalityPlacement`] for the placement-level form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsLocality {
    /// `t_c`: compute time of one mini-batch on one worker, seconds.
    pub compute_s: f64,
    /// `S`: gradient (= model) size, bytes.
    pub gradient_bytes: f64,
    /// `b_int`: rate between a worker and a PS on the same machine, per
    /// worker, bytes per second.
    pub intra_bps: f64,
    /// `b_w`: reserved NIC rate of one worker, bytes per second.
    pub worker_bps: f64,
    /// `B_s`: reserved NIC rate of one PS, bytes per second.
    pub ps_bps: f64,
    /// `ξ₂`: synchronisation overhead per machine the job touches, seconds
    /// (placement-level form only).
    pub overhead_per_machine_s: f64,
}

impl PsLocality {
    /// A validated model: times and sizes finite and ≥ 0, rates finite and
    /// > 0.
    ///
    /// # Errors
    ///
    /// [`TimingError::NonFinite`], [`TimingError::Negative`] or
    /// [`TimingError::ZeroBandwidth`], naming the field.
    pub fn new(
        compute_s: f64,
        gradient_bytes: f64,
        intra_bps: f64,
        worker_bps: f64,
        ps_bps: f64,
        overhead_per_machine_s: f64,
    ) -> Result<Self, TimingError> {
        check_non_negative("compute_s", compute_s)?;
        check_non_negative("gradient_bytes", gradient_bytes)?;
        check_positive("intra_bps", intra_bps)?;
        check_positive("worker_bps", worker_bps)?;
        check_positive("ps_bps", ps_bps)?;
        check_non_negative("overhead_per_machine_s", overhead_per_machine_s)?;
        Ok(PsLocality {
            compute_s,
            gradient_bytes,
            intra_bps,
            worker_bps,
            ps_bps,
            overhead_per_machine_s,
        })
    }

    /// The model of a PS job: `t_c` = `minibatch_compute_s`, `S` =
    /// `gradient_bytes`, `b_w` = the worker's NIC demand, `B_s` = the PS's NIC
    /// demand, `ξ₂ = 0` (as in `locality.md`); `intra_bps` is the machine's
    /// [`crate::model::Machine::intra_bandwidth_bps`].
    ///
    /// # Errors
    ///
    /// As [`PsLocality::new`] (e.g. a job that reserves no NIC bandwidth).
    pub fn from_job(job: &PsJob, intra_bps: f64) -> Result<Self, TimingError> {
        PsLocality::new(
            job.minibatch_compute_s,
            job.gradient_bytes,
            intra_bps,
            job.worker.nic_bps,
            job.ps.nic_bps,
            0.0,
        )
    }

    /// `τ^L = t_c + 2S/b_int`: seconds per iteration with all workers and one
    /// PS on one machine.
    pub fn tau_local(&self) -> f64 {
        self.compute_s + 2.0 * self.gradient_bytes / self.intra_bps
    }

    /// `τ^D = t_c + 2S/b_w`: seconds per iteration with all traffic charged
    /// to the NICs (the PS side is assumed not to bind: `locality.md`'s
    /// linking row `b_w·w ≤ B_s·p`).
    pub fn tau_distributed(&self) -> f64 {
        self.compute_s + 2.0 * self.gradient_bytes / self.worker_bps
    }

    /// The placement-level form of the same model.
    pub fn placement_level(self) -> PsLocalityPlacement {
        PsLocalityPlacement(self)
    }
}

/// A configuration of the two-configuration form: LOCAL (all workers and
/// one PS on one machine) or DISTRIBUTED (all traffic charged to NICs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PsConfig {
    /// All workers and exactly one PS on one machine.
    Local {
        /// Workers, ≥ 1.
        workers: u32,
    },
    /// Workers and PSs anywhere, all traffic charged to the NICs.
    Distributed {
        /// Workers, ≥ 1.
        workers: u32,
    },
}

impl PsConfig {
    /// The number of workers.
    pub fn workers(&self) -> u32 {
        match *self {
            PsConfig::Local { workers } | PsConfig::Distributed { workers } => workers,
        }
    }
}

impl IterationTime for PsLocality {
    type Config = PsConfig;

    /// [`PsLocality::tau_local`] or [`PsLocality::tau_distributed`]; the time
    /// does not depend on the worker count.
    fn iteration_time_s(&self, cfg: &PsConfig) -> Result<f64, TimingError> {
        check_count("workers", cfg.workers())?;
        Ok(match cfg {
            PsConfig::Local { .. } => self.tau_local(),
            PsConfig::Distributed { .. } => self.tau_distributed(),
        })
    }

    /// `w` mini-batches.
    fn samples_per_iteration(&self, cfg: &PsConfig) -> f64 {
        f64::from(cfg.workers())
    }
}

/// Parameter names of the two-configuration form.
const TWO_CONFIG_PARAMS: [&str; 3] = ["t_c", "inv_b_int", "inv_b_w"];

/// Calibration form of the two-configuration model: `θ = (t_c, 1/b_int, 1/b_w)`, features
/// `(1, 2S·[LOCAL], 2S·[DISTRIBUTED])`, all `NonNeg`.
impl LinearInParameters for PsLocality {
    fn param_names(&self) -> &'static [&'static str] {
        &TWO_CONFIG_PARAMS
    }

    fn features(&self, cfg: &PsConfig) -> Result<Vec<f64>, TimingError> {
        check_count("workers", cfg.workers())?;
        let two_s = 2.0 * self.gradient_bytes;
        Ok(match cfg {
            PsConfig::Local { .. } => vec![1.0, two_s, 0.0],
            PsConfig::Distributed { .. } => vec![1.0, 0.0, two_s],
        })
    }

    fn signs(&self) -> Vec<Sign> {
        vec![Sign::NonNeg; TWO_CONFIG_PARAMS.len()]
    }

    fn params(&self) -> Vec<f64> {
        vec![self.compute_s, 1.0 / self.intra_bps, 1.0 / self.worker_bps]
    }

    /// Keeps `S`, `B_s` and `ξ₂`.
    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError> {
        check_theta_len(&TWO_CONFIG_PARAMS, theta)?;
        PsLocality::new(
            theta[0],
            self.gradient_bytes,
            bandwidth_from_inverse(TWO_CONFIG_PARAMS[1], theta[1])?,
            bandwidth_from_inverse(TWO_CONFIG_PARAMS[2], theta[2])?,
            self.ps_bps,
            self.overhead_per_machine_s,
        )
    }
}

/// A placement of one PS job: `(y_h, z_h)`, the job's workers and PSs on
/// machine `h`, for every machine `h` (entries may be zero). The job has
/// `w = Σ y_h` workers and `p = Σ z_h` PSs; both must be ≥ 1.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PsPlacement {
    /// `(workers, PSs)` per machine.
    pub machines: Vec<(u32, u32)>,
}

impl PsPlacement {
    /// `w = Σ y_h`.
    pub fn workers(&self) -> u64 {
        self.machines.iter().map(|&(y, _)| u64::from(y)).sum()
    }

    /// `p = Σ z_h`.
    pub fn ps(&self) -> u64 {
        self.machines.iter().map(|&(_, z)| u64::from(z)).sum()
    }

    /// Machines with at least one task of the job.
    pub fn machines_used(&self) -> u64 {
        self.machines
            .iter()
            .filter(|&&(y, z)| y > 0 || z > 0)
            .count() as u64
    }
}

/// Model PS-L in its placement-level form, configured by a
/// [`PsPlacement`]:
///
/// ```text
/// T^W_h = z_h·S/(p·b_int) + (p − z_h)·S/(p·b_w)     machine h with y_h > 0 (local, then remote shards)
/// T^S_h = (w − y_h)·S/(p·B_s)                        machine h with z_h > 0 (PS serves remote workers)
/// τ     = t_c + 2·max(max_h T^W_h, max_h T^S_h) + ξ₂·|{h : y_h + z_h > 0}|
/// ```
///
/// It is a maximum of terms linear in `θ = (t_c, 1/b_int, 1/b_w, 1/B_s, ξ₂)`
/// ([`MaxOfLinear`], all `NonNeg`); ties between terms go to the worker side,
/// then to the lower machine index (the order a calibration that alternates
/// between choosing the binding terms and fitting θ needs to be
/// deterministic).
///
/// ```
/// use dmlsched::timing::{IterationTime, PsLocality, PsPlacement};
/// let m = PsLocality::new(0.1, 1e8, 1.6e10, 1.25e9, 2.5e9, 0.004)?.placement_level();
/// // Two machines, each with two workers and one PS: τ = t_c + S/b_int + S/b_w + 2ξ₂.
/// let tau = m.iteration_time_s(&PsPlacement { machines: vec![(2, 1), (2, 1)] })?;
/// assert!((tau - 0.19425).abs() < 1e-12);
/// # Ok::<(), dmlsched::timing::TimingError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PsLocalityPlacement(pub PsLocality);

/// Parameter names of the placement-level form.
const PLACEMENT_PARAMS: [&str; 5] = ["t_c", "inv_b_int", "inv_b_w", "inv_B_s", "xi2"];

impl PsLocalityPlacement {
    /// `θ = (t_c, 1/b_int, 1/b_w, 1/B_s, ξ₂)`.
    fn theta(&self) -> [f64; 5] {
        let m = &self.0;
        [
            m.compute_s,
            1.0 / m.intra_bps,
            1.0 / m.worker_bps,
            1.0 / m.ps_bps,
            m.overhead_per_machine_s,
        ]
    }

    /// The one implementation of the placement-level formula: the feature vector of the
    /// binding term under `theta`, and its value `θ·φ` (seconds for the
    /// model's own θ).
    fn binding(&self, cfg: &PsPlacement, theta: &[f64]) -> Result<([f64; 5], f64), TimingError> {
        let (w, p) = (cfg.workers(), cfg.ps());
        if w == 0 || p == 0 {
            return Err(bad(format!(
                "a PS placement needs at least one worker and one PS, got {w} workers and {p} PSs"
            )));
        }
        let (wf, pf) = (w as f64, p as f64);
        let s = self.0.gradient_bytes;
        let n = cfg.machines_used() as f64;
        let worker_terms = cfg.machines.iter().filter(|t| t.0 > 0).map(|&(_, z)| {
            let local = f64::from(z);
            [
                1.0,
                2.0 * local * s / pf,
                2.0 * (pf - local) * s / pf,
                0.0,
                n,
            ]
        });
        let ps_terms = cfg.machines.iter().filter(|t| t.1 > 0).map(|&(y, _)| {
            let remote = wf - f64::from(y);
            [1.0, 0.0, 0.0, 2.0 * remote * s / pf, n]
        });
        let mut best: Option<([f64; 5], f64)> = None;
        for phi in worker_terms.chain(ps_terms) {
            let v = dot(theta, &phi);
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((phi, v));
            }
        }
        // w ≥ 1, so some machine hosts a worker and `best` is set.
        best.ok_or_else(|| bad("a PS placement needs at least one worker".into()))
    }
}

impl IterationTime for PsLocalityPlacement {
    type Config = PsPlacement;

    fn iteration_time_s(&self, cfg: &PsPlacement) -> Result<f64, TimingError> {
        Ok(self.binding(cfg, &self.theta())?.1)
    }

    /// `w = Σ y_h` mini-batches.
    fn samples_per_iteration(&self, cfg: &PsPlacement) -> f64 {
        cfg.workers() as f64
    }
}

impl MaxOfLinear for PsLocalityPlacement {
    fn param_names(&self) -> &'static [&'static str] {
        &PLACEMENT_PARAMS
    }

    fn features_at(&self, cfg: &PsPlacement, theta: &[f64]) -> Result<Vec<f64>, TimingError> {
        check_theta_len(&PLACEMENT_PARAMS, theta)?;
        Ok(self.binding(cfg, theta)?.0.to_vec())
    }

    fn signs(&self) -> Vec<Sign> {
        vec![Sign::NonNeg; PLACEMENT_PARAMS.len()]
    }

    fn params(&self) -> Vec<f64> {
        self.theta().to_vec()
    }

    /// Keeps `S`.
    fn with_params(&self, theta: &[f64]) -> Result<Self, TimingError> {
        check_theta_len(&PLACEMENT_PARAMS, theta)?;
        Ok(PsLocalityPlacement(PsLocality::new(
            theta[0],
            self.0.gradient_bytes,
            bandwidth_from_inverse(PLACEMENT_PARAMS[1], theta[1])?,
            bandwidth_from_inverse(PLACEMENT_PARAMS[2], theta[2])?,
            bandwidth_from_inverse(PLACEMENT_PARAMS[3], theta[3])?,
            theta[4],
        )?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::units::{gbps, mb};
    use crate::model::{Resources, SyncMode};

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1e-300)
    }

    /// The parameters of the hand-computed worked example: S = 10⁸ B, t_c = 0.1 s,
    /// b_int = 1.6·10¹⁰ B/s, b_w = 1.25·10⁹ B/s, B_s = 2.5·10⁹ B/s, ξ₂ = 0.004 s.
    fn example() -> PsLocality {
        PsLocality::new(0.1, 1e8, 1.6e10, 1.25e9, 2.5e9, 0.004).unwrap()
    }

    fn tau(m: PsLocality, machines: Vec<(u32, u32)>) -> f64 {
        m.placement_level()
            .iteration_time_s(&PsPlacement { machines })
            .unwrap()
    }

    #[test]
    fn worked_example_table() {
        let m = example();
        let mut eight = vec![(1, 0); 8];
        eight.push((0, 1));
        let rows: [(Vec<(u32, u32)>, f64); 5] = [
            (vec![(4, 1)], 0.1165),
            (vec![(1, 0), (1, 0), (1, 0), (1, 0), (0, 1), (0, 1)], 0.284),
            (vec![(2, 1), (2, 1)], 0.19425),
            (vec![(3, 2), (1, 0)], 0.268),
            (eight, 0.776),
        ];
        for (machines, want) in rows {
            let got = tau(m, machines.clone());
            assert!(close(got, want), "{machines:?}: {got} ≠ {want}");
        }
    }

    #[test]
    fn binding_terms_of_the_example() {
        let m = example().placement_level();
        let theta = m.params();
        // Row 4: machine 2's workers, all remote: φ = (1, 0, 2S, 0, 2).
        let phi = m
            .features_at(
                &PsPlacement {
                    machines: vec![(3, 2), (1, 0)],
                },
                &theta,
            )
            .unwrap();
        assert_eq!(phi, vec![1.0, 0.0, 2e8, 0.0, 2.0]);
        // Row 5: the PS side binds: φ = (1, 0, 0, 16S, 9).
        let mut eight = vec![(1, 0); 8];
        eight.push((0, 1));
        let phi = m
            .features_at(&PsPlacement { machines: eight }, &theta)
            .unwrap();
        assert_eq!(phi, vec![1.0, 0.0, 0.0, 16e8, 9.0]);
        // Row 2 is a tie (0.08 both sides): the worker side wins.
        let phi = m
            .features_at(
                &PsPlacement {
                    machines: vec![(1, 0), (1, 0), (1, 0), (1, 0), (0, 1), (0, 1)],
                },
                &theta,
            )
            .unwrap();
        assert_eq!(phi[2], 2e8);
    }

    #[test]
    fn special_case_local() {
        let m = example();
        for w in 1..=8 {
            assert!(close(
                tau(m, vec![(w, 1)]),
                m.tau_local() + m.overhead_per_machine_s
            ));
        }
        assert!(close(
            m.iteration_time_s(&PsConfig::Local { workers: 3 }).unwrap(),
            0.1125
        ));
    }

    #[test]
    fn special_case_no_colocation() {
        // w·b_w = 4·1.25e9 ≤ p·B_s = 2·2.5e9.
        let m = example();
        let t = tau(m, vec![(2, 0), (0, 1), (2, 0), (0, 1)]);
        assert!(close(t, m.tau_distributed() + 4.0 * 0.004));
        assert!(close(
            m.iteration_time_s(&PsConfig::Distributed { workers: 4 })
                .unwrap(),
            0.26
        ));
    }

    #[test]
    fn special_case_one_task_per_machine() {
        let m = example();
        for (w, p) in [(1u32, 1u32), (3, 2), (4, 1), (2, 3)] {
            let mut machines = vec![(1, 0); w as usize];
            machines.extend(vec![(0, 1); p as usize]);
            let (wf, pf) = (f64::from(w), f64::from(p));
            let want = m.compute_s
                + 2.0 * m.gradient_bytes * (1.0 / m.worker_bps).max(wf / (pf * m.ps_bps))
                + m.overhead_per_machine_s * (wf + pf);
            assert!(close(tau(m, machines), want), "w={w} p={p}");
        }
    }

    #[test]
    fn special_case_oasis() {
        let job = PsJob {
            epochs: 1,
            data_chunks: 1,
            minibatches_per_chunk: 1,
            minibatch_compute_s: 0.2,
            gradient_bytes: mb(40.0),
            worker: Resources::zero().gpus(1.0).cpu_cores(4.0).nic(gbps(2.0)),
            ps: Resources::zero().cpu_cores(2.0).nic(gbps(4.0)),
            max_workers: 4,
            max_ps: 2,
            ps_at_most_workers: true,
            sync: SyncMode::Asynchronous,
            layers: None,
        };
        let m = PsLocality::from_job(&job, gbps(200.0)).unwrap();
        let oasis = 0.2 + 2.0 * 40e6 / 2.5e8;
        assert!(close(m.tau_distributed(), oasis));
        // Workers and PSs on separate machines, PS side not binding.
        let t = tau(m, vec![(1, 0), (1, 0), (0, 1)]);
        assert!(close(t, oasis));
    }

    #[test]
    fn locality_spec_units_agree() {
        // locality.md: 2·(8·e)/(1000·b) with e in MB and b in Gbit/s.
        for &(e, b) in &[(40.0, 2.0), (97.7, 25.0), (3.3, 0.7)] {
            let m = PsLocality::new(0.0, mb(e), gbps(b), gbps(b), 1.0, 0.0).unwrap();
            let locality = 2.0 * (8.0 * e) / (1000.0 * b);
            assert!(close(m.tau_local(), locality));
            assert!(close(m.tau_distributed(), locality));
        }
    }

    #[test]
    fn two_configuration_is_linear() {
        let m = example();
        for cfg in [
            PsConfig::Local { workers: 2 },
            PsConfig::Distributed { workers: 5 },
        ] {
            let t = m.iteration_time_s(&cfg).unwrap();
            assert!(close(dot(&m.params(), &m.features(&cfg).unwrap()), t));
            assert_eq!(m.samples_per_iteration(&cfg), f64::from(cfg.workers()));
        }
        let back = m.with_params(&m.params()).unwrap();
        assert!(close(back.tau_local(), m.tau_local()));
        assert_eq!(back.ps_bps, m.ps_bps);
    }
}

//! Workload facts the generators and recipes use: the 160-job ring-all-reduce
//! workload of Wang, Shi, Wang, Chu ("Communication Contention Aware
//! Scheduling of Multiple Deep Learning Training Jobs", arXiv 2002.10105;
//! the workload used by Yu, Ji, Rajan, Liu, ACM MobiHoc 2022), the OASiS
//! simulation ranges (Bao, Peng, Wu, Li, IEEE INFOCOM 2018), the Philly
//! distributions (measured on the Pollux artifact's `philly.csv`) and
//! Gavel's job table and scale factors (Narayanan et al., OSDI 2020).
//! Aggregate numbers only: no third-party data is reproduced.

use crate::model::units::MB;

/// One model of the 160-job ring-all-reduce workload's catalogue
/// (in the units of the source simulator: ms per mini-batch and MB).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RarModel {
    /// Model name.
    pub name: &'static str,
    /// Mini-batch size per worker, samples.
    pub batch_size: u32,
    /// Forward time per mini-batch, milliseconds.
    pub forward_ms_per_batch: f64,
    /// Backward time per mini-batch, milliseconds.
    pub backward_ms_per_batch: f64,
    /// Model (gradient) size, MB (10⁶ bytes).
    pub size_mb: f64,
}

impl RarModel {
    /// Forward time per sample, seconds (`Δ^f`).
    pub fn forward_per_sample_s(&self) -> f64 {
        self.forward_ms_per_batch / 1000.0 / f64::from(self.batch_size)
    }

    /// Backward time per iteration, seconds (`Δ^b`).
    pub fn backward_per_iteration_s(&self) -> f64 {
        self.backward_ms_per_batch / 1000.0
    }

    /// Compute time of one iteration on one GPU, seconds: forward plus
    /// backward of one mini-batch (`Δ^f·M + Δ^b`).
    pub fn compute_per_iteration_s(&self) -> f64 {
        (self.forward_ms_per_batch + self.backward_ms_per_batch) / 1000.0
    }

    /// Model size in bytes.
    pub fn model_bytes(&self) -> f64 {
        self.size_mb * MB
    }
}

/// The three ImageNet models of the 160-job workload.
pub const MS160_MODELS: [RarModel; 3] = [
    RarModel {
        name: "resnet50",
        batch_size: 16,
        forward_ms_per_batch: 38.0,
        backward_ms_per_batch: 67.0,
        size_mb: 97.7,
    },
    RarModel {
        name: "googlenet",
        batch_size: 64,
        forward_ms_per_batch: 60.0,
        backward_ms_per_batch: 92.0,
        size_mb: 26.7,
    },
    RarModel {
        name: "alexnet",
        batch_size: 256,
        forward_ms_per_batch: 45.0,
        backward_ms_per_batch: 85.0,
        size_mb: 235.0,
    },
];

/// The exact GPU multiset of the 160-job workload as `(GPUs per job, jobs)`:
/// 160 jobs, 644 GPUs.
pub const MS160_GPU_COUNTS: [(u32, usize); 6] =
    [(1, 80), (2, 14), (4, 26), (8, 30), (16, 8), (32, 2)];

/// Philly job counts by GPUs per job, `(GPUs, jobs)`, measured on the
/// Pollux artifact's `philly.csv` (82,247 jobs).
pub const PHILLY_GPU_COUNTS: [(u32, u64); 10] = [
    (1, 76_627),
    (2, 1_818),
    (4, 1_870),
    (8, 1_643),
    (12, 7),
    (16, 199),
    (24, 7),
    (32, 67),
    (64, 6),
    (128, 3),
];

/// Philly duration quantiles `(probability, seconds)` from p0 to p100
/// (measured on the Pollux artifact's `philly.csv`; generators interpolate
/// log-linearly between them).
pub const PHILLY_DURATION_QUANTILES: [(f64, f64); 6] = [
    (0.0, 1.0),
    (0.1, 61.0),
    (0.5, 1_144.0),
    (0.9, 11_266.0),
    (0.99, 254_884.0),
    (1.0, 4_628_226.0),
];

/// Gavel's scale-factor (GPU count) distribution of its generated traces,
/// `(GPUs, probability)` (from Gavel's `generate_job`).
pub const GAVEL_SCALE_FACTORS: [(u32, f64); 4] = [(1, 0.70), (2, 0.10), (4, 0.15), (8, 0.05)];

/// One entry of Gavel's 26-entry job table: a model and its batch size
/// (`None` for A3C and CycleGAN, whose job types have none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GavelJobType {
    /// Model name as in Gavel's job types (`ResNet-50`, `LM`, …).
    pub model: &'static str,
    /// Batch size, if the job type names one.
    pub batch_size: Option<u32>,
}

impl GavelJobType {
    /// Gavel's job-type text, e.g. `ResNet-50 (batch size 64)`.
    pub fn job_type(&self) -> String {
        match self.batch_size {
            Some(b) => format!("{} (batch size {b})", self.model),
            None => self.model.to_string(),
        }
    }
}

const fn gavel(model: &'static str, batch_size: u32) -> GavelJobType {
    GavelJobType {
        model,
        batch_size: Some(batch_size),
    }
}

/// Gavel's job table (`scheduler/job_table.py`): ResNet-18 ×5, ResNet-50
/// ×4, Transformer ×5, LM ×5, Recommendation ×5, A3C, CycleGAN.
pub const GAVEL_JOB_TABLE: [GavelJobType; 26] = [
    gavel("ResNet-18", 16),
    gavel("ResNet-18", 32),
    gavel("ResNet-18", 64),
    gavel("ResNet-18", 128),
    gavel("ResNet-18", 256),
    gavel("ResNet-50", 16),
    gavel("ResNet-50", 32),
    gavel("ResNet-50", 64),
    gavel("ResNet-50", 128),
    gavel("Transformer", 16),
    gavel("Transformer", 32),
    gavel("Transformer", 64),
    gavel("Transformer", 128),
    gavel("Transformer", 256),
    gavel("LM", 5),
    gavel("LM", 10),
    gavel("LM", 20),
    gavel("LM", 40),
    gavel("LM", 80),
    gavel("Recommendation", 512),
    gavel("Recommendation", 1024),
    gavel("Recommendation", 2048),
    gavel("Recommendation", 4096),
    gavel("Recommendation", 8192),
    GavelJobType {
        model: "A3C",
        batch_size: None,
    },
    GavelJobType {
        model: "CycleGAN",
        batch_size: None,
    },
];

/// Uniform draws within the OASiS simulation ranges (Bao, Peng, Wu, Li,
/// IEEE INFOCOM 2018; the paper does not say how values are drawn within a
/// range, the crate draws uniformly), in the paper's units. Integer ranges are inclusive.
pub mod oasis {
    /// Worker GPUs, 0–4.
    pub const WORKER_GPUS: (u32, u32) = (0, 4);
    /// vCPUs of a worker or a PS, 1–10.
    pub const VCPUS: (u32, u32) = (1, 10);
    /// Memory of a worker or a PS, GB, 2–32.
    pub const MEMORY_GB: (f64, f64) = (2.0, 32.0);
    /// Storage of a worker or a PS, GB, 5–10.
    pub const STORAGE_GB: (f64, f64) = (5.0, 10.0);
    /// Worker bandwidth `b_i`, Gbit/s, 0.1–5.
    pub const WORKER_GBPS: (f64, f64) = (0.1, 5.0);
    /// PS bandwidth `B_i`, Gbit/s, 5–20.
    pub const PS_GBPS: (f64, f64) = (5.0, 20.0);
    /// Epochs `E_i`, 50–200.
    pub const EPOCHS: (u32, u32) = (50, 200);
    /// Data chunks `N_i`, 5–100.
    pub const CHUNKS: (u32, u32) = (5, 100);
    /// Mini-batches per chunk `M_i`, 10–100.
    pub const MINIBATCHES: (u32, u32) = (10, 100);
    /// Per-mini-batch compute `τ_i`, slots, 0.001–0.1.
    pub const TAU_SLOTS: (f64, f64) = (0.001, 0.1);
    /// Gradient size `e_i`, MB, 30–575.
    pub const GRADIENT_MB: (f64, f64) = (30.0, 575.0);
    /// Utility priority `γ1`, 1–100.
    pub const GAMMA1: (f64, f64) = (1.0, 100.0);
    /// Target completion `γ3`, slots, 1–15.
    pub const GAMMA3: (f64, f64) = (1.0, 15.0);
    /// Time-sensitive `γ2`, 0.01–1 (55% of jobs).
    pub const GAMMA2_SENSITIVE: (f64, f64) = (0.01, 1.0);
    /// Time-critical `γ2`, 4–6 (35% of jobs).
    pub const GAMMA2_CRITICAL: (f64, f64) = (4.0, 6.0);
    /// Shares of the classes: time-insensitive (`γ2 = 0`), time-sensitive,
    /// time-critical.
    pub const CLASS_SHARES: (f64, f64, f64) = (0.10, 0.55, 0.35);
    /// Slot length of the OASiS testbed, seconds (20 min), the crate's
    /// default for converting the ranges.
    pub const SLOT_LENGTH_S: f64 = 1200.0;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_the_spec_totals() {
        let jobs: usize = MS160_GPU_COUNTS.iter().map(|&(_, n)| n).sum();
        let gpus: usize = MS160_GPU_COUNTS.iter().map(|&(g, n)| g as usize * n).sum();
        assert_eq!((jobs, gpus), (160, 644));
        let philly: u64 = PHILLY_GPU_COUNTS.iter().map(|&(_, n)| n).sum();
        assert_eq!(philly, 82_247);
        let p: f64 = GAVEL_SCALE_FACTORS.iter().map(|&(_, p)| p).sum();
        assert!((p - 1.0).abs() < 1e-12);
        assert_eq!(GAVEL_JOB_TABLE[7].job_type(), "ResNet-50 (batch size 64)");
        assert_eq!(GAVEL_JOB_TABLE[25].job_type(), "CycleGAN");
    }

    #[test]
    fn model_units() {
        let r = MS160_MODELS[0];
        assert!((r.forward_per_sample_s() - 0.038 / 16.0).abs() < 1e-15);
        assert!((r.compute_per_iteration_s() - 0.105).abs() < 1e-12);
        assert_eq!(r.model_bytes(), 97.7e6);
    }
}

/// One model of the Optimus parameter-server table ([`OPTIMUS_MODELS`]):
/// compute time per mini-batch and gradient size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimusModel {
    /// The model's name.
    pub name: &'static str,
    /// `τ`, compute seconds per mini-batch.
    pub compute_s: f64,
    /// `e`, model (gradient) size, MB.
    pub size_mb: f64,
}

/// The Optimus (Peng et al., EuroSys 2018) MXNet parameter-server testbed
/// values, as published in the public `pengyanghua/DL2` simulator.
pub const OPTIMUS_MODELS: [OptimusModel; 8] = [
    OptimusModel {
        name: "resnet-50",
        compute_s: 0.449,
        size_mb: 102.2,
    },
    OptimusModel {
        name: "vgg-16",
        compute_s: 0.535,
        size_mb: 553.4,
    },
    OptimusModel {
        name: "resnext-110",
        compute_s: 0.226,
        size_mb: 6.92,
    },
    OptimusModel {
        name: "inception-bn",
        compute_s: 0.815,
        size_mb: 42.1,
    },
    OptimusModel {
        name: "seq2seq",
        compute_s: 0.075,
        size_mb: 36.5,
    },
    OptimusModel {
        name: "cnn-text-classification",
        compute_s: 0.585,
        size_mb: 24.0,
    },
    OptimusModel {
        name: "dssm",
        compute_s: 0.567,
        size_mb: 6.0,
    },
    OptimusModel {
        name: "wlm",
        compute_s: 0.154,
        size_mb: 19.2,
    },
];

//! Studies of the crate's own internals that reproduce a measurement of a
//! paper's evaluation. This is an unstable API: it may change in any
//! release.
//!
//! The papers' experiment set-ups (generators with the papers' parameter
//! ranges, reproductions of their figures) are not part of this library:
//! they live in the unpublished `dmlsched-experiments` crate of the
//! repository (`experiments/`), built on this crate's public API. What
//! stays here needs the crate's internals:
//!
//! | module | paper | contents |
//! |---|---|---|
//! | [`locality_quality`] | the crate's locality-aware scheduler, after Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for Distributed Machine Learning Systems", IEEE TNSE 2021 | the rounding quality of the oracle's LP rounding against the exact MIP on random single-job programs ([`locality_quality::measure`]) |
//! | `smd_rounding` (feature `highs`) | the crate's SMD-style scheduler, after the abstract of Yu, Wu, Ji, Liu, "A Sum-of-Ratios Multi-Dimensional-Knapsack Decomposition for DNN Resource Scheduling", IEEE INFOCOM 2021 | the rounded epoch plan against the LP relaxation and the exact MIP on random epochs of the layered workload, with the additive bound (`smd_rounding::run_e5`) |

pub mod locality_quality;
#[cfg(feature = "highs")]
pub mod smd_rounding;

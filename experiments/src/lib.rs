//! The set-ups of the papers' experiments, one module per algorithm:
//! generators with the papers' parameter ranges, reproductions of their
//! figures.
//!
//! The generic pieces (trace loaders, windows, Philly-, Gavel- and
//! ms160-like generators, arrival processes, recipes) live in
//! [`dmlsched::trace`]; what is specific to one paper's evaluation lives here.
//!
//! This is an unstable API: paper set-ups may change in any release. The
//! papers' constants and generators are offered for reproductions and
//! benches only.
//!
//! | module | paper | contents |
//! |---|---|---|
//! | [`oasis`] | Bao, Peng, Wu, Li, "Online Job Scheduling in Distributed Machine Learning Clusters", IEEE INFOCOM 2018 | OASiS-like parameter-server workloads ([`oasis::oasis_like_ps_jobs`]) and the seeded generator of the paper's Figures 3, 5 and 6 ([`oasis::repro`]) |
//! | [`sjf_bco`] | Yu, Ji, Rajan, Liu, "On Scheduling Ring-All-Reduce Learning Jobs in Multi-Tenant GPU Clusters with Communication Contention", ACM MobiHoc 2022 | the 160-job ring-all-reduce instance generator ([`sjf_bco::paper_instance`]) under two calibrations ([`sjf_bco::Calibration`]) |
//! | [`gadget`] | the crate's GADGET-style scheduler, after the abstract of Yu, Tian, Ji, Wu, Rajan, Liu, "GADGET: Online Resource Optimization for Scheduling Ring-All-Reduce Learning Jobs", IEEE INFOCOM 2022 | the synthetic scenario (16 × 8 GPUs, 400 × load jobs over 10 h) and the Philly window, with energy and fairness variants ([`gadget::GadgetScenario`]) |
//! | [`smd`] | the crate's SMD-style scheduler, after the abstract of Yu, Wu, Ji, Liu, "A Sum-of-Ratios Multi-Dimensional-Knapsack Decomposition for DNN Resource Scheduling", IEEE INFOCOM 2021 | runs over offered loads and seeds of the layered workload ([`dmlsched::algorithms::smd::workload::generate`]) and the epoch LP study ([`smd::run_e5`]) |
//! | [`locality`] | the crate's locality-aware scheduler, after Yu, Liu, Wu, Ji, Bentley, "Toward Efficient Online Scheduling for Distributed Machine Learning Systems", IEEE TNSE 2021 | the default cluster and parameter-server workload with the Optimus model table ([`locality::LocalityWorkload`], [`locality::generate`]) |

pub mod gadget;
pub mod locality;
pub mod oasis;
pub mod sjf_bco;
pub mod smd;

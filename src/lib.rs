//! # dmlsched
//!
//! Optimization algorithms, **with certificates**, for scheduling distributed
//! machine-learning training jobs on shared GPU clusters.
//!
//! A scheduler decides how many workers and parameter servers each training
//! job gets, on which machines, and when. `dmlsched` formulates these
//! decisions as integer programs, solves their LP relaxations with HiGHS,
//! rounds them, and returns every schedule with a [`Certificate`]: the
//! objective, a proven bound on the optimum, the a-priori guarantee and the
//! achieved ratio. Every schedule is re-checked by one independent checker,
//! [`schedule::verify`].
//!
//! ## A tour
//!
//! ```
//! use dmlsched::model::*;
//! use dmlsched::model::units::{gb, gbps, mb};
//! use dmlsched::schedule::{verify, JobSchedule, Schedule, Segment, Tasks};
//!
//! // A cluster of two 4-GPU machines (SI units: bytes, bytes/s, seconds).
//! let cluster = Cluster::homogeneous(
//!     2,
//!     Resources::zero().gpus(4.0).cpu_cores(32.0).memory(gb(256.0)).nic(gbps(25.0)),
//!     gbps(200.0),
//! );
//! // One elastic parameter-server job: 3 epochs over 4 chunks of 100 mini-batches.
//! let job = Job::new(JobId(0), 0.0, Architecture::ParameterServer(PsJob {
//!     epochs: 3, data_chunks: 4, minibatches_per_chunk: 100,
//!     minibatch_compute_s: 0.2, gradient_bytes: mb(40.0),
//!     worker: Resources::zero().gpus(1.0).cpu_cores(4.0).memory(gb(16.0)).nic(gbps(2.0)),
//!     ps: Resources::zero().cpu_cores(2.0).memory(gb(8.0)).nic(gbps(4.0)),
//!     max_workers: 4, max_ps: 2, ps_at_most_workers: true,
//!     sync: SyncMode::Asynchronous, layers: None,
//! }));
//! // Validation happens once, here; bad input is a typed error, never a panic.
//! let instance = Instance::new(cluster, vec![job], 600.0, 12)?;
//!
//! // Three workers and one PS on machine 0 for slots 0..3, then four workers
//! // spread over both machines.
//! let schedule = Schedule { jobs: vec![JobSchedule {
//!     job: JobId(0),
//!     admitted: true,
//!     segments: vec![
//!         Segment::new(0..3, vec![(MachineId(0), Tasks::new(3, 1))]),
//!         Segment::new(3..5, vec![(MachineId(0), Tasks::new(2, 1)), (MachineId(1), Tasks::new(2, 1))]),
//!     ],
//! }]};
//! verify(&instance, &schedule)?;
//! # Ok::<(), dmlsched::Error>(())
//! ```
//!
//! Every algorithm follows one contract, the [`algorithms::Algorithm`]
//! trait: `new(params)` validates its parameters once, and `solve(&instance,
//! rng)` returns the checked schedule, its certificate and the algorithm's
//! report; the online ones are also simulator policies
//! ([`algorithms::OnlineAlgorithm`]).
//!
//! ```
//! use dmlsched::algorithms::Algorithm;
//! use dmlsched::algorithms::sjf_bco::{SjfBco, SjfBcoParams};
//! use dmlsched::model::Instance;
//! use rand::SeedableRng;
//!
//! # #[cfg(all(feature = "serde", feature = "highs"))] {
//! let text = std::fs::read_to_string("examples/data/instance_ring_batch.json").unwrap();
//! let instance = Instance::from_json(&text)?;
//! let sjf_bco = SjfBco::new(SjfBcoParams::default())?;
//! let solved = sjf_bco.solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))?;
//! dmlsched::schedule::verify(&instance, &solved.schedule)?;
//! assert!(solved.certificate.check(1e-9).is_ok());
//! # }
//! # Ok::<(), dmlsched::Error>(())
//! ```
//!
//! The solver layer ([`lp`]) takes a backend-neutral sparse program and
//! returns primal values, duals and a status. `examples/quickstart.rs`
//! runs the locality-aware scheduler on a small cluster, checks the
//! schedule and prints its certificate.
//!
//! ## Modules
//!
//! The crate root re-exports what nearly every user needs: [`Instance`],
//! [`Cluster`], [`Job`], [`JobId`], [`MachineId`], [`Resources`],
//! [`Schedule`] and [`verify`], [`Algorithm`], [`OnlineAlgorithm`] and
//! [`Solved`], [`Certificate`], [`simulate`], [`SimOptions`], [`SimResult`]
//! and [`Policy`], [`Error`] and [`Result`].
//!
//! | module | contents |
//! |---|---|
//! | [`model`] | clusters, machines, jobs, utilities; [`model::Instance`] validates them |
//! | [`schedule`] | time-slotted schedules and the independent checker [`schedule::verify`] |
//! | [`certificate`] | [`Certificate`], bounds, guarantees and [`Certificate::check`] |
//! | [`lp`] | sparse linear/mixed-integer programs and the HiGHS adapter |
//! | [`timing`] | per-iteration time models (PS with locality, ring all-reduce with contention, layered PS) and progress accounting |
//! | [`calibrate`] | fitting the timing models to measured iteration times (least squares with sign constraints, profile, alternation and pattern search), cross-validation, and predictors with a 10% held-out error target |
//! | [`trace`] | loaders for public cluster traces, windows, synthetic workload generators and recipes that turn trace rows into jobs |
//! | [`sim`] | the discrete-event simulator and its [`sim::Policy`] interface |
//! | `report` | CSV tables (`report::csv`) and SVG plots (`report::plot`) of simulator runs; feature `report` |
//! | [`pcip`] | mixed packing–covering integer programs: LP relaxation with a safe dual bound, randomized rounding with per-instance Chernoff/Harris–FKG bounds, repair and improvement (shift moves, a sub-MIP neighbourhood), anytime answers under a time limit, exact MIP fallback |
//! | [`online`] | the generic online primal–dual admission framework: exponential prices, strict admission, `2α` / `2α_eff` certificates |
//! | [`placement`] | where tasks go: the [`placement::Placer`] and its rules, and dominant share, shared by baselines and algorithms |
//! | [`algorithms`] | the published algorithms, one module per system, each an [`algorithms::Algorithm`] returning [`algorithms::Solved`] |
//! | [`baselines`] | the policies the papers compare against (FIFO, SJF, DRF, Tetris, …) |
//! | [`registry`] | every policy and algorithm by name, with parameters from JSON |
//! | `protocol` | the session protocol's driver: sessions over one shared cluster state, one per job architecture, driven by events (`protocol::SessionSet`, behind `dmlsched session` and the Python `Session`); feature `serde` |
//! | [`experiments`] | studies of the crate's internals that reproduce a paper's measurement (the locality oracle's rounding quality); the papers' set-ups and figures are in the repository's unpublished `dmlsched-experiments` crate |
//! | [`error`] | the crate's [`Error`] |
//!
//! ## Algorithms
//!
//! The catalogue of algorithms — what each decides, the guarantee its
//! certificate reports and how far it is implemented — is one table, the
//! README's [Algorithms](https://github.com/dmlsched/dmlsched#algorithms)
//! table; [`algorithms`] lists every algorithm's type, registry name and
//! simulator policy. The mathematics of every algorithm, and every decision
//! taken where a paper is ambiguous, are in the
//! [algorithms guide](https://github.com/dmlsched/dmlsched/blob/main/docs/algorithms.md).
//!
//! ## Parameters and reports
//!
//! Every parameter, option and report struct (`…Params`, `…Options`,
//! `…Limits`, `…Report`, `…Summary`) is `#[non_exhaustive]`, so that a new
//! field is not a breaking change. Build parameters from their default and
//! set the fields you need; read a report's fields as usual:
//!
//! ```
//! use dmlsched::sim::{SimOptions, StopAt};
//! use dmlsched::algorithms::sjf_bco::SjfBcoParams;
//!
//! let mut options = SimOptions::default();
//! options.stop = StopAt::Horizon;
//! let mut params = SjfBcoParams::default();
//! params.est_upper = 1.0;
//! # let _ = (options, params);
//! ```
//!
//! Parameters are validated once, by the algorithm's `new`. Fields of
//! internal working types that no caller of the crate sets or reads are
//! crate-private (they still show in `Debug` output); every field of a
//! parameter, option, certificate or report type is public. The
//! [`experiments`] module is an unstable API: it may change in any release.
//! The papers' set-ups, constants and figure reproductions are not part of
//! the library: they live in the repository's unpublished
//! `dmlsched-experiments` crate, built on this public API.
//!
//! ## Features
//!
//! | feature | default | enables |
//! |---|---|---|
//! | `highs` | yes | [`lp::solve`] through HiGHS; without it, `solve` returns [`lp::LpError::SolverUnavailable`] and the rest builds without a C++ toolchain |
//! | `serde` | yes | serde derives; JSON instance I/O (`model::Instance::from_json`) |
//! | `report` | no | the `report` module: CSV tables and SVG plots of simulator runs (adds `plotters`, SVG backend only); the engine and the schedulers need neither |
//! | `cli` | no | the `dmlsched` command line (`highs`, `serde`, `report` and its argument parser); library users do not build it |
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod algorithms;
pub mod allocate;
pub mod baselines;
pub mod calibrate;
pub mod certificate;
pub mod error;
pub(crate) mod exact;
pub mod experiments;
pub mod lp;
pub mod model;
pub mod online;
pub mod pcip;
pub mod placement;
#[cfg(feature = "serde")]
pub mod protocol;
pub mod registry;
#[cfg(all(feature = "report", feature = "serde"))]
pub mod replay;
#[cfg(feature = "report")]
pub mod report;
pub mod schedule;
pub mod sim;
pub mod state;
#[cfg(all(feature = "report", feature = "serde"))]
pub mod sweep;
pub mod timing;
pub mod trace;

// The types every user touches, at the crate root.
pub use algorithms::{Algorithm, OnlineAlgorithm, Solved};
pub use certificate::Certificate;
pub use error::{Error, Result};
pub use model::{Cluster, Instance, Job, JobId, MachineId, Resources};
pub use schedule::{Schedule, verify};
pub use sim::{Policy, SimOptions, SimResult, simulate};

//! A whole slotted run of the SMD-style scheduler over an instance's
//! arrivals ([`Smd`]): the jobs checked up front, the simulation stopped at
//! the horizon, and the schedule verified before it is returned.

use rand::Rng;

use crate::algorithms::{Algorithm, OnlineAlgorithm, Solved};
use crate::certificate::{Bound, BoundKind, Certificate, Sense};
use crate::model::Instance;
use crate::schedule::verify;
use crate::sim::{Decisions, SimOptions, SimResult, StopAt, simulate, total_work};
use crate::timing::ProgressMode;

use super::build::at_one_speed;
use super::{SmdEpochReport, SmdError, SmdParams, SmdScheduler, candidates};

/// The SMD-style scheduler as an [`Algorithm`]: [`Smd::solve`] runs it over
/// an instance's arrivals as a slotted schedule; as an
/// [`OnlineAlgorithm`] its policy is the [`SmdScheduler`].
///
/// ```
/// use dmlsched::algorithms::Algorithm;
/// use dmlsched::algorithms::smd::{Smd, SmdParams};
/// use dmlsched::model::Instance;
/// use rand::SeedableRng;
///
/// # #[cfg(all(feature = "serde", feature = "highs"))] {
/// let text = std::fs::read_to_string("examples/data/instance_layered.json").unwrap();
/// let instance = Instance::from_json(&text)?;
/// let solved = Smd::new(SmdParams::default())?
///     .solve(&instance, &mut rand::rngs::ChaCha8Rng::seed_from_u64(0))?;
/// assert!(solved.certificate.check(1e-9).is_ok());
/// assert_eq!(solved.report.epochs.is_empty(), instance.jobs().is_empty());
/// # }
/// # Ok::<(), dmlsched::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Smd {
    params: SmdParams,
}

/// What [`Smd::solve`] reports beside the schedule and certificate.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SmdReport {
    /// The simulation (one record per instance job; jobs unfinished at the
    /// horizon have no finish time and earn nothing).
    pub result: SimResult,
    /// Every epoch's report, in order, each with its certificate (checked).
    pub epochs: Vec<SmdEpochReport>,
    /// The parameters the run used (`max_iteration_s` at most the slot
    /// length).
    pub params: SmdParams,
}

impl Algorithm for Smd {
    const NAME: &'static str = "smd";
    type Params = SmdParams;
    type Report = SmdReport;

    /// The scheduler with `params` ([`SmdParams::validate`]).
    fn new(params: SmdParams) -> crate::Result<Self> {
        params.validate()?;
        Ok(Smd { params })
    }

    fn params(&self) -> &SmdParams {
        &self.params
    }

    /// Runs the scheduler over `instance`'s arrivals as a slotted schedule:
    /// decisions at slot boundaries, whole iterations per slot, and a stop
    /// at the instance's horizon (jobs unfinished then are reported by
    /// their records and earn nothing). Only configurations that complete
    /// an iteration within a slot are candidates (`max_iteration_s` is at
    /// most the slot length). The scheduler draws no random numbers: `rng`
    /// is not used.
    ///
    /// Every job is checked before simulating ([`check_slotted`]); the
    /// schedule is verified and every epoch's certificate checked before
    /// the run is returned.
    ///
    /// The certificate's objective is the total completion time (the sum
    /// of JCTs) of the jobs completed by the horizon; its bound is trivial:
    /// the sum, over the same jobs, of the shortest time each needs alone
    /// on the whole cluster at its fastest configuration. It states no
    /// a-priori guarantee; each epoch's own certificate is in the report.
    ///
    /// # Errors
    ///
    /// The input errors of [`check_slotted`]; the errors of
    /// [`simulate`](crate::sim::simulate) and of the epochs;
    /// [`crate::Error::Schedule`] if the schedule fails the checker and
    /// [`SmdError::Certificate`] if a certificate fails its check (both
    /// bugs).
    fn solve<R: Rng>(&self, instance: &Instance, _rng: &mut R) -> crate::Result<Solved<SmdReport>> {
        let slot_s = instance.slot_length_s();
        let params = SmdParams {
            max_iteration_s: Some(
                self.params
                    .max_iteration_s
                    .map_or(slot_s, |t| t.min(slot_s)),
            ),
            ..self.params
        };
        check_slotted(instance, &params)?;
        let mut scheduler = SmdScheduler::new(params);
        let options = SimOptions {
            decisions: Decisions::SlotBoundaries,
            progress: ProgressMode::Floor,
            stop: StopAt::Horizon,
            ..SimOptions::default()
        };
        let result = simulate(instance, &mut scheduler, &options)?;
        let schedule = result.to_schedule(instance);
        verify(instance, &schedule)?;
        for r in scheduler.reports() {
            r.check(1e-9)?;
        }
        let report = SmdReport {
            result,
            epochs: scheduler.reports().to_vec(),
            params,
        };
        let certificate = certificate_of(instance, &report)?;
        Ok(Solved {
            schedule,
            certificate,
            report,
        })
    }
}

impl OnlineAlgorithm for Smd {
    type Policy = SmdScheduler;

    fn policy<R: Rng>(&self, _instance: &Instance, _rng: &mut R) -> crate::Result<SmdScheduler> {
        Ok(SmdScheduler::new(self.params))
    }
}

/// The certificate of a slotted run: total completion time of the jobs
/// completed by the horizon, against the sum of their shortest times alone.
fn certificate_of(instance: &Instance, report: &SmdReport) -> crate::Result<Certificate> {
    let total = instance.cluster().total_capacity();
    let (mut objective, mut bound) = (0.0, 0.0);
    for (job, rec) in instance.jobs().iter().zip(&report.result.jobs) {
        let Some(jct) = rec.jct_s else { continue };
        objective += jct;
        let job = &*at_one_speed(instance, job)?;
        let alone = candidates(job, total_work(job), &total, &total, &report.params)?
            .iter()
            .map(|c| c.remaining_s)
            .fold(f64::INFINITY, f64::min);
        if alone.is_finite() {
            bound += alone;
        }
    }
    let mut certificate = Certificate::new(
        "smd",
        Sense::Minimise,
        objective,
        Bound::new(bound, BoundKind::Trivial),
    );
    certificate.scope = Some(format!(
        "the objective is the total completion time (sum of JCTs, s) of the {} of {} jobs completed \
         by the horizon of {} slots of {} s; the bound is the sum, over those jobs, of the time each \
         needs alone on the whole cluster at its fastest configuration; no a-priori guarantee \
         (every epoch's own certificate is in the report)",
        report.completed(),
        instance.jobs().len(),
        instance.horizon_slots(),
        instance.slot_length_s()
    ));
    Ok(certificate)
}

impl SmdReport {
    /// Jobs that completed by the horizon.
    pub fn completed(&self) -> usize {
        self.result
            .jobs
            .iter()
            .filter(|j| j.finish_s.is_some())
            .count()
    }

    /// Jobs neither completed nor rejected when the run stopped (at the
    /// horizon, or with nothing left to happen).
    pub fn unfinished(&self) -> usize {
        self.result
            .jobs
            .iter()
            .filter(|j| j.finish_s.is_none() && !j.rejected)
            .count()
    }
}

/// Checks up front that every job is inside the scheduler's model for a
/// slotted run under `params` (with `max_iteration_s` set): a layered
/// parameter-server job, one worker and one PS fit the whole cluster, and
/// some configuration completes an iteration within a slot.
///
/// # Errors
///
/// [`SmdError::UnsupportedJob`] (naming the job and why),
/// [`SmdError::JobNeverFits`], [`SmdError::TooLarge`],
/// [`SmdError::InvalidOption`].
pub fn check_slotted(instance: &Instance, params: &SmdParams) -> Result<(), SmdError> {
    params.validate()?;
    let total = instance.cluster().total_capacity();
    for job in instance.jobs() {
        let job = &*at_one_speed(instance, job)?;
        if candidates(job, total_work(job), &total, &total, params)?.is_empty() {
            return Err(SmdError::JobNeverFits { job: job.id });
        }
    }
    Ok(())
}

//! A pricing scheduler as a session: it decides job by job inside a
//! scheduler's own event loop, over a shared
//! [`crate::state::ClusterState`], without knowing the future.
//!
//! Before each decision the session syncs its ledger's cells in the
//! planning window `[now, now + W)` from the state's whole fill — its own
//! jobs, other sessions' jobs and outside usage, converted to the
//! algorithm's units — so every cell is priced by everything on it. An
//! admitted plan is committed to the state, which is the arbiter: a plan
//! the state refuses (a resource the algorithm does not model, GPU ids
//! fragmented by releases) is turned into a rejection. Cells before `now`
//! are dropped from the ledger.
//!
//! The price bounds are a-priori (the future is unknown): given
//! explicitly, or learned from a list of past jobs with
//! [`SessionBounds::learned_from`], both over a horizon of `T = W` slots.

use std::collections::BTreeMap;
use std::fmt;

use crate::certificate::Certificate;
use crate::error::Result;
use crate::model::units::Num;
use crate::model::{Job, JobId, MachineId, Resources};
use crate::schedule::Segment;
use crate::sim::Rejection;
use crate::state::{ClusterState, Holder, StateError};

use super::bounds::PriceBounds;
use super::engine::{Decision, OnlinePrimalDual, PdOptions, RunReport};
use super::error::OnlineError;
use super::ledger::{Ledger, ResourceId};
use super::oracle::PricingOracle;

/// The job type of an algorithm's oracle.
pub type SessionJob<A> = <<A as SessionAlgorithm>::Oracle as PricingOracle>::Job;
/// The plan type of an algorithm's oracle.
pub type SessionPlan<A> = <<A as SessionAlgorithm>::Oracle as PricingOracle>::Plan;

/// What a pricing algorithm supplies to run as a [`Session`]: its ledger
/// over the cluster, the conversion of the state's fill to its units, its
/// job model and its plans as schedule segments.
pub trait SessionAlgorithm {
    /// The algorithm's pricing oracle.
    type Oracle: PricingOracle;

    /// The algorithm's name.
    const NAME: &'static str;

    /// The cluster machine of ledger machine `k` (ledger machines are the
    /// machines the algorithm may use, by position).
    fn machines(&self) -> &[MachineId];

    /// An empty ledger over the algorithm's machines and `horizon` slots.
    ///
    /// # Errors
    ///
    /// The ledger's validation errors.
    fn ledger(&self, horizon: u32) -> Result<Ledger>;

    /// The amounts, in the ledger's units and resource order, of the SI
    /// use `used` of ledger machine `k`.
    fn amounts(&self, k: usize, used: &Resources) -> Vec<f64>;

    /// The oracle's job for `job`: its utility counts from slot `arrival`,
    /// and it may use slots `earliest..end`.
    ///
    /// # Errors
    ///
    /// The algorithm's errors for a job outside its model.
    fn job(&mut self, job: &Job, arrival: u32, earliest: u32, end: u32)
    -> Result<SessionJob<Self>>;

    /// The end (exclusive) of `job`'s plan window, given the session's
    /// `end` (the arrival slot plus the window): `end` by default. An
    /// algorithm whose window would leave a long job no plan even on the
    /// empty cluster may widen it for that job; the session caps it at its
    /// horizon and syncs the cells up to it, and passes it to
    /// [`job`](Self::job) (also when a saved session is restored).
    ///
    /// # Errors
    ///
    /// The algorithm's errors for a job outside its model.
    fn plan_end(&self, job: &Job, arrival: u32, earliest: u32, end: u32) -> Result<u32> {
        let _ = (job, arrival, earliest);
        Ok(end)
    }

    /// The schedule segments of `plan`.
    fn segments(&self, plan: &SessionPlan<Self>) -> Vec<Segment>;

    /// The algorithm's oracle, built again (a restored session's): the same
    /// answers as the one the session started with.
    fn oracle(&self) -> Self::Oracle;

    /// Why `job` has no plan even on the empty cluster within its slots.
    fn unschedulable_why(&self, job: &SessionJob<Self>) -> String {
        let _ = job;
        "no plan fits the empty cluster within the planning window".into()
    }

    /// Records that `job` was admitted with `plan` and held in the state
    /// (for example a tenant's share); the default does nothing.
    fn admitted(&mut self, job: &SessionJob<Self>, plan: &SessionPlan<Self>) {
        let _ = (job, plan);
    }

    /// The certificate of the framework's report `run` as the algorithm
    /// states it: its name, the scope of its model, its own conditions on
    /// the guarantees. The default names the algorithm.
    fn certificate(&self, run: RunReport<SessionPlan<Self>>) -> Certificate {
        Certificate {
            algorithm: Self::NAME.into(),
            ..run.certificate
        }
    }
}

/// The a-priori price bounds of a session, and where they come from.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionBounds {
    bounds: PriceBounds,
    source: BoundsSource,
}

/// Where a session's price bounds come from (recorded in its
/// certificate).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum BoundsSource {
    /// Given by the caller ([`SessionBounds::explicit`]).
    Explicit,
    /// Learned from past jobs ([`SessionBounds::learned_from`]).
    Learned {
        /// How many past jobs.
        jobs: usize,
    },
    /// Derived from the very jobs that will be submitted
    /// ([`SessionBounds::clairvoyant`]), as a simulation of a known
    /// instance can.
    Clairvoyant {
        /// How many jobs.
        jobs: usize,
    },
}

impl SessionBounds {
    /// Bounds given by the caller (for example from a declared range of
    /// utilities and demands), used as they are.
    pub fn explicit(bounds: PriceBounds) -> Self {
        SessionBounds {
            bounds,
            source: BoundsSource::Explicit,
        }
    }

    /// Bounds an algorithm derived from the bound inputs of `jobs` past
    /// jobs (its rule is in [`PriceBounds::origin`]), as if each arrived at
    /// slot 0 of a window of `W` slots.
    pub fn learned_from(bounds: PriceBounds, jobs: usize) -> Self {
        SessionBounds {
            bounds,
            source: BoundsSource::Learned { jobs },
        }
    }

    /// Bounds an algorithm derived from the `jobs` jobs that will be
    /// submitted (a simulation knows its instance): the `2α` guarantee's
    /// premise holds, as in the offline run.
    pub fn clairvoyant(bounds: PriceBounds, jobs: usize) -> Self {
        SessionBounds {
            bounds,
            source: BoundsSource::Clairvoyant { jobs },
        }
    }

    /// The bounds.
    pub fn bounds(&self) -> &PriceBounds {
        &self.bounds
    }

    /// Where they come from.
    pub fn source(&self) -> &BoundsSource {
        &self.source
    }
}

/// Where a submitted job stands in its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum JobStatus {
    /// Rejected at submission.
    Rejected,
    /// Admitted; its plan is held.
    Admitted,
    /// Finished (the rest of its plan released).
    Finished,
    /// Cancelled (the rest of its plan released; it adds no utility).
    Cancelled,
    /// Still running when its plan ended, with no room to extend it on
    /// its machines: stopped at its plan's end (it adds no utility).
    Preempted,
}

/// What a session did with a job still running when its plan ended
/// ([`Session::overrun`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Overrun {
    /// Its plan goes on, on the same machines with the same tasks and GPU
    /// ids, for the slots given; its utility is now counted at the new
    /// completion.
    Extended {
        /// The segment added.
        segment: Segment,
        /// The utility at the new completion.
        utility: f64,
    },
    /// No room on its machines: it stops at its plan's end.
    Preempted {
        /// Why.
        reason: String,
    },
}

/// A submitted job as the session keeps it: the job, its slots (utility
/// from `arrival`, plan in `earliest..end`), its plan as held and its
/// utility.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
struct Submitted {
    job: Job,
    arrival: u32,
    earliest: u32,
    end: u32,
    segments: Vec<Segment>,
    utility: f64,
}

/// The certificate snapshot of a session after a decision: what it holds
/// so far, kept incrementally (no oracle call).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Snapshot {
    /// `ALG`: the utility of the admitted jobs, cancelled ones excluded.
    pub alg: f64,
    /// The trivial bound on `OPT`: every submitted job's best utility
    /// alone on the empty cluster, summed (a job decided again counts once
    /// per decision, which keeps it a bound).
    pub trivial_bound: f64,
    /// Why the `2α` guarantee is not valid (empty while it may hold).
    pub guarantee_lost: Vec<String>,
}

/// One decision of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionDecision {
    /// The job.
    pub job: JobId,
    /// Whether it was admitted.
    pub admitted: bool,
    /// Its plan as held in the state (GPU ids assigned); empty when
    /// rejected.
    pub segments: Vec<Segment>,
    /// Why it was rejected.
    pub rejection: Option<Rejection>,
    /// The plan's utility (0 when rejected).
    pub utility: f64,
    /// The price paid, `Σ p·q` over the plan's cells (0 when rejected).
    pub price: f64,
    /// `utility − price` (the best plan's payoff when rejected for a
    /// non-positive one).
    pub payoff: f64,
    /// The session's certificate snapshot after the decision.
    pub snapshot: Snapshot,
}

/// A pricing algorithm deciding job by job over a shared cluster state:
/// before each decision its ledger's planning window is synced from the
/// state's whole fill, an admitted plan is committed to the state, and
/// finish, cancel and late jobs release or extend holds (see the
/// algorithms guide, section 6.4).
pub struct Session<A: SessionAlgorithm> {
    algorithm: A,
    engine: OnlinePrimalDual<A::Oracle>,
    source: BoundsSource,
    window: u32,
    /// The slot every plan ends by, if any (a simulation's horizon).
    horizon: Option<u32>,
    jobs: Vec<SessionJob<A>>,
    ids: Vec<JobId>,
    status: Vec<JobStatus>,
    /// Each job's crate job, utility slot and plan as held.
    submitted: Vec<Submitted>,
    alg: f64,
    guarantee_lost: Vec<String>,
    /// The last slot synced (cells before it are forgotten).
    synced_from: u32,
    /// The state's version at the last sync: only cells changed since are
    /// read again.
    synced_version: u64,
    /// The end of the slots synced so far: later slots are read whole.
    synced_end: u32,
    /// Every job's position in submission order.
    index: BTreeMap<JobId, usize>,
}

impl<A: SessionAlgorithm + fmt::Debug> fmt::Debug for Session<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("algorithm", &self.algorithm)
            .field("window", &self.window)
            .field("jobs", &self.ids.len())
            .field("alg", &self.alg)
            .finish()
    }
}

impl<A: SessionAlgorithm> Session<A> {
    /// A session of `algorithm` with its `oracle`, a planning window of
    /// `window` slots and a-priori `bounds`.
    ///
    /// # Errors
    ///
    /// [`OnlineError::InvalidInstance`] for an empty window or one longer
    /// than the cluster state stores ahead
    /// ([`MAX_SPAN_SLOTS`](crate::state::MAX_SPAN_SLOTS): no plan could be
    /// held past it); the engine's errors for bounds that do not fit the
    /// algorithm's ledger.
    pub fn new(
        algorithm: A,
        oracle: A::Oracle,
        window: u32,
        bounds: SessionBounds,
        opts: PdOptions,
    ) -> Result<Self> {
        if window == 0 || window > crate::state::MAX_SPAN_SLOTS {
            return Err(OnlineError::InvalidInstance {
                reason: format!(
                    "a planning window of {window} slots: it must have 1 to {} slots (what the cluster state stores ahead)",
                    crate::state::MAX_SPAN_SLOTS
                ),
            }
            .into());
        }
        let ledger = algorithm.ledger(window)?;
        let engine = OnlinePrimalDual::new(oracle, ledger, bounds.bounds, opts)?;
        let mut guarantee_lost = Vec::new();
        if bounds.source == BoundsSource::Explicit {
            guarantee_lost.push("explicit price bounds: not derived from any jobs".into());
        }
        Ok(Session {
            algorithm,
            engine,
            source: bounds.source,
            window,
            horizon: None,
            jobs: Vec::new(),
            ids: Vec::new(),
            status: Vec::new(),
            submitted: Vec::new(),
            alg: 0.0,
            guarantee_lost,
            synced_from: 0,
            synced_version: 0,
            synced_end: 0,
            index: BTreeMap::new(),
        })
    }

    /// Where the price bounds come from (the certificate's scope says it
    /// too).
    pub fn bounds_source(&self) -> &BoundsSource {
        &self.source
    }

    /// The planning window, slots.
    pub fn window(&self) -> u32 {
        self.window
    }

    /// The session with every plan also ending by slot `horizon` (a
    /// simulation's horizon: a job submitted at or after it is rejected
    /// as unschedulable).
    #[must_use]
    pub fn with_horizon(mut self, horizon: u32) -> Self {
        self.horizon = Some(horizon);
        self
    }

    /// The options of the session's online loop.
    pub fn options(&self) -> &PdOptions {
        self.engine.options()
    }

    /// The algorithm.
    pub fn algorithm(&self) -> &A {
        &self.algorithm
    }

    /// The status of `job` (`None` for a job never submitted here).
    pub fn status(&self, job: JobId) -> Option<JobStatus> {
        self.position(job).map(|p| self.status[p])
    }

    fn position(&self, job: JobId) -> Option<usize> {
        self.index.get(&job).copied()
    }

    /// The snapshot so far.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            alg: self.alg,
            // Summed in another order than `alg`: never below it by a
            // rounding (OPT ≥ ALG, so the larger is still a bound).
            trivial_bound: self
                .engine
                .outcomes()
                .iter()
                .map(|o| o.u_max)
                .sum::<f64>()
                .max(self.alg),
            guarantee_lost: self.guarantee_lost.clone(),
        }
    }

    fn lose_guarantee(&mut self, why: String) {
        if !self.guarantee_lost.contains(&why) {
            self.guarantee_lost.push(why);
        }
    }

    /// Decides on `job`, submitted at `now_s` (its utility counts from the
    /// slot that holds `now_s`; its plan starts at the next slot boundary
    /// at the earliest and ends with the `W`-th slot counted from the one
    /// that holds `now_s`, or later where the algorithm widens the job's
    /// window ([`SessionAlgorithm::plan_end`]), and by the horizon of
    /// [`with_horizon`](Self::with_horizon)). An admitted plan is committed
    /// to `state`; when `now_s` is inside a slot and the plan starts at the
    /// next boundary, its first segment is widened back to the slot in
    /// progress where the state has room (a head start: the decision's
    /// segments then begin in that slot, and the job may run from
    /// `now_s`; no plan is priced there, so the certificate is unchanged).
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] for a time before the state's,
    /// [`StateError::DuplicateJob`] for an id a session over the state
    /// already decided on ([`ClusterState::was_decided`]);
    /// [`ModelError`](crate::model::ModelError) for a job an instance on
    /// the state's cluster would refuse ([`ClusterState::check_job`]); the
    /// algorithm's errors for a job outside its model. Nothing changes on
    /// an error.
    pub fn submit(
        &mut self,
        state: &mut ClusterState,
        job: &Job,
        now_s: f64,
    ) -> Result<SessionDecision> {
        check_time(state, now_s)?;
        if state.was_decided(job.id) || self.position(job.id).is_some() {
            return Err(StateError::DuplicateJob { job: job.id }.into());
        }
        state.check_job(job)?;
        self.decide(state, job, state.slot_at(now_s), now_s)
    }

    /// Decides again on `job`, which this session rejected, at `now_s`: a
    /// scheduler that keeps rejected jobs waiting offers them again when
    /// capacity frees (a practical variant: the papers decide each job
    /// once, at its arrival). The job is priced as a new submission — its
    /// plan window counted from the slot that holds `now_s`, widened as
    /// [`submit`](Self::submit) would — but its utility still counts from
    /// the slot it was first submitted in. Either way the `2α` guarantee is
    /// marked not valid. The certificate's bound then counts the job once
    /// per decision, which keeps it a bound on `OPT` with the job allowed
    /// in any of its windows.
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] for a time before the state's;
    /// [`OnlineError::InvalidInstance`] for a job this session did not
    /// reject (never submitted, admitted, finished, …); the algorithm's
    /// errors. Nothing changes on an error.
    pub fn resubmit(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
    ) -> Result<SessionDecision> {
        check_time(state, now_s)?;
        let Some(p) = self
            .position(job)
            .filter(|&p| self.status[p] == JobStatus::Rejected)
        else {
            let status = self
                .status(job)
                .map_or_else(|| "never submitted".to_string(), |s| format!("{s:?}"));
            return Err(OnlineError::InvalidInstance {
                reason: format!(
                    "{job} cannot be submitted again: only a job this session rejected can \
                     ({status})"
                ),
            }
            .into());
        };
        let (crate_job, arrival) = (self.submitted[p].job.clone(), self.submitted[p].arrival);
        let d = self.decide(state, &crate_job, arrival, now_s)?;
        self.lose_guarantee("a rejected job decided again later".into());
        Ok(SessionDecision {
            snapshot: self.snapshot(),
            ..d
        })
    }

    /// Prices `job`, whose utility counts from slot `arrival`, at `now_s`
    /// (its window counted from the slot that holds `now_s`), commits an
    /// admitted plan and records the decision.
    fn decide(
        &mut self,
        state: &mut ClusterState,
        job: &Job,
        arrival: u32,
        now_s: f64,
    ) -> Result<SessionDecision> {
        let again = self.position(job.id).is_some();
        let earliest = state.slot_from(now_s);
        let horizon = self.horizon.unwrap_or(u32::MAX);
        let end = state
            .slot_at(now_s)
            .saturating_add(self.window)
            .min(horizon);
        let end = self
            .algorithm
            .plan_end(job, arrival, earliest, end)?
            .min(horizon);
        let model_job = self.algorithm.job(job, arrival, earliest, end)?;
        state.advance(now_s)?;
        self.sync(state, end)?;
        let outcome = if again {
            self.engine.step_again(&model_job)?
        } else {
            self.engine.step(&model_job)?
        };
        let step = match &outcome.decision {
            Decision::Admitted {
                plan,
                utility,
                cost,
                payoff,
            } => Ok((self.algorithm.segments(plan), *utility, *cost, *payoff)),
            Decision::Rejected(r) => {
                Err(r.to_rejection(|| self.algorithm.unschedulable_why(&model_job)))
            }
        };
        if let Some(why) = self.engine.last_uncovered() {
            let why = format!("the price bounds do not cover {}: {why}", job.id);
            self.lose_guarantee(why);
        }
        self.jobs.push(model_job);
        self.index.insert(job.id, self.ids.len());
        self.ids.push(job.id);
        self.submitted.push(Submitted {
            job: job.clone(),
            arrival,
            earliest,
            end,
            segments: Vec::new(),
            utility: 0.0,
        });
        Ok(self.conclude(state, job, step))
    }

    /// Commits an admitted plan to the state (a refusal becomes a
    /// rejection) and builds the decision.
    fn conclude(
        &mut self,
        state: &mut ClusterState,
        job: &Job,
        step: std::result::Result<(Vec<Segment>, f64, f64, f64), Rejection>,
    ) -> SessionDecision {
        let mut d = SessionDecision {
            job: job.id,
            admitted: false,
            segments: Vec::new(),
            rejection: None,
            utility: 0.0,
            price: 0.0,
            payoff: 0.0,
            snapshot: self.snapshot(),
        };
        match step {
            Ok((segments, utility, cost, payoff)) => {
                match self.commit_with_head_start(state, job, &segments) {
                    Ok(held) => {
                        if let (Some(model_job), Some(Decision::Admitted { plan, .. })) = (
                            self.jobs.last(),
                            self.engine.outcomes().last().map(|o| &o.decision),
                        ) {
                            self.algorithm.admitted(model_job, plan);
                        }
                        self.alg += utility;
                        d.admitted = true;
                        if let Some(last) = self.submitted.last_mut() {
                            (last.segments, last.utility) = (held.clone(), utility);
                        }
                        d.segments = held;
                        (d.utility, d.price, d.payoff) = (utility, cost, payoff);
                    }
                    Err(e) => {
                        self.engine.retract_last();
                        d.rejection = Some(Rejection::Other {
                            why: format!("the cluster state refused the plan: {e}"),
                        });
                    }
                }
            }
            Err(r) => {
                if let Rejection::NotWorthIt { payoff } = r {
                    d.payoff = payoff;
                }
                d.rejection = Some(r);
            }
        }
        self.status.push(if d.admitted {
            JobStatus::Admitted
        } else {
            state.note_refused(job.id);
            JobStatus::Rejected
        });
        d.snapshot = self.snapshot();
        d
    }

    /// Commits the plan of the job just submitted, with a head start when
    /// it was submitted inside a slot and its plan begins at the next
    /// boundary: the first segment's placement (same machines and tasks)
    /// held from the slot in progress, where the state has room, so the job
    /// runs from now instead of waiting for the boundary — with the plan's
    /// GPU ids, else with ids free over the widened segment. No plan is
    /// priced in the slot in progress (plans start at a boundary), so the
    /// head start takes capacity no priced plan could use: the plan, its
    /// price and its utility stay the algorithm's, and the job can only
    /// finish earlier than planned.
    fn commit_with_head_start(
        &self,
        state: &mut ClusterState,
        job: &Job,
        segments: &[Segment],
    ) -> std::result::Result<Vec<Segment>, StateError> {
        let now = self
            .submitted
            .last()
            .map_or(u32::MAX, |s| s.arrival.max(state.current_slot()));
        let first = (0..segments.len()).min_by_key(|&k| segments[k].slots.start);
        if let Some(k) = first.filter(|&k| now < segments[k].slots.start) {
            let next = self.submitted.last().map_or(0, |s| s.earliest);
            if segments[k].slots.start == next {
                let mut widened = segments.to_vec();
                widened[k].slots.start = now;
                if let Ok(held) = state.commit_job(job, &widened) {
                    return Ok(held);
                }
                if widened[k].gpus.take().is_some()
                    && let Ok(held) = state.commit_job(job, &widened)
                {
                    return Ok(held);
                }
            }
        }
        commit_slot_by_slot_if_fragmented(state, job, segments)
    }

    /// Sets the ledger's cells of slots `current..end` to the state's fill
    /// where it may differ — the cells the state changed since the last
    /// sync, and the slots never synced — and forgets the cells before the
    /// current slot.
    fn sync(&mut self, state: &ClusterState, end: u32) -> Result<()> {
        let current = state.current_slot();
        let foreign = self.foreign_fill(state);
        if let Some(why) = foreign {
            self.lose_guarantee(why);
        }
        let ledger = self.engine.ledger_mut();
        ledger.grow_horizon(end);
        if current > self.synced_from {
            ledger.forget_before(current);
            self.synced_from = current;
        }
        let fresh = self.synced_end.max(current);
        let since = self.synced_version;
        let machines = self.algorithm.machines().to_vec();
        for (k, &m) in machines.iter().enumerate() {
            let changed = state.machine_stamp(m)? > since;
            // A plan holds the same use over many slots: convert each run
            // of equal uses once.
            let mut last: Option<(Resources, Vec<f64>)> = None;
            for t in current..end {
                if t < fresh && !(changed && state.cell_stamp(m, t) > since) {
                    continue;
                }
                let used = state.used(m, t)?;
                if !matches!(&last, Some((u, _)) if *u == used) {
                    last = Some((used, self.algorithm.amounts(k, &used)));
                }
                let Some((_, amounts)) = &last else { continue };
                let ledger = self.engine.ledger_mut();
                for (r, &a) in amounts.iter().enumerate() {
                    if let Some(c) = ledger.cell_index(MachineId(k as u32), ResourceId(r as u8), t)
                    {
                        ledger.set(c, a);
                    }
                }
            }
        }
        self.synced_version = state.version();
        self.synced_end = self.synced_end.max(end);
        Ok(())
    }

    /// Why the state holds capacity this session did not plan (other
    /// sessions' jobs, outside usage), if it does. The reason names no id,
    /// so the snapshot's list stays short however many hold capacity.
    fn foreign_fill(&self, state: &ClusterState) -> Option<String> {
        state.holds().find_map(|(h, _)| match h {
            Holder::Usage(_) => Some("outside usage recorded".to_string()),
            Holder::Job(j) if self.position(j).is_none() => {
                Some("capacity held by another session's jobs".to_string())
            }
            Holder::Job(_) => None,
        })
    }

    /// `job` finished at `now_s`: the rest of its plan is released.
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] for a time before the state's. An unknown job
    /// changes nothing and is no error (returns `false`).
    pub fn finish(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool> {
        self.stop(state, job, now_s, JobStatus::Finished)
    }

    /// `job` is cancelled at `now_s`: the rest of its plan is released and
    /// it adds no utility.
    ///
    /// # Errors
    ///
    /// As [`finish`](Self::finish).
    pub fn cancel(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool> {
        self.stop(state, job, now_s, JobStatus::Cancelled)
    }

    fn stop(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
        to: JobStatus,
    ) -> Result<bool> {
        let Some(p) = self.position(job) else {
            return Ok(false);
        };
        if self.status[p] != JobStatus::Admitted {
            return Ok(false);
        }
        state.advance(now_s)?;
        // Any slot of the plan after the next boundary is freed (GPUs or
        // not).
        let from = state.slot_from(now_s);
        let cuts = self.submitted[p]
            .segments
            .iter()
            .any(|s| s.slots.end > from);
        state.release(Holder::Job(job), now_s)?;
        if cuts {
            self.lose_guarantee("capacity released before a plan's end".into());
        }
        if to == JobStatus::Cancelled {
            self.alg -= self.submitted[p].utility;
        }
        self.status[p] = to;
        Ok(true)
    }

    /// `job` is still running at `now_s`, when its plan has ended or is
    /// about to, and needs about `more_s` seconds more (declared work is an
    /// estimate). The session extends the plan's last segment — the same
    /// machines, tasks and GPU ids — from the later of its end and the
    /// next slot boundary, for the slots `more_s` covers (cut at the
    /// session's horizon, if it has one), if the state has room there;
    /// the job's utility is then counted at its new completion.
    /// Otherwise the job is preempted: it stops at its plan's end and adds
    /// no utility. Either way the `2α` guarantee no longer applies (the
    /// plans are not the ones priced).
    ///
    /// # Errors
    ///
    /// [`StateError::Time`] for a time before the state's or a `more_s`
    /// that is not positive and finite, or longer than the planning
    /// window; [`StateError::NotCommitted`] for a job this session did not
    /// admit (or one finished, cancelled or preempted).
    pub fn overrun(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
        more_s: f64,
    ) -> Result<Overrun> {
        let p = self
            .position(job)
            .filter(|&p| self.status[p] == JobStatus::Admitted)
            .ok_or(StateError::NotCommitted { job })?;
        let slots = (more_s / state.slot_length_s()).ceil();
        if !(more_s > 0.0 && slots <= f64::from(self.window)) {
            return Err(StateError::Time {
                time_s: Num(now_s),
                reason: format!(
                    "the extra time {} s for {job} must be positive and at most the planning \
                     window ({} slots)",
                    Num(more_s),
                    self.window
                ),
            }
            .into());
        }
        state.advance(now_s)?;
        self.lose_guarantee("a plan extended or preempted past its end".into());
        let sub = &self.submitted[p];
        let Some(last) = sub.segments.iter().max_by_key(|s| s.slots.end).cloned() else {
            return Err(StateError::NotCommitted { job }.into());
        };
        let start = last.slots.end.max(state.slot_from(now_s));
        let end = start
            .saturating_add(slots as u32)
            .min(self.horizon.unwrap_or(u32::MAX));
        let segment = Segment {
            slots: start..end,
            ..last
        };
        let extended = if start < end {
            state.extend_job(&sub.job, std::slice::from_ref(&segment))
        } else {
            Err(StateError::Time {
                time_s: Num(now_s),
                reason: "the session's horizon has passed".into(),
            })
        };
        match extended {
            Ok(mut held) => {
                let segment = held.pop().unwrap_or(segment);
                // Utilities count from the arrival slot to the last slot
                // with work.
                let last_slot = segment.slots.end - 1;
                let utility = sub.job.utility.value(last_slot.saturating_sub(sub.arrival));
                self.alg += utility - sub.utility;
                let sub = &mut self.submitted[p];
                sub.utility = utility;
                sub.segments.push(segment.clone());
                Ok(Overrun::Extended { segment, utility })
            }
            Err(e) => {
                self.alg -= sub.utility;
                self.submitted[p].utility = 0.0;
                self.status[p] = JobStatus::Preempted;
                Ok(Overrun::Preempted {
                    reason: format!("no room to extend its plan on its machines: {e}"),
                })
            }
        }
    }

    /// The full certificate now, as the offline run's framework states it
    /// at its end — the online dual bound recomputed at the current prices
    /// (or the trivial bound, the tighter), the `2α·ρ` and `2α_eff·ρ`
    /// guarantees with their conditions checked — with `ALG` the session's
    /// so far (cancelled and preempted jobs excluded, extended ones at
    /// their new completion), and the guarantees marked not valid for
    /// what the framework's analysis does not cover: bounds learned from
    /// past jobs or given explicitly, releases, extensions, preemptions and
    /// capacity held by others. Its cost grows with the jobs seen: one
    /// oracle call per job submitted for the dual bound, and up to as many
    /// for the `D_0` witness. `OPT` is the offline optimum over the jobs
    /// submitted so far, with their declared work, on the cluster (outside
    /// usage only lowers it; cancelled jobs add no utility). The dual bound
    /// holds for any prices, so releases keep it valid.
    ///
    /// # Errors
    ///
    /// The oracle's errors.
    pub fn certificate(&mut self) -> Result<Certificate> {
        let snapshot = self.snapshot();
        let report = self.engine.report_now(&self.jobs)?;
        let mut c = self.algorithm.certificate(report);
        c.objective = snapshot.alg;
        let lost = snapshot.guarantee_lost;
        let source = match self.source {
            BoundsSource::Explicit => "given explicitly".to_string(),
            BoundsSource::Learned { jobs } => format!("learned from {jobs} past jobs"),
            BoundsSource::Clairvoyant { jobs } => {
                format!("derived from the {jobs} jobs to be submitted")
            }
        };
        c.scope = Some(match c.scope.take() {
            Some(scope) => format!("{scope}; price bounds {source}"),
            None => format!("price bounds {source}"),
        });
        c.guarantees = c
            .guarantees
            .into_iter()
            .map(|g| lost.iter().fold(g, |g, why| g.invalid(why.clone())))
            .collect();
        Ok(c)
    }
}

/// The saved form of a [`Session`].
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedSession<A, P> {
    algorithm: A,
    engine: super::engine::EngineParts<P>,
    source: BoundsSource,
    window: u32,
    #[serde(default)]
    horizon: Option<u32>,
    submitted: Vec<Submitted>,
    status: Vec<JobStatus>,
    alg: f64,
    guarantee_lost: Vec<String>,
    synced_from: u32,
    #[serde(default)]
    synced_version: u64,
    #[serde(default)]
    synced_end: u32,
}

#[cfg(feature = "serde")]
impl<A> Session<A>
where
    A: SessionAlgorithm + Clone + serde::Serialize + serde::de::DeserializeOwned,
    SessionPlan<A>: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    /// The session as JSON: its algorithm (with its seed), the engine's
    /// ledger, bounds and outcomes, and every submitted job with its plan.
    /// With the state's own JSON, a daemon restarts where it stopped.
    ///
    /// # Errors
    ///
    /// [`Error::Json`](crate::Error::Json) (not expected).
    pub fn save(&self) -> Result<String> {
        let saved = SavedSession {
            algorithm: self.algorithm.clone(),
            engine: self.engine.parts(),
            source: self.source.clone(),
            window: self.window,
            horizon: self.horizon,
            submitted: self.submitted.clone(),
            status: self.status.clone(),
            alg: self.alg,
            guarantee_lost: self.guarantee_lost.clone(),
            synced_from: self.synced_from,
            synced_version: self.synced_version,
            synced_end: self.synced_end,
        };
        Ok(serde_json::to_string(&saved)?)
    }

    /// The session saved by [`save`](Self::save): it decides as the saved
    /// one would have (the oracle is built again from the algorithm, which
    /// keeps its seed; every job's model is derived again from the job).
    ///
    /// # Errors
    ///
    /// [`Error::Json`](crate::Error::Json) for text that is not a saved
    /// session of this algorithm; [`OnlineError::InvalidInstance`] when its
    /// parts do not add up; the algorithm's errors rebuilding a job.
    pub fn restore(text: &str) -> Result<Self> {
        let saved: SavedSession<A, SessionPlan<A>> = crate::error::json_from_str(text)?;
        let n = saved.submitted.len();
        let outcomes = saved.engine.outcomes_len();
        if saved.status.len() != n
            || outcomes != n
            || saved.window == 0
            || saved.window > crate::state::MAX_SPAN_SLOTS
        {
            return Err(OnlineError::InvalidInstance {
                reason: format!(
                    "a saved session with {n} jobs, {} statuses, {outcomes} outcomes and a window of {} slots",
                    saved.status.len(),
                    saved.window
                ),
            }
            .into());
        }
        let mut algorithm = saved.algorithm;
        let jobs = saved
            .submitted
            .iter()
            .map(|s| algorithm.job(&s.job, s.arrival, s.earliest, s.end))
            .collect::<Result<Vec<_>>>()?;
        let engine = OnlinePrimalDual::from_parts(algorithm.oracle(), saved.engine)?;
        let index = saved
            .submitted
            .iter()
            .enumerate()
            .map(|(p, s)| (s.job.id, p))
            .collect();
        Ok(Session {
            algorithm,
            engine,
            source: saved.source,
            window: saved.window,
            horizon: saved.horizon,
            jobs,
            ids: saved.submitted.iter().map(|s| s.job.id).collect(),
            status: saved.status,
            submitted: saved.submitted,
            alg: saved.alg,
            guarantee_lost: saved.guarantee_lost,
            synced_from: saved.synced_from,
            synced_version: saved.synced_version,
            synced_end: saved.synced_end,
            index,
        })
    }
}

/// [`StateError::Time`] unless `now_s` is finite and not before the
/// state's current time.
fn check_time(state: &ClusterState, now_s: f64) -> Result<()> {
    if now_s < state.now_s() || !now_s.is_finite() {
        return Err(StateError::Time {
            time_s: Num(now_s),
            reason: format!("before the state's current time {} s", Num(state.now_s())),
        }
        .into());
    }
    Ok(())
}

/// Commits `segments` of `job`; when the state finds too few GPU ids free
/// over a whole segment (the counts fit in every slot, but the free ids
/// differ from slot to slot) and the job is not rigid, commits each
/// segment without ids slot by slot instead, each slot with the ids free
/// in it. The plan's use per slot is the same; its tasks may change GPUs
/// at a slot boundary, as an elastic job's may between any two segments
/// (a rigid job keeps its GPUs, so its plan is refused as before).
fn commit_slot_by_slot_if_fragmented(
    state: &mut ClusterState,
    job: &Job,
    segments: &[Segment],
) -> std::result::Result<Vec<Segment>, StateError> {
    match state.commit_job(job, segments) {
        Err(StateError::Gpu { .. })
            if job.discipline.elasticity != crate::model::Elasticity::Rigid
                && segments
                    .iter()
                    .any(|s| s.gpus.is_none() && s.slots.len() > 1) =>
        {
            let split: Vec<Segment> = segments
                .iter()
                .flat_map(|s| {
                    let whole = s.gpus.is_some();
                    let ranges: Vec<_> = if whole {
                        vec![s.slots.clone()]
                    } else {
                        s.slots.clone().map(|t| t..t + 1).collect()
                    };
                    ranges
                        .into_iter()
                        .map(move |slots| Segment { slots, ..s.clone() })
                })
                .collect();
            state.commit_job(job, &split)
        }
        r => r,
    }
}

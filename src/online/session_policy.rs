//! A [`Session`] in the simulator: the simulator's events drive the
//! session over a shared state of the instance's cluster, as a scheduler's
//! event loop would.
//!
//! - **Arrival**: the job is submitted; an admitted plan is reserved
//!   ([`Action::Reserve`], GPU ids as the state assigned them), else the
//!   job is rejected with the session's reason.
//! - **Completion**: the job is finished: the rest of its plan is released
//!   in the state, so later jobs are priced without it.
//! - **A plan that ends before its job** (the simulator's timing is not
//!   the algorithm's estimate): the policy wakes at every plan's end; a job
//!   still unfinished there is an overrun ([`Session::overrun`]) for the
//!   time it needs at its last placement's rate (at most the planning
//!   window at a time): extended by a reservation where its machines have
//!   room, else preempted (it stays paused and adds no utility).
//!
//! - **Waiting** (with
//!   [`PdOptions::requeue_rejected`](super::PdOptions::requeue_rejected), a practical
//!   variant): a job rejected for its price or for lack of room is not
//!   turned away but waits; at the first slot boundary after a completion
//!   (where plans start) the waiting jobs are decided again
//!   ([`Session::resubmit`]), in the order they arrived,
//!   until one is admitted, one planning window has passed since its
//!   arrival (or the horizon has come), or its utility is 0 for any
//!   completion from now; then it is rejected for good
//!   ([`Rejection::Other`]: how long it waited, and its last decision's
//!   reason).
//!
//! At the end of the run the certificate is the session's
//! ([`Session::certificate`]).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::certificate::Certificate;
use crate::error::Result;
use crate::model::units::Num;
use crate::model::{Instance, JobId};
use crate::schedule::Segment;
use crate::sim::{Action, Event, JobStatus as SimStatus, Policy, Rejection, SimError, SimView};
use crate::state::ClusterState;

use super::session::{JobStatus, Overrun, Session, SessionAlgorithm, SessionDecision};

/// A pricing algorithm's [`Session`] as a simulator [`Policy`] (see the
/// module docs for how events drive it).
pub struct SessionPolicy<A: SessionAlgorithm> {
    session: Session<A>,
    state: ClusterState,
    rejections: BTreeMap<JobId, Rejection>,
    decisions: Vec<SessionDecision>,
    /// `(slot, job)`: the slot an admitted job's plan ends at.
    ends: BTreeSet<(u32, JobId)>,
    extended: usize,
    preempted: usize,
    /// Rejected jobs waiting to be decided again, in arrival order: the
    /// time they give up and their last decision's reason.
    waiting: Vec<(JobId, f64, String)>,
    /// The slot boundary at which the waiting jobs are decided again (the
    /// first after a completion).
    retry_at_s: Option<f64>,
}

impl<A: SessionAlgorithm + fmt::Debug> fmt::Debug for SessionPolicy<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionPolicy")
            .field("session", &self.session)
            .field("decisions", &self.decisions.len())
            .finish()
    }
}

impl<A: SessionAlgorithm> SessionPolicy<A> {
    /// The policy driving `session` over a state of `instance`'s cluster
    /// and slot length (the session's plans end by the instance's
    /// horizon).
    ///
    /// # Errors
    ///
    /// The state's errors for the cluster.
    pub fn from_session(instance: &Instance, session: Session<A>) -> Result<Self> {
        Ok(SessionPolicy {
            session: session.with_horizon(instance.horizon_slots()),
            state: ClusterState::new(instance.cluster(), instance.slot_length_s())?,
            rejections: BTreeMap::new(),
            decisions: Vec::new(),
            ends: BTreeSet::new(),
            extended: 0,
            preempted: 0,
            waiting: Vec::new(),
            retry_at_s: None,
        })
    }

    /// The session.
    pub fn session(&self) -> &Session<A> {
        &self.session
    }

    /// The shared state the session decides on.
    pub fn state(&self) -> &ClusterState {
        &self.state
    }

    /// Every decision, in the order made (a waiting job's again when it
    /// is decided again).
    pub fn decisions(&self) -> &[SessionDecision] {
        &self.decisions
    }

    /// How many plans were extended and how many jobs preempted because
    /// their plans ended before them.
    pub fn overruns(&self) -> (usize, usize) {
        (self.extended, self.preempted)
    }

    /// The session's certificate now ([`Session::certificate`]).
    ///
    /// # Errors
    ///
    /// The oracle's errors.
    pub fn certificate(&mut self) -> Result<Certificate> {
        self.session.certificate()
    }

    fn submit(&mut self, view: &SimView<'_>, id: JobId) -> Result<Option<Action>> {
        let job = view.instance().job(id).ok_or(SimError::UnknownJob {
            job: id,
            time_s: view.now_s(),
        })?;
        let d = match self.session.submit(&mut self.state, job, view.now_s()) {
            // One job beyond the algorithm's size limit is that job's
            // rejection, not the end of the run.
            Err(e) if e.job_beyond_size_limit() == Some(id) => SessionDecision {
                job: id,
                admitted: false,
                segments: Vec::new(),
                rejection: Some(Rejection::Other {
                    why: format!("beyond the algorithm's size limit: {e}"),
                }),
                utility: 0.0,
                price: 0.0,
                payoff: 0.0,
                snapshot: self.session.snapshot(),
            },
            r => r?,
        };
        Ok(self.act(view, job.arrival_s, d, false))
    }

    /// The action of decision `d` on a job that arrived at `arrival_s`
    /// (decided `again` after waiting): a reservation, a rejection, or none
    /// while the job waits.
    fn act(
        &mut self,
        view: &SimView<'_>,
        arrival_s: f64,
        d: SessionDecision,
        again: bool,
    ) -> Option<Action> {
        let id = d.job;
        let action = if d.admitted {
            self.note_end(id, &d.segments);
            Some(Action::Reserve {
                job: id,
                segments: d.segments.clone(),
            })
        } else {
            let reason = d.rejection.clone().unwrap_or(Rejection::NoRoom);
            let gives_up_s = self.gives_up_s(view, arrival_s);
            let queue = self.session.options().requeue_rejected
                && matches!(reason, Rejection::NoRoom | Rejection::NotWorthIt { .. });
            let last = match reason {
                Rejection::NoRoom if queue => format!(
                    "{reason}, with {:.0} % of the GPUs held over the next {} slots",
                    100.0 * self.held_gpu_share(view.now_s()),
                    self.session.window()
                ),
                _ => reason.to_string(),
            };
            let stop = if queue {
                self.stops_waiting(view, id, gives_up_s)
            } else {
                Some(Stop::NotQueued)
            };
            match stop {
                None => {
                    self.waiting.push((id, gives_up_s, last));
                    None
                }
                Some(stop) if again => Some(self.give_up(view, id, stop, &last)),
                Some(_) => {
                    self.rejections.insert(id, reason);
                    Some(Action::Reject { job: id })
                }
            }
        };
        self.decisions.push(d);
        action
    }

    /// The share of the cluster's GPUs held in the state over the `W` slots
    /// from the first boundary at or after `now_s` (0 on a cluster without
    /// GPUs).
    fn held_gpu_share(&self, now_s: f64) -> f64 {
        let from = self.state.slot_from(now_s);
        let (mut held, mut total) = (0.0, 0.0);
        for &m in self.state.machines() {
            let capacity = self.state.capacity(m).map_or(0.0, |c| c.gpus);
            for t in from..from.saturating_add(self.session.window()) {
                held += self.state.used(m, t).map_or(0.0, |u| u.gpus.min(capacity));
                total += capacity;
            }
        }
        if total > 0.0 { held / total } else { 0.0 }
    }

    /// Rejects waiting job `id` for good, for `stop`; `last` is its last
    /// decision's reason.
    fn give_up(&mut self, view: &SimView<'_>, id: JobId, stop: Stop, last: &str) -> Action {
        let waited_s = view
            .job(id)
            .map_or(0.0, |j| view.now_s() - j.job().arrival_s);
        let why = format!(
            "waited {} s without being admitted ({}); its last decision: {last}",
            Num(waited_s),
            stop.why()
        );
        self.rejections.insert(id, Rejection::Other { why });
        Action::Reject { job: id }
    }

    /// Why job `id`, waiting until `gives_up_s`, stops waiting now, if it
    /// does.
    fn stops_waiting(&self, view: &SimView<'_>, id: JobId, gives_up_s: f64) -> Option<Stop> {
        if view.now_s() >= view.instance().horizon_s() {
            Some(Stop::Horizon)
        } else if view.now_s() >= gives_up_s {
            Some(Stop::Window)
        } else if !self.worth_waiting(view, id) {
            Some(Stop::Worthless)
        } else {
            None
        }
    }

    /// Whether job `id` could still earn a positive utility: completed in
    /// the slot in progress at the earliest, its utility counted from its
    /// arrival slot (utilities do not increase).
    fn worth_waiting(&self, view: &SimView<'_>, id: JobId) -> bool {
        view.job(id).is_some_and(|j| {
            let arrival = self.state.slot_at(j.job().arrival_s);
            let now = self.state.slot_at(view.now_s());
            j.job().utility.value(now.saturating_sub(arrival)) > 0.0
        })
    }

    /// When a job that arrived at `arrival_s` stops waiting: one planning
    /// window after its arrival, or at the horizon.
    fn gives_up_s(&self, view: &SimView<'_>, arrival_s: f64) -> f64 {
        let slot_s = view.instance().slot_length_s();
        (arrival_s + f64::from(self.session.window()) * slot_s).min(view.instance().horizon_s())
    }

    /// Decides again on every waiting job, in arrival order; rejects for
    /// good those whose wait is over.
    fn retry_waiting(&mut self, view: &SimView<'_>, retry: bool) -> Result<Vec<Action>> {
        let mut actions = Vec::new();
        for (id, gives_up_s, last) in std::mem::take(&mut self.waiting) {
            if let Some(stop) = self.stops_waiting(view, id, gives_up_s) {
                actions.push(self.give_up(view, id, stop, &last));
            } else if retry {
                match self.session.resubmit(&mut self.state, id, view.now_s()) {
                    Ok(d) => {
                        let arrival_s = view.job(id).map_or(view.now_s(), |j| j.job().arrival_s);
                        actions.extend(self.act(view, arrival_s, d, true));
                    }
                    // Its window now reaches past the algorithm's size
                    // limit: that job's rejection, not the end of the run.
                    Err(e) if e.job_beyond_size_limit() == Some(id) => {
                        let last = format!("beyond the algorithm's size limit: {e}");
                        actions.push(self.give_up(view, id, Stop::NotQueued, &last));
                    }
                    Err(e) => return Err(e),
                }
            } else {
                self.waiting.push((id, gives_up_s, last));
            }
        }
        Ok(actions)
    }

    fn note_end(&mut self, id: JobId, segments: &[Segment]) {
        if let Some(end) = segments.iter().map(|s| s.slots.end).max() {
            self.ends.insert((end, id));
        }
    }

    /// Extends or preempts every admitted job whose plan has ended while
    /// it still has work.
    fn overruns_now(&mut self, view: &SimView<'_>) -> Result<Vec<Action>> {
        let slot_s = view.instance().slot_length_s();
        let mut actions = Vec::new();
        while let Some(&(end, id)) = self.ends.first() {
            if f64::from(end) * slot_s > view.now_s() {
                break;
            }
            self.ends.pop_first();
            let Some(j) = view.job(id) else { continue };
            if self.session.status(id) != Some(JobStatus::Admitted)
                || matches!(j.status(), SimStatus::Completed | SimStatus::Running)
                || j.has_plan()
            {
                continue;
            }
            let window_s = f64::from(self.session.window()) * slot_s;
            let more_s = view
                .remaining_time_s(j.job(), j.last_placement())
                .unwrap_or(window_s)
                .min(window_s);
            if more_s.is_nan() || more_s <= 0.0 {
                continue;
            }
            match self
                .session
                .overrun(&mut self.state, id, view.now_s(), more_s)?
            {
                Overrun::Extended { segment, .. } => {
                    self.extended += 1;
                    let segments = vec![segment];
                    self.note_end(id, &segments);
                    actions.push(Action::Reserve { job: id, segments });
                }
                Overrun::Preempted { .. } => self.preempted += 1,
            }
        }
        Ok(actions)
    }
}

impl<A: SessionAlgorithm> Policy for SessionPolicy<A> {
    fn name(&self) -> String {
        A::NAME.into()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> Result<Vec<Action>> {
        let mut actions = self.overruns_now(view)?;
        match event {
            Event::Arrival { .. } | Event::Tick { .. } | Event::Wakeup => {}
            Event::Completion { job } => {
                if self.session.finish(&mut self.state, *job, view.now_s())?
                    && !self.waiting.is_empty()
                    && self.retry_at_s.is_none()
                {
                    let slot_s = view.instance().slot_length_s();
                    let boundary = f64::from(self.state.slot_from(view.now_s())) * slot_s;
                    self.retry_at_s = Some(boundary.max(view.now_s()));
                }
            }
        }
        // The jobs that waited first: an arrival at a retry boundary is
        // decided after them.
        let retry = self.retry_at_s.is_some_and(|t| t <= view.now_s());
        if retry {
            self.retry_at_s = None;
        }
        actions.extend(self.retry_waiting(view, retry)?);
        if let Event::Arrival { job } = event {
            actions.extend(self.submit(view, *job)?);
        }
        Ok(actions)
    }

    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        let slot_s = view.instance().slot_length_s();
        let end = self
            .ends
            .iter()
            .map(|&(end, _)| f64::from(end) * slot_s)
            .find(|&t| t > view.now_s());
        let gives_up = self
            .waiting
            .iter()
            .map(|&(_, t, _)| t)
            .chain(self.retry_at_s)
            .filter(|&t| t > view.now_s())
            .min_by(f64::total_cmp);
        match (end, gives_up) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        self.rejections.get(&job).cloned()
    }

    fn finish(mut self: Box<Self>, _instance: &Instance) -> Result<Option<Certificate>> {
        self.session.certificate().map(Some)
    }
}

/// Why a job rejected by a [`SessionPolicy`] stops waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// One plan window has passed since its arrival.
    Window,
    /// The horizon has come.
    Horizon,
    /// Its utility is 0 for any completion from now on.
    Worthless,
    /// Its last decision cannot be waited out (not a price or lack of
    /// room).
    NotQueued,
}

impl Stop {
    fn why(self) -> &'static str {
        match self {
            Stop::Window => "up to one plan window",
            Stop::Horizon => "until the horizon",
            Stop::Worthless => "its utility is 0 for any completion from now",
            Stop::NotQueued => "its last decision cannot be waited out",
        }
    }
}

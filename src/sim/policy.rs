//! The policy interface: events in, actions out.

use crate::certificate::Certificate;
use crate::model::{GpuId, Instance, JobId, MachineId};
use crate::schedule::{Configuration, Placement, Segment, Tasks};

use super::SimView;

/// What happened; the simulator tells the policy about each event in time
/// order (completions, then arrivals, then the slot tick, at equal times).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// A job arrived and waits for a decision.
    Arrival {
        /// The job.
        job: JobId,
    },
    /// A job finished its whole workload; its resources are free.
    Completion {
        /// The job.
        job: JobId,
    },
    /// A slot boundary: slot `slot` starts now. Delivered with
    /// [`Decisions::SlotBoundaries`](super::Decisions::SlotBoundaries), or
    /// with `EventDriven { ticks: true }`, while some job runs or holds a
    /// plan (idle stretches are skipped).
    Tick {
        /// The slot that starts (0-based).
        slot: u32,
    },
    /// The time the policy asked for with [`Policy::next_wakeup_s`].
    Wakeup,
}

impl Event {
    /// The job the event is about (`None` for a tick).
    pub fn job(&self) -> Option<JobId> {
        match *self {
            Event::Arrival { job } | Event::Completion { job } => Some(job),
            Event::Tick { .. } | Event::Wakeup => None,
        }
    }
}

/// Why a policy turned a job away ([`Policy::rejection`]; recorded in
/// [`JobRecord::rejection`](super::JobRecord::rejection)).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Rejection {
    /// The job cannot run even on an empty cluster within the horizon:
    /// `why` says what it lacks (a horizon too short, tasks larger than a
    /// machine).
    Unschedulable {
        /// What the job lacks.
        why: String,
    },
    /// No plan fits the capacity left before the horizon.
    NoRoom,
    /// The best plan is not worth its cost at the current prices: its
    /// utility minus its priced cost is `payoff ≤ 0` (or below the
    /// admission threshold).
    NotWorthIt {
        /// Utility minus cost of the best plan.
        payoff: f64,
    },
    /// A reason of the policy's own.
    Other {
        /// The reason.
        why: String,
    },
}

impl Rejection {
    /// A short label of the kind, for grouping (`"unschedulable"`, `"no
    /// room"`, `"not worth its cost"`, `"other"`).
    pub fn kind(&self) -> &'static str {
        match self {
            Rejection::Unschedulable { .. } => "unschedulable",
            Rejection::NoRoom => "no room",
            Rejection::NotWorthIt { .. } => "not worth its cost",
            Rejection::Other { .. } => "other",
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::Unschedulable { why } => write!(f, "unschedulable: {why}"),
            Rejection::NoRoom => write!(f, "no plan fits the capacity left before the horizon"),
            Rejection::NotWorthIt { payoff } => write!(
                f,
                "not worth its cost at the current prices (utility − cost = {:.4})",
                crate::model::units::Num(*payoff)
            ),
            Rejection::Other { why } => write!(f, "{why}"),
        }
    }
}

/// A decision of the policy about one job.
///
/// All actions of one answer of [`Policy::on_event`] are applied as one
/// transaction: the simulator releases the current allocation of every job
/// an action names, then checks the new allocations together (capacity per
/// machine and resource, reserved plan slots, GPU ids, caps, gang and
/// non-preemption rules) and applies all of them or none. The order of the
/// actions therefore does not matter for feasibility: a policy states the
/// target allocation of each job whose allocation changes, and two jobs may
/// swap machines in one answer. A job that runs before and after the answer
/// on a different placement counts one reconfiguration and no preemption.
///
/// **Several actions for the same job** in one answer: the last one counts
/// and the earlier ones are ignored (they are still checked to name a known,
/// arrived and open job); nothing may follow a [`Action::Reject`] of the
/// same job ([`SimError::JobClosed`](super::SimError::JobClosed)). So a
/// pause followed by a run on the same placement changes nothing.
///
/// A broken rule ends the run with a [`SimError`](super::SimError) naming
/// the job (for capacities, the first job in action order whose addition
/// overflows, with the machine, resource and slot); nothing of the answer is
/// applied and nothing is clipped silently.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run the job with this placement from now until the next change. An
    /// empty placement pauses it (a preemption if it was running; GPU ids and
    /// configuration are then ignored). Replaces any plan the job holds.
    SetAllocation {
        /// The job.
        job: JobId,
        /// Tasks per machine.
        placement: Placement,
        /// GPU ids, for policies that assign them (ring-all-reduce).
        gpus: Option<Vec<GpuId>>,
        /// The communication configuration, for policies that choose one
        /// (`None`, as from [`Action::run`], charges every task its full
        /// demand, as DISTRIBUTED). Under [`Configuration::Local`] the
        /// placement must be one PS and at least one worker on the named
        /// machine (else [`SimError::InvalidAllocation`] with a `Local*`
        /// [`Violation`]); the tasks are then charged no NIC bandwidth and
        /// the job runs at the intra-machine rate `τ^L = t_c + 2S/b_int`.
        /// Changing only the configuration of a running job is a change of
        /// allocation (one reconfiguration).
        ///
        /// [`SimError::InvalidAllocation`]: super::SimError::InvalidAllocation
        /// [`Violation`]: crate::schedule::Violation
        config: Option<Configuration>,
    },
    /// Commit a multi-slot plan: each segment's placement runs in its slots.
    /// Slots must not start before the slot in progress (a segment that
    /// starts in it runs from now) and must end by the horizon.
    /// Capacity is checked for every slot of the plan against the other
    /// plans and the open allocations. The job must hold no allocation and
    /// no plan. A segment whose [`Segment::config`] is LOCAL must be one PS
    /// and at least one worker on the named machine (else
    /// [`SimError::InvalidAllocation`](super::SimError::InvalidAllocation)
    /// naming the segment); its tasks are charged no NIC bandwidth, now and
    /// in the reserved slots, and the job runs at the intra-machine rate in
    /// it.
    Reserve {
        /// The job.
        job: JobId,
        /// The plan; segments must not overlap.
        segments: Vec<Segment>,
    },
    /// Stop the job now (it keeps its progress and may be resumed).
    Preempt {
        /// The job.
        job: JobId,
    },
    /// Turn the job away for good.
    Reject {
        /// The job.
        job: JobId,
    },
}

impl Action {
    /// The job the action is about.
    pub fn job(&self) -> JobId {
        match self {
            Action::SetAllocation { job, .. }
            | Action::Reserve { job, .. }
            | Action::Preempt { job }
            | Action::Reject { job } => *job,
        }
    }

    /// Pause a job (an empty allocation).
    pub fn pause(job: JobId) -> Action {
        Action::SetAllocation {
            job,
            placement: Placement::new(),
            gpus: None,
            config: None,
        }
    }

    /// Run a job with a placement, no GPU ids and no configuration.
    pub fn run(job: JobId, placement: impl Into<Placement>) -> Action {
        Action::SetAllocation {
            job,
            placement: placement.into(),
            gpus: None,
            config: None,
        }
    }

    /// Run a job with a placement in a configuration, no GPU ids.
    pub fn run_in(job: JobId, placement: impl Into<Placement>, config: Configuration) -> Action {
        Action::SetAllocation {
            job,
            placement: placement.into(),
            gpus: None,
            config: Some(config),
        }
    }

    /// Run a parameter-server job LOCAL on `machine`: `tasks` (one PS and
    /// at least one worker) there, charged no NIC bandwidth.
    pub fn run_local(job: JobId, machine: MachineId, tasks: Tasks) -> Action {
        Action::run_in(job, [(machine, tasks)], Configuration::Local { machine })
    }
}

/// A scheduling policy the simulator can run.
///
/// The simulator calls [`Policy::on_event`] once per event with a read-only
/// view of the cluster and the jobs; the policy answers with actions. Time is
/// in seconds (see [`SimView::now_s`]).
pub trait Policy {
    /// Short name for reports (`"fifo"`, `"drf"`, …).
    fn name(&self) -> String;

    /// Decides what to do after `event`.
    ///
    /// # Errors
    ///
    /// Whatever the policy's own computations return (for example an LP
    /// failure); the simulator stops and passes it on.
    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>>;

    /// A time at which the policy wants to decide again even if no job
    /// arrives or completes (for example when a running job's attained
    /// service will cross a priority threshold). The simulator asks after
    /// every decision and delivers [`Event::Wakeup`] then, unless another
    /// decision comes first. `None` (the default) asks for nothing; times
    /// not after the current time are ignored.
    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        let _ = view;
        None
    }

    /// Why the policy rejected `job` ([`Action::Reject`]), when it can say;
    /// the simulator records it in the job's
    /// [`JobRecord::rejection`](super::JobRecord::rejection) at the end of
    /// the run. `None` (the default) says nothing.
    fn rejection(&self, job: JobId) -> Option<Rejection> {
        let _ = job;
        None
    }

    /// Lines about the run the policy wants printed beside the simulator's
    /// records (a round-based policy's realised time fractions against its
    /// allocation, say), asked for once the run ends. None by default.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Ends the run over the jobs of `instance` and returns the policy's
    /// certificate: the objective of its own plans, a proven bound on the
    /// optimum and its a-priori guarantees, scoped to the policy's model
    /// (a simulator's replay of the plans is not covered). `None` (the
    /// default) for a policy that proves nothing, such as a baseline.
    ///
    /// # Errors
    ///
    /// The policy's own errors while closing its run.
    fn finish(self: Box<Self>, instance: &Instance) -> crate::Result<Option<Certificate>> {
        let _ = instance;
        Ok(None)
    }
}

impl<P: Policy + ?Sized> Policy for Box<P> {
    fn name(&self) -> String {
        (**self).name()
    }

    fn on_event(&mut self, view: &SimView<'_>, event: &Event) -> crate::Result<Vec<Action>> {
        (**self).on_event(view, event)
    }

    fn next_wakeup_s(&self, view: &SimView<'_>) -> Option<f64> {
        (**self).next_wakeup_s(view)
    }

    fn rejection(&self, job: JobId) -> Option<Rejection> {
        (**self).rejection(job)
    }

    fn notes(&self) -> Vec<String> {
        (**self).notes()
    }

    fn finish(self: Box<Self>, instance: &Instance) -> crate::Result<Option<Certificate>> {
        let inner: Box<P> = *self;
        inner.finish(instance)
    }
}

//! A session of any algorithm behind one object-safe interface
//! ([`AnySession`]), so a driver that picks algorithms by name — the
//! command line's `dmlsched session`, a language binding — holds them
//! alike (`Box<dyn AnySession + Send>`, built by `registry::session`: a
//! session may move to another thread, as a binding that releases its
//! interpreter lock moves it).

use crate::certificate::Certificate;
use crate::error::Result;
use crate::model::{Job, JobId};
use crate::state::ClusterState;

use super::session::{
    JobStatus, Overrun, Session, SessionAlgorithm, SessionDecision, SessionPlan, Snapshot,
};

/// What a driver calls on a [`Session`] of any algorithm: the session's
/// own methods, with the same meaning and errors.
pub trait AnySession {
    /// The algorithm's name.
    fn name(&self) -> &'static str;

    /// [`Session::submit`].
    ///
    /// # Errors
    ///
    /// As [`Session::submit`].
    fn submit(
        &mut self,
        state: &mut ClusterState,
        job: &Job,
        now_s: f64,
    ) -> Result<SessionDecision>;

    /// [`Session::resubmit`].
    ///
    /// # Errors
    ///
    /// As [`Session::resubmit`].
    fn resubmit(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
    ) -> Result<SessionDecision>;

    /// [`Session::finish`].
    ///
    /// # Errors
    ///
    /// As [`Session::finish`].
    fn finish(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool>;

    /// [`Session::cancel`].
    ///
    /// # Errors
    ///
    /// As [`Session::cancel`].
    fn cancel(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool>;

    /// [`Session::overrun`].
    ///
    /// # Errors
    ///
    /// As [`Session::overrun`].
    fn overrun(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
        more_s: f64,
    ) -> Result<Overrun>;

    /// [`Session::status`].
    fn status(&self, job: JobId) -> Option<JobStatus>;

    /// [`Session::snapshot`].
    fn snapshot(&self) -> Snapshot;

    /// [`Session::window`].
    fn window(&self) -> u32;

    /// [`Session::certificate`].
    ///
    /// # Errors
    ///
    /// As [`Session::certificate`].
    fn certificate(&mut self) -> Result<Certificate>;

    /// [`Session::save`].
    ///
    /// # Errors
    ///
    /// As [`Session::save`].
    fn save(&self) -> Result<String>;
}

impl<A> AnySession for Session<A>
where
    A: SessionAlgorithm + Clone + serde::Serialize + serde::de::DeserializeOwned,
    SessionPlan<A>: Clone + serde::Serialize + serde::de::DeserializeOwned,
{
    fn name(&self) -> &'static str {
        A::NAME
    }

    fn submit(
        &mut self,
        state: &mut ClusterState,
        job: &Job,
        now_s: f64,
    ) -> Result<SessionDecision> {
        Session::submit(self, state, job, now_s)
    }

    fn resubmit(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
    ) -> Result<SessionDecision> {
        Session::resubmit(self, state, job, now_s)
    }

    fn finish(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool> {
        Session::finish(self, state, job, now_s)
    }

    fn cancel(&mut self, state: &mut ClusterState, job: JobId, now_s: f64) -> Result<bool> {
        Session::cancel(self, state, job, now_s)
    }

    fn overrun(
        &mut self,
        state: &mut ClusterState,
        job: JobId,
        now_s: f64,
        more_s: f64,
    ) -> Result<Overrun> {
        Session::overrun(self, state, job, now_s, more_s)
    }

    fn status(&self, job: JobId) -> Option<JobStatus> {
        Session::status(self, job)
    }

    fn snapshot(&self) -> Snapshot {
        Session::snapshot(self)
    }

    fn window(&self) -> u32 {
        Session::window(self)
    }

    fn certificate(&mut self) -> Result<Certificate> {
        Session::certificate(self)
    }

    fn save(&self) -> Result<String> {
        Session::save(self)
    }
}

//! The events' handlers and their reply lines.

use serde_json::{Value, json};

use crate::model::{Job, JobId, MachineId, Resources};
use crate::online::{Overrun, SessionDecision};
use crate::state::Holder;

use super::spec::arch_of;
use super::{Event, ProtocolError, SessionSet};

impl SessionSet {
    /// The reply to one line of the protocol: the event's reply, or
    /// `{"error": …}` for a bad line (the set unchanged). `None` for a
    /// blank line, which gets no reply.
    pub fn handle_line(&mut self, line: &str) -> Option<Value> {
        if line.trim().is_empty() {
            return None;
        }
        Some(match serde_json::from_str::<Event>(line) {
            Ok(event) => self.handle(event),
            Err(e) => error_reply(&ProtocolError::NotAnEvent(e)),
        })
    }

    /// The reply to `event`: as [`apply`](Self::apply), an error as the
    /// protocol's `{"error": "…"}` reply.
    pub fn handle(&mut self, event: Event) -> Value {
        self.apply(event).unwrap_or_else(|e| error_reply(&e))
    }

    /// Applies `event` and returns its reply (docs/session-protocol.md,
    /// "Replies"): a decision for `submit` and `resubmit`, `{"ok": true,
    /// "event": …}` with the event's fields for the others.
    ///
    /// # Errors
    ///
    /// A [`ProtocolError`] for an event the set refuses (the set is then
    /// unchanged): a time that goes back ([`ProtocolError::Time`]), a job
    /// that is not one ([`ProtocolError::NotAJob`]) or of an architecture
    /// no algorithm decides, a job never submitted, usage that does not
    /// fit, a session's refusal or failure ([`ProtocolError::Algorithm`]),
    /// a `save` without a save file or that fails.
    pub fn apply(&mut self, event: Event) -> Result<Value, ProtocolError> {
        match event {
            Event::Submit { time_s, job } => self.submit(job, Some(time_s)),
            Event::Finish { time_s, job } => self.stop(time_s, job, false),
            Event::Cancel { time_s, job } => self.stop(time_s, job, true),
            Event::Resubmit { time_s, job } => self.resubmit(time_s, job),
            Event::Extend {
                time_s,
                job,
                more_s,
            } => self.extend(time_s, job, more_s),
            Event::Usage {
                machine,
                from_s,
                to_s,
                resources,
            } => self.usage(machine, from_s, to_s, resources),
            Event::Certificate {} => self.certificates_reply(),
            Event::Save {} => {
                let path = self.save_path.as_ref().ok_or(ProtocolError::NoSaveFile)?;
                self.save_file(path)?;
                Ok(json!({ "ok": true, "event": "save" }))
            }
        }
    }

    /// A `submit` event: decides on `job` (the instance format's job
    /// object; its `arrival_s` the submission time when left out) at
    /// `time_s`, or without a time at the job's `arrival_s`, else at the
    /// set's time. Returns the decision's reply line.
    ///
    /// # Errors
    ///
    /// As [`apply`](Self::apply).
    pub fn submit(&mut self, job: Value, time_s: Option<f64>) -> Result<Value, ProtocolError> {
        let time_s = time_s
            .or_else(|| job.get("arrival_s").and_then(Value::as_f64))
            .unwrap_or_else(|| self.state.now_s());
        self.check_time(time_s)?;
        let job = parse_job(job, time_s)?;
        let arch = arch_of(&job);
        let Some(route) = self.routes.iter_mut().find(|r| r.arch == arch) else {
            return Err(ProtocolError::NoAlgorithmFor { job: job.id, arch });
        };
        let d = route
            .session
            .submit(&mut self.state, &job, time_s)
            .map_err(|e| route.error(e))?;
        Ok(decision_line(&d, &route.name))
    }

    /// Refuses a time that is not finite or before the state's.
    fn check_time(&self, time_s: f64) -> Result<(), ProtocolError> {
        let now_s = self.state.now_s();
        if !time_s.is_finite() || time_s < now_s {
            return Err(ProtocolError::Time { time_s, now_s });
        }
        Ok(())
    }

    /// Decides again on a job its session rejected.
    fn resubmit(&mut self, time_s: f64, job: JobId) -> Result<Value, ProtocolError> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let d = route
            .session
            .resubmit(state, job, time_s)
            .map_err(|e| route.error(e))?;
        Ok(decision_line(&d, &route.name))
    }

    /// The position of the route whose session has `job`.
    fn owner(&self, job: JobId) -> Result<usize, ProtocolError> {
        self.routes
            .iter()
            .position(|r| r.session.status(job).is_some())
            .ok_or(ProtocolError::NeverSubmitted(job))
    }

    /// A `finish` event, or with `cancel` a `cancel` event.
    fn stop(&mut self, time_s: f64, job: JobId, cancel: bool) -> Result<Value, ProtocolError> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let r = if cancel {
            route.session.cancel(state, job, time_s)
        } else {
            route.session.finish(state, job, time_s)
        };
        let released = r.map_err(|e| route.error(e))?;
        Ok(json!({
            "ok": true,
            "event": if cancel { "cancel" } else { "finish" },
            "job": job,
            "released": released,
            "status": route.session.status(job),
        }))
    }

    fn extend(&mut self, time_s: f64, job: JobId, more_s: f64) -> Result<Value, ProtocolError> {
        self.check_time(time_s)?;
        let i = self.owner(job)?;
        let (state, route) = (&mut self.state, &mut self.routes[i]);
        let r = route
            .session
            .overrun(state, job, time_s, more_s)
            .map_err(|e| route.error(e))?;
        let mut v = json!({ "ok": true, "event": "extend", "job": job });
        match r {
            Overrun::Extended { segment, utility } => {
                v["extended"] = true.into();
                v["segments"] = json!([segment]);
                v["utility"] = utility.into();
            }
            Overrun::Preempted { reason } => {
                v["extended"] = false.into();
                v["preempted"] = reason.into();
            }
        }
        v["certificate"] = json!(route.session.snapshot());
        Ok(v)
    }

    fn usage(
        &mut self,
        machine: MachineId,
        from_s: f64,
        to_s: f64,
        resources: Resources,
    ) -> Result<Value, ProtocolError> {
        let id = self
            .state
            .record_usage(machine, from_s, to_s, resources)
            .map_err(ProtocolError::Usage)?;
        let uses = self.state.hold(Holder::Usage(id)).unwrap_or(&[]);
        let held: Vec<Value> = uses
            .iter()
            .map(|u| json!({ "slots": u.slots, "gpus": u.gpus }))
            .collect();
        Ok(json!({ "ok": true, "event": "usage", "usage": id.0, "machine": machine, "held": held }))
    }

    fn certificates_reply(&mut self) -> Result<Value, ProtocolError> {
        let all: Vec<Value> = self
            .certificates()?
            .into_iter()
            .map(|(name, c)| json!({ "algorithm": name, "certificate": c }))
            .collect();
        Ok(json!({ "ok": true, "event": "certificate", "certificates": all }))
    }
}

/// A bad line's reply.
fn error_reply(e: &ProtocolError) -> Value {
    json!({ "error": e.to_string() })
}

/// The job of a submit event: the instance format's job object, its
/// `arrival_s` the submission time when left out.
fn parse_job(mut job: Value, time_s: f64) -> Result<Job, ProtocolError> {
    if let Value::Object(o) = &mut job {
        o.entry("arrival_s").or_insert(json!(time_s));
    }
    serde_json::from_value(job).map_err(ProtocolError::NotAJob)
}

/// A decision as a line: the fields of a `schedule.json` job entry, the
/// rejection, the plan's utility and price, and the certificate snapshot.
fn decision_line(d: &SessionDecision, algorithm: &str) -> Value {
    let mut v = json!({
        "job": d.job,
        "admitted": d.admitted,
        "segments": d.segments,
        "algorithm": algorithm,
        "utility": d.utility,
        "price": d.price,
        "certificate": d.snapshot,
    });
    if let Some(r) = &d.rejection {
        v["rejection"] = json!({ "kind": r.kind(), "reason": r.to_string() });
    }
    v
}

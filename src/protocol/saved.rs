//! The saved file: the shared state and every session (the layout of
//! `dmlsched session --state`).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::registry;
use crate::state::ClusterState;

use super::{LAYOUT_VERSION, ProtocolError, Route, SessionSet, SpecError, arch_name};

/// The saved file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Saved {
    dmlsched_session: u32,
    slot_length_s: f64,
    window: u32,
    sessions: Vec<SavedRoute>,
    state: ClusterState,
}

/// One saved session.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SavedRoute {
    arch: String,
    algorithm: String,
    session: Value,
}

impl SessionSet {
    /// The saved file's text (one line of JSON, without its end): the
    /// layout version (`dmlsched_session`), `slot_length_s`, `window`, the
    /// `sessions` (each `arch`, `algorithm` and the session's own saved
    /// JSON) and the shared `state`. [`restore`](Self::restore) reads it
    /// back, and so does `dmlsched session --state`.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::Algorithm`] for a session that cannot be saved;
    /// [`ProtocolError::Encode`] for a bug.
    pub fn save_text(&self) -> Result<String, ProtocolError> {
        let mut sessions = Vec::new();
        for r in &self.routes {
            let text = r.session.save().map_err(|e| r.error(e))?;
            let session: Value =
                serde_json::from_str(&text).map_err(|source| ProtocolError::Encode {
                    algorithm: Some(r.name.clone()),
                    source,
                })?;
            sessions.push(SavedRoute {
                arch: arch_name(r.arch).into(),
                algorithm: r.name.clone(),
                session,
            });
        }
        let saved = Saved {
            dmlsched_session: LAYOUT_VERSION,
            slot_length_s: self.state.slot_length_s(),
            window: self.window,
            sessions,
            state: self.state.clone(),
        };
        serde_json::to_string(&saved).map_err(|source| ProtocolError::Encode {
            algorithm: None,
            source,
        })
    }

    /// Writes [`save_text`](Self::save_text) and a line end to `path`:
    /// to `path` with the extension `tmp` first, then renamed over it, so
    /// a crash never leaves half a file.
    ///
    /// # Errors
    ///
    /// As [`save_text`](Self::save_text); [`ProtocolError::Write`] for a
    /// file that cannot be written.
    pub fn save_file(&self, path: &Path) -> Result<(), ProtocolError> {
        let text = self.save_text()?;
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, text + "\n")
            .and_then(|()| std::fs::rename(&tmp, path))
            .map_err(|source| ProtocolError::Write {
                path: path.to_path_buf(),
                source,
            })
    }

    /// The set saved in `text` (by [`save_text`](Self::save_text), or a
    /// `--state` file of `dmlsched session`): it decides as the saved one
    /// would have. It has no save file.
    ///
    /// # Errors
    ///
    /// [`ProtocolError::Json`] for text that is not a saved set,
    /// [`ProtocolError::Layout`] for another layout version,
    /// [`ProtocolError::Restore`] for a session that does not restore.
    pub fn restore(text: &str) -> Result<SessionSet, ProtocolError> {
        let saved: Saved = serde_json::from_str(text).map_err(ProtocolError::Json)?;
        if saved.dmlsched_session != LAYOUT_VERSION {
            return Err(ProtocolError::Layout(saved.dmlsched_session));
        }
        let mut routes = Vec::new();
        for r in saved.sessions {
            let text = r.session.to_string();
            let session = registry::restore_session(&r.algorithm, &text).map_err(|source| {
                ProtocolError::Restore {
                    algorithm: r.algorithm.clone(),
                    source: Box::new(source),
                }
            })?;
            let arch = registry::architecture(&r.algorithm).ok_or_else(|| ProtocolError::Spec {
                spec: r.algorithm.clone(),
                reason: SpecError::NoSingleArchitecture(r.algorithm.clone()),
            })?;
            routes.push(Route {
                arch,
                name: r.algorithm,
                session,
            });
        }
        Ok(SessionSet {
            state: saved.state,
            routes,
            window: saved.window,
            save_path: None,
        })
    }
}

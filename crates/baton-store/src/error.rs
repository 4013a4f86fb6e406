//! The store's error type: the shared faults (a bad name, a damaged log, the file system)
//! and the store's own — a transition its state machine refuses, a task that is not there.

use std::path::PathBuf;

use baton_core::error::{Fault, Kind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Fault(#[from] baton_core::Error),
    /// The task's state machine does not allow this event now (exit 3): the command is
    /// well-formed, the task is where it is.
    #[error("{msg}")]
    Refused { msg: String, hint: Option<String> },
    /// No task of that slug under the store's tasks directory (exit 4).
    #[error("no task `{slug}` in {}{did_you_mean}", tasks.display())]
    NoTask {
        slug: String,
        tasks: PathBuf,
        /// ` (did you mean `add-login`?)`, or empty.
        did_you_mean: String,
    },
}

baton_core::shared_faults!(Error);

impl Error {
    pub fn refused(msg: impl Into<String>) -> Self {
        Error::Refused {
            msg: msg.into(),
            hint: None,
        }
    }

    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(self, text: impl Into<String>) -> Self {
        match self {
            Error::Fault(e) => Error::Fault(e.hint(text)),
            Error::Refused { msg, .. } => Error::Refused {
                msg,
                hint: Some(text.into()),
            },
            e @ Error::NoTask { .. } => e,
        }
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&baton_core::Error> {
        match self {
            Error::Fault(e) => Some(e),
            Error::Refused { .. } | Error::NoTask { .. } => None,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Fault(e) => e.kind(),
            Error::Refused { .. } => Kind::State,
            Error::NoTask { .. } => Kind::NotFound,
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Fault(e) => e.hint_text(),
            Error::Refused { hint, .. } => hint.clone(),
            Error::NoTask { .. } => Some(
                "list the tasks with `baton task list`, or create it with `baton task init`".into(),
            ),
        }
    }
}

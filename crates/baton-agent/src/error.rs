//! The agent layer's error type: the shared faults (a bad model name, a settings file that
//! cannot be read) and its own — an agent CLI that cannot work here.

use baton_core::error::{Fault, Kind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Fault(#[from] baton_core::Error),
    /// An agent CLI cannot work here (not installed, not logged in, untrusted folder, unknown
    /// model, no network, a refused argument): nothing the work did, so no attempt is spent.
    /// Exit code 7.
    #[error("{msg}")]
    Unavailable { msg: String, hint: Option<String> },
}

baton_core::shared_faults!(Error);

impl Error {
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Error::Unavailable {
            msg: msg.into(),
            hint: None,
        }
    }

    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(self, text: impl Into<String>) -> Self {
        match self {
            Error::Fault(e) => Error::Fault(e.hint(text)),
            Error::Unavailable { msg, .. } => Error::Unavailable {
                msg,
                hint: Some(text.into()),
            },
        }
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&baton_core::Error> {
        match self {
            Error::Fault(e) => Some(e),
            Error::Unavailable { .. } => None,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Fault(e) => e.kind(),
            Error::Unavailable { .. } => Kind::Agent,
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Fault(e) => e.hint_text(),
            Error::Unavailable { hint, .. } => hint.clone(),
        }
    }
}

//! The engines' error type: the shared faults, the errors of the layers below (the store,
//! the context toolkit, the agents) kept as they came, and the engines' own — a run stopped
//! by a signal.

use baton_core::error::{Fault, Kind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Fault(#[from] baton_core::Error),
    #[error(transparent)]
    Store(#[from] baton_store::Error),
    #[error(transparent)]
    Context(#[from] baton_context::Error),
    #[error(transparent)]
    Agent(#[from] baton_agent::Error),
    /// The run was stopped by a signal (Ctrl-C, kill, a closed terminal): what ran was
    /// stopped cleanly and journaled. Exit code 128 + the signal (130 for Ctrl-C).
    #[error("interrupted by {name}")]
    Interrupted {
        signal: i32,
        name: String,
        hint: Option<String>,
    },
}

baton_core::shared_faults!(Error);

impl Error {
    /// An agent CLI cannot work here (exit 7): see [`baton_agent::Error::Unavailable`].
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Error::Agent(baton_agent::Error::unavailable(msg))
    }

    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(self, text: impl Into<String>) -> Self {
        match self {
            Error::Fault(e) => Error::Fault(e.hint(text)),
            Error::Store(e) => Error::Store(e.hint(text)),
            Error::Context(e) => Error::Context(e.hint(text)),
            Error::Agent(e) => Error::Agent(e.hint(text)),
            Error::Interrupted { signal, name, .. } => Error::Interrupted {
                signal,
                name,
                hint: Some(text.into()),
            },
        }
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&baton_core::Error> {
        match self {
            Error::Fault(e) => Some(e),
            Error::Store(e) => e.shared(),
            Error::Context(e) => e.shared(),
            Error::Agent(e) => e.shared(),
            Error::Interrupted { .. } => None,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Fault(e) => e.kind(),
            Error::Store(e) => e.kind(),
            Error::Context(e) => e.kind(),
            Error::Agent(e) => e.kind(),
            Error::Interrupted { signal, .. } => Kind::Interrupted { signal: *signal },
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Fault(e) => e.hint_text(),
            Error::Store(e) => e.hint_text(),
            Error::Context(e) => e.hint_text(),
            Error::Agent(e) => e.hint_text(),
            Error::Interrupted { hint, .. } => hint.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_crates_error_keeps_its_type_kind_and_hint_through_the_engine() {
        let e: Error = baton_store::Error::NoTask {
            slug: "add-login".into(),
            tasks: "docs/orchestrator/tasks".into(),
            did_you_mean: String::new(),
        }
        .into();
        assert!(
            matches!(&e, Error::Store(baton_store::Error::NoTask { slug, .. }) if slug == "add-login")
        );
        assert_eq!((e.kind(), e.exit_code()), (Kind::NotFound, 4));
        assert_eq!(
            e.to_string(),
            "no task `add-login` in docs/orchestrator/tasks"
        );
        assert!(e.hint_text().unwrap().contains("baton task list"));

        // A hint given above reaches the error it wraps.
        let e = Error::from(baton_store::Error::refused("cannot start: task is paused"))
            .hint("resume it first");
        assert_eq!(
            (e.kind(), e.hint_text()),
            (Kind::State, Some("resume it first".into()))
        );

        let e = Error::unavailable("agent CLI `codex` is not installed").hint("npm install");
        assert!(matches!(
            e,
            Error::Agent(baton_agent::Error::Unavailable { .. })
        ));
        assert_eq!(e.exit_code(), 7);

        let full = std::io::Error::from_raw_os_error(libc::ENOSPC);
        let e = Error::from(baton_context::Error::io("scratch", full));
        assert!(
            e.is_out_of_space(),
            "a full disk is seen through the wrapping"
        );
        assert!(e.shared().is_some());

        let e = Error::Interrupted {
            signal: 15,
            name: "SIGTERM".into(),
            hint: None,
        };
        assert_eq!((e.exit_code(), e.kind().name()), (143, "interrupted"));
        assert!(e.shared().is_none());
    }
}

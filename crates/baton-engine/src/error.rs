//! The engines' error type: the shared faults, the errors of the layers below (the store,
//! the context toolkit, the agents) kept as they came, and the engines' own: a run stopped
//! by a signal, a run that is not there or is run by another baton, a git step that failed.

use std::path::PathBuf;

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
    /// No run of that id in the runs folder (exit 4).
    #[error("no run {id} in {}", runs.display())]
    NoRun { id: String, runs: PathBuf },
    /// Another live baton holds the run (exit 3): it is not run twice.
    #[error("run {id} is being run by another baton")]
    RunHeld { id: String },
    /// A git step failed (exit 3); `said` is git's own message.
    #[error("{step} failed{}: {said}", dir.as_ref().map(|d| format!(" in {}", d.display())).unwrap_or_default())]
    Git {
        /// What was run, e.g. `git commit` or `git hash-object of src/a.rs`.
        step: String,
        /// The repository (or worktree) it ran in, when the message names it.
        dir: Option<PathBuf>,
        said: String,
        hint: Option<String>,
    },
    /// Another git process holds the repository's index lock, and did not let go (exit 3).
    #[error("git is busy in {}: {} exists and git process {pid} is running there", root.display(), lock.display())]
    GitBusy {
        root: PathBuf,
        lock: PathBuf,
        pid: u32,
    },
}

baton_core::shared_faults!(Error);

impl Error {
    /// An agent CLI cannot work here (exit 7): see [`baton_agent::Error::Unavailable`].
    pub fn unavailable(msg: impl Into<String>) -> Self {
        Error::Agent(baton_agent::Error::unavailable(msg))
    }

    /// A git step that failed, with git's own message.
    pub fn git(step: impl Into<String>, dir: Option<PathBuf>, said: impl Into<String>) -> Self {
        Error::Git {
            step: step.into(),
            dir,
            said: said.into(),
            hint: None,
        }
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
            Error::Git {
                step, dir, said, ..
            } => Error::Git {
                step,
                dir,
                said,
                hint: Some(text.into()),
            },
            e @ (Error::NoRun { .. } | Error::RunHeld { .. } | Error::GitBusy { .. }) => e,
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
            Error::Interrupted { .. }
            | Error::NoRun { .. }
            | Error::RunHeld { .. }
            | Error::Git { .. }
            | Error::GitBusy { .. } => None,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Fault(e) => e.kind(),
            Error::Store(e) => e.kind(),
            Error::Context(e) => e.kind(),
            Error::Agent(e) => e.kind(),
            Error::Interrupted { signal, .. } => Kind::Interrupted { signal: *signal },
            Error::NoRun { .. } => Kind::NotFound,
            Error::RunHeld { .. } | Error::Git { .. } | Error::GitBusy { .. } => Kind::State,
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Fault(e) => e.hint_text(),
            Error::Store(e) => e.hint_text(),
            Error::Context(e) => e.hint_text(),
            Error::Agent(e) => e.hint_text(),
            Error::Interrupted { hint, .. } | Error::Git { hint, .. } => hint.clone(),
            Error::NoRun { .. } => Some("list the runs with `baton status`".into()),
            Error::RunHeld { id } => Some(format!(
                "wait for it to finish (`baton status` shows where it is), or stop it and continue it here: baton run --resume {id}"
            )),
            Error::GitBusy { .. } => Some(
                "wait for that git command to finish, then run baton again (or resume the run)"
                    .into(),
            ),
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

    #[test]
    fn the_engines_own_errors_say_what_and_what_next() {
        let e = Error::NoRun {
            id: "20260101T000000-abcdef".into(),
            runs: ".baton/runs".into(),
        };
        assert_eq!(
            e.to_string(),
            "no run 20260101T000000-abcdef in .baton/runs"
        );
        assert_eq!(
            (e.exit_code(), e.hint_text().unwrap().as_str()),
            (4, "list the runs with `baton status`")
        );
        let e = Error::RunHeld { id: "r1".into() };
        assert_eq!(e.exit_code(), 3);
        assert!(e.hint_text().unwrap().ends_with("baton run --resume r1"));
        let e = Error::git("git stash", None, "no space");
        assert_eq!(e.to_string(), "git stash failed: no space");
        let e = Error::git("git add", Some("/p".into()), "fatal: x").hint("fix it");
        assert_eq!(e.to_string(), "git add failed in /p: fatal: x");
        assert_eq!(
            (e.kind(), e.hint_text()),
            (Kind::State, Some("fix it".into()))
        );
        let e = Error::GitBusy {
            root: "/p".into(),
            lock: "/p/.git/index.lock".into(),
            pid: 7,
        };
        assert_eq!(
            e.to_string(),
            "git is busy in /p: /p/.git/index.lock exists and git process 7 is running there"
        );
        assert_eq!(e.exit_code(), 3);
    }
}

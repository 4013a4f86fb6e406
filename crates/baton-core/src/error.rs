//! One error type for the library. Each variant maps to a documented exit code, so scripts
//! and agents can tell bad input from a refused transition from a damaged store.

//! The error kinds every baton crate speaks, and the faults they share.
//!
//! Each library crate has an error type of its own (`baton_store::Error`,
//! `baton_context::Error`, `baton_agent::Error`, `baton_engine::Error`) that holds this
//! crate's [`Error`] — the faults every layer can meet: bad input, a refused transition,
//! something missing, a damaged file, the file system, a bug — beside the failures that are
//! its own (an agent CLI that cannot work here, a run stopped by a signal) and the errors of
//! the crates below it. Every one of them implements [`Fault`]: its [`Kind`] (one documented
//! exit code each, so scripts and agents can tell bad input from a refused transition from a
//! damaged store) and the hint that says what to do next.

use std::path::{Path, PathBuf};

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kinds of failure, each with its documented exit code and the stable name `--json`,
/// the command language and the MCP tools speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Bad input. Exit code 2.
    Invalid,
    /// Well-formed, but the state does not allow it. Exit code 3.
    State,
    /// Something asked for does not exist. Exit code 4.
    NotFound,
    /// A file is damaged. Exit code 5.
    Corrupt,
    /// The file system refused. Exit code 6.
    Io,
    /// An agent CLI cannot work here. Exit code 7.
    Agent,
    /// Stopped by a signal. Exit code 128 + the signal (130 for Ctrl-C).
    Interrupted { signal: i32 },
    /// A bug of baton's own. Exit code 70 (EX_SOFTWARE).
    Internal,
}

impl Kind {
    /// The process exit code (and the command language's `code`) of this kind.
    pub fn exit_code(self) -> u8 {
        match self {
            Kind::Invalid => 2,
            Kind::State => 3,
            Kind::NotFound => 4,
            Kind::Corrupt => 5,
            Kind::Io => 6,
            Kind::Agent => 7,
            Kind::Interrupted { signal } => (128 + signal).clamp(0, 255) as u8,
            Kind::Internal => 70,
        }
    }

    /// Stable machine name of the kind (used by `--json` and the context-manager command language).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Invalid => "invalid",
            Kind::State => "state",
            Kind::NotFound => "not_found",
            Kind::Corrupt => "corrupt",
            Kind::Io => "io",
            Kind::Agent => "agent",
            Kind::Interrupted { .. } => "interrupted",
            Kind::Internal => "internal",
        }
    }
}

/// What every baton error tells besides its message: its kind and what to do next. Each
/// crate's error type implements it, delegating to the error it wraps; the binary renders
/// any of them the same way.
pub trait Fault: std::error::Error {
    fn kind(&self) -> Kind;
    /// What to do next, if anything is known: shown as `hint:` to people, `error.hint` with
    /// `--json`, and `(next: …)` in the command language.
    fn hint_text(&self) -> Option<String>;
    /// The shared fault underneath, if this is one (wrapped by however many crates).
    fn shared(&self) -> Option<&Error>;
    fn exit_code(&self) -> u8 {
        self.kind().exit_code()
    }
    /// The file system ran out of space: nothing is damaged, a write could not be made now.
    fn is_out_of_space(&self) -> bool {
        self.shared().is_some_and(Error::is_out_of_space)
    }
}

/// The faults every layer shares.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: an argument, a name, content that is not UTF-8. Exit code 2.
    #[error("{msg}")]
    Invalid { msg: String, hint: Option<String> },
    /// The command is well-formed but the task's state does not allow it. Exit code 3.
    #[error("{msg}")]
    State { msg: String, hint: Option<String> },
    /// Something asked for does not exist (task, artifact, section). Exit code 4.
    #[error("{msg}")]
    NotFound { msg: String, hint: Option<String> },
    /// A store file is damaged. Exit code 5.
    #[error("{}: {msg}", location(path, *line))]
    Corrupt {
        path: PathBuf,
        line: Option<usize>,
        msg: String,
        /// What to do; by default, `baton doctor` (a damaged store).
        hint: Option<String>,
    },
    /// A bug of baton's own, not of the input: an invariant that did not hold, a value that
    /// could not be encoded. Exit code 70 (EX_SOFTWARE).
    #[error("internal error: {msg}")]
    Internal { msg: String },
    /// The file system refused. Exit code 6.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn location(path: &Path, line: Option<usize>) -> String {
    match line {
        Some(l) => format!("{} line {l}", path.display()),
        None => path.display().to_string(),
    }
}

impl Error {
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid {
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn state(msg: impl Into<String>) -> Self {
        Error::State {
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn not_found(msg: impl Into<String>) -> Self {
        Error::NotFound {
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn corrupt(path: impl Into<PathBuf>, line: Option<usize>, msg: impl Into<String>) -> Self {
        Error::Corrupt {
            path: path.into(),
            line,
            msg: msg.into(),
            hint: None,
        }
    }
    pub fn internal(msg: impl Into<String>) -> Self {
        Error::Internal { msg: msg.into() }
    }
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The file system ran out of space (or quota): nothing is damaged, a write could not
    /// be made now.
    pub fn is_out_of_space(&self) -> bool {
        match self {
            Error::Io { source, .. } => {
                source.kind() == std::io::ErrorKind::StorageFull
                    || source.kind() == std::io::ErrorKind::QuotaExceeded
                    || matches!(source.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT))
            }
            _ => false,
        }
    }

    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(mut self, text: impl Into<String>) -> Self {
        match &mut self {
            Error::Invalid { hint, .. }
            | Error::State { hint, .. }
            | Error::NotFound { hint, .. }
            | Error::Corrupt { hint, .. } => *hint = Some(text.into()),
            Error::Internal { .. } | Error::Io { .. } => {}
        }
        self
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&Error> {
        Some(self)
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Invalid { .. } => Kind::Invalid,
            Error::State { .. } => Kind::State,
            Error::NotFound { .. } => Kind::NotFound,
            Error::Corrupt { .. } => Kind::Corrupt,
            Error::Io { .. } => Kind::Io,
            Error::Internal { .. } => Kind::Internal,
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Invalid { hint, .. } | Error::State { hint, .. } | Error::NotFound { hint, .. } => {
                hint.clone()
            }
            Error::Corrupt { hint: Some(h), .. } => Some(h.clone()),
            Error::Corrupt { .. } => Some(
                "run `baton doctor` to check the store and rebuild manifests from events".into(),
            ),
            Error::Io { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                Some("check the directory's permissions, or point --root elsewhere".into())
            }
            Error::Io { .. } if self.is_out_of_space() => Some(
                "the disk is full: free some space and run the command again (`baton doctor` writes what a full disk kept from the store's files)".into(),
            ),
            Error::Io { .. } => None,
            Error::Internal { .. } => {
                Some("this is a bug in baton: please report it with the command that failed".into())
            }
        }
    }
}

/// Gives a crate's error type — an enum with a `Fault(baton_core::Error)` variant — the
/// constructors of the shared faults, so `Error::invalid("…").hint("…")` reads the same in
/// every crate. `hint` attaches to a shared fault; the crate's own variants say theirs in
/// their [`Fault`] impl.
#[macro_export]
macro_rules! shared_faults {
    ($ty:ident) => {
        impl $ty {
            pub fn invalid(msg: impl Into<String>) -> Self {
                Self::Fault($crate::error::Error::invalid(msg))
            }
            pub fn state(msg: impl Into<String>) -> Self {
                Self::Fault($crate::error::Error::state(msg))
            }
            pub fn not_found(msg: impl Into<String>) -> Self {
                Self::Fault($crate::error::Error::not_found(msg))
            }
            pub fn corrupt(
                path: impl Into<std::path::PathBuf>,
                line: Option<usize>,
                msg: impl Into<String>,
            ) -> Self {
                Self::Fault($crate::error::Error::corrupt(path, line, msg))
            }
            pub fn internal(msg: impl Into<String>) -> Self {
                Self::Fault($crate::error::Error::internal(msg))
            }
            pub fn io(path: impl Into<std::path::PathBuf>, source: std::io::Error) -> Self {
                Self::Fault($crate::error::Error::io(path, source))
            }
        }
    };
}

/// `io_err(path)` turns a bare `std::io::Error` into one that names the file.
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_has_its_documented_exit_code_and_name() {
        let table = [
            (Kind::Invalid, 2, "invalid"),
            (Kind::State, 3, "state"),
            (Kind::NotFound, 4, "not_found"),
            (Kind::Corrupt, 5, "corrupt"),
            (Kind::Io, 6, "io"),
            (Kind::Agent, 7, "agent"),
            (Kind::Interrupted { signal: 2 }, 130, "interrupted"),
            (Kind::Interrupted { signal: 15 }, 143, "interrupted"),
            (Kind::Internal, 70, "internal"),
        ];
        for (kind, code, name) in table {
            assert_eq!((kind.exit_code(), kind.name()), (code, name), "{kind:?}");
        }
    }

    #[test]
    fn a_hint_sticks_where_it_can_and_a_damaged_file_hints_doctor() {
        let e = Error::not_found("no such thing").hint("make it");
        assert_eq!(
            (e.kind(), e.hint_text()),
            (Kind::NotFound, Some("make it".into()))
        );
        let e = Error::corrupt("a/b.json", Some(3), "bad");
        assert_eq!(e.to_string(), "a/b.json line 3: bad");
        assert!(e.hint_text().unwrap().contains("baton doctor"));
        let full = Error::io("x", std::io::Error::from_raw_os_error(libc::ENOSPC));
        assert!(full.is_out_of_space() && Fault::is_out_of_space(&full));
        assert!(full.hint_text().unwrap().contains("disk is full"));
        assert!(!Error::invalid("x").is_out_of_space());
    }
}

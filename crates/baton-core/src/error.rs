//! One error type for the library. Each variant maps to a documented exit code, so scripts
//! and agents can tell bad input from a refused transition from a damaged store.

use std::path::{Path, PathBuf};

pub type Result<T, E = Error> = std::result::Result<T, E>;

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
    /// An agent CLI cannot work here (not logged in, untrusted folder, unknown model, no
    /// network, a refused argument): nothing the work did, so no attempt is spent. Exit code 7.
    #[error("{msg}")]
    Agent { msg: String, hint: Option<String> },
    /// `baton run` was stopped by a signal (Ctrl-C, kill, a closed terminal): what ran was
    /// stopped cleanly and journaled. Exit code 128 + the signal (130 for Ctrl-C).
    #[error("interrupted by {name}")]
    Interrupted {
        signal: i32,
        name: String,
        hint: Option<String>,
    },
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
    pub fn agent(msg: impl Into<String>) -> Self {
        Error::Agent {
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
            | Error::Agent { hint, .. }
            | Error::Interrupted { hint, .. }
            | Error::Corrupt { hint, .. } => *hint = Some(text.into()),
            _ => {}
        }
        self
    }

    pub fn hint_text(&self) -> Option<String> {
        match self {
            Error::Invalid { hint, .. }
            | Error::State { hint, .. }
            | Error::NotFound { hint, .. }
            | Error::Agent { hint, .. }
            | Error::Interrupted { hint, .. } => hint.clone(),
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

    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Invalid { .. } => 2,
            Error::State { .. } => 3,
            Error::NotFound { .. } => 4,
            Error::Corrupt { .. } => 5,
            Error::Io { .. } => 6,
            Error::Agent { .. } => 7,
            Error::Interrupted { signal, .. } => (128 + signal).clamp(0, 255) as u8,
            Error::Internal { .. } => 70,
        }
    }

    /// Stable machine name of the error kind (used by `--json` and the context-manager command language).
    pub fn kind(&self) -> &'static str {
        match self {
            Error::Invalid { .. } => "invalid",
            Error::State { .. } => "state",
            Error::NotFound { .. } => "not_found",
            Error::Corrupt { .. } => "corrupt",
            Error::Io { .. } => "io",
            Error::Agent { .. } => "agent",
            Error::Interrupted { .. } => "interrupted",
            Error::Internal { .. } => "internal",
        }
    }
}

/// `io_err(path)` turns a bare `std::io::Error` into one that names the file.
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |e| Error::io(path, e)
}

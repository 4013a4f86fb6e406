//! The binary's error type: what the CLI, MCP, the hooks and init refuse themselves (the
//! shared faults), and the errors of every library crate, kept as they came. `cli::report`
//! renders any of them the same way, and its [`Kind`](baton_core::error::Kind) is the exit
//! code.

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
    #[error(transparent)]
    Engine(#[from] baton_engine::Error),
    /// What the toolkit said of a document, with the document's name in front.
    #[error("{file}: {source}")]
    InFile {
        file: String,
        source: baton_context::Error,
    },
}

baton_core::shared_faults!(Error);

impl Error {
    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(self, text: impl Into<String>) -> Self {
        match self {
            Error::Fault(e) => Error::Fault(e.hint(text)),
            Error::Store(e) => Error::Store(e.hint(text)),
            Error::Context(e) => Error::Context(e.hint(text)),
            Error::Agent(e) => Error::Agent(e.hint(text)),
            Error::Engine(e) => Error::Engine(e.hint(text)),
            Error::InFile { file, source } => Error::InFile {
                file,
                source: source.hint(text),
            },
        }
    }

    /// A toolkit error about the document `file`: bad input or a section not found is said
    /// with the file's name in front; the file system's errors name their path already.
    pub fn in_file(e: baton_context::Error, file: &str) -> Self {
        match e.kind() {
            Kind::NotFound | Kind::Invalid => Error::InFile {
                file: file.to_string(),
                source: e,
            },
            _ => Error::Context(e),
        }
    }

    fn inner(&self) -> &dyn Fault {
        match self {
            Error::Fault(e) => e,
            Error::Store(e) => e,
            Error::Context(e) => e,
            Error::Agent(e) => e,
            Error::Engine(e) => e,
            Error::InFile { source, .. } => source,
        }
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&baton_core::Error> {
        self.inner().shared()
    }

    fn kind(&self) -> Kind {
        self.inner().kind()
    }

    fn hint_text(&self) -> Option<String> {
        self.inner().hint_text()
    }
}

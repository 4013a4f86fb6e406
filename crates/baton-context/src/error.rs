//! The context toolkit's error type: the shared faults (bad input, a file that cannot be
//! read) and its own — a section a query does not find, or finds more than once.
//!
//! ```
//! use baton_context::{Error, extract};
//! use baton_core::error::{Fault, Kind};
//!
//! let spec = "# Spec\n## API client\ntext\n## API server\ntext\n";
//! let all = baton_core::markdown::sections(spec);
//! match extract::find(&all, "API") {
//!     Err(Error::AmbiguousSection { candidates, .. }) => assert_eq!(candidates.lines().count(), 2),
//!     other => panic!("{other:?}"),
//! }
//! let e = extract::find(&all, "Deployment").unwrap_err();
//! assert!(matches!(&e, Error::NoSection { query, .. } if query == "Deployment"));
//! assert_eq!((e.kind(), e.exit_code()), (Kind::NotFound, 4));
//! assert!(e.to_string().contains("## API server (line 4)"));
//! ```

use baton_core::error::{Fault, Kind};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Fault(#[from] baton_core::Error),
    /// No heading answers the query (exit 4). `msg` lists the headings there are.
    #[error("{msg}")]
    NoSection {
        query: String,
        msg: String,
        hint: Option<String>,
    },
    /// More than one heading answers the query (exit 2); `candidates` lists them, a line each.
    #[error("section {query:?} is ambiguous; candidates:\n{candidates}")]
    AmbiguousSection { query: String, candidates: String },
}

baton_core::shared_faults!(Error);

impl Error {
    /// Attach "what to do next" to an error that can carry one.
    pub fn hint(self, text: impl Into<String>) -> Self {
        match self {
            Error::Fault(e) => Error::Fault(e.hint(text)),
            Error::NoSection { query, msg, .. } => Error::NoSection {
                query,
                msg,
                hint: Some(text.into()),
            },
            e @ Error::AmbiguousSection { .. } => e,
        }
    }
}

impl Fault for Error {
    fn shared(&self) -> Option<&baton_core::Error> {
        match self {
            Error::Fault(e) => Some(e),
            Error::NoSection { .. } | Error::AmbiguousSection { .. } => None,
        }
    }

    fn kind(&self) -> Kind {
        match self {
            Error::Fault(e) => e.kind(),
            Error::NoSection { .. } => Kind::NotFound,
            Error::AmbiguousSection { .. } => Kind::Invalid,
        }
    }

    fn hint_text(&self) -> Option<String> {
        match self {
            Error::Fault(e) => e.hint_text(),
            Error::NoSection { hint, .. } => hint.clone(),
            Error::AmbiguousSection { .. } => Some(
                "name it by its path, e.g. --section \"Parent > Child\", or use the exact title"
                    .into(),
            ),
        }
    }
}

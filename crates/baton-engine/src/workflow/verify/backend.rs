//! Where a project's verify queues live: files under `.baton/queues/` (the embedded default,
//! one machine) or a PostgreSQL database that workers on many machines drain together
//! (`[queue] backend = "postgres"`). `baton queue add/show/list` and `baton state show` go
//! through [`Backend`] and do not know which one they talk to.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::pg::{self, Claim, Db};
use super::queue::Queues;
use super::state::ItemStatus;
use super::state::State;
use crate::error::{Error, Result};

/// `[queue]` of baton.toml.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct QueueConfig {
    /// Where queues live: `files` under `.baton/queues/`, or `postgres` (workers on several
    /// machines drain them).
    pub backend: BackendKind,
    /// `postgresql://user@host/db` or `host=… dbname=… user=…`; `BATON_DATABASE_URL` wins over
    /// it (so a password need not be in a committed file).
    pub database_url: Option<String>,
    /// How long a worker's claim on a phase lasts without a heartbeat (renewed every third of
    /// it): a worker gone longer than this has its phase taken over.
    pub lease_secs: u64,
    /// How long a worker keeps reconnecting to a database that went away (a restart, a
    /// failover, a killed connection) before it stops: every connection it holds reconnects
    /// with backoff meanwhile. 0: stop at the first connection lost.
    pub unreachable_secs: u64,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            backend: BackendKind::Files,
            database_url: None,
            lease_secs: 60,
            unreachable_secs: 300,
        }
    }
}

#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum BackendKind {
    #[default]
    Files,
    Postgres,
}

impl QueueConfig {
    /// The database URL: `BATON_DATABASE_URL`, else `database_url`.
    pub fn url(&self) -> Result<String> {
        std::env::var("BATON_DATABASE_URL")
            .ok()
            .filter(|u| !u.trim().is_empty())
            .or_else(|| self.database_url.clone())
            .ok_or_else(|| {
                Error::invalid("baton.toml has `[queue] backend = \"postgres\"` but no database URL")
                    .hint("set BATON_DATABASE_URL=postgresql://USER@HOST/DB (or `database_url` under [queue])")
            })
    }

    pub fn lease(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.lease_secs)
    }

    pub fn unreachable(&self) -> std::time::Duration {
        std::time::Duration::from_secs(self.unreachable_secs)
    }
}

pub enum Backend {
    Files(Queues),
    Postgres(Box<Db>),
}

impl Backend {
    /// The backend baton.toml names; connecting (and migrating the schema) for postgres.
    pub fn open(cfg: &QueueConfig, local: &Path) -> Result<Backend> {
        Ok(match cfg.backend {
            BackendKind::Files => Backend::Files(Queues::new(local)),
            BackendKind::Postgres => Backend::Postgres(Box::new(Db::connect(&cfg.url()?)?)),
        })
    }

    pub fn kind(&self) -> BackendKind {
        match self {
            Backend::Files(_) => BackendKind::Files,
            Backend::Postgres(_) => BackendKind::Postgres,
        }
    }

    /// Append `items` to queue `name` (created if missing): all of them or none. Returns the
    /// queue's items after.
    pub fn add(&mut self, name: &str, items: &[String]) -> Result<Vec<String>> {
        match self {
            Backend::Files(q) => Ok(q
                .add(name, items)?
                .items
                .into_iter()
                .map(|i| i.id)
                .collect()),
            Backend::Postgres(db) => db.add(name, items),
        }
    }

    /// Every queue's name, sorted.
    pub fn names(&mut self) -> Result<Vec<String>> {
        match self {
            Backend::Files(q) => Ok(q.names()),
            Backend::Postgres(db) => db.names(),
        }
    }

    /// The queue's item ids in order (not found: an error naming the queues there are).
    pub fn items(&mut self, name: &str) -> Result<Vec<String>> {
        match self {
            Backend::Files(q) => Ok(q.load(name)?.items.into_iter().map(|i| i.id).collect()),
            Backend::Postgres(db) => db.items(name),
        }
    }

    /// Where every item of the queue is, in order.
    pub fn statuses(&mut self, name: &str) -> Result<Vec<ItemStatus>> {
        match self {
            Backend::Files(q) => q
                .load(name)?
                .items
                .iter()
                .map(|i| q.status(name, &i.id))
                .collect(),
            Backend::Postgres(db) => Ok(db
                .states(name)?
                .into_iter()
                .map(|(item, st)| match st {
                    Some(s) => s.item_status(),
                    None => ItemStatus::pending(&item),
                })
                .collect()),
        }
    }

    /// The item's verification state, if a phase of it ran.
    pub fn state(&mut self, name: &str, item: &str) -> Result<Option<State>> {
        match self {
            Backend::Files(q) => q.state(name, item),
            Backend::Postgres(db) => db.state(name, item),
        }
    }

    /// Whether something works the queue now (a `baton run verify`, or a worker's live claim).
    pub fn running(&mut self, name: &str) -> Result<bool> {
        match self {
            Backend::Files(q) => Ok(q.running(name)),
            Backend::Postgres(db) => Ok(db.claims(name)?.iter().any(|c| c.lease_left_secs > 0.0)),
        }
    }

    pub fn claims(&mut self, name: &str) -> Result<Vec<Claim>> {
        match self {
            Backend::Files(_) => Ok(Vec::new()),
            Backend::Postgres(db) => db.claims(name),
        }
    }

    /// The command that works the queue: one machine's run, or workers.
    pub fn work_command(&self, name: &str) -> String {
        match self {
            Backend::Files(_) => format!("baton run verify --queue {name}"),
            Backend::Postgres(_) => format!("baton worker --queue {name}"),
        }
    }

    /// Where an item's state is, for humans: `state file: <path>` or the database's table.
    pub fn state_location(&self, name: &str, item: &str, project: &Path) -> String {
        match self {
            Backend::Files(q) => {
                let p = q.state_path(name, item);
                format!(
                    "state file: {}",
                    p.strip_prefix(project).unwrap_or(&p).display()
                )
            }
            Backend::Postgres(_) => format!("state: in the queue database ({})", pg::ITEMS),
        }
    }
}

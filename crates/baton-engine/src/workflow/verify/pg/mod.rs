//! The PostgreSQL queue backend: the queues, their items' states and phase output files in one
//! database that workers on many machines drain together (`baton worker`). Schema and
//! migrations in `schema.rs`; claims, leases and the exactly-once record in `claims.rs`.
//!
//! Times are the database's (`now()`), never a worker's clock: leases hold across machines
//! whose clocks disagree.

mod claims;
pub mod schema;

pub use claims::{Claimed, Holder, Outcome, Recorded, Stuck};

use std::str::FromStr;
use std::time::Duration;

use postgres::{Client, NoTls};
use serde::Serialize;

use super::queue::{check_additions, check_name};
use super::state::{Neighbours, QUEUE_WINDOW, State};
use crate::error::{Error, Result};

/// A live claim on an item's phase (postgres only: the file backend has one run per queue).
#[derive(Debug, Clone, Serialize)]
pub struct Claim {
    pub item: String,
    pub phase: Option<String>,
    pub attempt: i32,
    pub worker: String,
    pub host: String,
    /// Seconds since the claim was taken.
    pub age_secs: f64,
    /// Seconds until the lease runs out (negative: expired, any worker may take it over).
    pub lease_left_secs: f64,
}

/// The items table, named in messages.
pub const ITEMS: &str = "baton_items";
/// The channel `queue add` and every recorded phase notify, waking idle workers.
pub const CHANNEL: &str = "baton_queue";

pub struct Db {
    pub client: Client,
}

/// A database error as baton's: a state error (the database is unreachable or refused).
pub(crate) fn db_err(e: postgres::Error) -> Error {
    match e.as_db_error() {
        // The server refused a statement.
        Some(d) => Error::state(format!("queue database: {}: {}", d.severity(), d.message()))
            .hint("the server's log says more; `baton doctor --queue NAME` checks a queue"),
        // The connection broke.
        None => Error::state(format!("queue database: {e}")).hint(
            "check the database URL (BATON_DATABASE_URL or [queue] database_url) and that the server runs",
        ),
    }
}

/// The database user when the URL names none, as libpq finds it: `PGUSER`, else the login
/// name (`USER`, `LOGNAME`). None leaves it to the client, which asks the password database.
fn default_user(env: impl Fn(&str) -> Option<String>) -> Option<String> {
    ["PGUSER", "USER", "LOGNAME"]
        .into_iter()
        .find_map(|k| env(k).filter(|v| !v.is_empty()))
}

/// Called before this process's first database connection (and its first host look-up): the
/// binary sets it when it is linked statically (see its `nss` module); unset otherwise.
pub static BEFORE_FIRST_LOOKUP: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

impl Db {
    /// Connect and migrate the schema to this baton's version. The URL is never printed (it
    /// may hold a password).
    pub fn connect(url: &str) -> Result<Db> {
        Db::connect_within(url, None)
    }

    /// [`Db::connect`] for a connection that must answer within `bound` or fail (a worker's
    /// heartbeat: a lease must not run out while it waits): connecting, every statement
    /// (`statement_timeout`) and data the server does not acknowledge (`tcp_user_timeout`: a
    /// host gone or a network cut, which would otherwise hang for TCP's own minutes).
    pub fn connect_within(url: &str, bound: Option<Duration>) -> Result<Db> {
        let mut cfg = postgres::Config::from_str(url).map_err(|e| {
            Error::invalid(format!("the queue database URL is not valid: {e}")).hint(
                "e.g. postgresql://baton@db.internal/baton or host=/run/postgresql dbname=baton",
            )
        })?;
        if cfg.get_connect_timeout().is_none() {
            cfg.connect_timeout(Duration::from_secs(10));
        }
        if let Some(b) = bound {
            let b = b.max(Duration::from_millis(100));
            cfg.connect_timeout(b.min(cfg.get_connect_timeout().copied().unwrap_or(b)));
            cfg.tcp_user_timeout(b);
        }
        cfg.application_name("baton");
        if cfg.get_user().is_none()
            && let Some(user) = default_user(|k| std::env::var(k).ok())
        {
            cfg.user(&user);
        }
        if let Some(f) = BEFORE_FIRST_LOOKUP.get() {
            f();
        }
        let client = cfg.connect(NoTls).map_err(|e| {
            // The client's message alone ("error connecting to server") hides the cause.
            let cause = std::error::Error::source(&e)
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            Error::state(format!("cannot connect to the queue database: {e}{cause}")).hint(
                "check BATON_DATABASE_URL (or [queue] database_url in baton.toml) and that the server runs",
            )
        })?;
        let mut db = Db { client };
        schema::migrate(&mut db.client)?;
        // Every commit waits for the WAL flush, whatever the server's default: a claim or a
        // renewal lost in a server crash would let a second worker run the phase beside its
        // holder (found by tests/it/queue_pg_faults.rs). Multi-statement writes — a recorded
        // outcome, added or retried items — are `durable` transactions as well.
        db.client
            .batch_execute("SET synchronous_commit = on")
            .map_err(db_err)?;
        if let Some(b) = bound {
            let ms = b.as_millis().max(100);
            db.client
                .batch_execute(&format!("SET statement_timeout = {ms}"))
                .map_err(db_err)?;
        }
        Ok(db)
    }

    /// A transaction; it commits only once it is on disk (the session's setting).
    pub(crate) fn durable(&mut self) -> Result<postgres::Transaction<'_>> {
        self.client.transaction().map_err(db_err)
    }

    fn not_found(&mut self, name: &str) -> Error {
        let known = self.names().unwrap_or_default();
        Error::not_found(format!("no queue `{name}` in the queue database")).hint(
            if known.is_empty() {
                format!("create it: baton queue add {name} ITEM…")
            } else {
                format!(
                    "queues: {}; or create it: baton queue add {name} ITEM…",
                    known.join(", ")
                )
            },
        )
    }

    /// Append `items` (created if missing), all or none, in one transaction; wakes idle workers.
    pub fn add(&mut self, name: &str, items: &[String]) -> Result<Vec<String>> {
        check_additions(name, items)?;
        let mut tx = self.durable()?;
        tx.execute(
            "INSERT INTO baton_queues (name) VALUES ($1) ON CONFLICT DO NOTHING",
            &[&name],
        )
        .map_err(db_err)?;
        // The queue row is locked so two adds to one queue take turns (the case-insensitive
        // duplicate check below then sees the other's items).
        tx.execute(
            "SELECT 1 FROM baton_queues WHERE name = $1 FOR UPDATE",
            &[&name],
        )
        .map_err(db_err)?;
        let lower: Vec<String> = items.iter().map(|i| i.to_ascii_lowercase()).collect();
        if let Some(row) = tx
            .query_opt(
                "SELECT id FROM baton_items WHERE queue = $1 AND lower(id) = ANY($2) ORDER BY pos LIMIT 1",
                &[&name, &lower],
            )
            .map_err(db_err)?
        {
            let stored: String = row.get(0);
            let given = items
                .iter()
                .find(|i| i.eq_ignore_ascii_case(&stored))
                .cloned()
                .unwrap_or_default();
            return Err(Error::state(format!(
                "item `{given}` is already in queue `{name}`{}",
                if stored != given {
                    format!(" (as `{stored}`)")
                } else {
                    String::new()
                }
            ))
            .hint(format!(
                "nothing was added; see the queue with `baton queue show {name}`"
            )));
        }
        for i in items {
            tx.execute(
                "INSERT INTO baton_items (queue, id) VALUES ($1, $2)",
                &[&name, i],
            )
            .map_err(db_err)?;
        }
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &name])
            .map_err(db_err)?;
        tx.commit().map_err(db_err)?;
        self.items(name)
    }

    pub fn names(&mut self) -> Result<Vec<String>> {
        Ok(self
            .client
            .query("SELECT name FROM baton_queues ORDER BY name", &[])
            .map_err(db_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    fn exists(&mut self, name: &str) -> Result<bool> {
        check_name(name)?;
        Ok(self
            .client
            .query_opt("SELECT 1 FROM baton_queues WHERE name = $1", &[&name])
            .map_err(db_err)?
            .is_some())
    }

    pub fn items(&mut self, name: &str) -> Result<Vec<String>> {
        if !self.exists(name)? {
            return Err(self.not_found(name));
        }
        Ok(self
            .client
            .query(
                "SELECT id FROM baton_items WHERE queue = $1 ORDER BY pos",
                &[&name],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// For `item`'s state file, as a one-machine run writes it: the latest complete items and
    /// the next ones not complete yet, at most [`QUEUE_WINDOW`] of each, and how many more.
    pub fn neighbours(&mut self, name: &str, item: &str) -> Result<Neighbours> {
        let row = self
            .client
            .query_one(
                "WITH done AS (SELECT id, pos FROM baton_items
                               WHERE queue = $1 AND status = 'complete'),
                      todo AS (SELECT id, pos FROM baton_items
                               WHERE queue = $1 AND status <> 'complete' AND pos >
                                 (SELECT pos FROM baton_items WHERE queue = $1 AND id = $2))
                 SELECT ARRAY(SELECT id FROM (SELECT id, pos FROM done ORDER BY pos DESC LIMIT $3) d
                              ORDER BY pos),
                        (SELECT count(*) FROM done),
                        ARRAY(SELECT id FROM todo ORDER BY pos LIMIT $3),
                        (SELECT count(*) FROM todo)",
                &[&name, &item, &(QUEUE_WINDOW as i64)],
            )
            .map_err(db_err)?;
        let (completed, done, next, todo): (Vec<String>, i64, Vec<String>, i64) =
            (row.get(0), row.get(1), row.get(2), row.get(3));
        Ok(Neighbours {
            completed_more: (done as usize).saturating_sub(completed.len()),
            completed,
            next_more: (todo as usize).saturating_sub(next.len()),
            next,
        })
    }

    /// Every item with its state, in queue order.
    pub fn states(&mut self, name: &str) -> Result<Vec<(String, Option<State>)>> {
        if !self.exists(name)? {
            return Err(self.not_found(name));
        }
        self.client
            .query(
                "SELECT id, state FROM baton_items WHERE queue = $1 ORDER BY pos",
                &[&name],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| {
                let id: String = r.get(0);
                let st = parse_state(&id, r.get(1))?;
                Ok((id, st))
            })
            .collect()
    }

    pub fn state(&mut self, name: &str, item: &str) -> Result<Option<State>> {
        let row = self
            .client
            .query_opt(
                "SELECT state FROM baton_items WHERE queue = $1 AND id = $2",
                &[&name, &item],
            )
            .map_err(db_err)?;
        match row {
            None => Err(
                Error::not_found(format!("item `{item}` is not in queue `{name}`"))
                    .hint(format!("see its items: baton queue show {name}")),
            ),
            Some(r) => parse_state(item, r.get(0)),
        }
    }

    /// The queue's claims, oldest first, with their lease ages (the database's clock).
    pub fn claims(&mut self, name: &str) -> Result<Vec<Claim>> {
        Ok(self
            .client
            .query(
                "SELECT id, claim_phase, claim_attempt, worker, host,
                        extract(epoch FROM now() - claimed_at)::float8,
                        extract(epoch FROM lease_until - now())::float8
                 FROM baton_items WHERE queue = $1 AND claim_token IS NOT NULL
                 ORDER BY claimed_at",
                &[&name],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| Claim {
                item: r.get(0),
                phase: r.get(1),
                attempt: r.get(2),
                worker: r.get::<_, Option<String>>(3).unwrap_or_default(),
                host: r.get::<_, Option<String>>(4).unwrap_or_default(),
                age_secs: r.get::<_, Option<f64>>(5).unwrap_or(0.0),
                lease_left_secs: r.get::<_, Option<f64>>(6).unwrap_or(0.0),
            })
            .collect())
    }
}

fn parse_state(item: &str, v: Option<serde_json::Value>) -> Result<Option<State>> {
    v.map(|v| {
        serde_json::from_value(v).map_err(|e| {
            Error::state(format!(
                "the queue database holds a state of item `{item}` baton cannot read: {e}"
            ))
            .hint("was it written by another baton version? run the same baton on every machine")
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::default_user;

    #[test]
    fn the_default_user_is_pguser_then_the_login_name() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(
            default_user(env(&[("USER", "ann"), ("PGUSER", "baton")])),
            Some("baton".into())
        );
        assert_eq!(
            default_user(env(&[("PGUSER", ""), ("LOGNAME", "bob")])),
            Some("bob".into())
        );
        assert_eq!(default_user(env(&[])), None);
    }
}

//! The queue database's schema: numbered migrations, applied in order in one transaction under
//! an advisory lock (two workers starting together do not race), each recorded in
//! `baton_schema`. A database migrated by a newer baton is refused, not guessed at.

use postgres::Client;

use super::db_err;
use crate::error::{Error, Result};

/// The advisory lock key of migrations ("baton" in ASCII).
const LOCK_KEY: i64 = 0x0062_6174_6f6e;

/// (version, SQL). Append only: a released migration never changes.
const MIGRATIONS: &[(i32, &str)] = &[(
    1,
    "
CREATE TABLE baton_queues (
    name text PRIMARY KEY,
    created_at timestamptz NOT NULL DEFAULT now()
);
-- One row per item. Its phases run in pipeline order, so an item has at most one claim: the
-- claim columns live on the row and FOR UPDATE SKIP LOCKED hands each item to one worker.
CREATE TABLE baton_items (
    queue text NOT NULL REFERENCES baton_queues (name) ON DELETE CASCADE,
    id text NOT NULL,
    pos bigserial NOT NULL,
    added_at timestamptz NOT NULL DEFAULT now(),
    status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'in-progress', 'complete', 'failed')),
    -- verification-state.json of the item (null until its first phase is recorded)
    state jsonb,
    claim_token bigint,
    claim_phase text,
    -- claims of the item's current phase so far (takeovers count): the phase's attempt number
    claim_attempt integer NOT NULL DEFAULT 0,
    worker text,
    host text,
    -- the claiming worker's run journal on its host (where its agents' markers are)
    run_id text,
    claimed_at timestamptz,
    lease_until timestamptz,
    PRIMARY KEY (queue, id)
);
CREATE UNIQUE INDEX baton_items_id_ci ON baton_items (queue, lower(id));
-- A claim's two probes, each one index step (never a scan over the items claimed so far):
-- an expired lease, oldest first (a takeover goes before new work), else the first unclaimed
-- item by position. lease_until is null exactly when claim_token is.
CREATE INDEX baton_items_expiring ON baton_items (queue, lease_until)
    WHERE status IN ('pending', 'in-progress') AND lease_until IS NOT NULL;
CREATE INDEX baton_items_unclaimed ON baton_items (queue, pos)
    WHERE status IN ('pending', 'in-progress') AND lease_until IS NULL;
CREATE INDEX baton_items_token ON baton_items (claim_token) WHERE claim_token IS NOT NULL;
CREATE SEQUENCE baton_claim_tokens;
-- Every recorded phase outcome. A phase completes once: the unique index refuses a second.
CREATE TABLE baton_outcomes (
    queue text NOT NULL,
    item text NOT NULL,
    phase text NOT NULL,
    claim_token bigint NOT NULL,
    result text NOT NULL CHECK (result IN ('complete', 'failed')),
    reason text,
    attempt integer NOT NULL,
    worker text NOT NULL,
    host text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue, item, phase, claim_token),
    FOREIGN KEY (queue, item) REFERENCES baton_items (queue, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX baton_outcomes_once ON baton_outcomes (queue, item, phase)
    WHERE result = 'complete';
-- The items' phase output files: any worker materializes the inputs of the phase it runs.
CREATE TABLE baton_files (
    queue text NOT NULL,
    item text NOT NULL,
    name text NOT NULL,
    phase text NOT NULL,
    body bytea NOT NULL,
    PRIMARY KEY (queue, item, name),
    FOREIGN KEY (queue, item) REFERENCES baton_items (queue, id) ON DELETE CASCADE
);
",
)];

/// The newest schema version this baton knows.
pub fn latest() -> i32 {
    MIGRATIONS.last().map(|m| m.0).unwrap_or(0)
}

/// Bring the database to [`latest`]; returns the version it was at.
pub fn migrate(client: &mut Client) -> Result<i32> {
    let mut tx = client.transaction().map_err(db_err)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&LOCK_KEY])
        .map_err(db_err)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS baton_schema (
            version integer PRIMARY KEY,
            applied_at timestamptz NOT NULL DEFAULT now()
        )",
    )
    .map_err(db_err)?;
    let at: i32 = tx
        .query_one("SELECT coalesce(max(version), 0) FROM baton_schema", &[])
        .map_err(db_err)?
        .get(0);
    if at > latest() {
        return Err(Error::state(format!(
            "the queue database has schema v{at}, newer than this baton knows (v{})",
            latest()
        ))
        .hint(
            "upgrade baton on this machine: every worker of a database must run the same baton",
        ));
    }
    for (v, sql) in MIGRATIONS.iter().filter(|m| m.0 > at) {
        tx.batch_execute(sql).map_err(db_err)?;
        tx.execute("INSERT INTO baton_schema (version) VALUES ($1)", &[v])
            .map_err(db_err)?;
    }
    tx.commit().map_err(db_err)?;
    Ok(at)
}

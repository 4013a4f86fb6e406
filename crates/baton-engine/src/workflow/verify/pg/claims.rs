//! Claims: how workers share a queue. A claim is one statement (`FOR UPDATE SKIP LOCKED` picks
//! an item whose claim expired, else the first item nobody holds; `UPDATE … RETURNING` takes it); it holds a lease the worker's
//! heartbeat renews. An expired lease makes the item's phase claimable again. A phase's
//! outcome is recorded in the transaction that ends the claim, and only while the claim is
//! still the worker's own (its token): a worker whose phase was taken over records nothing.

use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;

use super::{CHANNEL, Db, db_err, parse_state};
use crate::error::Result;
use crate::workflow::verify::state::State;

/// A claim a worker took.
#[derive(Debug)]
pub struct Claimed {
    pub item: String,
    pub token: i64,
    /// Claims of the item's current phase so far, this one included.
    pub attempt: i32,
    pub state: Option<State>,
    /// Why the stored state could not be read (the item then fails: every worker would).
    pub unreadable: Option<String>,
    /// Whose expired lease this claim took over.
    pub previous: Option<Holder>,
}

/// Who held a claim.
#[derive(Debug, Clone)]
pub struct Holder {
    pub worker: String,
    pub host: String,
    /// Its run journal (`.baton/runs/<id>/` on `host`).
    pub run_id: String,
}

impl Claimed {
    /// `worker@host` whose expired lease this claim took over.
    pub fn took_over(&self) -> Option<String> {
        self.previous
            .as_ref()
            .map(|h| format!("{}@{}", h.worker, h.host))
    }
}

/// How recording a phase's outcome went.
#[derive(Debug, PartialEq, Eq)]
pub enum Recorded {
    Recorded,
    /// The claim was no longer this worker's (its lease expired and another worker took the
    /// phase over): nothing was written.
    Lost {
        holder: Option<String>,
    },
}

/// What ends a claim: the phase's outcome, the item's state after it, its output files.
pub struct Outcome<'a> {
    pub queue: &'a str,
    pub item: &'a str,
    pub token: i64,
    /// None: no phase ran (the pipeline lost the item's remaining phases): the item just ends.
    pub phase: Option<&'a str>,
    pub attempt: i32,
    pub worker: &'a str,
    pub host: &'a str,
    /// `Err(reason)`: the phase failed.
    pub result: std::result::Result<(), &'a str>,
    pub state: &'a State,
    /// (file name, contents) stored for the workers of the next phases.
    pub files: Vec<(String, Vec<u8>)>,
}

/// A finding of `baton doctor --queue`.
#[derive(Debug, serde::Serialize)]
pub struct Stuck {
    pub item: String,
    pub what: String,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl Db {
    /// Take the first item of the queue nobody holds (or whose holder's lease expired).
    pub fn claim(
        &mut self,
        queue: &str,
        (worker, host, run_id): (&str, &str, &str),
        lease: Duration,
    ) -> Result<Option<Claimed>> {
        // One statement; it commits durably (see `Db::connect_within`).
        let row = self
            .client
            .query_opt(
                // Two probes, the second run only when the first finds nothing (a CTE is
                // read as far as the outer query asks), so only the taken row is locked.
                "WITH expired AS (
                    SELECT queue, id, worker AS prev_worker, host AS prev_host,
                           run_id AS prev_run, claim_token AS prev_token
                    FROM baton_items
                    WHERE queue = $1 AND status IN ('pending', 'in-progress')
                      AND lease_until < now()
                    ORDER BY lease_until
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED),
                 unclaimed AS (
                    SELECT queue, id, NULL::text, NULL::text, NULL::text, NULL::bigint
                    FROM baton_items
                    WHERE queue = $1 AND status IN ('pending', 'in-progress')
                      AND lease_until IS NULL
                    ORDER BY pos
                    LIMIT 1
                    FOR UPDATE SKIP LOCKED),
                 next AS (SELECT * FROM expired UNION ALL SELECT * FROM unclaimed LIMIT 1)
                 UPDATE baton_items i
                 SET claim_token = nextval('baton_claim_tokens'),
                     claim_attempt = i.claim_attempt + 1,
                     claim_phase = NULL,
                     worker = $2, host = $3, run_id = $5, claimed_at = now(),
                     lease_until = now() + make_interval(secs => $4),
                     status = 'in-progress'
                 FROM next
                 WHERE i.queue = next.queue AND i.id = next.id
                 RETURNING i.id, i.claim_token, i.claim_attempt, i.state,
                           next.prev_worker, next.prev_host, next.prev_token, next.prev_run",
                &[&queue, &worker, &host, &secs(lease), &run_id],
            )
            .map_err(db_err)?;
        let Some(r) = row else { return Ok(None) };
        let item: String = r.get(0);
        // Not an error of this claim: it is committed, and the item must fail, not the worker.
        let (state, unreadable) = match parse_state(&item, r.get(3)) {
            Ok(s) => (s, None),
            Err(e) => (None, Some(e.to_string())),
        };
        let prev_token: Option<i64> = r.get(6);
        Ok(Some(Claimed {
            previous: prev_token.map(|_| Holder {
                worker: r.get::<_, Option<String>>(4).unwrap_or_default(),
                host: r.get::<_, Option<String>>(5).unwrap_or_default(),
                run_id: r.get::<_, Option<String>>(7).unwrap_or_default(),
            }),
            item,
            token: r.get(1),
            attempt: r.get(2),
            state,
            unreadable,
        }))
    }

    /// Name the phase a claim runs (shown by `queue show`); false when the claim is gone.
    pub fn set_phase(&mut self, token: i64, phase: &str) -> Result<bool> {
        Ok(self
            .client
            .execute(
                "UPDATE baton_items SET claim_phase = $2 WHERE claim_token = $1",
                &[&token, &phase],
            )
            .map_err(db_err)?
            == 1)
    }

    /// Renew the leases of `tokens`; returns the tokens still held.
    pub fn heartbeat(&mut self, tokens: &[i64], lease: Duration) -> Result<Vec<i64>> {
        Ok(self
            .client
            .query(
                "UPDATE baton_items SET lease_until = now() + make_interval(secs => $2)
                 WHERE claim_token = ANY($1) RETURNING claim_token",
                &[&tokens, &secs(lease)],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| r.get(0))
            .collect())
    }

    /// The stored files of an item named in `names`.
    pub fn files(
        &mut self,
        queue: &str,
        item: &str,
        names: &[String],
    ) -> Result<Vec<(String, Vec<u8>)>> {
        Ok(self
            .client
            .query(
                "SELECT name, body FROM baton_files
                 WHERE queue = $1 AND item = $2 AND name = ANY($3) ORDER BY name",
                &[&queue, &item, &names],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect())
    }

    /// Record a phase's outcome, the item's state and files, and end the claim, in one
    /// transaction that first checks the claim is still `token`'s.
    pub fn record(&mut self, o: &Outcome) -> Result<Recorded> {
        let mut tx = self.durable()?;
        let held = tx
            .query_opt(
                "SELECT 1 FROM baton_items WHERE queue = $1 AND id = $2 AND claim_token = $3
                 FOR UPDATE",
                &[&o.queue, &o.item, &o.token],
            )
            .map_err(db_err)?
            .is_some();
        if !held {
            // A record run again after its commit was not acknowledged (the connection broke;
            // see `verify::link`) finds its own outcome: recorded, not lost.
            if o.phase.is_some()
                && tx
                    .query_opt(
                        "SELECT 1 FROM baton_outcomes WHERE queue = $1 AND item = $2
                           AND claim_token = $3",
                        &[&o.queue, &o.item, &o.token],
                    )
                    .map_err(db_err)?
                    .is_some()
            {
                return Ok(Recorded::Recorded);
            }
            let holder = tx
                .query_opt(
                    "SELECT worker || '@' || host FROM baton_items
                     WHERE queue = $1 AND id = $2 AND claim_token IS NOT NULL",
                    &[&o.queue, &o.item],
                )
                .map_err(db_err)?
                .and_then(|r| r.get(0));
            return Ok(Recorded::Lost { holder });
        }
        let (result, reason) = match o.result {
            Ok(()) => ("complete", None),
            Err(r) => ("failed", Some(r)),
        };
        if let Some(phase) = o.phase {
            tx.execute(
                "INSERT INTO baton_outcomes
                     (queue, item, phase, claim_token, result, reason, attempt, worker, host)
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                &[
                    &o.queue, &o.item, &phase, &o.token, &result, &reason, &o.attempt, &o.worker,
                    &o.host,
                ],
            )
            .map_err(db_err)?;
        }
        for (name, body) in &o.files {
            tx.execute(
                "INSERT INTO baton_files (queue, item, name, phase, body)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (queue, item, name)
                 DO UPDATE SET phase = excluded.phase, body = excluded.body",
                &[&o.queue, &o.item, name, &o.phase.unwrap_or("-"), body],
            )
            .map_err(db_err)?;
        }
        let state =
            serde_json::to_value(o.state).map_err(|e| crate::Error::internal(e.to_string()))?;
        // The items table knows an item as pending, in progress, or where it ended.
        let status = if o.state.status.is_final() {
            o.state.status.as_str()
        } else {
            "in-progress"
        };
        tx.execute(
            "UPDATE baton_items
             SET state = $3, status = $4, claim_token = NULL, claim_phase = NULL,
                 claim_attempt = 0, worker = NULL, host = NULL, run_id = NULL,
                 claimed_at = NULL, lease_until = NULL
             WHERE queue = $1 AND id = $2",
            &[&o.queue, &o.item, &state, &status],
        )
        .map_err(db_err)?;
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &o.queue])
            .map_err(db_err)?;
        tx.commit().map_err(db_err)?;
        Ok(Recorded::Recorded)
    }

    /// Give a claim back unfinished (Ctrl-C, an error): the phase is claimable at once. The
    /// attempt count stays, so the next claim is the phase's next attempt.
    pub fn release(&mut self, queue: &str, token: i64) -> Result<()> {
        self.client
            .execute(
                "UPDATE baton_items SET claim_token = NULL, claim_phase = NULL, worker = NULL,
                     host = NULL, run_id = NULL, claimed_at = NULL, lease_until = NULL
                 WHERE claim_token = $1",
                &[&token],
            )
            .map_err(db_err)?;
        self.client
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &queue])
            .map_err(db_err)?;
        Ok(())
    }

    /// Put failed items (`items`, or all of them when empty) back in the queue: the next claim
    /// runs each from its failed phase, as that phase's next attempt. All or nothing: an item
    /// that is not failed is an error and nothing changes. Returns the ids.
    pub fn retry(&mut self, queue: &str, items: &[String]) -> Result<Vec<String>> {
        for i in items {
            super::super::queue::check_item(i)?;
        }
        let lower: Vec<String> = items.iter().map(|i| i.to_ascii_lowercase()).collect();
        let mut tx = self.durable()?;
        let ids: Vec<String> = tx
            .query(
                // The stored state says so too (what `queue show` and `status` read): back
                // in progress, its failure gone; the failed phase runs again when claimed.
                "UPDATE baton_items SET status = 'in-progress',
                     state = jsonb_set(state, '{status}', to_jsonb('in-progress'::text)) - 'failure'
                 WHERE queue = $1 AND status = 'failed'
                   AND (cardinality($2::text[]) = 0 OR lower(id) = ANY($2))
                 RETURNING id",
                &[&queue, &lower],
            )
            .map_err(db_err)?
            .iter()
            .map(|r| r.get(0))
            .collect();
        if let Some(missing) = items
            .iter()
            .find(|i| !ids.iter().any(|d| d.eq_ignore_ascii_case(i)))
        {
            return Err(crate::Error::state(format!(
                "item `{missing}` of queue `{queue}` is not failed (or not in the queue)"
            ))
            .hint(format!(
                "nothing was retried; see the queue: baton queue show {queue}"
            )));
        }
        tx.execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &queue])
            .map_err(db_err)?;
        tx.commit().map_err(db_err)?;
        Ok(ids)
    }

    /// Items neither complete nor failed.
    pub fn unfinished(&mut self, queue: &str) -> Result<i64> {
        Ok(self
            .client
            .query_one(
                "SELECT count(*) FROM baton_items
                 WHERE queue = $1 AND status IN ('pending', 'in-progress')",
                &[&queue],
            )
            .map_err(db_err)?
            .get(0))
    }

    /// Hear `queue add` and recorded phases (see [`Db::wait`]).
    pub fn listen(&mut self) -> Result<()> {
        self.client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(db_err)
    }

    /// Wait up to `timeout` for a notification; true when one came (all pending are drained).
    pub fn wait(&mut self, timeout: Duration) -> Result<bool> {
        let mut n = self.client.notifications();
        let got = n.timeout_iter(timeout).next().map_err(db_err)?;
        while n.iter().next().map_err(db_err)?.is_some() {}
        Ok(got.is_some())
    }

    /// Stuck leases and orphaned rows of a queue (`baton doctor --queue`). `phases`: the
    /// pipeline's phase ids.
    pub fn stuck(&mut self, queue: &str, phases: &[String]) -> Result<Vec<Stuck>> {
        let mut out = Vec::new();
        for r in self
            .client
            .query(
                "SELECT id, coalesce(claim_phase, '?'), worker || '@' || host,
                        extract(epoch FROM now() - lease_until)::float8, status
                 FROM baton_items
                 WHERE queue = $1 AND claim_token IS NOT NULL
                   AND (lease_until < now() OR status NOT IN ('pending', 'in-progress'))
                 ORDER BY pos",
                &[&queue],
            )
            .map_err(db_err)?
        {
            let status: String = r.get(4);
            let (item, phase, who): (String, String, String) = (r.get(0), r.get(1), r.get(2));
            out.push(Stuck {
                item,
                what: if status == "complete" || status == "failed" {
                    format!("orphaned claim by {who} on a {status} item (phase {phase})")
                } else {
                    format!(
                        "stuck lease: phase {phase} claimed by {who}, expired {:.0}s ago (the next worker to claim takes it over)",
                        r.get::<_, f64>(3)
                    )
                },
            });
        }
        for r in self
            .client
            .query(
                "SELECT item, name, phase FROM baton_files
                 WHERE queue = $1 AND NOT (phase = ANY($2)) ORDER BY item, name",
                &[&queue, &phases],
            )
            .map_err(db_err)?
        {
            out.push(Stuck {
                item: r.get(0),
                what: format!(
                    "orphaned file {} of phase {}, which the pipeline no longer has",
                    r.get::<_, String>(1),
                    r.get::<_, String>(2)
                ),
            });
        }
        for r in self
            .client
            .query(
                "SELECT o.item, o.phase FROM baton_outcomes o
                 JOIN baton_items i ON i.queue = o.queue AND i.id = o.item
                 WHERE o.queue = $1 AND o.result = 'complete'
                   AND o.phase = ANY($2)
                   AND coalesce(i.state -> 'phases' -> o.phase ->> 'status', '') <> 'complete'
                 ORDER BY o.item, o.phase",
                // A phase the pipeline dropped since is gone from the state, rightly.
                &[&queue, &phases],
            )
            .map_err(db_err)?
        {
            out.push(Stuck {
                item: r.get(0),
                what: format!(
                    "orphaned outcome: phase {} recorded complete, but the item's state does not say so",
                    r.get::<_, String>(1)
                ),
            });
        }
        Ok(out)
    }
}

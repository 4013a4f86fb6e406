//! A worker's connection to the queue database that outlives the connection: a statement that
//! fails because the connection broke (a server restart, `pg_terminate_backend`, a failover,
//! an idle-connection killer) is run again on a new connection, after a backoff with jitter,
//! until the database has been unreachable for the worker's patience (`[queue]
//! unreachable_secs`). A statement the server refused on a live connection is an error as
//! before.
//!
//! Running a statement again is safe for every statement a worker makes: reads; a claim whose
//! answer was lost only holds its phase until the lease runs out (then it is taken over, no
//! agent having run); renewals, `set_phase` and releases set what they set; and a record
//! whose commit was not acknowledged finds its own outcome and reports it recorded
//! ([`Db::record`]).

use std::time::{Duration, Instant};

use super::pg::Db;
use crate::error::{Error, Result};

/// The first wait before reconnecting; doubled per failure up to [`MAX_DELAY`].
const FIRST_DELAY: Duration = Duration::from_millis(100);
const MAX_DELAY: Duration = Duration::from_secs(5);

/// A connection that reconnects (see the module doc).
pub struct Link<'a> {
    url: &'a str,
    /// Connections are made with this bound (a heartbeat's must answer within a beat).
    bound: Option<Duration>,
    db: Option<Db>,
    /// LISTEN again on every new connection.
    listening: bool,
    patience: Duration,
    /// Named in what the worker says.
    who: String,
}

impl<'a> Link<'a> {
    /// A link over `db` (a connection already made), or one made on first use.
    pub fn new(url: &'a str, db: Option<Db>, patience: Duration, who: &str) -> Link<'a> {
        Link {
            url,
            bound: None,
            db,
            listening: false,
            patience,
            who: who.to_string(),
        }
    }

    /// Connections made within `bound` (see [`Db::connect_within`]).
    pub fn bounded(mut self, bound: Duration) -> Link<'a> {
        self.bound = Some(bound);
        self
    }

    /// Receive `queue add`'s and recorded phases' notifications, on this connection and
    /// every later one.
    pub fn listen(&mut self) -> Result<()> {
        self.listening = true;
        self.run(Db::listen)
    }

    /// Run `op` on the connection; again on a new one when the connection broke, until the
    /// database has been unreachable for the patience.
    pub fn run<T>(&mut self, mut op: impl FnMut(&mut Db) -> Result<T>) -> Result<T> {
        let mut down: Option<(Instant, Duration)> = None;
        loop {
            let failed = match self.connected() {
                Ok(db) => match op(db) {
                    Ok(v) => {
                        if down.is_some() {
                            baton_core::notice::said(format!(
                                "{}: reconnected to the queue database",
                                self.who
                            ));
                        }
                        return Ok(v);
                    }
                    Err(e) if broken(db) => {
                        self.db = None;
                        e
                    }
                    Err(e) => return Err(e),
                },
                Err(e) => e,
            };
            let (since, delay) = *down.get_or_insert_with(|| {
                baton_core::notice::said(format!(
                    "{}: lost the queue database ({failed}); reconnecting for up to {} s",
                    self.who,
                    self.patience.as_secs()
                ));
                (Instant::now(), FIRST_DELAY)
            });
            if since.elapsed() >= self.patience {
                return Err(gave_up(&self.who, self.patience, &failed));
            }
            if let Some(sig) = crate::interrupt::received() {
                return Err(Error::Interrupted {
                    signal: sig,
                    name: crate::interrupt::name(sig),
                    hint: None,
                });
            }
            std::thread::sleep(jittered(delay).min(self.patience.saturating_sub(since.elapsed())));
            down = Some((since, (delay * 2).min(MAX_DELAY)));
        }
    }

    fn connected(&mut self) -> Result<&mut Db> {
        if self.db.is_none() {
            let mut db = Db::connect_within(self.url, self.bound)?;
            if self.listening {
                db.listen()?;
            }
            self.db = Some(db);
        }
        Ok(self.db.as_mut().expect("connected above"))
    }
}

/// The worker stops: the database stayed unreachable for its patience.
pub(super) fn gave_up(who: &str, patience: Duration, last: &Error) -> Error {
    Error::state(format!(
        "{who}: the queue database was unreachable for {} s (last: {last}); the worker stops",
        patience.as_secs()
    ))
    .hint(
        "its claims go back to the queue when their leases run out; start the worker again once the database answers (the wait is [queue] unreachable_secs, or --unreachable; the heartbeat waits at least one lease)",
    )
}

/// After a failed statement: is the connection itself gone (closed, or not answering a ping
/// within a second)? A statement the server refused leaves it usable.
fn broken(db: &mut Db) -> bool {
    db.client.is_closed() || db.client.is_valid(Duration::from_secs(1)).is_err()
}

/// `d` give or take a quarter, so that workers cut off together do not reconnect in step.
fn jittered(d: Duration) -> Duration {
    // The clock's nanoseconds are random enough to spread a few workers.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|t| t.subsec_nanos())
        .unwrap_or(0);
    let spread = (nanos % 1000) as f64 / 1000.0; // 0..1
    d.mul_f64(0.75 + spread * 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_within_a_quarter() {
        for _ in 0..100 {
            let j = jittered(Duration::from_millis(400));
            assert!(
                j >= Duration::from_millis(300) && j <= Duration::from_millis(500),
                "{j:?}"
            );
        }
    }

    #[test]
    fn an_unreachable_database_is_given_up_after_the_patience_with_what_to_do() {
        // A port nothing listens on: every connection is refused at once.
        let url = "host=127.0.0.1 port=1 user=baton dbname=baton connect_timeout=1";
        let mut link = Link::new(url, None, Duration::from_secs(1), "w1");
        let t = Instant::now();
        let err = link.run(|db| db.unfinished("q")).unwrap_err();
        let waited = t.elapsed();
        assert!(waited >= Duration::from_secs(1), "{waited:?}");
        assert!(waited < Duration::from_secs(6), "{waited:?}");
        let msg = err.to_string();
        assert!(
            msg.contains("w1: the queue database was unreachable for 1 s"),
            "{msg}"
        );
        assert!(msg.contains("w1"), "{msg}");
        assert!(
            matches!(&err, Error::Fault(baton_core::Error::State { hint: Some(h), .. }) if h.contains("unreachable_secs")),
            "{err:?}"
        );
    }
}

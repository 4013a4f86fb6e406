//! Workers that survive the database: the PostgreSQL server restarted (stopped at once, as a
//! crash or a failover does), every backend terminated, the server frozen — under three
//! workers draining 200 items × 5 phases. No worker exits, every phase is recorded once.
//! And a database that stays away stops a worker after its patience, saying so.

use std::io::Read;
use std::process::Child;
use std::time::{Duration, Instant};

use baton_engine::workflow::verify::pg::Db;

use super::queue_pg::pg_project;
use super::queue_pg_workers::{assert_exactly_once, wait_ok, worker, worker_with};
use crate::util::pg;

/// Recorded outcomes so far, on a fresh connection (the server may have restarted since).
fn recorded(url: &str) -> Option<i64> {
    let mut c = postgres::Client::connect(url, postgres::NoTls).ok()?;
    c.query_one("SELECT count(*) FROM baton_outcomes", &[])
        .ok()
        .map(|r| r.get(0))
}

/// Wait until `n` outcomes are recorded (or the deadline).
fn wait_recorded(url: &str, n: i64, deadline: Instant) {
    while recorded(url).is_none_or(|k| k < n) {
        assert!(
            Instant::now() < deadline,
            "fewer than {n} phases recorded in time"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// End every connection baton holds (as `pg_terminate_backend` or an idle-connection killer
/// does); how many.
fn terminate_backends(admin_url: &str) -> i64 {
    let mut c = postgres::Client::connect(admin_url, postgres::NoTls).unwrap();
    c.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE application_name = 'baton' AND pid <> pg_backend_pid()",
        &[],
    )
    .unwrap()
    .len() as i64
}

fn stderr_of(c: &mut Child) -> String {
    let mut err = String::new();
    c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    err
}

#[test]
fn three_workers_outlive_restarts_terminated_backends_and_a_frozen_server() {
    let Some(server) = pg::private("queue_pg_faults::three_workers_outlive") else {
        return;
    };
    let s = &server.0;
    let url = s.database();
    let admin = s.url("postgres");
    let p = pg_project();
    let ids: Vec<String> = (0..200).map(|i| format!("F{i:03}")).collect();
    Db::connect(&url).unwrap().add("q", &ids).unwrap();
    let names = ["w1", "w2", "w3"];
    // A lease longer than each outage: claims outlive them; one whose answer was lost in a
    // cut comes back after it.
    let workers: Vec<Child> = names.iter().map(|n| worker(&p, &url, n, 6)).collect();
    let deadline = Instant::now() + Duration::from_secs(400);
    let total = 200 * 5;

    wait_recorded(&url, total / 10, deadline);
    assert!(terminate_backends(&admin) >= 3, "the workers' connections");
    wait_recorded(&url, total * 3 / 10, deadline);
    s.restart();
    wait_recorded(&url, total / 2, deadline);
    s.paused(|| std::thread::sleep(Duration::from_secs(2)));
    wait_recorded(&url, total * 7 / 10, deadline);
    terminate_backends(&admin);
    s.restart();
    terminate_backends(&admin);

    let mut reconnected = 0;
    for (c, n) in workers.into_iter().zip(names) {
        let err = wait_ok(c, n, deadline);
        assert!(!err.contains("the worker stops"), "{n}: {err}");
        if err.contains(&format!("{n}: reconnected to the queue database")) {
            reconnected += 1;
        }
    }
    assert_eq!(
        reconnected, 3,
        "every worker lost its connection and came back"
    );
    let mut db = Db::connect(&url).unwrap();
    assert_exactly_once(&mut db, 200);
    // Every phase's recorded result is in the workers' logs once (a result dropped because
    // the restart lost its claim is logged as dropped, and the phase ran again).
    let mut complete = 0;
    for n in names {
        let log = std::fs::read_to_string(p.path().join(format!("{n}.log"))).unwrap();
        complete += log.lines().filter(|l| l.contains(": complete in ")).count();
    }
    assert_eq!(complete, total as usize);
}

#[test]
fn a_database_that_stays_away_stops_the_worker_after_its_patience() {
    let Some(server) = pg::private("queue_pg_faults::a_database_that_stays_away") else {
        return;
    };
    let s = &server.0;
    let url = s.database();
    let p = pg_project();
    p.write(".baton/sim.toml", "latency_ms = 200\n");
    let ids: Vec<String> = (0..50).map(|i| format!("G{i:02}")).collect();
    Db::connect(&url).unwrap().add("q", &ids).unwrap();
    let mut w1 = worker_with(&p, &url, "w1", 2, &["--unreachable", "3"]);
    wait_recorded(&url, 3, Instant::now() + Duration::from_secs(60));
    s.stop();
    let t0 = Instant::now();
    let st = w1.wait().unwrap();
    let waited = t0.elapsed();
    let err = stderr_of(&mut w1);
    assert_eq!(st.code(), Some(3), "{err}");
    assert!(waited >= Duration::from_secs(3), "{waited:?}: {err}");
    assert!(waited < Duration::from_secs(30), "{waited:?}: {err}");
    assert!(err.contains("w1: lost the queue database"), "{err}");
    assert!(
        err.contains("the queue database was unreachable for 3 s")
            && err.contains("the worker stops"),
        "{err}"
    );
    assert!(err.contains("unreachable_secs"), "{err}");
}

/// Stopped (Ctrl-C) while the database is away, a worker cannot give its claim back: it says
/// so, naming the item and the lease, instead of saying it released its claims. With the
/// database back, another worker takes the phase over after the lease, and it is recorded once.
#[test]
fn a_worker_stopped_while_the_database_is_away_says_its_claim_waits_for_the_lease() {
    let Some(server) = pg::private("queue_pg_faults::a_worker_stopped_while") else {
        return;
    };
    let s = &server.0;
    let url = s.database();
    let p = pg_project();
    p.write(".baton/sim.toml", "latency_ms = 3000\n");
    let mut db = Db::connect(&url).unwrap();
    db.add("q", &["A".into()]).unwrap();
    let mut w1 = worker_with(&p, &url, "w1", 4, &[]);
    let t0 = Instant::now();
    while !db.claims("q").unwrap().iter().any(|c| c.phase.is_some()) {
        assert!(t0.elapsed() < Duration::from_secs(20), "no claim");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (st, err) = s.down(|| {
        std::thread::sleep(Duration::from_millis(300));
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(w1.id() as i32, libc::SIGINT) };
        let st = w1.wait().unwrap();
        (st, stderr_of(&mut w1))
    });
    assert_eq!(st.code(), Some(130), "{err}");
    assert!(
        err.contains("its claim on A could not be released (the queue database is away)")
            && err.contains("within 4 s"),
        "{err}"
    );
    assert!(!err.contains("released its claims"), "{err}");
    p.write(".baton/sim.toml", "");
    let w2 = worker_with(&p, &url, "w2", 4, &[]);
    wait_ok(w2, "w2", Instant::now() + Duration::from_secs(120));
    assert_exactly_once(&mut Db::connect(&url).unwrap(), 1);
}

//! The postgres queue backend against a real server (`util::pg`): claims, leases and the
//! exactly-once record through the library; `queue add/show/list`, `state show`, `worker` and
//! `doctor --queue` through the binary. The many-worker and kill -9 runs are in
//! `queue_pg_workers.rs`.

use std::time::Duration;

use baton_engine::workflow::verify::pg::{Db, Outcome, Recorded};
use baton_engine::workflow::verify::state::{Neighbours, Progress, State};

use crate::util::{Proj, pg};

/// A project whose queues are in PostgreSQL (the URL comes from the environment), with a 2 s
/// lease.
pub fn pg_project() -> Proj {
    let p = Proj::new();
    p.write(
        "baton.toml",
        "[queue]\nbackend = \"postgres\"\nlease_secs = 2\n",
    );
    p.write(".baton/sim.toml", "");
    p
}

fn outcome<'a>(token: i64, state: &'a State, files: Vec<(String, Vec<u8>)>) -> Outcome<'a> {
    Outcome {
        queue: "q",
        item: "A",
        token,
        phase: Some("1a"),
        attempt: 1,
        worker: "w",
        host: "h",
        result: Ok(()),
        state,
        files,
    }
}

#[test]
fn an_expired_lease_is_taken_over_and_the_late_worker_records_nothing() {
    let Some(s) = pg::server("queue_pg::an_expired_lease_is_taken_over") else {
        return;
    };
    let url = s.database();
    let (mut a, mut b) = (Db::connect(&url).unwrap(), Db::connect(&url).unwrap());
    a.add("q", &["A".into(), "B".into()]).unwrap();
    let short = Duration::from_secs(1);
    let long = Duration::from_secs(60);
    let ca = a.claim("q", ("wa", "ha", "r1"), short).unwrap().unwrap();
    assert_eq!(
        (ca.item.as_str(), ca.attempt, ca.took_over()),
        ("A", 1, None::<String>)
    );
    // A is held: the next claimer skips it.
    let cb = b.claim("q", ("wb", "hb", "r2"), long).unwrap().unwrap();
    assert_eq!(cb.item, "B");
    assert!(b.claim("q", ("wb", "hb", "r2"), long).unwrap().is_none());
    // wa stops renewing; after the lease, A is claimable again: a takeover, attempt 2.
    std::thread::sleep(Duration::from_millis(1300));
    let over = b.claim("q", ("wb", "hb", "r2"), long).unwrap().unwrap();
    assert_eq!(
        (over.item.as_str(), over.attempt, over.took_over()),
        ("A", 2, Some("wa@ha".to_string()))
    );
    assert_eq!(a.heartbeat(&[ca.token], long).unwrap(), Vec::<i64>::new());
    let st = State {
        item: "A".into(),
        status: Progress::InProgress,
        ..State::default()
    };
    // The late worker's result is dropped, naming who holds the phase now.
    let late = a.record(&outcome(
        ca.token,
        &st,
        vec![("a-late.md".into(), b"late".to_vec())],
    ));
    assert_eq!(
        late.unwrap(),
        Recorded::Lost {
            holder: Some("wb@hb".into())
        }
    );
    let body = b"# A 1a\n".to_vec();
    let ok = b.record(&outcome(
        over.token,
        &st,
        vec![("a-gt.md".into(), body.clone())],
    ));
    assert_eq!(ok.unwrap(), Recorded::Recorded);
    // Recording again with one claim (a retry after a commit whose answer the connection
    // lost) finds its own outcome: recorded, and nothing is written twice.
    let again = b.record(&outcome(
        over.token,
        &st,
        vec![("a-twice.md".into(), b"x".to_vec())],
    ));
    assert_eq!(again.unwrap(), Recorded::Recorded);
    let n: i64 = b
        .client
        .query_one("SELECT count(*) FROM baton_outcomes", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
    let names = vec![
        "a-gt.md".to_string(),
        "a-late.md".to_string(),
        "a-twice.md".to_string(),
    ];
    assert_eq!(
        b.files("q", "A", &names).unwrap(),
        vec![("a-gt.md".to_string(), body)]
    );
    // A's state is the recorded one; its claim is gone, B's is still there.
    assert_eq!(
        b.state("q", "A").unwrap().unwrap().status,
        Progress::InProgress
    );
    let claims = b.claims("q").unwrap();
    assert_eq!(claims.len(), 1);
    assert_eq!(
        (claims[0].item.as_str(), claims[0].worker.as_str()),
        ("B", "wb")
    );
}

#[test]
fn workers_starting_together_migrate_once_and_a_newer_schema_is_refused() {
    let Some(s) = pg::server("queue_pg::workers_starting_together_migrate_once") else {
        return;
    };
    let url = s.database();
    let ok: Vec<bool> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|_| sc.spawn(|| Db::connect(&url).is_ok()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(ok, vec![true; 4]);
    let mut db = Db::connect(&url).unwrap();
    let rows: Vec<i32> = db
        .client
        .query("SELECT version FROM baton_schema", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(rows, vec![1]);
    db.client
        .batch_execute("INSERT INTO baton_schema (version) VALUES (99)")
        .unwrap();
    let p = pg_project();
    p.test()
        .args(["queue", "list"])
        .env("BATON_DATABASE_URL", &url)
        .status(3)
        .stderr_contains("the queue database has schema v99, newer than this baton knows (v1)")
        .stderr_contains("upgrade baton on this machine")
        .run();
}

#[test]
fn a_url_without_a_user_connects_as_pguser_or_the_login_name() {
    let Some(s) = pg::server("queue_pg::a_url_without_a_user") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    // The server knows the role `postgres` only; the URL names no user.
    let no_user = url.replace("user=postgres ", "");
    assert_ne!(no_user, url);
    p.test()
        .args(["queue", "add", "q", "A"])
        .env("BATON_DATABASE_URL", &no_user)
        .env("PGUSER", "postgres")
        .env("USER", "nobody-here")
        .stdout_contains("queue q: added A")
        .run();
    p.test()
        .args(["queue", "list"])
        .env("BATON_DATABASE_URL", &no_user)
        .env("PGUSER", "")
        .env("USER", "postgres")
        .stdout_contains("q                1 items: 0 complete, 0 failed, 1 pending")
        .run();
    // A user the server does not know is refused, by name: the environment was read.
    p.test()
        .args(["queue", "list"])
        .env("BATON_DATABASE_URL", &no_user)
        .env("PGUSER", "nobody-here")
        .status(3)
        .stderr_contains("nobody-here")
        .run();
}

/// A heartbeat's connection (`connect_within`) fails a statement that outlasts its bound
/// instead of waiting on it.
#[test]
fn a_bounded_connection_fails_a_statement_that_outlasts_the_bound() {
    let Some(s) = pg::server("queue_pg::a_bounded_connection") else {
        return;
    };
    let url = s.database();
    let mut db = Db::connect_within(&url, Some(Duration::from_millis(300))).unwrap();
    let t = std::time::Instant::now();
    let err = db.client.batch_execute("SELECT pg_sleep(5)").unwrap_err();
    assert!(t.elapsed() < Duration::from_secs(3), "{:?}", t.elapsed());
    assert_eq!(
        err.as_db_error().map(|d| d.message()),
        Some("canceling statement due to statement timeout"),
        "{err:?}"
    );
    // Unbounded, the same statement is waited for.
    let mut db = Db::connect(&url).unwrap();
    db.client.batch_execute("SELECT pg_sleep(0.5)").unwrap();
}

#[test]
fn an_items_neighbours_are_twenty_on_each_side_and_the_counts_of_the_rest() {
    let Some(s) = pg::server("queue_pg::an_items_neighbours") else {
        return;
    };
    let mut db = Db::connect(&s.database()).unwrap();
    let ids: Vec<String> = (0..50).map(|i| format!("ITEM{i:03}")).collect();
    db.add("q", &ids).unwrap();
    // The first 29 and ITEM035 complete; ITEM029 is the one claimed.
    db.client
        .execute(
            "UPDATE baton_items SET status = 'complete' WHERE queue = 'q' AND (id < 'ITEM029' OR id = 'ITEM035')",
            &[],
        )
        .unwrap();
    let mut done: Vec<String> = ids[..29].to_vec();
    done.push("ITEM035".into());
    let todo: Vec<String> = ids[30..]
        .iter()
        .filter(|i| *i != "ITEM035")
        .cloned()
        .collect();
    let got = db.neighbours("q", "ITEM029").unwrap();
    // As a one-machine run computes them from the same statuses.
    assert_eq!(got, Neighbours::of(done, todo));
    assert_eq!((got.completed.len(), got.completed_more), (20, 10));
    assert_eq!(got.completed.last().unwrap(), "ITEM035");
    assert_eq!((got.next.len(), got.next_more), (19, 0));
    assert_eq!(got.next[0], "ITEM030");
}

#[test]
fn queue_commands_state_worker_and_doctor_on_postgres() {
    let Some(s) = pg::server("queue_pg::queue_commands_state_worker_and_doctor_on_postgres") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    let t = || p.test().env("BATON_DATABASE_URL", &url);
    t().args(["queue", "add", "q", "BMNR", "MARA"])
        .stdout("queue q: added BMNR, MARA (2 items now)\nrun it: baton worker --queue q\n")
        .run();
    t().args(["queue", "add", "q", "XXI", "bmnr"])
        .status(3)
        .stderr_contains("item `bmnr` is already in queue `q` (as `BMNR`)")
        .run();
    t().args(["queue", "show", "q"])
        .stdout(
            "queue q: 2 items — 0 complete, 0 failed, 0 in progress, 2 pending\n  \
BMNR         pending\n  MARA         pending\nnext: 2 pending — start with: baton worker --queue q\n",
        )
        .run();
    t().args(["queue", "show", "nope"])
        .status(4)
        .stderr_contains("no queue `nope` in the queue database")
        .stderr_contains("queues: q")
        .run();
    t().args(["state", "show", "bmnr"])
        .stdout("BMNR (queue q): pending, no phase run yet\nstart with: baton worker --queue q\n")
        .run();
    // One machine's run does not work a database queue; a file project has no workers.
    t().args(["run", "verify", "--queue", "q", "--agent", "sim"])
        .status(2)
        .stderr_contains("workers drain them, not `baton run verify`")
        .stderr_contains("baton worker --queue q")
        .run();
    Proj::new()
        .test()
        .args(["worker", "--queue", "q", "--agent", "sim"])
        .status(2)
        .stderr_contains("this project keeps its queues in files")
        .run();
    // No URL, a server that is not there: clear errors, exit codes 2 and 3.
    p.test()
        .args(["queue", "list"])
        .env("BATON_DATABASE_URL", "")
        .status(2)
        .stderr_contains("no database URL")
        .stderr_contains("BATON_DATABASE_URL")
        .run();
    p.test()
        .args(["queue", "list"])
        .env(
            "BATON_DATABASE_URL",
            "host=/nonexistent/dir dbname=x user=x",
        )
        .status(3)
        .stderr_contains("cannot connect to the queue database")
        .run();
    // A worker drains the queue: one log line per claim, 2 items × 5 phases.
    let ran = t()
        .args([
            "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
        ])
        .stdout_regex(r"(?m)^w1 BMNR 1a #1: complete in \d+\.\ds$")
        .stdout_regex(r"(?m)^w1 MARA 5 #1: complete in \d+\.\ds$")
        .stdout_contains(
            "worker w1: 10 claims — 10 complete, 0 failed, 0 dropped · 10 agent calls\n",
        )
        .run();
    assert_eq!(ran.stdout.lines().count(), 11, "{}", ran.stdout);
    t().args(["queue", "show", "q"])
        .stdout(
            "queue q: 2 items — 2 complete, 0 failed, 0 in progress, 0 pending\n  \
BMNR         complete\n  MARA         complete\nnext: all complete\n",
        )
        .run();
    t().args(["queue", "list"])
        .stdout("q                2 items: 2 complete, 0 failed, 0 pending  — all complete\n")
        .run();
    let st = t().args(["state", "show", "MARA"]).any_stdout().run();
    assert!(
        st.stdout.starts_with("MARA (queue q): complete"),
        "{}",
        st.stdout
    );
    assert!(
        st.stdout
            .contains("state: in the queue database (baton_items)"),
        "{}",
        st.stdout
    );
    assert!(
        st.stdout.ends_with("next: nothing: the item is complete\n"),
        "{}",
        st.stdout
    );
    let j = t()
        .args(["--json", "state", "show", "MARA"])
        .any_stdout()
        .run()
        .json();
    assert_eq!(j["phases"]["5"]["status"], "complete");
    assert_eq!(j["phases"]["5"]["summary"]["issuesNoted"], 1);
    // As a one-machine run writes them: what was complete, what came after and was not.
    assert_eq!(j["completed"], serde_json::json!(["BMNR"]));
    assert_eq!(j["queue"]["next"], serde_json::json!([]));
    let j = t()
        .args(["--json", "state", "show", "BMNR"])
        .any_stdout()
        .run()
        .json();
    assert_eq!(j["completed"], serde_json::json!([]));
    assert_eq!(
        j["queue"],
        serde_json::json!({"name": "q", "next": ["MARA"]})
    );
    t().args(["doctor", "--queue", "q"])
        .stdout("queue q: 2 item(s)\nno stuck leases, no orphaned rows\n")
        .run();
    // The worker's run is a verify run of the queue for `baton status`, which reads the
    // database's queues.
    t().args(["status"])
        .stdout_regex(r"(?m)^run \S+  verify queue q  finished  2 done, 0 failed, 10 agent calls")
        .stdout_contains("\nqueue q  2 complete, 0 failed, 0 pending of 2  — all complete\n")
        .run();
    // An item id put in the database by other means than `queue add` fails, harmlessly.
    let mut db = Db::connect(&url).unwrap();
    db.client
        .execute(
            "INSERT INTO baton_items (queue, id) VALUES ('q', '../evil')",
            &[],
        )
        .unwrap();
    t().args([
        "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
    ])
    .status(1)
    .stdout_contains("w1 ../evil - #1: failed — `../evil` is not an item id")
    .run();
    assert!(!p.path().join(".baton/queues/q/evil").exists());
    db.client
        .execute("DELETE FROM baton_items WHERE id = '../evil'", &[])
        .unwrap();
    // So does an item whose stored state no baton can read: once, not a worker after another.
    db.client
        .execute(
            "INSERT INTO baton_items (queue, id, state) VALUES ('q', 'ODD', '{\"phases\": 5}')",
            &[],
        )
        .unwrap();
    t().args([
        "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
    ])
    .status(1)
    .stdout_contains(
        "w1 ODD - #1: failed — the queue database holds a state of item `ODD` baton cannot read: ",
    )
    .run();
    let status: String = db
        .client
        .query_one("SELECT status FROM baton_items WHERE id = 'ODD'", &[])
        .unwrap()
        .get(0);
    assert_eq!(status, "failed");
    db.client
        .execute("DELETE FROM baton_items WHERE id = 'ODD'", &[])
        .unwrap();
    // An item that breaks every claim of it with an error of baton's own (here: a file where
    // its folder goes) goes back to the queue twice, then fails on the third claim.
    db.add("q", &["BRK".into()]).unwrap();
    p.write(".baton/queues/q/items/BRK", "not a folder");
    for _ in 0..2 {
        t().args([
            "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
        ])
        .status(6)
        .stderr("error: [PROJECT]/.baton/queues/q/items/BRK: File exists (os error 17)\n")
        .run();
    }
    t().args([
        "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
    ])
    .status(6)
    .stderr("error: [PROJECT]/.baton/queues/q/items/BRK: File exists (os error 17)\n")
    .stdout_contains("w1 BRK - #3: failed — claimed 3 times without an outcome; the last claim ended in an error: ")
    .run();
    let status: String = db
        .client
        .query_one("SELECT status FROM baton_items WHERE id = 'BRK'", &[])
        .unwrap()
        .get(0);
    assert_eq!(status, "failed");
    db.client
        .execute("DELETE FROM baton_items WHERE id = 'BRK'", &[])
        .unwrap();
    std::fs::remove_file(p.path().join(".baton/queues/q/items/BRK")).unwrap();
    // A claim whose worker vanished: a stuck lease, found (exit 5), with who held it.
    db.add("q", &["XXI".into()]).unwrap();
    db.claim("q", ("gone", "host-x", "r0"), Duration::from_secs(1))
        .unwrap()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    t().args(["doctor", "--queue", "q"])
        .status(5)
        .stdout_regex(
            r"XXI: stuck lease: phase \? claimed by gone@host-x, expired \d+s ago \(the next worker to claim takes it over\)\n1 finding\(s\)\n$",
        )
        .run();
    let j = t()
        .args(["--json", "queue", "show", "q"])
        .any_stdout()
        .run()
        .json();
    assert_eq!(j["claims"][0]["worker"], "gone");
    assert!(j["claims"][0]["lease_left_secs"].as_f64().unwrap() < 0.0);
    t().args(["queue", "show", "q"])
        .stdout_regex(
            r"(?m)^claims:\n  XXI          phase \? \(attempt 1\) — gone@host-x, claimed \d+s ago, lease expired \d+s ago: the next worker takes it over\n",
        )
        .run();
    // Orphaned rows: a claim left on a finished item, a file of a phase the pipeline lost, an
    // outcome the item's state does not show.
    db.client
        .batch_execute(
            "UPDATE baton_items SET claim_token = 99, worker = 'w9', host = 'h9',
                 lease_until = now() + interval '1 hour' WHERE id = 'BMNR';
             INSERT INTO baton_files (queue, item, name, phase, body)
                 VALUES ('q', 'MARA', 'mara-old.md', '9z', '');
             UPDATE baton_items SET state = jsonb_set(state, '{phases,5,status}', '\"failed\"')
                 WHERE id = 'MARA';",
        )
        .unwrap();
    let j = t()
        .args(["--json", "doctor", "--queue", "q"])
        .status(5)
        .any_stdout()
        .run()
        .json();
    let found: Vec<String> = j["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}: {}",
                f["item"].as_str().unwrap(),
                f["what"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(found.len(), 4, "{found:#?}");
    assert!(
        found[0].starts_with("BMNR: orphaned claim by w9@h9 on a complete item"),
        "{found:#?}"
    );
    assert!(found[1].starts_with("XXI: stuck lease"), "{found:#?}");
    assert_eq!(
        found[2],
        "MARA: orphaned file mara-old.md of phase 9z, which the pipeline no longer has"
    );
    assert_eq!(
        found[3],
        "MARA: orphaned outcome: phase 5 recorded complete, but the item's state does not say so"
    );
}

#[test]
fn ctrl_c_releases_the_claim_at_once_and_the_next_worker_runs_the_phase() {
    let Some(s) = pg::server("queue_pg::ctrl_c_releases_the_claim_at_once") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    p.write(".baton/sim.toml", "latency_ms = 3000\n");
    let mut db = Db::connect(&url).unwrap();
    db.add("q", &["A".into()]).unwrap();
    // A long lease: only the release lets another worker take the phase soon.
    let child = std::process::Command::new(crate::util::bin())
        .args([
            "worker", "--queue", "q", "--agent", "sim", "--name", "w1", "--lease", "600",
        ])
        .current_dir(p.path())
        .env("BATON_DATABASE_URL", &url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = std::time::Instant::now();
    while !db.claims("q").unwrap().iter().any(|c| c.phase.is_some()) {
        assert!(t0.elapsed() < Duration::from_secs(20), "no claim");
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    crate::util::assert_exit(&o, 130);
    assert!(err.contains("released its claims"), "{err}");
    assert!(db.claims("q").unwrap().is_empty());
    let n: i64 = db
        .client
        .query_one("SELECT count(*) FROM baton_outcomes", &[])
        .unwrap()
        .get(0);
    assert_eq!(n, 0);
    // The next worker takes the phase at once, as its second attempt; nothing was recorded twice.
    p.write(".baton/sim.toml", "");
    p.test()
        .args([
            "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w2",
        ])
        .env("BATON_DATABASE_URL", &url)
        .stdout_regex(r"(?m)^w2 A 1a #2: complete in \d+\.\ds$")
        .stdout_regex(r"(?m)^w2 A 1b #1: complete")
        .run();
    let n: i64 = db
        .client
        .query_one(
            "SELECT count(*) FROM baton_outcomes WHERE result = 'complete'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(n, 5);
}

#[test]
fn a_failed_phase_fails_its_item_and_queue_retry_puts_it_back() {
    let Some(s) = pg::server("queue_pg::a_failed_phase_fails_its_item") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    p.write(
        ".baton/sim.toml",
        "[verify]\n\"MARA/1b\" = [\"nooutput\"]\n",
    );
    let t = || p.test().env("BATON_DATABASE_URL", &url);
    t().args(["queue", "add", "q", "BMNR", "MARA"])
        .any_stdout()
        .run();
    // The item fails at its phase, the others go on; the worker exits 1.
    t().args([
        "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w1",
    ])
    .status(1)
    .stdout_contains("w1 MARA 1b #1: failed — phase 1b: the agent wrote no output file")
    .stdout_contains("worker w1: 7 claims — 6 complete, 1 failed, 0 dropped")
    .run();
    t().args(["queue", "show", "q"])
        .stdout_contains("  MARA         failed: phase 1b: the agent wrote no output file")
        .stdout_contains("next: MARA failed (phase 1b: the agent wrote no output file")
        .stdout_contains("fix it, then: baton worker --queue q\n")
        .run();
    // Only failed items go back, all or nothing; files projects rerun instead.
    t().args(["queue", "retry", "q", "../x"])
        .status(2)
        .stderr_contains("error: `../x` is not an item id")
        .run();
    t().args(["queue", "retry", "q", "MARA", "BMNR"])
        .status(3)
        .stderr_contains("item `BMNR` of queue `q` is not failed (or not in the queue)")
        .stderr_contains("nothing was retried")
        .run();
    Proj::new()
        .test()
        .args(["queue", "retry", "q"])
        .status(2)
        .stderr_contains("baton run verify --queue q (failed items resume at their failed phase)")
        .run();
    p.write(".baton/sim.toml", "");
    t().args(["queue", "retry", "q", "mara"])
        .stdout(
            "queue q: MARA back in the queue, each at its failed phase\nrun it: baton worker --queue q\n",
        )
        .run();
    // And the queue says so before any worker claims it.
    t().args(["queue", "show", "q"])
        .stdout_contains(" 0 failed, 1 in progress,")
        .stdout_contains("  MARA         in progress at phase 1b (")
        .run();
    t().args([
        "worker", "--queue", "q", "--once", "--agent", "sim", "--name", "w2",
    ])
    .stdout_regex(r"(?m)^w2 MARA 1b #2: complete in \d+\.\ds$")
    .stdout_contains("worker w2: 4 claims — 4 complete, 0 failed, 0 dropped")
    .run();
    t().args(["queue", "retry", "q"])
        .stdout("queue q: no failed items\n")
        .run();
    let mut db = Db::connect(&url).unwrap();
    let rows: Vec<(String, i64)> = db
        .client
        .query(
            "SELECT result, count(*) FROM baton_outcomes GROUP BY result ORDER BY result",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    assert_eq!(rows, vec![("complete".into(), 10), ("failed".into(), 1)]);
    let st = db.state("q", "MARA").unwrap().unwrap();
    assert_eq!(st.status, Progress::Complete);
    assert_eq!(st.phases["1b"].attempts, 2);
}

#[test]
fn queue_add_wakes_an_idle_worker_at_once() {
    let Some(s) = pg::server("queue_pg::queue_add_wakes_an_idle_worker_at_once") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    let mut db = Db::connect(&url).unwrap();
    db.add("q", &["A".into()]).unwrap();
    // Lease 60 s: without a notification an idle worker looks again only every 10 s.
    let log = p.path().join("w.log");
    let mut child = std::process::Command::new(crate::util::bin())
        .args([
            "worker", "--queue", "q", "--agent", "sim", "--name", "w", "--lease", "60",
        ])
        .current_dir(p.path())
        .env("BATON_DATABASE_URL", &url)
        .stdin(std::process::Stdio::null())
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let seen = |line: &str, within: Duration| {
        let t0 = std::time::Instant::now();
        while !std::fs::read_to_string(&log).unwrap().contains(line) {
            assert!(t0.elapsed() < within, "no `{line}` within {within:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
        t0.elapsed()
    };
    seen("w A 5 #1: complete", Duration::from_secs(30));
    // Three items added while it idles: each is claimed well before the 10 s poll would.
    for item in ["B", "C", "D"] {
        std::thread::sleep(Duration::from_millis(300));
        db.add("q", &[item.to_string()]).unwrap();
        let took = seen(
            &format!("w {item} 1a #1: complete"),
            Duration::from_secs(30),
        );
        assert!(took < Duration::from_millis(2500), "{item} waited {took:?}");
        seen(&format!("w {item} 5 #1: complete"), Duration::from_secs(30));
    }
    // Ctrl-C on an idle worker ends it promptly (no claim to release).
    let t0 = std::time::Instant::now();
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    assert_eq!(child.wait().unwrap().code(), Some(130));
    assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
}

#[test]
fn status_says_when_the_queue_database_cannot_be_reached() {
    let p = pg_project();
    let down = "host=/nonexistent/dir dbname=x user=x";
    p.test()
        .args(["task", "init", "Add login"])
        .any_stdout()
        .run();
    // The task is still shown, the queues' absence is explained, and status itself succeeds.
    p.test()
        .args(["status"])
        .env("BATON_DATABASE_URL", down)
        .stdout_regex(r"(?m)^queues: cannot be read: cannot connect to the queue database: ")
        .stdout_regex(r"(?m)^task add-login  ")
        .run();
    let ran = p
        .test()
        .args(["status", "--json"])
        .env("BATON_DATABASE_URL", down)
        .any_stdout()
        .run();
    let j = ran.json();
    assert_eq!(j["queues"], serde_json::json!([]));
    assert!(
        j["queue_error"]
            .as_str()
            .unwrap()
            .starts_with("cannot connect to the queue database: "),
        "{j}"
    );
    assert_eq!(j["tasks"][0]["task"], "add-login");
    // A reachable store of queues (files) has no such field.
    let files = Proj::new();
    let ran = files.test().args(["status", "--json"]).any_stdout().run();
    assert!(ran.json().get("queue_error").is_none());
}

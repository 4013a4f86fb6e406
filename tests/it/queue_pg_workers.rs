//! Many `baton worker` processes on one postgres queue, with the simulated agent: four drain
//! 200 items × 5 phases with every phase recorded once and the very result one machine's
//! `baton run verify` gets; workers killed with SIGKILL mid-phase have their phases taken over
//! once their lease expires, and nothing is lost or done twice.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use baton_engine::workflow::verify::pg::Db;
use serde_json::Value;

use super::queue_pg::pg_project;
use crate::util::{Proj, bin, pg};

/// A worker draining queue `q`; `lease`: its lease in seconds.
pub(crate) fn worker(p: &Proj, url: &str, name: &str, lease: u32) -> Child {
    worker_with(p, url, name, lease, &[])
}

/// [`worker`] with more flags; its claims logged in `<name>.log`, its stderr piped.
pub(crate) fn worker_with(p: &Proj, url: &str, name: &str, lease: u32, more: &[&str]) -> Child {
    let log = std::fs::File::create(p.path().join(format!("{name}.log"))).unwrap();
    Command::new(bin())
        .args([
            "worker", "--queue", "q", "--once", "--agent", "sim", "--name", name,
        ])
        .args(["--lease", &lease.to_string()])
        .args(more)
        .current_dir(p.path())
        .env("BATON_DATABASE_URL", url)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a worker to exit 0; its stderr.
pub(crate) fn wait_ok(mut c: Child, name: &str, deadline: Instant) -> String {
    loop {
        if let Some(st) = c.try_wait().unwrap() {
            let mut err = String::new();
            use std::io::Read;
            c.stderr.take().unwrap().read_to_string(&mut err).unwrap();
            assert!(st.success(), "{name}: {st}\n{err}");
            return err;
        }
        if Instant::now() > deadline {
            let _ = c.kill();
            panic!("{name} did not drain the queue in time");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn count(db: &mut Db, sql: &str) -> i64 {
    db.client.query_one(sql, &[]).unwrap().get(0)
}

/// Every phase recorded complete exactly once, none failed, every item complete.
pub(crate) fn assert_exactly_once(db: &mut Db, items: i64) {
    let phases = items * 5;
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM baton_outcomes WHERE result = 'complete'"
        ),
        phases
    );
    assert_eq!(
        count(
            db,
            "SELECT count(DISTINCT (item, phase)) FROM baton_outcomes"
        ),
        phases
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM baton_outcomes WHERE result <> 'complete'"
        ),
        0
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM baton_items WHERE status = 'complete'"
        ),
        items
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM baton_items WHERE claim_token IS NOT NULL"
        ),
        0
    );
}

/// What a run leaves of an item that must not depend on who ran it: each phase's status,
/// files and summary, and the output files' bytes.
fn result_of(state: &Value, files: BTreeMap<String, Vec<u8>>) -> Value {
    let phases: BTreeMap<String, Value> = state["phases"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, p)| {
            let keep = ["status", "agent", "inputFiles", "outputFile", "summary"];
            let v: serde_json::Map<String, Value> = keep
                .iter()
                .map(|k| (k.to_string(), p[*k].clone()))
                .collect();
            (id.clone(), Value::Object(v))
        })
        .collect();
    let files: BTreeMap<String, String> = files
        .into_iter()
        .map(|(n, b)| (n, String::from_utf8(b).unwrap()))
        .collect();
    serde_json::json!({"status": state["status"], "phases": phases, "files": files})
}

fn files_run_result(dir: &Path) -> Value {
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("verification-state.json")).unwrap(),
    )
    .unwrap();
    let files = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    result_of(&state, files)
}

fn db_result(db: &mut Db, item: &str) -> Value {
    let state: Value = db
        .client
        .query_one(
            "SELECT state FROM baton_items WHERE queue = 'q' AND id = $1",
            &[&item],
        )
        .unwrap()
        .get(0);
    let files = db
        .client
        .query(
            "SELECT name, body FROM baton_files WHERE queue = 'q' AND item = $1",
            &[&item],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    result_of(&state, files)
}

#[test]
fn four_workers_drain_200_items_by_5_phases_exactly_once_as_one_machine_does() {
    let Some(s) = pg::server("queue_pg_workers::four_workers_drain_200_items") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    let ids: Vec<String> = (0..200).map(|i| format!("ITEM{i:03}")).collect();
    let mut db = Db::connect(&url).unwrap();
    db.add("q", &ids).unwrap();
    let names = ["w1", "w2", "w3", "w4"];
    // A long lease: no worker is killed here, and a loaded machine must not look like one.
    let workers: Vec<Child> = names.iter().map(|n| worker(&p, &url, n, 60)).collect();
    let deadline = Instant::now() + Duration::from_secs(240);
    for (c, n) in workers.into_iter().zip(names) {
        wait_ok(c, n, deadline);
    }
    assert_exactly_once(&mut db, 200);
    // All four took part, and their logs add up to the 1000 phases, none dropped or taken over.
    let mut claims = 0;
    for n in names {
        let log = std::fs::read_to_string(p.path().join(format!("{n}.log"))).unwrap();
        let mine = log.lines().filter(|l| l.contains(": complete in ")).count();
        assert!(mine > 0, "{n} ran nothing:\n{log}");
        assert!(
            !log.contains("dropped (not recorded)") && !log.contains("took over"),
            "{log}"
        );
        claims += mine;
    }
    assert_eq!(claims, 1000);
    // One machine's `baton run verify` on the same items (the first 20: the simulated agent's
    // answers depend only on the item, the phase and its input files) gets the same result.
    let one = Proj::new();
    one.write(".baton/sim.toml", "");
    let mut add = vec!["queue", "add", "q"];
    add.extend(ids[..20].iter().map(String::as_str));
    one.test().args(add).any_stdout().run();
    one.test()
        .args(["run", "verify", "--queue", "q", "--agent", "sim"])
        .stdout_contains("queue q: 20 complete, 0 failed")
        .stderr_contains("ITEM019 5: complete")
        .run();
    for id in &ids[..20] {
        let here = files_run_result(&one.path().join(".baton/queues/q/items").join(id));
        assert_eq!(db_result(&mut db, id), here, "{id}");
        assert_eq!(here["status"], "complete");
        assert_eq!(here["files"].as_object().unwrap().len(), 5);
    }
    // The other 180 as well: with its id (and its files' lowercase names) written as a
    // placeholder, every item's result is the one machine's result for ITEM000, value for
    // value (jsonb keeps object keys in its own order, so the text is compared as JSON).
    let one_item = |id: &str, v: &Value| -> Value {
        let lower = id.to_ascii_lowercase();
        let text = v
            .to_string()
            .replace(id, "ITEM-ID")
            .replace(&lower, "item-id");
        serde_json::from_str(&text).unwrap()
    };
    let want = one_item(
        "ITEM000",
        &files_run_result(&one.path().join(".baton/queues/q/items/ITEM000")),
    );
    for id in &ids[20..] {
        assert_eq!(one_item(id, &db_result(&mut db, id)), want, "{id}");
    }
}

/// xorshift64: random kill moments, reproducible from the seed the test prints.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

#[test]
fn workers_killed_mid_phase_have_their_phases_taken_over_and_done_once() {
    let Some(s) = pg::server("queue_pg_workers::workers_killed_mid_phase") else {
        return;
    };
    let url = s.database();
    let p = pg_project();
    p.write(".baton/sim.toml", "latency_ms = 150\n");
    let ids: Vec<String> = (0..20).map(|i| format!("K{i:02}")).collect();
    let mut db = Db::connect(&url).unwrap();
    db.add("q", &ids).unwrap();
    let seed = std::env::var("BATON_KILL_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                | 1
        });
    eprintln!("kill seed: {seed} (BATON_KILL_SEED={seed} repeats it)");
    let mut rng = Rng(seed);
    let mut live: Vec<(String, Child)> = (1..=3)
        .map(|k| {
            let n = format!("w{k}");
            let c = worker(&p, &url, &n, 2);
            (n, c)
        })
        .collect();
    let mut killed = Vec::new();
    for round in 0..3 {
        std::thread::sleep(Duration::from_millis(200 + rng.below(800)));
        let k = rng.below(live.len() as u64) as usize;
        let name = live[k].0.clone();
        // Mid-phase: wait until it holds a claim it is running, then a random moment more.
        let held = Instant::now();
        while !db
            .claims("q")
            .unwrap()
            .iter()
            .any(|c| c.worker == name && c.phase.is_some())
        {
            assert!(
                held.elapsed() < Duration::from_secs(10),
                "{name} never claimed"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(rng.below(100)));
        let (_, mut c) = live.remove(k);
        c.kill().unwrap(); // SIGKILL: no cleanup, the claim stays until its lease expires
        c.wait().unwrap();
        // Killed holding a claim (not between a record and its next claim): which one.
        let claim = db
            .claims("q")
            .unwrap()
            .into_iter()
            .find(|c| c.worker == name)
            .map(|c| c.item);
        killed.push((name, claim));
        let n = format!("r{round}");
        let c = worker(&p, &url, &n, 2);
        live.push((n, c));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut logs = String::new();
    for (n, c) in live {
        wait_ok(c, &n, deadline);
    }
    for e in std::fs::read_dir(p.path()).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "log") {
            logs.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    assert_exactly_once(&mut db, 20);
    // Each claim a killed worker held was taken over (after its lease) by another worker, and
    // ran again as the phase's next attempt (#2 or later); its outcome was recorded once.
    let mut taken_over = 0;
    for (k, claim) in &killed {
        let Some(item) = claim else { continue };
        taken_over += 1;
        let line = logs
            .lines()
            .find(|l| {
                l.contains(&format!(" {item} ")) && l.contains(&format!("(took over from {k}@"))
            })
            .unwrap_or_else(|| {
                panic!("seed {seed}: no takeover of {k}'s claim of {item}:\n{logs}")
            });
        let attempt: u32 = line
            .split(" #")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no attempt in {line}"));
        assert!(attempt >= 2, "seed {seed}: {line}");
    }
    assert!(
        taken_over >= 1,
        "seed {seed}: no kill landed on a claim: {killed:?}"
    );
    for id in &ids {
        let r = db_result(&mut db, id);
        assert_eq!(r["status"], "complete", "{id}");
        assert_eq!(r["files"].as_object().unwrap().len(), 5, "{id}");
    }
    p.test()
        .args(["doctor", "--queue", "q"])
        .env("BATON_DATABASE_URL", &url)
        .stdout("queue q: 20 item(s)\nno stuck leases, no orphaned rows\n")
        .run();
}

/// The process group of the agent running now, from its marker in a run's `logs/`.
fn running_agent(p: &Proj) -> Option<i32> {
    for run in std::fs::read_dir(p.path().join(".baton/runs")).ok()? {
        for f in std::fs::read_dir(run.ok()?.path().join("logs")).ok()? {
            let f = f.ok()?.path();
            if f.extension().is_some_and(|x| x == "pgid") {
                let text = std::fs::read_to_string(&f).ok()?;
                return text.split_whitespace().next()?.parse().ok();
            }
        }
    }
    None
}

/// Whether the agent (its group's leader) still runs: a zombie does not (its parent, the
/// killed worker, is gone, and it waits for init to reap it).
fn agent_alive(pgid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pgid}/stat")).is_ok_and(|s| {
        s.rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X")
    })
}

/// Wait up to `secs` for the agent of process group `pgid` to be stopped; else kill it and
/// `worker`, and fail with `why`.
fn wait_stopped(pgid: i32, worker: &mut Child, secs: u64, why: &str) {
    let t0 = Instant::now();
    while agent_alive(pgid) {
        if t0.elapsed() > Duration::from_secs(secs) {
            let _ = worker.kill();
            // SAFETY: kill(2) of the hanging agent's process group.
            unsafe { libc::kill(-pgid, libc::SIGKILL) };
            panic!("{why}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Queue `q` of one item, `A`, whose first phase's first attempt hangs (the second passes),
/// and worker w1 (lease 2 s) in that attempt: the project, the database, w1 and the hanging
/// agent's process group.
fn hanging_first_phase(url: &str) -> (Proj, Db, Child, i32) {
    let p = pg_project();
    p.write(
        ".baton/sim.toml",
        "[verify]\n\"A/1a\" = [\"hang\", \"ok\"]\n",
    );
    let mut db = Db::connect(url).unwrap();
    db.add("q", &["A".into()]).unwrap();
    let w1 = worker(&p, url, "w1", 2);
    let t0 = Instant::now();
    let pgid = loop {
        if let Some(g) = running_agent(&p) {
            break g;
        }
        assert!(t0.elapsed() < Duration::from_secs(20), "no agent started");
        std::thread::sleep(Duration::from_millis(20));
    };
    (p, db, w1, pgid)
}

#[test]
fn a_takeover_on_the_same_host_first_stops_the_agent_the_killed_worker_left() {
    let Some(s) = pg::server("queue_pg_workers::a_takeover_on_the_same_host") else {
        return;
    };
    let url = s.database();
    // The first attempt's agent hangs: it is still running when the worker is killed.
    let (p, mut db, mut w1, pgid) = hanging_first_phase(&url);
    w1.kill().unwrap();
    w1.wait().unwrap();
    assert!(
        agent_alive(pgid),
        "the orphaned agent runs on after its worker"
    );
    let err = wait_ok(
        worker(&p, &url, "w2", 2),
        "w2",
        Instant::now() + Duration::from_secs(60),
    );
    assert!(!agent_alive(pgid), "the orphan was not stopped: {err}");
    assert!(
        err.contains("w2: stopped the agent of A-1a-1") && err.contains("took over from w1@"),
        "{err}"
    );
    let log = std::fs::read_to_string(p.path().join("w2.log")).unwrap();
    assert!(log.contains("w2 A 1a #2: complete in "), "{log}");
    assert!(log.contains("(took over from w1@"), "{log}");
    assert_exactly_once(&mut db, 1);
}

/// A claim lost while its agent works (the lease ran out and the phase went to another worker)
/// stops that agent: its result would be dropped, and it would write into the item's folder
/// beside the new holder's. The worker goes on and takes the phase again once it is free.
#[test]
fn a_lost_claim_stops_its_agent_and_the_worker_goes_on() {
    let Some(s) = pg::server("queue_pg_workers::a_lost_claim_stops_its_agent") else {
        return;
    };
    let url = s.database();
    let (p, mut db, mut w1, pgid) = hanging_first_phase(&url);
    // Another worker takes the phase (as after a lease that ran out), for a second.
    db.client
        .execute(
            "UPDATE baton_items SET claim_token = nextval('baton_claim_tokens'), worker = 'w2',
                    lease_until = now() + interval '1 second'
             WHERE queue = 'q' AND id = 'A'",
            &[],
        )
        .unwrap();
    wait_stopped(pgid, &mut w1, 15, "the lost claim's agent runs on");
    let err = wait_ok(w1, "w1", Instant::now() + Duration::from_secs(60));
    assert!(
        err.contains("w1: lost claim ") && err.contains("its agent is stopped"),
        "{err}"
    );
    let log = std::fs::read_to_string(p.path().join("w1.log")).unwrap();
    assert!(log.contains("w1 A 1a #2: complete in "), "{log}");
    assert_exactly_once(&mut db, 1);
}

#[test]
fn a_heartbeat_cut_off_from_the_database_for_a_lease_stops_its_agents_and_the_worker_goes_on() {
    let Some(s) = pg::server("queue_pg_workers::a_heartbeat_cut_off") else {
        return;
    };
    let url = s.database();
    let (p, mut db, mut w1, pgid) = hanging_first_phase(&url);
    let name: String = db
        .client
        .query_one("SELECT current_database()", &[])
        .unwrap()
        .get(0);
    // The worker's connections are cut, and no new one is let in (said from another
    // database: a database cannot refuse the session that asks).
    let mut admin = postgres::Client::connect(&s.url("postgres"), postgres::NoTls).unwrap();
    // Let connections in again however this test ends (the server is shared by the tests).
    struct Reopen(String, String);
    impl Drop for Reopen {
        fn drop(&mut self) {
            if let Ok(mut c) = postgres::Client::connect(&self.0, postgres::NoTls) {
                let _ =
                    c.batch_execute(&format!("ALTER DATABASE {} ALLOW_CONNECTIONS true", self.1));
            }
        }
    }
    let _reopen = Reopen(s.url("postgres"), name.clone());
    admin
        .batch_execute(&format!(
            "ALTER DATABASE {name} ALLOW_CONNECTIONS false;
             SELECT pg_terminate_backend(pid) FROM pg_stat_activity
             WHERE datname = '{name}'"
        ))
        .unwrap();
    let t0 = Instant::now();
    wait_stopped(
        pgid,
        &mut w1,
        20,
        "the agent of a claim whose lease could not be renewed runs on",
    );
    // Not at the first failed beat (within a third of the lease, 0.67 s): only once a whole
    // lease (2 s) went by without a renewal, which the last one may have started 0.67 s
    // before the cut.
    assert!(
        t0.elapsed() > Duration::from_millis(1000),
        "{:?}",
        t0.elapsed()
    );
    // The database lets connections in again: the worker reconnects, takes the phase again
    // (its claim was lost) and drains the queue.
    drop(_reopen);
    let err = wait_ok(w1, "w1", Instant::now() + Duration::from_secs(60));
    assert!(
        err.contains("the heartbeat could not renew the leases"),
        "{err}"
    );
    assert!(
        err.contains("'s lease was not renewed for 2 s; its agent is stopped"),
        "{err}"
    );
    assert!(
        err.contains("w1: reconnected to the queue database"),
        "{err}"
    );
    let log = std::fs::read_to_string(p.path().join("w1.log")).unwrap();
    assert!(log.contains("w1 A 1a #2: complete in "), "{log}");
    // The test's own connection was terminated with the worker's.
    assert_exactly_once(&mut Db::connect(&url).unwrap(), 1);
}

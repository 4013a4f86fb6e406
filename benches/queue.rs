//! The postgres queue backend: how fast the queue hands out work, and how the makespan of a
//! queue shrinks with workers. Starts its own PostgreSQL server (the tests' helper,
//! tests/it/util/pg.rs: initdb into a temp dir, a Unix socket, default durability settings).
//!
//!     cargo bench --bench queue
//!
//! 1. Claims per second of the queue itself: 8 threads, each with its own connection, claim
//!    (one statement, FOR UPDATE SKIP LOCKED) until 20 000 items are taken; then the same with
//!    each claim also recorded (outcome + state + a 1 KB file + the claim's release, in one
//!    transaction). Target: >= 1000 claims/s with 8 claimers.
//! 2. Makespan of 1, 2 and 4 `baton worker --once` processes on a queue of 12 items × 5
//!    phases whose simulated phases each take 200 ms. Target: 4 workers <= 0.3x one worker.

#[path = "../tests/it/util/pg.rs"]
mod pg;
// pg.rs takes a test's turn on the machine; a benchmark runs on its main thread and takes none.
#[path = "../tests/it/util/turn.rs"]
#[allow(dead_code)]
mod turn;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use baton_engine::workflow::verify::pg::{Db, Outcome};
use baton_engine::workflow::verify::state::State;

fn baton() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

/// Claims/s of `threads` claimers draining `items` items; `record`: each claim is recorded.
/// A claim waits for the WAL flush (ARCHITECTURE.md, "Durability").
fn claims(server: &pg::PgServer, threads: usize, items: usize, record: bool) -> f64 {
    let url = server.database();
    let mut db = Db::connect(&url).expect("connect");
    let ids: Vec<String> = (0..items).map(|i| format!("I{i:06}")).collect();
    for chunk in ids.chunks(5000) {
        db.add("bench", chunk).expect("add");
    }
    // Recorded complete: the item is done, as after its last phase.
    let state = State {
        item: "x".into(),
        status: baton_engine::workflow::verify::state::Progress::Complete,
        ..State::default()
    };
    let body = vec![b'x'; 1024];
    let t = Instant::now();
    let n: usize = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|k| {
                let (url, state, body) = (&url, &state, &body);
                s.spawn(move || {
                    let mut db = Db::connect(url).expect("connect");
                    let name = format!("c{k}");
                    let mut n = 0;
                    while let Some(c) = db
                        .claim("bench", (&name, "bench", "bench"), Duration::from_secs(600))
                        .expect("claim")
                    {
                        if record {
                            db.record(&Outcome {
                                queue: "bench",
                                item: &c.item,
                                token: c.token,
                                phase: Some("1a"),
                                attempt: c.attempt,
                                worker: &name,
                                host: "bench",
                                result: Ok(()),
                                state,
                                files: vec![("out.md".into(), body.clone())],
                            })
                            .expect("record");
                        }
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("claimer")).sum()
    });
    assert_eq!(n, items, "every item claimed exactly once");
    n as f64 / t.elapsed().as_secs_f64()
}

fn project(root: &Path, name: &str, url: &str, items: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(dir.join(".baton")).expect("dir");
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .status()
        .expect("git");
    assert!(ok.success());
    std::fs::write(dir.join("baton.toml"), "[queue]\nbackend = \"postgres\"\n").expect("toml");
    std::fs::write(dir.join(".baton/sim.toml"), "latency_ms = 200\n").expect("sim");
    let mut args = vec!["queue".to_string(), "add".into(), "bench".into()];
    args.extend((0..items).map(|i| format!("ITEM{i:02}")));
    let o = Command::new(baton())
        .args(&args)
        .current_dir(&dir)
        .env("BATON_DATABASE_URL", url)
        .output()
        .expect("queue add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

/// Wall time of `workers` worker processes draining the project's queue.
fn makespan(dir: &Path, url: &str, workers: usize) -> Duration {
    let t = Instant::now();
    let children: Vec<_> = (0..workers)
        .map(|k| {
            Command::new(baton())
                .args(["worker", "--queue", "bench", "--once", "--agent", "sim"])
                .args(["--name", &format!("w{k}")])
                .current_dir(dir)
                .env("BATON_DATABASE_URL", url)
                .env_remove("BATON_AGENT_SIM")
                .stdout(Stdio::null())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("spawn worker")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success(), "a worker failed");
    }
    t.elapsed()
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("queue bench: run with `cargo bench --bench queue`");
        return;
    }
    let server = match pg::PgServer::start(&[]) {
        Ok(s) => Stopped(s),
        Err(e) => {
            println!("skipped: queue bench: {e}");
            return;
        }
    };
    let server = &server.0;
    println!("postgres queue, server on a Unix socket, default durability (fsync on):");
    let rows = [
        (1, false, "claim only:"),
        (8, false, "claim only:"),
        (1, true, "claim + record (durable tx):"),
        (8, true, "claim + record (durable tx):"),
    ];
    let mut missed = Vec::new();
    for (threads, record, what) in rows {
        let rate = claims(server, threads, 20_000, record);
        println!("  {threads} claimer(s), {what:<34} {rate:>8.0} claims/s");
        if threads == 8 && !record && rate < 1000.0 {
            missed.push(format!(
                "{rate:.0} claims/s with 8 claimers (target >= 1000)"
            ));
        }
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    println!("makespan, 12 items x 5 phases, sim phases of 200 ms (ideal: 12 s / workers):");
    let mut one = 0.0;
    for w in [1, 2, 4] {
        let url = server.database();
        let dir = project(tmp.path(), &format!("w{w}"), &url, 12);
        let d = makespan(&dir, &url, w).as_secs_f64();
        if w == 1 {
            one = d;
        }
        println!("  {w} worker(s): {d:>6.2} s  ({:.2}x one worker)", d / one);
        if w == 4 && d / one > 0.3 {
            missed.push(format!(
                "4 workers took {:.2}x one worker's time (target <= 0.3x)",
                d / one
            ));
        }
    }
    if !missed.is_empty() {
        eprintln!("missed: {}", missed.join("; "));
        std::process::exit(1);
    }
}

/// The server, stopped and removed however the bench ends (a failed assertion too).
struct Stopped(pg::PgServer);

impl Drop for Stopped {
    fn drop(&mut self) {
        self.0.stop();
    }
}

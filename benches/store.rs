//! Store benchmarks: whole `baton` processes against the physical floor, side by side in one
//! run (interleaved, so load on this shared machine hits both alike). Reports p50 ratios.
//!
//!     cargo bench --bench store            # BATON_BENCH_N=300 for more samples
//!
//! 1. BEGIN_PHASE and COMPLETE_PHASE vs a bare process appending 200 bytes with fsync (dd).
//! 2. The same operations on a task with 1,000 completed phases vs one with 10.
//! 3. `baton history --tail 50` on a 1,000,000-line history vs `tail -n 50`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn baton() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

fn time(cmd: &mut Command) -> Duration {
    let t = Instant::now();
    let st = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let d = t.elapsed();
    assert!(st.success(), "{cmd:?} failed");
    d
}

fn p50(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A store with one task that has `phases` completed phases.
fn store_with(dir: &Path, phases: usize) -> PathBuf {
    let root = dir.join(format!("store-{phases}"));
    let run = |args: &[&str], stdin: Option<&str>| {
        let mut c = Command::new(baton());
        c.args(args).arg("--root").arg(&root).stdout(Stdio::null());
        if let Some(s) = stdin {
            c.stdin(Stdio::piped());
            let mut ch = c.spawn().unwrap();
            ch.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
            assert!(ch.wait().unwrap().success());
        } else {
            assert!(c.status().unwrap().success());
        }
    };
    run(&["task", "init", "bench"], None);
    let mut script = String::new();
    for i in 0..phases {
        script.push_str(&format!(
            "START_PHASE phase: p{i}\nEND_PHASE phase: p{i} status: success\n"
        ));
    }
    run(&["exec"], Some(&script));
    root
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench` absent: skip the slow work there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("store bench: run with `cargo bench --bench store`");
        return;
    }
    let n: usize = std::env::var("BATON_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let tmp = tempfile::tempdir().unwrap();
    let dd_file = tmp.path().join("dd.bin");
    let content = tmp.path().join("content.md");
    std::fs::write(
        &content,
        "## Task\nImplemented the thing; tests pass.\n".repeat(4),
    )
    .unwrap();
    let small = store_with(tmp.path(), 10);
    let big = store_with(tmp.path(), 1000);

    let dd = || {
        let mut c = Command::new("dd");
        c.arg("if=/dev/zero")
            .arg(format!("of={}", dd_file.display()))
            .args(["bs=200", "count=1", "oflag=append", "conv=notrunc,fsync"]);
        c
    };
    let op = |root: &Path, args: &[&str]| {
        let mut c = Command::new(baton());
        c.args(args).arg("--root").arg(root);
        c
    };
    let (mut t_dd, mut t_begin, mut t_complete, mut t_begin_big, mut t_complete_big) =
        (vec![], vec![], vec![], vec![], vec![]);
    for i in 0..n {
        let id = i.to_string();
        t_dd.push(time(&mut dd()));
        t_begin.push(time(&mut op(
            &small,
            &[
                "phase",
                "begin",
                "implementation",
                "--task-id",
                &id,
                "--needs",
                "memory",
            ],
        )));
        t_complete.push(time(&mut op(
            &small,
            &[
                "phase",
                "complete",
                "implementation",
                "--task-id",
                &id,
                "--status",
                "success",
                "--file",
                content.to_str().unwrap(),
            ],
        )));
        t_begin_big.push(time(&mut op(
            &big,
            &[
                "phase",
                "begin",
                "implementation",
                "--task-id",
                &id,
                "--needs",
                "memory",
            ],
        )));
        t_complete_big.push(time(&mut op(
            &big,
            &[
                "phase",
                "complete",
                "implementation",
                "--task-id",
                &id,
                "--status",
                "success",
                "--file",
                content.to_str().unwrap(),
            ],
        )));
    }
    let dd50 = p50(&mut t_dd);
    let (b, c, bb, cb) = (
        p50(&mut t_begin),
        p50(&mut t_complete),
        p50(&mut t_begin_big),
        p50(&mut t_complete_big),
    );
    println!("samples per case: {n}");
    println!("{:<48} {:>9} {:>8}", "case (p50)", "ms", "ratio");
    println!(
        "{:<48} {:>9.2} {:>8}",
        "dd 200 B append + fsync (floor)",
        ms(dd50),
        "1.00"
    );
    println!(
        "{:<48} {:>9.2} {:>8.2}",
        "baton phase begin, 10 phases",
        ms(b),
        ms(b) / ms(dd50)
    );
    println!(
        "{:<48} {:>9.2} {:>8.2}",
        "baton phase complete (+store), 10 phases",
        ms(c),
        ms(c) / ms(dd50)
    );
    println!(
        "{:<48} {:>9.2} {:>8.2}",
        "baton phase begin, 1000 phases (vs 10)",
        ms(bb),
        ms(bb) / ms(b)
    );
    println!(
        "{:<48} {:>9.2} {:>8.2}",
        "baton phase complete, 1000 phases (vs 10)",
        ms(cb),
        ms(cb) / ms(c)
    );

    // History: 1,000,000 lines in history.md.
    let hist_root = store_with(tmp.path(), 0);
    let hist = hist_root.join("context/history.md");
    {
        let mut f = std::io::BufWriter::new(
            std::fs::OpenOptions::new()
                .append(true)
                .open(&hist)
                .unwrap(),
        );
        for i in 0..1_000_000 {
            writeln!(
                f,
                "- 2026-11-22T13:00:00.000Z [bench] END_PHASE implementation#{i} success"
            )
            .unwrap();
        }
    }
    let (mut t_tail, mut t_hist) = (vec![], vec![]);
    for _ in 0..n {
        t_tail.push(time(Command::new("tail").args(["-n", "50"]).arg(&hist)));
        t_hist.push(time(&mut op(&hist_root, &["history", "--tail", "50"])));
    }
    let (t, h) = (p50(&mut t_tail), p50(&mut t_hist));
    println!(
        "{:<48} {:>9.2} {:>8}",
        "tail -n 50, 1M-line history",
        ms(t),
        "1.00"
    );
    println!(
        "{:<48} {:>9.2} {:>8.2}",
        "baton history --tail 50, 1M-line history",
        ms(h),
        ms(h) / ms(t)
    );
}

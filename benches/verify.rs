//! Verify-queue benchmark: a long queue must not grow the orchestrator. Whole `baton run
//! verify` processes with the simulated agent at latency 0 (built-in 5-phase pipeline).
//!
//!     cargo bench --bench verify            # BATON_BENCH_N=5 for more samples
//!
//! Peak RSS of the orchestrator process only: its own `VmHWM` from /proc/<pid>/status, polled
//! every 2 ms while it runs (the sim agents are its children, with their own memory, and are
//! not counted). Compared: 10 items vs 100 items (target: 100 within 1.2x of 10).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn baton() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

fn project(root: &Path, name: &str, items: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).expect("dir");
    let o = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&dir)
        .output()
        .expect("git");
    assert!(o.status.success());
    let ids: Vec<String> = (0..items).map(|i| format!("ITEM{i:04}")).collect();
    let mut args = vec!["queue".to_string(), "add".into(), "bench".into()];
    args.extend(ids);
    let o = Command::new(baton())
        .args(&args)
        .current_dir(&dir)
        .output()
        .expect("queue add");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

fn hwm_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Wall time and the orchestrator's peak RSS (KiB) of one run.
fn run(dir: &Path) -> (Duration, u64) {
    let t = Instant::now();
    let mut child = Command::new(baton())
        .args(["run", "verify", "--queue", "bench", "--agent", "sim"])
        .current_dir(dir)
        .env_remove("BATON_AGENT_SIM")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn baton");
    let pid = child.id();
    let mut peak = 0;
    loop {
        if let Some(kb) = hwm_kb(pid) {
            peak = peak.max(kb);
        }
        if let Some(st) = child.try_wait().expect("wait") {
            assert!(st.success(), "baton run verify failed in {}", dir.display());
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (t.elapsed(), peak)
}

fn median(v: &mut [u64]) -> u64 {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        println!("verify bench: run with `cargo bench --bench verify`");
        return;
    }
    let n: usize = std::env::var("BATON_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut rss = [Vec::new(), Vec::new()];
    let mut wall = [Vec::new(), Vec::new()];
    for i in 0..n {
        // Interleaved, so load on a shared machine hits both sizes alike.
        for (k, items) in [10usize, 100].into_iter().enumerate() {
            let dir = project(tmp.path(), &format!("q{items}-{i}"), items);
            let (d, kb) = run(&dir);
            rss[k].push(kb);
            wall[k].push(d.as_millis() as u64);
        }
    }
    let (r10, r100) = (median(&mut rss[0]), median(&mut rss[1]));
    let (w10, w100) = (median(&mut wall[0]), median(&mut wall[1]));
    println!("verify queue, sim agent at latency 0, 5 phases per item, median of {n}:");
    println!(
        "   10 items:  peak RSS {:>6} KiB  wall {:>6} ms  ({:.1} ms/phase)",
        r10,
        w10,
        w10 as f64 / 50.0
    );
    println!(
        "  100 items:  peak RSS {:>6} KiB  wall {:>6} ms  ({:.1} ms/phase)",
        r100,
        w100,
        w100 as f64 / 500.0
    );
    println!(
        "  100 vs 10:  {:.3}x peak RSS (target <= 1.2x)",
        r100 as f64 / r10 as f64
    );
}

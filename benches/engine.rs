//! Run-engine benchmarks: whole `baton run` processes on the demo project with the simulated
//! agent, side by side in one run (interleaved, so load on this shared machine hits all alike).
//!
//!     cargo bench --bench engine            # BATON_BENCH_N=5 for more samples
//!
//! 1. Orchestrator overhead per agent call: an epic with the sim agent at latency 0; wall time
//!    of the run / agent calls (the journal's phase_finished events). It includes everything
//!    per phase: the sim process start, prompt rendering, token count, fsync'd events, git.
//! 2. Parallel speed-up: 4 independent stories, 1 s per phase (`latency_ms = 1000`,
//!    --skip-review, so one phase each): `--parallel 4` vs one story alone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn baton() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(o.status.success(), "git {args:?}");
}

/// A fresh demo project (4 stories, branch epic-1) with `scenario` for the sim agent.
fn project(root: &Path, name: &str, scenario: &str) -> PathBuf {
    project_with(root, name, scenario, 0)
}

/// The demo project plus `extra` more stories (1.5, 1.6, …).
fn project_with(root: &Path, name: &str, scenario: &str, extra: usize) -> PathBuf {
    let dir = root.join(name);
    baton::cli::demo_project(&dir).expect("demo project");
    for k in 0..extra {
        let id = format!("1.{}", 5 + k);
        std::fs::write(
            dir.join(format!("docs/stories/{id}.extra-{k}.md")),
            format!("# Story {id}: Extra {k}\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n1. It works.\n"),
        )
        .expect("story");
    }
    std::fs::write(dir.join(".baton/sim.toml"), scenario).expect("scenario");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["config", "user.name", "bench"]);
    git(&dir, &["config", "user.email", "bench@baton.invalid"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "init"]);
    git(&dir, &["switch", "-q", "-c", "epic-1"]);
    dir
}

/// Wall time of one `baton run`, the agent calls it made, and the time those calls took
/// (the `duration_ms` the journal records for each: spawn to exit of the agent process).
fn run(dir: &Path, args: &[&str]) -> (Duration, usize, f64) {
    let t = Instant::now();
    let o = Command::new(baton())
        .args(args)
        .current_dir(dir)
        .env_remove("BATON_AGENT_SIM")
        .output()
        .expect("spawn baton");
    let d = t.elapsed();
    assert!(
        o.status.success(),
        "baton {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let runs = dir.join(".baton/runs");
    let run = std::fs::read_dir(&runs)
        .expect("runs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .max()
        .expect("a run");
    let events = std::fs::read_to_string(run.join("events.jsonl")).expect("events");
    let finished: Vec<serde_json::Value> = events
        .lines()
        .filter(|l| l.contains("\"event\":\"phase_finished\""))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let agent_ms: f64 = finished
        .iter()
        .filter_map(|e| e["outcome"]["duration_ms"].as_f64())
        .sum();
    (d, finished.len(), agent_ms)
}

fn p50(v: &mut [Duration]) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    // `cargo test --benches` runs this binary with `--bench` absent: skip the slow work there.
    if !std::env::args().any(|a| a == "--bench") {
        println!("engine bench: run with `cargo bench --bench engine`");
        return;
    }
    let n: usize = std::env::var("BATON_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let tmp = tempfile::tempdir().expect("tempdir");
    let sim = ["run", "epic-execute", "1", "--agent", "sim"];

    // 1. Overhead per agent call, latency 0: sequential with review, sequential without,
    //    and --parallel 4 (the worktree and merge costs included).
    let cases: [(&str, Vec<&str>); 3] = [
        ("sequential, dev+review", vec![]),
        ("sequential, --skip-review", vec!["--skip-review"]),
        ("--parallel 4, dev+review", vec!["--parallel", "4"]),
    ];
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let mut calls = vec![0; cases.len()];
    let mut agent: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    for i in 0..n {
        for (c, (_, extra)) in cases.iter().enumerate() {
            let dir = project(tmp.path(), &format!("o{c}-{i}"), "latency_ms = 0\n");
            let mut args = sim.to_vec();
            args.extend(extra);
            let (d, k, a) = run(&dir, &args);
            times[c].push(d);
            agent[c].push(ms(d) - a);
            calls[c] = k;
        }
    }
    println!("1. orchestrator overhead per agent call (sim agent, latency 0), p50 of {n}:");
    for (c, (name, _)) in cases.iter().enumerate() {
        let t = p50(&mut times[c]);
        println!(
            "   {name:<28} run {:>7.1} ms / {:>2} calls = {:>5.1} ms per call",
            ms(t),
            calls[c],
            ms(t) / calls[c].max(1) as f64
        );
    }
    // The orchestrator's own share: wall time not spent inside an agent process, per call
    // (sequential runs only: parallel agents overlap).
    for (c, (name, extra)) in cases.iter().enumerate() {
        if extra.contains(&"--parallel") {
            continue;
        }
        agent[c].sort_by(f64::total_cmp);
        let own = agent[c][agent[c].len() / 2];
        println!(
            "   {name:<28} outside agents {:>6.1} ms / {:>2} calls = {:>5.1} ms orchestrator overhead per call",
            own,
            calls[c],
            own / calls[c].max(1) as f64
        );
    }

    // The cost of one more phase, without the run's fixed costs (start, scan, journal, the
    // epic's UAT): the orchestrator's own time of a 12-story epic minus a 4-story one, per
    // extra agent call.
    let (mut small, mut big) = (Vec::new(), Vec::new());
    let (mut c4, mut c12) = (0, 0);
    for i in 0..n {
        for (extra, out, calls) in [(0, &mut small, &mut c4), (8, &mut big, &mut c12)] {
            let dir = project_with(
                tmp.path(),
                &format!("m{extra}-{i}"),
                "latency_ms = 0\n",
                extra,
            );
            let (d, k, a) = run(&dir, &sim);
            out.push(ms(d) - a);
            *calls = k;
        }
    }
    small.sort_by(f64::total_cmp);
    big.sort_by(f64::total_cmp);
    let (s4, s12) = (small[small.len() / 2], big[big.len() / 2]);
    println!(
        "   marginal: ({s12:.1} - {s4:.1}) ms outside agents / ({c12} - {c4}) calls = {:.1} ms orchestrator overhead per phase (target <= 20)",
        (s12 - s4) / (c12 - c4).max(1) as f64
    );

    // 2. Four independent stories at 1 s per phase: --parallel 4 vs one story alone.
    let slow = "latency_ms = 1000\n";
    let mut one = Vec::new();
    let mut four = Vec::new();
    let mut seq = Vec::new();
    for i in 0..n {
        let dir = project(tmp.path(), &format!("one-{i}"), slow);
        let mut a = sim.to_vec();
        a.extend(["--skip-review", "--start-from", "1.4"]);
        one.push(run(&dir, &a).0);
        let dir = project(tmp.path(), &format!("four-{i}"), slow);
        let mut a = sim.to_vec();
        a.extend(["--skip-review", "--parallel", "4"]);
        four.push(run(&dir, &a).0);
        if i == 0 {
            let dir = project(tmp.path(), &format!("seq-{i}"), slow);
            let mut a = sim.to_vec();
            a.push("--skip-review");
            seq.push(run(&dir, &a).0);
        }
    }
    let (one, four, seq) = (p50(&mut one), p50(&mut four), p50(&mut seq));
    println!("2. 4 independent stories, 1 s per phase (--skip-review), p50 of {n}:");
    println!("   one story alone            {:>7.1} ms", ms(one));
    println!(
        "   4 stories, --parallel 4    {:>7.1} ms  = {:.2}x one story (target <= 1.3x)",
        ms(four),
        ms(four) / ms(one)
    );
    println!(
        "   4 stories, sequential      {:>7.1} ms  = {:.2}x one story",
        ms(seq),
        ms(seq) / ms(one)
    );
}

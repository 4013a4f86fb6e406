//! `baton mask` throughput and memory on a large generated log, side by side with
//! `tee FILE >/dev/null` on the same input (the floor: read + write to a file, nothing else).
//!
//!   cargo bench --bench mask                               # 1 GiB, 3 rounds
//!   BATON_BENCH_MASK_MB=64 BATON_BENCH_MASK_RUNS=1 cargo bench --bench mask   # quick
//!
//! And `baton mask --redact-scratch` (every byte through the secret redaction, not only what is
//! shown) beside plain `baton mask`: what redaction costs.
//!
//! Targets: throughput ≥ 0.7 × tee, peak RSS ≤ 32 MB, redaction ≤ 10 % of mask's throughput
//! (best rounds). Exits non-zero when missed.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A realistic service log: timestamps, levels, request lines, an error every ~5000 lines.
fn generate(path: &Path, bytes: u64) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let paths = [
        "/api/v1/items",
        "/api/v1/users/42",
        "/healthz",
        "/api/v2/search?q=baton",
    ];
    let mut written = 0u64;
    let mut i = 0u64;
    let mut line = String::with_capacity(256);
    while written < bytes {
        line.clear();
        use std::fmt::Write as _;
        let (h, m, s, ms) = (
            (i / 3_600_000) % 24,
            (i / 60_000) % 60,
            (i / 1000) % 60,
            i % 1000,
        );
        let _ = if i.is_multiple_of(4999) {
            writeln!(
                line,
                "2026-11-22T{h:02}:{m:02}:{s:02}.{ms:03}Z ERROR worker-{} request id={i} failed: connection reset by peer",
                i % 8
            )
        } else {
            writeln!(
                line,
                "2026-11-22T{h:02}:{m:02}:{s:02}.{ms:03}Z INFO  worker-{} request id={i} path={} status=200 took={}ms",
                i % 8,
                paths[(i % 4) as usize],
                i % 97
            )
        };
        w.write_all(line.as_bytes())?;
        written += line.len() as u64;
        i += 1;
    }
    w.flush()?;
    Ok(written)
}

struct Run {
    wall: Duration,
    /// user + system CPU time: less sensitive than wall time to other load on the machine.
    cpu: Duration,
    max_rss_kb: i64,
    ok: bool,
}

/// Spawn with stdin from `input`, wait with wait4 to read the child's peak RSS.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot see
fn measure(mut cmd: Command, input: &Path, stdout: Stdio) -> Run {
    let stdin = File::open(input).expect("open input");
    let start = Instant::now();
    let child = cmd
        .stdin(stdin)
        .stdout(stdout)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain FFI call with valid pointers to locals; the child is ours and not yet reaped.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    assert_eq!(r, pid, "wait4 failed");
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Run {
        wall,
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss,
        ok,
    }
}

fn mb_s(bytes: u64, d: Duration) -> f64 {
    bytes as f64 / (1024.0 * 1024.0) / d.as_secs_f64()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    // `cargo bench` passes `--bench`; nothing to parse.
    let mb = env_u64("BATON_BENCH_MASK_MB", 1024);
    let runs = env_u64("BATON_BENCH_MASK_RUNS", 3).max(1);
    let base = std::env::var_os("BATON_BENCH_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let tmp = tempfile::tempdir_in(base).expect("temp dir");
    let log = tmp.path().join("input.log");
    let t = Instant::now();
    let bytes = generate(&log, mb * 1024 * 1024).expect("generate log");
    eprintln!(
        "generated {:.1} MiB in {:.1}s at {}",
        bytes as f64 / 1048576.0,
        t.elapsed().as_secs_f64(),
        log.display()
    );
    let project = tmp.path().join("project");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(project.join("baton.toml"), "").unwrap();
    let baton = env!("CARGO_BIN_EXE_baton");
    let tee_out = tmp.path().join("tee.out");
    let baton_stdout = tmp.path().join("baton.stdout");

    // Warm the page cache so neither side pays for the first read.
    measure(Command::new("cat"), &log, Stdio::null());

    let (mut tee_t, mut baton_t, mut redact_t) = (Vec::new(), Vec::new(), Vec::new());
    let (mut tee_cpu, mut baton_cpu) = (Vec::new(), Vec::new());
    let (mut tee_rss, mut baton_rss) = (0, 0);
    for round in 0..runs {
        let mut tee = Command::new("tee");
        tee.arg(&tee_out);
        let r = measure(tee, &log, Stdio::null());
        assert!(r.ok, "tee failed");
        tee_t.push(r.wall);
        tee_cpu.push(r.cpu);
        tee_rss = tee_rss.max(r.max_rss_kb);
        std::fs::remove_file(&tee_out).ok();

        let mut b = Command::new(baton);
        b.args(["mask", "--kind", "generic"]).current_dir(&project);
        let r = measure(b, &log, Stdio::from(File::create(&baton_stdout).unwrap()));
        assert!(r.ok, "baton mask failed");
        let printed = std::fs::read_to_string(&baton_stdout).unwrap();
        assert!(
            printed.contains("\"masked\": true"),
            "not masked: {printed}"
        );
        baton_t.push(r.wall);
        baton_cpu.push(r.cpu);
        baton_rss = baton_rss.max(r.max_rss_kb);
        for e in std::fs::read_dir(project.join(".baton/scratch"))
            .unwrap()
            .flatten()
        {
            std::fs::remove_file(e.path()).ok();
        }
        let mut b = Command::new(baton);
        b.args(["mask", "--kind", "generic", "--redact-scratch"])
            .current_dir(&project);
        let r = measure(b, &log, Stdio::from(File::create(&baton_stdout).unwrap()));
        assert!(r.ok, "baton mask --redact-scratch failed");
        redact_t.push(r.wall);
        for e in std::fs::read_dir(project.join(".baton/scratch"))
            .unwrap()
            .flatten()
        {
            std::fs::remove_file(e.path()).ok();
        }
        eprintln!(
            "round {}: tee {:.2}s, baton mask {:.2}s, --redact-scratch {:.2}s",
            round + 1,
            tee_t[round as usize].as_secs_f64(),
            baton_t[round as usize].as_secs_f64(),
            redact_t[round as usize].as_secs_f64()
        );
    }
    let (tee_best, baton_best) = (*tee_t.iter().min().unwrap(), *baton_t.iter().min().unwrap());
    let (tee_med, baton_med) = (median(tee_t), median(baton_t));
    let ratio_best = tee_best.as_secs_f64() / baton_best.as_secs_f64();
    let ratio_med = tee_med.as_secs_f64() / baton_med.as_secs_f64();
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "input: {:.1} MiB generated log, {runs} round(s), {cores} cores",
        bytes as f64 / 1048576.0
    );
    let (tee_cpu, baton_cpu) = (median(tee_cpu), median(baton_cpu));
    println!("| command | wall best | wall median | throughput (best) | CPU median | peak RSS |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| `tee FILE >/dev/null` | {:.2} s | {:.2} s | {:.0} MiB/s | {:.2} s | {:.1} MB |",
        tee_best.as_secs_f64(),
        tee_med.as_secs_f64(),
        mb_s(bytes, tee_best),
        tee_cpu.as_secs_f64(),
        tee_rss as f64 / 1024.0
    );
    println!(
        "| `baton mask --kind generic < FILE` | {:.2} s | {:.2} s | {:.0} MiB/s | {:.2} s | {:.1} MB |",
        baton_best.as_secs_f64(),
        baton_med.as_secs_f64(),
        mb_s(bytes, baton_best),
        baton_cpu.as_secs_f64(),
        baton_rss as f64 / 1024.0
    );
    println!(
        "throughput ratio baton/tee: {ratio_best:.2} (best), {ratio_med:.2} (median); target ≥ 0.70"
    );
    println!(
        "peak RSS baton: {:.1} MB; target ≤ 32 MB",
        baton_rss as f64 / 1024.0
    );
    let redact_best = *redact_t.iter().min().unwrap();
    let redact_med = median(redact_t);
    println!(
        "| `baton mask --kind generic --redact-scratch < FILE` | {:.2} s | {:.2} s | {:.0} MiB/s | | |",
        redact_best.as_secs_f64(),
        redact_med.as_secs_f64(),
        mb_s(bytes, redact_best)
    );
    let cost = 1.0 - baton_best.as_secs_f64() / redact_best.as_secs_f64();
    println!(
        "redaction of every byte costs {:.1} % of mask's throughput (best rounds; median {:.1} %); target ≤ 10 %",
        cost * 100.0,
        (1.0 - baton_med.as_secs_f64() / redact_med.as_secs_f64()) * 100.0
    );
    let pass = ratio_best >= 0.7 && baton_rss <= 32 * 1024 && cost <= 0.10;
    println!("{}", if pass { "PASS" } else { "FAIL" });
    if !pass {
        std::process::exit(1);
    }
}

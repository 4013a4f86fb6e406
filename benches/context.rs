//! Whole-process benchmarks of the context commands against minimal programs doing only the
//! unavoidable work (see docs/BENCHMARKS-context.md):
//!   baton tokens FILE (10 MB)              vs examples/count_tokens (read + bpe-openai count)
//!   baton extract FILE --section T (1 MB)  vs examples/cmark_parse  (read + full pulldown-cmark parse)
//! Runs alternate between the two programs and the median wall time is compared, so load from
//! other processes on the machine hits both sides alike.
//!
//! Reproduce: cargo build --release --examples && cargo bench --bench context

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus")
}

/// Concatenate the files of `dir` (those `keep` accepts) until at least `size` bytes.
fn build_input(dir: &Path, keep: impl Fn(&str) -> bool, size: usize) -> String {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the corpus must be beside the repo)",
                dir.display()
            )
        })
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(&keep))
        .collect();
    names.sort();
    let texts: Vec<String> = names
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    assert!(!texts.is_empty(), "no input files in {}", dir.display());
    let mut out = String::with_capacity(size + 1_000_000);
    while out.len() < size {
        for t in &texts {
            out.push_str(t);
            out.push('\n');
        }
    }
    out
}

fn time(cmd: &[&Path], args: &[&str]) -> (Duration, String) {
    let start = Instant::now();
    let out = Command::new(cmd[0])
        .args(args)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", cmd[0].display()));
    let took = start.elapsed();
    assert!(out.status.success(), "{} failed", cmd[0].display());
    (took, String::from_utf8_lossy(&out.stdout).into_owned())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

struct Row {
    name: &'static str,
    ours: Duration,
    floor: Duration,
    /// The same two programs on a tiny input: process start-up alone.
    ours_start: Duration,
    floor_start: Duration,
}

fn compare(
    name: &'static str,
    runs: usize,
    baton: (&Path, Vec<&str>),
    floor: (&Path, Vec<&str>),
    tiny: (Vec<&str>, Vec<&str>),
    check: impl Fn(&str, &str),
) -> Row {
    // One warm-up each (page cache, dynamic loader), then alternate.
    let (_, a) = time(&[baton.0], &baton.1);
    let (_, b) = time(&[floor.0], &floor.1);
    check(&a, &b);
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        ours.push(time(&[baton.0], &baton.1).0);
        base.push(time(&[floor.0], &floor.1).0);
    }
    let (mut ours_start, mut floor_start) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        ours_start.push(time(&[baton.0], &tiny.0).0);
        floor_start.push(time(&[floor.0], &tiny.1).0);
    }
    Row {
        name,
        ours: median(ours),
        floor: median(base),
        ours_start: median(ours_start),
        floor_start: median(floor_start),
    }
}

fn main() {
    // `cargo bench` passes --bench; a plain run with a filter is not supported, run everything.
    let exe = std::env::current_exe().expect("current exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let examples = profile_dir.join("examples");
    let count_tokens = examples.join("count_tokens");
    let cmark_parse = examples.join("cmark_parse");
    for p in [&count_tokens, &cmark_parse] {
        if !p.exists() {
            eprintln!(
                "{} is missing: run `cargo build --release --examples` first",
                p.display()
            );
            std::process::exit(1);
        }
    }
    let baton = PathBuf::from(env!("CARGO_BIN_EXE_baton"));
    let tmp = tempfile::tempdir().expect("tempdir");
    // A project of its own, so no baton.toml of the machine is read.
    // A `.git` folder is a repository's top only when it holds HEAD (config::is_repo_top).
    std::fs::create_dir(tmp.path().join(".git")).expect("mkdir");
    std::fs::write(tmp.path().join(".git/HEAD"), "ref: refs/heads/main\n").expect("write");

    let tokens_in = tmp.path().join("ten-mb.txt");
    let text = build_input(&corpus().join("tokens/files"), |_| true, 10 * 1024 * 1024);
    std::fs::write(&tokens_in, &text).expect("write");
    let md_in = tmp.path().join("one-mb.md");
    let mut md = build_input(
        &corpus().join("markdown"),
        |n| n.ends_with(".md"),
        1024 * 1024,
    );
    // The section asked for is at the very end: the whole document must be parsed to find it.
    md.push_str("\n## Bench Target\nThe section baton extracts.\n");
    std::fs::write(&md_in, &md).expect("write");
    let mib = |n: usize| n as f64 / (1024.0 * 1024.0);

    let tiny_in = tmp.path().join("tiny.md");
    std::fs::write(&tiny_in, "# Bench Target\nx\n").expect("write");
    let tiny = tiny_in.to_str().expect("utf-8 path");
    let t = tokens_in.to_str().expect("utf-8 path");
    let m = md_in.to_str().expect("utf-8 path");
    let rows = vec![
        compare(
            "tokens (o200k_base)",
            7,
            (&baton, vec!["tokens", t]),
            (&count_tokens, vec![t]),
            (vec!["tokens", tiny], vec![tiny]),
            |a, b| {
                let ours = a.split_whitespace().next().unwrap_or("");
                assert_eq!(ours, b.trim(), "baton and bpe-openai disagree");
            },
        ),
        compare(
            "extract --section",
            31,
            (&baton, vec!["extract", m, "--section", "Bench Target"]),
            (&cmark_parse, vec![m]),
            (
                vec!["extract", tiny, "--section", "Bench Target"],
                vec![tiny],
            ),
            |a, _| assert!(a.starts_with("## Bench Target"), "{a}"),
        ),
    ];
    println!(
        "inputs: tokens {:.1} MiB, extract {:.2} MiB; {} cores",
        mib(text.len()),
        mib(md.len()),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "{:<22} {:>10} {:>10} {:>7} | {:>13} {:>13} {:>10}",
        "command", "baton", "floor", "ratio", "start baton", "start floor", "work ratio"
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let mut worst: f64 = 0.0;
    for r in &rows {
        let ratio = r.ours.as_secs_f64() / r.floor.as_secs_f64();
        // Work alone: each program's time minus its own start-up on a tiny input.
        let work = (ms(r.ours) - ms(r.ours_start)) / (ms(r.floor) - ms(r.floor_start)).max(1e-3);
        worst = worst.max(ratio);
        println!(
            "{:<22} {:>8.1}ms {:>8.1}ms {:>6.2}x | {:>11.2}ms {:>11.2}ms {:>9.2}x",
            r.name,
            ms(r.ours),
            ms(r.floor),
            ratio,
            ms(r.ours_start),
            ms(r.floor_start),
            work
        );
    }
    println!(
        "{} (goal: every ratio within 1.2x)",
        if worst <= 1.2 { "PASS" } else { "OVER" }
    );
}

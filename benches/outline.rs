//! Whole-process benchmark of `baton outline` against Universal Ctags on the same 1 MB file
//! (the corpus's real Rust sources concatenated, then its Python sources), plus the token
//! cost of the outline of every real source file of the corpus (see
//! docs/BENCHMARKS-outline.md). Runs alternate between the programs; medians (p50) of wall
//! and of CPU time (user + system, all threads: baton parses on two) are compared, so load
//! from other processes on the shared machine hits both sides alike.
//!
//! Reproduce: cargo bench --bench outline
//! (`cargo test --benches` runs this without `--bench`: it then does nothing.)

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const ROUNDS: usize = 21;
const SIZE: usize = 1 << 20;

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/tokens/files")
}

fn sources(ext: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(corpus())
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (the corpus must be beside the repo)",
                corpus().display()
            )
        })
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ext.contains(&e))
        })
        .collect();
    v.sort();
    v
}

/// User + system CPU time of all waited-for children so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// Wall time and CPU time (all threads, user + system) of one run.
fn run(program: &Path, args: &[&str]) -> (Duration, Duration) {
    let cpu = children_cpu();
    let start = Instant::now();
    let st = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let took = start.elapsed();
    assert!(st.success(), "{} {args:?} failed", program.display());
    (took, children_cpu() - cpu)
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let baton = PathBuf::from(env!("CARGO_BIN_EXE_baton"));

    // 1. Token cost of outlines on the corpus's real source files.
    println!("## outline tokens vs file tokens (o200k_base)\n");
    println!("| file | file tokens | outline tokens | ratio |");
    println!("|---|---:|---:|---:|");
    let files = sources(&["rs", "py", "ts", "tsx", "js", "go"]);
    let mut args: Vec<String> = vec!["outline".into(), "--json".into()];
    args.extend(files.iter().map(|f| f.to_string_lossy().into_owned()));
    let out = Command::new(&baton)
        .args(&args)
        .output()
        .expect("baton outline");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("outline json");
    for f in v["files"].as_array().into_iter().flatten() {
        let (t, o) = (
            f["tokens"].as_f64().unwrap_or(0.0),
            f["outline_tokens"].as_f64().unwrap_or(0.0),
        );
        let name = f["file"]
            .as_str()
            .unwrap_or("")
            .rsplit('/')
            .next()
            .unwrap_or("");
        println!("| {name} | {t} | {o} | {:.1}% |", 100.0 * o / t.max(1.0));
    }
    let (t, o) = (
        v["tokens"].as_f64().unwrap_or(0.0),
        v["outline_tokens"].as_f64().unwrap_or(0.0),
    );
    println!("| **all** | {t} | {o} | {:.1}% |\n", 100.0 * o / t.max(1.0));

    // 2. Speed on a 1 MB source file.
    let has_ctags = Command::new("ctags")
        .arg("--version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Universal Ctags"));
    if !has_ctags {
        println!("ctags (Universal Ctags) not installed: speed comparison skipped");
        return;
    }
    // Rust gets its function bodies skipped in the parse; Python shows the parse without that.
    for (lang, ext) in [("Rust", "rs"), ("Python", "py")] {
        speed(&baton, lang, ext);
    }
}

fn speed(baton: &Path, lang: &str, ext: &str) {
    let mut text = String::new();
    let files = sources(&[ext]);
    while text.len() < SIZE {
        for f in &files {
            text.push_str(&std::fs::read_to_string(f).expect("read corpus file"));
            text.push('\n');
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join(format!("big.{ext}"));
    std::fs::write(&file, &text).expect("write input");
    let f = file.to_string_lossy().into_owned();
    let ctags = PathBuf::from("ctags");
    let ctags_args = [
        "--output-format=json",
        "--fields=+nKe",
        "-f",
        "-",
        f.as_str(),
    ];
    let sides: [(&str, &Path, Vec<&str>); 4] = [
        ("baton outline FILE", baton, vec!["outline", f.as_str()]),
        (
            "baton outline FILE --json",
            baton,
            vec!["outline", f.as_str(), "--json"],
        ),
        (
            "baton outline FILE --exact-tokens",
            baton,
            vec!["outline", f.as_str(), "--exact-tokens"],
        ),
        (
            "ctags --output-format=json --fields=+nKe",
            &ctags,
            ctags_args.to_vec(),
        ),
    ];
    for (_, p, a) in &sides {
        run(p, a); // warm the page cache and the binaries
    }
    let mut wall: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    let mut cpu: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    for _ in 0..ROUNDS {
        for (i, (_, p, a)) in sides.iter().enumerate() {
            let (w, c) = run(p, a);
            wall[i].push(w);
            cpu[i].push(c);
        }
    }
    println!(
        "## speed: {} bytes of {lang}, {ROUNDS} interleaved rounds, p50 wall and CPU (user + sys) time\n",
        text.len()
    );
    println!("| command | p50 wall ms | vs ctags | p50 CPU ms | vs ctags |");
    println!("|---|---:|---:|---:|---:|");
    let last = sides.len() - 1;
    let (cw, cc) = (p50(wall[last].clone()), p50(cpu[last].clone()));
    for (i, (name, _, _)) in sides.iter().enumerate() {
        let (w, c) = (p50(wall[i].clone()), p50(cpu[i].clone()));
        println!(
            "| {name} | {:.1} | {:.2}x | {:.1} | {:.2}x |",
            ms(w),
            ms(w) / ms(cw),
            ms(c),
            ms(c) / ms(cc).max(0.001)
        );
    }
    println!();
}

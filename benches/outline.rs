//! Whole-process benchmark of `baton outline` against Universal Ctags on the same 1 MB Rust
//! file (the corpus's real ripgrep sources, concatenated), plus the token cost of the
//! outline of every real source file of the corpus (see docs/BENCHMARKS-outline.md).
//! Runs alternate between the two programs; medians (p50) are compared, so load from other
//! processes on the shared machine hits both sides alike.
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

fn run(program: &Path, args: &[&str]) -> Duration {
    let start = Instant::now();
    let st = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    let took = start.elapsed();
    assert!(st.success(), "{} {args:?} failed", program.display());
    took
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
    let mut text = String::new();
    let rs = sources(&["rs"]);
    while text.len() < SIZE {
        for f in &rs {
            text.push_str(&std::fs::read_to_string(f).expect("read corpus file"));
            text.push('\n');
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("big.rs");
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
    let sides: [(&str, &Path, Vec<&str>); 3] = [
        ("baton outline FILE", &baton, vec!["outline", f.as_str()]),
        (
            "baton outline FILE --json",
            &baton,
            vec!["outline", f.as_str(), "--json"],
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
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); sides.len()];
    for _ in 0..ROUNDS {
        for (i, (_, p, a)) in sides.iter().enumerate() {
            times[i].push(run(p, a));
        }
    }
    println!(
        "## speed: {} bytes of Rust, {ROUNDS} interleaved rounds, p50 wall time\n",
        text.len()
    );
    println!("| command | p50 ms | vs ctags |");
    println!("|---|---:|---:|");
    let c = p50(times[2].clone());
    for (i, (name, _, _)) in sides.iter().enumerate() {
        let m = p50(times[i].clone());
        println!("| {name} | {:.1} | {:.2}x |", ms(m), ms(m) / ms(c));
    }
}

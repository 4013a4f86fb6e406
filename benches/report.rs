//! Report benchmark: `baton report` of a synthetic verify run of 400 items × 5 phases (2,000
//! phase attempts, every prompt and log on disk, a failed attempt and its retry every 7th item,
//! a rotation every 10th, 200 masked outputs). Whole processes, the median of N.
//! Targets: under 1 s and under 5 MB.
//!
//!     cargo bench --bench report            # BATON_BENCH_N=9 for more samples

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const ITEMS: usize = 400;
const PHASES: [&str; 5] = ["ground-truth", "extract", "compare", "verify", "summary"];
const RUN: &str = "20260101T000000-bbbbbb";

fn baton() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

fn ts(ms: u64) -> String {
    jiff::Timestamp::from_millisecond(1_767_225_600_000 + ms as i64)
        .expect("ts")
        .to_string()
}

/// Writes the run; returns how many phase attempts it holds.
fn synthesize(project: &Path) -> usize {
    let dir = project.join(".baton/runs").join(RUN);
    std::fs::create_dir_all(dir.join("prompts")).expect("dir");
    std::fs::create_dir_all(dir.join("logs")).expect("dir");
    let scratch = project.join(".baton/scratch");
    std::fs::create_dir_all(&scratch).expect("dir");
    let mut j = String::new();
    let mut masks = String::new();
    let mut seq = 0;
    let mut line = |j: &mut String, ms: u64, body: String| {
        seq += 1;
        writeln!(j, r#"{{"v":2,"seq":{seq},"ts":"{}",{body}}}"#, ts(ms)).expect("fmt");
    };
    line(
        &mut j,
        0,
        r#""event":"run_started","run_id":"RUN","workflow":"verify","subjects":["bench"],"options":{}"#
            .replace("RUN", RUN),
    );
    let (mut t, mut phases) = (1u64, 0);
    for i in 0..ITEMS {
        let item = format!("ITEM{i:04}");
        let subject = format!(r#""subject":{{"kind":"item","id":"{item}"}}"#);
        let mut attempts: Vec<(&str, u32, bool)> = PHASES.iter().map(|p| (*p, 1, true)).collect();
        if i % 7 == 3 {
            attempts.insert(2, ("compare", 1, false));
            attempts[3].1 = 2;
        }
        for (phase, attempt, ok) in attempts {
            let label = format!("{item}-{phase}-{attempt}");
            line(
                &mut j,
                t,
                format!(
                    r#""event":"phase_started",{subject},"phase":"{phase}","attempt":{attempt}"#
                ),
            );
            let dur = 40_000 + (i as u64 * 7919 + phase.len() as u64 * 131) % 90_000;
            t += dur;
            let (judged, detail) = if ok {
                (
                    "passed",
                    format!("summary block valid: 12 claims checked for {item}, 0 contradictions"),
                )
            } else {
                (
                    "malformed",
                    "the summary block's Findings table has no separator row (line 14)".into(),
                )
            };
            line(
                &mut j,
                t,
                format!(
                    r#""event":"phase_finished",{subject},"phase":"{phase}","attempt":{attempt},"outcome":{{"ok":{ok},"detail":"{detail}","usage":{{"input":9000,"cache_creation":1200,"cache_read":30000,"output":2100}},"cost_usd":0.0912,"duration_ms":{dur},"session_id":"s-{phases}","prompt_tokens":7400,"log":"{}","judged":"{judged}","budget":20000,"label":"{label}"}}"#,
                    dir.join("logs").join(format!("{label}.log")).display()
                ),
            );
            std::fs::write(dir.join("prompts").join(format!("{label}.md")), "prompt\n")
                .expect("prompt");
            std::fs::write(dir.join("logs").join(format!("{label}.log")), "{}\n").expect("log");
            if phase == "extract" && i % 2 == 0 {
                let f = scratch.join(format!("{label}-pytest.log"));
                std::fs::write(&f, "out\n").expect("scratch");
                writeln!(
                    masks,
                    r#"{{"v":1,"ts":"{}","phase":"{label}","command":"pytest","scratch":"{}","tokens":48000,"tokens_estimated":false,"masked_tokens":210}}"#,
                    ts(t),
                    f.display()
                )
                .expect("fmt");
            }
            phases += 1;
            t += 50;
        }
        if i % 10 == 9 {
            line(
                &mut j,
                t,
                format!(
                    r#""event":"rotated","item":"{item}","after_phase":"verify","next_phase":"summary","reason":"estimate over threshold","estimate":121000,"threshold":120000,"reset_to":9000,"state_file":"x","state_tokens":900"#
                ),
            );
        }
        line(
            &mut j,
            t,
            format!(r#""event":"subject_finished",{subject},"result":"done""#),
        );
    }
    line(
        &mut j,
        t,
        r#""event":"run_finished","done":400,"failed":0,"skipped":0"#.into(),
    );
    std::fs::write(dir.join("events.jsonl"), j).expect("journal");
    std::fs::write(dir.join("masks.jsonl"), masks).expect("masks");
    phases
}

fn main() {
    let n: usize = std::env::var("BATON_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let tmp = tempfile::tempdir().expect("tmp");
    let project = tmp.path().join("p");
    std::fs::create_dir_all(&project).expect("dir");
    Command::new("git")
        .args(["init", "-q"])
        .current_dir(&project)
        .status()
        .expect("git");
    let phases = synthesize(&project);
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let t = Instant::now();
            let o = Command::new(baton())
                .args(["report", RUN])
                .current_dir(&project)
                .output()
                .expect("baton report");
            let took = t.elapsed();
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            took
        })
        .collect();
    times.sort();
    let median = times[n / 2];
    let file = project.join(".baton/runs").join(RUN).join("report.html");
    let bytes = std::fs::metadata(&file).expect("report").len();
    let html = std::fs::read_to_string(&file).expect("report");
    assert_eq!(html.matches("<tr id=\"p").count(), phases);
    println!(
        "report of {phases} phase attempts: median {:.0} ms (min {:.0}, max {:.0}) of {n} runs, {:.2} MB ({} bytes/phase)",
        median.as_secs_f64() * 1000.0,
        times[0].as_secs_f64() * 1000.0,
        times[n - 1].as_secs_f64() * 1000.0,
        bytes as f64 / 1e6,
        bytes / phases as u64
    );
    let ok = median < Duration::from_secs(1) && bytes < 5_000_000;
    println!(
        "targets < 1 s and < 5 MB: {}",
        if ok { "met" } else { "MISSED" }
    );
    if !ok {
        std::process::exit(1);
    }
}

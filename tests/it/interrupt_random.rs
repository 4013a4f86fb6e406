//! Runs of every engine interrupted at random moments — SIGKILL of baton's whole process group
//! (a crash, an OOM kill) or SIGINT to it (Ctrl-C) — 1 to 3 times each, then resumed with
//! `baton run --resume ID` alone until they finish, and compared with an uninterrupted run of
//! the same scenario: every story committed exactly once in the same order, no finished agent
//! call made again, no file committed that the clean run did not commit, one stash per failed
//! story, no verify output with a section written twice (its agent appends), no lock or temp
//! file left, no hand repair.
//!
//! The moments come from a seed printed with every run (`BATON_KILL_SEED=S` replays it);
//! `BATON_KILL_RUNS=N` runs N interrupted runs per engine instead of the default few (a soak:
//! anomalies are collected and listed at the end, with their seeds).

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::RngExt;
use proptest::test_runner::{RngAlgorithm, TestRng};
use serde_json::Value;

use crate::util::assert_exit;
use crate::util::{bin, git, text};

/// Interrupted runs per engine in the normal suite.
const DEFAULT_RUNS: usize = 2;
/// Resumes a run may need after its last interruption (each one must make progress).
const MAX_RESUMES: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Engine {
    EpicParty,
    EpicParallel,
    Orchestrate,
    Verify,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::EpicParty => "epic-execute --party-all",
            Engine::EpicParallel => "epic-execute --parallel 2",
            Engine::Orchestrate => "orchestrate with gates",
            Engine::Verify => "verify queue",
        }
    }

    /// A fresh project for this engine, ready for its first `baton run`.
    fn project(self) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        match self {
            Engine::EpicParty | Engine::EpicParallel => {
                let scenario = "latency_ms = 40\n[story.\"1.2\"]\nreview = [\"fail\", \"pass\"]\n[story.\"1.3\"]\ndev = [\"block\"]\n";
                crate::util::demo_repo(&dir, scenario);
                // A user's file, dirty before the run: never a story's work.
                std::fs::write(dir.join("notes.txt"), "the user's own\n").unwrap();
            }
            Engine::Orchestrate => {
                std::fs::create_dir_all(dir.join(".baton")).unwrap();
                git(&dir, &["init", "-q"]);
                std::fs::write(
                    dir.join(".baton/sim.toml"),
                    "latency_ms = 40\n[task]\nspec = [\"tasks=3 deps=3:1+2\"]\n",
                )
                .unwrap();
                let o = cmd(
                    &dir,
                    &["task", "init", "Add login", "--workflow", "orchestrate"],
                )
                .output()
                .unwrap();
                assert!(o.status.success(), "{}", text(&o));
            }
            Engine::Verify => {
                std::fs::create_dir_all(dir.join(".baton")).unwrap();
                git(&dir, &["init", "-q"]);
                // Its agent appends section after section, pausing between them.
                std::fs::write(
                    dir.join(".baton/sim.toml"),
                    "latency_ms = 20\nappend_ms = 15\n",
                )
                .unwrap();
                let o = cmd(&dir, &["queue", "add", "q", "BMNR", "MARA", "XXI"])
                    .output()
                    .unwrap();
                assert!(o.status.success(), "{}", text(&o));
            }
        }
        Project { _tmp: tmp, dir }
    }

    fn start_args(self) -> Vec<&'static str> {
        match self {
            Engine::EpicParty => vec!["run", "epic-execute", "1", "--agent", "sim", "--party-all"],
            Engine::EpicParallel => {
                vec![
                    "run",
                    "epic-execute",
                    "1",
                    "--agent",
                    "sim",
                    "--parallel",
                    "2",
                ]
            }
            Engine::Orchestrate => {
                vec![
                    "run",
                    "orchestrate",
                    "add-login",
                    "--agent",
                    "sim",
                    "--no-wait",
                ]
            }
            Engine::Verify => vec!["run", "verify", "--queue", "q", "--agent", "sim"],
        }
    }
}

fn cmd(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(dir)
        .env_remove("BATON_AGENT_SIM")
        .stdin(Stdio::null());
    c
}

struct Project {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

impl Project {
    fn run_dirs(&self) -> Vec<PathBuf> {
        let Ok(rd) = std::fs::read_dir(self.dir.join(".baton/runs")) else {
            return Vec::new();
        };
        // A run being started is made under a temp name and appears whole (Journal::start).
        let mut all: Vec<PathBuf> = rd
            .map(|e| e.unwrap().path())
            .filter(|p| {
                !p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(".baton-tmp-")
            })
            .collect();
        all.sort();
        all
    }

    fn run_id(&self) -> Option<String> {
        self.run_dirs()
            .first()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
    }

    fn events(&self) -> Vec<Value> {
        self.run_dirs()
            .iter()
            .flat_map(|r| {
                std::fs::read_to_string(r.join("events.jsonl"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    fn manifest(&self) -> Value {
        let p = self
            .dir
            .join("docs/orchestrator/context/tasks/add-login/manifest.json");
        std::fs::read_to_string(p)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or(Value::Null)
    }

    /// The decision the open gate gets (orchestrate), if one is open.
    fn open_gate(&self) -> Option<&'static str> {
        let m = self.manifest();
        if m["status"] != "waiting_gate" {
            return None;
        }
        Some(match m["gate_context"]["gate"].as_str() {
            Some("investigation") => "full",
            _ => "approve",
        })
    }
}

/// What a finished run came to, to compare with the clean run's.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    /// Commit subjects on the run's branch, oldest first.
    commits: Vec<String>,
    /// Every path any of those commits touched.
    committed: BTreeSet<String>,
    /// Stashes of failed stories.
    failed_stashes: usize,
    /// subject/phase of every call that passed.
    passed: Vec<String>,
    /// Each engine's own end state (story statuses, task phases, item states).
    end: Vec<String>,
}

fn outcome(e: Engine, p: &Project) -> Outcome {
    let d = &p.dir;
    let (commits, committed, failed_stashes) = match e {
        Engine::EpicParty | Engine::EpicParallel => {
            let mut commits: Vec<String> = git(d, &["log", "--format=%s", "main..HEAD"])
                .lines()
                .map(str::to_string)
                .collect();
            commits.reverse();
            let committed = git(d, &["log", "--name-only", "--format=", "main..HEAD"])
                .lines()
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect();
            let stashes = git(d, &["stash", "list", "--format=%s"])
                .lines()
                .filter(|l| l.contains(": story ") && l.ends_with(" failed"))
                .count();
            (commits, committed, stashes)
        }
        _ => (Vec::new(), BTreeSet::new(), 0),
    };
    let mut passed: Vec<String> = p
        .events()
        .iter()
        .filter(|e| e["event"] == "phase_finished" && e["outcome"]["ok"] == true)
        .map(|e| format!("{}/{}", e["subject"], e["phase"]))
        .collect();
    passed.sort();
    let end = match e {
        Engine::EpicParty | Engine::EpicParallel => ["1.1", "1.2", "1.3", "1.4"]
            .iter()
            .map(|id| {
                let s = story(d, id);
                let status = s.lines().find(|l| l.starts_with("Status:")).unwrap_or("");
                let kickoffs = s.matches("## Story Kickoff Insights").count();
                format!("{id} {status} kickoffs={kickoffs}")
            })
            .collect(),
        Engine::Orchestrate => {
            let m = p.manifest();
            let mut v = vec![format!("status {}", m["status"])];
            let mut phases: Vec<String> = m["completed_phases"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| format!("{}#{}", c["phase"], c["task_id"]))
                .collect();
            phases.sort();
            v.extend(phases);
            let log = std::fs::read_to_string(
                d.join("docs/orchestrator/context/tasks/add-login/events.jsonl"),
            )
            .unwrap_or_default();
            let mut gates: Vec<String> = log
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter(|e| e["event"] == "gate_set")
                .map(|e| format!("gate {}", e["gate"]))
                .collect();
            gates.sort();
            v.extend(gates);
            v
        }
        Engine::Verify => ["BMNR", "MARA", "XXI"]
            .iter()
            .map(|item| {
                let dir = d.join(".baton/queues/q/items").join(item);
                let st: Value = std::fs::read_to_string(dir.join("verification-state.json"))
                    .ok()
                    .and_then(|s| serde_json::from_str(&s).ok())
                    .unwrap_or(Value::Null);
                let mut files: Vec<String> = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                files.sort();
                // Each output file as the clean run wrote it: an interrupted phase re-run
                // from the item's files as they were, so no section is written twice.
                let outputs: Vec<String> = files
                    .iter()
                    .filter(|f| f.ends_with(".md"))
                    .map(|f| {
                        let text = std::fs::read_to_string(dir.join(f)).unwrap_or_default();
                        let sections: Vec<&str> =
                            text.lines().filter(|l| l.starts_with("## ")).collect();
                        let unique: BTreeSet<&&str> = sections.iter().collect();
                        format!(
                            "{f}: {} lines, {} sections written twice",
                            text.lines().count(),
                            sections.len() - unique.len()
                        )
                    })
                    .collect();
                format!("{item} {} files={files:?} {outputs:?}", st["status"])
            })
            .collect(),
    };
    Outcome {
        commits,
        committed,
        failed_stashes,
        passed,
        end,
    }
}

fn story(dir: &Path, id: &str) -> String {
    std::fs::read_to_string(crate::util::demo_story_path(dir, id)).unwrap()
}

/// Debris a killed run must not leave: git's index lock, baton's temp files.
fn debris(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if dir.join(".git/index.lock").exists() {
        found.push(".git/index.lock".to_string());
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name == ".git" {
                continue;
            }
            let p = e.path();
            // The manifest's spare (`fs::replace_with_spare`) stays on purpose.
            if name.starts_with(".baton-tmp-") && !name.starts_with(".baton-tmp-spare-") {
                found.push(p.strip_prefix(dir).unwrap().display().to_string());
            }
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            }
        }
    }
    found
}

/// Phase calls that finished more than once (subject/phase/attempt).
fn repeated_calls(p: &Project) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut twice = Vec::new();
    for e in p.events() {
        if e["event"] == "phase_finished" {
            let k = format!("{}/{}/{}", e["subject"], e["phase"], e["attempt"]);
            if !seen.insert(k.clone()) {
                twice.push(k);
            }
        }
    }
    twice
}

#[derive(Default, Debug)]
struct Tally {
    runs: usize,
    sigkill: usize,
    sigint: usize,
    resumes: usize,
    anomalies: Vec<String>,
}

fn spawn(dir: &Path, args: &[&str]) -> Child {
    cmd(dir, args)
        // Its own group, as a shell's job is: the signal reaches baton and whatever it runs
        // in that group.
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Run `args` to its end: its exit code and output.
fn finish(p: &Project, args: &[&str]) -> (Option<i32>, String) {
    let o = cmd(&p.dir, args).output().unwrap();
    (o.status.code(), text(&o))
}

/// The command that continues the run (the first run starts it).
fn next_args(e: Engine, p: &Project) -> Vec<String> {
    match p.run_id() {
        None => e.start_args().iter().map(|s| s.to_string()).collect(),
        Some(id) => {
            let mut v = vec!["run".to_string(), "--resume".to_string(), id];
            if e == Engine::Orchestrate {
                v.push("--no-wait".into());
            }
            v
        }
    }
}

/// Whether the run is over: its journal ends the run and (orchestrate) the task completed.
fn done(e: Engine, p: &Project) -> bool {
    match e {
        Engine::Orchestrate => p.manifest()["status"] == "completed",
        _ => p
            .events()
            .last()
            .is_some_and(|ev| ev["event"] == "run_finished"),
    }
}

/// Give the open gate its decision, as a human would between two runs.
fn decide(p: &Project) -> Result<(), String> {
    if let Some(d) = p.open_gate() {
        let o = cmd(&p.dir, &["resume", "--task", "add-login", "--decision", d])
            .output()
            .unwrap();
        if !o.status.success() {
            return Err(format!("decision {d} refused: {}", text(&o)));
        }
    }
    Ok(())
}

/// A clean run: its outcome and how long one invocation of `baton run` took, on average.
fn clean(e: Engine) -> (Outcome, Duration) {
    let p = e.project();
    let t = Instant::now();
    let mut invocations = 0;
    for _ in 0..10 {
        if done(e, &p) {
            break;
        }
        decide(&p).unwrap();
        let args = next_args(e, &p);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = finish(&p, &args);
        invocations += 1;
        assert!(code.is_some_and(|c| c <= 1), "clean {}: {out}", e.name());
    }
    assert!(done(e, &p), "the clean {} run never finished", e.name());
    (outcome(e, &p), t.elapsed() / invocations)
}

/// One run interrupted `k` times at moments drawn from `seed`, then resumed until it ends.
fn interrupted(e: Engine, seed: u64, want: &Outcome, span: Duration, tally: &mut Tally) {
    let mut rng = TestRng::from_seed(RngAlgorithm::ChaCha, &seed_bytes(seed));
    let p = e.project();
    let k = rng.random_range(1..=3usize);
    let mut hits = Vec::new();
    let mut anomaly = |what: String, hits: &[String]| {
        tally
            .anomalies
            .push(format!("{} seed {seed} after {hits:?}: {what}", e.name()));
    };
    tally.runs += 1;
    let mut steps = 0;
    // Whether the last invocation was stopped by a signal (no resume after it yet).
    let mut stopped_last = false;
    while !done(e, &p) {
        steps += 1;
        if steps > k + MAX_RESUMES {
            anomaly("the run never finished (hand repair needed)".into(), &hits);
            return;
        }
        if let Err(why) = decide(&p) {
            anomaly(why, &hits);
            return;
        }
        let args = next_args(e, &p);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        if hits.len() < k {
            let delay = Duration::from_millis(rng.random_range(0..span.as_millis() as u64 + 1));
            let sig = if rng.random_bool(0.5) {
                libc::SIGKILL
            } else {
                libc::SIGINT
            };
            let mut child = spawn(&p.dir, &args);
            let t = Instant::now();
            while t.elapsed() < delay && child.try_wait().unwrap().is_none() {
                std::thread::sleep(Duration::from_millis(2));
            }
            if child.try_wait().unwrap().is_none() {
                // SAFETY: kill(2) of the child's own process group.
                unsafe {
                    libc::kill(-(child.id() as i32), sig);
                }
                let name = if sig == libc::SIGKILL {
                    "SIGKILL"
                } else {
                    "SIGINT"
                };
                hits.push(format!("{name}@{}ms", delay.as_millis()));
                stopped_last = true;
                if sig == libc::SIGKILL {
                    tally.sigkill += 1;
                } else {
                    tally.sigint += 1;
                }
            } else {
                // It ended before the moment came: the draw is spent, the next one tries.
                hits.push(format!("none@{}ms", delay.as_millis()));
            }
            let o = child.wait_with_output().unwrap();
            if sig == libc::SIGINT
                && let Some(c) = o.status.code()
                && c > 1
                && c != 130
            {
                anomaly(format!("exit {c} after SIGINT: {}", text(&o)), &hits);
                return;
            }
            continue;
        }
        tally.resumes += 1;
        stopped_last = false;
        let (code, out) = finish(&p, &args);
        if code.is_none_or(|c| c > 1) {
            anomaly(format!("resume exited {code:?}: {out}"), &hits);
            return;
        }
    }
    if stopped_last {
        // The signal came after the run's last event: its user cannot tell and resumes it,
        // which says the run is over and removes what the signal cut short.
        let args = next_args(e, &p);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out) = finish(&p, &args);
        if code.is_none_or(|c| c > 1) && !out.contains("already finished") {
            anomaly(
                format!("resume of the finished run exited {code:?}: {out}"),
                &hits,
            );
            return;
        }
    }
    let got = outcome(e, &p);
    if &got != want {
        let failed: Vec<String> = p
            .events()
            .iter()
            .filter(|e| e["event"] == "phase_finished" && e["outcome"]["ok"] == false)
            .map(|e| {
                format!(
                    "{} {} {}: {}",
                    e["subject"]["id"], e["phase"], e["attempt"], e["outcome"]["detail"]
                )
            })
            .collect();
        anomaly(
            format!(
                "differs from the clean run:\n got {got:?}\nwant {want:?}\nfailed calls: {failed:?}"
            ),
            &hits,
        );
    }
    let twice = repeated_calls(&p);
    if !twice.is_empty() {
        anomaly(format!("finished calls made again: {twice:?}"), &hits);
    }
    let left = debris(&p.dir);
    if !left.is_empty() {
        anomaly(format!("left behind: {left:?}"), &hits);
    }
}

/// ChaCha's 32-byte seed (a stream cipher: neighbouring seeds draw unrelated moments).
fn seed_bytes(seed: u64) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[..8].copy_from_slice(&seed.to_le_bytes());
    b
}

fn soak(e: Engine) {
    let runs: usize = std::env::var("BATON_KILL_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_RUNS);
    let base: u64 = std::env::var("BATON_KILL_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
                % 1_000_000_007
        });
    let (want, took) = clean(e);
    eprintln!(
        "interrupt_random {}: seed {base} (BATON_KILL_SEED={base} replays it), one invocation of the clean run {took:?}",
        e.name()
    );
    let mut tally = Tally::default();
    for i in 0..runs {
        interrupted(e, base + i as u64, &want, took, &mut tally);
    }
    eprintln!(
        "interrupt_random {}: {} runs, {} interruptions ({} SIGKILL, {} SIGINT), {} resumes, {} anomalies",
        e.name(),
        tally.runs,
        tally.sigkill + tally.sigint,
        tally.sigkill,
        tally.sigint,
        tally.resumes,
        tally.anomalies.len()
    );
    assert!(
        tally.anomalies.is_empty(),
        "{} anomalies:\n{}",
        tally.anomalies.len(),
        tally.anomalies.join("\n")
    );
}

#[test]
fn epic_with_party_phases_survives_random_kills() {
    soak(Engine::EpicParty);
}

#[test]
fn parallel_epic_survives_random_kills() {
    soak(Engine::EpicParallel);
}

#[test]
fn orchestrate_with_gates_survives_random_kills() {
    soak(Engine::Orchestrate);
}

#[test]
fn verify_queue_survives_random_kills() {
    soak(Engine::Verify);
}

/// A dev call killed half-way leaves a new file and half a record in the story: resuming
/// sets both aside in one named stash (nothing lost), runs the call again from the tree as it
/// was before, and commits neither.
#[test]
fn a_killed_calls_partial_edits_are_stashed_by_name_and_never_committed() {
    let p = Engine::EpicParty.project();
    let d = &p.dir;
    let story_path = crate::util::demo_story_path(d, "1.1");
    let (id, o) = interrupt_a_hanging_call(&p, "[story.\"1.1\"]\ndev = [\"hang\"]\n", |w| {
        // The agent's half-done work where it works: a new file, and half a record in the
        // story file (whose kickoff record, from the finished kickoff phase, must stay).
        std::fs::create_dir_all(w.join("src")).unwrap();
        std::fs::write(w.join("src/half.rs"), "// half a file\n").unwrap();
        let story_path = w.join(story_path.strip_prefix(d).unwrap());
        let mut s = std::fs::read_to_string(&story_path).unwrap();
        assert!(s.contains("## Story Kickoff Insights"), "{s}");
        s.push_str("\nhalf a record of the killed call\n");
        std::fs::write(&story_path, s).unwrap();
    });
    let msg = format!("baton: partial edits of 1.1 dev attempt 1, run {id}");
    assert!(text(&o).contains(&msg), "{}", text(&o));
    let stashes = git(d, &["stash", "list", "--format=%s"]);
    assert_eq!(
        stashes.lines().filter(|l| l.ends_with(&msg)).count(),
        1,
        "{stashes}"
    );
    assert_eq!(stashes.lines().count(), 1, "{stashes}");
    // Nothing lost: the stash holds the new file and the half record.
    let rel = story_path.strip_prefix(d).unwrap().display().to_string();
    let new = git(d, &["show", "stash@{0}^3:src/half.rs"]);
    assert_eq!(new, "// half a file\n");
    let half = git(d, &["show", &format!("stash@{{0}}:{rel}")]);
    assert!(half.contains("half a record of the killed call"), "{half}");
    // Nothing of it committed; the kickoff record (a finished phase's) is, once.
    let committed = git(d, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(!committed.contains("src/half.rs"), "{committed}");
    let s = story(d, "1.1");
    assert!(!s.contains("half a record"), "{s}");
    assert_eq!(s.matches("## Story Kickoff Insights").count(), 1, "{s}");
    assert!(s.contains("Status: done"), "{s}");
    assert!(!d.join("src/half.rs").exists());
    assert_eq!(repeated_calls(&p), Vec::<String>::new());
    // The user's own file, dirty before the run, was never stashed nor committed.
    assert!(d.join("notes.txt").is_file());
    assert!(!committed.contains("notes.txt"), "{committed}");
}

/// The same for the epic's own phases: a retro call killed half-way leaves half a
/// retrospective and a stray file; resuming sets both aside in one named stash, keeps what the
/// finished UAT wrote, and commits the retro written again from a clean tree.
#[test]
fn a_killed_retro_calls_partial_edits_are_stashed_and_uat_kept() {
    let p = Engine::EpicParty.project();
    let d = &p.dir;
    let mut uat = String::new();
    let (id, o) = interrupt_a_hanging_call(&p, "[epic]\nretro = [\"hang\"]\n", |w| {
        // UAT finished before the retro started: its file is in the tree, staged.
        let staged = git(w, &["diff", "--cached", "--name-only"]);
        uat = staged
            .lines()
            .find(|l| l.contains("uat"))
            .unwrap_or_else(|| panic!("UAT's file is not staged: {staged}"))
            .to_string();
        std::fs::write(w.join("retro-half.md"), "# half a retrospective\n").unwrap();
    });
    let msg = format!("baton: partial edits of epic 1 retro attempt 1, run {id}");
    assert!(text(&o).contains(&msg), "{}", text(&o));
    let stashes = git(d, &["stash", "list", "--format=%s"]);
    assert_eq!(stashes.lines().count(), 1, "{stashes}");
    assert!(stashes.lines().all(|l| l.ends_with(&msg)), "{stashes}");
    assert_eq!(
        git(d, &["show", "stash@{0}^3:retro-half.md"]),
        "# half a retrospective\n"
    );
    assert!(!d.join("retro-half.md").exists());
    // UAT's file was not set aside: it is committed with the retro's, once.
    let docs = git(d, &["log", "-1", "--name-only", "--format=%s"]);
    assert!(docs.starts_with("docs(epic 1)"), "{docs}");
    assert!(docs.lines().any(|l| l == uat), "{docs}");
    assert!(docs.lines().any(|l| l.contains("retro")), "{docs}");
    let committed = git(d, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(!committed.contains("retro-half.md"), "{committed}");
    assert_eq!(repeated_calls(&p), Vec::<String>::new());
}

/// An epic run (`--party-all`) whose call `scenario` makes hang: once the agent has read its
/// prompt, `edit` plays its half-done work, then Ctrl-C (exit 130) and `--resume` alone, which
/// must succeed. The run's id and the resume's output.
fn interrupt_a_hanging_call(
    p: &Project,
    scenario: &str,
    edit: impl FnOnce(&Path),
) -> (String, std::process::Output) {
    let d = &p.dir;
    std::fs::write(d.join(".baton/sim.toml"), scenario).unwrap();
    let child = spawn(
        d,
        &["run", "epic-execute", "1", "--agent", "sim", "--party-all"],
    );
    let t = Instant::now();
    let pid_file = loop {
        if let Some(f) = crate::util::sim_hang_pid(d) {
            break f;
        }
        assert!(t.elapsed().as_secs() < 60, "the agent never started");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Where the agent works: `<dir>/.baton/sim-hang.pid`.
    edit(pid_file.parent().and_then(Path::parent).unwrap());
    // SAFETY: kill(2) of the child's own process group (Ctrl-C).
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 130);
    std::fs::write(d.join(".baton/sim.toml"), "").unwrap();
    let id = p.run_id().unwrap();
    let o = cmd(d, &["run", "--resume", &id]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    (id, o)
}

//! The bad-input matrix: damaged, future-version and misplaced files under every command that
//! reads them, names that try to leave their directory, and a full disk. Each case asserts the
//! exit code, the message (the file, what is wrong) and that the store is byte-identical
//! afterwards. `doctor` is the one command that repairs, and says so.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::{bin, snapshot, text};

const TASK: &str = "docs/orchestrator/context/tasks/add-login";
const RUN: &str = "20990101T000000-abcdef";

/// A project with a task (architect stored, design-audit running) and a queue.
fn project() -> tempfile::TempDir {
    let t = tempfile::tempdir().unwrap();
    let p = t.path();
    std::fs::write(p.join("baton.toml"), "").unwrap();
    std::fs::write(p.join("a.md"), "# Architecture\n\n## Edge Cases\n\nnone\n").unwrap();
    for args in [
        &["task", "init", "Add login"][..],
        &["store", "architect", "--file", "a.md"],
        &["phase", "begin", "design-audit"],
        &["queue", "add", "q", "BMNR", "MARA"],
        &["mask", "--", "echo", "hi"],
    ] {
        let o = baton(p, args);
        assert!(o.0 == Some(0), "{args:?}: {}", o.1);
    }
    t
}

/// A run journal of the queue `q`, as a verify run starts it.
fn with_journal(p: &Path) {
    let run = p.join(".baton/runs").join(RUN);
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("events.jsonl"),
        format!(
            "{{\"v\":2,\"seq\":1,\"ts\":\"2099-01-01T00:00:00Z\",\"event\":\"run_started\",\"run_id\":\"{RUN}\",\"workflow\":\"verify\",\"subjects\":[\"q\"],\"options\":{{\"queue\":\"q\"}}}}\n"
        ),
    )
    .unwrap();
}

fn baton(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let o = Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("BATON_AGENT_SIM")
        .output()
        .unwrap();
    (o.status.code(), text(&o))
}

/// Everything baton keeps: the store, `.baton/` and baton.toml.
fn state(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    snapshot(dir)
        .into_iter()
        .filter(|(p, _)| !p.starts_with("a.md"))
        .collect()
}

fn edit(dir: &Path, rel: &str, f: impl FnOnce(String) -> String) {
    let p = dir.join(rel);
    let t = std::fs::read_to_string(&p).unwrap_or_default();
    std::fs::write(&p, f(t)).unwrap();
}

fn replace_line(text: &str, n: usize, with: &str) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[n - 1] = with.to_string();
    lines.join("\n") + "\n"
}

struct Damage {
    name: &'static str,
    apply: fn(&Path),
    /// What the error must say (besides the file's name).
    says: &'static str,
    file: &'static str,
}

fn log_damages() -> Vec<Damage> {
    let events = || format!("{TASK}/events.jsonl");
    vec![
        Damage {
            name: "a future format at the tail",
            apply: |d| {
                edit(d, &format!("{TASK}/events.jsonl"), |t| {
                    t.replace("\"v\":1,\"seq\":3", "\"v\":9,\"seq\":3")
                })
            },
            says: "line 3: event format v9 is not supported",
            file: "events.jsonl",
        },
        Damage {
            name: "an unknown event at the tail",
            apply: |d| {
                edit(d, &format!("{TASK}/events.jsonl"), |t| {
                    t + "{\"v\":1,\"seq\":4,\"ts\":\"2099-01-01T00:00:00Z\",\"event\":\"frobnicated\"}\n"
                })
            },
            says: "the last event cannot be read (unknown variant `frobnicated`",
            file: "events.jsonl",
        },
        Damage {
            name: "a damaged middle line, the manifest gone",
            apply: |d| {
                edit(d, &format!("{TASK}/events.jsonl"), |t| {
                    replace_line(&t, 2, "{garbage")
                });
                std::fs::remove_file(d.join(TASK).join("manifest.json")).unwrap();
            },
            says: "line 2: not a valid event",
            file: "events.jsonl",
        },
        Damage {
            name: "a future format in the middle, the manifest stale",
            apply: |d| {
                edit(d, &format!("{TASK}/events.jsonl"), |t| {
                    t.replace("\"v\":1,\"seq\":2", "\"v\":7,\"seq\":2")
                });
                edit(d, &format!("{TASK}/manifest.json"), |t| {
                    t.replace("\"version\": 3", "\"version\": 1")
                        .replace("\"version\":3", "\"version\":1")
                });
            },
            says: "line 2: event format v7 is not supported",
            file: "events.jsonl",
        },
        Damage {
            name: "a gap in the sequence, the manifest gone",
            apply: |d| {
                edit(d, &format!("{TASK}/events.jsonl"), |t| {
                    t.replace("\"seq\":3", "\"seq\":5")
                });
                std::fs::remove_file(d.join(TASK).join("manifest.json")).unwrap();
            },
            says: "line 3",
            file: "events.jsonl",
        },
        Damage {
            name: "an event log that is a directory",
            apply: |d| {
                let p = d.join(TASK).join("events.jsonl");
                std::fs::remove_file(&p).unwrap();
                std::fs::create_dir(&p).unwrap();
            },
            says: "events.jsonl",
            file: "events.jsonl",
        },
    ]
    .into_iter()
    .inspect(|d| assert!(events().ends_with(d.file)))
    .collect()
}

/// The commands that read or write a task.
const TASK_COMMANDS: &[&[&str]] = &[
    &["task", "summary"],
    &["task", "summary", "--json"],
    &["phase", "begin", "spec"],
    &[
        "phase",
        "complete",
        "design-audit",
        "--status",
        "success",
        "--file",
        "a.md",
    ],
    &["store", "spec", "--file", "a.md"],
    &["retrieve", "--for", "spec"],
    &["metrics"],
    &["resume", "--decision", "approve"],
    &["pause", "--reason", "stuck"],
    &["exec", "START_PHASE phase: spec"],
];

#[test]
fn a_damaged_event_log_is_refused_by_every_task_command() {
    let mut cases = 0;
    for damage in log_damages() {
        for args in TASK_COMMANDS {
            let t = project();
            let d = t.path();
            (damage.apply)(d);
            let before = state(d);
            let (code, out) = baton(d, args);
            let label = format!("{} × {args:?}", damage.name);
            assert!(
                matches!(code, Some(5) | Some(6)),
                "{label}: exit {code:?}\n{out}"
            );
            assert!(
                out.contains(damage.file) && out.contains(damage.says),
                "{label}: {out}"
            );
            assert_eq!(state(d), before, "{label}: the store changed");
            cases += 1;
        }
    }
    assert_eq!(cases, 60);
}

#[test]
fn status_names_a_damaged_task_and_still_shows_the_others() {
    for damage in log_damages() {
        let t = project();
        let d = t.path();
        assert_eq!(baton(d, &["task", "init", "Other"]).0, Some(0));
        (damage.apply)(d);
        let before = state(d);
        let (code, out) = baton(d, &["status"]);
        assert_eq!(code, Some(0), "{}: {out}", damage.name);
        assert!(
            out.contains("task add-login  damaged: ") && out.contains("run `baton doctor`"),
            "{}: {out}",
            damage.name
        );
        assert!(
            out.contains("task other  running"),
            "{}: {out}",
            damage.name
        );
        assert_eq!(state(d), before, "{}", damage.name);
    }
}

#[test]
fn doctor_names_each_damage_and_repairs_only_what_it_can_prove() {
    for damage in log_damages() {
        let t = project();
        let d = t.path();
        (damage.apply)(d);
        let (code, out) = baton(d, &["doctor"]);
        assert_eq!(code, Some(5), "{}: {out}", damage.name);
        assert!(out.contains(damage.file), "{}: {out}", damage.name);
        assert!(out.contains("needs a human"), "{}: {out}", damage.name);
    }
    // A torn tail (a write cut by a crash, never acknowledged) is repaired, and kept aside.
    let t = project();
    let d = t.path();
    edit(d, &format!("{TASK}/events.jsonl"), |t| {
        t + "{\"v\":1,\"seq\":4,\"ts"
    });
    let (code, out) = baton(d, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("events.jsonl.torn"), "{out}");
    let (code, out) = baton(d, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(!out.contains("torn"), "repaired once: {out}");
}

#[test]
fn damaged_queue_files_and_run_journals_are_refused_and_left_alone() {
    let queue = ".baton/queues/q/queue.json";
    let journal = format!(".baton/runs/{RUN}/events.jsonl");
    type FileDamage = (
        &'static str,
        String,
        Box<dyn Fn(String) -> String>,
        &'static str,
    );
    let damages: Vec<FileDamage> = vec![
        (
            "queue garbage",
            queue.into(),
            Box::new(|_| "{not json".into()),
            "not a queue file",
        ),
        (
            "queue from the future",
            queue.into(),
            Box::new(|t| {
                t.replacen("\"v\": 1", "\"v\": 99", 1)
                    .replacen("\"v\":1", "\"v\":99", 1)
            }),
            "queue format v99 is not supported",
        ),
        (
            "queue truncated",
            queue.into(),
            Box::new(|t| t[..t.len() / 2].to_string()),
            "not a queue file",
        ),
        (
            "journal garbage",
            journal.clone(),
            Box::new(|t| t + "{oops\n"),
            "line 2: not a run event",
        ),
        (
            "journal from the future",
            journal.clone(),
            Box::new(|t| t.replace("\"v\":2", "\"v\":8")),
            "run event format v8 is not supported",
        ),
        (
            "journal of an unknown workflow",
            journal.clone(),
            Box::new(|t| t.replace("\"workflow\":\"verify\"", "\"workflow\":\"juggle\"")),
            "run of an unknown workflow `juggle`",
        ),
    ];
    let commands: &[(&[&str], &str)] = &[
        (&["queue", "show", "q"], "queue"),
        (&["queue", "add", "q", "COIN"], "queue"),
        (
            &["run", "verify", "--queue", "q", "--agent", "sim"],
            "queue",
        ),
        (&["run", "--resume", RUN], "journal"),
        (&["run", "--resume", RUN, "--no-wait"], "journal"),
    ];
    let mut cases = 0;
    for (name, file, damage, says) in &damages {
        for (args, reads) in commands {
            if !name.starts_with(reads) {
                continue;
            }
            let t = project();
            let d = t.path();
            if *reads == "journal" {
                with_journal(d);
            }
            edit(d, file, damage);
            let before = state(d);
            let (code, out) = baton(d, args);
            let label = format!("{name} × {args:?}");
            assert_eq!(code, Some(5), "{label}: {out}");
            let base = Path::new(file.as_str())
                .file_name()
                .unwrap()
                .to_str()
                .unwrap();
            assert!(out.contains(base) && out.contains(says), "{label}: {out}");
            assert_eq!(state(d), before, "{label}: state changed");
            cases += 1;
        }
    }
    assert_eq!(cases, 3 * 3 + 3 * 2);
}

#[test]
fn a_broken_baton_toml_is_refused_by_every_command_and_named() {
    let damages = [
        (
            "[paths]\nroots = \"x\"\n",
            "line 2",
            "unknown field `roots`",
        ),
        ("[paths]\nroot = 5\n", "line 2", "invalid type"),
        (
            "[paths]\nroot = \"/etc\"\n",
            "paths.root",
            "must be relative",
        ),
        ("[paths]\nlocal = \"../elsewhere\"\n", "paths.local", ".."),
        (
            "[run]\ndefault_agent = \"bad name\"\n",
            "line 2",
            "not an agent name",
        ),
        (
            "[agents.codex]\nmax_turns = 3\n",
            "[agents.codex]",
            "max_turns",
        ),
        ("[budget\n", "line 1", ""),
        (
            "[queue]\nlease_secs = 0\n",
            "[queue] lease_secs = 0",
            "at least a second",
        ),
    ];
    let commands: &[&[&str]] = &[
        &["status"],
        &["task", "summary"],
        &["task", "init", "Other"],
        &["mask", "--", "echo", "hi"],
    ];
    let mut cases = 0;
    for (toml, at, says) in damages {
        for args in commands {
            let t = project();
            let d = t.path();
            std::fs::write(d.join("baton.toml"), toml).unwrap();
            let before = state(d);
            let (code, out) = baton(d, args);
            let label = format!("{toml:?} × {args:?}");
            assert_eq!(code, Some(5), "{label}: {out}");
            assert!(
                out.contains("baton.toml") && out.contains(at) && out.contains(says),
                "{label}: {out}"
            );
            assert_eq!(state(d), before, "{label}: state changed");
            cases += 1;
        }
    }
    assert_eq!(cases, 32);
}

#[test]
fn names_that_try_to_leave_their_directory_are_refused() {
    let cases: &[&[&str]] = &[
        &["task", "summary", "--task", "../../etc"],
        &["task", "summary", "--task", "a/b"],
        &["phase", "begin", "../escape"],
        &["phase", "begin", "spec", "--task-id", "../1"],
        &["store", "../../etc/x", "--file", "a.md"],
        &["store", "spec", "--task-id", "1/../../x", "--file", "a.md"],
        &["retrieve", "--for", "../spec"],
        &["queue", "add", "../q", "X"],
        &["queue", "add", "q", "../X"],
        &["queue", "add", "q", "a/b"],
        &["queue", "show", "../q"],
        &["run", "--resume", "../../etc"],
        &["run", "--resume", "a/b"],
        &["session", "new", "../x"],
        &["workflow", "show", "../orchestrate"],
        &["run", "verify", "--queue", "../q", "--agent", "sim"],
    ];
    for args in cases {
        let t = project();
        let d = t.path();
        let before = state(d);
        let (code, out) = baton(d, args);
        assert!(
            matches!(code, Some(2) | Some(4)),
            "{args:?}: exit {code:?}: {out}"
        );
        assert!(out.starts_with("error: "), "{args:?}: {out}");
        assert_eq!(state(d), before, "{args:?}: state changed");
    }
    assert_eq!(cases.len(), 16);
}

/// A small tmpfs, filled up: every write fails with ENOSPC. Needs root (mount); skipped with
/// the reason otherwise.
#[test]
fn a_full_disk_fails_the_command_and_keeps_the_store_as_it_was() {
    let t = project();
    let mnt = t.path().join("full");
    std::fs::create_dir(&mnt).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=256k", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs root): full-disk cases not run");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let d = mnt.join("p");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("baton.toml"), "").unwrap();
    assert_eq!(baton(&d, &["task", "init", "Add login"]).0, Some(0));
    assert_eq!(baton(&d, &["phase", "begin", "architect"]).0, Some(0));
    assert_eq!(baton(&d, &["mask", "--", "echo", "hi"]).0, Some(0));
    let big = t.path().join("big.md");
    std::fs::write(&big, format!("# A\n\n{}\n", "x".repeat(64 * 1024))).unwrap();
    // Fill the disk to the last few bytes.
    let mut filler = 0;
    while std::fs::write(d.join(format!("filler-{filler}")), vec![0u8; 4096]).is_ok() {
        filler += 1;
    }
    let _ = std::fs::remove_file(d.join(format!("filler-{filler}")));
    let before = state(&d);
    let big_arg = big.to_str().unwrap();
    for args in [
        &["store", "architect", "--file", big_arg][..],
        &[
            "phase",
            "complete",
            "architect",
            "--status",
            "success",
            "--file",
            big_arg,
        ],
    ] {
        let (code, out) = baton(&d, args);
        assert_eq!(code, Some(6), "{args:?}: {out}");
        assert!(out.contains("No space left on device"), "{args:?}: {out}");
        let after = state(&d);
        let changed: Vec<_> = after
            .iter()
            .filter(|(p, b)| before.get(*p) != Some(b) && !p.starts_with(".baton/scratch"))
            .map(|(p, _)| p.clone())
            .collect();
        assert!(changed.is_empty(), "{args:?}: changed {changed:?}");
    }
    // A command run through `baton mask` still runs: its whole output passed through, its own
    // exit code, the full disk named as the reason nothing was masked; the store untouched.
    let (code, out) = baton(&d, &["mask", "--", "seq", "1", "100000"]);
    assert_eq!(code, Some(0), "{}", &out[out.len().saturating_sub(500)..]);
    assert!(out.contains("\n99999\n100000\n"), "the output is not whole");
    assert!(out.contains("No space left on device"), "no reason given");
    let after = state(&d);
    assert!(
        after
            .iter()
            .all(|(p, b)| before.get(p) == Some(b) || p.starts_with(".baton/scratch")),
        "mask changed the store"
    );
    // Space again: the store is healthy and the same command works.
    for i in 0..filler {
        let _ = std::fs::remove_file(d.join(format!("filler-{i}")));
    }
    let (code, out) = baton(&d, &["doctor"]);
    assert_eq!(code, Some(0), "{out}");
    assert_eq!(
        baton(&d, &["store", "architect", "--file", big_arg]).0,
        Some(0)
    );
}

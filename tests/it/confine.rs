//! Inputs that are not regular files: `tokens`, `extract` and `outline` refuse FIFOs, devices
//! and sockets (reading them could block or never end) instead of hanging; `tokens` and
//! `extract` refuse directories. Symlinks out of the project: every task, artifact, run,
//! queue, session and scratch path is refused when it resolves outside.

use std::path::{Path, PathBuf};
use std::time::Duration;

use assert_cmd::Command;

/// A project directory holding a FIFO, a socket and a directory.
struct Kinds {
    dir: tempfile::TempDir,
    _socket: std::os::unix::net::UnixListener,
}

impl Kinds {
    fn new() -> Kinds {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("baton.toml"), "").unwrap();
        let fifo = std::ffi::CString::new(dir.path().join("fifo").to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let socket = std::os::unix::net::UnixListener::bind(dir.path().join("sock")).unwrap();
        std::fs::create_dir(dir.path().join("subdir")).unwrap();
        Kinds {
            dir,
            _socket: socket,
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The special files: argument as given, and the kind the error names.
    fn specials(&self) -> Vec<(PathBuf, &'static str)> {
        vec![
            (PathBuf::from("fifo"), "a FIFO"),
            (PathBuf::from("/dev/zero"), "a character device"),
            (PathBuf::from("sock"), "a socket"),
        ]
    }
}

/// Run baton with a deadline: a command that blocks on its input fails the test, not hangs it.
fn baton(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::cargo_bin("baton")
        .unwrap()
        .current_dir(dir)
        .args(args)
        .write_stdin("")
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn assert_refused(dir: &Path, args: &[&str], path: &Path, what: &str) {
    let (code, stdout, stderr) = baton(dir, args);
    let want = format!("error: {}: {what}", path.display());
    assert_eq!(code, Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.starts_with(&want),
        "{args:?}: want {want:?}, got {stderr}"
    );
    assert!(stdout.is_empty(), "{args:?}: {stdout}");
}

#[test]
fn tokens_refuses_fifos_devices_and_sockets() {
    let k = Kinds::new();
    for (p, kind) in k.specials() {
        let what = format!("not a regular file ({kind})");
        assert_refused(k.path(), &["tokens", p.to_str().unwrap()], &p, &what);
        // Also after a good file: nothing is printed for the good one either.
        std::fs::write(k.path().join("ok.md"), "# hi\n").unwrap();
        assert_refused(
            k.path(),
            &["tokens", "ok.md", p.to_str().unwrap()],
            &p,
            &what,
        );
    }
}

#[test]
fn extract_refuses_fifos_devices_and_sockets() {
    let k = Kinds::new();
    for (p, kind) in k.specials() {
        let what = format!("not a regular file ({kind})");
        let f = p.to_str().unwrap();
        assert_refused(k.path(), &["extract", f, "--section", "x"], &p, &what);
        assert_refused(k.path(), &["extract", f, "--outline"], &p, &what);
        assert_refused(k.path(), &["extract", f, "--symbol", "main"], &p, &what);
    }
}

#[test]
fn outline_refuses_fifos_devices_and_sockets() {
    let k = Kinds::new();
    for (p, kind) in k.specials() {
        let what = format!("not a regular file ({kind})");
        assert_refused(k.path(), &["outline", p.to_str().unwrap()], &p, &what);
    }
}

#[test]
fn tokens_and_extract_refuse_directories() {
    let k = Kinds::new();
    let d = Path::new("subdir");
    assert_refused(k.path(), &["tokens", "subdir"], d, "is a directory");
    assert_refused(
        k.path(),
        &["extract", "subdir", "--section", "x"],
        d,
        "is a directory",
    );
    assert_refused(
        k.path(),
        &["extract", "subdir", "--symbol", "f"],
        d,
        "is a directory",
    );
}

#[test]
fn the_error_has_a_hint() {
    let k = Kinds::new();
    let (_, _, stderr) = baton(k.path(), &["tokens", "fifo"]);
    assert!(
        stderr.contains("hint: baton reads regular files only"),
        "{stderr}"
    );
}

/// A git project with one task and a stored architect.md, and a directory outside it.
fn with_task() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("p");
    let outside = t.path().join("outside");
    std::fs::create_dir_all(&p).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "TOP-SECRET\n").unwrap();
    std::fs::write(p.join("baton.toml"), "").unwrap();
    let (code, _, err) = baton(&p, &["task", "init", "Add login"]);
    assert_eq!(code, Some(0), "{err}");
    std::fs::write(p.join("a.md"), "# Architecture\n\nok\n").unwrap();
    let (code, _, err) = baton(&p, &["store", "architect", "--file", "a.md"]);
    assert_eq!(code, Some(0), "{err}");
    (t, p, outside)
}

fn tasks_dir(p: &Path) -> PathBuf {
    p.join("docs/orchestrator/context/tasks")
}

fn assert_outside(p: &Path, args: &[&str]) {
    let (code, stdout, stderr) = baton(p, args);
    assert_eq!(code, Some(2), "{args:?}: {stdout}{stderr}");
    assert!(
        stderr.contains("outside") && stderr.contains("replace the symlink"),
        "{args:?}: {stderr}"
    );
    assert!(!stdout.contains("TOP-SECRET"), "{args:?}: {stdout}");
}

#[test]
fn an_artifact_symlinked_out_of_the_project_is_never_printed() {
    let (_t, p, outside) = with_task();
    let art = tasks_dir(&p).join("add-login/architect.md");
    std::fs::remove_file(&art).unwrap();
    std::os::unix::fs::symlink(outside.join("secret.txt"), &art).unwrap();
    assert_outside(&p, &["retrieve", "--for", "design-audit"]);
    assert_outside(&p, &["retrieve", "--for", "spec", "--json"]);
}

#[test]
fn a_tasks_directory_symlinked_out_of_the_project_is_refused_for_reads_and_writes() {
    let (_t, p, outside) = with_task();
    let tasks = tasks_dir(&p);
    std::fs::rename(&tasks, outside.join("tasks")).unwrap();
    std::os::unix::fs::symlink(outside.join("tasks"), &tasks).unwrap();
    let before = crate::util::snapshot(&outside);
    assert_outside(&p, &["phase", "begin", "design-audit"]);
    assert_outside(&p, &["task", "init", "Other"]);
    assert_outside(&p, &["task", "summary"]);
    assert_eq!(
        crate::util::snapshot(&outside),
        before,
        "nothing written outside"
    );
}

#[test]
fn local_state_symlinked_out_of_the_project_is_refused() {
    let (_t, p, outside) = with_task();
    // .baton itself: every command refuses to start.
    std::os::unix::fs::symlink(&outside, p.join(".baton")).unwrap();
    assert_outside(&p, &["status"]);
    std::fs::remove_file(p.join(".baton")).unwrap();
    // Its parts: scratch (masked outputs may hold secrets), queues, sessions, runs.
    std::fs::create_dir_all(p.join(".baton")).unwrap();
    for part in ["scratch", "queues", "sessions", "runs"] {
        let target = outside.join(part);
        std::fs::create_dir_all(&target).unwrap();
        std::os::unix::fs::symlink(&target, p.join(".baton").join(part)).unwrap();
    }
    let before = crate::util::snapshot(&outside);
    // mask still runs the command (an agent must be able to), its output passed through and
    // no scratch written there; stderr says why.
    let (code, stdout, stderr) = baton(&p, &["mask", "--", "echo", "hi"]);
    assert_eq!((code, stdout.as_str()), (Some(0), "hi\n"), "{stderr}");
    assert!(
        stderr.contains("no scratch file") && stderr.contains("outside"),
        "{stderr}"
    );
    assert_outside(&p, &["queue", "add", "q", "BMNR"]);
    assert_outside(&p, &["session", "new", "verify"]);
    assert_outside(&p, &["run", "--resume", "20990101T000000-abcdef"]);
    assert_eq!(
        crate::util::snapshot(&outside),
        before,
        "nothing written outside"
    );
}

#[test]
fn a_story_symlinked_out_of_the_project_is_skipped_never_read_or_written() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("p");
    baton::cli::demo_project(&p).unwrap();
    let outside = t.path().join("elsewhere.md");
    std::fs::write(
        &outside,
        "# Story 1.4: Export notes\n\nStatus: ready-for-dev\n\nTOP-SECRET\n",
    )
    .unwrap();
    let story = p.join("docs/stories/1.4.export-notes.md");
    std::fs::remove_file(&story).unwrap();
    std::os::unix::fs::symlink(&outside, &story).unwrap();
    let (code, stdout, stderr) = baton(&p, &["stories", "1"]);
    assert_eq!(code, Some(0), "{stderr}");
    let all = format!("{stdout}{stderr}");
    assert!(
        all.contains(
            "docs/stories/1.4.export-notes.md leads outside the project (a symlink): skipped"
        ),
        "{all}"
    );
    assert!(!all.contains("TOP-SECRET"));
    assert!(
        stdout.contains("1.3") && !stdout.contains("Export notes"),
        "{stdout}"
    );
}

/// A store file replaced by a link (a cloned repository can carry one): baton neither appends
/// its events or history through it nor reads the task from it; the outside file stays as it was.
#[test]
fn store_files_replaced_by_links_are_never_written_or_read_through() {
    let (_t, p, outside) = with_task();
    let task = tasks_dir(&p).join("add-login");
    for (name, rel) in [
        ("events.jsonl", task.join("events.jsonl")),
        ("history.md", p.join("docs/orchestrator/context/history.md")),
        ("manifest.json", task.join("manifest.json")),
    ] {
        let target = outside.join(name);
        std::fs::copy(&rel, &target).unwrap();
        std::fs::remove_file(&rel).unwrap();
        std::os::unix::fs::symlink(&target, &rel).unwrap();
        let before = std::fs::read(&target).unwrap();
        let (code, stdout, stderr) = baton(&p, &["phase", "begin", "spec"]);
        // The history is a readable log, not the truth: the command stands, its line is not
        // written there, and stderr says why.
        let want = if name == "history.md" { 0 } else { 2 };
        assert_eq!(code, Some(want), "{name}: {stdout}{stderr}");
        assert!(stderr.contains("is a symbolic link"), "{name}: {stderr}");
        assert_eq!(
            std::fs::read(&target).unwrap(),
            before,
            "{name}: written through the link"
        );
        std::fs::remove_file(&rel).unwrap();
        std::fs::copy(&target, &rel).unwrap();
    }
    // doctor names each link as damage to fix by hand, and writes nothing through it.
    let target = outside.join("history.md");
    let history = p.join("docs/orchestrator/context/history.md");
    std::fs::remove_file(&history).unwrap();
    std::os::unix::fs::symlink(&target, &history).unwrap();
    let before = std::fs::read(&target).unwrap();
    let (code, stdout, _) = baton(&p, &["doctor", "--store"]);
    assert_eq!(code, Some(5), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "ERROR    {}: a symbolic link (to {})",
            history.display(),
            target.display()
        )),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&target).unwrap(), before);
}

/// A FIFO at `path` (mkfifo).
fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// A planted `.baton/init-claude.json` (a repository can carry one with `git add -f`) names
/// files outside the project, by absolute path, by `..`, and through a link: uninstall (and
/// init, which reads the record too) refuses it as damaged, naming it, and writes nothing.
#[test]
fn a_planted_init_record_reaches_nothing_outside() {
    let (_t, p, outside) = with_task();
    let victim = outside.join("victim.txt");
    std::fs::write(&victim, "the user's own file\n").unwrap();
    std::os::unix::fs::symlink(&outside, p.join("linked")).unwrap();
    let record = p.join(".baton/init-claude.json");
    std::fs::create_dir_all(record.parent().unwrap()).unwrap();
    for named in [
        victim.display().to_string(),
        "../outside/victim.txt".to_string(),
        "linked/victim.txt".to_string(),
        outside.join("new.txt").display().to_string(),
    ] {
        let planted = serde_json::json!({"version": 1, "files": [{
            "path": named, "before": "pwned\n", "after": "the user's own file\n",
            "edit": {"kind": "whole"}
        }]});
        std::fs::write(&record, planted.to_string()).unwrap();
        let before = crate::util::snapshot(&outside);
        for args in [
            &["init", "claude", "--uninstall"][..],
            &["init", "claude"][..],
        ] {
            let (code, stdout, stderr) = baton(&p, args);
            assert_ne!(code, Some(0), "{args:?} {named}: {stdout}{stderr}");
            assert!(
                stderr.contains(&record.display().to_string())
                    && stderr.contains(&format!(
                        "names {named}, which `baton init claude` never writes"
                    )),
                "{args:?}: {stderr}"
            );
            assert_eq!(
                crate::util::snapshot(&outside),
                before,
                "{named}: written outside"
            );
        }
        assert!(!p.join(".mcp.json").exists(), "init put back what it wrote");
    }
    // A project folder init writes in, linked out of the project: refused before any write.
    std::fs::remove_file(&record).unwrap();
    std::os::unix::fs::symlink(&outside, p.join(".claude")).unwrap();
    let before = crate::util::snapshot(&outside);
    let (code, _, stderr) = baton(&p, &["init", "claude"]);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("outside"), "{stderr}");
    assert_eq!(crate::util::snapshot(&outside), before);
}

/// Every other name baton writes under `.baton/` and in the store, replaced by a link to a
/// file outside (or to where one would be created) or by a FIFO: nothing is written or created
/// there, nothing hangs, and the error names the path.
#[test]
fn links_and_fifos_on_the_names_baton_writes_are_refused() {
    let (_t, p, outside) = with_task();
    let local = p.join(".baton");
    std::fs::create_dir_all(&local).unwrap();
    let check = |name: &Path, args: &[&str], code: i32| {
        for kind in ["link to a file", "link to nothing", "fifo"] {
            let _ = std::fs::remove_file(name);
            let target = outside.join("target.txt");
            let _ = std::fs::remove_file(&target);
            match kind {
                "link to a file" => {
                    std::fs::write(&target, "outside\n").unwrap();
                    std::os::unix::fs::symlink(&target, name).unwrap();
                }
                "link to nothing" => std::os::unix::fs::symlink(&target, name).unwrap(),
                _ => mkfifo(name),
            }
            let before = crate::util::snapshot(&outside);
            let (got, stdout, stderr) = baton(&p, args);
            assert_eq!(
                got,
                Some(code),
                "{} ({kind}) {args:?}: {stdout}{stderr}",
                name.display()
            );
            assert!(
                stderr.contains(&name.display().to_string()),
                "{} ({kind}): {stderr}",
                name.display()
            );
            assert_eq!(
                crate::util::snapshot(&outside),
                before,
                "{} ({kind})",
                name.display()
            );
            let _ = std::fs::remove_file(name);
        }
    };
    // `.gitignore`: baton mask still runs the command (passed through, unmasked, saying why).
    check(&local.join(".gitignore"), &["mask", "--", "echo", "hi"], 0);
    // And for a session's folder and a task run's journal, which write it too.
    check(&local.join(".gitignore"), &["session", "new", "review"], 2);
    check(
        &local.join(".gitignore"),
        &["run", "orchestrate", "add-login", "--agent", "sim"],
        2,
    );
    // A task's lock file and the manifest's spare.
    let task = tasks_dir(&p).join("add-login");
    check(&task.join(".lock"), &["phase", "begin", "spec"], 2);
    // The mask log and its lock: a hook's log line is not written (the hook still answers).
    check(
        &local.join("masks.jsonl"),
        &["mask", "--threshold", "1", "--", "seq", "1", "3000"],
        0,
    );
}

/// `report -o` replaces only a regular file or makes a new one: a FIFO, a link and a device
/// node there are refused, named, and left as they were.
#[test]
fn report_output_is_a_regular_file_or_a_new_path() {
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("p");
    crate::util::demo_repo(&p, "");
    let (code, _, err) = baton(&p, &["run", "epic-execute", "1", "--agent", "sim"]);
    assert_eq!(code, Some(0), "{err}");
    let fifo = t.path().join("fifo");
    mkfifo(&fifo);
    let link = t.path().join("link.html");
    std::fs::write(t.path().join("kept.html"), "kept\n").unwrap();
    std::os::unix::fs::symlink(t.path().join("kept.html"), &link).unwrap();
    let mut refused = vec![(fifo.clone(), "a FIFO"), (link.clone(), "a symbolic link")];
    // A device node of the test's own (root can make one; /dev itself is never risked).
    let dev = t.path().join("null-dev");
    let c = std::ffi::CString::new(dev.to_str().unwrap()).unwrap();
    // SAFETY: mknod(2) on a NUL-terminated path.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) } == 0 {
        refused.push((dev.clone(), "a character device"));
    } else {
        eprintln!("note: no device node (mknod needs root): that case is not checked here");
    }
    for (path, what) in &refused {
        let (code, stdout, stderr) = baton(&p, &["report", "-o", path.to_str().unwrap()]);
        assert_eq!(code, Some(2), "{what}: {stdout}{stderr}");
        assert!(
            stderr.contains(&format!("{} is {what}", path.display())),
            "{what}: {stderr}"
        );
        let meta = std::fs::symlink_metadata(path).unwrap();
        assert!(!meta.is_file(), "{what} replaced by a file");
    }
    assert_eq!(
        std::fs::read_to_string(t.path().join("kept.html")).unwrap(),
        "kept\n"
    );
    // A regular file is replaced, a new path made.
    for out in [t.path().join("kept.html"), t.path().join("new.html")] {
        let (code, _, stderr) = baton(&p, &["report", "-o", out.to_str().unwrap()]);
        assert_eq!(code, Some(0), "{stderr}");
        assert!(std::fs::read_to_string(&out).unwrap().contains("<html"));
    }
}

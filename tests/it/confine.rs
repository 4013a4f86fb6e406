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

//! Inputs that are not regular files: `tokens`, `extract` and `outline` refuse FIFOs, devices
//! and sockets (reading them could block or never end) instead of hanging; `tokens` and
//! `extract` refuse directories.

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

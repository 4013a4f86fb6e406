//! A full disk, for real: the project on a small tmpfs filled to the last byte. RETRIEVE never
//! serves an older artifact in place of one a failed write left missing (it writes it again
//! from its event, or refuses saying why); `doctor` tells a full disk from damage; `baton mask`
//! still runs the command and passes its output through.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::Proj;

/// A tmpfs of `kb` KiB mounted on a temp directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    /// `None` (after a `skipped:` line) when this process may not mount a file system (not
    /// root, or a container without the capability) — unless `BATON_REQUIRE_MOUNT=1` (CI),
    /// which makes that a failure.
    fn mount(test: &str, kb: u32) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kb}k"), "tmpfs"])
            .arg(dir.path())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        let required = std::env::var_os("BATON_REQUIRE_MOUNT").is_some_and(|v| v == "1");
        match (ok, required) {
            (true, _) => Some(SmallDisk { dir }),
            (false, true) => panic!("{test}: could not mount a tmpfs (BATON_REQUIRE_MOUNT=1)"),
            (false, false) => {
                eprintln!(
                    "skipped: {test}: mounting a small file system needs root (and the capability)"
                );
                None
            }
        }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fill the disk to the last byte; the filler's path (remove it to free the space).
    fn fill(&self) -> PathBuf {
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).unwrap();
        let block = vec![b'x'; 4096];
        while f.write_all(&block).is_ok() {}
        // The last partial block too.
        while f.write_all(b"x").is_ok() {}
        filler
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_is_said_as_such_and_retrieve_never_serves_an_older_version() {
    let Some(disk) = SmallDisk::mount("full_disk::retrieve", 2048) else {
        return;
    };
    let p = Proj::new_in(disk.path());
    p.ok(&["task", "init", "full-disk"]);
    p.ok_in(
        &["store", "spec"],
        Some("# Spec\n\n## Signatures\n\nspec one\n"),
    );
    p.ok_in(
        &["store", "spec"],
        Some("# Spec\n\n## Signatures\n\nspec two\n"),
    );
    // The second version's file is what a full disk kept from being written: its event holds it.
    let v2 = p.task_dir("full-disk").join("spec.v2.md");
    std::fs::remove_file(&v2).unwrap();
    let filler = disk.fill();

    let out = p
        .test()
        .args(["retrieve", "--for", "implementation"])
        .status(3)
        .stderr_contains("spec.v2.md: stored by event")
        .stderr_contains("RETRIEVE serves no older version in its place")
        .stderr_contains("the disk is full: free some space")
        .run();
    assert!(!out.stdout.contains("spec one"), "{}", out.stdout);

    p.test()
        .args(["doctor", "--store"])
        .status(6)
        .stdout_contains("no space")
        .stdout_contains("spec.v2.md")
        .stdout_contains(
            "the disk is full: nothing is damaged; free some space and run `baton doctor` again",
        )
        .run();
    let json = p
        .test()
        .args(["doctor", "--store", "--json"])
        .status(6)
        .any_stdout()
        .run()
        .json();
    assert!(
        json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["level"] == "no_space"),
        "{json}"
    );

    // A command still runs through `baton mask`, its output passed through.
    p.test()
        .args(["mask", "--", "sh", "-c", "seq 1 3000"])
        .stdout_contains("\n3000\n")
        .stderr_contains("warning")
        .run();

    // Space again: RETRIEVE writes the missing version back and serves it.
    std::fs::remove_file(filler).unwrap();
    p.test()
        .args(["retrieve", "--for", "implementation"])
        .stdout_contains("spec two")
        .run();
    assert_eq!(
        std::fs::read_to_string(&v2).unwrap(),
        "# Spec\n\n## Signatures\n\nspec two\n"
    );
    p.test()
        .args(["doctor", "--store"])
        .stdout_contains("store is healthy")
        .run();
}

/// An event log is outside input (a store is committed; a clone carries what it likes): an
/// artifact event naming a path outside the task is never written, by doctor or by RETRIEVE.
#[test]
fn an_artifact_event_naming_a_path_outside_the_task_is_never_written() {
    let p = Proj::new();
    p.ok(&["task", "init", "forged"]);
    p.ok_in(&["store", "spec"], Some("x\n"));
    let events = p.task_dir("forged").join("events.jsonl");
    let mut log = std::fs::OpenOptions::new()
        .append(true)
        .open(&events)
        .unwrap();
    for (seq, path) in [
        (3, "../../../../../escaped.md"),
        (4, "/tmp/baton-escaped-abs.md"),
    ] {
        writeln!(
            log,
            r#"{{"v":1,"seq":{seq},"ts":"2026-11-27T14:47:35.420Z","event":"artifact_stored","phase":"spec","path":"{path}","bytes":4,"content":"pwn\n"}}"#
        )
        .unwrap();
    }
    drop(log);
    // The manifest follows the log on its next read (a derived file, rewritten whole).
    p.ok(&["task", "summary"]);
    let escaped = [
        p.path().join("escaped.md"),
        p.path().parent().unwrap().join("escaped.md"),
        PathBuf::from("/tmp/baton-escaped-abs.md"),
    ];
    p.test()
        .args(["retrieve", "--for", "implementation"])
        .status(3)
        .stderr_contains("names an artifact outside the task")
        .run();
    p.test()
        .args(["doctor", "--store"])
        .status(5)
        .stdout_contains("names an artifact outside the task")
        .run();
    for e in &escaped {
        assert!(!e.exists(), "{} was written", e.display());
    }
}

/// The disk fills while `baton mask` keeps a large output: nothing of the output is lost (what
/// reached the scratch file, then the rest, all on stdout, unmasked), the command's exit code
/// stands, stderr says why, and no partial scratch file is left.
#[test]
fn a_disk_that_fills_during_a_mask_passes_the_output_through_whole() {
    let Some(disk) = SmallDisk::mount("a_disk_that_fills_during_a_mask", 512) else {
        return;
    };
    let p = Proj::new_in(disk.path());
    // About 200 KB free: the scratch file is made, then its writes fail part way.
    let filler = disk.fill();
    let len = std::fs::metadata(&filler).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&filler)
        .unwrap()
        .set_len(len - 200 * 1024)
        .unwrap();
    let o = p
        .cmd(&["mask", "--", "sh", "-c", "seq 1 200000; exit 3"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    assert!(want.len() > 1_000_000);
    assert!(
        String::from_utf8_lossy(&o.stdout) == want,
        "the output is not passed through whole ({} of {} bytes)",
        o.stdout.len(),
        want.len()
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("passed through, not masked"), "{err}");
    let scratch = p.path().join(".baton/scratch");
    let left = std::fs::read_dir(&scratch).map_or(0, |d| d.count());
    assert_eq!(left, 0, "a partial scratch file was left");
}

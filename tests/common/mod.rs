//! Shared helpers: a real temp git repository and the real `baton` binary run inside it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub struct Proj {
    pub dir: tempfile::TempDir,
}

pub fn bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_baton"))
}

impl Proj {
    /// A fresh git repository, as a user's project would be.
    pub fn new() -> Proj {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("git")
            .args(["init", "-q"])
            .current_dir(dir.path())
            .status()
            .unwrap();
        assert!(st.success());
        Proj { dir }
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    pub fn store(&self) -> PathBuf {
        self.path().join("docs/orchestrator")
    }

    pub fn task_dir(&self, slug: &str) -> PathBuf {
        self.store().join("context/tasks").join(slug)
    }

    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args).current_dir(self.path()).stdin(Stdio::null());
        c
    }

    pub fn run(&self, args: &[&str], stdin: Option<&[u8]>) -> Output {
        let mut c = self.cmd(args);
        match stdin {
            None => c.output().unwrap(),
            Some(input) => {
                use std::io::Write;
                c.stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                let mut child = c.spawn().unwrap();
                // The command may exit before reading everything (an early error): that is fine.
                let _ = child.stdin.take().unwrap().write_all(input);
                child.wait_with_output().unwrap()
            }
        }
    }

    /// Run and require success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        self.ok_in(args, None)
    }

    pub fn ok_in(&self, args: &[&str], stdin: Option<&str>) -> String {
        let o = self.run(args, stdin.map(str::as_bytes));
        assert!(
            o.status.success(),
            "baton {args:?} failed ({:?}):\n{}{}",
            o.status.code(),
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8(o.stdout).unwrap()
    }

    /// Run, require exit `code`, require state unchanged; returns stderr.
    pub fn fails(&self, args: &[&str], code: i32) -> String {
        self.fails_in(args, None, code)
    }

    pub fn fails_in(&self, args: &[&str], stdin: Option<&[u8]>, code: i32) -> String {
        let before = self.snapshot();
        let o = self.run(args, stdin);
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(
            o.status.code(),
            Some(code),
            "baton {args:?}: stdout {} stderr {err}",
            String::from_utf8_lossy(&o.stdout)
        );
        assert!(err.starts_with("error: "), "errors say so: {err}");
        assert_eq!(
            before,
            self.snapshot(),
            "baton {args:?} changed the store although it failed"
        );
        err
    }

    /// Every file of the store (lock files aside) and its bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut out = BTreeMap::new();
        let mut stack = vec![self.store()];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else {
                continue;
            };
            for e in rd {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.file_name().unwrap() != ".lock" {
                    out.insert(p.clone(), std::fs::read(&p).unwrap());
                }
            }
        }
        out
    }

    pub fn manifest(&self, slug: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.task_dir(slug).join("manifest.json")).unwrap())
            .unwrap()
    }

    pub fn json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = args.to_vec();
        a.push("--json");
        serde_json::from_str(&self.ok(&a)).unwrap()
    }
}

/// The manifest on disk equals the replay of the events through the state machine.
pub fn assert_manifest_is_replay(task_dir: &Path) {
    let replayed = baton::store::log::replay(&task_dir.join("events.jsonl"))
        .unwrap()
        .unwrap();
    let on_disk: baton::store::model::Manifest =
        serde_json::from_slice(&std::fs::read(task_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(on_disk, replayed);
}

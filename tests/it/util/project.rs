//! A user's project: a fresh temp git repository, and where the task store lives in it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Proj {
    pub dir: tempfile::TempDir,
}

impl Proj {
    /// A fresh git repository, as a user's project would be.
    pub fn new() -> Proj {
        super::neutral_env();
        Proj::init(tempfile::tempdir().unwrap())
    }

    /// A fresh git repository under `parent` (a file system of the test's own).
    pub fn new_in(parent: &Path) -> Proj {
        Proj::init(tempfile::tempdir_in(parent).unwrap())
    }

    fn init(dir: tempfile::TempDir) -> Proj {
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

    /// Lines of the project's mask log: one per output masked (none without the log).
    pub fn mask_records(&self) -> usize {
        std::fs::read_to_string(self.path().join(".baton/masks.jsonl"))
            .map_or(0, |t| t.lines().count())
    }

    /// Write `text` at `rel` (parents created).
    pub fn write(&self, rel: &str, text: &str) -> PathBuf {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
        p
    }

    /// Every file of the store (lock files aside) and its bytes.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(&self.store())
    }

    pub fn manifest(&self, slug: &str) -> serde_json::Value {
        serde_json::from_slice(&std::fs::read(self.task_dir(slug).join("manifest.json")).unwrap())
            .unwrap()
    }
}

/// Every file under `root` (lock files aside) and its bytes.
pub fn snapshot(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
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

/// The manifest on disk equals the replay of the events through the state machine.
pub fn assert_manifest_is_replay(task_dir: &Path) {
    let replayed = baton_store::log::replay(&task_dir.join("events.jsonl"))
        .unwrap()
        .unwrap();
    let on_disk: baton_store::model::Manifest =
        serde_json::from_slice(&std::fs::read(task_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(on_disk, replayed);
}

//! `baton doctor`: verify every task of a store and repair what can be repaired without
//! losing anything: torn event lines are moved aside, manifests rebuilt from events, temp
//! files of interrupted writes removed. Damage inside the event log is reported, not guessed at.

use std::path::Path;

use serde::Serialize;

use super::model::EventKind;
use super::{EVENTS, LOCK, MANIFEST, Store, log, read_manifest};
use baton_core::error::{Error, Result};
use baton_core::fs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Repaired,
    Warning,
    Error,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub level: Level,
    pub path: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub root: String,
    pub tasks: usize,
    pub findings: Vec<Finding>,
}

impl Report {
    pub fn healthy(&self) -> bool {
        !self.findings.iter().any(|f| f.level == Level::Error)
    }
}

pub fn run(store: &Store) -> Result<Report> {
    let mut findings = Vec::new();
    let tasks_dir = store.tasks_dir();
    let mut tasks = 0;
    if let Ok(rd) = std::fs::read_dir(&tasks_dir) {
        let mut dirs: Vec<_> = rd
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            tasks += 1;
            check_task(store, &dir, &mut findings);
        }
    }
    links(store, &mut findings);
    match store.current() {
        Ok(Some(slug)) if !store.exists(&slug) => findings.push(Finding {
            level: Level::Error,
            path: store.current_path().display().to_string(),
            message: format!(
                "points to task `{slug}`, which does not exist; run `baton task use <slug>`"
            ),
        }),
        Ok(_) => {}
        Err(e) => findings.push(Finding {
            level: Level::Error,
            path: store.current_path().display().to_string(),
            message: e.to_string(),
        }),
    }
    Ok(Report {
        root: store.root().display().to_string(),
        tasks,
        findings,
    })
}

/// Store files that are symbolic links: baton refuses to read or write through them (a cloned
/// repository can carry one that leads outside), so each is an error to fix by hand.
fn links(store: &Store, out: &mut Vec<Finding>) {
    let mut files = vec![store.history_path()];
    if let Ok(rd) = std::fs::read_dir(store.tasks_dir()) {
        for task in rd.flatten() {
            for name in [EVENTS, MANIFEST] {
                files.push(task.path().join(name));
            }
        }
    }
    files.sort();
    for f in files {
        if f.symlink_metadata()
            .is_ok_and(|m| m.file_type().is_symlink())
        {
            let to =
                std::fs::read_link(&f).map_or_else(|_| "?".into(), |t| t.display().to_string());
            out.push(Finding {
                level: Level::Error,
                path: f.display().to_string(),
                message: format!(
                    "a symbolic link (to {to}): baton neither reads nor writes through it; replace it with a regular file"
                ),
            });
        }
    }
}

fn check_task(store: &Store, dir: &Path, out: &mut Vec<Finding>) {
    let events = dir.join(EVENTS);
    let mut say = |level, path: &Path, message: String| {
        out.push(Finding {
            level,
            path: path.display().to_string(),
            message,
        })
    };
    if !events.exists() || std::fs::metadata(&events).is_ok_and(|m| m.len() == 0) {
        say(
            Level::Warning,
            dir,
            "no events: left over from an interrupted INIT; not a task".into(),
        );
        return;
    }
    let _lock = match fs::lock(&dir.join(LOCK)) {
        Ok(l) => l,
        Err(e) => return say(Level::Error, dir, e.to_string()),
    };
    // History lines a command could not append after its event was durable.
    if dir.join(super::HISTORY_PENDING).exists() {
        let slug = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        match store
            .lock_history()
            .and_then(|_g| store.flush_pending_history(&slug))
        {
            Ok(n) => say(
                Level::Repaired,
                &store.history_path(),
                format!(
                    "{n} history line(s) of task {slug} that a failed write left pending were added"
                ),
            ),
            Err(e) => say(Level::Error, &store.history_path(), e.to_string()),
        }
    }
    remove_temp_files(dir, &mut say);
    let repaired = log::tail(&events).and_then(|t| log::repair_torn(&events, &t));
    match repaired {
        Ok(true) => say(
            Level::Repaired,
            &events,
            "a torn last line (a write cut by a crash, never acknowledged) was moved to events.jsonl.torn".into(),
        ),
        Ok(false) => {}
        Err(e) => return say(Level::Error, &events, e.to_string()),
    }
    let replayed = match log::replay(&events) {
        Ok(Some(m)) => m,
        Ok(None) => return say(Level::Warning, &events, "empty event log".into()),
        Err(e) => {
            return say(
                Level::Error,
                &events,
                format!(
                    "{e}. The log is the source of truth: restore that line from version control or a backup"
                ),
            );
        }
    };
    // Every artifact the events recorded must still be there; a lost one is restored from the
    // content its event carries.
    if let Ok(all) = log::read_all(&events) {
        // An artifact-like file no event stored (a write whose event never came, a file added
        // by hand) is not the task's: said, so nobody takes it for a stored artifact.
        let stored: std::collections::BTreeSet<&str> = all
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ArtifactStored { path, .. } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        for sub in ["", "implementations", "tests"] {
            let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
                continue;
            };
            let mut files: Vec<std::path::PathBuf> = rd
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "md"))
                .collect();
            files.sort();
            for p in files {
                let rel = p
                    .strip_prefix(dir)
                    .unwrap_or(&p)
                    .to_string_lossy()
                    .into_owned();
                if !stored.contains(rel.as_str()) {
                    say(
                        Level::Warning,
                        &p,
                        "no event stored this file: left by a write whose event never came, or added by hand; it is not the task's artifact".into(),
                    );
                }
            }
        }
        for e in all {
            if let EventKind::ArtifactStored { path, content, .. } = &e.kind
                && !dir.join(path).exists()
            {
                let file = dir.join(path);
                match content {
                    Some(text) => {
                        let restored = file
                            .parent()
                            .map_or(Ok(()), fs::create_dir_all)
                            .and_then(|_| fs::write_new(&file, text.as_bytes()));
                        match restored {
                            Ok(()) => say(
                                Level::Repaired,
                                &file,
                                format!("was missing; restored from event {}", e.seq),
                            ),
                            Err(err) => say(Level::Error, &file, err.to_string()),
                        }
                    }
                    None => say(
                        Level::Error,
                        &file,
                        format!("recorded by event {} but missing", e.seq),
                    ),
                }
            }
        }
    }
    let manifest_path = dir.join(MANIFEST);
    let verdict = match read_manifest(dir) {
        Ok(Some(m)) if m == replayed => None,
        Ok(Some(m)) if m.version < replayed.version => Some("stale (older than the events)"),
        Ok(Some(_)) => Some("different from the replay of its events"),
        Ok(None) => Some("missing"),
        Err(_) => Some("not valid JSON"),
    };
    match verdict {
        None => say(
            Level::Ok,
            dir,
            format!("{} events, manifest matches", replayed.version),
        ),
        Some(why) => {
            if why == "not valid JSON" {
                // Keep the damaged file for inspection: nothing is deleted.
                let aside = dir.join(format!(
                    "{MANIFEST}.damaged-{}",
                    baton_core::ids::now().replace(':', "")
                ));
                let _ = std::fs::rename(&manifest_path, aside);
            }
            match store.write_manifest(dir, &replayed) {
                Ok(()) => say(
                    Level::Repaired,
                    &manifest_path,
                    format!("manifest was {why}; rebuilt from events"),
                ),
                Err(e) => say(Level::Error, &manifest_path, e.to_string()),
            }
        }
    }
}

/// Temp files (`.baton-tmp-*`, and `.tmp*` of older versions) of atomic writes that a crash interrupted: never renamed into place,
/// so never part of the store.
fn remove_temp_files(dir: &Path, say: &mut impl FnMut(Level, &Path, String)) {
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.filter_map(|e| e.ok()) {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            let spare = name
                .strip_prefix(baton_core::fs::TEMP_PREFIX)
                .is_some_and(|n| n.starts_with("spare-"));
            if p.is_dir() {
                dirs.push(p);
            } else if spare {
                // The manifest's spare (`fs::replace_with_spare`): kept on purpose.
            } else if name.starts_with(".tmp") || name.starts_with(baton_core::fs::TEMP_PREFIX) {
                match std::fs::remove_file(&p) {
                    Ok(()) => say(
                        Level::Repaired,
                        &p,
                        "removed the temp file of an interrupted write".into(),
                    ),
                    Err(e) => say(Level::Error, &p, Error::io(&p, e).to_string()),
                }
            }
        }
    }
}

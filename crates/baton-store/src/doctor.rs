//! `baton doctor`: verify every task of a store and repair what can be repaired without
//! losing anything: torn event lines are moved aside, manifests rebuilt from events, temp
//! files of interrupted writes removed. Damage inside the event log is reported, not guessed at.

use std::path::Path;

use serde::Serialize;

use super::model::EventKind;
use super::{EVENTS, LOCK, MANIFEST, Store, log, read_manifest};
use crate::error::{Error, Result};
use baton_core::error::Fault;
use baton_core::fs;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Ok,
    Repaired,
    Warning,
    /// A repair that cannot be made now because the disk is full: nothing is damaged (the
    /// event log holds it); run doctor again once there is space.
    NoSpace,
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

    /// Repairs wait for disk space (and nothing else is wrong when [`Report::healthy`]).
    pub fn out_of_space(&self) -> bool {
        self.findings.iter().any(|f| f.level == Level::NoSpace)
    }
}

/// An artifact the events recorded whose file was missing, and whether writing it again from
/// its event's content worked.
pub(crate) struct Restored {
    pub file: std::path::PathBuf,
    pub seq: u64,
    pub result: Result<()>,
}

/// Write again every artifact of `events` whose file is missing (a crash, a full disk, a file
/// deleted), from the content its event carries. Used by doctor and by RETRIEVE, which must
/// not serve an older version in its place.
pub(crate) fn restore_missing(dir: &Path, events: &[super::model::Event]) -> Vec<Restored> {
    let mut out = Vec::new();
    for e in events {
        let EventKind::ArtifactStored { path, content, .. } = &e.kind else {
            continue;
        };
        let file = dir.join(path);
        if file.symlink_metadata().is_ok() {
            continue;
        }
        // An event log is outside input (a store is committed, a clone can carry anything):
        // a path that leaves the task is never written.
        let inside = Path::new(path)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        let result = match content {
            _ if !inside || fs::confined(dir, &file).is_err() => Err(Error::corrupt(
                dir.join(EVENTS),
                None,
                format!(
                    "event {} names an artifact outside the task: {path:?}",
                    e.seq
                ),
            )),
            Some(text) => file
                .parent()
                .map_or(Ok(()), fs::create_dir_all)
                .and_then(|_| fs::write_new(&file, text.as_bytes()))
                .map_err(Error::from),
            None => Err(Error::corrupt(
                &file,
                None,
                format!("recorded by event {} but missing", e.seq),
            )),
        };
        out.push(Restored {
            file,
            seq: e.seq,
            result,
        });
    }
    out
}

/// Artifacts whose files a failed write left missing (a full disk) are written again from
/// their events before RETRIEVE reads the task: it must never serve an older version in a
/// newer one's place. One that still cannot be written refuses RETRIEVE, saying why.
pub(crate) fn restore_for_retrieve(dir: &Path) -> Result<()> {
    let events = log::read_all(&dir.join(EVENTS))?;
    let missing = events.iter().any(|e| {
        matches!(&e.kind, EventKind::ArtifactStored { path, .. }
            if dir.join(path).symlink_metadata().is_err())
    });
    if !missing {
        return Ok(());
    }
    let _lock = fs::lock(&dir.join(LOCK))?;
    for r in restore_missing(dir, &events) {
        if let Err(e) = r.result {
            return Err(Error::state(format!(
                "{}: stored by event {} but its file could not be written ({e}); RETRIEVE serves no older version in its place",
                r.file.display(),
                r.seq
            ))
            .hint(if e.is_out_of_space() {
                "the disk is full: free some space and run the command again"
            } else {
                "run `baton doctor` to check the task"
            }));
        }
    }
    Ok(())
}

/// A full disk is no damage: said as such.
fn level_of(e: &Error) -> Level {
    if e.is_out_of_space() {
        Level::NoSpace
    } else {
        Level::Error
    }
}

fn no_space_note(e: Error) -> String {
    if e.is_out_of_space() {
        format!(
            "{e}: the disk is full; nothing is lost (the event log holds it): free some space and run `baton doctor` again"
        )
    } else if let Some(baton_core::Error::Corrupt { msg, .. }) = e.shared() {
        msg.clone()
    } else {
        e.to_string()
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
            Err(e) => say(level_of(&e), &store.history_path(), no_space_note(e)),
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
        for r in restore_missing(dir, &all) {
            match r.result {
                Ok(()) => say(
                    Level::Repaired,
                    &r.file,
                    format!("was missing; restored from event {}", r.seq),
                ),
                Err(err) => say(level_of(&err), &r.file, no_space_note(err)),
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
                Err(e) => say(level_of(&e), &manifest_path, no_space_note(e)),
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

//! Scratch retention: which scratch files `baton gc` removes. Files older than the age limit
//! go, then the oldest until the folder fits the size limit; a file something still
//! references (a running phase, the current task) and a file written in the last few minutes
//! (a `baton mask` may still be writing it) are never removed. [`plan`] decides without
//! touching anything (`--dry-run` shows it); [`apply`] removes what it decided.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::error::{Error, Result};

/// How much scratch to keep (`[mask] keep_days`, `keep_mb`).
#[derive(Debug, Clone, Copy)]
pub struct Retention {
    pub max_age: Duration,
    pub max_bytes: u64,
}

/// A file modified this recently may still be being written.
pub const WRITING: Duration = Duration::from_secs(600);

/// Why a file goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    /// Older than the age limit.
    Age,
    /// The folder is over the size limit and this is among the oldest.
    Size,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Removal {
    pub path: PathBuf,
    pub bytes: u64,
    pub reason: Reason,
}

/// What a collection would do.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    pub remove: Vec<Removal>,
    /// Kept because something references them.
    pub in_use: Vec<PathBuf>,
    /// Kept because they were written in the last [`WRITING`].
    pub recent: Vec<PathBuf>,
    pub files: usize,
    pub bytes: u64,
    pub bytes_after: u64,
}

/// Decide what to remove from `dir`; `in_use(name)` says whether a file (by name) is still
/// referenced. A missing folder is an empty plan.
pub fn plan(
    dir: &Path,
    keep: Retention,
    in_use: &dyn Fn(&str) -> bool,
    now: SystemTime,
) -> Result<Plan> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Plan::default()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut files: Vec<(SystemTime, PathBuf, u64)> = Vec::new();
    for e in rd.flatten() {
        // Not through a symlink: gc removes only the folder's own files.
        let Ok(m) = e.path().symlink_metadata() else {
            continue;
        };
        if m.is_file() {
            files.push((m.modified().unwrap_or(now), e.path(), m.len()));
        }
    }
    files.sort();
    let mut p = Plan {
        files: files.len(),
        bytes: files.iter().map(|f| f.2).sum(),
        ..Plan::default()
    };
    let mut left = p.bytes;
    for (modified, path, bytes) in files {
        let age = now.duration_since(modified).unwrap_or_default();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let reason = if age > keep.max_age {
            Reason::Age
        } else if left > keep.max_bytes {
            Reason::Size
        } else {
            continue;
        };
        if in_use(&name) {
            p.in_use.push(path);
        } else if age < WRITING {
            p.recent.push(path);
        } else {
            left -= bytes;
            p.remove.push(Removal {
                path,
                bytes,
                reason,
            });
        }
    }
    p.bytes_after = left;
    Ok(p)
}

/// Remove what `plan` decided; a file already gone is fine.
pub fn apply(plan: &Plan) -> Result<()> {
    for r in &plan.remove {
        match std::fs::remove_file(&r.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&r.path, e)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path, name: &str, bytes: usize, age_secs: u64, now: SystemTime) {
        let p = dir.join(name);
        std::fs::write(&p, vec![b'x'; bytes]).unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(now - Duration::from_secs(age_secs)).unwrap();
    }

    #[test]
    fn old_files_go_then_the_oldest_until_it_fits_never_one_in_use_or_being_written() {
        let d = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let day = 86_400;
        file(d.path(), "a-old.log", 10, 9 * day, now);
        file(d.path(), "b-old-used.log", 10, 8 * day, now);
        file(d.path(), "c.log", 100, 3 * day, now);
        file(d.path(), "d.log", 100, 2 * day, now);
        file(d.path(), "e-writing.log", 100, 60, now);
        let keep = Retention {
            max_age: Duration::from_secs(7 * day),
            max_bytes: 50,
        };
        let p = plan(d.path(), keep, &|n| n.contains("used"), now).unwrap();
        let removed: Vec<(String, Reason)> = p
            .remove
            .iter()
            .map(|r| {
                (
                    r.path.file_name().unwrap().to_string_lossy().into_owned(),
                    r.reason,
                )
            })
            .collect();
        assert_eq!(
            removed,
            [
                ("a-old.log".into(), Reason::Age),
                ("c.log".into(), Reason::Size),
                ("d.log".into(), Reason::Size)
            ]
        );
        assert_eq!(p.in_use, [d.path().join("b-old-used.log")]);
        assert_eq!(p.recent, [d.path().join("e-writing.log")]);
        assert_eq!((p.files, p.bytes, p.bytes_after), (5, 320, 110));
        // Planning touched nothing; applying removes exactly the plan.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 5);
        apply(&p).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["b-old-used.log", "e-writing.log"]);
        apply(&p).unwrap();
    }
}

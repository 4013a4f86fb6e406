//! Session directories (ADR-003): `<local>/sessions/<kind>/<id>/` hold the files agents share
//! by path. baton makes the ids itself — an id taken from the environment is not unique per
//! session, and two sessions must never share a directory — as a UTC timestamp plus random
//! hex, so they sort by time.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

use crate::error::{Error, Result};
use baton_core::error::io_err;

/// A session kind is one plain path component: it names a directory under `sessions/`.
pub fn validate_kind(kind: &str) -> Result<()> {
    let bad = kind.is_empty()
        || kind.len() > 64
        || kind.starts_with('.')
        || !kind
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if bad {
        return Err(Error::invalid(format!("bad session kind {kind:?}")).hint(
            "use letters, digits, '-', '_' or '.' (not first), e.g. `pr_reviews` or `workflow`; no '/', '..' or absolute paths",
        ));
    }
    Ok(())
}

/// `<local>/.gitignore` holds `*`, so nothing machine-local is ever committed. Never through
/// a link or into a FIFO (a cloned repository can carry either): the file is read and replaced
/// only when it is a regular one. A temp file a killed write left in `<local>` (this one's
/// own, or any other of baton's atomic writes there) is removed first.
pub fn ensure_gitignore(local: &Path) -> Result<()> {
    std::fs::create_dir_all(local).map_err(io_err(local))?;
    let removed = baton_core::fs::remove_stale_temps(local, std::time::Duration::from_secs(60));
    baton_core::fs::note_removed_temps(&removed, local.parent().unwrap_or(local));
    let gi = local.join(".gitignore");
    let current = if baton_core::fs::own_file(&gi)? {
        let bytes = baton_core::fs::read_no_link(&gi).map_err(|e| Error::io(&gi, e))?;
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        String::new()
    };
    if current.lines().any(|l| l.trim() == "*") {
        return Ok(());
    }
    let mut next = current;
    if !next.is_empty() && !next.ends_with('\n') {
        next.push('\n');
    }
    next.push_str("*\n");
    Ok(baton_core::fs::write_atomic(&gi, next.as_bytes())?)
}

/// Create a fresh session directory and return its path.
pub fn create(local: &Path, kind: &str) -> Result<PathBuf> {
    validate_kind(kind)?;
    ensure_gitignore(local)?;
    let parent = local.join("sessions").join(kind);
    baton_core::fs::confined(local, &parent)?;
    std::fs::create_dir_all(&parent).map_err(io_err(&parent))?;
    for _ in 0..8 {
        let dir = parent.join(baton_core::ids::new_id());
        // create_dir (not _all) fails on an existing directory: the id is ours alone.
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&dir, e)),
        }
    }
    Err(Error::state(format!(
        "could not make a unique session id under {}",
        parent.display()
    )))
}

#[derive(Debug, Clone, Serialize)]
pub struct Session {
    pub kind: String,
    pub id: String,
    pub path: PathBuf,
    pub files: u64,
    pub bytes: u64,
    /// Seconds since the newest modification inside the session.
    pub idle_secs: u64,
}

/// Sessions of `kind` (or of every kind), oldest first.
pub fn list(local: &Path, kind: Option<&str>) -> Result<Vec<Session>> {
    if let Some(k) = kind {
        validate_kind(k)?;
    }
    let root = local.join("sessions");
    let kinds: Vec<String> = match kind {
        Some(k) => vec![k.to_string()],
        None => dir_names(&root)?,
    };
    let now = SystemTime::now();
    let mut out = Vec::new();
    for k in kinds {
        let kdir = root.join(&k);
        for id in dir_names(&kdir)? {
            let path = kdir.join(&id);
            let (files, bytes, newest) = walk(&path)?;
            let idle = now.duration_since(newest).unwrap_or(Duration::ZERO);
            out.push(Session {
                kind: k.clone(),
                id,
                path,
                files,
                bytes,
                idle_secs: idle.as_secs(),
            });
        }
    }
    out.sort_by(|a, b| (&a.id, &a.kind).cmp(&(&b.id, &b.kind)));
    Ok(out)
}

/// Names of the subdirectories of `dir` (none if it does not exist).
fn dir_names(dir: &Path) -> Result<Vec<String>> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io(dir, e)),
    };
    let mut names = Vec::new();
    for e in rd {
        let e = e.map_err(io_err(dir))?;
        if e.file_type().map_err(io_err(&e.path()))?.is_dir() {
            names.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// Files, bytes and newest mtime under `dir` (symlinks are not followed).
fn walk(dir: &Path) -> Result<(u64, u64, SystemTime)> {
    let meta = std::fs::symlink_metadata(dir).map_err(io_err(dir))?;
    let mut newest = meta.modified().unwrap_or(UNIX_EPOCH);
    let (mut files, mut bytes) = (0, 0);
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).map_err(io_err(&d))? {
            let e = e.map_err(io_err(&d))?;
            let m = std::fs::symlink_metadata(e.path()).map_err(io_err(&e.path()))?;
            newest = newest.max(m.modified().unwrap_or(UNIX_EPOCH));
            if m.is_dir() {
                stack.push(e.path());
            } else {
                files += 1;
                bytes += m.len();
            }
        }
    }
    Ok((files, bytes, newest))
}

/// Parse `30m`, `12h`, `7d`, `2w`, `90s`.
pub fn parse_duration(s: &str) -> Result<Duration> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad_duration(s))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 7 * 86_400,
        _ => return Err(bad_duration(s)),
    };
    n.checked_mul(mult)
        .map(Duration::from_secs)
        .ok_or_else(|| bad_duration(s))
}

fn bad_duration(s: &str) -> Error {
    Error::invalid(format!("bad duration {s:?}"))
        .hint("use a number and a unit: 90s, 30m, 12h, 7d, 2w")
}

/// Remove sessions idle for longer than `older_than` (or only list them with `dry_run`).
pub fn clean(
    local: &Path,
    kind: Option<&str>,
    older_than: Duration,
    dry_run: bool,
) -> Result<Vec<Session>> {
    let old: Vec<Session> = list(local, kind)?
        .into_iter()
        .filter(|s| s.idle_secs > older_than.as_secs())
        .collect();
    if !dry_run {
        for s in &old {
            std::fs::remove_dir_all(&s.path).map_err(io_err(&s.path))?;
        }
    }
    Ok(old)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `.gitignore` write killed between its temp file and its rename leaves the temp file
    /// in `.baton/`: the next call removes it (its writer is gone) and keeps one of a live
    /// writer, and an existing text gains `*` once.
    #[test]
    fn a_killed_writes_temp_file_is_removed_and_the_text_kept() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join(".baton");
        std::fs::create_dir_all(&local).unwrap();
        let dead = local.join(format!("{}2000000000-aB3dE", baton_core::fs::TEMP_PREFIX));
        let live = local.join(format!(
            "{}{}-fG5hI",
            baton_core::fs::TEMP_PREFIX,
            std::process::id()
        ));
        std::fs::write(&dead, "*\n").unwrap();
        std::fs::write(&live, "*\n").unwrap();
        std::fs::write(local.join(".gitignore"), "scratch/").unwrap();
        ensure_gitignore(&local).unwrap();
        assert!(!dead.exists(), "the dead writer's temp file is gone");
        assert!(live.exists(), "a live writer's temp file is kept");
        ensure_gitignore(&local).unwrap();
        assert_eq!(
            std::fs::read_to_string(local.join(".gitignore")).unwrap(),
            "scratch/\n*\n"
        );
    }

    #[test]
    fn kinds_and_durations() {
        for ok in ["pr_reviews", "workflow", "build-2", "a.b"] {
            assert!(validate_kind(ok).is_ok(), "{ok}");
        }
        for bad in ["", "..", "a/b", "/abs", "a\0b", ".hidden", "a b"] {
            assert!(validate_kind(bad).is_err(), "{bad:?}");
        }
        assert_eq!(parse_duration("30m").unwrap().as_secs(), 1800);
        assert_eq!(parse_duration("7d").unwrap().as_secs(), 604_800);
        for bad in ["", "7", "d", "7y", "-1d", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn ids_sort_by_time_and_create_is_unique() {
        let id = baton_core::ids::new_id();
        assert_eq!(id.len(), "20261122T130501-7f3a9c".len(), "{id}");
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join(".baton");
        let a = create(&local, "workflow").unwrap();
        let b = create(&local, "workflow").unwrap();
        assert_ne!(a, b);
        assert_eq!(
            std::fs::read_to_string(local.join(".gitignore")).unwrap(),
            "*\n"
        );
        std::fs::write(a.join("context.md"), "hello").unwrap();
        let all = list(&local, None).unwrap();
        assert_eq!(all.len(), 2);
        assert_eq!(all.iter().map(|s| s.bytes).sum::<u64>(), 5);
        assert!(
            clean(&local, None, Duration::from_secs(3600), false)
                .unwrap()
                .is_empty()
        );
        assert_eq!(list(&local, Some("workflow")).unwrap().len(), 2);
    }
}

//! File-system primitives of the store: locks, atomic replacement, durable appends.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result, io_err};

/// An exclusive advisory lock held until dropped (flock via `File::lock`).
pub struct Lock {
    _file: File,
}

pub fn lock(path: &Path) -> Result<Lock> {
    let file = lock_file(path)?;
    file.lock().map_err(io_err(path))?;
    Ok(Lock { _file: file })
}

/// A lock file, created empty if missing (its content is never read). Never through a link
/// (a cloned repository can carry one, and the open would create its target), and never a
/// FIFO or device: opened without blocking, then checked to be a regular file.
fn lock_file(path: &Path) -> Result<File> {
    open_own(
        path,
        OpenOptions::new().create(true).truncate(false).write(true),
    )
}

/// Open a file of baton's own with `opts`, never through a symbolic link and never a FIFO,
/// device or socket: opened without following a link and without blocking (a FIFO nobody
/// reads would hang the open), then checked to be a regular file. Every file baton writes in
/// place (appends, locks, a torn tail cut off, the manifest's spare) is opened here.
pub fn open_own(path: &Path, opts: &mut OpenOptions) -> Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = opts
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| refused_open(path, e))?;
    let meta = file.metadata().map_err(io_err(path))?;
    if !meta.is_file() {
        return Err(not_own(path, file_kind(&meta)));
    }
    Ok(file)
}

/// What may stand where baton writes a file of its own: nothing yet (`false`), or a regular
/// file (`true`). A symbolic link, FIFO, device, socket or directory there is refused with the
/// path and what it is: writing through it could reach outside the project, block, or touch a
/// device. The one check before every file baton creates, appends to or replaces under its own
/// folders (`.baton/`, the user's config folder) and where `-o` points.
pub fn own_file(path: &Path) -> Result<bool> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
        Ok(m) if m.file_type().is_symlink() => Err(not_own(path, "a symbolic link")),
        // A folder in the file's place is a plain failure to write there (as the write's own
        // error would say), not something planted to lead elsewhere.
        Ok(m) if m.is_dir() => Err(Error::io(
            path,
            std::io::Error::from(std::io::ErrorKind::IsADirectory),
        )),
        Ok(m) if !m.is_file() => Err(not_own(path, file_kind(&m))),
        Ok(_) => Ok(true),
    }
}

/// The error for a file baton will not write through.
fn not_own(path: &Path, what: &str) -> Error {
    Error::invalid(format!(
        "{} is {what}, not a regular file: baton does not write through it",
        path.display()
    ))
    .hint(
        "something other than baton put it there (a cloned repository can carry links): \
         remove it, and baton makes the file anew",
    )
}

/// An open refused by `O_NOFOLLOW` (a link) or `O_NONBLOCK` (a FIFO nobody reads) is said as
/// such; anything else as the I/O error.
fn refused_open(path: &Path, e: std::io::Error) -> Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => not_own(path, "a symbolic link"),
        Some(libc::ENXIO) => not_own(path, "a FIFO"),
        _ => Error::io(path, e),
    }
}

/// What a file that is not a regular one is, in words.
pub fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file or directory"
    }
}

/// Take the exclusive lock of `path` without blocking for good: a holder that was killed or
/// interrupted a moment ago may still be on its way out (the lock goes with its last file
/// descriptor), so it is retried for up to `grace`. `None`: someone holds it.
pub fn try_lock_for(path: &Path, grace: std::time::Duration) -> Result<Option<File>> {
    let file = lock_file(path)?;
    let deadline = std::time::Instant::now() + grace;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(std::fs::TryLockError::WouldBlock) => return Ok(None),
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(path, e)),
        }
    }
}

/// Whether someone holds the lock of `path` now (a missing file: nobody). Creates nothing.
pub fn is_locked(path: &Path) -> bool {
    use std::os::unix::fs::OpenOptionsExt;
    let Ok(f) = OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    if !f.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

pub fn create_dir_all(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(io_err(dir))
}

/// Replace `path` with `bytes` all at once: a reader sees the old file or the new one, never
/// a mix. Not fsync'd: the files written this way are derived and rebuilt from the fsync'd
/// event log if a power loss ever leaves one behind.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_in(dir)?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// [`write_atomic`] for a file only its owner may read (mode 0600): it holds the user's own
/// texts (a record of the settings files baton changed).
pub fn write_atomic_private(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_mode(path, bytes, 0o600)
}

/// [`write_atomic`] with the new file's permission bits given (a user's settings file keeps
/// the mode it had: a 0600 file holding tokens must not come back 0644).
pub fn write_atomic_mode(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_in(dir)?;
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))
        .map_err(io_err(path))?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.persist(path).map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Name of the spare file beside `path` that [`replace_with_spare`] writes and swaps in.
pub fn spare_path(path: &Path) -> std::path::PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    path.with_file_name(format!("{TEMP_PREFIX}spare-{}", name.unwrap_or_default()))
}

/// [`write_atomic`] for a file rewritten by every command (a task's manifest): `bytes` are
/// written in place into a spare file beside it, which then trades names with `path`
/// (Linux `renameat2(RENAME_EXCHANGE)`), so the old content becomes the next spare. A reader
/// still sees the old file or the new one, but no inode is created and no file is renamed
/// over another — on ext4 the two cost ~0.1–2 ms (a new inode; a replacing rename flushes
/// the new file), ~100× the exchange. The caller serializes writers (the task lock). A
/// reader that kept the old file open across two more writes could see it change: the
/// store's readers re-read under the lock when a manifest does not parse. Elsewhere, and when
/// the file system cannot exchange, it is [`write_atomic`].
pub fn replace_with_spare(path: &Path, bytes: &[u8]) -> Result<()> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if exchange_with_spare(path, bytes).is_ok() {
        return Ok(());
    }
    write_atomic(path, bytes)
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn exchange_with_spare(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let spare = spare_path(path);
    // A spare planted as a link (the store is committed: a clone can carry one) is refused
    // here, and the write goes the atomic way, which replaces whatever is there.
    let f = open_own(
        &spare,
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o644),
    )
    .map_err(std::io::Error::other)?;
    f.write_all_at(bytes, 0)?;
    f.set_len(bytes.len() as u64)?;
    drop(f);
    let c =
        |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (from, to) = (c(&spare)?, c(path)?);
    // SAFETY: two NUL-terminated paths that live across the call.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    if err.kind() == std::io::ErrorKind::NotFound && !path.exists() {
        // The first write: nothing to exchange with, the spare becomes the file.
        return std::fs::rename(&spare, path);
    }
    Err(err)
}

/// Create `path` with `bytes`, durably, refusing to replace an existing file
/// ("never delete context, only add").
pub fn write_new_durable(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_in(dir)?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.as_file().sync_data().map_err(io_err(path))?;
    tmp.persist_noclobber(path)
        .map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// baton's temp files start with this: one a killed write left behind is recognised and
/// removed (`remove_stale_temps`) before it can be committed by a `git add -A`.
pub const TEMP_PREFIX: &str = ".baton-tmp-";

/// A temp file beside its target, named `TEMP_PREFIX` + the writer's pid + `-` + random
/// letters (the pid tells a killed write's file from one in progress). Store files are
/// documents meant to be committed and read, so they get the usual 0644 rather than
/// tempfile's 0600.
pub fn temp_in(dir: &Path) -> Result<tempfile::NamedTempFile> {
    let mut b = tempfile::Builder::new();
    let prefix = format!("{TEMP_PREFIX}{}-", std::process::id());
    b.prefix(&prefix);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        b.permissions(std::fs::Permissions::from_mode(0o644));
    }
    b.tempfile_in(dir).map_err(io_err(dir))
}

/// Remove baton's temp files (and folders) in `dir` (not below it) that writes killed
/// half-way left: those whose writer (the pid in the name, see [`temp_in`]) is gone, and any
/// older than `age`.
/// Others may belong to a write in progress. Returns what was removed.
pub fn remove_stale_temps(dir: &Path, age: std::time::Duration) -> Vec<std::path::PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return vec![];
    };
    let mut removed = vec![];
    for e in rd.flatten() {
        let name = e.file_name();
        // The manifest's spare (`replace_with_spare`) is kept on purpose.
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(TEMP_PREFIX))
            .filter(|r| !r.starts_with("spare-"))
        else {
            continue;
        };
        let Ok(meta) = e.metadata() else {
            continue;
        };
        let old = meta
            .modified()
            .is_ok_and(|t| t.elapsed().is_ok_and(|d| d >= age));
        let orphan = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok())
            .is_some_and(|pid| !process_exists(pid));
        let gone = match (old || orphan, meta.is_dir()) {
            (false, _) => false,
            // A run's folder being made (`Journal::start`).
            (true, true) => std::fs::remove_dir_all(e.path()).is_ok(),
            (true, false) => std::fs::remove_file(e.path()).is_ok(),
        };
        if gone {
            removed.push(e.path());
        }
    }
    removed
}

/// [`remove_stale_temps`] in `dir` and every folder below it.
pub fn remove_stale_temps_below(dir: &Path, age: std::time::Duration) -> Vec<std::path::PathBuf> {
    let mut removed = vec![];
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        removed.extend(remove_stale_temps(&d, age));
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        dirs.extend(
            rd.flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .map(|e| e.path()),
        );
    }
    removed
}

/// [`remove_stale_temps_below`] (a writer gone, or a minute old), each with a note on stderr
/// shown from `top`.
pub fn clear_cut_short_writes(dir: &Path, top: &Path) {
    let removed = remove_stale_temps_below(dir, std::time::Duration::from_secs(60));
    note_removed_temps(&removed, top);
}

/// A note on stderr for each temp file [`remove_stale_temps`] removed, shown from `top`.
pub fn note_removed_temps(removed: &[std::path::PathBuf], top: &Path) {
    for p in removed {
        crate::notice::note(format!(
            "removed {}, left by a write that was cut short",
            p.strip_prefix(top).unwrap_or(p).display()
        ));
    }
}

/// Whether a process `pid` exists (it may be another program that got the number since).
fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: kill(2) with signal 0 sends nothing; it only checks that the pid exists.
    pid > 0
        && (unsafe { libc::kill(pid, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH))
}

/// Create `path` with `bytes` all at once, refusing to replace an existing file; not fsync'd
/// (for files whose content is also in the fsync'd event log).
pub fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = temp_in(dir)?;
    tmp.write_all(bytes).map_err(io_err(path))?;
    tmp.persist_noclobber(path)
        .map_err(|e| Error::io(path, e.error))?;
    Ok(())
}

/// Append `bytes` and fsync before returning: the caller reports success only after this.
/// A failed append (a full disk) is cut back off, so the file is as it was: a half-written
/// line never waits there for the next append to glue onto.
pub fn append_durable(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = open_append(path)?;
    let before = f.metadata().map_err(io_err(path))?.len();
    let written = f.write_all(bytes).and_then(|()| f.sync_data());
    if let Err(e) = written {
        let _ = f.set_len(before).and_then(|()| f.sync_data());
        return Err(Error::io(path, e));
    }
    Ok(())
}

/// Append without fsync (human-readable logs that are not a source of truth).
pub fn append(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = open_append(path)?;
    f.write_all(bytes).map_err(io_err(path))
}

/// Open for appending, never through a symbolic link: a log replaced by a link (a cloned
/// repository can carry one) would take baton's writes out of the project.
fn open_append(path: &Path) -> Result<File> {
    open_own(path, OpenOptions::new().create(true).append(true))
}

/// Read a whole file, never through a symbolic link.
pub fn read_no_link(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf)?;
    Ok(buf)
}

/// The error for `path`: a link refused is said as such, anything else as the I/O error.
pub fn no_link(path: &Path, e: std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Error::invalid(format!(
            "{} is a symbolic link: baton does not read or write store files through links",
            path.display()
        ))
        .hint("replace the link with a regular file (or remove it, then `baton doctor` rebuilds what it can)");
    }
    Error::io(path, e)
}

/// The last `max` bytes of a file (all of it when smaller), and the file's length. One
/// positioned read (no seek, no size probe): it is on every store command's path.
pub fn read_tail(path: &Path, max: u64) -> Result<(Vec<u8>, u64)> {
    use std::os::unix::fs::{FileExt, OpenOptionsExt};
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| no_link(path, e))?;
    let len = f.metadata().map_err(io_err(path))?.len();
    let start = len.saturating_sub(max);
    let mut buf = vec![0; (len - start) as usize];
    // Up to the end as it is now: a log cut back meanwhile (a torn tail moved aside) is shorter.
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], start + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, e)),
        }
    }
    buf.truncate(n);
    Ok((buf, len))
}

/// Read a file that must be UTF-8 text; the error names the file.
pub fn read_text(path: &Path) -> Result<String> {
    utf8(path, std::fs::read(path).map_err(io_err(path))?)
}

/// Read a text file if it exists.
pub fn read_text_opt(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => utf8(path, bytes).map(Some),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(path, e)),
    }
}

fn utf8(path: &Path, bytes: Vec<u8>) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        Error::corrupt(
            path,
            None,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// `path` must resolve inside `base`, symlinks followed (the part of `path` that does not exist
/// yet is taken as it is): a symlink planted in the project must not lead a read or a write out
/// of it. `base` is resolved the same way.
pub fn confined(base: &Path, path: &Path) -> Result<()> {
    if no_symlink_below(base, path) {
        return Ok(());
    }
    let base_real = resolve_existing(base)?;
    let real = resolve_existing(path)?;
    if real.starts_with(&base_real) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{}: resolves to {}, outside {}",
        path.display(),
        real.display(),
        base.display()
    ))
    .hint("baton keeps every task, story, artifact and queue path inside the project: replace the symlink with the file or directory itself"))
}

/// The common case, in one `lstat` per component and no `realpath`: `path` is `base` plus plain
/// components, none of the existing ones a symlink. Then it cannot leave `base`.
fn no_symlink_below(base: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(base) else {
        return false;
    };
    let mut p = base.to_path_buf();
    for c in rel.components() {
        let std::path::Component::Normal(c) = c else {
            return false;
        };
        p.push(c);
        match p.symlink_metadata() {
            Ok(m) if m.file_type().is_symlink() => return false,
            Ok(_) => {}
            // Not there yet: nothing below it exists either.
            Err(_) => return true,
        }
    }
    true
}

/// `path` with its longest existing prefix canonicalized (symlinks followed); a dangling
/// symlink is an error, since where it leads cannot be checked.
fn resolve_existing(path: &Path) -> Result<std::path::PathBuf> {
    let mut rest = Vec::new();
    let mut p = path;
    loop {
        if p.symlink_metadata().is_ok() {
            let real = p.canonicalize().map_err(|e| {
                Error::invalid(format!("{}: cannot be resolved ({e})", p.display())).hint(
                    "a symlink whose target is missing: remove it or point it inside the project",
                )
            })?;
            return Ok(rest
                .iter()
                .rev()
                .fold(real, |acc: std::path::PathBuf, c| acc.join(c)));
        }
        match (p.file_name(), p.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                p = if parent.as_os_str().is_empty() {
                    Path::new(".")
                } else {
                    parent
                };
            }
            _ => return Ok(path.to_path_buf()),
        }
    }
}

#[cfg(test)]
mod confined_tests {
    use super::*;

    #[test]
    fn symlinks_out_of_the_base_are_refused_and_new_paths_are_judged_by_their_parent() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().join("p");
        let outside = t.path().join("elsewhere");
        std::fs::create_dir_all(base.join("docs")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, base.join("docs/tasks")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", base.join("docs/a.md")).unwrap();
        std::os::unix::fs::symlink(base.join("docs"), base.join("in")).unwrap();
        std::os::unix::fs::symlink(t.path().join("gone"), base.join("dangling")).unwrap();
        assert!(confined(&base, &base.join("docs/new/file.md")).is_ok());
        assert!(
            confined(&base, &base.join("in/x.md")).is_ok(),
            "a link inside is fine"
        );
        let e = confined(&base, &base.join("docs/tasks/t1/manifest.json")).unwrap_err();
        assert!(e.to_string().contains("outside"), "{e}");
        assert!(confined(&base, &base.join("docs/a.md")).is_err());
        assert!(confined(&base, &base.join("dangling")).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temp_files_of_gone_writers_are_removed_others_kept() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("prompts");
        std::fs::create_dir(&sub).unwrap();
        let ours = temp_in(&sub).unwrap();
        let name = ours
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            name.starts_with(&format!("{TEMP_PREFIX}{}-", std::process::id())),
            "{name}"
        );
        let orphan = sub.join(format!("{TEMP_PREFIX}99999999-x"));
        let unnamed = d.path().join(format!("{TEMP_PREFIX}Zz99Yy"));
        let spare = d.path().join(format!("{TEMP_PREFIX}spare-manifest.json"));
        let other = d.path().join("notes.txt");
        for f in [&orphan, &unnamed, &spare, &other] {
            std::fs::write(f, "x").unwrap();
        }
        // Not below: the subfolder's orphan stays.
        assert!(remove_stale_temps(d.path(), std::time::Duration::from_secs(60)).is_empty());
        let removed = remove_stale_temps_below(d.path(), std::time::Duration::from_secs(60));
        assert_eq!(removed, std::slice::from_ref(&orphan));
        assert!(ours.path().exists() && unnamed.exists() && spare.exists() && other.exists());
        // Old enough, a file without a pid goes too; the spare and other files never do.
        let removed = remove_stale_temps_below(d.path(), std::time::Duration::ZERO);
        assert!(removed.contains(&unnamed) && removed.contains(&ours.path().to_path_buf()));
        assert!(spare.exists() && other.exists());
    }
}

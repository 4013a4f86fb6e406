//! How init touches the disk: a file replaced whole, by a rename from a temp file of a fixed
//! name beside it (`.<name>.baton-init`), keeping the file's permission bits, owner and link;
//! the temp file a killed init left swept away by the next; the test hook that kills init
//! between two writes.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// SHA-256 of `text`, in hex: whether a file still holds what init wrote.
pub fn fingerprint(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The temp file init writes `target` through.
fn temp_for(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.baton-init"))
}

/// The file a write of `path` lands in: a link's target (a dotfiles checkout stays a link).
fn target_of(path: &Path) -> PathBuf {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => path.canonicalize().unwrap_or(path.to_path_buf()),
        _ => path.to_path_buf(),
    }
}

/// Remove the temp file a killed init left beside `path` (it holds a whole copy of the file,
/// the user's tokens with it). Only a regular file of that name is removed, never a link.
pub fn sweep(path: &Path) {
    let tmp = temp_for(&target_of(path));
    if std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.file_type().is_file()) {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Test hook: with `BATON_INIT_KILL_AT=N`, init is killed (SIGKILL) at its Nth step (each
/// file written, the record written, a temp file written but not yet renamed).
pub fn step() {
    use std::sync::atomic::{AtomicU32, Ordering};
    static STEPS: AtomicU32 = AtomicU32::new(0);
    let n = STEPS.fetch_add(1, Ordering::SeqCst) + 1;
    if std::env::var("BATON_INIT_KILL_AT").is_ok_and(|v| v == n.to_string()) {
        // SAFETY: signalling this very process.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

/// Make `dir/rel` hold `text`, or remove it (`None`). A file that is there keeps what it was:
/// its permission bits (a 0600 `~/.claude.json` holding tokens stays 0600), its owner (where
/// baton may set it), and a link (a dotfiles checkout) stays a link, its target written (a
/// project's link was refused before, when it leads outside).
pub fn apply(dir: &Path, rel: &Path, text: Option<&str>) -> Result<()> {
    let path = dir.join(rel);
    let Some(text) = text else {
        return match std::fs::remove_file(&path) {
            Ok(()) => {
                remove_empty_parents(dir, &path);
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(&path, e)),
        };
    };
    let target = target_of(&path);
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    let was = std::fs::metadata(&target).ok();
    let mode = was
        .as_ref()
        .map_or(0o644, |m| m.permissions().mode() & 0o7777);
    let tmp = temp_for(&target);
    sweep(&path);
    let io = |e: std::io::Error| Error::io(&target, e);
    let written = (|| -> Result<()> {
        // Made anew, never through a link planted on its name (`fs::open_own`).
        let mut f = baton_core::fs::open_own(
            &tmp,
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600),
        )?;
        // The mode asked of `open` is cut by the umask; the file's own is given whole.
        f.set_permissions(std::fs::Permissions::from_mode(mode))
            .map_err(io)?;
        if let Some(m) = &was {
            // Root editing a user's file leaves it theirs; anyone else cannot give it away
            // (and needs not: the file is theirs already).
            let _ = std::os::unix::fs::fchown(&f, Some(m.uid()), Some(m.gid()));
        }
        f.write_all(text.as_bytes()).map_err(io)?;
        f.sync_all().map_err(io)?;
        step();
        std::fs::rename(&tmp, &target).map_err(io)
    })();
    if written.is_err() && std::fs::symlink_metadata(&tmp).is_ok_and(|m| m.is_file()) {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Directories baton created for a file it removes go too, when empty (never `dir` itself).
fn remove_empty_parents(dir: &Path, file: &Path) {
    let mut p = file.parent();
    while let Some(d) = p {
        if d == dir || !d.starts_with(dir) || std::fs::remove_dir(d).is_err() {
            break;
        }
        p = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_inits_temp_file_is_swept_and_a_write_keeps_mode_and_link() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("real.json"), "{}").unwrap();
        std::fs::set_permissions(d.join("real.json"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        std::os::unix::fs::symlink(d.join("real.json"), d.join("link.json")).unwrap();
        // What a kill between the temp file and its rename leaves.
        std::fs::write(d.join(".real.json.baton-init"), "{\"token\": 1}").unwrap();
        apply(d, Path::new("link.json"), Some("{\"a\": 1}\n")).unwrap();
        assert!(!d.join(".real.json.baton-init").exists());
        assert!(
            std::fs::symlink_metadata(d.join("link.json"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(d.join("real.json")).unwrap(),
            "{\"a\": 1}\n"
        );
        let mode = std::fs::metadata(d.join("real.json"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A link planted on the temp file's name is not followed, nor removed by the sweep.
        std::fs::write(d.join("elsewhere"), "theirs").unwrap();
        std::os::unix::fs::symlink(d.join("elsewhere"), d.join(".real.json.baton-init")).unwrap();
        assert!(apply(d, Path::new("real.json"), Some("x")).is_err());
        assert_eq!(
            std::fs::read_to_string(d.join("elsewhere")).unwrap(),
            "theirs"
        );
        assert_eq!(fingerprint("").len(), 64);
    }
}

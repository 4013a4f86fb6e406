//! Scratch files: `<project>/.baton/scratch/<time>-<pid>-<kind>.log`, mode 0600, inside a
//! `.baton/` that carries a `.gitignore` of `*` so masked output is never committed.

use std::fs::{File, OpenOptions};
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Make sure `local` (the project's `.baton/`) ignores itself and holds `scratch/`.
pub fn scratch_dir(local: &Path) -> Result<PathBuf> {
    let dir = local.join("scratch");
    let not_dir = |p: &Path| {
        Error::io(
            p,
            std::io::Error::new(ErrorKind::NotADirectory, "exists but is not a directory"),
        )
    };
    for d in [local, dir.as_path()] {
        if d.exists() && !d.is_dir() {
            return Err(not_dir(d));
        }
    }
    // Masked outputs may hold secrets: never written through a symlink to elsewhere.
    baton_core::fs::confined(local, &dir)?;
    create_private_dir(&dir)?;
    crate::session::ensure_gitignore(local)?;
    Ok(dir)
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| Error::io(dir, e))
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))
}

/// Create a new, empty scratch file (never overwrites one).
pub fn create(dir: &Path, label: &str) -> Result<(File, PathBuf)> {
    let stamp = jiff::Timestamp::now().strftime("%Y%m%dT%H%M%S").to_string();
    let pid = std::process::id();
    let label: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    for n in 0..1000u32 {
        let name = if n == 0 {
            format!("{stamp}-{pid}-{label}.log")
        } else {
            format!("{stamp}-{pid}-{label}-{n}.log")
        };
        let path = dir.join(name);
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            opts.mode(0o600);
        }
        match opts.open(&path) {
            Ok(f) => return Ok((f, path)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(Error::io(&path, e)),
        }
    }
    Err(Error::io(
        dir,
        std::io::Error::new(ErrorKind::AlreadyExists, "no free scratch file name"),
    ))
}

/// Whether `text` (a command line, an argument) names a path in the scratch folder of the
/// project whose local folder is `local_dir`: absolute, or as `.baton/scratch/…`. A read of a
/// scratch file is the full output a summary named; masking it again would only name another
/// copy of itself.
pub fn names_scratch(text: &str, local_dir: &Path) -> bool {
    let abs = local_dir.join("scratch");
    let relative = local_dir
        .file_name()
        .map(|n| format!("{}/scratch/", n.to_string_lossy()));
    text.contains(&*abs.to_string_lossy()) || relative.is_some_and(|r| text.contains(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_gitignored_private_files() {
        let tmp = tempfile::tempdir().unwrap();
        let local = tmp.path().join(".baton");
        let dir = scratch_dir(&local).unwrap();
        assert_eq!(
            std::fs::read_to_string(local.join(".gitignore")).unwrap(),
            "*\n"
        );
        let (_f, a) = create(&dir, "cargo test").unwrap();
        let (_g, b) = create(&dir, "cargo test").unwrap();
        assert_ne!(a, b);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&a).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_file_in_the_way_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let local = tmp.path().join(".baton");
        std::fs::create_dir(&local).unwrap();
        std::fs::write(local.join("scratch"), "x").unwrap();
        let err = scratch_dir(&local).unwrap_err().to_string();
        assert!(
            err.contains("scratch") && err.contains("not a directory"),
            "{err}"
        );
    }
}

//! Reading the text a context command works on: a file or `-` (stdin), with clear errors for
//! the cases agents hit in practice (a typo'd path, a directory, a binary or non-UTF-8 file).

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// One input: its display name (`-` is shown as `<stdin>`) and its text.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub text: String,
}

/// How to treat bytes that are not UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Utf8 {
    /// Refuse the input, naming the first bad byte (the default: counts stay exact).
    #[default]
    Strict,
    /// Replace invalid sequences with U+FFFD and carry on.
    Lossy,
}

/// Read `arg` (`-` = stdin) as text.
pub fn read(arg: &str, utf8: Utf8) -> Result<Input> {
    let (name, bytes) = if arg == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .lock()
            .read_to_end(&mut buf)
            .map_err(|e| Error::io("<stdin>", e))?;
        ("<stdin>".to_string(), buf)
    } else {
        (arg.to_string(), read_file(Path::new(arg))?)
    };
    let text = decode(&name, bytes, utf8)?;
    Ok(Input { name, text })
}

fn read_file(path: &Path) -> Result<Vec<u8>> {
    read_bytes(path, "pass the files inside it, e.g. `dir/*.md`")
}

/// A file's bytes; a missing file or a directory is a clear error naming it (`dir_hint` says
/// what to do instead of passing a directory).
pub fn read_bytes(path: &Path, dir_hint: &str) -> Result<Vec<u8>> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(
                Error::not_found(format!("{}: no such file", path.display()))
                    .hint("check the path (it is relative to the working directory)"),
            );
        }
        Err(e) => return Err(Error::io(path, e)),
        Ok(m) if m.is_dir() => {
            return Err(
                Error::invalid(format!("{}: is a directory", path.display())).hint(dir_hint),
            );
        }
        Ok(m) if !m.is_file() => return Err(not_regular(path, &m)),
        Ok(_) => {}
    }
    // Opened without blocking and checked again: a FIFO swapped in after the check above must
    // not hang the read (opening a FIFO for reading waits for a writer).
    let mut opts = std::fs::OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    let mut file = opts.open(path).map_err(|e| Error::io(path, e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, e))?;
    if !meta.is_file() {
        return Err(not_regular(path, &meta));
    }
    let mut buf = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut buf).map_err(|e| Error::io(path, e))?;
    Ok(buf)
}

/// A FIFO, device or socket: reading it could block or never end, so it is refused.
fn not_regular(path: &Path, meta: &std::fs::Metadata) -> Error {
    let what = baton_core::fs::file_kind(meta);
    Error::invalid(format!("{}: not a regular file ({what})", path.display())).hint(
        "baton reads regular files only (a pipe or device could block or never end); copy the \
         data to a file, or pipe it in and pass `-` (e.g. `cat FIFO | baton tokens -`)",
    )
}

/// UTF-8 check without copying: the bytes become the String when they are valid.
fn decode(name: &str, bytes: Vec<u8>, utf8: Utf8) -> Result<String> {
    match String::from_utf8(bytes) {
        Ok(s) => Ok(s),
        Err(e) => {
            let bad = e.utf8_error().valid_up_to();
            let bytes = e.into_bytes();
            if utf8 == Utf8::Lossy {
                return Ok(String::from_utf8_lossy(&bytes).into_owned());
            }
            // A NUL in the first block is the usual sign of a binary file, not a text encoding.
            let what = if bytes.iter().take(8192).any(|&b| b == 0) {
                "looks binary (contains NUL bytes) and is not valid UTF-8"
            } else {
                "is not valid UTF-8"
            };
            Err(Error::invalid(format!("{name}: {what} (first bad byte at offset {bad})"))
                .hint("convert it to UTF-8 (e.g. `iconv -f latin1 -t utf-8`), or pass --lossy to replace invalid bytes with U+FFFD"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    #[test]
    fn bad_inputs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_string_lossy().to_string();
        let e = read(&d, Utf8::Strict).unwrap_err();
        assert!(e.to_string().contains("is a directory"), "{e}");
        let missing = dir.path().join("nope.md");
        let e = read(&missing.to_string_lossy(), Utf8::Strict).unwrap_err();
        assert_eq!(e.exit_code(), 4);
        let bin = dir.path().join("bin");
        std::fs::write(&bin, b"ab\xff\x00cd").unwrap();
        let e = read(&bin.to_string_lossy(), Utf8::Strict).unwrap_err();
        assert!(e.to_string().contains("offset 2"), "{e}");
        assert!(e.to_string().contains("binary"), "{e}");
        let ok = read(&bin.to_string_lossy(), Utf8::Lossy).unwrap();
        assert_eq!(ok.text, "ab\u{fffd}\0cd");
    }

    #[cfg(unix)]
    #[test]
    fn fifos_and_devices_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (p, kind) in [
            (fifo.as_path(), "a FIFO"),
            (Path::new("/dev/zero"), "a character device"),
        ] {
            let e = read_bytes(p, "").unwrap_err();
            assert_eq!(e.exit_code(), 2);
            let msg = e.to_string();
            assert!(
                msg.contains(&format!("not a regular file ({kind})")),
                "{msg}"
            );
            assert!(msg.contains(&p.display().to_string()), "{msg}");
        }
    }
}

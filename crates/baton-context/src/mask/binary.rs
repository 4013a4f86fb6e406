//! Binary output: recognized from the first 8 KB (a known magic number, or too many bytes that
//! text does not have), so `baton mask` says "binary output, N bytes (gzip)" instead of
//! summarizing escaped garbage. The scratch file keeps the bytes.

/// Bytes looked at.
pub const SNIFF: usize = 8192;

/// Magic numbers at offset 0 that mark a binary format whatever follows.
const MAGIC: &[(&[u8], &str)] = &[
    (b"\x1f\x8b", "gzip"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"\x7fELF", "ELF"),
    (b"PK\x03\x04", "zip"),
    (b"%PDF-", "PDF"),
    (b"\xff\xd8\xff", "JPEG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"BZh", "bzip2"),
    (b"7z\xbc\xaf\x27\x1c", "7z"),
    (b"\x00asm", "WebAssembly"),
    (b"SQLite format 3\x00", "SQLite"),
    (b"\xcf\xfa\xed\xfe", "Mach-O"),
    (b"\xca\xfe\xba\xbe", "Mach-O universal or Java class"),
    (b"RIFF", "RIFF (WAV/AVI/WebP)"),
    (b"OggS", "Ogg"),
    (b"\x1aE\xdf\xa3", "Matroska/WebM"),
];

/// The format's name, when the start of the output has a known magic number.
pub fn magic(head: &[u8]) -> Option<&'static str> {
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return Some("tar");
    }
    if head.starts_with(b"BZh") && head.get(4..10).is_none_or(|m| m != b"1AY&SY") {
        return None;
    }
    MAGIC
        .iter()
        .find(|(m, _)| head.starts_with(m))
        .map(|&(_, name)| name)
}

/// Whether the start of an output is binary: a known magic number, or more than 10 % of bytes
/// that text does not have (NUL and other control bytes, invalid UTF-8). Text with a few NULs
/// (`find -print0`) stays text.
pub fn is_binary(head: &[u8]) -> bool {
    if head.is_empty() {
        return false;
    }
    if magic(head).is_some() {
        return true;
    }
    let control = head
        .iter()
        .filter(|&&b| {
            (b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\r' | 0x0c | 0x1b | 0x08 | 0x07))
                || b == 0x7f
        })
        .count();
    let mut invalid = 0;
    let mut chunks = head.utf8_chunks().peekable();
    while let Some(c) = chunks.next() {
        // A sequence cut by the end of the window is not held against the text.
        if chunks.peek().is_some() || head.len() < SNIFF {
            invalid += c.invalid().len();
        }
    }
    (control + invalid) * 10 > head.len()
}

/// The summary line for binary output.
pub fn describe(bytes: u64, kind: Option<&str>) -> String {
    match kind {
        Some(k) => format!("binary output, {bytes} bytes ({k})"),
        None => format!("binary output, {bytes} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_numbers_name_the_format() {
        assert_eq!(magic(b"\x1f\x8b\x08\x00rest"), Some("gzip"));
        assert_eq!(magic(b"\x89PNG\r\n\x1a\n\x00\x00"), Some("PNG"));
        assert_eq!(magic(b"\x7fELF\x02\x01"), Some("ELF"));
        assert_eq!(magic(b"BZh91AY&SYxx"), Some("bzip2"));
        assert_eq!(magic(b"BZh is a word"), None);
        let mut tar = vec![0u8; 512];
        tar[257..262].copy_from_slice(b"ustar");
        assert_eq!(magic(&tar), Some("tar"));
        assert_eq!(magic(b"hello"), None);
    }

    #[test]
    fn text_is_not_binary() {
        assert!(!is_binary(b"plain text\nwith lines\n"));
        assert!(!is_binary("héllo wörld ✓ — ünïcode\n".as_bytes()));
        assert!(!is_binary(b"\x1b[31merror\x1b[0m: red\r\n\tindented\n"));
        assert!(!is_binary(
            b"./a/long/path/one\x00./a/long/path/two\x00./a/long/path/three\x00"
        ));
        assert!(!is_binary(b""));
    }

    #[test]
    fn binary_is_binary() {
        assert!(is_binary(b"\xff\xfe\x00abc\n"));
        assert!(is_binary(b"\x7fELF"));
        let noise: Vec<u8> = (0..SNIFF).map(|i| (i * 7919 % 251) as u8).collect();
        assert!(is_binary(&noise));
        assert!(is_binary(&[0u8; 100]));
    }
}

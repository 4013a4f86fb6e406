//! Property tests of the masker.

use proptest::prelude::*;

use super::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever the bytes and however they are chunked: the sink receives them exactly,
    /// the line count is right, and no summarizer panics.
    #[test]
    fn masker_round_trips(
        bytes in proptest::collection::vec(
            prop_oneof![Just(b'\n'), Just(b'\r'), Just(0x1b), any::<u8>(), 32u8..127], 0..4000),
        chunk in 1usize..300,
        kind_ix in 0usize..13,
    ) {
        let kinds = [Kind::Auto, Kind::CargoTest, Kind::Nextest, Kind::Pytest, Kind::Jest,
            Kind::Vitest, Kind::NodeTest, Kind::GoTest, Kind::GitDiff, Kind::GitDiffStat,
            Kind::Rustc, Kind::Tsc, Kind::Unittest, Kind::Eslint, Kind::Generic];
        let mut m = Masker::new(Vec::new(), summarizer(kinds[kind_ix], &[]), 10);
        for c in bytes.chunks(chunk) {
            m.feed(c);
        }
        let fin = m.finish();
        prop_assert_eq!(&fin.out, &bytes);
        let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
        let extra = u64::from(!bytes.is_empty() && bytes.last() != Some(&b'\n'));
        prop_assert_eq!(fin.lines, newlines + extra);
        prop_assert_eq!(fin.bytes, bytes.len() as u64);
    }
}

/// Pieces secrets and their look-alikes are made of, on one line or over several.
const PIECES: &[&str] = &[
    "password",
    "token",
    "<password>",
    "</password>",
    "api_key",
    "machine h",
    "default",
    "private_key",
    ":",
    "=",
    " ",
    "  ",
    "\n",
    "\n  ",
    "|",
    ">-",
    "\"",
    "hunter2",
    "s3cr3t9x",
    "${X}",
    "var.x",
    "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "login",
    "-p",
    "docker",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    ",",
    "{",
    "}",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Redaction of any text of those pieces keeps every line, leaves nothing to redact, and
    /// gives the same bytes streamed in any chunks as whole.
    #[test]
    fn redaction_keeps_lines_is_idempotent_and_streams_alike(
        picks in proptest::collection::vec(0usize..PIECES.len(), 0..60),
        chunk in 1usize..40,
    ) {
        let text: Vec<u8> = picks.iter().flat_map(|&i| PIECES[i].bytes()).collect();
        let whole = redact::redact_bytes(&text).into_owned();
        let newlines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
        prop_assert_eq!(newlines(&whole), newlines(&text));
        let again = redact::redact_bytes(&whole).into_owned();
        prop_assert_eq!(&again, &whole);
        let mut w = redact::RedactWriter::new(Vec::new());
        for c in text.chunks(chunk) {
            std::io::Write::write_all(&mut w, c).unwrap();
        }
        prop_assert_eq!(w.finish().unwrap(), whole);
    }
}

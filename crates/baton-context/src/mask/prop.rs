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

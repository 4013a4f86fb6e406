//! Exact token counts of byte ranges of one text.

use crate::tokens::Encoding;

/// Token counts of any byte range of one text, from a single pass over it.
///
/// BPE counts each pre-tokenizer piece on its own, so the tokens of `text[s..e]` are the
/// tokens of the whole pieces in it plus those of its last, cut piece — provided `s` starts a
/// piece (then splitting the range alone yields the same pieces up to the cut). Definitions
/// start at a line start, which almost always starts a piece; otherwise the range is counted
/// directly. This turns counting every nested definition (depth × file size) into one pass:
/// the difference between 3× and 1× ctags' time on a 1 MB file. A unit test checks the result
/// against direct counts.
pub(crate) struct RangeCounter<'a> {
    enc: Encoding,
    text: &'a str,
    /// Start byte of each piece and the tokens before it.
    starts: Vec<(usize, usize)>,
    pub total: usize,
}

impl<'a> RangeCounter<'a> {
    pub fn new(enc: Encoding, text: &'a str) -> RangeCounter<'a> {
        let tok = enc.tokenizer();
        let base = text.as_ptr() as usize;
        let mut starts = Vec::with_capacity(text.len() / 4);
        let mut total = 0;
        for piece in tok.split(text) {
            starts.push((piece.as_ptr() as usize - base, total));
            total += tok.count_piece(piece);
        }
        RangeCounter {
            enc,
            text,
            starts,
            total,
        }
    }

    pub fn count(&self, s: usize, e: usize) -> usize {
        let direct = || self.enc.count(self.text.get(s..e).unwrap_or(""));
        if s >= e || e > self.text.len() {
            return 0;
        }
        let Ok(i) = self.starts.binary_search_by_key(&s, |p| p.0) else {
            return direct();
        };
        // The piece holding the range's last byte.
        let j = self.starts.partition_point(|p| p.0 < e) - 1;
        let (tail_start, before_tail) = self.starts[j];
        match self.text.get(tail_start..e) {
            Some(tail) => before_tail - self.starts[i].1 + self.enc.count(tail),
            None => direct(),
        }
    }
}

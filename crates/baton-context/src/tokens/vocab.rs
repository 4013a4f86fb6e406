//! A BPE vocabulary read in place from the binary ([`super::layout`]), and byte-pair encoding
//! of one pre-tokenizer piece by BPE's own rule, the one tiktoken applies: merge the adjacent
//! pair whose union is the token of lowest rank, the leftmost of equals, until no union is a
//! token. Unit tests check the ids against `bpe-openai`'s encoder token for token.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::layout;

/// A vocabulary's table: `words` (header, starts, slots) and `bytes`, both borrowed.
pub(crate) struct Vocab {
    table: &'static [u8],
    n: usize,
    mask: usize,
    /// Byte offset of the slots and of the token bytes within `table`.
    slots_at: usize,
    bytes_at: usize,
}

/// Pieces longer than this merge through a heap (n log n) rather than by rescanning every
/// pair after each merge (n²): a 100 KB run of one letter is one piece.
const SCAN_MAX: usize = 128;

impl Vocab {
    /// The vocabulary in `table`, as build.rs wrote it. A table that does not hold its own
    /// header's sizes is a build defect, reported as such.
    pub(crate) fn new(table: &'static [u8]) -> Vocab {
        let word = |i: usize| read_word(table, i);
        let (n, bits) = (word(0), word(1));
        let slots_at = (layout::HEADER_WORDS + n + 1) * 4;
        let bytes_at = slots_at + (4 << bits);
        assert!(
            bytes_at + word(layout::HEADER_WORDS + n) <= table.len(),
            "a token table of {} bytes is shorter than its header says: rebuild baton",
            table.len()
        );
        Vocab {
            table,
            n,
            mask: (1 << bits) - 1,
            slots_at,
            bytes_at,
        }
    }

    /// The bytes of token `id`.
    pub(crate) fn token(&self, id: u32) -> &'static [u8] {
        let start = |i: usize| self.bytes_at + read_word(self.table, layout::HEADER_WORDS + i);
        let id = id as usize;
        if id >= self.n {
            return &[];
        }
        &self.table[start(id)..start(id + 1)]
    }

    /// The id (rank) of the token spelled `bytes`, if there is one.
    pub(crate) fn rank(&self, bytes: &[u8]) -> Option<u32> {
        let mut at = layout::hash(bytes) as usize & self.mask;
        loop {
            let slot = read_word(&self.table[self.slots_at..], at);
            if slot == 0 {
                return None;
            }
            let id = slot as u32 - 1;
            if self.token(id) == bytes {
                return Some(id);
            }
            at = (at + 1) & self.mask;
        }
    }

    /// Tokens of one piece.
    pub(crate) fn count(&self, piece: &[u8]) -> usize {
        if piece.len() <= 1 {
            return piece.len();
        }
        if self.rank(piece).is_some() {
            return 1;
        }
        let mut ids = Vec::new();
        self.encode(piece, &mut ids);
        ids.len()
    }

    /// Append the token ids of one piece to `out`.
    pub(crate) fn encode(&self, piece: &[u8], out: &mut Vec<u32>) {
        if piece.len() > SCAN_MAX {
            self.encode_heap(piece, out);
        } else {
            self.encode_scan(piece, out);
        }
    }

    /// The rank of `piece[a..b]`, or `u32::MAX` when it is no token.
    fn pair(&self, piece: &[u8], a: usize, b: usize) -> u32 {
        self.rank(&piece[a..b]).unwrap_or(u32::MAX)
    }

    /// Short pieces: the parts' starts and the rank of each part joined with the next, the
    /// lowest found by a scan after every merge.
    fn encode_scan(&self, piece: &[u8], out: &mut Vec<u32>) {
        if let Some(id) = self.rank(piece) {
            out.push(id);
            return;
        }
        let n = piece.len();
        // parts[i] = (start of part i, rank of part i joined with part i + 1); a sentinel
        // part starts at n.
        let mut parts: Vec<(usize, u32)> = (0..=n)
            .map(|i| {
                let rank = if i + 2 <= n {
                    self.pair(piece, i, i + 2)
                } else {
                    u32::MAX
                };
                (i, rank)
            })
            .collect();
        loop {
            let mut best = (u32::MAX, 0);
            for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
                if p.1 < best.0 {
                    best = (p.1, i);
                }
            }
            let (rank, i) = best;
            if rank == u32::MAX {
                break;
            }
            parts.remove(i + 1);
            // The merged part joined with its new right neighbour, and its left neighbour
            // joined with it.
            let joined = |parts: &[(usize, u32)], k: usize| match parts.get(k + 2) {
                Some(&(end, _)) => self.pair(piece, parts[k].0, end),
                None => u32::MAX,
            };
            parts[i].1 = joined(&parts, i);
            if i > 0 {
                parts[i - 1].1 = joined(&parts, i - 1);
            }
        }
        out.extend(parts.windows(2).map(|w| {
            self.rank(&piece[w[0].0..w[1].0])
                .expect("every part of a merge is a token: single bytes are")
        }));
    }

    /// Long pieces: the same merges in the same order, the lowest pair taken from a heap of
    /// (rank, left part's start) — leftmost among equal ranks, as the scan takes it. An entry
    /// is stale once either part has changed: its right part's end is kept to tell.
    fn encode_heap(&self, piece: &[u8], out: &mut Vec<u32>) {
        let n = piece.len();
        // Parts are named by their start; `next[s]` is the start of the part after s (n at
        // the end), `prev[s]` the one before, `alive[s]` whether s still starts a part.
        let mut next: Vec<usize> = (1..=n).collect();
        let mut prev: Vec<usize> = (0..n).map(|i| i.wrapping_sub(1)).collect();
        let mut alive = vec![true; n];
        let mut heap = BinaryHeap::with_capacity(n);
        for i in 0..n - 1 {
            let rank = self.pair(piece, i, i + 2);
            if rank != u32::MAX {
                heap.push(Reverse((rank, i, i + 2)));
            }
        }
        while let Some(Reverse((_, s, end))) = heap.pop() {
            let r = next[s];
            if !alive[s] || r >= n || next[r] != end {
                continue;
            }
            // s absorbs r.
            alive[r] = false;
            next[s] = end;
            if end < n {
                prev[end] = s;
                let rank = self.pair(piece, s, next[end]);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, s, next[end])));
                }
            }
            let p = prev[s];
            if p != usize::MAX {
                let rank = self.pair(piece, p, end);
                if rank != u32::MAX {
                    heap.push(Reverse((rank, p, end)));
                }
            }
        }
        let mut s = 0;
        while s < n {
            out.push(
                self.rank(&piece[s..next[s]])
                    .expect("every part of a merge is a token: single bytes are"),
            );
            s = next[s];
        }
    }

    #[cfg(test)]
    pub(crate) fn encode_with(&self, piece: &[u8], heap: bool, out: &mut Vec<u32>) {
        if heap && piece.len() > 1 {
            self.encode_heap(piece, out);
        } else {
            self.encode_scan(piece, out);
        }
    }
}

/// The `i`th little-endian word of `table`.
fn read_word(table: &[u8], i: usize) -> usize {
    let b: [u8; 4] = table[i * 4..i * 4 + 4]
        .try_into()
        .expect("a slice of four bytes");
    u32::from_le_bytes(b) as usize
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::tokens::Encoding;

    fn vocab(enc: Encoding) -> &'static Vocab {
        &enc.tokenizer().vocab
    }

    /// A table written by `layout::write` reads back: every token by id and by bytes, and
    /// bytes that are no token are not found.
    #[test]
    fn a_written_table_reads_back() {
        let tokens: Vec<&[u8]> = vec![b"a", b"b", b"ab", b"abc", b"", b"\xff\x00"];
        let v = Vocab::new(Box::leak(layout::write(&tokens).into_boxed_slice()));
        for (id, t) in tokens.iter().enumerate() {
            assert_eq!(v.token(id as u32), *t);
            assert_eq!(v.rank(t), Some(id as u32));
        }
        assert_eq!(v.rank(b"ba"), None);
        assert_eq!(v.rank(b"abcd"), None);
        assert_eq!(v.token(99), b"");
    }

    /// Known ids of o200k_base and cl100k_base (tiktoken's ranks).
    #[test]
    fn ranks_are_tiktokens() {
        let o = vocab(Encoding::O200kBase);
        assert_eq!(o.rank(b"hello"), Some(24912));
        assert_eq!(o.rank(b" world"), Some(2375));
        assert_eq!(o.rank(b"!"), Some(0));
        let c = vocab(Encoding::Cl100kBase);
        assert_eq!(c.rank(b"hello"), Some(15339));
        assert_eq!(c.rank(b" world"), Some(1917));
        // Every single byte is a token in both: the merges' parts always are (their `expect`).
        for v in [o, c] {
            assert!((0..=255u8).all(|b| v.rank(&[b]).is_some()));
        }
    }

    /// The heap merges exactly as the scan does, on pieces of every kind, both encodings.
    #[test]
    fn heap_and_scan_merge_alike() {
        let text = concat!(
            include_str!("vocab.rs"),
            include_str!("../../../../README.md")
        );
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let (tok, v) = (enc.tokenizer(), vocab(enc));
            let mut pieces: Vec<String> = tok.split(text).map(str::to_owned).collect();
            pieces.extend([
                "xq".repeat(40),
                "日本語のテキスト".repeat(9),
                "=-".repeat(70),
            ]);
            for p in &pieces {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                v.encode_with(p.as_bytes(), false, &mut a);
                v.encode_with(p.as_bytes(), true, &mut b);
                assert_eq!(a, b, "{p:?}");
                assert_eq!(v.count(p.as_bytes()), a.len());
            }
        }
    }

    /// Pieces far past the scan's length, against bpe-openai's encoder.
    #[test]
    fn long_pieces_encode_as_bpe_openai() {
        for text in [
            "a".repeat(20_000),
            "ab".repeat(5_000),
            " ".repeat(3_000),
            "-".repeat(4_000) + "\n\n",
            "Zq".repeat(3_000),
            "é".repeat(2_000),
        ] {
            for (enc, theirs) in [
                (Encoding::O200kBase, bpe_openai::o200k_base()),
                (Encoding::Cl100kBase, bpe_openai::cl100k_base()),
            ] {
                assert_eq!(enc.tokenizer().encode(&text), theirs.encode(text.as_str()));
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Any text of letters, digits, marks, spaces, newlines, punctuation and emoji: the
        /// same pieces and the same token ids as bpe-openai, in both encodings.
        #[test]
        fn any_text_encodes_as_bpe_openai(
            text in "([a-zA-Z]{1,6}|[0-9]{1,5}|[ \t]{1,3}|\r?\n|[.,;:'\"(){}/\\-_=+*&^%$#@!?<>]{1,3}|'s|'LL|é|É|x\u{301}|ǅ|ʰ|日本|Ⅻ|٣|🎉|\u{a0}|\u{2028}){0,40}"
        ) {
            for (enc, theirs) in [
                (Encoding::O200kBase, bpe_openai::o200k_base()),
                (Encoding::Cl100kBase, bpe_openai::cl100k_base()),
            ] {
                let tok = enc.tokenizer();
                prop_assert_eq!(
                    tok.split(&text).collect::<Vec<_>>(),
                    theirs.split(&text).collect::<Vec<_>>()
                );
                prop_assert_eq!(tok.encode(&text), theirs.encode(text.as_str()));
            }
        }
    }
}

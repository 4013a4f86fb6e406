//! What build.rs writes for each vocabulary and `tokens` reads in place: one home for the
//! pre-tokenizer patterns, the table layout and its hash, included by both (build.rs through
//! `#[path]`), so the writer and the reader cannot drift apart.
//!
//! A vocabulary's table, little-endian `u32` words, then bytes:
//!
//! ```text
//! [token count n] [slot bits b] [n + 1 token starts] [2^b slots] [every token's bytes]
//! ```
//!
//! Token `i` is `bytes[starts[i]..starts[i + 1]]`; its id is its BPE rank (tiktoken's order).
//! The slots are an open-addressing hash table of ids + 1 (0: empty), probed linearly from
//! `hash(bytes) & (2^b - 1)`. Nothing is decoded at run time: a lookup reads a few words of
//! the binary's read-only data, so a process that counts one line touches a few pages.

// Each side uses its part: build.rs the patterns and `write`, the library the layout's words.
#![allow(dead_code)]

/// The pre-tokenizer, as `bpe-openai` 0.3 builds it (a unit test compares the pieces): three
/// patterns searched as one leftmost-first set; the second is the negative look-ahead
/// `\s+(?!\S)` written as `\s+\s`, whose last char the splitter gives back.
pub const O200K_PATTERNS: [&str; 3] = [
    concat!(
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "|\\p{N}{1,3}",
        "| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "|\\s*[\\r\\n]+",
        "|\\s+$",
    ),
    "\\s+\\s",
    "\\s+",
];

/// cl100k_base's pre-tokenizer, written the same way.
pub const CL100K_PATTERNS: [&str; 3] = [
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$",
    "\\s+\\s",
    "\\s+",
];

/// The pattern whose match ends with one look-ahead char that is not part of the piece.
pub const LOOKAHEAD_PATTERN: usize = 1;

/// Words before the token starts: the token count and the slot bits.
pub const HEADER_WORDS: usize = 2;

/// FNV-1a (64 bits) of a token's bytes: tokens are short (7 bytes on average), so a
/// byte-at-a-time hash costs less than setting up a block hash.
pub fn hash(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The table of `tokens` (in rank order), in the layout above, with at most half of its slots
/// used (o200k_base: 38 %), so that a lookup rarely probes twice.
pub fn write(tokens: &[&[u8]]) -> Vec<u8> {
    let n = tokens.len();
    let mut bits = 1;
    while (1usize << bits) / 2 < n {
        bits += 1;
    }
    let mask = (1usize << bits) - 1;
    let mut slots = vec![0u32; 1 << bits];
    for (id, t) in tokens.iter().enumerate() {
        let mut at = hash(t) as usize & mask;
        while slots[at] != 0 {
            at = (at + 1) & mask;
        }
        slots[at] = u32::try_from(id + 1).expect("fewer than 2^32 tokens");
    }
    let word = |v: usize| u32::try_from(v).expect("a table under 4 GiB").to_le_bytes();
    let mut out = Vec::new();
    out.extend_from_slice(&word(n));
    out.extend_from_slice(&word(bits));
    let mut start = 0;
    for t in tokens {
        out.extend_from_slice(&word(start));
        start += t.len();
    }
    out.extend_from_slice(&word(start));
    for s in slots {
        out.extend_from_slice(&s.to_le_bytes());
    }
    for t in tokens {
        out.extend_from_slice(t);
    }
    out
}

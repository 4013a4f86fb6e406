//! Estimated token counts, without loading a BPE vocabulary.
//!
//! An exact count is BPE over every piece, about 30 ms of CPU per MB (the tables are read in
//! place; decoding them once cost tens of milliseconds and ~30 MB more per process), ~20 % of
//! an outline of a 1 MB file; so
//! outlines estimate unless asked for exact counts (`--exact-tokens`), masking estimates
//! where the estimate can decide (`mask::tally`), and both say so. The estimate
//! mimics the encodings' pre-tokenizer on ASCII text (letter runs with camelCase splits and
//! one leading space or punctuation char, digit groups of 3, punctuation runs, whitespace
//! runs) and charges long pieces by length, since BPE splits long identifiers. Its rule is
//! per byte: a byte either starts an estimated token or not, so the estimate of any range is
//! the number of starts in it — one pass, then a binary search per range, like
//! `outline::RangeCounter`.
//!
//! Tuned on the corpus's real source files (Rust, Python, TS/TSX) against o200k_base: file
//! totals +0.0…+6.5 %, definitions of ≥ 200 tokens within 6.5 % at p90 (the unit test
//! `estimates_track_exact_counts` allows 10 %). Tuned and checked on the same files, so
//! expect more error on unlike code (minified JS, non-Latin text).

/// Letters per token of a long letter run (BPE pieces of identifiers are ~4–8 letters).
const WORD: usize = 7;
/// Letters per token of an all-caps run.
const CAPS: usize = 4;
/// Chars per token of a punctuation run (`::`, `->`, `();` are mostly single tokens).
const PUNCT: usize = 3;
/// One of these chars repeated at least [`REPEAT_MIN`] times is one token for up to
/// [`REPEAT`] of it (o200k holds runs of up to 64 of each; `/` runs, common in base64, are
/// split irregularly and stay with [`PUNCT`]).
const RULES: &[u8] = b".=-*#~_+";
const REPEAT_MIN: usize = 4;
const REPEAT: usize = 16;
/// Digits per token (the pre-tokenizer splits numbers into groups of up to 3).
const DIGITS: usize = 3;
/// Spaces per token of a long whitespace run.
const SPACES: usize = 16;

/// Token starts of one text, found in one pass.
pub(crate) struct Estimator {
    /// Byte offsets where an estimated token starts, ascending (u32: files over 4 GiB are not
    /// parsed, see `MAX_PARSE_BYTES`).
    starts: Vec<u32>,
    len: usize,
    pub total: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Lower,
    Upper,
    Digit,
    Space,
    Newline,
    Punct,
    /// A UTF-8 lead byte: counted as a token of its own (CJK, emoji, accents are ≥ 1 each).
    Wide,
    /// A UTF-8 continuation byte: part of the char before.
    Cont,
}

fn class(b: u8) -> Class {
    match b {
        b'a'..=b'z' => Class::Lower,
        b'A'..=b'Z' => Class::Upper,
        b'0'..=b'9' => Class::Digit,
        b' ' | b'\t' => Class::Space,
        b'\n' | b'\r' => Class::Newline,
        0x80..=0xBF => Class::Cont,
        0xC0..=0xFF => Class::Wide,
        _ => Class::Punct,
    }
}

fn is_letter(c: Class) -> bool {
    matches!(c, Class::Lower | Class::Upper)
}

impl Estimator {
    pub fn new(text: &str) -> Estimator {
        let b = text.as_bytes();
        let mut starts: Vec<u32> = Vec::with_capacity(b.len() / 4);
        let mut push = |at: usize| starts.push(u32::try_from(at).unwrap_or(u32::MAX));
        let next_is_word = |j: usize| b.get(j).is_some_and(|&c| is_letter(class(c)));
        let mut i = 0;
        while i < b.len() {
            let c = class(b[i]);
            let run_end = |from: usize, f: &dyn Fn(Class) -> bool| {
                let mut j = from;
                while j < b.len() && f(class(b[j])) {
                    j += 1;
                }
                j
            };
            match c {
                Class::Lower | Class::Upper => {
                    // Upper letters then lower ones: `BufWriter` is `Buf` + `Writer`.
                    let u = run_end(i, &|k| k == Class::Upper);
                    let j = run_end(u, &|k| k == Class::Lower);
                    // All-caps words (`MAX_PARSE`, `HTTP`) are rare in the vocabulary: shorter
                    // pieces.
                    let width = if j == u && u - i > 1 { CAPS } else { WORD };
                    // A lone leading char was already counted as this word's start.
                    let joined = i > 0 && joins(b, i - 1);
                    let first = if joined { i + width } else { i };
                    let mut k = first;
                    while k < j {
                        push(k);
                        k += width;
                    }
                    i = j;
                }
                Class::Digit => {
                    let j = run_end(i, &|k| k == Class::Digit);
                    let mut k = i;
                    while k < j {
                        push(k);
                        k += DIGITS;
                    }
                    i = j;
                }
                Class::Space | Class::Newline => {
                    let j = run_end(i, &|k| matches!(k, Class::Space | Class::Newline));
                    // The last space joins a following word or punctuation (` foo`, ` {`).
                    let body_end = if j - i >= 1 && b[j - 1] == b' ' && j < b.len() {
                        j - 1
                    } else {
                        j
                    };
                    let mut k = i;
                    while k < body_end {
                        push(k);
                        k += SPACES;
                    }
                    if body_end < j {
                        push(body_end);
                        if matches!(b.get(j).map(|&x| class(x)), Some(Class::Punct)) {
                            // ` {`: the space starts the punctuation run's first token.
                            let e = run_end(j, &|k| k == Class::Punct);
                            let mut k = j + PUNCT;
                            while k < e {
                                push(k);
                                k += PUNCT;
                            }
                            i = e;
                            continue;
                        }
                    }
                    i = j;
                }
                Class::Punct => {
                    let j = run_end(i, &|k| k == Class::Punct);
                    if j - i == 1 && next_is_word(j) {
                        // `.foo`, `_bar`, `&mut`: one piece with the word.
                        push(i);
                    } else {
                        let mut k = i;
                        while k < j {
                            push(k);
                            // A run of one char (`....` of a quiet test run, `====` rules)
                            // is one token for a dozen of them or more.
                            let same = b[k..j].iter().take_while(|&&x| x == b[k]).count();
                            let rule = same >= REPEAT_MIN && RULES.contains(&b[k]);
                            k += if rule { same.min(REPEAT) } else { PUNCT };
                        }
                    }
                    i = j;
                }
                Class::Wide => {
                    push(i);
                    i += 1;
                }
                Class::Cont => i += 1,
            }
        }
        let total = starts.len();
        Estimator {
            starts,
            len: b.len(),
            total,
        }
    }

    /// Estimated tokens of `text[s..e]`: the starts in it, plus one when it begins inside a
    /// token.
    pub fn count(&self, s: usize, e: usize) -> usize {
        if s >= e || e > self.len {
            return 0;
        }
        let at = |x: usize| self.starts.partition_point(|&p| (p as usize) < x);
        let (i, j) = (at(s), at(e));
        let starts_here = self.starts.get(i).is_some_and(|&p| p as usize == s);
        j - i + usize::from(!starts_here)
    }
}

/// Whether the byte at `at` (a space or a lone punctuation char) is counted as the start of
/// the word right after it.
fn joins(b: &[u8], at: usize) -> bool {
    match class(b[at]) {
        Class::Space => true,
        // After a space, the space led the punctuation's piece (` .`) and the word is apart.
        Class::Punct => at == 0 || !matches!(b[at - 1], b' ') && class(b[at - 1]) != Class::Punct,
        _ => false,
    }
}

/// Estimated tokens of a whole text (a rendered outline).
pub(crate) fn estimate(text: &str) -> usize {
    Estimator::new(text).total
}

//! The pre-tokenizer: the patterns of [`super::layout`] as a DFA that build.rs determinized
//! and serialized, read here in place (`DFA::from_bytes` checks it and copies nothing): no
//! regex is compiled at run time. Dense for o200k_base (the default: fastest search), sparse
//! for cl100k_base (a twentieth of the bytes, for the encoding that is rarely asked for).

use regex_automata::dfa::{Automaton, dense, sparse};
use regex_automata::{Anchored, Input};

use super::layout::LOOKAHEAD_PATTERN;

/// Bytes aligned for the dense DFA's `u32` transitions (`include_bytes!` is not).
#[repr(C)]
pub(crate) struct Aligned<B: ?Sized> {
    pub(crate) _align: [u32; 0],
    pub(crate) bytes: B,
}

pub(crate) enum Splitter {
    Dense(dense::DFA<&'static [u32]>),
    Sparse(sparse::DFA<&'static [u8]>),
}

impl Splitter {
    pub(crate) fn dense(dfa: &'static Aligned<[u8]>) -> Splitter {
        Splitter::Dense(
            dense::DFA::from_bytes(&dfa.bytes)
                .expect("the pre-tokenizer's DFA that build.rs wrote: rebuild baton")
                .0,
        )
    }

    pub(crate) fn sparse(dfa: &'static [u8]) -> Splitter {
        Splitter::Sparse(
            sparse::DFA::from_bytes(dfa)
                .expect("the pre-tokenizer's DFA that build.rs wrote: rebuild baton")
                .0,
        )
    }

    /// The pieces of `text`, in order; together they are `text`.
    pub(crate) fn split<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        let mut at = 0;
        std::iter::from_fn(move || {
            if at >= text.len() {
                return None;
            }
            let end = match self {
                Splitter::Dense(d) => piece_end(d, text, at),
                Splitter::Sparse(d) => piece_end(d, text, at),
            };
            let piece = &text[at..end];
            at = end;
            Some(piece)
        })
    }
}

/// Where the piece that starts at `at` ends. Every char starts a match of some pattern (the
/// patterns cover letters, digits, whitespace and everything else), so the fallback, one char,
/// is never taken; it keeps a DFA error from looping or panicking.
fn piece_end<A: Automaton>(dfa: &A, text: &str, at: usize) -> usize {
    let one_char = || at + text[at..].chars().next().map_or(1, char::len_utf8);
    let input = Input::new(text).range(at..).anchored(Anchored::Yes);
    match dfa.try_search_fwd(&input) {
        Ok(Some(m)) if m.offset() > at => {
            let end = m.offset();
            if m.pattern().as_usize() == LOOKAHEAD_PATTERN {
                // `\s+\s` stands for `\s+(?!\S)`: its last char is not the piece's.
                let last = text[at..end].chars().next_back().map_or(0, char::len_utf8);
                if end - last > at {
                    return end - last;
                }
            }
            end
        }
        _ => one_char(),
    }
}

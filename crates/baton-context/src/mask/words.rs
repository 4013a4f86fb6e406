//! Where a list of words occurs in a short text (a hook's small output, one line). A masking
//! hook runs on every tool call of every agent, mostly on outputs of a few lines: building an
//! automaton (aho-corasick), or one `memmem` searcher a word, for a few hundred words cost more
//! than the search itself (a tenth of a millisecond on each call). Words are bucketed by their
//! first byte once; the text is then read once, and only the words starting with the byte at
//! hand are compared there.

/// Words (lower-case ASCII) bucketed by first byte.
pub(super) struct Words {
    words: Vec<&'static [u8]>,
    /// Indices into `words`, ordered by first byte; `start[b]..start[b + 1]` are those starting
    /// with byte `b`.
    order: Vec<u16>,
    start: [u16; 257],
}

impl Words {
    pub(super) fn new<'a>(words: impl IntoIterator<Item = &'a &'static str>) -> Words {
        let words: Vec<&'static [u8]> = words
            .into_iter()
            .map(|w| w.as_bytes())
            .filter(|w| !w.is_empty())
            .collect();
        assert!(words.len() < usize::from(u16::MAX), "word indices fit u16");
        let mut count = [0u16; 257];
        for w in &words {
            count[usize::from(w[0]) + 1] += 1;
        }
        for b in 1..257 {
            count[b] += count[b - 1];
        }
        let start = count;
        let mut next = count;
        let mut order = vec![0u16; words.len()];
        for (i, w) in words.iter().enumerate() {
            let b = usize::from(w[0]);
            order[usize::from(next[b])] = i as u16;
            next[b] += 1;
        }
        Words {
            words,
            order,
            start,
        }
    }

    /// Every `(position, word index)` where a word occurs in `lower` (lower-cased by the caller,
    /// as the words are), by position.
    pub(super) fn find_all<'t>(
        &'t self,
        lower: &'t [u8],
    ) -> impl Iterator<Item = (usize, usize)> + 't {
        lower.iter().enumerate().flat_map(move |(at, &b)| {
            let bucket = &self.order[usize::from(self.start[usize::from(b)])
                ..usize::from(self.start[usize::from(b) + 1])];
            bucket
                .iter()
                .map(|&k| usize::from(k))
                .filter(move |&k| lower[at..].starts_with(self.words[k]))
                .map(move |k| (at, k))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every occurrence, overlapping ones included (`aaa` twice in `aaaa`), as a naive search
    /// finds them.
    #[test]
    fn finds_what_memmem_finds() {
        let words: &[&'static str] = &["key", "token", "ke", "passw", "://", "$1$", "aaa", "a"];
        let w = Words::new(words);
        for text in [
            "api_key=abc token tok",
            "aaaa",
            "no hits here",
            "",
            "https://u:p@h $1$abc passwd keykey",
        ] {
            let lower = text.as_bytes();
            let mut got: Vec<(usize, usize)> = w.find_all(lower).collect();
            got.sort_unstable();
            let mut want: Vec<(usize, usize)> = (0..lower.len())
                .flat_map(|at| {
                    words
                        .iter()
                        .enumerate()
                        .filter(move |(_, w)| lower[at..].starts_with(w.as_bytes()))
                        .map(move |(k, _)| (at, k))
                })
                .collect();
            want.sort_unstable();
            assert_eq!(got, want, "{text:?}");
            // Each word present is found where `memmem` finds it first.
            for (k, word) in words.iter().enumerate() {
                let first = memchr::memmem::find(lower, word.as_bytes());
                assert_eq!(
                    got.iter().find(|h| h.1 == k).map(|h| h.0),
                    first,
                    "{word:?} in {text:?}"
                );
            }
        }
    }
}

//! Exact token counts (OpenAI's o200k_base / cl100k_base, the same tokens as `bpe-openai`
//! and tiktoken's `encode_ordinary`) and the documented estimate used for Claude, whose
//! tokenizer is not public.
//!
//! Both vocabularies are `bpe-openai`'s, which build.rs turns into what this module reads in
//! place, with nothing decoded at run time (`layout`): a hash table of the tokens
//! (`vocab`) and the pre-tokenizer as a ready DFA (`split`). So a process that counts one
//! line costs a few page faults, not the tens of milliseconds of deserializing 200K tokens
//! and compiling a Unicode regex that `bpe-openai` spends on its first count. Unit tests
//! compare pieces and token ids with `bpe-openai`'s own tokenizers.

use std::sync::LazyLock;

use serde::Serialize;

use crate::error::{Error, Result};

pub(crate) mod estimate;
mod layout;
mod split;
mod vocab;

use split::{Aligned, Splitter};
use vocab::Vocab;

static O200K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.vocab"));
static O200K_DFA: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.dfa")),
};
static CL100K_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.vocab"));
static CL100K_DFA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.dfa"));

static O200K: LazyLock<Tokenizer> = LazyLock::new(|| Tokenizer {
    vocab: Vocab::new(O200K_TABLE),
    splitter: Splitter::dense(O200K_DFA),
});

static CL100K: LazyLock<Tokenizer> = LazyLock::new(|| Tokenizer {
    vocab: Vocab::new(CL100K_TABLE),
    splitter: Splitter::sparse(CL100K_DFA),
});

/// A pre-tokenizer and the vocabulary its pieces are encoded with.
pub(crate) struct Tokenizer {
    vocab: Vocab,
    splitter: Splitter,
}

impl Tokenizer {
    /// The pre-tokenizer's pieces of `text`: BPE encodes each on its own.
    pub(crate) fn split<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.splitter.split(text)
    }

    /// Tokens of one piece of [`Tokenizer::split`].
    pub(crate) fn count_piece(&self, piece: &str) -> usize {
        self.vocab.count(piece.as_bytes())
    }

    pub(crate) fn count(&self, text: &str) -> usize {
        self.split(text).map(|p| self.count_piece(p)).sum()
    }

    /// Token ids of one piece of [`Tokenizer::split`].
    pub(crate) fn encode_piece(&self, piece: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.vocab.encode(piece.as_bytes(), &mut ids);
        ids
    }

    /// Token ids of `text`.
    #[cfg(test)]
    pub(crate) fn encode(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 4);
        for piece in self.split(text) {
            self.vocab.encode(piece.as_bytes(), &mut ids);
        }
        ids
    }

    /// The bytes of `ids`, joined (not always UTF-8: a token may hold part of a char).
    pub(crate) fn decode(&self, ids: &[u32]) -> Vec<u8> {
        ids.iter()
            .flat_map(|&id| self.vocab.token(id))
            .copied()
            .collect()
    }
}

/// A BPE vocabulary baton can count exactly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    #[default]
    O200kBase,
    Cl100kBase,
}

impl Encoding {
    pub fn parse(name: &str) -> Result<Encoding> {
        match name.to_ascii_lowercase().as_str() {
            "o200k_base" | "o200k" => Ok(Encoding::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Encoding::Cl100kBase),
            _ => Err(Error::invalid(format!("unknown encoding {name:?}"))
                .hint("use o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5)")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }

    /// The encoding's tokenizer (its tables are read in place: nothing to decode).
    pub(crate) fn tokenizer(self) -> &'static Tokenizer {
        match self {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        }
    }

    /// Exact number of tokens of `text` (no special tokens). A big text is counted in parts
    /// on every core: see [`cut_points`].
    pub fn count(self, text: &str) -> usize {
        self.count_parts(text, cut_points(text, crate::cores(), PARALLEL_COUNT_BYTES))
    }

    /// The sum of the counts of the parts of `text` between `cuts`, each on its own thread.
    fn count_parts(self, text: &str, cuts: Vec<usize>) -> usize {
        let tok = self.tokenizer();
        if cuts.is_empty() {
            return tok.count(text);
        }
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(text.len());
        std::thread::scope(|s| {
            let rest: Vec<_> = bounds[1..]
                .windows(2)
                .map(|w| s.spawn(move || tok.count(&text[w[0]..w[1]])))
                .collect();
            let first = tok.count(&text[..bounds[1]]);
            first
                + rest
                    .into_iter()
                    .map(|h| h.join().unwrap_or(0))
                    .sum::<usize>()
        })
    }

    /// The longest prefix of `text` that is at most `max` tokens, cut at a token boundary and
    /// at a char boundary. Returns the prefix and its token count.
    pub fn truncate(self, text: &str, max: usize) -> (&str, usize) {
        let tok = self.tokenizer();
        let mut used = 0;
        let mut end = 0;
        // Pre-tokenizer pieces tile the text; whole pieces are cheap to count.
        for piece in tok.split(text) {
            let n = tok.count_piece(piece);
            if used + n > max {
                // Take as many tokens of this piece as fit, backing off to a char boundary.
                let ids = tok.encode_piece(piece);
                let room = max - used;
                let bytes = tok.decode(&ids[..room.min(ids.len())]);
                let valid = match std::str::from_utf8(&bytes) {
                    Ok(s) => s.len(),
                    Err(e) => e.valid_up_to(),
                };
                end += valid;
                break;
            }
            used += n;
            end += piece.len();
        }
        // Splitting the prefix alone can differ from splitting it inside the whole text at the
        // cut (e.g. trailing whitespace); re-count and shrink until the promise holds.
        let mut prefix = &text[..end];
        let mut n = tok.count(prefix);
        while n > max && !prefix.is_empty() {
            let mut cut = prefix.len() - 1;
            while !prefix.is_char_boundary(cut) {
                cut -= 1;
            }
            prefix = &prefix[..cut];
            n = tok.count(prefix);
        }
        (prefix, n)
    }
}

/// Estimated o200k_base tokens of `text`, without loading a vocabulary: one cheap pass that
/// follows the pre-tokenizer (see [`estimate::Estimator`]; within ~7 % on real code).
/// For numbers that only inform (a journal's prompt size, a context model), where BPE over
/// every piece (about 30 ms of CPU per MB) would cost more than the answer is worth.
pub fn estimate(text: &str) -> usize {
    estimate::estimate(text)
}

/// Texts at least this long are counted on every core.
const PARALLEL_COUNT_BYTES: usize = 1 << 20;

/// Where to cut `text` into `parts` parts of about equal size (none if it is shorter than
/// `min`), at positions where both encodings' pre-tokenizer always starts a piece: after a
/// newline, before an ASCII letter. No pattern's piece holds a newline followed by a letter
/// (newlines end the punctuation and whitespace pieces; letter pieces hold no newline), and
/// no pattern looks behind, so the pieces of the parts are those of the whole text — and BPE
/// counts each piece on its own. A unit test checks the sums against whole counts.
fn cut_points(text: &str, parts: usize, min: usize) -> Vec<usize> {
    if parts < 2 || text.len() < min {
        return Vec::new();
    }
    let b = text.as_bytes();
    let mut cuts = Vec::new();
    for k in 1..parts {
        let mut at = (text.len() * k / parts).max(cuts.last().map_or(0, |&c| c + 1));
        while let Some(i) = memchr::memchr(b'\n', b.get(at..).unwrap_or(&[])) {
            let next = at + i + 1;
            if b.get(next).is_some_and(u8::is_ascii_alphabetic) {
                cuts.push(next);
                break;
            }
            at = next;
        }
    }
    cuts
}

/// How tokens are counted for a model: exactly, or estimated with a safety factor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Counter {
    pub encoding: Encoding,
    /// Multiplier applied to the exact count (1.0 = exact).
    pub factor: f64,
    /// True when the count is an estimate (Claude models).
    pub estimate: bool,
}

impl Counter {
    pub fn exact(encoding: Encoding) -> Counter {
        Counter {
            encoding,
            factor: 1.0,
            estimate: false,
        }
    }

    /// The counter for `model`: `claude-*` is estimated as o200k × `claude_factor` (Anthropic
    /// publishes no tokenizer; its tokenizer yields more tokens than o200k on code and prose,
    /// so the factor errs on the side of rotating early). Everything else is exact.
    pub fn for_model(model: &str, encoding: Encoding, claude_factor: f64) -> Result<Counter> {
        let m = model.to_ascii_lowercase();
        if m.starts_with("claude") {
            if !(claude_factor.is_finite() && claude_factor >= 1.0) {
                return Err(Error::invalid(format!(
                    "budget.claude_factor = {claude_factor} must be a number >= 1.0"
                ))
                .hint("set it in baton.toml [budget], e.g. claude_factor = 1.15"));
            }
            return Ok(Counter {
                encoding: Encoding::O200kBase,
                factor: claude_factor,
                estimate: true,
            });
        }
        if m.starts_with("gpt-3.5") || m.starts_with("gpt-4-") || m == "gpt-4" {
            return Ok(Counter::exact(Encoding::Cl100kBase));
        }
        if m.starts_with("gpt-") || m.starts_with('o') {
            return Ok(Counter::exact(Encoding::O200kBase));
        }
        if m.is_empty() {
            return Ok(Counter::exact(encoding));
        }
        Err(Error::invalid(format!("unknown model {model:?}"))
            .hint("use claude-* (estimated), gpt-4o/gpt-4.1/o3/… (o200k_base), gpt-4/gpt-3.5 (cl100k_base), or --encoding"))
    }

    /// Tokens of `text` under this counter (rounded up when estimated).
    pub fn count(&self, text: &str) -> usize {
        self.apply(self.encoding.count(text))
    }

    pub fn apply(&self, exact: usize) -> usize {
        if self.estimate {
            (exact as f64 * self.factor).ceil() as usize
        } else {
            exact
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_truncation() {
        let e = Encoding::O200kBase;
        assert_eq!(e.count(""), 0);
        assert_eq!(e.count("hello world"), 2);
        let text = "The quick brown fox jumps over the lazy dog. 日本語のテキスト 🎉🎉 end\n";
        let total = e.count(text);
        for max in 0..=total + 2 {
            let (p, n) = e.truncate(text, max);
            assert!(n <= max, "max {max}: {n}");
            assert_eq!(n, e.count(p));
            assert!(text.starts_with(p));
            if max >= total {
                assert_eq!(p, text);
            }
        }
    }

    /// The shipped vocabularies and patterns are `bpe-openai`'s own: same pieces, same tokens.
    #[test]
    fn same_tokenizers_as_bpe_openai() {
        let text = "fn main() { println!(\"héllo, wörld\"); }\n\n  \t  // 日本語のテキスト 🎉🎉\r\n\
                    I'M here, they'll see: 1234567 x\u{301}y   \nCamelCaseWord ABCdef's   ";
        for (ours, theirs) in [
            (Encoding::O200kBase, bpe_openai::o200k_base()),
            (Encoding::Cl100kBase, bpe_openai::cl100k_base()),
        ] {
            let tok = ours.tokenizer();
            assert_eq!(
                tok.split(text).collect::<Vec<_>>(),
                theirs.split(text).collect::<Vec<_>>()
            );
            assert_eq!(tok.encode(text), theirs.encode(text));
            assert_eq!(ours.count(text), theirs.count(text));
            // Real code and prose, token for token: the shipped tables lack only what the
            // backtracking encoder never reads (build.rs, `counting_tables`).
            for real in [
                include_str!("tokens.rs"),
                include_str!("../../../README.md"),
            ] {
                assert_eq!(tok.encode(real), theirs.encode(real));
                let (cut, n) = ours.truncate(real, 1000);
                assert_eq!((n, theirs.count(cut)), (1000, 1000));
            }
        }
    }

    /// Counting in parts cut by `cut_points` gives the whole text's count, in both encodings,
    /// on text where newlines meet letters, spaces, punctuation, CRLF, digits and non-ASCII.
    #[test]
    fn counts_in_parts_equal_whole_counts() {
        let mut text = String::new();
        for i in 0..400 {
            text.push_str(match i % 8 {
                0 => "fn main() {\n    let x = 1;\n}\n",
                1 => "Some prose, with  spaces.  \nAnd a next line\r\nCRLF line\n",
                2 => "   \n\n\tindented\nend;\n/path/to\nx",
                3 => "日本語\nテキスト\n🎉\nI'M done's\n",
                4 => "123\n456789\nabc123\n--\n",
                5 => "{\"json\": [1, 2, 3]}\nkey: value\n  \n",
                6 => "x\u{301}y\nÉtude\néte\n",
                _ => "trailing   \n   \nWord\n",
            });
        }
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let whole = enc.tokenizer().count(text.as_str());
            for parts in [2, 3, 7, 31] {
                let cuts = cut_points(&text, parts, 0);
                assert!(!cuts.is_empty());
                assert_eq!(enc.count_parts(&text, cuts), whole, "{parts} parts");
            }
        }
        assert!(cut_points("short\ntext", 2, 1 << 20).is_empty());
        // The corpus's token files (code, JSON, logs, CJK, emoji), concatenated.
        let Some(dir) = std::env::var_os("BATON_CORPUS") else {
            return;
        };
        let mut paths: Vec<_> = std::fs::read_dir(std::path::Path::new(&dir).join("tokens/files"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        paths.sort();
        let all: String = paths
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect();
        assert!(all.len() > 1 << 20, "corpus token files under {dir:?}");
        for enc in [Encoding::O200kBase, Encoding::Cl100kBase] {
            let whole = enc.tokenizer().count(all.as_str());
            for parts in [2, 5, 64] {
                assert_eq!(enc.count_parts(&all, cut_points(&all, parts, 0)), whole);
            }
        }
    }

    #[test]
    fn claude_is_an_estimate() {
        let c = Counter::for_model("claude-sonnet-4-5", Encoding::Cl100kBase, 1.15).unwrap();
        assert!(c.estimate);
        assert_eq!(c.encoding, Encoding::O200kBase);
        assert_eq!(c.apply(100), 115);
        assert!(Counter::for_model("claude-x", Encoding::O200kBase, 0.5).is_err());
        assert_eq!(
            Counter::for_model("gpt-4", Encoding::O200kBase, 1.15)
                .unwrap()
                .encoding,
            Encoding::Cl100kBase
        );
        assert!(Counter::for_model("llama", Encoding::O200kBase, 1.15).is_err());
    }
}

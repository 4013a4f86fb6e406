//! Exact token counts (OpenAI's o200k_base / cl100k_base through `bpe-openai`, which matches
//! tiktoken's `encode_ordinary`) and the documented estimate used for Claude, whose tokenizer
//! is not public.
//!
//! The vocabularies are `bpe-openai`'s own tables (build.rs): o200k_base's deserialized
//! straight from the binary, cl100k_base's decompressed first, on the first exact count. A
//! command that counts nothing (the task store, `--version`, an outline with estimated
//! counts) neither reads nor holds them. They are shipped without the two automata that only
//! bpe's table, minimal and appendable encoders read, and the token hash map only its
//! bitfield encoder reads (build.rs, `counting_tables`): use `count`,
//! `encode_via_backtracking` (what `Tokenizer::encode` does) and `decode_tokens` only.

use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::Serialize;

use crate::error::{Error, Result};

pub(crate) mod estimate;

// o200k_base, the default, as its postcard tables (deserialized from here: nothing to
// decompress); cl100k_base compressed (build.rs).
static O200K_TABLES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.bpe"));
static CL100K_DICT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.bpe.zst"));

// The pre-tokenizer patterns, exactly as `bpe-openai` 0.3 builds its tokenizers (a unit test
// checks ours against its own on mixed text): the negative look-ahead `\s+(?!\S)` is written
// as a one-char pseudo look-ahead that the splitter drops.
static O200K: LazyLock<Tokenizer> = LazyLock::new(|| {
    let pat1 = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    tokenizer(
        postcard::from_bytes(O200K_TABLES).expect("valid tables"),
        &pat1,
    )
});

static CL100K: LazyLock<Tokenizer> = LazyLock::new(|| {
    let pat1 = "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$";
    tokenizer(vocabulary(CL100K_DICT), pat1)
});

/// Build a tokenizer: the vocabulary decoded, with `pat1` and the two whitespace patterns both
/// encodings share.
fn tokenizer(bpe: BytePairEncoding, pat1: &str) -> Tokenizer {
    Tokenizer::new_lookahead(
        bpe,
        &[(pat1, false), ("\\s+\\s", true), ("\\s+", false)],
        false,
    )
    .expect("valid pre-tokenizer patterns")
}

/// Decode a vocabulary written by build.rs: its zstd frames side by side into one buffer,
/// then the MessagePack tables.
fn vocabulary(dict: &[u8]) -> BytePairEncoding {
    let word = |i: usize| {
        let b: [u8; 8] = dict[i * 8..i * 8 + 8].try_into().expect("8 bytes");
        u64::from_le_bytes(b) as usize
    };
    let n = word(0);
    let mut raw = vec![0u8; (0..n).map(|k| word(1 + 2 * k)).sum()];
    std::thread::scope(|s| {
        let (mut out, mut at) = (raw.as_mut_slice(), (1 + 2 * n) * 8);
        for k in 0..n {
            let (len, zlen) = (word(1 + 2 * k), word(2 + 2 * k));
            let (dst, rest) = out.split_at_mut(len);
            let src = &dict[at..at + zlen];
            s.spawn(move || zstd::bulk::decompress_to_buffer(src, dst).expect("a valid frame"));
            out = rest;
            at += zlen;
        }
    });
    postcard::from_bytes(&raw).expect("a valid vocabulary")
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

    /// The encoding's tokenizer, decoded on first use.
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
            let n = tok.bpe.count(piece.as_bytes());
            if used + n > max {
                // Take as many tokens of this piece as fit, backing off to a char boundary.
                let ids = tok.bpe.encode_via_backtracking(piece.as_bytes());
                let room = max - used;
                let bytes = tok.bpe.decode_tokens(&ids[..room.min(ids.len())]);
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
/// For numbers that only inform (a journal's prompt size, a context model), where loading
/// ~30 MB of tables would cost more than the answer is worth.
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

//! Provider rules as data: gitleaks' rule set (`rules/gitleaks.toml`, MIT), compiled into the
//! binary by build.rs, applied the way gitleaks applies it. A rule is tried only on the lines
//! that hold one of its keywords (ASCII case ignored), and its regex is compiled on its first
//! such line. Its secret is its `secretGroup`, else its first group that matched, else the
//! whole match; the secret is replaced when its entropy is over the rule's floor and no
//! allowlist (the rule's or the global one) holds for it. Each rule runs on one line at a time,
//! so, like every redaction rule, it gives the same answer however a text is cut.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::bytes::Regex;

use super::redact_keep::{MARK, entropy, is_no_secret};
use super::words::Words;

/// What an allowlist's regexes are tried against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(
    dead_code,
    reason = "v8.27.2's only lists on a line are generic-api-key's, which baton skips"
)]
pub(super) enum Target {
    Secret,
    Match,
    Line,
}

/// A gitleaks allowlist: a finding it holds for is no secret.
pub(super) struct Allow {
    pub(super) target: Target,
    pub(super) regexes: &'static [&'static str],
    /// Lower-case words: a secret that holds one is no secret.
    pub(super) stopwords: &'static [&'static str],
    /// `regexes`, compiled on the first finding it is asked about.
    pub(super) compiled: OnceLock<Vec<Regex>>,
}

impl Allow {
    fn regexes(&self) -> &[Regex] {
        self.compiled.get_or_init(|| {
            self.regexes
                .iter()
                .filter_map(|r| compile(r).ok())
                .collect()
        })
    }

    /// Whether it holds for a finding: `secret` (its words, or its regexes on their target).
    fn holds(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let lower = secret.to_ascii_lowercase();
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => whole,
            Target::Line => line,
        };
        self.stopwords
            .iter()
            .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
            || self.regexes().iter().any(|re| re.is_match(target))
    }
}

/// A gitleaks rule (build.rs writes them from the TOML, with [`KEYWORDS`] and [`RULES_OF`]: the
/// rules that list each keyword).
pub(super) struct Provider {
    /// Its gitleaks id: what the tests name a failing rule by.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub(super) id: &'static str,
    pub(super) regex: &'static str,
    /// Shannon entropy (bits a byte) the secret must exceed; 0 for none.
    pub(super) entropy: f64,
    /// The capture group that is the secret; 0 for gitleaks' default.
    pub(super) group: usize,
    pub(super) allow: &'static [Allow],
    /// `regex`, compiled on the first line that holds one of its keywords; `None` if this
    /// engine refuses it (the tests rule that out for the shipped set).
    pub(super) compiled: OnceLock<Option<Regex>>,
}

include!(concat!(env!("OUT_DIR"), "/providers.rs"));

/// gitleaks' regexes are Go's (RE2): `\w`, `\s`, `\d` are ASCII, which `(?-u)` gives here.
/// `(?m)`: a rule is searched over a stretch of lines, `^` and `$` at each line's bounds, as
/// on a line alone (see [`findings`]).
fn compile(re: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("(?m-u){re}"))
}

impl Provider {
    fn regex(&self) -> Option<&Regex> {
        self.compiled
            .get_or_init(|| compile(self.regex).ok())
            .as_ref()
    }

    /// Whether an allowlist (the rule's, or the global one) holds for a finding.
    fn allowed(&self, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        GLOBAL_ALLOW.holds(secret, whole, line)
            || self.allow.iter().any(|a| a.holds(secret, whole, line))
    }
}

/// One pass over a long text for all keywords.
static AUTOMATON: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();

/// `(line start, rule)` for every line of `text` holding a keyword of the rule, sorted, once
/// each.
fn hits(text: &[u8]) -> Vec<(usize, usize)> {
    let mut at: Vec<(usize, usize)> = Vec::new();
    // A short text is read once (`Words`): building the automaton costs more.
    if text.len() <= 4096 {
        static SHORT: OnceLock<Words> = OnceLock::new();
        let lower = text.to_ascii_lowercase();
        at.extend(SHORT.get_or_init(|| Words::new(&KEYWORDS)).find_all(&lower));
    } else {
        let ac = AUTOMATON.get_or_init(|| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(KEYWORDS)
                .expect("gitleaks' keywords")
        });
        at.extend(
            ac.find_overlapping_iter(text)
                .map(|m| (m.start(), m.pattern().as_usize())),
        );
    }
    // A hit's line start by binary search over the text's line breaks: a long line with many
    // keywords (minified JSON) costs its length once, not once a keyword.
    let newlines: Vec<usize> = memchr::memchr_iter(b'\n', text).collect();
    let mut hits: Vec<(usize, usize)> = at
        .into_iter()
        .flat_map(|(pos, k)| {
            let i = newlines.partition_point(|&n| n < pos);
            let start = if i == 0 { 0 } else { newlines[i - 1] + 1 };
            RULES_OF[k].iter().map(move |&r| (start, usize::from(r)))
        })
        .collect();
    hits.sort_unstable();
    hits.dedup();
    hits
}

/// The start of the line `at` is on, and its end (before its `\n`).
fn line_at(text: &[u8], at: usize) -> (usize, usize) {
    let start = memchr::memrchr(b'\n', &text[..at]).map_or(0, |i| i + 1);
    let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i);
    (start, end)
}

/// The secrets of rule `p` on the lines starting at `starts` (sorted: the lines holding its
/// keywords), as byte ranges of `text`. One search runs over the stretch from the first of
/// those lines to the end of the last (`(?m)`: `^` and `$` at each line's bounds), and a match
/// counts on a line of `starts` only: the same answer as a search of each line alone, at a
/// fraction of its cost where a keyword is common (`ey` of the JWT rule is in every "key").
/// A match that crosses a line break, which a search of one line cannot make, sends the lines
/// it covers to be searched alone.
fn findings(p: &Provider, text: &[u8], starts: &[usize], out: &mut Vec<(usize, usize)>) {
    let Some(re) = p.regex() else { return };
    let (Some(&from), Some(&last)) = (starts.first(), starts.last()) else {
        return;
    };
    let to = line_at(text, last).1;
    let mut alone: Vec<usize> = Vec::new();
    for caps in re.captures_iter(&text[from..to]) {
        let Some(whole) = caps.get(0) else { continue };
        let (s, e) = (from + whole.start(), from + whole.end());
        let (line, end) = line_at(text, s);
        if e > end {
            alone.extend(starts.iter().filter(|&&st| st >= line && st <= e));
            continue;
        }
        if starts.binary_search(&line).is_ok() {
            finding(p, &caps, from, &text[line..end], line, out);
        }
    }
    for line in alone {
        let end = line_at(text, line).1;
        for caps in re.captures_iter(&text[line..end]) {
            finding(p, &caps, line, &text[line..end], line, out);
        }
    }
}

/// One match of `p`'s regex (its positions from `base` in the text): its secret, unless its
/// entropy is too low or an allowlist holds. `line` is the match's line, starting at `at`.
fn finding(
    p: &Provider,
    caps: &regex::bytes::Captures<'_>,
    base: usize,
    line: &[u8],
    at: usize,
    out: &mut Vec<(usize, usize)>,
) {
    let Some(whole) = caps.get(0) else { return };
    let secret = if p.group > 0 {
        caps.get(p.group)
    } else {
        // gitleaks takes the first non-empty group; where that is the key's own word (Sonar's
        // `sonar[_.-]?(login|token)`), the value is the group after it.
        caps.iter()
            .skip(1)
            .flatten()
            .find(|m| !m.is_empty() && !is_key_word(m.as_bytes()))
    }
    .unwrap_or(whole);
    // A quoted secret (`("[a-z0-9=_\-]{8,20}")`) loses what is inside its quotes, as a key's
    // value does: `password = "[REDACTED]"`.
    let (mut start, mut end) = (secret.start(), secret.end());
    let quoted = secret.as_bytes();
    if quoted.len() > 2
        && matches!(quoted[0], b'"' | b'\'' | b'`')
        && quoted.last() == Some(&quoted[0])
    {
        (start, end) = (start + 1, end - 1);
    }
    let bytes =
        &caps.get(0).map_or(&[][..], |m| m.as_bytes())[start - whole.start()..end - whole.start()];
    if bytes.is_empty()
        || is_no_secret(bytes)
        || is_key_word(bytes)
        || memchr::memmem::find(bytes, MARK.as_bytes()).is_some()
        || (p.entropy > 0.0 && entropy(bytes) <= p.entropy)
        || p.allowed(bytes, whole.as_bytes(), line)
    {
        return;
    }
    debug_assert!(base + start >= at);
    out.push((base + start, base + end));
}

/// A key's own word: no secret as a value (`password = "password"`, a placeholder), nor as a
/// rule's group.
pub(super) fn is_key_word(b: &[u8]) -> bool {
    const WORDS: &[&[u8]] = &[
        b"password",
        b"passwd",
        b"secret",
        b"token",
        b"apikey",
        b"api_key",
        b"login",
        b"changeme",
    ];
    WORDS.contains(&&b.to_ascii_lowercase()[..])
}

/// Replace every provider secret in `text`.
pub(super) fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let mut hits = hits(text);
    if hits.is_empty() {
        return Cow::Borrowed(text);
    }
    // By rule, each rule's lines in order.
    hits.sort_unstable_by_key(|&(start, rule)| (rule, start));
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for lines in hits.chunk_by(|a, b| a.1 == b.1) {
        let starts: Vec<usize> = lines.iter().map(|&(start, _)| start).collect();
        findings(&PROVIDERS[lines[0].1], text, &starts, &mut spans);
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_unstable();
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for (s, e) in spans {
        if e <= at {
            continue;
        }
        out.extend_from_slice(&text[at..s.max(at)]);
        if s >= at {
            out.extend_from_slice(MARK.as_bytes());
        }
        at = e;
    }
    out.extend_from_slice(&text[at..]);
    Cow::Owned(out)
}

#[cfg(test)]
#[path = "redact_providers_tests.rs"]
mod tests;

//! Provider rules as data: gitleaks' rule set (`rules/gitleaks.toml`, MIT), compiled into the
//! binary by build.rs, applied the way gitleaks applies it. A rule is tried only on the lines
//! that hold one of its keywords (ASCII case ignored), and its regex is compiled on its first
//! such line. Its secret is its `secretGroup`, else its first group that matched, else the
//! whole match; the secret is replaced when its entropy is over the rule's floor and no
//! allowlist (the rule's or the global one) holds for it. Each rule runs on one line at a time,
//! so, like every redaction rule, it gives the same answer however a text is cut.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::bytes::Regex;

use super::redact_keep::{MARK, entropy};

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
}

/// A gitleaks rule (build.rs writes them from the TOML).
pub(super) struct Provider {
    /// Its gitleaks id: what the tests name a failing rule by.
    #[cfg_attr(not(test), expect(dead_code, reason = "read by the tests"))]
    pub(super) id: &'static str,
    pub(super) regex: &'static str,
    /// Lower case: a line holding none of them is not tried.
    pub(super) keywords: &'static [&'static str],
    /// Shannon entropy (bits a byte) the secret must exceed; 0 for none.
    pub(super) entropy: f64,
    /// The capture group that is the secret; 0 for gitleaks' default.
    pub(super) group: usize,
    pub(super) allow: &'static [Allow],
}

include!(concat!(env!("OUT_DIR"), "/providers.rs"));

/// gitleaks' regexes are Go's (RE2): `\w`, `\s`, `\d` are ASCII, which `(?-u)` gives here.
fn compile(re: &str) -> Result<Regex, regex::Error> {
    Regex::new(&format!("(?-u){re}"))
}

/// The rules with their keywords gathered once and their regexes compiled on first use.
struct Table {
    /// Every keyword once, and the rules that list it.
    keywords: Vec<&'static str>,
    rules_of: Vec<Vec<usize>>,
    /// One pass over a long text for all keywords.
    automaton: OnceLock<aho_corasick::AhoCorasick>,
    regexes: Vec<OnceLock<Option<Regex>>>,
    allows: Vec<Vec<OnceLock<Vec<Regex>>>>,
    global: OnceLock<Vec<Regex>>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    let mut keywords: Vec<&'static str> = Vec::new();
    let mut rules_of: Vec<Vec<usize>> = Vec::new();
    for (i, p) in PROVIDERS.iter().enumerate() {
        for k in p.keywords {
            match keywords.iter().position(|x| x == k) {
                Some(at) => rules_of[at].push(i),
                None => {
                    keywords.push(k);
                    rules_of.push(vec![i]);
                }
            }
        }
    }
    Table {
        keywords,
        rules_of,
        automaton: OnceLock::new(),
        regexes: PROVIDERS.iter().map(|_| OnceLock::new()).collect(),
        allows: PROVIDERS
            .iter()
            .map(|p| p.allow.iter().map(|_| OnceLock::new()).collect())
            .collect(),
        global: OnceLock::new(),
    }
});

impl Table {
    /// A rule's regex; `None` (never matches) if this regex engine refuses it, which the
    /// tests rule out for the shipped set.
    fn regex(&self, rule: usize) -> Option<&Regex> {
        self.regexes[rule]
            .get_or_init(|| compile(PROVIDERS[rule].regex).ok())
            .as_ref()
    }

    fn allow_regexes(&self, rule: usize, list: usize) -> &[Regex] {
        self.allows[rule][list].get_or_init(|| {
            PROVIDERS[rule].allow[list]
                .regexes
                .iter()
                .filter_map(|r| compile(r).ok())
                .collect()
        })
    }

    /// `(line start, rule)` for every line of `text` holding a keyword of the rule, sorted,
    /// once each.
    fn hits(&self, text: &[u8]) -> Vec<(usize, usize)> {
        let mut at: Vec<(usize, usize)> = Vec::new();
        // A short text is searched keyword by keyword: building the automaton costs more.
        if text.len() <= 4096 {
            let lower = text.to_ascii_lowercase();
            for (k, word) in self.keywords.iter().enumerate() {
                for pos in memchr::memmem::find_iter(&lower, word.as_bytes()) {
                    at.push((pos, k));
                }
            }
        } else {
            let ac = self.automaton.get_or_init(|| {
                aho_corasick::AhoCorasick::builder()
                    .ascii_case_insensitive(true)
                    .build(&self.keywords)
                    .expect("gitleaks' keywords")
            });
            at.extend(
                ac.find_overlapping_iter(text)
                    .map(|m| (m.start(), m.pattern().as_usize())),
            );
        }
        let mut hits: Vec<(usize, usize)> = at
            .into_iter()
            .flat_map(|(pos, k)| {
                let start = memchr::memrchr(b'\n', &text[..pos]).map_or(0, |i| i + 1);
                self.rules_of[k].iter().map(move |&r| (start, r))
            })
            .collect();
        hits.sort_unstable();
        hits.dedup();
        hits
    }

    /// Whether an allowlist holds for a finding (`secret` within `whole`, the match, on
    /// `line`).
    fn allowed(&self, rule: usize, secret: &[u8], whole: &[u8], line: &[u8]) -> bool {
        let lower = secret.to_ascii_lowercase();
        let stop = |words: &[&str]| {
            words
                .iter()
                .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
        };
        let global = self.global.get_or_init(|| {
            GLOBAL_ALLOW
                .regexes
                .iter()
                .filter_map(|r| compile(r).ok())
                .collect()
        });
        if global.iter().any(|re| re.is_match(secret)) || stop(GLOBAL_ALLOW.stopwords) {
            return true;
        }
        PROVIDERS[rule].allow.iter().enumerate().any(|(i, a)| {
            let target = match a.target {
                Target::Secret => secret,
                Target::Match => whole,
                Target::Line => line,
            };
            stop(a.stopwords)
                || self
                    .allow_regexes(rule, i)
                    .iter()
                    .any(|re| re.is_match(target))
        })
    }
}

/// The secrets on one line, as byte ranges of it.
fn findings(table: &Table, rule: usize, line: &[u8], out: &mut Vec<(usize, usize)>) {
    let Some(re) = table.regex(rule) else { return };
    let p = &PROVIDERS[rule];
    for caps in re.captures_iter(line) {
        let Some(whole) = caps.get(0) else { continue };
        let secret = if p.group > 0 {
            caps.get(p.group)
        } else {
            caps.iter().skip(1).flatten().find(|m| !m.is_empty())
        }
        .unwrap_or(whole);
        let bytes = secret.as_bytes();
        if bytes.is_empty()
            || memchr::memmem::find(bytes, MARK.as_bytes()).is_some()
            || (p.entropy > 0.0 && entropy(bytes) <= p.entropy)
            || table.allowed(rule, bytes, whole.as_bytes(), line)
        {
            continue;
        }
        out.push((secret.start(), secret.end()));
    }
}

/// Replace every provider secret in `text`.
pub(super) fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let table = &*TABLE;
    let hits = table.hits(text);
    if hits.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    let mut found = Vec::new();
    for (start, rule) in hits {
        let end = memchr::memchr(b'\n', &text[start..]).map_or(text.len(), |i| start + i);
        found.clear();
        findings(table, rule, &text[start..end], &mut found);
        spans.extend(found.iter().map(|&(s, e)| (start + s, start + e)));
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

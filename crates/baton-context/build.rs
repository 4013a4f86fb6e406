//! Build step of baton-context: the BPE vocabularies (o200k_base, cl100k_base) as tables
//! read in place, their pre-tokenizers as serialized DFAs (`src/tokens/layout.rs` says what
//! is written; `tokens` reads it without decoding), and gitleaks' rules as static data.
//!
//! See docs/BENCHMARKS.md, "Token counts read in place".
use std::path::{Path, PathBuf};

use regex_automata::MatchKind;
use regex_automata::dfa::{StartKind, dense};
use serde::Deserialize;

#[path = "src/tokens/layout.rs"]
mod layout;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    for (name, tok, patterns, dense) in [
        (
            "o200k_base",
            bpe_openai::o200k_base(),
            layout::O200K_PATTERNS,
            true,
        ),
        (
            "cl100k_base",
            bpe_openai::cl100k_base(),
            layout::CL100K_PATTERNS,
            false,
        ),
    ] {
        let bpe = &tok.bpe;
        let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32)
            .map(|id| bpe.token_bytes(id))
            .collect();
        write(&out, &format!("{name}.vocab"), &layout::write(&tokens));
        write(&out, &format!("{name}.dfa"), &dfa(&patterns, dense));
    }
    providers(&out);
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/tokens/layout.rs");
}

fn write(out: &Path, name: &str, bytes: &[u8]) {
    std::fs::write(out.join(name), bytes).expect("OUT_DIR is writable");
}

/// The pre-tokenizer's patterns as one leftmost-first DFA for anchored searches, serialized
/// little-endian (dense: fastest; sparse: a twentieth of the size). Not minimized: that takes
/// 20 s in a build script compiled without optimizations, for a quarter fewer bytes.
fn dfa(patterns: &[&str], dense: bool) -> Vec<u8> {
    let dfa = dense::Builder::new()
        .configure(
            dense::Config::new()
                .match_kind(MatchKind::LeftmostFirst)
                .start_kind(StartKind::Anchored),
        )
        .build_many(patterns)
        .expect("the pre-tokenizer's patterns compile");
    if dense {
        let (bytes, pad) = dfa.to_bytes_little_endian();
        bytes[pad..].to_vec()
    } else {
        dfa.to_sparse()
            .expect("a sparse DFA of the pre-tokenizer")
            .to_bytes_little_endian()
    }
}

/// gitleaks' rules that baton does not take, and why.
const SKIPPED: &[(&str, &str)] = &[
    // baton's own key/value rules (`redact_rules`) cover a secret-like key's value in more
    // spellings, with the references and placeholders they keep.
    ("generic-api-key", "a key/value rule: baton's own cover it"),
    // A private key's block spans lines: `redact` removes it line by line.
    ("private-key", "spans lines: redact's block state covers it"),
];

/// A Go (RE2) regex in the `regex` crate's syntax: the same but for a `{` that opens no
/// repetition (`${{`, `{\d+}`), a literal in Go and an error here, so it is escaped.
fn rust_regex(go: &str) -> String {
    let b = go.as_bytes();
    let mut out = String::with_capacity(go.len() + 8);
    let (mut i, mut class) = (0, false);
    while i < b.len() {
        let c = b[i] as char;
        match c {
            '\\' => {
                let n = go[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&go[i..i + 1 + n]);
                i += 1 + n;
                continue;
            }
            '[' if !class => class = true,
            ']' if class => class = false,
            '{' if !class => {
                let rest = &go[i + 1..];
                let end = rest.find('}');
                let repetition = end.is_some_and(|e| {
                    let inner = &rest[..e];
                    let (lo, hi) = inner.split_once(',').unwrap_or((inner, "0"));
                    !lo.is_empty()
                        && lo.bytes().all(|d| d.is_ascii_digit())
                        && hi.bytes().all(|d| d.is_ascii_digit())
                });
                if !repetition {
                    out.push_str("\\{");
                    i += 1;
                    continue;
                }
            }
            _ => {}
        }
        // Copy one char (the pattern may hold UTF-8).
        let n = go[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&go[i..i + n]);
        i += n;
    }
    out
}

/// One gitleaks rule, as its TOML spells it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GlRule {
    id: String,
    regex: Option<String>,
    #[serde(default)]
    keywords: Vec<String>,
    entropy: Option<f64>,
    #[serde(default)]
    secret_group: u32,
    #[serde(default)]
    allowlists: Vec<GlAllow>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct GlAllow {
    #[serde(default)]
    regexes: Vec<String>,
    #[serde(default)]
    stopwords: Vec<String>,
    regex_target: Option<String>,
    condition: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
}

#[derive(Deserialize)]
struct GlConfig {
    allowlist: GlAllow,
    rules: Vec<GlRule>,
}

/// Write `OUT_DIR/providers.rs`: gitleaks' rule set (`rules/gitleaks.toml`) as static data
/// (`mask::redact_providers` reads it; nothing is parsed at run time). Path-only rules and
/// allowlists that need a file's path are left out: baton redacts text, not files.
fn providers(out: &Path) {
    let path = "rules/gitleaks.toml";
    println!("cargo:rerun-if-changed={path}");
    let text = std::fs::read_to_string(path).expect("rules/gitleaks.toml is readable");
    let config: GlConfig = toml::from_str(&text).expect("rules/gitleaks.toml is gitleaks' config");
    let allow = |a: &GlAllow| -> Option<String> {
        // Paths are unknown here: an allowlist that needs one (alone, or AND-ed) never holds.
        if !a.paths.is_empty()
            && (a.condition.as_deref() == Some("AND")
                || (a.regexes.is_empty() && a.stopwords.is_empty()))
        {
            return None;
        }
        let target = match a.regex_target.as_deref() {
            None | Some("secret") => "Target::Secret",
            Some("match") => "Target::Match",
            Some("line") => "Target::Line",
            Some(other) => panic!("{path}: unknown regexTarget {other:?}"),
        };
        let regexes: Vec<String> = a.regexes.iter().map(|r| rust_regex(r)).collect();
        let stopwords: Vec<String> = a.stopwords.iter().map(|w| w.to_ascii_lowercase()).collect();
        Some(format!(
            "Allow {{ target: {target}, regexes: &{regexes:?}, stopwords: &{stopwords:?}, compiled: OnceLock::new() }}"
        ))
    };
    // Statics only (a rule's allowlists are arrays of their own: each holds a `OnceLock`), and
    // the keywords gathered here: a process that redacts builds nothing before its first match.
    let mut src = String::new();
    let mut rules = Vec::new();
    let mut keywords: Vec<String> = Vec::new();
    let mut rules_of: Vec<Vec<usize>> = Vec::new();
    for r in &config.rules {
        let Some(regex) = &r.regex else { continue };
        if SKIPPED.iter().any(|(id, _)| *id == r.id) {
            continue;
        }
        assert!(
            !r.keywords.is_empty(),
            "{path}: rule {} has no keywords",
            r.id
        );
        let n = rules.len();
        let allows: Vec<String> = r.allowlists.iter().filter_map(allow).collect();
        let allow_ref = if allows.is_empty() {
            "&[]".to_string()
        } else {
            src.push_str(&format!(
                "static ALLOW_{n}: [Allow; {}] = [{}];\n",
                allows.len(),
                allows.join(", ")
            ));
            format!("&ALLOW_{n}")
        };
        for k in &r.keywords {
            let k = k.to_ascii_lowercase();
            match keywords.iter().position(|x| *x == k) {
                Some(at) => rules_of[at].push(n),
                None => {
                    keywords.push(k);
                    rules_of.push(vec![n]);
                }
            }
        }
        rules.push(format!(
            "    Provider {{ id: {:?}, regex: {:?}, entropy: {:?}, group: {}, allow: {allow_ref}, compiled: OnceLock::new() }},\n",
            r.id,
            rust_regex(regex),
            r.entropy.unwrap_or(0.0),
            r.secret_group,
        ));
    }
    src.push_str(&format!(
        "pub(super) static PROVIDERS: [Provider; {}] = [\n{}];\n",
        rules.len(),
        rules.concat()
    ));
    src.push_str(&format!(
        "pub(super) static KEYWORDS: [&str; {}] = {keywords:?};\n",
        keywords.len()
    ));
    let rules_of: Vec<String> = rules_of.iter().map(|r| format!("&{r:?}")).collect();
    src.push_str(&format!(
        "pub(super) static RULES_OF: [&[u16]; {}] = [{}];\n",
        rules_of.len(),
        rules_of.join(", ")
    ));
    src.push_str(&format!(
        "pub(super) static GLOBAL_ALLOW: Allow = {};\n",
        allow(&config.allowlist).expect("the global allowlist holds regexes")
    ));
    let skipped: Vec<&str> = SKIPPED.iter().map(|(id, _)| *id).collect();
    src.push_str(&format!(
        "#[cfg(test)]\npub(super) static SKIPPED: &[&str] = &{skipped:?};\n"
    ));
    std::fs::write(out.join("providers.rs"), src).expect("OUT_DIR is writable");
}

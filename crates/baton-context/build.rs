//! Build step of baton-context: ship the BPE vocabularies (o200k_base, cl100k_base) that
//! `bpe-openai` would embed as 47 MB of tables without what baton never reads (see
//! `counting_tables`): o200k_base (the default encoding) as its tables, deserialized from the
//! binary on the first count, cl100k_base compressed (zstd), decoded on its first count. A
//! process that counts nothing touches neither.
//!
//! See docs/BENCHMARKS.md, "The task store".
use std::path::PathBuf;

use serde::Deserialize;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    std::fs::write(
        out.join("o200k_base.bpe"),
        counting_tables(&bpe_openai::o200k_base().bpe),
    )
    .expect("OUT_DIR is writable");
    compress("cl100k_base", bpe_openai::cl100k_base(), &out);
    providers(&out);
    println!("cargo:rerun-if-changed=build.rs");
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
fn providers(out: &std::path::Path) {
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

/// Frames decoded side by side on first use (one per core of a small machine).
const FRAMES: usize = 2;

/// Write `OUT_DIR/<name>.bpe.zst`: a header (frame count, then each frame's decoded and
/// compressed length, u64 little-endian) and the zstd frames of the vocabulary's tables
/// ([`counting_tables`]), cut into [`FRAMES`] equal parts.
fn compress(name: &str, tok: &bpe_openai::Tokenizer, out: &std::path::Path) {
    let raw = counting_tables(&tok.bpe);
    let part = raw.len().div_ceil(FRAMES);
    // zstd's level 19 is slow (~20 s for o200k on one core): the frames compress side by side.
    let frames: Vec<(usize, Vec<u8>)> = std::thread::scope(|s| {
        let jobs: Vec<_> = raw
            .chunks(part)
            .map(|c| s.spawn(move || (c.len(), zstd::bulk::compress(c, 19))))
            .collect();
        jobs.into_iter()
            .map(|j| {
                let (len, z) = j.join().expect("a compressing thread");
                (len, z.expect("zstd compresses"))
            })
            .collect()
    });
    let mut file = Vec::new();
    file.extend_from_slice(&(frames.len() as u64).to_le_bytes());
    for (len, z) in &frames {
        file.extend_from_slice(&(*len as u64).to_le_bytes());
        file.extend_from_slice(&(z.len() as u64).to_le_bytes());
    }
    for (_, z) in &frames {
        file.extend_from_slice(z);
    }
    std::fs::write(out.join(format!("{name}.bpe.zst")), file).expect("OUT_DIR is writable");
}

/// The vocabulary's tables without what baton never uses, serialized with postcard (read back
/// in three quarters of the time the MessagePack `bpe-openai` embeds takes, and 12.2 MB
/// instead of 14.6 for o200k_base). `BytePairEncoding` serializes as an array of its 10
/// fields (read here from that MessagePack); the 3rd is the
/// hash of every token's bytes (a map of 200K entries: read only by the bitfield encoder), the
/// 7th and 8th the two "overlapping" Aho-Corasick automata (~16 MB of o200k's 32 MB: read
/// only by the table, minimal and appendable/prependable encoders). baton counts (`count`:
/// the backtracking encoder), truncates (`encode_via_backtracking`, `decode_tokens`) and
/// pre-tokenizes, none of which reads them (bpe 0.2; `context::tokens` says so too). They are
/// replaced by those of a one-token vocabulary: valid tables, a few hundred bytes. Less than
/// half the bytes to hold and to read, for the same counts (checked against `bpe-openai`'s
/// own tokenizers in `context::tokens`'s tests and against the corpus).
fn counting_tables(bpe: &bpe_openai::byte_pair_encoding::BytePairEncoding) -> Vec<u8> {
    use bpe_openai::byte_pair_encoding::BytePairEncoding;
    const FIELDS: u32 = 10;
    const UNUSED: [usize; 3] = [2, 6, 7];
    fn fields(raw: &[u8]) -> Vec<&[u8]> {
        let mut rest = raw;
        let n = rmp::decode::read_array_len(&mut rest).expect("an array of fields");
        assert_eq!(n, FIELDS, "bpe's BytePairEncoding changed its fields");
        (0..n)
            .map(|_| {
                let before = rest;
                serde::de::IgnoredAny::deserialize(&mut rmp_serde::Deserializer::new(&mut rest))
                    .expect("a field");
                &before[..before.len() - rest.len()]
            })
            .collect()
    }
    let full = rmp_serde::to_vec(bpe).expect("the vocabulary serializes");
    let tiny = rmp_serde::to_vec(&BytePairEncoding::from_dictionary([b"\0".to_vec()], None))
        .expect("a one-token vocabulary serializes");
    let (full_fields, tiny_fields) = (fields(&full), fields(&tiny));
    let mut out = Vec::with_capacity(full.len() / 2);
    rmp::encode::write_array_len(&mut out, FIELDS).expect("writes to a Vec");
    for (i, f) in full_fields.iter().enumerate() {
        out.extend_from_slice(if UNUSED.contains(&i) {
            tiny_fields[i]
        } else {
            f
        });
    }
    let trimmed: BytePairEncoding = rmp_serde::from_slice(&out).expect("the trimmed tables");
    postcard::to_allocvec(&trimmed).expect("the tables serialize")
}

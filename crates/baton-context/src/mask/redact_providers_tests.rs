use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
use regex_syntax::hir::{self, Hir, HirKind};

use super::*;
use crate::mask::redact::redact_bytes;

/// Every rule of the shipped set is taken or skipped for a stated reason, and every regex in
/// it is one this engine accepts: a newer rule set that brings one it refuses fails here, by
/// its id.
#[test]
fn every_rule_is_taken_and_compiles_here() {
    let text = include_str!("../../rules/gitleaks.toml");
    let rules = text.matches("\n[[rules]]\n").count();
    let path_only = 1; // pkcs12-file: a file's name, no text to match
    assert_eq!(PROVIDERS.len() + SKIPPED.len() + path_only, rules);
    assert!(PROVIDERS.len() >= 200, "{}", PROVIDERS.len());
    let mut refused = Vec::new();
    for (i, p) in PROVIDERS.iter().enumerate() {
        let all =
            std::iter::once(p.regex).chain(p.allow.iter().flat_map(|a| a.regexes.iter().copied()));
        for re in all {
            if let Err(e) = compile(re) {
                refused.push(format!("{}: {e}", p.id));
            }
        }
        assert!(!keywords_of(i).is_empty(), "{}", p.id);
    }
    for re in GLOBAL_ALLOW.regexes {
        if let Err(e) = compile(re) {
            refused.push(format!("global allowlist: {e}"));
        }
    }
    assert!(refused.is_empty(), "{}", refused.join("\n"));
}

/// The keywords that gate rule `r`.
fn keywords_of(r: usize) -> Vec<&'static str> {
    KEYWORDS
        .iter()
        .zip(RULES_OF)
        .filter(|(_, rules)| rules.contains(&(r as u16)))
        .map(|(k, _)| *k)
        .collect()
}

/// `hir` with its assertions (`\b`, `^`, `$`) dropped and no line break in any class, so what
/// it generates is one line (the rule's regex then decides whether it matches).
fn one_line(h: &Hir) -> Hir {
    match h.kind() {
        HirKind::Look(_) => Hir::empty(),
        HirKind::Class(hir::Class::Bytes(c)) => {
            let mut c = c.clone();
            c.difference(&hir::ClassBytes::new([
                hir::ClassBytesRange::new(b'\n', b'\n'),
                hir::ClassBytesRange::new(b'\r', b'\r'),
            ]));
            if c.ranges().is_empty() {
                Hir::empty()
            } else {
                Hir::class(hir::Class::Bytes(c))
            }
        }
        HirKind::Repetition(r) => Hir::repetition(hir::Repetition {
            sub: Box::new(one_line(&r.sub)),
            // Long optional runs (`[\w.-]{0,50}?`) add nothing but noise.
            max: r.max.map(|m| m.min(r.min.max(60))),
            ..r.clone()
        }),
        HirKind::Capture(c) => Hir::capture(hir::Capture {
            sub: Box::new(one_line(&c.sub)),
            ..c.clone()
        }),
        HirKind::Concat(subs) => Hir::concat(subs.iter().map(one_line).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.iter().map(one_line).collect()),
        _ => h.clone(),
    }
}

/// What a rule reports on `line`, checked apart from the code under test where it can be:
/// the secret (its group, or its first non-empty group) when the regex matches and its
/// entropy is over the floor; `None` when there is none or an allowlist holds.
fn expected_secret(rule: usize, line: &[u8]) -> Option<Vec<u8>> {
    let p = &PROVIDERS[rule];
    let re = compile(p.regex).expect("compiles");
    let caps = re.captures(line)?;
    let whole = caps.get(0)?;
    let secret = if p.group > 0 {
        caps.get(p.group)?
    } else {
        caps.iter()
            .skip(1)
            .flatten()
            .find(|m| !m.is_empty() && !is_key_word(m.as_bytes()))
            .unwrap_or(whole)
    };
    let s = secret.as_bytes();
    let lower = line.to_ascii_lowercase();
    let keyword = keywords_of(rule)
        .iter()
        .any(|k| memchr::memmem::find(&lower, k.as_bytes()).is_some());
    if !keyword || (p.entropy > 0.0 && entropy(s) <= p.entropy) {
        return None;
    }
    if p.allowed(s, whole.as_bytes(), line) {
        return None;
    }
    Some(s.to_vec())
}

/// gitleaks tests each rule on secrets generated from the rule's own regex; so does this, for
/// every rule, a few lines each: each secret it reports is gone after redaction (on the line
/// alone, and with ordinary lines around it), and the rest of the line is kept.
#[test]
fn each_rules_secrets_generated_from_its_regex_are_redacted() {
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
    );
    let mut tried = 0;
    let mut no_example = Vec::new();
    let mut missed = Vec::new();
    let mut lines: Vec<Vec<u8>> = Vec::new();
    for (rule, p) in PROVIDERS.iter().enumerate() {
        let hir = regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(&format!("(?-u){}", p.regex))
            .expect("parses");
        let strategy = proptest::string::bytes_regex_parsed(&one_line(&hir))
            .unwrap_or_else(|e| panic!("{}: {e}", p.id));
        let mut examples = 0;
        for _ in 0..40 {
            let mut line = b"x = ".to_vec();
            line.extend(strategy.new_tree(&mut runner).expect("a value").current());
            line.extend_from_slice(b" ;");
            let Some(secret) = expected_secret(rule, &line) else {
                continue;
            };
            examples += 1;
            tried += 1;
            lines.push(line.clone());
            let mut text = b"running 3 tests\n".to_vec();
            text.extend_from_slice(&line);
            text.extend_from_slice(b"\ntest result: ok. 3 passed\n");
            for got in [redact(&line).into_owned(), redact_bytes(&text).into_owned()] {
                let gone = memchr::memmem::find(&got, &secret).is_none()
                    // A secret of one repeated run can reappear in the kept text around it.
                    || secret.len() < 8;
                if !gone || memchr::memmem::find(&got, MARK.as_bytes()).is_none() {
                    missed.push(format!(
                        "{}: {} -> {}",
                        p.id,
                        String::from_utf8_lossy(&line),
                        String::from_utf8_lossy(&got)
                    ));
                }
            }
            if examples == 5 {
                break;
            }
        }
        if examples == 0 {
            no_example.push(p.id);
        }
    }
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
    // All of them in one text, between lines that hold common keywords (`ey` of "key" and
    // "they", `sk` of "task"): searched stretch by stretch, the answer is each line's own.
    let mut text = Vec::new();
    for l in &lines {
        text.extend_from_slice(l);
        text.extend_from_slice(b"\nthey ask for the key of this task\n");
    }
    let mut each = Vec::new();
    for l in text.split(|&b| b == b'\n') {
        each.extend_from_slice(&redact(l));
        each.push(b'\n');
    }
    each.pop();
    assert!(
        redact(&text) == each,
        "the stretch search differs from the lines'"
    );
    // Random lines of some regexes rarely pass their entropy floor or allowlists; nearly every
    // rule must still have been tried.
    assert!(no_example.len() * 20 <= PROVIDERS.len(), "{no_example:?}");
    assert!(tried >= PROVIDERS.len() * 4, "{tried}");
}

#[test]
fn keywords_gate_rules_and_allowlists_keep_their_findings() {
    // No keyword, no rule tried.
    assert!(hits(b"test result: ok. 3 passed; 0 failed").is_empty());
    // Alibaba's access key id (LTAI…) is known only to gitleaks' set.
    let key = "LTAI5tQ9xRz2vW8mK4nP7sJ3";
    assert_eq!(
        redact(format!("id {key} end").as_bytes()),
        &b"id [REDACTED] end"[..]
    );
    // Its keyword in another case is the same keyword.
    assert!(!hits(key.to_ascii_lowercase().as_bytes()).is_empty());
    // The global allowlist: a value of one repeated letter is no secret.
    assert!(PROVIDERS[0].allowed(b"aaaaaaaaaa", b"aaaaaaaaaa", b"aaaaaaaaaa"));
    // An AWS key id ending in EXAMPLE is the documentation's, allowed by the rule.
    let aws = PROVIDERS
        .iter()
        .position(|p| p.id == "aws-access-token")
        .unwrap();
    let doc = b"AKIAIOSFODNN7EXAMPLE";
    assert!(PROVIDERS[aws].allowed(doc, doc, doc));
    // A long text takes the automaton, with the same answer.
    let long = format!("{}\nid {key} end\n", "word ".repeat(2000));
    let got = redact(long.as_bytes());
    assert!(memchr::memmem::find(&got, key.as_bytes()).is_none());
    assert!(got.ends_with(b"id [REDACTED] end\n"));
}

#[test]
fn entropy_is_shannons() {
    assert_eq!(entropy(b""), 0.0);
    assert_eq!(entropy(b"aaaa"), 0.0);
    assert!((entropy(b"abab") - 1.0).abs() < 1e-9);
    assert!((entropy(b"abcd") - 2.0).abs() < 1e-9);
}

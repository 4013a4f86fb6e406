//! Secret redaction for everything `baton mask` prints (passthrough text and summaries).
//! Scratch files keep the raw bytes; they are 0600 under the gitignored `.baton/`.
//!
//! Works on bytes so non-UTF-8 passthrough output is preserved byte for byte where no secret is.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::{Regex, RegexSet};

pub const MARK: &str = "[REDACTED]";

struct Rule {
    re: Regex,
    /// Replacement; `$name` keeps the variable name of an assignment.
    with: &'static [u8],
}

static RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
    let rule = |re: &str, with: &'static [u8]| Rule {
        re: Regex::new(re).expect("redaction regex"),
        with,
    };
    vec![
        // PEM private keys, whole block (or to the end if the END line is missing).
        rule(
            r"(?s)-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|\z)",
            b"-----BEGIN PRIVATE KEY----- [REDACTED] -----END PRIVATE KEY-----",
        ),
        // .env-style assignments: FOO_SECRET=…, PASSWORD=…, GITHUB_TOKEN=…, API_KEY=….
        rule(
            r#"\b((?:[A-Z0-9]+_)*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)(?:_[A-Z0-9]+)*)(\s*[=:]\s*)("[^"\n]*"|'[^'\n]*'|[^\s"']+)"#,
            b"${1}${2}[REDACTED]",
        ),
        // Authorization: Bearer <token>
        rule(
            r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=-]{8,}",
            b"${1} [REDACTED]",
        ),
        // OpenAI / Anthropic style keys (sk-…, sk-proj-…, sk-ant-…).
        rule(r"\bsk-[A-Za-z0-9_-]{16,}", b"[REDACTED]"),
        // GitHub tokens.
        rule(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b", b"[REDACTED]"),
        rule(r"\bgithub_pat_[A-Za-z0-9_]{20,}", b"[REDACTED]"),
        // AWS access key ids.
        rule(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", b"[REDACTED]"),
        // Slack and Google API keys.
        rule(r"\bxox[abprs]-[A-Za-z0-9-]{10,}", b"[REDACTED]"),
        rule(r"\bAIza[0-9A-Za-z_-]{35}", b"[REDACTED]"),
    ]
});

/// One pass to learn whether anything matches at all (the common case is: nothing does).
static ANY: LazyLock<RegexSet> =
    LazyLock::new(|| RegexSet::new(RULES.iter().map(|r| r.re.as_str())).expect("redaction set"));

/// Replace every secret in `text`.
pub fn redact_bytes(text: &[u8]) -> Cow<'_, [u8]> {
    let hits = ANY.matches(text);
    if !hits.matched_any() {
        return Cow::Borrowed(text);
    }
    let mut out: Cow<'_, [u8]> = Cow::Borrowed(text);
    for (i, rule) in RULES.iter().enumerate() {
        if hits.matched(i)
            && let Cow::Owned(o) = rule.re.replace_all(&out, rule.with)
        {
            out = Cow::Owned(o);
        }
    }
    out
}

/// `redact_bytes` for text; replacements are ASCII at character boundaries, so the result
/// stays valid UTF-8 (decoded lossily all the same, never a panic).
pub fn redact(text: &str) -> Cow<'_, str> {
    match redact_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(b) => Cow::Owned(match String::from_utf8(b) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    }
}

/// Redact every string inside a JSON value (summaries are redacted after they are built, so no
/// field can be forgotten).
pub fn redact_json(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(redact_json),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_json),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_secret_shapes_are_redacted() {
        let cases = [
            ("key sk-proj-abcdefghijklmnop1234 end", "key [REDACTED] end"),
            (
                "tok ghp_abcdefghijklmnopqrstuvwxyz0123456789 x",
                "tok [REDACTED] x",
            ),
            ("aws AKIAIOSFODNN7EXAMPLE!", "aws [REDACTED]!"),
            (
                "Authorization: Bearer abc.def-ghi_123",
                "Authorization: Bearer [REDACTED]",
            ),
            (
                "export DB_PASSWORD=hunter22",
                "export DB_PASSWORD=[REDACTED]",
            ),
            ("API_KEY = \"a b c\"", "API_KEY = [REDACTED]"),
            ("GITHUB_TOKEN: xyz", "GITHUB_TOKEN: [REDACTED]"),
            ("SECRET=s3cr3t OTHER=fine", "SECRET=[REDACTED] OTHER=fine"),
        ];
        for (input, want) in cases {
            assert_eq!(redact(input), want, "{input}");
        }
    }

    #[test]
    fn pem_blocks_are_removed_whole() {
        let t = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nafter";
        let r = redact(t);
        assert!(!r.contains("MIIEow") && !r.contains("AAAA"), "{r}");
        assert!(r.starts_with("before\n") && r.ends_with("\nafter"), "{r}");
        let open = redact("x\n-----BEGIN PRIVATE KEY-----\nMIIE\nMORE");
        assert!(!open.contains("MIIE"), "{open}");
    }

    #[test]
    fn ordinary_text_is_untouched_and_borrowed() {
        let t = "test result: ok. 3 passed; max_tokens=5; password reset flow works";
        assert!(matches!(redact(t), Cow::Borrowed(_)));
    }

    #[test]
    fn non_utf8_bytes_survive() {
        let b = b"\xff\xfe SECRET=x \xff";
        assert_eq!(&*redact_bytes(b), b"\xff\xfe SECRET=[REDACTED] \xff");
    }

    #[test]
    fn json_strings_are_redacted() {
        let mut v = serde_json::json!({"a": ["sk-abcdefghijklmnopqrstu"], "b": {"c": "TOKEN=1"}});
        redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["[REDACTED]"], "b": {"c": "TOKEN=[REDACTED]"}})
        );
    }
}

//! What a redaction keeps: a value that is plainly no secret (a placeholder, a reference, a
//! name in code), and the measures a rule decides by (entropy). Shared by the structural
//! rules (`redact_rules`), the next-line state (`redact_next`) and gitleaks' set
//! (`redact_providers`).

use regex::bytes::Captures;

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";

/// Shannon entropy of `bytes`, in bits a byte (gitleaks' measure of randomness).
pub(super) fn entropy(bytes: &[u8]) -> f64 {
    if bytes.is_empty() {
        return 0.0;
    }
    let mut counts = [0u32; 256];
    for &b in bytes {
        counts[b as usize] += 1;
    }
    let n = bytes.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum()
}

/// A named group's bytes (empty when it did not take part).
pub(super) fn group<'h>(caps: &Captures<'h>, name: &str) -> &'h [u8] {
    caps.name(name).map_or(&[], |m| m.as_bytes())
}

/// The whole match's bytes.
pub(super) fn group0<'h>(caps: &Captures<'h>) -> &'h [u8] {
    caps.get(0).map_or(&[], |m| m.as_bytes())
}

/// Words that name a type, not a value (`apiKey: string`, `api_key: str`).
const TYPE_NAMES: &[&[u8]] = &[
    b"string",
    b"str",
    b"number",
    b"int",
    b"integer",
    b"bool",
    b"boolean",
    b"bytes",
    b"any",
    b"object",
    b"secretstr",
    b"optional",
];

/// Whether a bare value is a name in code, not a secret: camelCase holding the key's own word
/// (`apiKey: apiKeyIsDirty`, `finalApiKey`), or the word itself (`token=Token{…}`).
fn is_code_name(inner: &[u8], core: &[u8]) -> bool {
    if !inner
        .iter()
        .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    {
        return false;
    }
    let folded: Vec<u8> = inner
        .iter()
        .filter(|b| **b != b'_')
        .map(u8::to_ascii_lowercase)
        .collect();
    let core: Vec<u8> = core
        .iter()
        .filter(|b| !matches!(b, b'_' | b'.' | b'-'))
        .map(u8::to_ascii_lowercase)
        .collect();
    let camel = inner
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let letters = inner.iter().all(u8::is_ascii_alphabetic);
    let humps = inner
        .windows(2)
        .filter(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
        .count();
    folded == core
        || (camel && memchr::memmem::find(&folded, &core).is_some())
        // `shouldUseOpenHandsKey`: a variable, not a password.
        || (letters && inner[0].is_ascii_lowercase() && humps >= 2)
}

/// A call in code, `getPassword()`, `os.getenv(` (its argument quoted, past the value): a
/// name, `(`, and nothing after the closing parenthesis. `x(1)yz` is no call.
fn is_call(inner: &[u8]) -> bool {
    let Some(open) = memchr::memchr(b'(', inner) else {
        return false;
    };
    let (name, rest) = (&inner[..open], &inner[open + 1..]);
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        && (rest.is_empty() || rest.ends_with(b")"))
}

/// Namespaces whose members are configuration read in code, not written in it: Terraform's
/// `var.`/`local.`/`module.`/`data.`, settings and environment objects.
const NAMESPACES: &[&[u8]] = &[
    b"var",
    b"vars",
    b"local",
    b"module",
    b"data",
    b"self",
    b"this",
    b"settings",
    b"config",
    b"conf",
    b"cfg",
    b"process",
    b"os",
    b"env",
    b"secrets",
    b"inputs",
    b"params",
    b"props",
    b"options",
    b"opts",
    b"ctx",
    b"context",
    b"app",
    b"request",
    b"req",
];

/// A dotted path of identifiers read from a namespace (`var.db_password`, `settings.SECRET`) or
/// ending in the key's own word (`cfg.auth.token`): a reference in code, not a value.
fn is_reference(inner: &[u8], core: &[u8]) -> bool {
    let segments: Vec<&[u8]> = inner.split(|&b| b == b'.').collect();
    let ident = |s: &&[u8]| {
        s.first()
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
            && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_')
    };
    if segments.len() < 2 || !segments.iter().all(ident) {
        return false;
    }
    let first = segments[0].to_ascii_lowercase();
    let last = segments[segments.len() - 1].to_ascii_lowercase();
    let word: Vec<u8> = core
        .iter()
        .filter(|b| !matches!(b, b'_' | b'.' | b'-'))
        .copied()
        .collect();
    let last: Vec<u8> = last.into_iter().filter(|b| *b != b'_').collect();
    NAMESPACES.contains(&&first[..]) || memchr::memmem::find(&last, &word).is_some()
}

/// A Java object's default text, `android.os.BinderProxy@2bd79ce`: a class and a hash.
fn is_object_id(inner: &[u8]) -> bool {
    let Some(at) = memchr::memrchr(b'@', inner) else {
        return false;
    };
    let (class, hash) = (&inner[..at], &inner[at + 1..]);
    !hash.is_empty()
        && hash.iter().all(u8::is_ascii_hexdigit)
        && class.contains(&b'.')
        && class
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$'))
}

/// Whether a key's value is plainly no secret: a placeholder, a boolean, a reference to a
/// variable, a name or call in code, a `pwd` that is a directory.
pub(super) fn keep_value(caps: &Captures<'_>, next: Option<u8>) -> bool {
    let value = group(caps, "value");
    let inner = value
        .strip_prefix(b"\\\"")
        .or_else(|| value.strip_prefix(b"\""))
        .or_else(|| value.strip_prefix(b"'"))
        .or_else(|| value.strip_prefix(b"`"))
        .unwrap_or(value);
    let inner = inner
        .strip_suffix(b"\\\"")
        .or_else(|| inner.strip_suffix(b"\""))
        .or_else(|| inner.strip_suffix(b"'"))
        .or_else(|| inner.strip_suffix(b"`"))
        .unwrap_or(inner);
    let lower = inner.to_ascii_lowercase();
    let quoted = inner.len() != value.len();
    let core = group(caps, "core").to_ascii_lowercase();
    let key = group(caps, "key").to_ascii_lowercase();
    // A comparison names a password only with a literal (`password == "x"`); `password ==
    // None:` compares with a name.
    let sep = group(caps, "sep");
    let compares =
        memchr::memmem::find(sep, b"==").is_some() || memchr::memmem::find(sep, b"!=").is_some();
    if !quoted
        && (compares
            || matches!(next, Some(b'(' | b'['))
            // `password:= [REDACTED]` read again: the `=` is punctuation, not a value.
            || !inner.iter().any(u8::is_ascii_alphanumeric)
            || is_call(inner)
            || is_reference(inner, &core)
            || TYPE_NAMES.contains(&&lower[..])
            || is_code_name(inner, &core)
            || is_object_id(inner))
    {
        // A call (`formData.get(…)`), a type, a variable named after the key.
        return true;
    }
    // A message id that spells its own key (`SECRETS$ADD_SECRET = "SECRETS$ADD_SECRET"`).
    if !key.is_empty()
        && lower.ends_with(&key)
        && (lower.len() == key.len()
            || matches!(
                lower[lower.len() - key.len() - 1],
                b'$' | b'.' | b':' | b'/'
            ))
    {
        return true;
    }
    if is_no_secret(inner) {
        return true;
    }
    core == b"pwd" && (inner.starts_with(b"/") || inner.starts_with(b"~"))
}

/// A value that is plainly no secret, whatever its key: empty, stars, already redacted, a
/// null or boolean, a reference to a variable or a template (`$X`, `%(x)s`, `{{ x }}`), a
/// YAML block scalar's indicator (`|`, `>-`: the value is on the lines after, `redact_next`).
pub(super) fn is_no_secret(inner: &[u8]) -> bool {
    let block = |b: &[u8]| {
        matches!(b.first(), Some(b'|' | b'>'))
            && b.len() <= 3
            && b[1..]
                .iter()
                .all(|c| matches!(c, b'-' | b'+' | b'0'..=b'9'))
    };
    inner.is_empty()
        || block(inner)
        || inner.iter().all(|&b| b == b'*')
        || memchr::memmem::find(inner, MARK.as_bytes()).is_some()
        || matches!(
            &inner.to_ascii_lowercase()[..],
            b"null" | b"none" | b"nil" | b"true" | b"false" | b"undefined" | b"<none>"
        )
        || inner.starts_with(b"$")
        || inner.starts_with(b"%(")
        || inner.starts_with(b"{{")
}

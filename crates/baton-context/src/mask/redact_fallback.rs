//! The last rule: a line that names a secret (`password`, `token`, `-pw`, …) but that no
//! structural rule redacted gives up the first password-like word among the few after the
//! name (`wpa_passphrase home Wp4Phrase`, `rabbitmqctl change_password app R4bbit9`, `consul
//! kv put app/db/password C0nsulKv`). Shapes no rule was written for still lose their secret;
//! a word counts as one only when it looks generated or chosen (mixed case and a digit or a
//! symbol, no path, no identifier, no hash), so tool output keeps its names, hashes and
//! versions (the corpus test holds it to that).

use std::borrow::Cow;

use super::redact_keep::{MARK, NOT_A_CREDENTIAL, NOT_THE_SECRET};

/// What names a secret, lower case: a word inside a name (`db_password`, `ldappasswd`)…
const WORDS: &[&str] = &[
    "passw",
    "passphrase",
    "secret",
    "token",
    "pwd",
    "credential",
    "apikey",
    "api_key",
    "api-key",
    // Kickstart's root password.
    "rootpw",
];
/// …or a flag of its own (`-pw X`, `/pass:X`, `/rp X`).
const FLAGS: &[&str] = &["-pw ", "/pass:", "/p:", "/rp ", " -p ", " -w "];

/// How many words after the name are looked at.
const REACH: usize = 3;

/// Redact the first password-like word after a name of a secret, on each line that holds a
/// name and no redaction yet.
pub(super) fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let lower = text.to_ascii_lowercase();
    // Each line once, at the first name found on it (in the lists' order); a line's start by
    // binary search, so a long text with many names costs no more than its length.
    let newlines: Vec<usize> = memchr::memchr_iter(b'\n', text).collect();
    let line_start = |at: usize| {
        let i = newlines.partition_point(|&n| n < at);
        if i == 0 { 0 } else { newlines[i - 1] + 1 }
    };
    let mut seen = std::collections::BTreeSet::new();
    let mut lines: Vec<(usize, usize, bool)> = Vec::new();
    for name in WORDS.iter().chain(FLAGS) {
        for at in memchr::memmem::find_iter(&lower, name.as_bytes()) {
            let start = line_start(at);
            if seen.contains(&start)
                || not_a_credential(&lower[start..at])
                || names_no_secret(&lower[at + name.len()..])
            {
                continue;
            }
            // A word's name is inside its word, whose rest is skipped; a flag's ends it.
            let flag = FLAGS.contains(name);
            seen.insert(start);
            lines.push((start, at + name.len(), flag));
        }
    }
    // `DB_PASS`, `RootPass`, `admin-pw`, `rootPw`: `pass` or `pw` ending a word after a
    // separator or a camel hump (not `bypass`, `compass`, `passed`).
    for name in ["pass", "pw"] {
        for at in memchr::memmem::find_iter(&lower, name.as_bytes()) {
            let end = at + name.len();
            let word_end = lower.get(end).is_none_or(|b| !b.is_ascii_alphanumeric());
            let joined = at > 0
                && (matches!(text[at - 1], b'_' | b'-' | b'.')
                    || (text[at - 1].is_ascii_lowercase() && text[at].is_ascii_uppercase()));
            let start = line_start(at);
            if word_end && joined && seen.insert(start) {
                lines.push((start, end, false));
            }
        }
    }
    if lines.is_empty() {
        return Cow::Borrowed(text);
    }
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for (start, after, flag) in lines {
        let end = memchr::memchr(b'\n', &text[after..]).map_or(text.len(), |i| after + i);
        let line = &text[start..end];
        if memchr::memmem::find(line, MARK.as_bytes()).is_some() {
            continue;
        }
        if let Some((s, e)) =
            password_after(text, after, end, flag).or_else(|| last_after_colon(text, after, end))
        {
            spans.push((s, e));
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(text);
    }
    spans.sort_unstable();
    spans.dedup();
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for (s, e) in spans {
        if s < at {
            continue;
        }
        out.extend_from_slice(&text[at..s]);
        out.extend_from_slice(MARK.as_bytes());
        at = e;
    }
    out.extend_from_slice(&text[at..]);
    Cow::Owned(out)
}

/// Whether the name's word, up to the name, says it is no credential (`authenticity_token`,
/// `NextToken`, `max_tokens`).
fn not_a_credential(before: &[u8]) -> bool {
    let word_start = before
        .iter()
        .rposition(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')))
        .map_or(0, |i| i + 1);
    let word = &before[word_start..];
    let word = word
        .strip_suffix(b"_")
        .or_else(|| word.strip_suffix(b"-"))
        .unwrap_or(word);
    NOT_A_CREDENTIAL.iter().any(|w| word.ends_with(w))
}

/// Whether the name's word goes on to say what it names is not the secret (`credentialId`,
/// `TOKEN_FILE`, `secret_name`).
fn names_no_secret(after: &[u8]) -> bool {
    let end = after
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-'))
        .unwrap_or(after.len());
    let rest: Vec<u8> = after[..end]
        .iter()
        .copied()
        .filter(u8::is_ascii_alphanumeric)
        .collect();
    let rest = rest.strip_prefix(b"s").unwrap_or(&rest);
    // `passw` is a name inside `password`: its own word's end first.
    let rest = rest.strip_prefix(b"ord").unwrap_or(rest);
    NOT_THE_SECRET.contains(&rest)
}

/// A line that says what it gives last (`A temporary password is generated for
/// root@localhost: X`): its last word after `: `, when that is password-like.
fn last_after_colon(text: &[u8], from: usize, end: usize) -> Option<(usize, usize)> {
    let colon = memchr::memmem::rfind(&text[from..end], b": ")? + from;
    let s = colon
        + 2
        + text[colon + 2..end]
            .iter()
            .take_while(|b| **b == b' ')
            .count();
    let e = s + text[s..end]
        .iter()
        .take_while(|b| !b.is_ascii_whitespace())
        .count();
    let rest_blank = text[e..end].iter().all(u8::is_ascii_whitespace);
    (e > s && rest_blank && looks_like_password(&text[s..e])).then_some((s, e))
}

/// Ends a word: space, quotes, brackets, `=`, `,`, `;`, and `:` before a space or the end.
fn ends_word(text: &[u8], i: usize, end: usize) -> bool {
    match text[i] {
        b' ' | b'\t' | b'\r' | b'"' | b'\'' | b'`' | b'(' | b')' | b'[' | b']' | b'{' | b'}'
        | b'<' | b'>' | b'=' | b',' | b';' => true,
        b':' => i + 1 >= end || matches!(text[i + 1], b' ' | b'\t' | b'"' | b'\''),
        _ => false,
    }
}

/// The first password-like word among the `REACH` words after the name (the rest of the
/// name's own word skipped, unless the name is a flag that ends its word).
fn password_after(text: &[u8], from: usize, end: usize, flag: bool) -> Option<(usize, usize)> {
    let mut i = from;
    while !flag && i < end && !ends_word(text, i, end) {
        i += 1;
    }
    // A word that ends in its name (`password`, `/config/db/password`, `--token`) is a key:
    // the word right after it is its value when it merely holds a digit (`etcd-pw-551`).
    let rest = text[from..i].to_ascii_lowercase();
    // (`…Secrets`, a plural, names a collection.)
    let key = !flag && matches!(&rest[..], b"" | b"d" | b"ord");
    // A flag's value is the one word after it.
    let reach = if flag { 1 } else { REACH };
    let mut seen = 0;
    while i < end && seen < reach {
        while i < end && ends_word(text, i, end) {
            i += 1;
        }
        let s = i;
        while i < end && !ends_word(text, i, end) {
            i += 1;
        }
        if s == i {
            break;
        }
        seen += 1;
        let word = &text[s..i];
        // A call (`getToken2(`) or a member (`x.Token2`) is code.
        let called = text.get(i) == Some(&b'(');
        if !called && (looks_like_password(word) || (key && seen == 1 && looks_like_value(word))) {
            return Some((s, i));
        }
    }
    None
}

/// A key's value that merely holds letters and a digit (`etcd-pw-551`), none of what
/// [`looks_like_password`] rules out, and no snake_case name (`expires_in3600`).
fn looks_like_value(w: &[u8]) -> bool {
    let letters = w.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let snake = w.contains(&b'_')
        && w.iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    (6..=128).contains(&w.len())
        && letters >= 2
        && w.iter().any(u8::is_ascii_digit)
        && !snake
        && !ruled_out(w)
}

/// Mixed case and a digit or symbol (or letters, digits and a symbol), 6 to 128 chars; not a
/// flag, variable, path, URL, hash, identifier, file name or a name of the secret itself.
fn looks_like_password(w: &[u8]) -> bool {
    if !(6..=128).contains(&w.len()) {
        return false;
    }
    let symbol = |b: &u8| b"!#$%^&*+?@".contains(b);
    let upper = w.iter().any(u8::is_ascii_uppercase);
    let lower = w.iter().any(u8::is_ascii_lowercase);
    let digit = w.iter().any(u8::is_ascii_digit);
    let sym = w.iter().any(symbol);
    let letters = w.iter().filter(|b| b.is_ascii_alphabetic()).count();
    let mixed = (upper && lower && (digit || sym)) || (sym && digit && letters > 0);
    if !mixed || letters < 2 {
        return false;
    }
    !ruled_out(w)
}

/// A flag, variable, path, URL, hash, file name, dotted name, address or name of the secret.
fn ruled_out(w: &[u8]) -> bool {
    if matches!(
        w[0],
        b'-' | b'$' | b'%' | b'{' | b'@' | b'#' | b'&' | b'*' | b'.' | b'/' | b'\\' | b'~'
    ) {
        return true;
    }
    let lw = w.to_ascii_lowercase();
    // A hash or id, maybe behind its algorithm (`sha256:9f86…`).
    let tail = w.rsplit(|&b| b == b':').next().unwrap_or(w);
    let hex = w.iter().all(|b| b.is_ascii_hexdigit() || *b == b'-')
        || (tail.len() >= 7 && tail.len() < w.len() && tail.iter().all(u8::is_ascii_hexdigit));
    let path = w.contains(&b'/') || w.contains(&b'\\') || memchr::memmem::find(w, b"..").is_some();
    // `TokenService.java`, `Service.notify:4869`, `android.os.BinderProxy@2bd79ce`: a dotted
    // name (a file, a frame, an object), not a password.
    let dotted = w.contains(&b'.')
        && w.iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'$' | b':' | b'@'));
    // `getToken2`, `OAuth2Token`: named after the secret.
    let named = WORDS
        .iter()
        .any(|n| memchr::memmem::find(&lw, n.as_bytes()).is_some());
    // `user@example.com`: an address.
    let address = w
        .iter()
        .position(|&b| b == b'@')
        .is_some_and(|at| w[at..].contains(&b'.'));
    hex || path || dotted || named || address
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(t: &str) -> String {
        String::from_utf8(redact(t.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn a_password_like_word_after_a_name_is_redacted() {
        let cases = [
            ("wpa_passphrase HomeNet Wp4Phrase!", "Wp4Phrase!"),
            ("rabbitmqctl change_password app R4bbitCh9", "R4bbitCh9"),
            ("consul kv put app/db/password C0nsulKv", "C0nsulKv"),
            ("plink -pw Pl1nkPw9 admin@host", "Pl1nkPw9"),
            ("cmdkey /add:srv /user:bob /pass:Cmdk3y9", "Cmdk3y9"),
            ("ldappasswd -x -s NewLdap9 uid=bob", "NewLdap9"),
            ("SetEnv SMTP_PASS SmtpEnv-99x", "SmtpEnv-99x"),
            ("AdminPass: adm1nPass-x", "adm1nPass-x"),
            ("rootpw --plaintext Ks9Root-1", "Ks9Root-1"),
            (
                "[Note] A temporary password was made for root@localhost: t3mp#Pw",
                "t3mp#Pw",
            ),
        ];
        for (line, secret) in cases {
            let out = r(line);
            assert!(!out.contains(secret), "{line} -> {out}");
            assert!(out.contains(MARK), "{out}");
        }
        // Only that word; the line's other words stay.
        assert_eq!(
            r("wpa_passphrase HomeNet Wp4Phrase!"),
            "wpa_passphrase HomeNet [REDACTED]"
        );
    }

    #[test]
    fn names_hashes_versions_and_code_after_a_name_are_kept() {
        let cases = [
            "test auth::token::tests::expires_after_3600s ... ok",
            "--- FAIL: TestTokenRefresh2 (0.00s)",
            "Compiling secret-service v3.0.1",
            "at com.example.TokenService.refresh(TokenService.java:42)",
            "const token = getToken2(req);",
            "token: OAuth2Token",
            "password_reset.spec.ts:42:7",
            "Using token from GITHUB_TOKEN (expires 2024-01-01T00:00:00Z)",
            "secret sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b",
            "the token was sent to bob@example.com by Mailer2",
            "password = [REDACTED] and Other9Word",
            "token via oauth2 flow",
            "see docs/Secrets2.md",
            "compass: North2 heading",
            "bypass: cache2 layer",
            "The password was reset at: 10:42:07",
            "  keyVaultToStoreSecrets: cmp2-qat-1208358310",
            "Bad activity token: android.os.BinderProxy@2bd79ce",
            "\"credentialId\": \"B9mTcFSck2LzJO2S3ols63\",",
            "PASSWORD_FILE Secr3tFileName",
            "AppWindowToken.notifyAppStopped:400 com.android.Service.notifyStopped:4869 x",
        ];
        for line in cases {
            assert_eq!(r(line), line, "{line}");
        }
    }
}

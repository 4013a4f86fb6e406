//! Secret redaction for everything `baton mask` prints (passthrough text and summaries), and
//! for the scratch file with `--redact-scratch` ([`RedactWriter`]). By default scratch files
//! keep the raw bytes; they are 0600 under the gitignored `.baton/`.
//!
//! Works on bytes so non-UTF-8 output is preserved byte for byte where no secret is. Every rule
//! stays within one line, so text can be redacted line by line as it streams; PEM private key
//! blocks and values on the lines after their key (`redact_next`) are tracked by a line state.

use std::borrow::Cow;
use std::io::Write;

pub use super::redact_keep::MARK;
use super::redact_next::{self, Pending};
use super::redact_rules::{apply, candidates};
use super::{redact_fallback, redact_providers};

/// Apply every rule that may match to text that holds no multi-line private key: the
/// structural rules first, then the providers' (gitleaks' set), then the last rule's
/// password-like word after a name (`redact_fallback`).
fn redact_lines(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Cow<'_, [u8]> = Cow::Borrowed(text);
    for rule in candidates(text) {
        if let Cow::Owned(o) = apply(rule, &out) {
            out = Cow::Owned(o);
        }
    }
    if let Cow::Owned(o) = redact_providers::redact(&out) {
        out = Cow::Owned(o);
    }
    if let Cow::Owned(o) = redact_fallback::redact(&out) {
        out = Cow::Owned(o);
    }
    out
}

/// `-----BEGIN … PRIVATE KEY-----` (PEM) or `… PRIVATE KEY BLOCK-----` (PGP).
fn is_pem_begin(line: &[u8]) -> bool {
    memchr::memmem::find(line, b"-----BEGIN").is_some()
        && memchr::memmem::find(line, b"PRIVATE KEY").is_some()
}

fn pem_end(line: &[u8]) -> Option<usize> {
    let at = memchr::memmem::find(line, b"-----END")?;
    let rest = &line[at..];
    let key = memchr::memmem::find(rest, b"PRIVATE KEY")?;
    let dashes = memchr::memmem::find(&rest[key..], b"-----")?;
    Some(at + key + dashes + b"-----".len())
}

/// Line-by-line redaction with the state a multi-line secret needs: a private key's block, a
/// value on the lines after its key (`redact_next`). Each input line gives exactly one output
/// line (a key's body lines become `[REDACTED]`), so line numbers in a summary still point at
/// the right line of a redacted scratch file.
#[derive(Debug, Default, Clone)]
pub struct Redactor {
    in_pem: bool,
    pending: Option<Pending>,
}

impl Redactor {
    /// Inside a private key block (its BEGIN line seen, its END line not yet).
    pub fn in_key(&self) -> bool {
        self.in_pem
    }

    /// Redact complete lines (`block` ends with `\n`, or is the end of the text) into `out`.
    /// Runs of lines that hold no state and start none are redacted at once (the common
    /// case: the whole block); the others line by line.
    pub fn lines(&mut self, block: &[u8], out: &mut Vec<u8>) {
        let mut rest = block;
        while !rest.is_empty() {
            if !self.in_pem && self.pending.is_none() {
                let quiet = quiet_lines(rest);
                if quiet > 0 {
                    out.extend_from_slice(&redact_lines(&rest[..quiet]));
                    rest = &rest[quiet..];
                    continue;
                }
            }
            let n = memchr::memchr(b'\n', rest).map_or(rest.len(), |i| i + 1);
            self.line(&rest[..n], out);
            rest = &rest[n..];
        }
    }

    /// One line (with its newline, if it has one) through the state.
    fn line(&mut self, line: &[u8], out: &mut Vec<u8>) {
        let (body, nl) = match line.strip_suffix(b"\n") {
            Some(b) => (b, &b"\n"[..]),
            None => (line, &b""[..]),
        };
        if self.in_pem {
            match pem_end(body) {
                Some(end) => {
                    self.in_pem = false;
                    let mut l = MARK.as_bytes().to_vec();
                    l.extend_from_slice(&redact_lines(&body[end..]));
                    // What follows the key's END may open a value like any line (a `.netrc`
                    // entry opened before the key goes on).
                    self.pending = redact_next::opens(&l).or(self.pending);
                    out.extend_from_slice(&l);
                }
                None => out.extend_from_slice(MARK.as_bytes()),
            }
            out.extend_from_slice(nl);
            return;
        }
        if let Some((taken, next)) = self.pending.and_then(|p| redact_next::follow(p, body)) {
            self.pending = next;
            // A `.netrc` entry's other lines are ordinary lines too.
            out.extend_from_slice(&redact_lines(&taken));
            out.extend_from_slice(nl);
            return;
        }
        // The one-line rule removes a block that ends on this line, or the rest of the line
        // from BEGIN on.
        self.in_pem = is_pem_begin(body) && pem_end(body).is_none();
        let redacted = redact_lines(body);
        // A key's BEGIN line opens what it would open whole (`machine h -----BEGIN …`), so
        // redacting twice gives what redacting once did.
        self.pending = redact_next::opens(&redacted);
        out.extend_from_slice(&redacted);
        out.extend_from_slice(nl);
    }
}

/// The length of the whole lines at the start of `text` that neither begin a private key nor
/// could leave a value for the next line.
fn quiet_lines(text: &[u8]) -> usize {
    let mut at = 0;
    while at < text.len() {
        let end = memchr::memchr(b'\n', &text[at..]).map_or(text.len(), |i| at + i + 1);
        let line = &text[at..end];
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        if memchr::memmem::find(body, b"PRIVATE KEY").is_some() || redact_next::may_open(body) {
            break;
        }
        at = end;
    }
    at
}

/// Replace every secret in `text`.
pub fn redact_bytes(text: &[u8]) -> Cow<'_, [u8]> {
    // Nothing any one-line rule matches, and no line that starts a multi-line secret.
    if quiet_lines(text) == text.len() && !candidates(text).any(|r| r.re().is_match(text)) {
        // The providers' rules and the last one hold no state from line to line.
        return match redact_providers::redact(text) {
            Cow::Borrowed(_) => redact_fallback::redact(text),
            Cow::Owned(o) => Cow::Owned(redact_fallback::redact(&o).into_owned()),
        };
    }
    let mut out = Vec::with_capacity(text.len());
    Redactor::default().lines(text, &mut out);
    if out == text {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(out)
    }
}

/// Line carry of [`RedactWriter`]: a longer line is redacted and written in pieces, keeping
/// `OVERLAP` bytes back so a secret cut by a piece boundary is still seen whole.
const MAX_CARRY: usize = 64 * 1024;
const OVERLAP: usize = 4 * 1024;

/// A streaming filter: bytes in, the same bytes with secrets redacted out, line by line.
/// Memory is bounded by the line carry (≤ 64 KB plus one write).
pub struct RedactWriter<W: Write> {
    inner: W,
    redactor: Redactor,
    carry: Vec<u8>,
    out: Vec<u8>,
}

impl<W: Write> RedactWriter<W> {
    pub fn new(inner: W) -> RedactWriter<W> {
        RedactWriter {
            inner,
            redactor: Redactor::default(),
            carry: Vec::new(),
            out: Vec::new(),
        }
    }

    /// Write out what is pending (the last line, even without its newline) and hand back the
    /// inner writer.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.flush_carry()?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    fn flush_carry(&mut self) -> std::io::Result<()> {
        if self.carry.is_empty() {
            return Ok(());
        }
        self.out.clear();
        self.redactor.lines(&self.carry, &mut self.out);
        self.carry.clear();
        self.inner.write_all(&self.out)
    }

    fn write_block(&mut self, block: &[u8]) -> std::io::Result<()> {
        self.out.clear();
        self.redactor.lines(block, &mut self.out);
        self.inner.write_all(&self.out)
    }
}

impl<W: Write> Write for RedactWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match memchr::memrchr(b'\n', buf) {
            Some(last) => {
                if self.carry.is_empty() {
                    self.write_block(&buf[..=last])?;
                } else {
                    let mut block = std::mem::take(&mut self.carry);
                    block.extend_from_slice(&buf[..=last]);
                    self.write_block(&block)?;
                    block.clear();
                    self.carry = block;
                }
                self.carry.extend_from_slice(&buf[last + 1..]);
            }
            None => self.carry.extend_from_slice(buf),
        }
        if self.carry.len() > MAX_CARRY {
            // A huge line: redact what there is, write all but the last OVERLAP bytes of the
            // result (cut at a space when there is one) and keep those for the next write.
            self.out.clear();
            let mut probe = self.redactor.clone();
            probe.lines(&self.carry, &mut self.out);
            let mut cut = self.out.len().saturating_sub(OVERLAP);
            if let Some(sp) = self.out[..cut]
                .iter()
                .rposition(|&b| b == b' ' || b == b'\t')
                .filter(|&sp| sp + 2 * OVERLAP > cut)
            {
                cut = sp + 1;
            }
            self.inner.write_all(&self.out[..cut])?;
            self.carry.clear();
            self.carry.extend_from_slice(&self.out[cut..]);
            self.redactor = probe;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
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

/// An array of one-line strings (a summary's head or tail) is redacted as the lines of one
/// text, so a secret spread over lines (a `.netrc` entry, a value on the line after its key)
/// is seen as it was in the output; any other array element by element.
fn redact_array(a: &mut [serde_json::Value]) {
    if !redact_lines_of(a) {
        a.iter_mut().for_each(redact_json);
    }
}

/// [`redact_array`]'s lines; false (nothing done) for an array that is not one-line strings.
fn redact_lines_of(a: &mut [serde_json::Value]) -> bool {
    let mut text = String::new();
    for (i, v) in a.iter().enumerate() {
        match v.as_str() {
            Some(s) if !s.contains('\n') => {
                if i > 0 {
                    text.push('\n');
                }
                text.push_str(s);
            }
            _ => return false,
        }
    }
    if a.len() < 2 {
        return false;
    }
    if let Cow::Owned(r) = redact(&text) {
        let lines: Vec<&str> = r.split('\n').collect();
        if lines.len() != a.len() {
            return false;
        }
        for (v, l) in a.iter_mut().zip(lines) {
            *v = serde_json::Value::String(l.to_string());
        }
    }
    true
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
        serde_json::Value::Array(a) => redact_array(a),
        serde_json::Value::Object(o) => o.values_mut().for_each(redact_json),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A variable named after its key is the key's whole last word (`API_TOKEN = token`),
    /// not any tail of it: `password = word` is a password.
    #[test]
    fn only_the_keys_last_word_is_taken_for_a_variable() {
        assert_eq!(redact("API_TOKEN = token"), "API_TOKEN = token");
        assert_eq!(redact("password = word"), "password = [REDACTED]");
        assert_eq!(redact("api_token = ken"), "api_token = [REDACTED]");
    }

    #[test]
    fn a_value_on_the_next_line_is_redacted_alone_and_streamed_alike() {
        for text in [
            "<password>\n  hunter2alone\n</password>\n",
            "password:\n  hunter2alone",
            "machine h\n  password hunter2alone\n",
        ] {
            let whole = redact(text);
            assert!(!whole.contains("hunter2alone"), "{text:?} -> {whole:?}");
            let mut w = RedactWriter::new(Vec::new());
            for c in text.as_bytes().chunks(3) {
                w.write_all(c).unwrap();
            }
            assert_eq!(w.finish().unwrap(), whole.as_bytes());
        }
    }

    #[test]
    fn a_text_is_searched_only_by_the_rules_whose_anchors_it_holds() {
        let n = |t: &str| candidates(t.as_bytes()).count();
        // A test log's "passed" is no key word; "password" is one of the query, `.env`,
        // key/value, XML element, call-argument, name/value, prose, fetchmail, appSettings,
        // Gradle, SQL, camelCase flag, string constructor, `#define`, fallback literal, plan
        // change, YAML anchor, COBOL data item, a tool's `set NAME X`, a directive's value, a
        // literal piped into a password prompt, typed constant, placeholder default and
        // recovery password rules, "--password" the argv flag, keychain and `_pass` key rules
        // too; none of the providers'.
        assert_eq!(n("test result: ok. 3 passed; 0 failed"), 0);
        assert_eq!(n("password"), 24);
        assert_eq!(n("--password"), 28);
        // A long text is searched by the automaton, with the same answer.
        let long = format!("{} GHP_", "x".repeat(5000));
        assert_eq!(n(&long), 1);
        assert_eq!(n(&format!("{long} Bearer")), 2);
    }

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
            ("API_KEY = \"a b c\"", "API_KEY = \"[REDACTED]\""),
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
        let b = b"\xff\xfe SECRET=xy \xff";
        assert_eq!(&*redact_bytes(b), b"\xff\xfe SECRET=[REDACTED] \xff");
    }

    #[test]
    fn a_summarys_lines_are_redacted_as_one_text() {
        let mut v = serde_json::json!({"head": ["machine h", "  login me", "  password p4ssNetrc9"],
            "tail": ["password:", "  nextLine8"]});
        redact_json(&mut v);
        let s = v.to_string();
        assert!(!s.contains("p4ssNetrc9") && !s.contains("nextLine8"), "{s}");
        assert_eq!(v["head"][0], "machine h");
        assert_eq!(v["head"].as_array().unwrap().len(), 3);
    }

    #[test]
    fn json_strings_are_redacted() {
        let mut v = serde_json::json!({"a": ["sk-abcdefghijklmnopqrstu"], "b": {"c": "TOKEN=12"}});
        redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": ["[REDACTED]"], "b": {"c": "TOKEN=[REDACTED]"}})
        );
    }

    include!("redact_cases.rs");

    /// The labelled set: every secret redacted (recall), no look-alike touched (precision).
    #[test]
    fn every_spelling_of_a_secret_is_redacted() {
        assert!(SECRETS.len() >= 100);
        let missed: Vec<String> = SECRETS
            .iter()
            .map(|(line, secret)| (line, secret, redact(line)))
            .filter(|(_, secret, r)| r.contains(**secret) || !r.contains(MARK))
            .map(|(line, _, r)| format!("{line} -> {r}"))
            .collect();
        assert!(
            missed.is_empty(),
            "{} missed:\n{}",
            missed.len(),
            missed.join("\n")
        );
    }

    #[test]
    fn look_alikes_survive() {
        assert!(LOOK_ALIKES.len() >= 50);
        let hidden: Vec<String> = LOOK_ALIKES
            .iter()
            .filter(|l| redact(l) != **l)
            .map(|l| format!("{l} -> {}", redact(l)))
            .collect();
        assert!(
            hidden.is_empty(),
            "{} changed:\n{}",
            hidden.len(),
            hidden.join("\n")
        );
    }

    #[test]
    fn urls_keep_scheme_user_and_host() {
        assert_eq!(
            redact("postgres://user:pass@host/db"),
            "postgres://user:[REDACTED]@host/db"
        );
    }

    #[test]
    fn json_keeps_its_shape() {
        assert_eq!(
            redact(r#"{"password": "x1", "user": "bob"}"#),
            r#"{"password": "[REDACTED]", "user": "bob"}"#
        );
    }

    #[test]
    fn the_writer_gives_the_same_bytes_however_it_is_fed() {
        let mut text = Vec::new();
        for (line, _) in SECRETS {
            text.extend_from_slice(line.as_bytes());
            text.extend_from_slice(
                b"\nplain line\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n",
            );
            text.extend_from_slice(b"-----END RSA PRIVATE KEY----- tail password=p1\n");
            text.extend_from_slice(
                b"<password>\n  nextLineXml9\n</password>\ntoken: |\n  blockLine7\n",
            );
        }
        text.extend_from_slice(b"no newline password=last1");
        let whole = redact_bytes(&text).into_owned();
        for size in [1, 2, 7, 64, 1000, text.len()] {
            let mut w = RedactWriter::new(Vec::new());
            for c in text.chunks(size) {
                w.write_all(c).unwrap();
            }
            let got = w.finish().unwrap();
            assert_eq!(got, whole, "chunk {size}");
        }
        let s = String::from_utf8_lossy(&whole);
        assert!(
            !s.contains("MIIEow") && !s.contains("p1") && !s.contains("last1"),
            "{s}"
        );
        assert!(
            !s.contains("nextLineXml9") && !s.contains("blockLine7"),
            "{s}"
        );
        let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
        assert_eq!(lines(&whole), lines(&text));
    }

    #[test]
    fn the_writer_bounds_a_huge_line_and_still_redacts_it() {
        let mut line = vec![b'a'; 200 * 1024];
        line.extend_from_slice(b" password=hidden9 ");
        line.extend_from_slice(&vec![b'b'; 200 * 1024]);
        line.push(b'\n');
        let mut w = RedactWriter::new(Vec::new());
        for c in line.chunks(100_000) {
            w.write_all(c).unwrap();
            assert!(w.carry.len() <= MAX_CARRY + 100_000);
        }
        let got = w.finish().unwrap();
        assert!(memchr::memmem::find(&got, b"hidden9").is_none());
        assert_eq!(got.len(), line.len() - "hidden9".len() + MARK.len());
    }
}

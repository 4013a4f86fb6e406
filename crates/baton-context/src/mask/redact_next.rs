//! Secrets whose value is on the lines after their key: an XML element opened at the end of
//! its line (`<password>` / `hunter2` / `</password>`), a key with nothing after its
//! separator (`password:` then the value, pretty-printed JSON or YAML), a YAML block scalar
//! (`private_key: |` and its indented lines), a `.netrc` entry spread over lines
//! (`machine host` / `login me` / `password X`), a Terraform variable named after a secret
//! (its `default = "…"`), and a generated password on the line after the sentence that
//! announces it. The one-line rules (`redact_rules`) never see
//! these: [`Pending`] is the state a line leaves for the next, kept by `redact::Redactor`.

use std::sync::LazyLock;

use regex::bytes::Regex;

use super::redact_keep::{MARK, is_no_secret};
use super::redact_rules::{KEY_CORE, KEY_WORDS};

/// What a line that names a secret but holds no value leaves for the lines after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pending {
    /// `<password>` closing its line: the next line that is not blank, up to `</`.
    Element,
    /// `password:`, `"password":`, `password =` with nothing after: the next line that is not
    /// blank, when it is one value (a word or a quoted string, a comma after it).
    NextLine,
    /// `password: |` (a YAML block scalar): every line indented deeper than the key.
    Block { indent: usize },
    /// A `.netrc` entry (`machine host` or `default`): its `password X` lines, to a blank line.
    Netrc,
    /// A Terraform variable named after a secret (`variable "okta_api_token" {`): its
    /// `default = "…"`, to the block's closing `}`.
    Variable,
    /// A sentence that announces a password (`Please use the following password to
    /// proceed:`): the next line that is not blank, when it is one random-looking word.
    Prompt,
    /// A name that is a secret's in a list of names and values (Kubernetes' `- name:
    /// DB_PASSWORD`, and the other spellings of [`NAME_ENTRY`]): the value on the next line
    /// that is not blank.
    NameValue,
    /// A here-document given to a secret (`password = <<EOF`): every line up to its tag.
    Heredoc { tag: [u8; 16], len: u8 },
    /// A REPL's input that reads a secret (`>>> settings.PASSWORD`, `irb> ENV["TOKEN"]`): the
    /// quoted result on the next line that is not blank (`=> "X"`, `'X'`, `Out[3]: 'X'`).
    Result,
    /// An `expect` script waiting for a password prompt (`expect "Password:"`, pexpect's
    /// `child.expect('Passphrase')`): the string its next `send` gives.
    Send,
    /// A table whose header names a secret's column (`ID  Description  Token`,
    /// `id,email,password`, `| user | token |`): that column's field in each row, to a blank
    /// line or a row that does not line up. `at` is the column's byte offset when the header
    /// is aligned with spaces, else its field's index; a row of a comma- or pipe-separated
    /// table has the header's `fields`.
    Column { at: u16, sep: Sep, fields: u8 },
    /// A block named for the secrets it holds (Consul's `tokens {`, `secrets {`,
    /// `credentials = {`): each `name = "value"` in it, to its closing `}`.
    Secrets,
    /// A mapping under a key named after a secret (CloudFormation's `DBPassword:` / `Type:
    /// String` / `Default: X`): its `Default:` or `Value:`, to a line indented less or not an
    /// entry.
    Mapping { indent: usize },
    /// SMTP's AUTH LOGIN asking for the password (`334 UGFzc3dvcmQ6`, base64 of
    /// "Password:"): the client's next line, a base64 word.
    AuthLogin,
    /// A key block that is not a PEM private key (`-----BEGIN OpenVPN Static key V1-----`):
    /// every line up to its `-----END`.
    KeyBlock,
}

static ELEMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i-u)<[a-z0-9_.:-]*?{KEY_CORE}[a-z0-9_.:-]*(?:[ \t][^<>]*)?>[ \t\r]*$"
    ))
    .expect("element regex")
});
static BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i-u)^([ \t]*)(?:- )?["']?[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*["']?[ \t]*:[ \t]*(?:![a-z0-9!_./-]*[ \t]+)?[|>][-+0-9]*[ \t\r]*$"#
    ))
    .expect("block regex")
});
static BARE_KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i-u)^[ \t]*(?:- )?["']?[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*["']?[ \t]*(?::|=|=>)[ \t\r]*$"#
    ))
    .expect("key regex")
});
static VARIABLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i-u)^[ \t]*variable[ \t]+"[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*"[ \t]*\{{[ \t\r]*$"#
    ))
    .expect("variable regex")
});
static DEFAULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u)^[ \t]*default[ \t]*=[ \t]*"([^"\n]*)""#).expect("default regex")
});
static PROMPT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\b(?:password|passphrase|token|secret)\b[^\n]*[ \t][^\n]*:[ \t\r]*$")
        .expect("prompt regex")
});
/// A secret's name in a list of names and values, in YAML, JSON or `key=value` (Kubernetes'
/// `- name: DB_PASSWORD`, CloudFormation's `ParameterKey: DbPassword`, `"Name": "API_TOKEN",`),
/// an XML element (Hadoop's `<name>fs.s3a.secret.key</name>`, JMeter's `<stringProp
/// name="Argument.name">password</stringProp>`) or a numbered reply (Redis' `CONFIG GET`:
/// `1) "requirepass"`).
static NAME_ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i-u)^[ \t]*(?:(?:- |\[?\{{[ \t]*)?["']?[a-z0-9_.]*(?:name|key)["']?[ \t]*[:=][ \t]*["']?[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*["']?,?|<[a-z0-9_:.-]+(?:[ \t][^<>]*)?>[ \t]*[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*[ \t]*</[a-z0-9_:.-]+>|[0-9]+\)[ \t]+"(?:[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*|requirepass|masterauth)")[ \t\r]*$"#
    ))
    .expect("name regex")
});
/// The value beside such a name, in the same spellings (`value:`, `ParameterValue:`,
/// `<value>…</value>`, `<stringProp name="Argument.value">…</stringProp>`, a property list's
/// `<string>…</string>` after its `<key>`, `2) "…"`).
static NAMED_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)^[ \t]*(?:["']?[a-z0-9_.]*value["']?[ \t]*[:=][ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'#][^\n]*?))[ \t\r,}\]]*$|<(?:[a-z0-9_:.-]*(?:value[a-z0-9_:.-]*|[ \t][^<>]*value[^<>]*)|string|data)>([^<\n]*)</|[0-9]+\)[ \t]+"([^"\n]*)"[ \t\r]*$)"#)
        .expect("value regex")
});
static HEREDOC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?i-u)[a-z0-9_.-]*?{KEY_CORE}[a-z0-9_.-]*["']?[ \t]*(?:=|:|=>)?[ \t]*<<[-~]?["']?([A-Za-z_][A-Za-z0-9_]{{0,15}})["']?[ \t\r]*$"#
    ))
    .expect("heredoc regex")
});
/// A sentence that says a secret was just made (`Password for the [elastic] user successfully
/// reset.`): the next line may print it.
static ANNOUNCED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\b(?:password|passphrase|token|secret)\b[^\n]*\b(?:reset|generated|regenerated|created|changed)\b")
        .expect("announced regex")
});
/// What prints a made secret on the line after its announcement: `New value: X`.
static LABELLED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)^[ \t]*(?:(?:new|generated|temporary|initial)[ \t]+)?(?:value|password|passphrase|secret|token)[ \t]*[:=][ \t]*(\S+)[ \t\r]*$")
        .expect("labelled regex")
});
static SECRETS_BLOCK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?i-u)^[ \t]*(?:tokens|secrets|credentials|passwords)[ \t]*(?:=[ \t]*)?\{[ \t\r]*$",
    )
    .expect("secrets block regex")
});
/// A mapping's entry, `Type: String`.
static MAPPING_ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u)^[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*:[ \t]*\S").expect("mapping regex")
});
/// A mapping's default or value: `Default: X`.
static MAPPING_DEFAULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?i-u)^[ \t]*(?:default|default_?value|value)[ \t]*:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'#][^\n#]*?))[ \t\r]*$"#)
        .expect("mapping default regex")
});
/// One entry of such a block: `name = "value"`, `name: value`.
static ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u)^[ \t]*["']?[A-Za-z0-9_.-]+["']?[ \t]*[=:][ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'#{\[,]+))[ \t]*,?[ \t\r]*$"#)
        .expect("entry regex")
});
static PROMPTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u)^[ \t]*(?:>>>?|In \[[0-9]+\]:|[A-Za-z0-9_()\[\]:.-]*>)[ \t]")
        .expect("prompt regex")
});
static RESULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u)^[ \t]*(?:=>|Out\[[0-9]+\]:|\$[0-9]+ ==>|res[0-9]+: [A-Za-z.]+ =)?[ \t]*(?:\\?"([^"\\\n]*)\\?"|'([^'\n]*)')[ \t\r]*$"#)
        .expect("result regex")
});
static EXPECT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)\bexpect\b[^\n]*(?:assw|passphrase|passcode|token|secret)")
        .expect("expect regex")
});
static SEND: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"(?-u)^[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*\.)?(?:send|sendline|exp_send)[ \t(]+(?:-- )?["']([^"'\n]*?)(?:\\r|\\n)?["']"#)
        .expect("send regex")
});
/// A command that prints a secret alone on the next line (`gcloud auth print-access-token`,
/// `aws ecr get-login-password`, `heroku auth:token`, `gh auth token`, `kubectl create
/// token`, `gcloud secrets versions access`).
static PRINTS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i-u)(?:\bprint-(?:access|identity)-token|\bget-login-password|\bauth[ \t:]token|\bcreate[ \t]+token|\bprint[ \t]+token|\bversions[ \t]+access)\b[^\n|>]*$")
        .expect("prints regex")
});
/// A secret's column name in a table's header.
const COLUMN_NAMES: &[&[u8]] = &[
    b"token",
    b"password",
    b"passphrase",
    b"secret",
    b"secret key",
    b"secret_key",
    b"secretaccesskey",
    b"secret access key",
    b"api key",
    b"api_key",
    b"apikey",
    b"access token",
    b"access_token",
];
static NETRC_PASSWORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u)^([ \t]*(?:password|passwd)[ \t]+)(\S+)").expect("netrc regex")
});

fn trim_end(b: &[u8]) -> &[u8] {
    let n = b
        .iter()
        .rposition(|c| !matches!(c, b' ' | b'\t' | b'\r'))
        .map_or(0, |i| i + 1);
    &b[..n]
}

fn indent(b: &[u8]) -> usize {
    b.iter().take_while(|c| matches!(c, b' ' | b'\t')).count()
}

fn is_blank(b: &[u8]) -> bool {
    trim_end(b).is_empty()
}

/// How a table's columns are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sep {
    /// Runs of two spaces or more (one space joins a column's words), or tabs among them.
    Aligned,
    Tab,
    /// CSV: commas outside double quotes.
    Comma,
    /// A Markdown table: `|` between fields, and around them.
    Pipe,
}

impl Sep {
    /// The separator a header line uses, the strongest first.
    fn of(t: &[u8]) -> Sep {
        if t.starts_with(b"|") && t.ends_with(b"|") {
            Sep::Pipe
        } else if memchr::memchr(b'\t', t).is_some() {
            Sep::Tab
        } else if memchr::memchr(b',', t).is_some() && memchr::memmem::find(t, b"  ").is_none() {
            Sep::Comma
        } else {
            Sep::Aligned
        }
    }
}

/// A table row's fields, as `(start, end)` without the spaces around them (nor a field's
/// double quotes, in CSV): split on each tab, comma or pipe (an empty field counts), or
/// on runs of two spaces or more.
fn columns(t: &[u8], sep: Sep) -> Vec<(usize, usize)> {
    let field = |s: usize, e: usize| {
        let f = &t[s..e];
        let lead = indent(f);
        let (s, e) = (s + lead, s + trim_end(f).len().max(lead));
        match sep {
            Sep::Comma if e - s >= 2 && t[s] == b'"' && t[e - 1] == b'"' => (s + 1, e - 1),
            _ => (s, e),
        }
    };
    // Fields between each `byte` of `t[from..to]`.
    let split = |from: usize, to: usize, byte: u8| {
        let mut start = from;
        let ends = memchr::memchr_iter(byte, &t[from..to]).map(|i| from + i);
        ends.chain(std::iter::once(to))
            .map(|end| {
                let f = field(start, end);
                start = end + 1;
                f
            })
            .collect()
    };
    let mut out = Vec::new();
    match sep {
        Sep::Tab => split(0, t.len(), b'\t'),
        // Inside the pipes around the row.
        Sep::Pipe => {
            let from = usize::from(t.first() == Some(&b'|'));
            let to = t.len() - usize::from(t.len() > from && t.last() == Some(&b'|'));
            split(from, to, b'|')
        }
        Sep::Comma => {
            let (mut start, mut quoted) = (0, false);
            for (i, &c) in t.iter().enumerate() {
                match c {
                    b'"' => quoted = !quoted,
                    b',' if !quoted => {
                        out.push(field(start, i));
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            out.push(field(start, t.len()));
            out
        }
        Sep::Aligned => {
            let gap = |i: usize| t[i] == b'\t' || (t[i] == b' ' && t.get(i + 1) == Some(&b' '));
            let mut i = 0;
            while i < t.len() {
                if gap(i) || t[i] == b' ' {
                    i += 1;
                    continue;
                }
                let start = i;
                while i < t.len() && !gap(i) {
                    i += 1;
                }
                out.push((start, start + trim_end(&t[start..i]).len()));
            }
            out
        }
    }
}

/// A table's header with a secret's column: every field a title (letters, spaces, `_`, `-`),
/// two fields or more, one of them a secret's name.
fn secret_column(body: &[u8]) -> Option<Pending> {
    let t = trim_end(body);
    if t.len() > 300 {
        return None;
    }
    let sep = Sep::of(t);
    let cols = columns(t, sep);
    let title = |&(s, e): &(usize, usize)| {
        e > s
            && e - s <= 30
            && t[s..e]
                .iter()
                .all(|c| c.is_ascii_alphabetic() || matches!(c, b' ' | b'_' | b'-'))
    };
    if cols.len() < 2 || !cols.iter().all(title) {
        return None;
    }
    let i = cols
        .iter()
        .position(|&(s, e)| COLUMN_NAMES.iter().any(|n| t[s..e].eq_ignore_ascii_case(n)))?;
    let at = if sep == Sep::Aligned { cols[i].0 } else { i };
    Some(Pending::Column {
        at: u16::try_from(at).ok()?,
        sep,
        fields: u8::try_from(cols.len()).ok()?,
    })
}

/// Whether a line may be a table's header naming a secret's column: aligned, and holding
/// one of the names' cores in a common case.
fn may_head_a_table(t: &[u8]) -> bool {
    (memchr::memchr3(b'\t', b',', b'|', t).is_some() || memchr::memmem::find(t, b"  ").is_some())
        && [
            &b"oken"[..],
            b"OKEN",
            b"assw",
            b"ASSW",
            b"ecret",
            b"ECRET",
            b"assphrase",
            b"pi key",
            b"PI KEY",
            b"pikey",
            b"PIKEY",
            b"pi_key",
            b"PI_KEY",
        ]
        .iter()
        .any(|w| memchr::memmem::find(t, w).is_some())
}

fn starts_entry(body: &[u8]) -> bool {
    let t = &body[indent(body)..];
    (t.starts_with(b"machine ") || t.starts_with(b"machine\t") || trim_end(t) == b"default")
        && memchr::memmem::find(t, b" password ").is_none()
}

/// Whether a line could open a [`Pending`]: it ends as an opener does and names a secret, or
/// starts a `.netrc` entry. Cheap (most lines fail on their last char), run on every line.
pub(super) fn may_open(body: &[u8]) -> bool {
    let t = trim_end(body);
    let Some(&last) = t.last() else {
        return false;
    };
    // An `expect` script's prompt names no key word when it is a glob (`*assword:`). The
    // word alone: a test log's many "expected" lines are no script.
    if memchr::memmem::find_iter(t, b"expect")
        .any(|i| matches!(t.get(i + 6), Some(b' ' | b'\t' | b'(' | b'"' | b'\'')))
    {
        return true;
    }
    // SMTP's prompt for a password, in base64: it names no key word.
    if memchr::memmem::find(t, b"Fzc3dvcmQ6").is_some() {
        return true;
    }
    let before = t.len().checked_sub(2).map(|i| t[i]);
    let ends = matches!(last, b'>' | b':' | b'=' | b'|' | b'{')
        || (matches!(last, b'-' | b'+' | b'0'..=b'9') && matches!(before, Some(b'|' | b'>')));
    if !ends {
        let lead = &t[indent(t)..];
        let lead = lead.strip_prefix(b"- ").unwrap_or(lead);
        let other = (t.starts_with(b"-----BEGIN ") && t.ends_with(b"-----"))
            || memchr::memmem::find(&t[..t.len().min(40)], b"> ").is_some()
            || t.starts_with(b"In [")
            || memchr::memmem::find(t, b"<<").is_some()
            || names_a_value(lead)
            || lead.first().is_some_and(u8::is_ascii_digit)
            || memchr::memmem::find(t, b"token").is_some()
            || memchr::memmem::find(t, b"login-password").is_some()
            || memchr::memmem::find(t, b"versions access").is_some()
            || [&b"reset"[..], b"generated", b"created", b"changed"]
                .iter()
                .any(|w| memchr::memmem::find(t, w).is_some());
        if !other {
            return may_head_a_table(t) || starts_entry(body);
        }
    }
    let lower = body.to_ascii_lowercase();
    // An opener names a secret: it holds a key word (the key/value rules' anchors), or Redis'
    // names of its passwords.
    KEY_WORDS
        .iter()
        .chain(&["requirepass", "masterauth"])
        .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
        || starts_entry(body)
}

/// Whether a line starts with a key that names what the next line's value is (`name:`,
/// `"Name":`, `ParameterKey=`): the first word before a `:` or `=` ends in `name` or `key`.
fn names_a_value(lead: &[u8]) -> bool {
    let head = &lead[..lead.len().min(48)];
    let Some(at) = head.iter().position(|c| matches!(c, b':' | b'=')) else {
        return false;
    };
    let key = head[..at].trim_ascii_end();
    let key = key.strip_suffix(b"\"").unwrap_or(key);
    let key = key.strip_suffix(b"'").unwrap_or(key);
    let n = key.len();
    (n >= 4 && key[n - 4..].eq_ignore_ascii_case(b"name"))
        || (n >= 3 && key[n - 3..].eq_ignore_ascii_case(b"key"))
}

/// What `body` (a line without its newline, already redacted on its own) leaves for the next.
pub(super) fn opens(body: &[u8]) -> Option<Pending> {
    if !may_open(body) {
        return None;
    }
    if starts_entry(body) {
        return Some(Pending::Netrc);
    }
    if memchr::memmem::find(body, b"334 UGFzc3dvcmQ6").is_some()
        || memchr::memmem::find(body, b"334 cGFzc3dvcmQ6").is_some()
    {
        return Some(Pending::AuthLogin);
    }
    if let Some(c) = BLOCK.captures(body) {
        return Some(Pending::Block {
            indent: c.get(1).map_or(0, |m| m.len()),
        });
    }
    if ELEMENT.is_match(body) && !trim_end(body).ends_with(b"/>") {
        return Some(Pending::Element);
    }
    if BARE_KEY.is_match(body) {
        return Some(Pending::NextLine);
    }
    if VARIABLE.is_match(body) {
        return Some(Pending::Variable);
    }
    if NAME_ENTRY.is_match(body) {
        return Some(Pending::NameValue);
    }
    if PROMPTED.is_match(body) {
        let lower = body.to_ascii_lowercase();
        if KEY_WORDS
            .iter()
            .any(|w| memchr::memmem::find(&lower, w.as_bytes()).is_some())
        {
            return Some(Pending::Result);
        }
    }
    if let Some(c) = HEREDOC.captures(body) {
        let tag = c.get(1).expect("group 1").as_bytes();
        let mut t = [0u8; 16];
        t[..tag.len()].copy_from_slice(tag);
        return Some(Pending::Heredoc {
            tag: t,
            len: tag.len() as u8,
        });
    }
    let t = trim_end(body);
    let upper = t.to_ascii_uppercase();
    if t.starts_with(b"-----BEGIN ")
        && t.ends_with(b"-----")
        && memchr::memmem::find(&upper, b"KEY").is_some()
        && memchr::memmem::find(&upper, b"PUBLIC").is_none()
        && memchr::memmem::find(&upper, b"PRIVATE KEY").is_none()
    {
        return Some(Pending::KeyBlock);
    }
    if EXPECT.is_match(body) {
        return Some(Pending::Send);
    }
    if PRINTS.is_match(body) {
        return Some(Pending::Prompt);
    }
    if let Some(c) = secret_column(body) {
        return Some(c);
    }
    if SECRETS_BLOCK.is_match(body) {
        return Some(Pending::Secrets);
    }
    (PROMPT.is_match(body) || ANNOUNCED.is_match(body)).then_some(Pending::Prompt)
}

/// A word that looks generated: eight characters or more, letters and digits both, no space.
fn is_random_word(t: &[u8]) -> bool {
    t.len() >= 8
        && !t.iter().any(u8::is_ascii_whitespace)
        && t.iter().any(u8::is_ascii_digit)
        && t.iter().any(u8::is_ascii_alphabetic)
}

/// The line after an opener, given the state: `Some((line, state after))` when the state
/// takes the line (redacted, or kept as it is), `None` when it ends the state (the line is
/// then an ordinary one).
pub(super) fn follow(p: Pending, body: &[u8]) -> Option<(Vec<u8>, Option<Pending>)> {
    let keep = |b: &[u8], s| Some((b.to_vec(), s));
    match p {
        Pending::Element | Pending::NextLine if is_blank(body) => keep(body, Some(p)),
        Pending::Element => {
            let end = memchr::memmem::find(body, b"</").unwrap_or(body.len());
            Some((mask_span(body, indent(body), end), None))
        }
        Pending::NextLine => {
            let t = trim_end(body);
            let at = indent(t);
            let end = if t.ends_with(b",") {
                t.len() - 1
            } else {
                t.len()
            };
            let value = &t[at..end];
            let quoted = value.len() >= 2
                && matches!(value[0], b'"' | b'\'')
                && value.last() == Some(&value[0]);
            let word = !value.is_empty()
                && !value
                    .iter()
                    .any(|c| matches!(c, b' ' | b'\t' | b'{' | b'[' | b':' | b'=' | b'<'));
            if !(quoted || word) {
                // A mapping under the key: its default or value is the secret.
                return MAPPING_ENTRY
                    .is_match(body)
                    .then(|| (body.to_vec(), Some(Pending::Mapping { indent: at })));
            }
            let (s, e) = if quoted { (at + 1, end - 1) } else { (at, end) };
            Some((mask_span(body, s, e), None))
        }
        Pending::Block { .. } if is_blank(body) => keep(body, Some(p)),
        Pending::Block { indent: key } if indent(body) > key => {
            Some((mask_span(body, indent(body), trim_end(body).len()), Some(p)))
        }
        Pending::Block { .. } => None,
        Pending::Variable if trim_end(&body[indent(body)..]) == b"}" => None,
        Pending::Variable => masked_value(&DEFAULT, body, p),
        Pending::Prompt if is_blank(body) => keep(body, Some(p)),
        Pending::Prompt => {
            let (s, e) = (indent(body), trim_end(body).len());
            if is_random_word(&body[s..e]) {
                return Some((mask_span(body, s, e), None));
            }
            let v = LABELLED.captures(body)?.get(1).expect("group 1");
            is_random_word(v.as_bytes()).then(|| (mask_span(body, v.start(), v.end()), None))
        }
        Pending::Mapping { .. } if is_blank(body) => keep(body, Some(p)),
        Pending::Mapping { indent: at } if indent(body) < at => None,
        // Entries only (a summary's lines have lost their indentation).
        Pending::Mapping { .. } if !MAPPING_ENTRY.is_match(body) => None,
        Pending::Mapping { .. } => masked_value(&MAPPING_DEFAULT, body, p),
        Pending::AuthLogin if is_blank(body) => keep(body, Some(p)),
        Pending::AuthLogin => {
            let t = trim_end(body);
            let s = t
                .iter()
                .rposition(u8::is_ascii_whitespace)
                .map_or(0, |i| i + 1);
            let base64 = t.len() - s >= 4
                && t[s..]
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='));
            base64.then(|| (mask_span(body, s, t.len()), None))
        }
        Pending::Secrets if trim_end(&body[indent(body)..]).starts_with(b"}") => None,
        Pending::Secrets => masked_value(&ENTRY, body, p),
        Pending::Result if is_blank(body) => keep(body, Some(p)),
        Pending::Result => {
            let c = RESULT.captures(body)?;
            let v = c.get(1).or(c.get(2)).expect("a group");
            Some((mask_span(body, v.start(), v.end()), None))
        }
        Pending::NameValue if is_blank(body) => keep(body, Some(p)),
        Pending::NameValue => {
            let c = NAMED_VALUE.captures(body)?;
            let v = (1..=5).find_map(|i| c.get(i)).expect("a group");
            Some((mask_span(body, v.start(), v.end()), None))
        }
        Pending::Heredoc { tag, len } if body.trim_ascii() == &tag[..usize::from(len)] => None,
        Pending::Heredoc { .. } => {
            Some((mask_span(body, indent(body), trim_end(body).len()), Some(p)))
        }
        Pending::Send if is_blank(body) => keep(body, Some(p)),
        Pending::Send => {
            let v = SEND.captures(body)?.get(1).expect("group 1");
            Some((mask_span(body, v.start(), v.end()), None))
        }
        Pending::Column { .. } if is_blank(body) => None,
        Pending::Column {
            at, sep: Sep::Tab, ..
        } => {
            let t = trim_end(body);
            let &(s, e) = columns(t, Sep::Tab).get(usize::from(at))?;
            Some((mask_span(body, s, e), Some(p)))
        }
        Pending::Column {
            at,
            sep: sep @ (Sep::Comma | Sep::Pipe),
            fields,
        } => {
            let cols = columns(trim_end(body), sep);
            if cols.len() != usize::from(fields) {
                return None;
            }
            // A field of words is prose (a table of options that describes each token).
            let (s, e) = cols[usize::from(at)];
            if body[s..e].iter().any(u8::is_ascii_whitespace) {
                return keep(body, Some(p));
            }
            Some((mask_span(body, s, e), Some(p)))
        }
        Pending::Column {
            at,
            sep: Sep::Aligned,
            ..
        } => {
            let at = usize::from(at);
            let t = trim_end(body);
            let aligned = at < t.len()
                && !t[at].is_ascii_whitespace()
                && (at == 0 || t[at - 1].is_ascii_whitespace());
            if !aligned {
                return None;
            }
            let e = t[at..]
                .iter()
                .position(u8::is_ascii_whitespace)
                .map_or(t.len(), |n| at + n);
            Some((mask_span(body, at, e), Some(p)))
        }
        Pending::KeyBlock if body.trim_ascii_start().starts_with(b"-----END ") => None,
        Pending::KeyBlock => Some((mask_span(body, indent(body), trim_end(body).len()), Some(p))),
        Pending::Netrc if is_blank(body) || starts_entry(body) => None,
        Pending::Netrc => match NETRC_PASSWORD.captures(body) {
            Some(c) => {
                let v = c.get(2).expect("group 2");
                keep(&mask_span(body, v.start(), v.end()), Some(p))
            }
            None => keep(body, Some(p)),
        },
    }
}

/// A line inside a block the state keeps (a Terraform variable, a mapping, a block of
/// secrets): the value `re` finds in it (its first group that matched) masked, or the line as
/// it is; the state goes on either way.
fn masked_value(re: &Regex, body: &[u8], p: Pending) -> Option<(Vec<u8>, Option<Pending>)> {
    let value = re
        .captures(body)
        .and_then(|c| c.iter().skip(1).flatten().next());
    let line = value.map_or_else(|| body.to_vec(), |v| mask_span(body, v.start(), v.end()));
    Some((line, Some(p)))
}

/// `body` with `[s, e)` replaced by the mark, unless that is plainly no secret (a variable, a
/// placeholder, empty).
fn mask_span(body: &[u8], s: usize, e: usize) -> Vec<u8> {
    let e = e.max(s);
    let inner = trim_end(&body[s..e]);
    if is_no_secret(inner) || !inner.iter().any(u8::is_ascii_alphanumeric) {
        return body.to_vec();
    }
    let e = s + inner.len();
    let mut out = Vec::with_capacity(body.len());
    out.extend_from_slice(&body[..s]);
    out.extend_from_slice(MARK.as_bytes());
    out.extend_from_slice(&body[e..]);
    out
}

#[cfg(test)]
#[path = "redact_next_tests.rs"]
mod tests;

//! One redaction rule: its literal anchors, its regex (compiled on first use), and what replaces
//! a match. The table of rules is `redact_rules::RULES`, with the commands', databases'
//! logins', credential files' and providers' parts in `redact_commands`, `redact_logins`,
//! `redact_files` and `redact_prefixes`; the names of secrets they all build on (`KEY_CORE`,
//! `KEY_WORDS`) are here, below every part.

use std::borrow::Cow;
use std::sync::OnceLock;

use regex::bytes::Regex;

/// What a rule puts in place of its match.
pub(super) enum With {
    /// A fixed replacement (`$n` keeps a group, e.g. the user of a URL).
    Fixed(&'static [u8]),
    /// `key<sep>value`: the value is replaced (its quotes kept) unless it is plainly no secret.
    KeyValue,
    /// As `KeyValue`, for a key that names a secret only sometimes (`APP_KEY`, `fernet_key`,
    /// `decryptionKey`): only a value that looks generated (`redact_keep::is_random_key_value`).
    KeyRandom,
    /// `scheme://user:password@`: the password replaced, unless it is a port and a path
    /// (`host:8443/path@v2`).
    Userinfo,
    /// A `Cookie:` header's every value, or a `Set-Cookie:` header's first (its attributes,
    /// `Path=/`, are not secrets).
    Cookie,
}

pub(super) struct Rule {
    pub(super) anchors: &'static [&'static str],
    /// The regex's source: most are literals, kept as they are (this table is built in every
    /// hook process).
    src: Cow<'static, str>,
    re: OnceLock<Regex>,
    pub(super) with: With,
}

impl Rule {
    pub(super) fn re(&self) -> &Regex {
        self.re
            .get_or_init(|| Regex::new(&self.src).expect("redaction regex"))
    }
}

/// A rule: its anchors, its regex (compiled on first use), what replaces a match.
pub(super) fn rule(
    anchors: &'static [&'static str],
    re: impl Into<Cow<'static, str>>,
    with: With,
) -> Rule {
    Rule {
        anchors,
        src: re.into(),
        re: OnceLock::new(),
        with,
    }
}

/// A rule whose match is replaced by a fixed text (`$n` keeps a group).
pub(super) fn fixed(
    anchors: &'static [&'static str],
    re: impl Into<Cow<'static, str>>,
    with: &'static [u8],
) -> Rule {
    rule(anchors, re, With::Fixed(with))
}

/// Key words of the key/value rules (KEY_CORE and the `.env` names hold one of them; `passw`
/// and `passphrase` (`phrase` for OCI's `pass_phrase`), not `pass`: every test log says
/// "passed"; `sonar` for SonarQube's
/// `sonar.login`, `crumb` for Jenkins' CSRF crumb, `reporter` for CodeClimate's
/// `CC_TEST_REPORTER_ID`), with any more anchors a rule needs after them.
macro_rules! key_words {
    ($($more:literal),*) => {
        &["secret", "key", "token", "passw", "passphrase", "phrase", "pwd", "credential", "sonar", "crumb", "reporter", "psk", "storepass" $(, $more)*]
    };
}
pub(super) const KEY_WORDS: &[&str] = key_words!();
pub(super) use key_words;

/// Key names whose value is a secret, in any case, with `_`, `-` or `.` between words.
pub(super) const KEY_CORE: &str = r"(?:aws[_.-]?secret[_.-]?access[_.-]?key|client[_.-]?secret|secret[_.-]?key|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|session[_.-]?key|api[_.-]?key|api[_.-]?token|access[_.-]?key|access[_.-]?token|account[_.-]?key|shared[_.-]?access[_.-]?key|license[_.-]?key|(?:pre)?shared[_.-]?key|sonar[_.-]?(?:login|token)|test[_.-]?reporter[_.-]?id|device[_.-]?key|jenkins[_.-]?crumb|client[_.-]?key[_.-]?data|auth[_.-]?(?:key|salt)|(?:wpa[_.-]?)?psk|refresh[_.-]?token|auth[_.-]?token|id[_.-]?token|key[_.-]?material|pass[_.-]?phrase|password|passwd|pwd|secret|token|credentials?|(?:key|store)pass)";

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

/// Words that name a type, not a value (`apiKey: string`, `api_key: str`), and Ada's
/// `constant` before one (`Api_Token : constant String := …`).
const TYPE_NAMES: &[&[u8]] = &[
    b"constant",
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
/// (`apiKey: apiKeyIsDirty`, `finalApiKey`), the word itself (`token=Token{…}`), or the key's
/// last word (`key` is the key, lowercased).
fn is_code_name(inner: &[u8], core: &[u8], key: &[u8]) -> bool {
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
    let last_word = key
        .rsplit(|b| matches!(b, b'_' | b'.' | b'-'))
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
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
        // The key's last word (`API_TOKEN = token`, `SECRET_KEY = key`): a variable.
        || (inner.iter().all(u8::is_ascii_lowercase) && inner == last_word)
        || (camel && memchr::memmem::find(&folded, &core).is_some())
        // `shouldUseOpenHandsKey`: a variable, not a password.
        || (letters && inner[0].is_ascii_lowercase() && humps >= 2)
}

/// A call in code, `getPassword()`, `os.getenv(` (its argument quoted, past the value), a
/// chain of calls (`crypto.randomBytes(32).toString(`): a name, `(`, and nothing after the
/// last closing parenthesis but another call. `x(1)yz` is no call.
fn is_call(inner: &[u8]) -> bool {
    let Some(open) = memchr::memchr(b'(', inner) else {
        return false;
    };
    let (name, rest) = (&inner[..open], &inner[open + 1..]);
    let chained = rest.ends_with(b"(") && memchr::memmem::find(rest, b").").is_some();
    name.first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && name
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
        && (rest.is_empty() || rest.ends_with(b")") || chained)
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

/// Words of code that stand where a value would (`credentials: new AWS.Credentials(…)`).
const CODE_WORDS: &[&[u8]] = &[
    b"new",
    b"await",
    b"async",
    b"function",
    b"lambda",
    b"yield",
    b"typeof",
    b"require",
];

/// What a key says its value is, after its key word: a name, an id, a file, a place
/// (`LLM_SECRET_NAME`, `CREDENTIALS_ID`, `<UserSecretsId>`, `TOKEN_URL`), not the secret.
pub(super) const NOT_THE_SECRET: &[&[u8]] = &[
    b"id",
    b"ids",
    b"name",
    b"names",
    b"file",
    b"path",
    b"dir",
    b"url",
    b"uri",
    b"arn",
    b"ref",
    b"env",
    b"var",
    b"label",
    b"type",
    b"length",
    b"len",
    b"prefix",
    b"header",
    b"field",
    b"param",
    b"location",
    b"store",
    b"provider",
    b"manager",
];

/// Words before a key word that make it no credential: `publicToken` (published by design),
/// `authenticity_token` and `csrf_token` (a form's, bound to a session), `NextToken` and
/// `page_token` (a listing's place), `max_tokens` (a count).
pub(super) const NOT_A_CREDENTIAL: &[&[u8]] = &[
    b"public",
    b"csrf",
    b"xsrf",
    b"authenticity",
    b"next",
    b"page",
    b"continuation",
    b"pagination",
    b"max",
    b"num",
    b"count",
];

/// Units a setting's number may carry (`3600s`, `30d`, `64mb`), lower case.
const UNITS: &[&[u8]] = &[
    b"ms", b"s", b"sec", b"secs", b"m", b"min", b"mins", b"h", b"hr", b"hrs", b"d", b"day",
    b"days", b"w", b"y", b"k", b"kb", b"mb", b"gb", b"kib", b"mib", b"gib",
];

/// Keys named `…key` that hold no secret whatever their value (`cache_key`, `sort_key`).
const KEYS_NOT_SECRET: &[&[u8]] = &[
    b"public",
    b"primary",
    b"foreign",
    b"sort",
    b"partition",
    b"cache",
    b"idempotency",
    b"hash",
    b"range",
    b"object",
    b"file",
    b"map",
    b"lookup",
    b"dedup",
    b"row",
    b"unique",
    b"index",
    b"group",
    b"sign",
    b"verify",
    b"verifying",
    b"host",
    b"node",
];

/// For a key named `…key` (`With::KeyRandom`): a value that looks generated, 20 characters or
/// more of base64 or hex (`base64:` before it allowed), random (Shannon entropy over 3.5
/// bits, 3 for hex), letters and digits both, not a UUID; and a key not of those that hold
/// none (`cache_key`).
pub(super) fn is_random_key_value(caps: &Captures<'_>) -> bool {
    let key = group(caps, "key").to_ascii_lowercase();
    let word = key.strip_suffix(b"key").unwrap_or(&key);
    let word = word
        .strip_suffix(b"_")
        .or_else(|| word.strip_suffix(b"-"))
        .or_else(|| word.strip_suffix(b"."))
        .unwrap_or(word);
    // A bare `key` names something (`<add key="ConnectionString_B2B" …>`, a map's entry).
    if word.is_empty() || KEYS_NOT_SECRET.iter().any(|w| word.ends_with(w)) {
        return false;
    }
    let value = group(caps, "value");
    let inner = value
        .strip_prefix(b"\"")
        .or_else(|| value.strip_prefix(b"'"))
        .unwrap_or(value);
    let inner = inner
        .strip_suffix(b"\"")
        .or_else(|| inner.strip_suffix(b"'"))
        .unwrap_or(inner);
    let inner = inner.strip_prefix(b"base64:").unwrap_or(inner);
    let hex = inner.iter().all(u8::is_ascii_hexdigit);
    let uuid = inner.len() == 36
        && inner.iter().enumerate().all(|(i, b)| {
            if matches!(i, 8 | 13 | 18 | 23) {
                *b == b'-'
            } else {
                b.is_ascii_hexdigit()
            }
        });
    inner.len() >= 20
        && inner
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'=' | b'_' | b'-'))
        && inner.iter().any(u8::is_ascii_digit)
        && inner.iter().any(u8::is_ascii_alphabetic)
        && !uuid
        && entropy(inner) > if hex { 3.0 } else { 3.5 }
}

/// Whether the key's words after its key word say the value is not the secret itself.
fn names_no_secret(caps: &Captures<'_>) -> bool {
    let (Some(key), Some(core)) = (caps.name("key"), caps.name("core")) else {
        return false;
    };
    let rest = &key.as_bytes()[core.end().saturating_sub(key.start())..];
    let word: Vec<u8> = rest
        .iter()
        .filter(|b| b.is_ascii_alphanumeric())
        .map(u8::to_ascii_lowercase)
        .collect();
    // `UserSecretsId`: the key word's plural first.
    let word = word
        .strip_prefix(b"s")
        .filter(|w| !w.is_empty())
        .unwrap_or(&word);
    let before_core = key.as_bytes()[..core.start() - key.start()].to_ascii_lowercase();
    let before_core = before_core
        .strip_suffix(b"_")
        .or_else(|| before_core.strip_suffix(b"-"))
        .or_else(|| before_core.strip_suffix(b"."))
        .unwrap_or(&before_core);
    NOT_THE_SECRET.contains(&word) || NOT_A_CREDENTIAL.iter().any(|w| before_core.ends_with(w))
}

/// Which quotes are open at a place on its line: an odd number of `"` (or of `'`), not
/// escaped, between the line's start and there.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct OpenQuotes {
    double: bool,
    single: bool,
}

/// [`OpenQuotes`] at each match of one search, read forward once: matches come in order, so
/// every byte of the text is read once however long its line and however many matches.
#[derive(Debug, Default)]
pub(super) struct QuoteCursor {
    pos: usize,
    open: OpenQuotes,
    escaped: bool,
}

impl QuoteCursor {
    /// The quotes open at `at` (not before the last place asked for).
    pub(super) fn at(&mut self, text: &[u8], at: usize) -> OpenQuotes {
        for &b in &text[self.pos.min(at)..at] {
            if b == b'\n' {
                (self.open, self.escaped) = (OpenQuotes::default(), false);
                continue;
            }
            if self.escaped {
                self.escaped = false;
                continue;
            }
            match b {
                b'\\' => self.escaped = true,
                b'"' => self.open.double = !self.open.double,
                b'\'' => self.open.single = !self.open.single,
                _ => {}
            }
        }
        self.pos = self.pos.max(at);
        self.open
    }
}

/// Whether the key stands inside a string literal that the value's opening quote closes: the
/// line before the key holds an odd number of that quote (`"Password: " + getPassword() +
/// ","`, `echo 'password = '.$p['x']`, `passwordLabel:"Password:",next:"…"`): the "value" is
/// code between two strings.
fn value_closes_keys_string(caps: &Captures<'_>, open: OpenQuotes) -> bool {
    let value = group(caps, "value");
    let Some(&q @ (b'"' | b'\'')) = value.first() else {
        return false;
    };
    memchr::memchr(q, group(caps, "sep")).is_none()
        && if q == b'"' { open.double } else { open.single }
}

/// Whether a key's value is plainly no secret: a placeholder, a boolean, a reference to a
/// variable, a name or call in code, a `pwd` that is a directory. `open` is the quotes open
/// where the match starts.
pub(super) fn keep_value(caps: &Captures<'_>, next: Option<u8>, open: OpenQuotes) -> bool {
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
    if names_no_secret(caps) || value_closes_keys_string(caps, open) {
        return true;
    }
    // A placeholder's default that is a plain word (`${TOKEN:-default}`, `${PW:-changeme}`).
    if key.starts_with(b"${") && inner.iter().all(u8::is_ascii_alphabetic) {
        return true;
    }
    // SNMP's well-known communities; .NET's `GetEnvironmentVariable("DB_PASSWORD", "User")`
    // names where to look, not a value.
    if (core == b"community" && matches!(&lower[..], b"public" | b"private"))
        || (memchr::memchr(b',', sep).is_some()
            && matches!(inner, b"User" | b"Machine" | b"Process"))
    {
        return true;
    }
    // `IDENTIFIED BY VALUES '…'`, MySQL's `IDENTIFIED BY PASSWORD '…'`: a keyword.
    if core == b"by" && matches!(&lower[..], b"values" | b"password") {
        return true;
    }
    // A stored secret named by the key (Helm's `auth.existingSecret=db-auth`).
    let before = memchr::memmem::rfind(&key, &core).map_or(&key[..], |i| &key[..i]);
    if before.ends_with(b"existing") {
        return true;
    }
    // `tests_pass=12`: a count, not a password.
    if core == b"pass" && inner.iter().all(u8::is_ascii_digit) {
        return true;
    }
    // A setting about the secret (`PASSWORD_EXPIRY_DAYS=90`, `TOKEN_TTL=3600`): a short
    // number under a key that goes on in words past its secret's.
    // `TOKEN_EXPIRY=3600s`, `SECRET_CACHE_SIZE=64mb`: the number may carry its unit.
    let after = memchr::memmem::rfind(&key, &core).map_or(&[][..], |i| &key[i + core.len()..]);
    let digits = inner.iter().take_while(|b| b.is_ascii_digit()).count();
    let unit = &lower[digits..];
    if after.iter().any(u8::is_ascii_alphabetic)
        && (1..=6).contains(&digits)
        && (unit.is_empty() || UNITS.contains(&unit))
    {
        return true;
    }
    if !quoted
        && (compares
            || CODE_WORDS.contains(&&lower[..])
            || matches!(next, Some(b'(' | b'['))
            // `password:= [REDACTED]` read again: the `=` is punctuation, not a value.
            || !inner.iter().any(u8::is_ascii_alphanumeric)
            || is_call(inner)
            || is_reference(inner, &core)
            || TYPE_NAMES.contains(&&lower[..])
            || is_code_name(inner, &core, &key)
            || is_object_id(inner)
            // A T-SQL variable (`@passwd = @pw`).
            || (inner.len() > 1
                && inner[0] == b'@'
                && inner[1..]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'_')))
    {
        // A call (`formData.get(…)`), a type, a variable named after the key.
        return true;
    }
    // A message id or selector that spells its own key (`SECRETS$ADD_SECRET =
    // "SECRETS$ADD_SECRET"`, `addPassword = "#add-password"`), a placeholder that is the key
    // word (`password = "password"`), a route naming it (`"cms/sites/passwords#update"`).
    let unseparated = |b: &[u8]| -> Vec<u8> {
        b.iter()
            .filter(|c| !matches!(c, b'_' | b'-'))
            .map(u8::to_ascii_lowercase)
            .collect()
    };
    let (flat, flat_key, flat_core) = (unseparated(inner), unseparated(&key), unseparated(&core));
    if !flat_key.is_empty()
        && flat.ends_with(&flat_key)
        && (flat.len() == flat_key.len()
            || matches!(
                flat[flat.len() - flat_key.len() - 1],
                b'$' | b'.' | b':' | b'/' | b'#'
            ))
    {
        return true;
    }
    if flat == flat_core
        || (inner.contains(&b'/')
            && !inner.iter().any(u8::is_ascii_whitespace)
            && memchr::memmem::find(&flat, &flat_core).is_some())
    {
        return true;
    }
    // A backquoted command (`\`etcdctl get /secret\``), an absolute path
    // (`/en/enterprise/creating-a-strong-password`), one character (`PuttyPassword=0`).
    let command = (value.starts_with(b"`") || (inner.starts_with(b"`") && inner.ends_with(b"`")))
        && inner.iter().any(u8::is_ascii_whitespace);
    let path = inner.first() == Some(&b'/')
        && inner.iter().filter(|&&b| b == b'/').count() >= 2
        && !inner.iter().any(u8::is_ascii_whitespace);
    if command || path || inner.len() < 2 {
        return true;
    }
    // A quoted piece of a concatenation (`"Password: " + getPassword() + ","`): the key was
    // in a string, the "value" is code between two strings.
    let concatenation = |b: &[u8]| {
        let t = b.trim_ascii();
        (t.starts_with(b"+") || t.starts_with(b"."))
            && t[1..]
                .iter()
                .any(|c| matches!(c, b' ' | b'(' | b'$' | b'['))
            || b.ends_with(b" + ")
            || b.ends_with(b" . ")
    };
    if is_no_secret(inner) || (quoted && concatenation(inner)) {
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
    // `"'$PASSWORD'"`: a shell's quotes around a variable (`\"${apiKey}\"`: escaped ones).
    let unquoted = &inner[inner
        .iter()
        .take_while(|&&c| matches!(c, b'\'' | b'"' | b'\\'))
        .count()..];
    inner.is_empty()
        || block(inner)
        || inner.iter().all(|&b| b == b'*')
        // One char repeated (`XXXXXXXX`, `********`, `0000`): a placeholder.
        || (inner.len() >= 3 && inner.iter().all(|&b| b == inner[0]))
        || memchr::memmem::find(inner, MARK.as_bytes()).is_some()
        || matches!(
            &inner.to_ascii_lowercase()[..],
            b"null" | b"none" | b"nil" | b"true" | b"false" | b"undefined" | b"<none>"
            // MySQL's `(using password: YES)`, a switch's state.
            | b"yes" | b"no" | b"on" | b"off"
            // An encoding's name (`Buffer.from("accountKey", "base64")`).
            | b"base64" | b"base64url" | b"hex" | b"utf8" | b"utf-8" | b"ascii" | b"binary"
            | b"latin1"
        )
        || unquoted.starts_with(b"$")
        || inner.starts_with(b"%(")
        // A Windows variable (`%NUGET_PASSWORD%`).
        || (inner.len() > 2
            && inner[0] == b'%'
            && inner[inner.len() - 1] == b'%'
            && inner[1..inner.len() - 1]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || *b == b'_'))
        || inner.starts_with(b"{{")
        // A remark in parentheses (`PASSWORD: (see above)`).
        || inner.starts_with(b"(")
        || placeholder(inner)
        // A YAML alias (`*dbpw`), AWS SigV4's credential scope (`AKID…/20150830/…`).
        || (inner.len() > 1
            && inner[0] == b'*'
            && inner[1..]
                .iter()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-')))
        || sigv4_scope(inner)
}

/// `AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request`: an access key id and its scope.
fn sigv4_scope(inner: &[u8]) -> bool {
    let mut parts = inner.split(|&b| b == b'/');
    let id = parts.next().unwrap_or_default();
    let date = parts.next().unwrap_or_default();
    (8..=20).contains(&id.len())
        && id
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && date.len() == 8
        && date.iter().all(u8::is_ascii_digit)
}

/// A placeholder in brackets: `<YOUR PASSWORD>`, `&lt;YOURPASSWORD&gt;`, `{SumoAccessKey}`
/// (one name in braces, a format string's field).
fn placeholder(inner: &[u8]) -> bool {
    let within = |open: &[u8], close: &[u8]| {
        inner.len() > open.len() + close.len() && inner.starts_with(open) && inner.ends_with(close)
    };
    let name = |b: &[u8]| {
        b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
    };
    (within(b"<", b">") && !inner[1..inner.len() - 1].contains(&b'<'))
        || within(b"&lt;", b"&gt;")
        || (within(b"{", b"}") && name(&inner[1..inner.len() - 1]))
}

//! The redaction rules: what a secret looks like, and what replaces it. Provider formats are
//! each cited from the provider's documentation of its token format (or, where a provider
//! documents none, from gitleaks' rule of the same name, MIT); the generic shapes (key = value,
//! URL userinfo, argv flags, headers, cookies, connection strings) cover what has no prefix.
//! Every rule stays within one line (see `redact`).

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::bytes::Captures;

use super::redact_anchors::ANCHORS;
pub(super) use super::redact_rule::{KEY_CORE, KEY_WORDS};
use super::redact_rule::{Rule, With, fixed, key_words, rule};
use super::words::Words;

pub use super::redact_keep::MARK;
use super::redact_keep::{
    QuoteCursor, entropy, group, group0, is_no_secret, is_random_key_value, keep_value,
};

/// The `.env` names': a key word, or `_PASS` (`SMTP_PASS`), `_PAT` (`AZURE_DEVOPS_PAT`).
const ENV_WORDS: &[&str] = key_words!("_pass", "_pat");
/// A query parameter's: a key word, or a URL's (`&sig=`).
const QUERY_WORDS: &[&str] = key_words!("://");

/// The rules, with the literal text ("anchors", ASCII case ignored) every match of each
/// contains: a text holding none of a rule's anchors is never searched by it, and a rule's
/// regex is compiled on its first search. Most outputs hold an anchor of some rule ("passed",
/// "key"), few of many: building every rule's automaton, or one set of all of them, cost a
/// masking hook more than its summary (4 ms of 15). A rule whose anchors miss a spelling
/// would never fire on it (the labelled set in redact_cases.rs catches that).
pub(super) struct Rules {
    rules: Vec<Rule>,
    /// Each rule's anchors, one bit each (bit `i` is `ANCHORS[i]`).
    masks: Vec<Bits>,
}

impl Rules {
    fn new(rules: Vec<Rule>) -> Rules {
        let masks = rules
            .iter()
            .map(|r| {
                let mut m = Bits::default();
                for a in r.anchors {
                    let i = ANCHORS.binary_search(a).unwrap_or_else(|_| {
                        panic!("the anchor {a:?} is missing from redact_anchors::ANCHORS")
                    });
                    m.set(i);
                }
                m
            })
            .collect();
        Rules { rules, masks }
    }
}

/// Every rule's anchors (building the table checks each is in `ANCHORS`).
#[cfg(test)]
pub(super) fn rule_anchors() -> impl Iterator<Item = &'static [&'static str]> {
    RULES.rules.iter().map(|r| r.anchors)
}

/// The rules that may match somewhere in `text`, in order. A text holding no anchor builds no
/// rule.
pub(super) fn candidates(text: &[u8]) -> impl Iterator<Item = &'static Rule> {
    let seen = anchors_in(text);
    let (rules, masks): (&[Rule], &[Bits]) = if seen.is_empty() {
        (&[], &[])
    } else {
        (&RULES.rules, &RULES.masks)
    };
    rules
        .iter()
        .zip(masks)
        .filter(move |(_, m)| m.meets(&seen))
        .map(|(r, _)| r)
}

/// The anchors `text` holds, one bit each. A short text (a hook's small output, a line) is
/// read once (`Words`): building the automaton costs more than that (half a millisecond, on
/// every hook).
fn anchors_in(text: &[u8]) -> Bits {
    static SHORT: OnceLock<Words> = OnceLock::new();
    static LONG: OnceLock<aho_corasick::AhoCorasick> = OnceLock::new();
    let mut seen = Bits::default();
    if text.len() <= 4096 {
        let lower = text.to_ascii_lowercase();
        for (_, i) in SHORT.get_or_init(|| Words::new(ANCHORS)).find_all(&lower) {
            seen.set(i);
        }
        return seen;
    }
    let ac = LONG.get_or_init(|| {
        aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(ANCHORS)
            .expect("redaction anchors")
    });
    let mut left = ANCHORS.len();
    for m in ac.find_overlapping_iter(text) {
        if seen.set(m.pattern().as_usize()) {
            left -= 1;
            if left == 0 {
                break;
            }
        }
    }
    seen
}

/// A set of anchors, one bit each.
#[derive(Default, Clone, Copy)]
pub(super) struct Bits([u64; ANCHORS.len().div_ceil(64)]);

impl Bits {
    /// Set bit `i`; whether it was new.
    fn set(&mut self, i: usize) -> bool {
        let (w, b) = (i / 64, 1u64 << (i % 64));
        let new = self.0[w] & b == 0;
        self.0[w] |= b;
        new
    }

    fn meets(&self, other: &Bits) -> bool {
        self.0.iter().zip(&other.0).any(|(a, b)| a & b != 0)
    }

    fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }
}

/// The table, in order: a rule sees the text the rules before it left (a value already
/// replaced is no secret to the next). Commands' rules and providers' prefixes have their own
/// modules (`redact_commands`, `redact_prefixes`).
pub(super) static RULES: LazyLock<Rules> = LazyLock::new(|| {
    // A value: double-quoted (with escapes), JSON-escaped quotes, single-quoted, or bare up to
    // whitespace or punctuation that ends values in shells, JSON and connection strings (`&`
    // ends one only in a URL's query, see below).
    // Quoted strings side by side are one value (a shell's `'a''b'`, C's and Python's `"a" "b"`
    // without the space).
    // A value redacted already is one (`password: x = [REDACTED]` read again must not take
    // `x =` for the value instead), and is kept.
    let value = r##"(?P<value>\[REDACTED\]|r#*"[^"\n]*"#*|"(?:[^"\\\n]|\\.)*"(?:"(?:[^"\\\n]|\\.)*")*|\\"(?:[^"\\\n]|\\[^"])*\\"|'[^'\n]*'(?:'[^'\n]*')*|`[^`\n]*`|[^\s"';,<>(){}\[\]`]+)"##;
    // The separators of an assignment: `=`, `:`, `=>`, Go's and Make's `:=`, Make's `::=`,
    // `?=` and `+=`, PHP's `.=`; a typed declaration's type may stand before it (`var token
    // string = …`). And a comparison with a literal (`if password == "team10"`): a password
    // written in code all the same.
    // A type after a colon is a typed declaration's (`password: String = …`, `apiKey?: string
    // = …`, `password: &'static str = …`).
    let assign = r"(?:\??[ \t]*:[ \t]*&?(?:'static[ \t]+)?[A-Za-z_][A-Za-z0-9_]*(?:<[A-Za-z0-9_, ]*>)?\??[ \t]*=|(?:[ \t]+(?:string|String|str|&str|&'static str|\[\]byte|char ?\*))?[ \t]*(?:::=|:=|\?=|\+=|\.=|=>|===|!==|==|!=|=|:))[ \t]*";
    let key_value = format!(
        r#"(?i-u)\b(?P<key>[a-z0-9_.-]*?(?P<core>{KEY_CORE})(?:[_.-]?(?:key|value|base|b64|base64|[0-9]+))?)(?P<sep>\\?["']?\]?{assign}){value}"#
    );
    let mut rules = Vec::with_capacity(128);
    rules.extend([
        // A private key on one line (JSON `"-----BEGIN …\nMII…"`); multi-line blocks are
        // handled line by line (see `Redactor`).
        fixed(
            &["private key"],
            r"(?m-u)-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
            b"-----BEGIN PRIVATE KEY----- [REDACTED] -----END PRIVATE KEY-----",
        ),
        // Credentials in URLs: scheme://user:password@host keeps scheme, user and host; the
        // password may hold `/` or `:` (the last `@` before the host ends it).
        rule(
            &["://"],
            r"(?i-u)\b(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<user>[^\s:/@'\x22]*):(?P<value>[^\s'\x22]*?)@(?P<host>[a-z0-9\[])",
            With::Userinfo,
        ),
        // Webhook URLs whose path is the secret: Slack (api.slack.com/messaging/webhooks:
        // hooks.slack.com/services/T…/B…/token), Discord (/api/webhooks/id/token), Microsoft
        // Teams incoming webhooks (…webhook.office.com/webhookb2/…).
        fixed(
            &["://"],
            r"(?i-u)\b(https?://hooks\.slack\.com/(?:services|workflows|triggers)/)[A-Za-z0-9/_-]+",
            b"${1}[REDACTED]",
        ),
        fixed(
            &["://"],
            r"(?i-u)\b(https?://(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/)[0-9]+/[A-Za-z0-9_-]+",
            b"${1}[REDACTED]",
        ),
        fixed(
            &["://"],
            r"(?i-u)\b(https?://[a-z0-9.-]*webhook\.office\.com/webhookb2/)[A-Za-z0-9@/_-]+",
            b"${1}[REDACTED]",
        ),
        // Cookies: every value of a request's Cookie header and of curl's `-b`/`--cookie`, a
        // Set-Cookie's or `document.cookie = "…"`'s own value.
        rule(
            &["cookie", "curl"],
            r#"(?i-u)(?P<name>\bset-cookie|document\.cookie|\bcookie|\bcurl\b[^\n]*?[ \t](?:-b|--cookie))(?P<sep>\\?["']?[ \t]*[:=][ \t]*\\?["']?|[ \t]+["']?)(?P<value>[^\n"']*)"#,
            With::Cookie,
        ),
    ]);
    rules.extend(super::redact_commands::rules());
    rules.extend([
        // A docker config's (and npm's `_auth`) base64 `user:password`.
        fixed(
            &["auth"],
            r#"(?i-u)((?:\\?["']|\b)_?auth\\?["']?[ \t]*[:=][ \t]*\\?["']?)[A-Za-z0-9+/]{12,}={0,2}([^(A-Za-z0-9+/=]|$)"#,
            b"${1}[REDACTED]${2}",
        ),
        // Query parameters: ?token=…&, &password=…
        rule(
            QUERY_WORDS,
            format!(
                r#"(?i-u)(?P<key>[?&][a-z0-9_.-]*?(?P<core>{KEY_CORE}|sig|signature|x-amz-security-token))(?P<sep>=)(?P<value>[^&#\s"'<>]+)"#
            ),
            With::KeyValue,
        ),
        // A query's `pass=` or `pw=` (the whole name: `?bypass=1` is none).
        rule(
            &["pass=", "pw="],
            r#"(?i-u)(?P<key>[?&](?P<core>pass|pw))(?P<sep>=)(?P<value>[^&#\s"'<>]+)"#,
            With::KeyValue,
        ),
        // Authorization: Bearer <token> / Basic <base64> / token <token> / Okta's SSWS <token>
        fixed(
            &["bearer"],
            r"(?i-u)\b(bearer)[ \t]+[A-Za-z0-9._~+/=-]{8,}",
            b"${1} [REDACTED]",
        ),
        fixed(
            &["auth"],
            r"(?i-u)\b(authorization\\?[\x22']?[ \t]*[:=][ \t]*\\?[\x22']?(?:basic|token|ssws)[ \t]+)[A-Za-z0-9._~+/=-]{8,}",
            b"${1}[REDACTED]",
        ),
        // Any other scheme's credentials (`GenieKey X`, `Klaviyo-API-Key X`, `Negotiate X`):
        // one token68 word with a digit (Digest's `username="…"` pairs hold no such word).
        fixed(
            &["auth"],
            r"(?i-u)\b(authorization\\?[\x22']?[ \t]*[:=][ \t]*\\?[\x22']?[a-z][a-z0-9_-]{2,30}[ \t]+)[A-Za-z0-9._~+/-]*[0-9][A-Za-z0-9._~+/-]*=*",
            b"${1}[REDACTED]",
        ),
        // Honeycomb's key header, named for a team.
        fixed(
            &["honeycomb"],
            r"(?i-u)\b(x-honeycomb-team\\?[\x22']?[ \t]*:[ \t]*\\?[\x22']?)[A-Za-z0-9_-]{8,}",
            b"${1}[REDACTED]",
        ),
        // A chat server's incoming webhook, its token the path's last part (Rocket.Chat's
        // `/hooks/ID/TOKEN`, Mattermost's `/hooks/ID`): long, with a digit.
        fixed(
            &["/hooks/"],
            r"(?i-u)\b(https?://[^\s/]+(?:/[^\s/]+)*?/hooks/(?:[a-z0-9_-]+/)?)(?:[A-Za-z_-]*[0-9][A-Za-z0-9_-]{15,}|[A-Za-z0-9_-]{15,}[0-9][A-Za-z_-]*|[A-Za-z0-9_-]{8,}[0-9][A-Za-z0-9_-]{7,})",
            b"${1}[REDACTED]",
        ),
    ]);
    rules.extend(super::redact_prefixes::rules());
    rules.extend([
        // Password hashes: crypt(3)'s `$1$`, `$2a$`/`$2b$`/`$2y$` (bcrypt), `$5$`, `$6$`,
        // `$7$`, `$8$`, `$y$` (yescrypt), `$apr1$`, argon2; Kerberos AS-REP and TGS hashes as
        // cracking tools print them. Offline cracking makes them secrets too.
        fixed(
            &[
                "$1$", "$2a$", "$2b$", "$2x$", "$2y$", "$5$", "$6$", "$7$", "$8$", "$y$", "$gy$",
                "$apr1$", "$argon2", "$krb5",
            ],
            r"(?-u)\$(?:1|2[abxy]|5|6|7|8|y|gy|apr1|argon2(?:id|i|d))\$[A-Za-z0-9./+=,$]{20,}|\$krb5(?:asrep|tgs|pa)\$[0-9]+\$[^\s'\x22]{32,}",
            b"[REDACTED]",
        ),
        // A password given as a credential object's last argument: .NET's `new
        // NetworkCredential("user", "pass")`, `DirectoryEntry("LDAP://…", "user", "pass")`,
        // Java's `PasswordAuthentication`/`UsernamePasswordCredentials`.
        fixed(
            &["credential", "directoryentry", "passwordauthentication"],
            r#"(?i-u)(\b(?:NetworkCredential|DirectoryEntry|PasswordAuthentication|UsernamePasswordCredentials?|PSCredential|BasicAWSCredentials)[ \t]*\((?:[^,()\n]*,)+[ \t]*")[^"\n]+("[ \t]*(?:\.toCharArray\(\))?[ \t]*\))"#,
            b"${1}[REDACTED]${2}",
        ),
        // A password as a login call's last argument (`smtp.login("me", "X")`, `auth=("me",
        // "X")`, `HTTPBasicAuth('me', 'X')`) or a connection's third (`getConnection(url,
        // "sa", "X")`, `mysqli_connect("h", "u", "X")`, `PlainAuth("", "u", "X", host)`, `new
        // PDO($dsn, "u", "X")`): literals only.
        fixed(
            &["login", "auth", "connect", "credentials(", "ftp"],
            r#"(?i-u)(\b(?:login|HTTPBasicAuth|HTTPDigestAuth|BasicAuth|setBasicAuth|basic_auth|auth[ \t]*=[ \t]*)[ \t]*\((?:[ \t]*(?:"[^"\n]*"|'[^'\n]*'|[a-z_][a-z0-9_.]*)[ \t]*,)+[ \t]*|\b(?:connect|Credentials|FTP|FTP_TLS)[ \t]*\((?:[ \t]*(?:"[^"\n]*"|'[^'\n]*'|\$?[a-z_][a-z0-9_.]*)[ \t]*,){2,}[ \t]*)(["'])[^"'\n]+(["'][ \t]*\))"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        fixed(
            &["connect", "pdo", "mysqli", "plainauth", "set_password", "sequelize"],
            r#"(?i-u)(\b(?:PlainAuth|getConnection|new[ \t]+Sequelize|mysqli?_connect|mysqli|PDO|pg_connect|pymysql\.connect|MySQLdb\.connect|set_password)[ \t]*\((?:[ \t]*(?:"[^"\n]*"|'[^'\n]*'|\$?[a-z_][a-z0-9_.]*)[ \t]*,){2}[ \t]*)(["'])[^"'\n]+(["'])"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        // C clients' password argument by position: `mysql_real_connect(conn, host, user,
        // "X", …)`, libpq's `PQsetdbLogin(host, port, opts, tty, db, user, "X")`.
        fixed(
            &["mysql_real_connect", "pqsetdblogin"],
            r#"(?i-u)(\b(?:mysql_real_connect[ \t]*\((?:[ \t]*(?:"[^"\n]*"|[a-z_&*][a-z0-9_.>&*-]*)[ \t]*,){3}|PQsetdbLogin[ \t]*\((?:[ \t]*(?:"[^"\n]*"|[a-z_&*][a-z0-9_.>&*-]*)[ \t]*,){6})[ \t]*")[^"\n]+(")"#,
            b"${1}[REDACTED]${2}",
        ),
        // A Go driver's DSN without a scheme, `user:X@tcp(host:port)/db` (MySQL's, Redis').
        fixed(
            &["@tcp(", "@unix(", "@udp("],
            r#"(?-u)(\b[A-Za-z0-9_.+-]+:)[^\s@:/"'()]+(@(?:tcp|tcp6|unix|udp)\()"#,
            b"${1}[REDACTED]${2}",
        ),
        // A secret-named variable set from a string's constructor (`let password =
        // String::from("X")`, `SecretString::new("X".into())`, `new String("X")`; not a call
        // that reads, such as `os.getenv("X")`). No type between the name and its `=`: an
        // optional type there made the lazy DFA give up on long lines (0.6 s on a 1.2 MB line
        // of 60,000 `password=` pairs, against 3 ms without).
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)(\b[a-z0-9_]*{KEY_CORE}[a-z0-9_]*[ \t]*=[ \t]*(?:new[ \t]+String|String::from|String::new|SecretString::new|SecretString::from|Secret::new|SecretStr::new|Zeroizing::new|Password::new|SecureString)[ \t]*\([ \t]*b?)(["'])[^"'\n]+(["'])"#
            ),
            b"${1}${2}[REDACTED]${3}",
        ),
        // A default inside a placeholder: a shell's `${API_KEY:-X}` (`:=`, `-`, `=`); not
        // `${API_KEY:?message}`, a default that is another variable, or a placeholder word
        // (`${TOKEN:-default}`: a key/value's judgement).
        rule(
            KEY_WORDS,
            format!(
                r#"(?i-u)(?P<key>\$\{{[a-z0-9_]*(?P<core>{KEY_CORE})[a-z0-9_]*)(?P<sep>:?[-=])(?P<value>[^}}\s$][^}}\s]*)(?P<tail>\}})"#
            ),
            With::KeyValue,
        ),
        // A wallet's seed phrase: 12 to 24 words under a name that says so (`mnemonic:`,
        // `SEED_PHRASE=`, `recovery_phrase`); an assembly `mnemonic: "LDA"` is one word.
        fixed(
            &["mnemonic", "phrase"],
            r#"(?i-u)(\b[a-z0-9_]*(?:mnemonic|seed[_.-]?phrase|recovery[_.-]?phrase|seed[_.-]?words)[a-z0-9_]*\\?["']?[ \t]*[:=][ \t]*\\?["']?)(?:[a-z]{3,8}[ \t]+){11,23}[a-z]{3,8}"#,
            b"${1}[REDACTED]",
        ),
        // Nomad's and Consul's token tables: `Secret ID = <uuid>` (the `Accessor ID` beside it
        // names the token, and stays).
        fixed(
            &["secret"],
            r"(?i-u)(\bsecret[ \t]+id[ \t]*[=:][ \t]*)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
            b"${1}[REDACTED]",
        ),
        // BitLocker's recovery password: eight groups of six digits, under a line that names it
        // (`Recovery Password:`, `RecoveryPassword :`, manage-bde's `Password:`).
        fixed(
            &["passw", "recovery"],
            r"(?-u)\b[0-9]{6}(?:-[0-9]{6}){7}\b",
            b"[REDACTED]",
        ),
        // Ada's typed constant, `Api_Password : constant String := "X"`, and ABAP's
        // `DATA lv_password TYPE string VALUE 'X'`: a type (and a word before it) between the
        // name and the value. Quoted values only: `:= Get_Env ("…")` is a call.
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)(\b[a-z0-9_]*{KEY_CORE}[a-z0-9_]*(?:[ \t]*:[ \t]*(?:constant[ \t]+)?[a-z_][a-z0-9_.]*[ \t]*:=|[ \t]+type[ \t]+[a-z_][a-z0-9_]*[ \t]+value)[ \t]*)(["'])[^"'\n]+(["'])"#
            ),
            b"${1}${2}[REDACTED]${3}",
        ),
        // C's `#define DB_PASSWORD "X"`, EDN's and Lisp's `:password "X"`.
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)((?:#define[ \t]+|[ \t({{,]:)[a-z0-9_-]*?{KEY_CORE}[a-z0-9_-]*[ \t]+)(")[^"\n]+(")"#
            ),
            b"${1}${2}[REDACTED]${3}",
        ),
    ]);
    rules.extend(super::redact_logins::rules());
    rules.extend([
        // Redis' `AUTH X` (a digit in it: "AUTH required" is prose); a literal piped into a
        // command that reads a password (`echo "X" | sudo -S`, `--password-stdin`, `passwd
        // --stdin`).
        fixed(
            &["auth "],
            r"(?m-u)((?:^|>[ \t]*|\bredis-cli\b[^\n]*[ \t])AUTH[ \t]+(?:[^\s]+[ \t]+)?)[^\s]*[0-9][^\s]*[ \t]*$",
            b"${1}[REDACTED]",
        ),
        // Redis' MONITOR prints each command's words quoted: `"AUTH" "X"`.
        fixed(
            &["\"auth\""],
            r#"(?i-u)("auth"[ \t]+(?:"[^"\n]*"[ \t]+)?")[^"\n]+"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["sudo", "stdin", "passw"],
            r#"(?-u)(\b(?:echo|printf)[ \t]+(?:-[ne][ \t]+)?(["']?))[^\s'"$][^'"\n|]*?((?:\\n)?["']?[ \t]*\|[ \t]*(?:sudo[ \t]+(?:-[a-zA-Z]+[ \t]+)*-[a-zA-Z]*S\b|[^\n|]*--password-stdin|(?:smb)?passwd\b))"#,
            b"${1}[REDACTED]${3}",
        ),
        // Postfix's `sasl_passwd` (`[smtp.example.com]:587 me@example.com:X`), fetchmail's
        // `user "me" password "X"`, `aws configure set aws_secret_access_key X`, `gh secret set
        // NAME --body X`.
        fixed(
            &["]:"],
            r"(?m-u)^(\[[^\]\s]+\](?::[0-9]+)?[ \t]+[^\s:]+:)\S+[ \t]*$",
            b"${1}[REDACTED]",
        ),
        fixed(
            &["password"],
            r#"(?i-u)(\buser(?:name)?[ \t]+\S+[ \t]+(?:[^\n]*?[ \t])?password[ \t]+)(["'])[^"'\n$]+(["'])"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        fixed(
            &["configure", "secret set"],
            r#"(?-u)(\baws[ \t]+configure[ \t]+set[ \t]+\S*(?:secret|session_token|password)\S*[ \t]+["']?|\bgh[ \t]+secret[ \t]+set\b[^\n]*?[ \t](?:--body|-b)[ \t=]?["']?)[^\s"'$-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // A name and its value side by side (`{"name": "DB_PASSWORD", "value": "X"}`, `- {name:
        // API_TOKEN, value: X}`, `<env name="SECRET" value="X"/>`).
        rule(
            KEY_WORDS,
            format!(
                r#"(?i-u)(?P<key>\bname\\?["']?[ \t]*[:=][ \t]*\\?["']?[a-z0-9_.-]*?(?P<core>{KEY_CORE})[a-z0-9_.-]*\\?["']?)(?P<sep>[ \t]*[,;]?[ \t]*\\?["']?value\\?["']?[ \t]*[:=][ \t]*){value}"#
            ),
            With::KeyValue,
        ),
        // A literal that stands in for a secret read from elsewhere: `process.env.DB_PASSWORD ||
        // 'X'`, `config["ApiKey"] ?? "X"`, `env::var("TOKEN").unwrap_or("X")`, `.orElse("X")`,
        // `env('DB_PASSWORD', 'X')`; one with a digit, a capital or a symbol (`|| "not-set"` is
        // a placeholder).
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)(\b[a-z0-9_.]*{KEY_CORE}[a-z0-9_]*["'\])]*\)?[^\n]*?(?:\|\||\?\?|\bor[ \t]|\.unwrap_or\(|\.orElse\(|\bdefault[ \t]*=|\benv\([ \t]*["'][^"'\n]*["'][ \t]*,)[ \t]*)(["'])[^"'\n$]{{3,}}?(?-i:[0-9A-Z!#%&*+?@])[^"'\n]*(["'])"#
            ),
            b"${1}${2}[REDACTED]${3}",
        ),
        // AWS Signature Version 4's `Signature=…`; `ansible-vault encrypt_string 'X'`; a
        // `rabbitmqctl add_user U X`; a MinIO alias's secret key (`mc alias set N URL AK X`);
        // a keychain's `-w X`.
        fixed(
            &["signature"],
            r"(?i-u)(\bsignature[ \t]*=[ \t]*)[A-Za-z0-9+/_-]{32,}={0,2}",
            b"${1}[REDACTED]",
        ),
        fixed(
            &["encrypt_string", "rabbitmqctl", "alias set", "-password"],
            r#"(?-u)(\bencrypt_string[ \t]+["']?|\brabbitmqctl[ \t]+(?:add_user|change_password)[ \t]+\S+[ \t]+["']?|\bmc[ \t]+alias[ \t]+set[ \t]+\S+[ \t]+\S+[ \t]+\S+[ \t]+["']?|\badd-(?:generic|internet)-password\b[^\n]*?[ \t]-w[ \t]+["']?)[^\s"'$-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // A YAML anchor before a value (`password: &pw X`).
        rule(
            KEY_WORDS,
            format!(
                r#"(?i-u)\b(?P<key>[a-z0-9_.-]*?(?P<core>{KEY_CORE}))(?P<sep>[ \t]*:[ \t]*&[a-z0-9_-]+[ \t]+)(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s"'#]+)"#
            ),
            With::KeyValue,
        ),
        // A password told in prose: `the password is 'Secret123'`, `The default password for
        // the user "x" is "pyne"` (quoted: an unquoted word after "is" is prose).
        fixed(
            &["passw"],
            r#"(?i-u)(\bpassword\b[^\n'"]{0,24}(?:(?:"[^"\n]{0,32}"|'[^'\n]{0,32}')[^\n'"]{0,12})?\bis[ \t]+)(?:"[^"\n]{3,64}"|'[^'\n]{3,64}')"#,
            b"${1}\"[REDACTED]\"",
        ),
        // HashiCorp Vault's unseal keys (`Unseal Key 2: …`, `vault operator unseal …`) and a
        // TrueNAS API key passed to `auth.login_with_api_key`.
        fixed(
            &["unseal"],
            r"(?i-u)(\bunseal(?:[ \t]+key[ \t]+[0-9]+[ \t]*:|(?:[ \t]+-[a-z-]+)*)[ \t]+)[A-Za-z0-9+/]{40,}={0,2}",
            b"${1}[REDACTED]",
        ),
        fixed(
            &["login_with_api_key"],
            r#"(?-u)(login_with_api_key[^\n]*?\[[ \t]*\\?")[0-9]+-[A-Za-z0-9]{64}"#,
            b"${1}[REDACTED]",
        ),
        // Gradle's and Groovy's DSL: `password 'x'` alone on its line (a key, a space, a
        // quoted value; not a variable or a template), Android's `storePassword "x"`; msmtp's
        // `password X` unquoted (a digit or capital in it: "password required." is prose).
        fixed(
            &["passw", "secret", "token"],
            r#"(?im-u)^([ \t]*(?:[a-z]*password|passwd|secret|token)[ \t]+)(["'])[^"'\n${%][^"'\n]*(["'])[ \t]*$"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        fixed(
            &["password "],
            r#"(?m-u)^([ \t]*password[ \t]+)[^\s"'$%{<]*[0-9A-Z][^\s]*[ \t]*$"#,
            b"${1}[REDACTED]",
        ),
        // A `.pgpass` line, `host:port:database:user:password`, on PostgreSQL's port or any
        // (`*`).
        fixed(
            &[":5432:", ":*:"],
            r"(?m-u)^([^:\s#]+:(?:5432|\*):[^:\s]+:[^:\s]+:)[^\s]+$",
            b"${1}[REDACTED]",
        ),
        // SQL's passwords (`CREATE USER x WITH PASSWORD 'y'`, `ALTER ROLE … PASSWORD 'y'`,
        // Oracle's and MySQL's `IDENTIFIED BY 'y'`, MySQL's `SET PASSWORD FOR u = 'y'`) and PowerShell's `ConvertTo-SecureString
        // "y" -AsPlainText`: a quoted literal, not a variable.
        fixed(
            &["passw", "identified"],
            r#"(?i-u)(\b(?:with|role|user|login)\b[^\n;]*?\bpassword[ \t]+|\bidentified[ \t]+by[ \t]+|\bset[ \t]+password\b[^=\n;]*=[ \t]*(?:password[ \t]*\([ \t]*)?)(["'])[^"'\n$][^"'\n]*(["'])"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        fixed(
            &["convertto-securestring"],
            r#"(?i-u)(\bConvertTo-SecureString[ \t]+(?:-String[ \t]+)?)(["'])[^"'\n$][^"'\n]*(["'])"#,
            b"${1}${2}[REDACTED]${3}",
        ),
        // .NET's appSettings: `<add key="SmtpPassword" value="…" />` (the key ends in its key
        // word: `PasswordMinLength` is a setting about passwords).
        rule(
            KEY_WORDS,
            format!(
                r#"(?i-u)(?P<key>\bkey[ \t]*=[ \t]*["'][a-z0-9_.:-]*?(?P<core>{KEY_CORE})(?:[_.-]?(?:key|value|[0-9]+))?["'])(?P<sep>[ \t]+value[ \t]*=[ \t]*)(?P<value>"[^"\n]*"|'[^'\n]*')"#
            ),
            With::KeyValue,
        ),
        // JSON Web Tokens: header.payload.signature, both JSON parts base64url of `{"`.
        fixed(
            &["eyj"],
            r"(?-u)\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            b"[REDACTED]",
        ),
        // .env-style assignments: FOO_SECRET=…, DB_PASSWORD=…, GITHUB_TOKEN_2=… (any suffix),
        // SMTP_PASS=… (`PASS` after a prefix only: a test summary's `PASS=12` is no secret).
        rule(
            ENV_WORDS,
            format!(
                r#"(?-u)\b(?P<key>(?:[A-Z0-9]+_)*(?P<core>SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|[A-Z0-9]+_PASS|[A-Z0-9]+_PAT)(?:_[A-Z0-9]+)*)(?P<sep>(?:["']\])?{assign})(?P<value>"(?:[^"\\\n]|\\.)*"(?:"(?:[^"\\\n]|\\.)*")*|'[^'\n]*'(?:'[^'\n]*')*|`[^`\n]*`|[^\s"';`]+)"#
            ),
            With::KeyValue,
        ),
        // A key ending in `pass` after a separator (`ansible_become_pass=X`, `$db_pass = 'X'`,
        // `db.pass=X`; a count such as `tests_pass=12` is kept, see `keep_value`).
        rule(
            &["_pass", ".pass", "-pass"],
            format!(
                r#"(?i-u)\b(?P<key>[a-z0-9_.-]*[_.-](?P<core>pass))(?P<sep>\\?["']?{assign}){value}"#
            ),
            With::KeyValue,
        ),
        // A quoted key that is `pass` or `pw` alone (`{"user":"ann","pass":"X"}`, `'pw' =>
        // 'X'`), its value quoted: a test summary's `pass: 12` is neither.
        rule(
            &["\"pass\"", "'pass'", "\"pw\"", "'pw'"],
            r#"(?i-u)(?P<key>["'](?P<core>pass|pw)["'])(?P<sep>[ \t]*(?::|=>|=)[ \t]*)(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"#,
            With::KeyValue,
        ),
        // A key that is a noun and `pass` (offlineimap's `remotepass = X`, `bindpass`,
        // `rootpass`): `bypass` and `compass` are not such nouns.
        rule(
            &["pass =", "pass=", "pass:"],
            format!(
                r#"(?i-u)\b(?P<key>(?:remote|local|bind|root|admin|db|mail|smtp|imap|pop|ldap|user|auth|proxy|master|server|client|wifi|vnc|rpc|sudo|login|sys|dba|ftp|sftp|ssh|sql|mysql|pg|redis|app|web|api)(?P<core>pass))(?P<sep>\\?["']?{assign}){value}"#
            ),
            With::KeyValue,
        ),
    ]);
    // Credential files' and statements' own spellings.
    rules.extend(super::redact_files::rules());
    rules.extend([
        // `pass = X` or YAML's `pass: X` at a line's start, unquoted.
        rule(
            &["pass =", "pass=", "pass:"],
            r#"(?m-u)^[ \t]*(?:- )?(?P<key>(?P<core>pass))(?P<sep>[ \t]*[=:][ \t]*)(?P<value>[^\s"'#;]+)"#,
            With::KeyValue,
        ),
        // `PASS = '…'` alone (Python's constants beside `USER = …`): quoted only, as a test
        // summary's `PASS: 12` is no secret.
        rule(
            &["pass =", "pass=", "pass:", "pass :"],
            r#"(?i-u)\b(?P<key>pass)(?P<sep>[ \t]*(?::=|=>|=|:)[ \t]*)(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"#,
            With::KeyValue,
        ),
        // key=value, key: value, "key": "value", key => value, in any case.
        rule(KEY_WORDS, key_value, With::KeyValue),
        // A plan's change of a secret, `password = "old" -> "new"` (Terraform): the new one too.
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)(\b[a-z0-9_.-]*{KEY_CORE}[a-z0-9_.-]*[ \t]*=[ \t]*"[^"\n]*"[ \t]*->[ \t]*")[^"\n]+(")"#
            ),
            b"${1}[REDACTED]${2}",
        ),
        // Any key named `…key` (`APP_KEY`, `fernet_key`, `decryptionKey`) whose value looks
        // generated: long, base64 or hex, random (a cache or sort key's value is no secret).
        rule(
            &["key"],
            format!(
                r#"(?i-u)\b(?P<key>[a-z0-9_.-]*?(?P<core>key))(?P<sep>\\?["']?\]?{assign}){value}"#
            ),
            With::KeyRandom,
        ),
        // A personal access token's key (`ado_pat = …`, `gitlab-pat: …`): the key ends in
        // `pat` right before its separator (`standard_patterns` is no key).
        rule(
            &["_pat", "-pat", ".pat"],
            format!(
                r#"(?i-u)\b(?P<key>[a-z0-9_.-]*[_.-](?P<core>pat))(?P<sep>\\?["']?{assign}){value}"#
            ),
            With::KeyValue,
        ),
        // An XML element named after a key, on one line: `<password>hunter2</password>`,
        // `<ApiKey>…</ApiKey>` (its value on the next line: `redact_next`).
        rule(
            KEY_WORDS,
            format!(
                r#"(?i-u)(?P<key><[a-z0-9_.:-]*?(?P<core>{KEY_CORE})[a-z0-9_.:-]*)(?P<sep>(?:[ \t][^<>\n]*)?>)(?P<value>[^<\s][^<\n]*?)(?P<tail></)"#
            ),
            With::KeyValue,
        ),
        // A quoted key and a quoted value as a call's two arguments: Java's
        // `System.setProperty("X_TOKEN", "…")`, a map's `put("password", "…")`, Gradle's
        // `property 'sonar.login', '…'` (quotes maybe cut off with the line); an argument, not
        // a JSON key (`"API_SECRET", "valueFrom": {…}`).
        rule(
            KEY_WORDS,
            format!(
                r#"(?im-u)(?P<key>(?:["']|\b)[a-z0-9_.-]*?(?P<core>{KEY_CORE})[a-z0-9_.-]*["'])(?P<sep>[ \t]*,[ \t]*)(?P<value>"(?:[^"\\\n]|\\.)*(?:"|$)|'[^'\n]*(?:'|$))(?P<tail>[ \t]*(?:[,)\];]|$)|[ \t]+[^:\s])"#
            ),
            With::KeyValue,
        ),
    ]);
    Rules::new(rules)
});

pub(super) fn apply<'t>(rule: &Rule, text: &'t [u8]) -> Cow<'t, [u8]> {
    match rule.with {
        With::Userinfo => rule.re().replace_all(text, |caps: &Captures<'_>| {
            let all = group0(caps);
            let value = group(caps, "value");
            // `host:8443/path@v2`: a port and a path, no password; an empty one neither.
            let port_path = value.iter().take_while(|b| b.is_ascii_digit()).count();
            if value.is_empty()
                || (port_path > 0 && value.get(port_path) == Some(&b'/'))
                || memchr::memmem::find(value, MARK.as_bytes()).is_some()
            {
                return all.to_vec();
            }
            let mut out = Vec::with_capacity(all.len());
            for part in ["scheme", "user"] {
                out.extend_from_slice(group(caps, part));
            }
            out.push(b':');
            out.extend_from_slice(MARK.as_bytes());
            out.push(b'@');
            out.extend_from_slice(group(caps, "host"));
            out
        }),
        With::Cookie => rule.re().replace_all(text, |caps: &Captures<'_>| {
            let name = group(caps, "name");
            let value = group(caps, "value");
            let every = !(name.eq_ignore_ascii_case(b"set-cookie")
                || name.eq_ignore_ascii_case(b"document.cookie"));
            let mut out = Vec::with_capacity(value.len() + 16);
            out.extend_from_slice(name);
            out.extend_from_slice(group(caps, "sep"));
            for (i, pair) in value.split(|&b| b == b';').enumerate() {
                if i > 0 {
                    out.push(b';');
                }
                // A setting's word (`theme=dark`, `lang=en`): no session's value.
                let word = |v: &[u8]| {
                    let v = v.trim_ascii();
                    v.len() <= 12 && v.iter().all(u8::is_ascii_alphabetic)
                };
                match memchr::memchr(b'=', pair) {
                    Some(eq)
                        if (i == 0 || every)
                            && eq + 1 < pair.len()
                            && !word(&pair[eq + 1..])
                            && !is_no_secret(pair[eq + 1..].trim_ascii()) =>
                    {
                        out.extend_from_slice(&pair[..=eq]);
                        out.extend_from_slice(MARK.as_bytes());
                    }
                    _ => out.extend_from_slice(pair),
                }
            }
            out
        }),
        // A token replaced whole is kept when it is a placeholder: a prefix and one repeated
        // char (`ghp_xxxx…`, `AKIAXXXX…`), as gitleaks' global allowlist keeps them.
        With::Fixed(with) if with == MARK.as_bytes() => {
            rule.re().replace_all(text, |caps: &Captures<'_>| {
                let all = group0(caps);
                if entropy(all) <= 2.5 {
                    all.to_vec()
                } else {
                    with.to_vec()
                }
            })
        }
        // A flag's or a command's value replaced after what it keeps (`${1}`) is kept when it
        // is a name in code, not a secret: letters alone, camelCase or snake_case, holding a key
        // word (`pulumi config set --secret dbPassword`).
        With::Fixed(with) if with == b"${1}[REDACTED]" => {
            rule.re().replace_all(text, |caps: &Captures<'_>| {
                let all = group0(caps);
                let kept = caps.get(1).map_or(0, |m| m.len());
                let raw = &all[kept..];
                let value = raw.to_ascii_lowercase();
                // camelCase or snake_case, as names in code are (`PASSWORD` is a placeholder,
                // replaced at no cost).
                let shaped = raw.windows(2).any(|w| {
                    w[0].is_ascii_lowercase() && (w[1].is_ascii_uppercase() || w[1] == b'_')
                });
                let name = shaped
                    && value.iter().all(|b| b.is_ascii_alphabetic() || *b == b'_')
                    && KEY_WORDS
                        .iter()
                        .any(|w| memchr::memmem::find(&value, w.as_bytes()).is_some());
                // Where a tool reads its secret from (openssl's `-pass env:NAME`, `file:…`,
                // `fd:3`, `stdin`): a reference, not the secret.
                let reference = [&b"env:"[..], b"file:", b"fd:"]
                    .iter()
                    .any(|p| raw.starts_with(p))
                    || raw == b"stdin";
                if name || reference {
                    all.to_vec()
                } else {
                    let mut out = all[..kept].to_vec();
                    out.extend_from_slice(MARK.as_bytes());
                    out
                }
            })
        }
        With::Fixed(with) => rule.re().replace_all(text, with),
        With::KeyValue | With::KeyRandom => {
            let mut quotes = QuoteCursor::default();
            rule.re().replace_all(text, move |caps: &Captures<'_>| {
                let all = group0(caps);
                let next = caps.get(0).and_then(|m| text.get(m.end()).copied());
                // `${TOKEN:-default}`: a shell's parameter expansion, not an assignment.
                // Spring's `${db.password:X}` gives a default, a literal like any other.
                let expansion = caps
                    .get(0)
                    .is_some_and(|m| text[..m.start()].ends_with(b"${"))
                    && (group(caps, "sep").trim_ascii() != b":"
                        || matches!(
                            group(caps, "value").first(),
                            Some(b'-' | b'=' | b'+' | b'?')
                        ));
                // `password: !vault |`: a YAML tag before a block scalar, whose lines are the
                // value (`redact_next`'s block state takes them).
                // A YAML tag that names where the value is (Home Assistant's `!secret name`,
                // `!env_var`, `!include`, CloudFormation's `!Ref`, `!Sub`, `!GetAtt`).
                let reference_tag = matches!(
                    &group(caps, "value").to_ascii_lowercase()[..],
                    b"!secret"
                        | b"!env_var"
                        | b"!include"
                        | b"!env"
                        | b"!ref"
                        | b"!sub"
                        | b"!getatt"
                        | b"!importvalue"
                );
                let tagged_block = group(caps, "value").starts_with(b"!")
                    && caps.get(0).is_some_and(|m| {
                        let rest = &text[m.end()..];
                        let line = &rest[..memchr::memchr(b'\n', rest).unwrap_or(rest.len())];
                        is_no_secret(line.trim_ascii()) && !line.trim_ascii().is_empty()
                    });
                let open = quotes.at(text, caps.get(0).map_or(0, |m| m.start()));
                let chance = matches!(rule.with, With::KeyRandom) && !is_random_key_value(caps);
                if chance
                    || expansion
                    || reference_tag
                    || tagged_block
                    || keep_value(caps, next, open)
                {
                    return all.to_vec();
                }
                let value = group(caps, "value");
                let mut out = Vec::with_capacity(all.len());
                out.extend_from_slice(group(caps, "key"));
                out.extend_from_slice(group(caps, "sep"));
                let quote: &[u8] = if value.starts_with(b"\\\"") {
                    b"\\\""
                } else if value.starts_with(b"\"") {
                    b"\""
                } else if value.starts_with(b"'") {
                    b"'"
                } else {
                    b""
                };
                out.extend_from_slice(quote);
                out.extend_from_slice(MARK.as_bytes());
                out.extend_from_slice(quote);
                // What the match needed after the value (an element's closing `</`).
                out.extend_from_slice(group(caps, "tail"));
                out
            })
        }
    }
}

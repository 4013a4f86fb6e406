//! The redaction rules: what a secret looks like, and what replaces it. Provider formats are
//! each cited from the provider's documentation of its token format (or, where a provider
//! documents none, from gitleaks' rule of the same name, MIT); the generic shapes (key = value,
//! URL userinfo, argv flags, headers, cookies, connection strings) cover what has no prefix.
//! Every rule stays within one line (see `redact`).

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

use regex::bytes::{Captures, Regex};

/// Key words of the key/value rules (KEY_CORE and the `.env` names hold one of them; `passw`
/// and `passphrase`, not `pass`: every test log says "passed"), with any more anchors a rule
/// needs after them.
macro_rules! key_words {
    ($($more:literal),*) => {
        &["secret", "key", "token", "passw", "passphrase", "pwd", "credential" $(, $more)*]
    };
}
pub(super) const KEY_WORDS: &[&str] = key_words!();
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
    /// Every rule's anchors, once each.
    anchors: Vec<&'static str>,
    /// Each rule's anchors, one bit each (see [`Rules::anchors_in`]).
    masks: Vec<u128>,
    /// One pass over a long text for all anchors.
    prefilter: OnceLock<aho_corasick::AhoCorasick>,
}

impl Rules {
    fn new(rules: Vec<Rule>) -> Rules {
        let mut anchors: Vec<&'static str> = Vec::new();
        for r in &rules {
            for a in r.anchors {
                debug_assert_eq!(a.to_ascii_lowercase(), *a, "anchors are lower case");
                if !anchors.contains(a) {
                    anchors.push(a);
                }
            }
        }
        assert!(anchors.len() <= 128, "anchors fit a u128");
        let masks = rules
            .iter()
            .map(|r| {
                r.anchors.iter().fold(0u128, |m, a| {
                    m | 1 << anchors.iter().position(|x| x == a).expect("listed")
                })
            })
            .collect();
        Rules {
            rules,
            anchors,
            masks,
            prefilter: OnceLock::new(),
        }
    }

    /// The anchors `text` holds, one bit each (in the order of `anchors`). A short text (a
    /// hook's small output, a line) is searched anchor by anchor: building the automaton costs
    /// more than that (half a millisecond, on every hook).
    fn anchors_in(&self, text: &[u8]) -> u128 {
        let mut seen = 0u128;
        if text.len() <= 4096 {
            let lower = text.to_ascii_lowercase();
            for (i, a) in self.anchors.iter().enumerate() {
                if memchr::memmem::find(&lower, a.as_bytes()).is_some() {
                    seen |= 1 << i;
                }
            }
            return seen;
        }
        let ac = self.prefilter.get_or_init(|| {
            aho_corasick::AhoCorasick::builder()
                .ascii_case_insensitive(true)
                .build(&self.anchors)
                .expect("redaction anchors")
        });
        let all = u128::MAX >> (128 - self.anchors.len());
        for m in ac.find_overlapping_iter(text) {
            seen |= 1 << m.pattern().as_usize();
            if seen == all {
                break;
            }
        }
        seen
    }

    /// The rules that may match somewhere in `text`, in order.
    pub(super) fn candidates(&self, text: &[u8]) -> impl Iterator<Item = &Rule> {
        let seen = self.anchors_in(text);
        self.rules
            .iter()
            .zip(&self.masks)
            .filter(move |(_, m)| *m & seen != 0)
            .map(|(r, _)| r)
    }
}

/// What replaces a secret.
pub const MARK: &str = "[REDACTED]";

/// What a rule puts in place of its match.
pub(super) enum With {
    /// A fixed replacement (`$n` keeps a group, e.g. the user of a URL).
    Fixed(&'static [u8]),
    /// `key<sep>value`: the value is replaced (its quotes kept) unless it is plainly no secret.
    KeyValue,
    /// `scheme://user:password@`: the password replaced, unless it is a port and a path
    /// (`host:8443/path@v2`).
    Userinfo,
    /// A `Cookie:` header's every value, or a `Set-Cookie:` header's first (its attributes,
    /// `Path=/`, are not secrets).
    Cookie,
}

pub(super) struct Rule {
    anchors: &'static [&'static str],
    src: String,
    re: OnceLock<Regex>,
    with: With,
}

impl Rule {
    pub(super) fn re(&self) -> &Regex {
        self.re
            .get_or_init(|| Regex::new(&self.src).expect("redaction regex"))
    }
}
/// Key names whose value is a secret, in any case, with `_`, `-` or `.` between words.
pub(super) const KEY_CORE: &str = r"(?:aws[_.-]?secret[_.-]?access[_.-]?key|client[_.-]?secret|secret[_.-]?key|private[_.-]?key|signing[_.-]?key|encryption[_.-]?key|master[_.-]?key|session[_.-]?key|api[_.-]?key|api[_.-]?token|access[_.-]?key|access[_.-]?token|account[_.-]?key|shared[_.-]?access[_.-]?key|refresh[_.-]?token|auth[_.-]?token|id[_.-]?token|passphrase|password|passwd|pwd|secret|token|credentials?)";

pub(super) static RULES: LazyLock<Rules> = LazyLock::new(|| {
    let rule = |anchors: &'static [&'static str], re: &str, with: With| Rule {
        anchors,
        src: re.to_string(),
        re: OnceLock::new(),
        with,
    };
    let fixed = |anchors: &'static [&'static str], re: &str, with: &'static [u8]| {
        rule(anchors, re, With::Fixed(with))
    };
    // A value: double-quoted (with escapes), JSON-escaped quotes, single-quoted, or bare up to
    // whitespace or punctuation that ends values in shells, JSON and connection strings (`&`
    // ends one only in a URL's query, see below).
    let value = r#"(?P<value>"(?:[^"\\\n]|\\.)*"|\\"(?:[^"\\\n]|\\[^"])*\\"|'[^'\n]*'|`[^`\n]*`|[^\s"';,<>(){}\[\]`]+)"#;
    // The separators of an assignment: `=`, `:`, `=>`, Go's and Make's `:=`, Make's `::=`,
    // `?=` and `+=`, PHP's `.=`; a typed declaration's type may stand before it (`var token
    // string = …`).
    let assign = r"(?:[ \t]+(?:string|String|str|&str|&'static str|\[\]byte|char ?\*))?[ \t]*(?:::=|:=|\?=|\+=|\.=|=>|=|:)[ \t]*";
    let key_value = format!(
        r#"(?i-u)\b(?P<key>[a-z0-9_.-]*?(?P<core>{KEY_CORE})(?:[_.-]?(?:key|value|base|b64|base64|[0-9]+))?)(?P<sep>\\?["']?{assign}){value}"#
    );
    Rules::new(vec![
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
        // Cookies: every value of a request's Cookie header, a Set-Cookie's own value.
        rule(
            &["cookie"],
            r#"(?i-u)\b(?P<name>set-cookie|cookie)(?P<sep>\\?["']?[ \t]*:[ \t]*\\?["']?)(?P<value>[^\n"']*)"#,
            With::Cookie,
        ),
        // The password of an argv flag: `--password X`, `--token X`, curl's `-u user:pass`,
        // `sshpass -p X`, `redis-cli -a X`, `mysql -pX`; and .netrc's `password X`. A flag
        // follows a space or tab on its line (never the line's start, which is no command,
        // nor a line break: a rule must give the same answer wherever a block is cut).
        fixed(
            &[
                "-pass",
                "-token",
                "-api",
                "-secret",
                "-key",
                "-storepass",
                "-keypass",
            ],
            r#"(?i-u)([ \t]--?(?:password|passwd|pass|token|api-key|apikey|secret|client-secret|access-token|auth-token|private-key|key-password|storepass|keypass)(?:[ \t]+|=))(?:"[^"\n]*"|'[^'\n]*'|[^\s"';]+)"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["-u"],
            r#"(?-u)((?:^|\s)(?:-u|--user)[ \t]+['"]?[^\s:'"]+:)[^\s'"]+"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["sshpass", "redis-cli", "mysql", "mongo"],
            r#"(?-u)(\b(?:sshpass|redis-cli|mysql|mysqldump|mysqladmin|mongosh|mongo)\b[^\n]*?[ \t]-(?:p|a|-pass)[ \t]?)[^\s-][^\s]*"#,
            b"${1}[REDACTED]",
        ),
        // A registry login's `-p` (`docker login -u me -p X`; only after `login`: `docker run
        // -p 8080:80` publishes a port).
        fixed(
            &["login"],
            r#"(?-u)(\b(?:docker|podman|buildah|skopeo|helm|oras|nerdctl)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]?)[^\s-][^\s]*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["machine"],
            r"(?i-u)(\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+)\S+",
            b"${1}[REDACTED]",
        ),
        // A docker config's (and npm's `_auth`) base64 `user:password`.
        fixed(
            &["auth"],
            r#"(?i-u)((?:\\?["'])?_?auth\\?["']?[ \t]*[:=][ \t]*\\?["']?)[A-Za-z0-9+/]{12,}={0,2}"#,
            b"${1}[REDACTED]",
        ),
        // Query parameters: ?token=…&, &password=…
        rule(
            QUERY_WORDS,
            &format!(
                r#"(?i-u)(?P<key>[?&][a-z0-9_.-]*?(?P<core>{KEY_CORE}|sig|signature|x-amz-security-token))(?P<sep>=)(?P<value>[^&#\s"'<>]+)"#
            ),
            With::KeyValue,
        ),
        // Authorization: Bearer <token> / Basic <base64> / token <token>
        fixed(
            &["bearer"],
            r"(?i-u)\b(bearer)[ \t]+[A-Za-z0-9._~+/=-]{8,}",
            b"${1} [REDACTED]",
        ),
        fixed(
            &["auth"],
            r"(?i-u)\b(authorization\\?[\x22']?[ \t]*[:=][ \t]*\\?[\x22']?(?:basic|token)[ \t]+)[A-Za-z0-9._~+/=-]{8,}",
            b"${1}[REDACTED]",
        ),
        // Known token shapes. OpenAI / Anthropic (sk-…, sk-proj-…, sk-ant-…).
        fixed(&["sk-"], r"(?-u)\bsk-[A-Za-z0-9_-]{16,}", b"[REDACTED]"),
        // GitHub.
        fixed(
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            r"(?-u)\bgh[pousr]_[A-Za-z0-9]{30,}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["github_pat_"],
            r"(?-u)\bgithub_pat_[A-Za-z0-9_]{20,}",
            b"[REDACTED]",
        ),
        // GitLab, npm, PyPI, Hugging Face, Stripe secret and restricted keys.
        fixed(
            &["glpat-"],
            r"(?-u)\bglpat-[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        fixed(&["npm_"], r"(?-u)\bnpm_[A-Za-z0-9]{36}\b", b"[REDACTED]"),
        fixed(
            &["pypi-"],
            r"(?-u)\bpypi-AgE[A-Za-z0-9_-]{50,}",
            b"[REDACTED]",
        ),
        fixed(&["hf_"], r"(?-u)\bhf_[A-Za-z0-9]{30,}\b", b"[REDACTED]"),
        fixed(
            &["k_live_", "k_test_"],
            r"(?-u)\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
            b"[REDACTED]",
        ),
        // AWS access key ids.
        fixed(
            &["akia", "asia"],
            r"(?-u)\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            b"[REDACTED]",
        ),
        // Slack tokens and Google API keys.
        fixed(
            &["xox"],
            r"(?-u)\bxox[abposr]-[A-Za-z0-9-]{10,}",
            b"[REDACTED]",
        ),
        fixed(&["aiza"], r"(?-u)\bAIza[0-9A-Za-z_-]{35}", b"[REDACTED]"),
        // Slack app-level tokens (api.slack.com/authentication/token-types: xapp-).
        fixed(
            &["xapp-"],
            r"(?-u)\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
            b"[REDACTED]",
        ),
        // Google OAuth: client secrets (GOCSPX-), access tokens (ya29.), refresh (1//).
        fixed(
            &["gocspx-"],
            r"(?-u)\bGOCSPX-[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        fixed(
            &["ya29."],
            r"(?-u)\bya29\.[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        // SendGrid API keys (docs.sendgrid.com: SG.<22>.<43>).
        fixed(
            &["sg."],
            r"(?-u)\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
            b"[REDACTED]",
        ),
        // Twilio API keys (SK…) and account SIDs' auth pairs are caught by the URL and -u
        // rules; the key SID itself: SK + 32 hex.
        fixed(
            &[
                "sk0", "sk1", "sk2", "sk3", "sk4", "sk5", "sk6", "sk7", "sk8", "sk9", "ska", "skb",
                "skc", "skd", "ske", "skf",
            ],
            r"(?-u)\bSK[0-9a-f]{32}\b",
            b"[REDACTED]",
        ),
        // Mailgun (key-…), Mailchimp (…-usN), Shopify (shpat_/shpss_/shpca_/shppa_),
        // DigitalOcean (dop_v1_/doo_v1_/dor_v1_), Databricks (dapi…), HashiCorp Vault
        // (hvs./hvb.), Linear (lin_api_), Postman (PMAK-), Doppler (dp.pt.), Pulumi (pul-),
        // New Relic (NRAK-), Grafana (glc_/glsa_), Sentry (sntrys_), Square (sq0atp-/sq0csp-),
        // Atlassian (ATATT3), age (AGE-SECRET-KEY-1), Telegram bot tokens (id:AA…).
        fixed(&["key-"], r"(?-u)\bkey-[0-9a-zA-Z]{32}\b", b"[REDACTED]"),
        fixed(
            &["-us"],
            r"(?-u)\b[0-9a-f]{32}-us[0-9]{1,2}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["shp"],
            r"(?-u)\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["_v1_"],
            r"(?-u)\bdo[opr]_v1_[a-f0-9]{64}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["dapi"],
            r"(?-u)\bdapi[a-f0-9]{32}(?:-[0-9])?\b",
            b"[REDACTED]",
        ),
        fixed(
            &["hvs.", "hvb."],
            r"(?-u)\bhv[sb]\.[A-Za-z0-9_-]{24,}",
            b"[REDACTED]",
        ),
        fixed(
            &["lin_api_"],
            r"(?-u)\blin_api_[A-Za-z0-9]{40}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["pmak-"],
            r"(?-u)\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["dp."],
            r"(?-u)\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
            b"[REDACTED]",
        ),
        fixed(&["pul-"], r"(?-u)\bpul-[a-f0-9]{40}\b", b"[REDACTED]"),
        fixed(&["nrak-"], r"(?-u)\bNRAK-[A-Z0-9]{27}\b", b"[REDACTED]"),
        fixed(
            &["glc_", "glsa_"],
            r"(?-u)\bgl(?:c|sa)_[A-Za-z0-9+/_]{32,}={0,2}",
            b"[REDACTED]",
        ),
        fixed(
            &["sntry"],
            r"(?-u)\bsntry[su]_[A-Za-z0-9+/=_]{40,}",
            b"[REDACTED]",
        ),
        fixed(
            &["sq0"],
            r"(?-u)\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}",
            b"[REDACTED]",
        ),
        fixed(
            &["atatt3"],
            r"(?-u)\bATATT3[A-Za-z0-9_=-]{40,}",
            b"[REDACTED]",
        ),
        fixed(
            &["age-secret-key-1"],
            r"(?-u)\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
            b"[REDACTED]",
        ),
        fixed(
            &[":aa"],
            r"(?-u)\b[0-9]{8,10}:AA[0-9A-Za-z_-]{33}\b",
            b"[REDACTED]",
        ),
        // More providers' token prefixes. Those whose tokens are letters and digits, 20 or
        // more after the prefix (so `gsk_model_training` or `rnd_seed` stay): Sourcegraph
        // (sgp_), Groq (gsk_), Replicate (r8_), Perplexity (pplx-), xAI (xai-), Supabase
        // (sbp_), Netlify (nfp_), RubyGems (rubygems_), Render (rnd_).
        fixed(
            &[
                "sgp_",
                "gsk_",
                "r8_",
                "pplx-",
                "xai-",
                "sbp_",
                "nfp_",
                "rubygems_",
                "rnd_",
            ],
            r"(?-u)\b(?:sgp_|gsk_|r8_|pplx-|xai-|sbp_|nfp_|rubygems_|rnd_)[A-Za-z0-9]{20,}",
            b"[REDACTED]",
        ),
        // Those whose tokens hold `_` or `-` too, behind prefixes no identifier has: Docker
        // Hub PATs (dckr_pat_), PlanetScale (pscale_tkn_/pw_/oauth_), Figma (figd_), GitLab's
        // other tokens (glptt-, gldt-, glrt-, glcbt-, glimt-, glsoat-), Fly.io (fo1_).
        fixed(
            &[
                "dckr_pat_",
                "pscale_",
                "figd_",
                "glptt-",
                "gldt-",
                "glrt-",
                "glcbt-",
                "glimt-",
                "glsoat-",
                "fo1_",
            ],
            r"(?-u)\b(?:dckr_pat_|pscale_(?:tkn|pw|oauth)_|figd_|glptt-|gldt-|glrt-|glcbt-|glimt-|glsoat-|fo1_)[A-Za-z0-9_=-]{20,}",
            b"[REDACTED]",
        ),
        // JSON Web Tokens: header.payload.signature, both JSON parts base64url of `{"`.
        fixed(
            &["eyj"],
            r"(?-u)\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*",
            b"[REDACTED]",
        ),
        // .env-style assignments: FOO_SECRET=…, DB_PASSWORD=…, GITHUB_TOKEN_2=… (any suffix).
        rule(
            KEY_WORDS,
            &format!(
                r#"(?-u)\b(?P<key>(?:[A-Z0-9]+_)*(?P<core>SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)(?:_[A-Z0-9]+)*)(?P<sep>{assign})(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|`[^`\n]*`|[^\s"';`]+)"#
            ),
            With::KeyValue,
        ),
        // key=value, key: value, "key": "value", key => value, in any case.
        rule(KEY_WORDS, &key_value, With::KeyValue),
        // An XML element named after a key, on one line: `<password>hunter2</password>`,
        // `<ApiKey>…</ApiKey>` (its value on the next line: `redact_next`).
        rule(
            KEY_WORDS,
            &format!(
                r#"(?i-u)(?P<key><[a-z0-9_.:-]*?(?P<core>{KEY_CORE})[a-z0-9_.:-]*)(?P<sep>(?:[ \t][^<>\n]*)?>)(?P<value>[^<\s][^<\n]*?)(?P<tail></)"#
            ),
            With::KeyValue,
        ),
        // A quoted key and a quoted value as a call's two arguments: Java's
        // `System.setProperty("X_TOKEN", "…")`, a map's `put("password", "…")`.
        rule(
            KEY_WORDS,
            &format!(
                r#"(?i-u)(?P<key>["'][a-z0-9_.-]*?(?P<core>{KEY_CORE})[a-z0-9_.-]*["'])(?P<sep>[ \t]*,[ \t]*)(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')"#
            ),
            With::KeyValue,
        ),
    ])
});

/// Values that are plainly not secrets: placeholders, booleans, references to variables, and
/// a `pwd` that is a directory.
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

fn keep_value(caps: &Captures<'_>, next: Option<u8>) -> bool {
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
    if !quoted
        && (matches!(next, Some(b'(' | b'['))
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

/// A named group's bytes (empty when it did not take part).
fn group<'h>(caps: &Captures<'h>, name: &str) -> &'h [u8] {
    caps.name(name).map_or(&[], |m| m.as_bytes())
}

/// The whole match's bytes.
fn group0<'h>(caps: &Captures<'h>) -> &'h [u8] {
    caps.get(0).map_or(&[], |m| m.as_bytes())
}

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
            let every = !name.eq_ignore_ascii_case(b"set-cookie");
            let mut out = Vec::with_capacity(value.len() + 16);
            out.extend_from_slice(name);
            out.extend_from_slice(group(caps, "sep"));
            for (i, pair) in value.split(|&b| b == b';').enumerate() {
                if i > 0 {
                    out.push(b';');
                }
                match memchr::memchr(b'=', pair) {
                    Some(eq) if (i == 0 || every) && eq + 1 < pair.len() => {
                        out.extend_from_slice(&pair[..=eq]);
                        out.extend_from_slice(MARK.as_bytes());
                    }
                    _ => out.extend_from_slice(pair),
                }
            }
            out
        }),
        With::Fixed(with) => rule.re().replace_all(text, with),
        With::KeyValue => rule.re().replace_all(text, |caps: &Captures<'_>| {
            let all = group0(caps);
            let next = caps.get(0).and_then(|m| text.get(m.end()).copied());
            // `${TOKEN:-default}`: a shell's parameter expansion, not an assignment.
            let expansion = caps
                .get(0)
                .is_some_and(|m| text[..m.start()].ends_with(b"${"));
            if expansion || keep_value(caps, next) {
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
        }),
    }
}

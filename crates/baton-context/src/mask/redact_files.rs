//! Redaction rules for credential files' and statements' own spellings: a log's `pass=`, an
//! element named `pass`, Oracle's and SQL Server's statements, Bundler's credentials, a key
//! written as its bytes, a password after its scheme in braces, Maven's master password, a
//! directive's value after a space, COBOL's `VALUE`, GitHub Actions' `::add-mask::`. Part of
//! the table in `redact_rules`, in its order there.

use super::redact_rule::{KEY_CORE, KEY_WORDS, Rule, With, fixed, rule};

pub(super) fn rules() -> Vec<Rule> {
    vec![
        // `pass=X` after a user's field (a log's `user=etl pass=X`).
        fixed(
            &["pass=", "pass:"],
            r#"(?i-u)(\b(?:user|username|login)[=:][^\s=]+[ \t,;]+pass[=:])[^\s"',;&$%{(<][^\s"',;&]*"#,
            b"${1}[REDACTED]",
        ),
        // An element named `pass` or `pw` (FileZilla's `<Pass encoding="base64">X</Pass>`).
        rule(
            &["<pass", "<pw"],
            r#"(?i-u)(?P<key><(?P<core>pass|pw))(?P<sep>(?:[ \t][^<>\n]*)?>)(?P<value>[^<\s][^<\n]*?)(?P<tail></)"#,
            With::KeyValue,
        ),
        // Oracle's `IDENTIFIED BY X`, unquoted, in a statement: `CREATE`/`ALTER` a user or
        // role, or in capitals ("the user is identified by their email" is prose).
        // `IDENTIFIED BY VALUES '…'` and MySQL's `BY PASSWORD '…'` name what follows
        // (`keep_value`).
        rule(
            &["identified"],
            r#"(?-u)(?P<key>(?:(?i:\b(?:create|alter)[ \t]+(?:user|role)[ \t]+[^\s;]+[ \t]+identified)|\bIDENTIFIED)[ \t]+(?P<core>(?i:by)))(?P<sep>[ \t]+)(?P<value>[^\s"';:?$&][^\s;]*)"#,
            With::KeyValue,
        ),
        // Bundler's credentials for a gem server (`BUNDLE_GEMS__EXAMPLE__COM: "user:X"`,
        // `bundle config set --global gems.example.com user:X`).
        fixed(
            &["bundle"],
            r#"(?-u)(\bBUNDLE_[A-Z0-9_]*__[A-Z0-9_]+["']?[ \t]*[:=][ \t]*["']?[^\s:"']+:|\bbundle[ \t]+config[ \t]+(?:set[ \t]+)?(?:--(?:global|local)[ \t]+)?[a-z0-9-]+(?:\.[a-z0-9-]+)+[ \t]+["']?[^\s:"']+:)[^\s"'$][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // A key written as its bytes (Zigbee2MQTT's `network_key: [1, 3, …]`, C's `uint8_t
        // aes_key[16] = {0x2b, …}`): sixteen numbers or more under a name ending in `key`.
        fixed(
            &["key"],
            r#"(?i-u)(\b[a-z0-9_]*key["']?(?:\[[0-9]*\])?[ \t]*[:=][ \t]*[\[{][ \t]*)(?:(?:0x)?[0-9a-f]{1,3}[ \t]*,[ \t]*){15,}(?:0x)?[0-9a-f]{1,3}"#,
            b"${1}[REDACTED]",
        ),
        // A password after its scheme in braces (Dovecot's `user:{PLAIN}X:…`, `{SHA512-CRYPT}…`,
        // LDAP's `{SSHA}…`).
        fixed(
            &[
                "{plain", "{clear", "crypt}", "{ssha", "{sha", "{md5", "{smd5", "{argon2",
                "{pbkdf2",
            ],
            r"(?i-u)(\{(?:plain|cleartext|clear|plain-md5|crypt|md5-crypt|sha256-crypt|sha512-crypt|blf-crypt|ssha|ssha256|ssha512|sha|sha256|sha512|smd5|md5|argon2i|argon2id|pbkdf2)\})[^\s:]+",
            b"${1}[REDACTED]",
        ),
        // SQL Server's `sp_addlogin 'login', 'X'` (positional or named).
        fixed(
            &["sp_addlogin"],
            r"(?i-u)(\bsp_addlogin[ \t]+(?:@loginame[ \t]*=[ \t]*)?N?'[^'\n]*'[ \t]*,[ \t]*(?:@passwd[ \t]*=[ \t]*)?N?')[^'\n]+(')",
            b"${1}[REDACTED]${2}",
        ),
        // Maven's master password (settings-security.xml: `<master>{…}</master>`).
        fixed(
            &["<master>"],
            r"(?-u)(<master>\{)[A-Za-z0-9+/=]{16,}(\}</master>)",
            b"${1}[REDACTED]${2}",
        ),
        // A directive and its value on a line of their own, a space between (Fluentd's
        // `shared_key X`, `private_key_passphrase X`): a value with a capital and a digit, as
        // generated and chosen passwords have (prose says "password required", a setting
        // `token expires_in3600`).
        rule(
            KEY_WORDS,
            format!(
                r#"(?m-u)^[ \t]*(?P<key>(?i:[a-z0-9_]*?(?P<core>{KEY_CORE})[a-z0-9_]*))(?P<sep>[ \t]+)(?P<value>{V}*(?:[A-Z]{V}*[0-9]|[0-9]{V}*[A-Z]){V}*)[ \t]*;?[ \t\r]*$"#,
                V = r#"[^\s"'#;{}<>]"#
            ),
            With::KeyValue,
        ),
        // A COBOL data item named after a secret, its `VALUE 'X'`.
        fixed(
            KEY_WORDS,
            format!(
                r#"(?i-u)(\b[0-9]{{2}}[ \t]+[a-z0-9-]*?{KEY_CORE}[a-z0-9-]*[ \t]+PIC(?:TURE)?[ \t][^\n.]*?\bVALUE[ \t]+)(["'])[^"'\n]+(["'])"#
            ),
            b"${1}${2}[REDACTED]${3}",
        ),
        // MySQL's first start: `A temporary password is generated for root@localhost: X` (any
        // characters: `hj,F7p/qV(9x`).
        fixed(
            &["temporary password"],
            r"(?i-u)(\btemporary password is generated for \S+:[ \t]+)\S+",
            b"${1}[REDACTED]",
        ),
        // GitHub Actions' `::add-mask::X`: what a workflow masks is a secret.
        fixed(
            &["::add-mask::"],
            r"(?-u)(::add-mask::)[^\s$][^\n]*",
            b"${1}[REDACTED]",
        ),
    ]
}

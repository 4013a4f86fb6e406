//! Redaction rules for databases' own login spellings: Oracle's `user/X@db` connect strings
//! (SQL*Plus, RMAN, Data Pump, SQL*Loader, exp/imp and their parameter files), DB2's `USER
//! name USING X`, SQLCipher's `PRAGMA key`. Part of the ordered rule table of `redact_rules`
//! (`RULES`), in its place there.

use super::redact_rule::{Rule, fixed};

pub(super) fn rules() -> Vec<Rule> {
    vec![
        // A password for a connect string, `user/X@db` (`sqlplus system/X@XE`, `CONNECT
        // scott/X@orcl`; `connect` needs its `@`: "connect to/from" is prose).
        fixed(
            &["sqlplus", "rman", "expdp", "impdp", "sqlldr"],
            r"(?im-u)(\b(?:sqlplus|rman|expdp|impdp|sqlldr)(?:[ \t]+-[a-z]+)*[ \t]+[a-z0-9_$#]+/)[^\s@/]+(@|[ \t]|$)",
            b"${1}[REDACTED]${2}",
        ),
        fixed(
            &["connect", "conn "],
            r"(?i-u)(\bconn(?:ect)?[ \t]+[a-z0-9_$#]+/)[^\s@/]+@",
            b"${1}[REDACTED]@",
        ),
        // Oracle's export and import tools take the same `user/X@db` (`exp system/X@prod`,
        // `imp …`, or a parameter after it: `exp scott/X file=a.dmp`), and their parameter
        // files `userid=user/X@db`; "export/import" and "and/or" are prose.
        fixed(
            &["exp ", "imp ", "userid"],
            r"(?i-u)(\b(?:(?:exp|imp)(?:[ \t]+-?[a-z]+)*[ \t]+|userid[ \t]*=[ \t]*)[a-z0-9_$#]+/)[^\s@/]+(@|[ \t]+[a-z_]+=)",
            b"${1}[REDACTED]${2}",
        ),
        // DB2's `CONNECT TO db USER name USING X` (and `ATTACH TO node …`).
        fixed(
            &["using"],
            r"(?i-u)(\b(?:connect|attach)[ \t]+to[ \t]+\S+[ \t]+user[ \t]+\S+[ \t]+using[ \t]+)[^\s;]+",
            b"${1}[REDACTED]",
        ),
        // SQLCipher's key: `PRAGMA key = 'X'` (`rekey`, `hexkey`, a schema's `db.key`); not
        // `PRAGMA key_length`.
        fixed(
            &["pragma"],
            r#"(?i-u)(\bpragma[ \t]+(?:[a-z0-9_]+\.)?(?:re)?(?:hex)?key[ \t]*=[ \t]*)(?:"[^"\n]+"|'[^'\n]+'|[^\s;'"]+)"#,
            b"${1}'[REDACTED]'",
        ),
    ]
}

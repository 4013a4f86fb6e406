//! Redaction rules for commands: a password given to a tool on its command line (argv flags,
//! tools' own flags and positions, network devices' configuration lines, registry logins).
//! Part of the ordered rule table of `redact_rules` (`RULES`).

use super::redact_rule::{KEY_CORE, Rule, With, fixed, rule};

pub(super) fn rules() -> Vec<Rule> {
    vec![
        // csh's `setenv NAME VALUE` and fish's `set -x NAME VALUE` (`-gx`, `--export`): a
        // variable named after a secret, its value after a space (not a variable, `$X`, nor a
        // command's output, `(cat f)`).
        fixed(
            &["setenv", "set -"],
            format!(
                r#"(?i-u)(\b(?:setenv|set[ \t]+(?:-[a-z]*x[a-z]*|--export)(?:[ \t]+-[a-z]+)*)[ \t]+[a-z0-9_]*{KEY_CORE}[a-z0-9_]*[ \t]+)(?:"[^"$\n][^"\n]*"|'[^'$\n][^'\n]*'|[^\s"';$(<>|&][^\s"';]*)"#
            ),
            b"${1}[REDACTED]",
        ),
        // A tool's `set NAME X` (`dotenv set API_SECRET X`): a variable named after a secret,
        // in capitals, and a value with a digit (prose sets a word: "set DB_PASSWORD before").
        fixed(
            &["secret", "passw", "token", "key", "credential"],
            r#"(?-u)(\bset[ \t]+["']?[A-Z][A-Z0-9_]*(?:SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|APIKEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?)[A-Z0-9_]*["']?[ \t]+)(?:"[^"$\n]*[0-9][^"\n]*"|'[^'$\n]*[0-9][^'\n]*'|[^\s"';$(<>|&-][^\s"';0-9]*[0-9][^\s"';]*)"#,
            b"${1}[REDACTED]",
        ),
        // openssl's `-k X` (enc's password).
        fixed(
            &["openssl"],
            r#"(?-u)(\bopenssl[ \t]+[^\n]*?[ \t]-k[ \t]+)[^\s"'$-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // (A value in a subexpression, `--password "$(openssl passwd …)"` or `-Password
        // (ConvertTo-SecureString 'X' …)`, is code: the rules for what runs inside see it.)
        // The password of an argv flag: `--password X`, `--token X` (`--tls-bootstrap-token
        // X`; a first word of three letters or more: `--no-password` is a switch), curl's `-u
        // user:pass` (jenkins-cli's `-auth`, ZooKeeper's `addauth digest`), `sshpass -p X`,
        // `redis-cli -a X`, `mysql -pX`, `psexec -p X`; and .netrc's `password X`. A flag
        // follows a space or tab on its line (never the line's start, which is no command but
        // a usage text's `--password requires a value`, nor a line break: a rule must give
        // the same answer wherever a block is cut).
        fixed(
            &[
                "-pass",
                "-token",
                "-api",
                "-secret",
                "-key",
                "storepass",
                "keypass",
            ],
            r#"(?i-u)([ \t]--?(?:[a-z0-9]{3,}-(?:[a-z0-9]+-)*)?(?:password|passwd|passphrase|pass|token|api-key|apikey|secret|client-secret|access-token|auth-token|private-key|key-password|(?:src|dest|new|old)?storepass|(?:src|dest|new|old)?keypass|passout|passin)(?:[ \t]+|=))(?:"(?:[^"\n$]|\$[^("\n])[^"\n]*"|'(?:[^'\n$]|\$[^('\n])[^'\n]*'|\$[^\s"';(][^\s"';]*|[^\s"';<>|&($][^\s"';]*)"#,
            b"${1}[REDACTED]",
        ),
        // A camelCase flag (`-vaultToken s.…`, `--dbPassword=…`; not a variable or the next
        // flag), and a flag at a line's start when its value holds a digit (`--tls-bootstrap-token
        // abcdef.0123…` pasted alone; a usage text's `--password requires a value` holds none).
        fixed(
            &[
                "token",
                "passw",
                "secret",
                "apikey",
                "accesskey",
                "pass ",
                "pass=",
            ],
            r#"(?-u)([ \t\x60"'(]--?[a-z][a-z0-9]{2,}(?:Token|Password|Passwd|Secret|ApiKey|AccessKey|SecretKey|Pass)(?:[ \t]+|=))(?:"[^"\n]*"|'[^'\n]*'|[^\s"';$%-][^\s"';]*)"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["-pass", "-token", "-api", "-secret"],
            r#"(?im-u)^(--?(?:[a-z0-9]{3,}-(?:[a-z0-9]+-)*)?(?:password|passwd|token|secret|api-key|apikey|client-secret|access-token|auth-token)(?:[ \t]+|=))[^\s"';$%-]*[0-9][^\s"';]*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["-u", "-auth", "addauth", "-creds"],
            r#"(?-u)((?:^|\s)(?:-u|--user|--proxy-user|-U|-auth|--auth|addauth[ \t]+digest|--(?:src-|dest-)?creds)(?:[ \t]+|=)['"]?[^\s:'"]+:)[^\s'"$][^\s'"]*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["sshpass", "redis-cli", "mysql", "mongo", "psexec", "conan"],
            r#"(?i-u)(\b(?:sshpass|redis-cli|mysql|mysqldump|mysqladmin|mongosh|mongo|conan|psexec(?:64)?(?:\.exe)?)\b[^\n]*?[ \t"',]-(?:p|a|-pass)[ \t]?)[^\s"'$%-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // Other tools' password flags: LDAP's `-w`, SQL Server's and zip's `-P`, ssh-keygen's
        // `-N`/`-P`, 7-Zip's and RAR's glued `-pX`, smbclient's `-U user%X`, lftp's `-u user,X`,
        // `htpasswd -b [file] user X`, `net use … /user:me X`, `mysqladmin … password X`.
        tool_flag(
            &["ldap"],
            "ldap(?:search|add|modify|delete|compare|passwd|whoami|moddn|exop)",
            "w",
        ),
        // ldappasswd's `-s X`: the new password.
        tool_flag(&["ldappasswd"], "ldappasswd", "s"),
        tool_flag(
            &[
                "sqlcmd",
                "bcp",
                "osql",
                "isql",
                "zip",
                "ssh-keygen",
                "mosquitto_",
            ],
            "(?:sqlcmd|bcp|osql|isql|zip|ssh-keygen|mosquitto_(?:pub|sub|rr))",
            "[PN]",
        ),
        fixed(
            &["7z", "rar"],
            r#"(?-u)(\b(?:7z|7za|7zz|7zr|unrar|rar)\b[^\n]*?[ \t]-h?p)[^\s"'$%-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["smbclient", "lftp"],
            r#"(?-u)(\bsmbclient\b[^\n]*?[ \t](?:-U|--user)[ \t=]?["']?[^\s%"']+%|\blftp\b[^\n]*?[ \t]-u[ \t]+[^\s,]+,)[^\s"']+"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["htpasswd", "mosquitto_passwd"],
            r#"(?-u)(\b(?:htpasswd|mosquitto_passwd)[ \t]+(?:-[a-zA-Z]+[ \t]+)*-[a-zA-Z]*b[a-zA-Z]*[ \t]+(?:-[a-zA-Z]+[ \t]+)*(?:[^\s-][^\s]*[ \t]+){1,2})[^\s$%]\S*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["net use", "net user", "mysqladmin"],
            r#"(?i-u)(\bnet[ \t]+use\b[^\n]*?[ \t]/user:\S+[ \t]+|\bnet[ \t]+user[ \t]+\S+[ \t]+|\bmysqladmin\b[^\n]*?[ \t]password[ \t]+["']?)[^\s/"'$%*][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // `openssl passwd [options] X`, `mkpasswd [options] X`: the last word, when it is no
        // option.
        fixed(
            &["openssl passwd", "mkpasswd"],
            r"(?m-u)(\b(?:openssl[ \t]+passwd|mkpasswd)\b[^\n)]*[ \t])[^\s-][^\s]*[ \t]*$",
            b"${1}[REDACTED]",
        ),
        // The same inside a command substitution (`$(openssl passwd -6 'X')`).
        fixed(
            &["openssl passwd", "mkpasswd"],
            r#"(?-u)(\$\((?:openssl[ \t]+passwd|mkpasswd)\b[^\n)]*[ \t]["']?)[^\s"'()$-][^\s"'()]*(["']?\))"#,
            b"${1}[REDACTED]${2}",
        ),
        // Apple's `altool … -p X` (an app-specific password; `@keychain:` and `@env:` name
        // where it is), Poetry's and Composer's `config http-basic.NAME user X`, a
        // here-string given to `sudo -S`, a one-line expect script's `send` after a password
        // prompt.
        fixed(
            &["altool"],
            r#"(?-u)(\baltool\b[^\n]*?[ \t](?:-p|--password)[ \t]+["']?)[^\s"'@$-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["http-basic"],
            r#"(?-u)(\b(?:poetry|composer)[ \t]+config[ \t]+(?:--global[ \t]+)?http-basic\.\S+[ \t]+\S+[ \t]+["']?)[^\s"'$-][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["<<<"],
            r#"(?-u)(\bsudo[ \t]+(?:-[a-zA-Z]+[ \t]+)*-[a-zA-Z]*S[a-zA-Z]*[ \t]+<<<[ \t]*["']?)[^\s"'$][^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["expect"],
            r#"(?i-u)(\bexpect\b[^\n]*?(?:assw|passphrase)[^\n]*?\bsend[ \t]+(?:-- )?\\?["'])[^"'\\\n$][^"'\\\n]*"#,
            b"${1}[REDACTED]",
        ),
        // `echo 'root:X' | chpasswd`, Redis' `requirepass X` and `masterauth X`, network
        // devices' `username u password 0 X` and `enable secret X` (at a line's start: prose
        // says "username and password to …"), SNMP communities, HAProxy's `insecure-password
        // X`.
        fixed(
            &["chpasswd"],
            r#"(?-u)(\becho[ \t]+(?:-[ne][ \t]+)?["']?[^\s:'"]+:)[^\s'"]+(["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd)"#,
            b"${1}[REDACTED]${2}",
        ),
        // A secret echoed into a command that stores it or logs in with it (`echo -n "X" |
        // gcloud secrets create NAME --data-file=-`, `printf X | docker secret create NAME -`,
        // `echo X | docker login -u me --password-stdin`, `gh secret set`, `kubectl create
        // secret`, `passwd --stdin`, `kinit`, `sudo -S`, `cryptsetup`); a variable or a
        // command's output (`"$TOKEN"`) stays.
        fixed(
            &[
                "secret",
                "-stdin",
                "data-file",
                "kinit",
                "sudo",
                "cryptsetup",
            ],
            r#"(?i-u)(\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*(?:(?:'%s'|"%s"|%s)[ \t]+)?["']?)[^"'\s$|`%<>;&-][^"'\n|;&`]*?(["']?[ \t]*\|[ \t]*(?:sudo[ \t]+)?[^\n|]*?(?:\bsecrets?[ \t]+(?:create|set|put|add|versions[ \t]+add)\b|--password-stdin|--data-file[ \t=]+-|\bpasswd[ \t]+--stdin|\bcreate[ \t]+secret\b|\bkinit\b|\bsudo[ \t]+(?:-[a-zA-Z]+[ \t]+)*-[a-zA-Z]*S|\bcryptsetup\b))"#,
            b"${1}[REDACTED]${2}",
        ),
        fixed(
            &[
                "requirepass",
                "masterauth",
                "username",
                "enable",
                "community",
                "insecure-password",
            ],
            r#"(?im-u)(\b(?:requirepass|masterauth|insecure-password)[ \t]+["']?|^[ \t]*(?:username[ \t]+\S+[ \t]+(?:privilege[ \t]+[0-9]+[ \t]+)?(?:password|secret)|enable[ \t]+(?:password|secret))[ \t]+(?:[0-9][ \t]+)?)(?:[^\s"'$%<{0-9]|[0-9][^\s"'])[^\s"']*"#,
            b"${1}[REDACTED]",
        ),
        // SNMP's community (`snmp-server community X RO`, net-snmp's `rocommunity X`): a
        // key/value, so that the defaults `public` and `private` stay (they say the device
        // takes the well-known string).
        rule(
            &["community"],
            r#"(?i-u)(?P<key>(?:\bsnmp-server[ \t]+|\b[rw][ow])(?P<core>community)6?)(?P<sep>[ \t]+["']?)(?P<value>(?:[^\s"'$%<{0-9]|[0-9][^\s"'])[^\s"']*)"#,
            With::KeyValue,
        ),
        // Redis' ACL (`user app on >X ~* +@all`, `ACL SETUSER app on >X`): `>` adds a password.
        fixed(
            &["user "],
            r#"(?im-u)((?:^[ \t]*user|\bacl[ \t]+setuser)[ \t]+\S+[ \t]+(?:\S+[ \t]+)*?>)[^\s"']+"#,
            b"${1}[REDACTED]",
        ),
        // strongSwan's and Libreswan's secrets file: `: PSK "X"`, `host : EAP X`, `: XAUTH X`.
        fixed(
            &["psk", "eap", "xauth", "ntlm"],
            r#"(?-u)(:[ \t]*(?:PSK|EAP|XAUTH|NTLM)[ \t]+)(?:"[^"\n]+"|'[^'\n]+'|[^\s"'$][^\s]*)"#,
            b"${1}[REDACTED]",
        ),
        // NetworkManager's properties on nmcli's command line (`wifi-sec.psk X`,
        // `802-1x.password X`, `vpn.secrets X`) and a WEP key given to iwconfig (`key s:X`).
        fixed(
            &["nmcli", "iwconfig"],
            r#"(?-u)(\b(?:nmcli\b[^\n]*?[ \t][a-z0-9-]+\.(?:psk|password|secrets|wep-key[0-3]|leap-password|pin)|iwconfig\b[^\n]*?[ \t]key(?:[ \t]+\[[0-9]\])?)[ \t]+(?:s:)?)[^\s"'$-][^\s]*"#,
            b"${1}[REDACTED]",
        ),
        // A registry login's `-p` (`docker login -u me -p X`; only after `login`: `docker run
        // -p 8080:80` publishes a port).
        fixed(
            &["login"],
            r#"(?-u)(\b(?:docker|podman|buildah|skopeo|helm|oras|nerdctl|az|cf)\b[^\n]*?\blogin\b[^\n]*?[ \t]-p[ \t]?)[^\s-][^\s]*"#,
            b"${1}[REDACTED]",
        ),
        // Passwords on the wire, as a protocol's transcript shows them: IRC's `/msg NickServ
        // IDENTIFY [account] X`, FTP's and POP3's `PASS X` (a line of its own, maybe after a
        // transcript's `C:`: a test runner's `PASS  src/x.test.ts` names a path), IMAP's `a1
        // LOGIN user X` (a tag of letters and digits: `User login ann failed`, `3 login
        // attempts failed` are prose; `{6}` announces a literal), SMTP's
        // `AUTH PLAIN <base64>` (`250-AUTH PLAIN LOGIN` announces mechanisms).
        fixed(
            &["identify"],
            r#"(?i-u)(\b(?:nickserv|ns)[ \t]+:?identify[ \t]+(?:[^\s"']+[ \t]+)?)[^\s"'$]+"#,
            b"${1}[REDACTED]",
        ),
        fixed(
            &["pass ", "login ", "auth plain"],
            r#"(?m-u)(^(?:C:[ \t]*|>[ \t]*)?PASS[ \t])[^\s/:$][^\s/:]*([ \t\r]*)$|(^(?:[A-Za-z]+[0-9]+|[0-9]+[A-Za-z]+)[A-Za-z0-9.]*[ \t]+(?:LOGIN|login)[ \t]+"?[^\s"]+"?[ \t]+"?)[^\s"${][^\s"]*("?[ \t\r]*)$|(\bAUTH[ \t]+PLAIN[ \t]+)[A-Za-z0-9+/]{8,}={0,2}"#,
            b"${1}${3}${5}[REDACTED]${2}${4}",
        ),
        // net-snmp's passphrases (`snmpwalk -v3 … -A X -x AES -X Y`: `-A` authentication,
        // `-X` privacy), one rule each so both are found on one line; IPMI's `-P`.
        tool_flag(&["snmp"], "snmp[a-z]*", "A"),
        tool_flag(&["snmp"], "snmp[a-z]*", "X"),
        tool_flag(&["ipmitool"], "ipmitool", "P"),
        // net-snmp's v1/v2c community (`snmpwalk -v2c -c X host`).
        tool_flag(&["snmp"], "snmp[a-z]*", "c"),
        // VMware's guest password (`vmrun -gu ann -gp X`), WinRM's shell (`winrs -p:X`),
        // InfluxDB's user commands (`influx user password -n ann -p X`; `influx write -p s` is a
        // precision).
        tool_flag(&["vmrun"], "vmrun", "gp"),
        tool_flag(&["winrs"], "winrs", "p(?:assword)?:"),
        tool_flag(
            &["influx"],
            r"influx[ \t]+(?:setup|user[ \t]+(?:create|password))",
            "p",
        ),
        // A token or password given as a command's word: `cargo login X`, `vault login X`,
        // `snyk auth X`, `rclone obscure X`; `sshpass -f <(echo X)`; a here-string to a password
        // tool (`vncpasswd -f <<< X`).
        fixed(
            &["login", "snyk", "obscure", "sshpass", "<<<"],
            r#"(?-u)(\b(?:(?:cargo|vault|bao)[ \t]+login|snyk[ \t]+auth|rclone[ \t]+obscure)[ \t]+|\bsshpass\b[^\n]*?-f[ \t]*<\([ \t]*(?:echo|printf)[ \t]+(?:-n[ \t]+)?["']?|\b[a-z0-9_-]*passw[a-z0-9_-]*\b[^\n<]*<<<[ \t]*["']?)[^\s$<>|&"'()-][^\s"'()]*"#,
            b"${1}[REDACTED]",
        ),
        // A literal echoed into a file named after a secret (`echo "X" >
        // ~/.gnupg/passphrase.txt`, `>> .vault_pass`, `> token`).
        fixed(
            &["echo", "printf"],
            r#"(?im-u)(\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)*["']?)[^"'\s$|`%<>;&-][^"'\n|;&`<>]*?(["']?[ \t]*>>?[ \t]*[^\s|;&<>]*(?:pass|secret|token|cred)[^\s|;&<>/]*(?:[ \t;&]|$))"#,
            b"${1}[REDACTED]${2}",
        ),
        fixed(
            &["machine"],
            r"(?i-u)(\bmachine[ \t]+\S+[ \t]+login[ \t]+\S+[ \t]+password[ \t]+)\S+",
            b"${1}[REDACTED]",
        ),
    ]
}

/// A tool's password flag (`ldapsearch … -w X`, `ipmitool … -P X`): the value after the flag
/// anywhere after the tool's name on its line, joined to it or not, quoted or not; not a
/// variable (`$X`, `%X%`) nor the next flag. `tools` and `flag` are regex pieces.
fn tool_flag(anchors: &'static [&'static str], tools: &str, flag: &str) -> Rule {
    fixed(
        anchors,
        format!(r#"(?-u)(\b{tools}\b[^\n]*?[ \t]-{flag}[ \t]?["']?)[^\s"'$%-][^\s"']*"#),
        b"${1}[REDACTED]",
    )
}

// The tests of redact_next.rs (a file of their own: the module is long).

use super::*;

/// Each text's lines through the state, as `Redactor` does.
fn run(text: &str) -> String {
    let mut state = None;
    let mut out = Vec::new();
    for line in text.split('\n') {
        let b = line.as_bytes();
        let taken = state.and_then(|p| follow(p, b));
        match taken {
            Some((l, s)) => {
                out.push(String::from_utf8(l).unwrap());
                state = s;
            }
            None => {
                out.push(line.to_string());
                state = opens(b);
            }
        }
    }
    out.join("\n")
}

#[test]
fn a_value_on_the_lines_after_its_key_is_redacted() {
    let cases = [
        (
            "<config>\n  <password>\n    hunter2xml\n  </password>\n</config>",
            "hunter2xml",
        ),
        ("<apiKey>\nAKEYONNEXTLINE\n</apiKey>", "AKEYONNEXTLINE"),
        ("password:\n  s3cretOnNext", "s3cretOnNext"),
        (
            "{\n  \"client_secret\":\n    \"cs-next-line\",\n  \"x\": 1\n}",
            "cs-next-line",
        ),
        (
            "tls:\n  private_key: |\n    MIIEvQIBADANBgkq\n    hkiG9w0BAQEFAASC\n  cert: x",
            "hkiG9w0BAQEFAASC",
        ),
        (
            "token: >-\n  folded.token.value\n\nnext: 1",
            "folded.token.value",
        ),
        (
            "machine api.example.com\n  login me@example.com\n  password netrcNextLine1\n",
            "netrcNextLine1",
        ),
        ("default\n  login anon\n  password anonPw42", "anonPw42"),
        (
            "variable \"okta_api_token\" {\n  type = string\n  default = \"004EWTpRQTxyz\"\n}",
            "004EWTpRQTxyz",
        ),
        (
            "An admin user has been created.\nPlease use this password to log in:\n\n  bd9627decc6346d7a\n",
            "bd9627decc6346d7a",
        ),
        (
            "env:\n  - name: API_TOKEN\n    value: \"k8sTok-4411\"\n  - name: MODE",
            "k8sTok-4411",
        ),
        (
            "- ParameterKey: DBPassword\n  ParameterValue: cfnPar-9x",
            "cfnPar-9x",
        ),
        (
            "[{\"Name\": \"API_TOKEN\",\n  \"Value\": \"ssmTok-77\"}]",
            "ssmTok-77",
        ),
        (
            "<property>\n  <name>fs.s3a.secret.key</name>\n  <value>hadoopKey9</value>",
            "hadoopKey9",
        ),
        (
            "<stringProp name=\"Argument.name\">password</stringProp>\n<stringProp name=\"Argument.value\">jmPw-123</stringProp>",
            "jmPw-123",
        ),
        ("1) \"masterauth\"\n2) \"redisAuth-5\"", "redisAuth-5"),
        (
            "<dict>\n  <key>ClientSecret</key>\n  <string>plistCs-77</string>\n</dict>",
            "plistCs-77",
        ),
        (
            "spawn ssh ann@db\nexpect \"*assword:\"\nsend \"expPw-4411\\r\"\ninteract",
            "expPw-4411",
        ),
        (
            "child.expect('Enter passphrase')\nchild.sendline('pexPw-77')",
            "pexPw-77",
        ),
        (
            "NAME    USER   PASSWORD\ndb1     ann    tblPw-5501\ndb2     bob    tblPw-5502",
            "tblPw-550",
        ),
        ("id\tname\tapi_key\n7\tci\ttabKey-81x", "tabKey-81x"),
        (
            "ID\tDescription\tToken\n0a1b2c\t\ttabTok-86xyz==",
            "tabTok-86xyz",
        ),
        // A block named for its secrets; a made secret printed after its announcement.
        (
            "secrets {\n  db = \"blockDb-71\"\n  api: blockApi-72\n}",
            "blockApi-72",
        ),
        ("credentials = {\n  'ci' = 'blockCi-73'\n}", "blockCi-73"),
        (
            "The API token was regenerated.\nNew token: regen7Tok9x",
            "regen7Tok9x",
        ),
        // A CloudFormation parameter named after a secret: its default.
        (
            "ApiToken:\n  Type: String\n  NoEcho: true\n  Default: Cfn-T0ken9\nOther: x",
            "Cfn-T0ken9",
        ),
        // SMTP's AUTH LOGIN: the client's answer to the base64 "Password:".
        ("334 UGFzc3dvcmQ6\nc2VjcmV0LVNtdHA5", "c2VjcmV0LVNtdHA5"),
        // CSV (a quoted field may hold commas) and a Markdown table.
        (
            "id,name,email,password\n8,\"Smith, Al\",al@x.org,csvPw-4471\n9,eve,e@x,csvPw-4472",
            "csvPw-447",
        ),
        ("user,token\nbob,\"csvTok,9Q\"", "csvTok"),
        (
            "| user | api_key |\n|------|---------|\n| bob  | mdKey-71Zq |",
            "mdKey-71Zq",
        ),
        (
            "$ aws ecr get-login-password\neyJwYXlsb2FkIjoiZWNyIn0x9",
            "eyJwYXlsb2FkIjoiZWNyIn0x9",
        ),
        ("gh auth token\ngho_printedToken123", "gho_printedToken123"),
        (
            ">>> os.environ[\"API_TOKEN\"]\n'replTok-5521'\n>>> 1",
            "replTok-5521",
        ),
        (
            "pry(main)> Rails.application.credentials.secret_key_base\n=> \"pryRes-77ab\"",
            "pryRes-77ab",
        ),
        (
            "db_password = <<-END\n  heredoc-secret-9\n  END\nnext = 1",
            "heredoc-secret-9",
        ),
        (
            "-----BEGIN OpenVPN Static key V1-----\n0a1b2c3d4e5f60718293a4b5c6d7e8f9\n-----END OpenVPN Static key V1-----",
            "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        ),
        // A YAML tag before the block scalar (Ansible's vault).
        (
            "db_password: !vault |\n  $ANSIBLE_VAULT;1.1;AES256\n  6231386436336334\nport: 5432",
            "6231386436336334",
        ),
    ];
    for (text, secret) in cases {
        let out = run(text);
        assert!(!out.contains(secret), "{text:?} -> {out:?}");
        assert!(out.contains(MARK), "{out:?}");
        assert_eq!(
            out.lines().count(),
            text.lines().count(),
            "one line each: {out:?}"
        );
    }
    // What follows the value is kept: the closing tag, the next key, the cert.
    assert!(run("<password>\n  pw1234567\n</password>").ends_with("</password>"));
    assert!(run("tls:\n  private_key: |\n    MIIE\n  cert: x").ends_with("  cert: x"));
}

#[test]
fn look_alikes_on_the_lines_after_a_key_are_kept() {
    let cases = [
        // A variable, a placeholder, a nested structure, a sentence.
        "password:\n  ${DB_PASSWORD}",
        "<password>\n  {{ vault_password }}\n</password>",
        "secrets:\n  - name: db\n    value: x",
        "api_key =\n  os.environ[\"API_KEY\"] + suffix",
        "token:\n  type: string\n  description: the token",
        // No key word: nothing pending.
        "results:\n  passedCount",
        // A self-closing element, a closing tag.
        "<password/>\nnext line stays",
        "</password>\nnext line stays",
        // A .netrc entry ends at a blank line.
        "machine a.example.com login me\n\npassword is required here",
        // A variable not named after a secret; a default outside the block.
        "variable \"region\" {\n  default = \"eu-west-1abc\"\n}",
        "variable \"db_password\" {\n  type = string\n}\ndefault = \"kept1234\"",
        // A name that is no secret's, a value taken from elsewhere, a certificate.
        "- name: MODE\n  value: fast2024",
        "- ParameterKey: Environment\n  ParameterValue: prod-2024",
        "<key>APIKey</key>\n<string>$(API_KEY)</string>",
        "<key>CFBundleName</key>\n<string>Shop2024</string>",
        "<name>fs.s3a.endpoint</name>\n<value>s3.example.com</value>",
        "1) \"maxmemory\"\n2) \"1073741824\"",
        "- name: DB_PASSWORD\n  value: ${DB_PASSWORD}",
        "<name>db.password</name>\n<description>the password</description>",
        "expect \"Password:\"\nsend \"$pass\\r\"",
        "expect \"login:\"\nsend \"ann\\r\"",
        "expect \"Password:\"\nputs \"sent\"\nsend \"later\\r\"",
        // A table without a secret's column; one whose rows stop lining up; a command
        // that prints no secret.
        "NAME    TYPE    DATA   AGE\ndb      Opaque  2      5d",
        "NAME    TOKEN\n\nafter-blank-2024x",
        "Tokens  Saved\n12000   9000x",
        // A block's own closing brace and what follows it; an announcement followed by a
        // label that is not the secret's, or a word that is not random.
        "tokens {\n}\nnext = kept-2024x",
        "Password reset email sent.\nRequest id: a1b2c3d4e5",
        "Token created.\nNew value: pending",
        // A parameter without a default; a default after the mapping ended.
        "DbPassword:\n  Type: String\n  Description: the password\nDefault: kept2024x",
        // SMTP asking for the user name (base64 "Username:"), not the password.
        "334 VXNlcm5hbWU6\nYWxpY2U=",
        // A CSV column that is no secret's; a row with other fields (prose); a Markdown
        // table's column of words.
        "id,name,email,password_hash\n7,bob,b@x,plainlook2024",
        "id,password\nthe file lists a user, a password and more: pw2024abc",
        "| option | token |\n|---|---|\n| --token | the token to use |",
        "gh auth status\nLogged-in-2024",
        "Token expired at 2026-01-01T00:00:00Z\nrenew-2024abc",
        "- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----",
        "motd = <<EOF\nwelcome 2024\nEOF",
        // A REPL reading no secret; a secret's prompt followed by no literal.
        ">>> settings.DEBUG\n'on-2024'",
        ">>> len(token)\n42",
        // A prompt followed by a sentence, a plain word, a short one.
        "Checking token permissions:\n  read access granted",
        "Enter the password for admin:\nsucceeded",
        "The secret was rotated on:\n2024-01-01",
    ];
    for text in cases {
        assert_eq!(run(text), text, "{text:?}");
    }
}

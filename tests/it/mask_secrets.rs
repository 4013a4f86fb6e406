//! `baton mask` and secrets: every spelling in the shared table is gone from the summary, and
//! with `--redact-scratch` (or `[mask] redact_scratch = true`) from the scratch file too;
//! look-alikes survive both.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use serde_json::Value;

include!("../../crates/baton-context/src/mask/redact_cases.rs");

fn project(toml: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("baton.toml"), toml).unwrap();
    dir
}

/// Mask `input` from stdin (always masked: threshold 1); the JSON printed and the scratch
/// file's bytes.
fn mask(dir: &Path, extra: &[&str], input: &str) -> (Value, String) {
    let out = Command::cargo_bin("baton")
        .unwrap()
        .current_dir(dir)
        .args(["mask", "--threshold", "1", "--kind", "generic"])
        .args(extra)
        .write_stdin(input)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["masked"], true, "{v}");
    let path = PathBuf::from(v["full_output_path"].as_str().unwrap());
    let scratch = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).unwrap();
    (v, scratch)
}

#[test]
fn each_secret_is_gone_from_the_summary_and_the_redacted_scratch_file() {
    assert!(SECRETS.len() >= 30);
    let p = project("");
    for (line, secret) in SECRETS {
        let (v, scratch) = mask(p.path(), &["--redact-scratch"], &format!("{line}\n"));
        let printed = v.to_string();
        assert!(!printed.contains(secret), "{line}: {printed}");
        assert!(
            v["head"][0].as_str().unwrap().contains("[REDACTED]"),
            "{line}: {v}"
        );
        assert!(!scratch.contains(secret), "{line}: {scratch}");
        assert!(scratch.contains("[REDACTED]"), "{line}: {scratch}");
        assert_eq!(
            scratch,
            format!("{}\n", v["head"][0].as_str().unwrap()),
            "{line}"
        );
    }
}

#[test]
fn by_default_the_scratch_file_keeps_the_full_text() {
    let p = project("");
    let all: String = SECRETS.iter().map(|(l, _)| format!("{l}\n")).collect();
    let (v, scratch) = mask(p.path(), &[], &all);
    assert_eq!(scratch, all);
    let printed = v.to_string();
    for (line, secret) in SECRETS {
        assert!(!printed.contains(secret), "{line}: {printed}");
    }
}

#[test]
fn the_config_setting_redacts_the_scratch_file() {
    let p = project("[mask]\nredact_scratch = true\n");
    let all: String = SECRETS.iter().map(|(l, _)| format!("{l}\n")).collect();
    let (_, scratch) = mask(p.path(), &[], &all);
    for (line, secret) in SECRETS {
        assert!(!scratch.contains(secret), "{line}: {scratch}");
    }
    // One line out per line in: line numbers in a summary still point at the right line.
    assert_eq!(scratch.lines().count(), SECRETS.len());
}

#[test]
fn look_alikes_survive_the_summary_and_the_scratch_file() {
    assert!(LOOK_ALIKES.len() >= 10);
    let p = project("");
    for line in LOOK_ALIKES {
        let (v, scratch) = mask(p.path(), &["--redact-scratch"], &format!("{line}\n"));
        assert_eq!(v["head"][0], *line, "{v}");
        assert_eq!(scratch, format!("{line}\n"));
    }
}

#[test]
fn a_private_key_block_is_redacted_in_the_scratch_file() {
    let p = project("");
    let text = "start\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAAB3\n\
                -----END OPENSSH PRIVATE KEY-----\nend\n";
    let (v, scratch) = mask(p.path(), &["--redact-scratch"], text);
    assert!(!v.to_string().contains("b3BlbnNzaC1rZXk"), "{v}");
    assert!(
        !scratch.contains("b3BlbnNzaC1rZXk") && !scratch.contains("AAAAB3"),
        "{scratch}"
    );
    assert_eq!(scratch.lines().count(), 6, "{scratch}");
    assert!(
        scratch.starts_with("start\n") && scratch.ends_with("\nend\n"),
        "{scratch}"
    );
}

#[test]
fn an_unknown_mask_setting_is_refused() {
    let p = project("[mask]\nredact = true\n");
    let out = Command::cargo_bin("baton")
        .unwrap()
        .current_dir(p.path())
        .args(["mask", "--", "true"])
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("redact"));
}

/// The corpus holds no real secret. Its tool outputs and documents must come out untouched:
/// every line redaction changes there is a false positive (real output is full of hashes, ids,
/// URLs, and test names with "token" and "password" in them). Its source files may only lose
/// the credentials they spell out as placeholders (`SECRET_KEY = 'fake-…'`, an `sk-…` example
/// key): what a secret scanner must flag too.
#[test]
fn no_line_of_the_corpus_is_taken_for_a_secret() {
    let dir = crate::util::corpus_or_skip!(no_line_of_the_corpus_is_taken_for_a_secret);
    let (mut lines, mut bytes) = (0usize, 0usize);
    let (mut wrong, mut placeholders) = (Vec::new(), 0usize);
    let placeholder = [
        "SECRET_KEY = '",
        "api_key='test_key'",
        "\"sk-1234567890abcdef...",
    ];
    for sub in [
        "test-outputs",
        "test-outputs/large",
        "markdown",
        "tokens/files",
    ] {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(sub))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read(&f).unwrap();
            bytes += text.len();
            for line in text.split(|&b| b == b'\n') {
                lines += 1;
                let std::borrow::Cow::Owned(r) = baton_context::mask::redact::redact_bytes(line)
                else {
                    continue;
                };
                let line = String::from_utf8_lossy(line);
                if sub == "tokens/files" && placeholder.iter().any(|p| line.contains(p)) {
                    placeholders += 1;
                    continue;
                }
                let name = f.file_name().unwrap().to_string_lossy().into_owned();
                wrong.push(format!("{name}: {line} -> {}", String::from_utf8_lossy(&r)));
            }
        }
    }
    println!(
        "corpus: {lines} lines, {bytes} bytes; {} false positives, {placeholders} placeholder credentials redacted",
        wrong.len()
    );
    assert!(lines > 100_000, "{lines}");
    assert!(placeholders > 0, "the placeholders are credentials too");
    assert!(
        wrong.is_empty(),
        "{} false positives:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

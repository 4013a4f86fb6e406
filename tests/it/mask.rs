//! `baton mask` end to end: the real binary on real commands.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use proptest::prelude::*;
use serde_json::Value;

use crate::util::Test;

/// A project directory (with `baton.toml`, so discovery stops here).
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("baton.toml"), "").unwrap();
    dir
}

fn baton(dir: &Path) -> Command {
    let mut c = Command::cargo_bin("baton").unwrap();
    c.current_dir(dir);
    c
}

fn scratch_files(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir.join(".baton/scratch")) {
        Ok(rd) => rd.flatten().map(|e| e.path()).collect(),
        Err(_) => Vec::new(),
    }
}

fn json(out: &[u8]) -> Value {
    serde_json::from_slice(out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(out)))
}

#[test]
fn small_output_passes_through_verbatim_and_leaves_no_scratch() {
    let p = project();
    let out = baton(p.path())
        .args([
            "mask",
            "--",
            "sh",
            "-c",
            "printf 'hello\\nworld\\n'; printf 'err\\n' >&2",
        ])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 0);
    assert_eq!(String::from_utf8_lossy(&out.stdout), "hello\nworld\nerr\n");
    assert!(scratch_files(p.path()).is_empty());
    let ignore = std::fs::read_to_string(p.path().join(".baton/.gitignore")).unwrap();
    assert!(ignore.lines().any(|l| l == "*"));
}

#[test]
fn exit_codes_are_the_commands() {
    let p = Test::new()
        .args(["mask", "--", "false"])
        .status(1)
        .run()
        .proj();
    p.test()
        .args(["mask", "--", "sh", "-c", "echo hi; echo oops >&2; exit 42"])
        // The command's stderr is part of its output: one stream, as a terminal shows it.
        .stdout("hi\noops\n")
        .status(42)
        .run();
}

#[test]
fn no_shell_is_involved() {
    // `$HOME` and `;` reach echo as plain arguments.
    Test::new()
        .env("HOME", "/home/expanded")
        .args(["mask", "--", "echo", "$HOME;", "ok"])
        .stdout("$HOME; ok\n")
        .run();
}

#[test]
fn missing_command_is_127_with_a_clear_error() {
    let p = Test::new()
        .args(["mask", "--", "no-such-command-baton-test"])
        .stderr(
            "error: command not found: no-such-command-baton-test\n  \
             hint: baton mask runs the command directly, without a shell; check the name and \
             PATH, or use `baton mask -- sh -c '…'` for shell syntax\n",
        )
        .status(127)
        .run();
    assert!(scratch_files(p.path()).is_empty());
}

#[test]
fn killed_by_signal_small_output() {
    let p = project();
    let out = baton(p.path())
        .args(["mask", "--", "sh", "-c", "echo before; kill -9 $$"])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 128 + 9);
    assert_eq!(out.stdout, b"before\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("signal 9 (SIGKILL)"), "{err}");
}

#[test]
fn killed_by_signal_masked_output_reports_it() {
    let p = project();
    let out = baton(p.path())
        .args([
            "mask",
            "--threshold",
            "100",
            "--",
            "sh",
            "-c",
            "seq 1 5000; kill -TERM $$",
        ])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 128 + 15);
    let v = json(&out.stdout);
    assert_eq!(v["masked"], true);
    assert_eq!(v["signal"], 15);
    assert_eq!(v["signal_name"], "SIGTERM");
    assert_eq!(v["exit_code"], Value::Null);
    let summary = v["summary"].as_str().unwrap();
    assert!(summary.contains("killed by signal 15"), "{summary}");
}

#[test]
fn big_output_is_masked_into_a_private_scratch_file() {
    let p = project();
    let out = baton(p.path())
        .args([
            "mask",
            "--",
            "sh",
            "-c",
            "seq 1 200000; echo 'fatal: disk on fire' >&2; exit 3",
        ])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 3);
    let v = json(&out.stdout);
    assert_eq!(v["masked"], true);
    assert_eq!(v["kind"], "generic");
    assert_eq!(v["exit_code"], 3);
    assert_eq!(v["lines"], 200_001);
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .starts_with("200001 lines, 1 error-looking line")
    );
    assert_eq!(v["error_lines"][0]["line"], 200_001);
    assert_eq!(v["head"][0], "1");
    assert_eq!(
        v["tail"].as_array().unwrap().last().unwrap(),
        "fatal: disk on fire"
    );
    let path = PathBuf::from(v["full_output_path"].as_str().unwrap());
    assert!(
        path.starts_with(p.path().join(".baton/scratch")),
        "{path:?}"
    );
    let mut want: String = (1..=200_000).map(|i| format!("{i}\n")).collect();
    want.push_str("fatal: disk on fire\n");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), want);
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // The masked form is small, as masking means it to be (~200 tokens).
    assert!(out.stdout.len() < 3000, "{}", out.stdout.len());
}

#[test]
fn stdin_mode_with_a_kind() {
    let p = project();
    let log = "running 2 tests\ntest a ... ok\ntest b ... FAILED\n\nfailures:\n\n---- b stdout ----\n\
thread 'b' (7) panicked at src/lib.rs:3:5:\nboom\n\n\
test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
    let out = baton(p.path())
        .args(["mask", "--threshold", "10", "--kind", "cargo-test"])
        .write_stdin(log)
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 0);
    let v = json(&out.stdout);
    assert_eq!(v["summary"], "1 passed, 1 failed");
    assert_eq!(v["first_failure"]["test"], "b");
    assert_eq!(v["first_failure"]["file"], "src/lib.rs");
    assert_eq!(v["first_failure"]["line"], 3);
    assert_eq!(v["counts"]["failed"], 1);
    assert!(v.get("exit_code").is_none());
}

#[test]
fn secrets_are_redacted_in_output_but_kept_in_scratch() {
    let p = project();
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz";
    let script = format!("echo \"key {secret}\"; echo 'DB_PASSWORD=hunter22'");
    let out = baton(p.path())
        .args(["mask", "--keep", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text, "key [REDACTED]\nDB_PASSWORD=[REDACTED]\n");
    let files = scratch_files(p.path());
    assert_eq!(files.len(), 1);
    let raw = std::fs::read_to_string(&files[0]).unwrap();
    assert!(raw.contains(secret) && raw.contains("hunter22"));
    // Masked: the summary's lines are redacted too.
    let script = format!("seq 1 3000; echo 'error: leaked {secret}'");
    let out = baton(p.path())
        .args(["mask", "--", "sh", "-c", &script])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains(secret), "{text}");
    assert!(text.contains("error: leaked [REDACTED]"), "{text}");
}

#[test]
fn binary_output_is_handled() {
    let p = project();
    let out = baton(p.path())
        .args(["mask", "--", "sh", "-c", "printf '\\377\\376\\000abc\\n'"])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 0);
    assert_eq!(out.stdout, b"\xff\xfe\x00abc\n");
    let out = baton(p.path())
        .args([
            "mask",
            "--threshold",
            "1",
            "--",
            "sh",
            "-c",
            "head -c 100000 /dev/urandom",
        ])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 0);
    assert_eq!(json(&out.stdout)["bytes"], 100_000);
}

/// The masked form of binary output: a short description, no escaped bytes; the scratch file
/// keeps every byte.
fn binary_mask(p: &Path, script: &str) -> (Value, Vec<u8>) {
    let out = baton(p)
        .args(["mask", "--", "sh", "-c", script])
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 0);
    assert!(
        out.stdout.len() < 1000,
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let v = json(&out.stdout);
    assert_eq!(v["masked"], true);
    assert_eq!(v["binary"], true);
    assert!(v.get("head").is_none() && v.get("tail").is_none(), "{v}");
    let scratch = std::fs::read(v["full_output_path"].as_str().unwrap()).unwrap();
    assert_eq!(v["bytes"], scratch.len());
    (v, scratch)
}

#[test]
fn big_binary_output_is_described_not_printed() {
    let p = project();
    let (v, scratch) = binary_mask(p.path(), "head -c 20000000 /dev/urandom");
    assert_eq!(v["summary"], "binary output, 20000000 bytes");
    assert!(v.get("binary_type").is_none());
    assert_eq!(scratch.len(), 20_000_000);
}

#[test]
fn binary_formats_are_named_by_magic_number() {
    let p = project();
    let (v, scratch) = binary_mask(p.path(), "head -c 100000 /dev/urandom | gzip -c");
    assert_eq!(v["binary_type"], "gzip");
    let n = scratch.len();
    assert_eq!(v["summary"], format!("binary output, {n} bytes (gzip)"));
    assert_eq!(&scratch[..2], b"\x1f\x8b");
    let (v, _) = binary_mask(p.path(), "cat \"$(command -v sh)\"");
    assert_eq!(v["binary_type"], "ELF");
    let (v, scratch) = binary_mask(
        p.path(),
        "printf '\\211PNG\\r\\n\\032\\n'; head -c 5000 /dev/zero",
    );
    assert_eq!(v["binary_type"], "PNG", "{:?}", &scratch[..8]);
    assert_eq!(scratch.len(), 5008);
}

#[test]
fn a_file_with_nuls_is_binary_and_text_with_a_few_is_not() {
    let p = project();
    std::fs::write(p.path().join("nuls.bin"), vec![0u8; 50_000]).unwrap();
    let (v, _) = binary_mask(p.path(), "cat nuls.bin");
    assert_eq!(v["summary"], "binary output, 50000 bytes");
    // `find -print0`-like text: NUL-separated paths stay text.
    let out = baton(p.path())
        .args(["mask", "--threshold", "10", "--", "sh", "-c"])
        .arg("for i in $(seq 1 500); do printf './src/some/dir/file%d.rs\\0' $i; done")
        .output()
        .unwrap();
    let v = json(&out.stdout);
    assert!(v.get("binary").is_none(), "{v}");
}

#[test]
fn timeout_stops_the_command_with_124() {
    let p = project();
    let start = std::time::Instant::now();
    let out = baton(p.path())
        .args([
            "mask",
            "--timeout",
            "1",
            "--",
            "sh",
            "-c",
            "echo started; sleep 30; echo never",
        ])
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    crate::util::assert_exit(&out, 124);
    assert_eq!(out.stdout, b"started\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("command timed out after 1s (stopped by SIGTERM)"),
        "{err}"
    );
}

#[test]
fn timeout_in_the_masked_summary_and_the_whole_group_is_stopped() {
    let p = project();
    // The background sleep keeps the output pipe open: it must be stopped too, or baton waits.
    let out = baton(p.path())
        .args([
            "mask",
            "--timeout",
            "0.5",
            "--threshold",
            "10",
            "--",
            "sh",
            "-c",
        ])
        .arg("seq 1 1000; sleep 30 & trap '' TERM; sleep 30")
        .timeout(std::time::Duration::from_secs(20))
        .output()
        .unwrap();
    crate::util::assert_exit(&out, 124);
    let v = json(&out.stdout);
    assert_eq!(v["masked"], true);
    assert_eq!(v["timed_out"], true);
    assert_eq!(v["timeout_secs"], 0.5);
    assert_eq!(v["signal_name"], "SIGKILL");
    let summary = v["summary"].as_str().unwrap();
    assert_eq!(
        summary, "1000 lines; timed out after 0.5s (stopped by SIGKILL)",
        "{v}"
    );
}

#[test]
fn a_command_within_its_timeout_is_untouched() {
    Test::new()
        .args([
            "mask",
            "--timeout",
            "30",
            "--",
            "sh",
            "-c",
            "echo quick; exit 3",
        ])
        .stdout("quick\n")
        .status(3)
        .run();
    Test::new()
        .args(["mask", "--timeout", "0", "--", "true"])
        .stderr_contains("the timeout must be more than 0 seconds")
        .status(2)
        .run();
    Test::new()
        .args(["mask", "--timeout", "5"])
        .stdin("x")
        .stderr_contains("--timeout needs a command")
        .status(2)
        .run();
}

#[test]
fn json_flag_wraps_passthrough() {
    Test::new()
        .args(["--json", "mask", "--", "echo", "hi"])
        .stdout_json(serde_json::json!({
            "masked": false,
            "output": "hi\n",
            "exit_code": 0,
            "tokens": 3,
            "tokens_estimated": true,
            "lines": 1,
            "bytes": 3,
        }))
        .run();
}

#[test]
fn help_has_examples() {
    Test::new()
        .args(["mask", "--help"])
        .stdout_contains("\nExamples:\n  baton mask ")
        .stdout_contains("--kind")
        .run();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Round trip through the real binary: the scratch file holds exactly the bytes given.
    #[test]
    fn scratch_file_holds_exactly_the_output(bytes in proptest::collection::vec(any::<u8>(), 0..20_000)) {
        let p = project();
        let out = baton(p.path())
            .args(["--json", "mask", "--keep", "--threshold", "0", "--kind", "generic"])
            .write_stdin(bytes.clone())
            .output()
            .unwrap();
        prop_assert_eq!(out.status.code(), Some(0));
        let files = scratch_files(p.path());
        prop_assert_eq!(files.len(), 1);
        prop_assert_eq!(std::fs::read(&files[0]).unwrap(), bytes);
    }
}

/// No scratch file can be made (here `.baton/scratch` is a file): the command still runs, its
/// output passes through with secrets redacted, its exit code is kept, and stderr says why
/// nothing was masked. An agent told to wrap its commands can still run them.
#[test]
fn without_a_scratch_file_the_command_still_runs_unmasked() {
    let d = project();
    std::fs::create_dir_all(d.path().join(".baton")).unwrap();
    std::fs::write(d.path().join(".baton/scratch"), "in the way").unwrap();
    let o = baton(d.path())
        .args(["mask", "--", "sh", "-c"])
        .arg("echo hello; echo GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123456789; exit 3")
        .output()
        .unwrap();
    crate::util::assert_exit(&o, 3);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "hello\nGITHUB_TOKEN=[REDACTED]\n"
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.starts_with("baton: warning: no scratch file (")
            && err.contains("scratch: exists but is not a directory")
            && err.contains("the output is passed through, not masked"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(d.path().join(".baton/scratch")).unwrap(),
        b"in the way"
    );
}

/// `baton mask -- CMD | head` where no scratch file can be made: the output is passed through,
/// and when its reader goes away the command is not left blocked on a full pipe: baton ends.
#[test]
fn a_reader_that_goes_away_ends_an_unmasked_pass_through() {
    let p = crate::util::Proj::new();
    p.write(
        ".baton/scratch",
        "a file where the scratch folder should be\n",
    );
    let started = std::time::Instant::now();
    let o = std::process::Command::new("sh")
        .args(["-c", r#""$0" mask -- seq 1 100000000 | head -c 10"#])
        .arg(crate::util::bin())
        .current_dir(p.path())
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout), "1\n2\n3\n4\n5\n");
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no scratch file"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

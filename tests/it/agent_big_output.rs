//! An agent printing 50 MB: memory stays bounded, the log file has every byte.
//! Peak RSS is per process, and the other tests of this binary run in parallel with it: the
//! test runs itself again in a child process of this binary, alone, and that child measures.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use baton_agent::{AgentKind, AgentRequest, AgentSpec, run};

const SIZE: u64 = 50 * 1024 * 1024;

/// Peak resident set size of this process, in bytes (Linux).
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

fn script(dir: &Path, name: &str, body: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

/// Set in the child process that runs the test alone.
const ALONE: &str = "BATON_TEST_BIG_OUTPUT_ALONE";

#[test]
fn fifty_megabytes_of_output_in_bounded_memory() {
    if std::env::var_os(ALONE).is_none() {
        let o = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "agent_big_output::fifty_megabytes_of_output_in_bounded_memory",
                "--test-threads=1",
                "--nocapture",
            ])
            .env(ALONE, "1")
            .output()
            .unwrap();
        let out = crate::util::text(&o);
        assert!(o.status.success(), "{out}");
        assert!(out.contains("1 passed"), "the child ran the test: {out}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let before = peak_rss();

    // Plain text, one single 50 MB line, then the signal.
    let mut spec = AgentSpec::command(
        script(
            dir.path(),
            "agent",
            &format!("head -c {SIZE} /dev/zero | tr '\\0' x; printf '\\nREVIEW PASSED: 1.2\\n'"),
        ),
        &[],
    );
    spec.timeout = Duration::from_secs(120);
    let req = AgentRequest::new("p", dir.path(), dir.path().join("logs"), "big");
    let out = run(&spec, &req).unwrap();
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(out.stdout_bytes, SIZE + 20);
    assert_eq!(std::fs::metadata(&out.log_path).unwrap().len(), SIZE + 20);
    assert!(out.text_tail.len() <= 32 * 1024);
    assert!(out.text_tail.ends_with("xx\nREVIEW PASSED: 1.2\n"));

    // claude stream-json: 50 MB of lines, one longer than the parse limit, then a result.
    let mut spec = AgentSpec::new(AgentKind::Claude);
    spec.program = Some(script(
        dir.path(),
        "claude",
        &format!(
            r#"yes '{{"type":"user","message":{{"content":[{{"type":"tool_result","content":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}]}}}}' | head -c {half}
printf '\n'
head -c {half} /dev/zero | tr '\0' y
printf '\n{{"type":"result","subtype":"success","is_error":false,"result":"REVIEW PASSED: 1.2","num_turns":9}}\n'"#,
            half = SIZE / 2
        ),
    ));
    spec.timeout = Duration::from_secs(120);
    let out = run(&spec, &req).unwrap();
    assert!(!out.is_error(), "{:?}", out.error);
    assert_eq!(out.num_turns, Some(9));
    assert_eq!(out.text_tail, "REVIEW PASSED: 1.2");
    assert!(out.stdout_bytes > SIZE);
    assert_eq!(
        std::fs::metadata(&out.log_path).unwrap().len(),
        out.stdout_bytes
    );
    assert!(
        out.warnings.iter().any(|w| w.contains("not parsed")),
        "{:?}",
        out.warnings
    );

    // Holding the output would cost ≥ 50 MB; the runner keeps tails and one bounded line.
    let grown = peak_rss().saturating_sub(before);
    assert!(grown < 30 * 1024 * 1024, "peak RSS grew by {grown} bytes");
}

//! `baton report` (the HTML report of a run, also written at the end of every run), its
//! rendering in a real browser (headless Chromium), `baton status --watch`, and the generated
//! shell completions and man page.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use super::util::{Proj, Test, bin, text};
use crate::util::assert_exit;

/// `baton demo` into `<tmp>/demo`: the project dir and the demo's report.
fn demo(tmp: &Path) -> (PathBuf, PathBuf) {
    let dir = tmp.join("demo");
    let o = Command::new(bin())
        .args(["demo", "--dir"])
        .arg(&dir)
        .current_dir(tmp)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    // Named from where the user stands (`tmp`, above the demo's folder).
    let rel = out
        .lines()
        .find_map(|l| l.strip_prefix("report: "))
        .unwrap_or_else(|| panic!("baton run names no report:\n{out}"));
    assert!(
        rel.starts_with("demo/.baton/runs/") && rel.ends_with("/report.html"),
        "{rel}"
    );
    let report = tmp.join(rel);
    assert!(
        out.contains(&format!("{}   the run's HTML report", report.display())),
        "{out}"
    );
    (dir.clone(), report)
}

/// The phase rows of a report (`<tr id="pN" data-s="STATUS">`): (id, status).
fn phase_rows(html: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r#"<tr id="(p\d+)" data-s="([a-z]+)">"#).unwrap();
    re.captures_iter(html)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

/// Every relative link of a report resolves to a file beside it.
fn assert_links_resolve(html: &str, base: &Path) -> usize {
    let re = regex::Regex::new(r##"<a href="([^"#][^"]*)""##).unwrap();
    let mut n = 0;
    for c in re.captures_iter(html) {
        let href = &c[1];
        assert!(!href.contains("://") && !href.starts_with('/'), "{href}");
        let path = base.join(href.replace("%20", " "));
        assert!(path.is_file(), "{href} → {}", path.display());
        n += 1;
    }
    n
}

#[test]
fn every_run_writes_a_self_contained_report_of_every_phase() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, report) = demo(tmp.path());
    let html = std::fs::read_to_string(&report).unwrap();
    // The demo: 4 stories (1.2 retried after a failed review, 1.3 blocked twice), UAT, retro.
    let rows = phase_rows(&html);
    let journal = std::fs::read_to_string(report.with_file_name("events.jsonl")).unwrap();
    assert_eq!(
        rows.len(),
        journal.matches("\"event\":\"phase_finished\"").count()
    );
    assert_eq!(rows.len(), 19);
    assert_eq!(rows.iter().filter(|r| r.1 == "rejected").count(), 3);
    // One bar per phase in the timeline, each linking to its row.
    for (id, _) in &rows {
        assert!(
            html.contains(&format!("<a href=\"#{id}\" data-phase=\"{id}\">")),
            "{id}"
        );
    }
    // Nothing is fetched: no external script, style, font or image.
    for banned in ["<link", " src=", "@import", "url(", "https://"] {
        assert!(!html.contains(banned), "{banned}");
    }
    // Each phase links its prompt and log, relative to the report.
    let links = assert_links_resolve(&html, report.parent().unwrap());
    assert_eq!(links, 2 * 19);
    // Budgets are journaled with each phase and drawn as the bar's line.
    assert!(html.contains("/20000</td>") && html.contains("<b style=\"left:"));
    // Each story's commit.
    let log = Command::new("git")
        .args(["log", "--format=%H", "-n", "4"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let shas = String::from_utf8(log.stdout).unwrap();
    let committed = shas
        .lines()
        .filter(|s| html.contains(&format!("git show {s}")))
        .count();
    assert!(committed >= 3, "{shas}");
    assert!(html.len() < 100_000, "{} bytes", html.len());
    // Results and attempts in the terminal's words and counts.
    assert!(
        html.contains("<b>3 done, 1 failed, 0 skipped</b>"),
        "the results card"
    );
    for (story, result, attempts) in [("1.1", "done", 1), ("1.2", "done", 2), ("1.3", "failed", 2)]
    {
        let row =
            format!("<tr><td>story {story}</td><td>{result}</td><td class=\"n\">{attempts}</td>");
        assert!(html.contains(&row), "{row}");
    }
}

#[test]
fn report_picks_runs_and_writes_where_asked_with_links_relative_to_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, report) = demo(tmp.path());
    let run_id = report
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let run = |args: &[&str]| {
        Command::new(bin())
            .args(args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    // The newest run, by default into its directory.
    std::fs::remove_file(&report).unwrap();
    let o = run(&["report"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!(
            "report of run {run_id}: .baton/runs/{run_id}/report.html (19 phases, {} KB)\n",
            std::fs::metadata(&report).unwrap().len().div_ceil(1024)
        )
    );
    // Elsewhere: the links go back into the run directory.
    std::fs::create_dir(dir.join("out")).unwrap();
    let o = run(&["report", &run_id, "-o", "out/r.html", "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["run_id"], run_id.as_str());
    assert_eq!(v["phases"], 19);
    let html = std::fs::read_to_string(dir.join("out/r.html")).unwrap();
    assert!(html.contains(&format!("href=\"../.baton/runs/{run_id}/prompts/")));
    assert_eq!(assert_links_resolve(&html, &dir.join("out")), 38);
    // Bad input: a clear error, a non-zero code, nothing written.
    let o = run(&["report", "20990101T000000-aaaaaa"]);
    assert_exit(&o, 4);
    assert!(
        text(&o).contains("no run 20990101T000000-aaaaaa"),
        "{}",
        text(&o)
    );
    let o = run(&["report", "--queue", "nope"]);
    assert_exit(&o, 4);
    assert!(
        text(&o).contains("queue `nope` has no run")
            && text(&o).contains("baton run verify --queue nope")
    );
    let o = run(&["report", "-o", "missing/dir/r.html"]);
    assert_exit(&o, 4);
    assert!(text(&o).contains("does not exist"), "{}", text(&o));
    let o = run(&["report", "-o", "out"]);
    assert_exit(&o, 2);
    assert!(!dir.join("missing").exists());
}

#[test]
fn no_run_yet_is_a_clear_error() {
    Test::new()
        .args(["report"])
        .stderr_contains("error: no run in [PROJECT]/.baton/runs")
        .stderr_contains("hint: start one (`baton demo`")
        .status(4)
        .run();
}

/// A run journal written by hand: one phase whose texts try to break out of the HTML.
fn hostile_run(p: &Proj) -> PathBuf {
    let dir = p.path().join(".baton/runs/20260101T000000-abcdef");
    std::fs::create_dir_all(dir.join("prompts")).unwrap();
    let evil = "<script>alert(1)</script>\\\" onmouseover=\\\"x";
    let lines = [
        r#"{"v":2,"seq":1,"ts":"2026-01-01T00:00:00.000Z","event":"run_started","run_id":"20260101T000000-abcdef","workflow":"verify","subjects":["q"],"options":{}}"#.to_string(),
        r#"{"v":2,"seq":2,"ts":"2026-01-01T00:00:00.000Z","event":"phase_started","subject":{"kind":"item","id":"A&B"},"phase":"ground-truth","attempt":1}"#.to_string(),
        format!(
            r#"{{"v":2,"seq":3,"ts":"2026-01-01T00:00:01.500Z","event":"phase_finished","subject":{{"kind":"item","id":"A&B"}},"phase":"ground-truth","attempt":1,"outcome":{{"ok":false,"detail":"{evil}","usage":{{"input":10,"cache_creation":0,"cache_read":0,"output":5}},"duration_ms":1500,"prompt_tokens":900,"budget":800,"label":"A-ground-truth-1","judged":"malformed"}}}}"#
        ),
        r#"{"v":2,"seq":4,"ts":"2026-01-01T00:00:02.000Z","event":"phase_started","subject":{"kind":"item","id":"C"},"phase":"ground-truth","attempt":1}"#.to_string(),
    ];
    std::fs::write(dir.join("events.jsonl"), lines.join("\n") + "\n").unwrap();
    std::fs::write(dir.join("prompts/A-ground-truth-1.md"), "prompt").unwrap();
    dir
}

#[test]
fn everything_from_the_journal_is_escaped_and_unfinished_phases_are_shown() {
    let p = Proj::new();
    let dir = hostile_run(&p);
    let html_path = dir.join("report.html");
    p.ok(&["report", "--queue", "q"]);
    let html = std::fs::read_to_string(html_path).unwrap();
    assert!(!html.contains("<script>alert"), "unescaped");
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;&#x2f;script&gt;"),
        "{html}"
    );
    assert!(html.contains("item A&amp;B"));
    // Over budget: the bar is drawn red.
    assert!(html.contains("class=\"over\""));
    let rows = phase_rows(&html);
    assert_eq!(
        rows.iter().map(|r| r.1.as_str()).collect::<Vec<_>>(),
        ["malformed", "running"]
    );
    // The prompt exists, the log does not: only the prompt is linked.
    assert_links_resolve(&html, &dir);
    assert!(html.contains("href=\"prompts/A-ground-truth-1.md\""));
    assert!(!html.contains("logs/A-ground-truth-1.log"));
}

#[test]
fn masks_done_by_a_runs_agents_are_linked_and_counted() {
    let p = Proj::new();
    let dir = hostile_run(&p);
    // What an agent of the run does: `baton mask` with the run's directory and its phase.
    let o = p
        .cmd(&["mask", "--", "seq", "1", "5000"])
        .env("BATON_RUN_DIR", &dir)
        .env("BATON_RUN_PHASE", "A-ground-truth-1")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let masked: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(masked["masked"], true);
    // The project's mask log has it, with the run's id and phase, the agent and the source.
    let log = p.path().join(".baton/masks.jsonl");
    let rec: serde_json::Value =
        serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(rec["run"], "20260101T000000-abcdef");
    assert_eq!(rec["phase"], "A-ground-truth-1");
    assert_eq!(rec["source"], "cli");
    assert_eq!(rec["command"], "seq");
    assert_eq!(rec["tokens"], masked["tokens"]);
    let saved = rec["tokens"].as_u64().unwrap() - rec["masked_tokens"].as_u64().unwrap();
    assert!(saved > 10_000, "{rec}");
    // Not an agent of a run (no journal there): logged for the project, not for the run.
    let o = p
        .cmd(&["mask", "--", "seq", "1", "5000"])
        .env("BATON_RUN_DIR", p.path())
        .env("BATON_RUN_PHASE", "x")
        .output()
        .unwrap();
    assert!(o.status.success());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert!(lines[1].get("run").is_none(), "{}", lines[1]);
    p.ok(&["report"]);
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(
        html.contains(&format!(
            "<b>{saved}</b><span>tokens saved by masking (1 outputs)"
        )),
        "{html}"
    );
    assert!(html.contains(">masked seq</a>"));
    assert_eq!(assert_links_resolve(&html, &dir), 2);
}

/// Chromium from Debian's packages, if present; `BATON_REQUIRE_CHROMIUM=1` (CI) makes its
/// absence a failure instead of a skip.
fn chromium() -> Option<PathBuf> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .find_map(|name| {
            std::env::var_os("PATH").and_then(|paths| {
                std::env::split_paths(&paths)
                    .map(|d| d.join(name))
                    .find(|p| p.is_file())
            })
        });
    if found.is_none() {
        assert!(
            std::env::var_os("BATON_REQUIRE_CHROMIUM").is_none(),
            "BATON_REQUIRE_CHROMIUM is set but no chromium is installed"
        );
        println!("skipped: no chromium on PATH (apt-get install chromium)");
    }
    found
}

fn headless(chromium: &Path, profile: &Path, args: &[&str], page: &Path) -> std::process::Output {
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "chromium failed: {}", text(&o));
    o
}

#[test]
fn the_demos_report_renders_in_a_real_browser_without_errors() {
    let Some(chromium) = chromium() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let (_, report) = demo(tmp.path());
    let profile = tmp.path().join("profile");
    let shot = tmp.path().join("report.png");
    let o = headless(
        &chromium,
        &profile,
        &[&format!("--screenshot={}", shot.display())],
        &report,
    );
    let png = std::fs::read(&shot).unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{} bytes",
        png.len()
    );
    // The page's console: chromium logs every message as CONSOLE(…) with these flags.
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(
        !log.contains("CONSOLE") && !log.contains("Uncaught"),
        "console output: {log}"
    );
    // The DOM after the page's script ran: every phase of the journal has its bar and row.
    let o = headless(&chromium, &profile, &["--dump-dom"], &report);
    let dom = String::from_utf8_lossy(&o.stdout);
    assert!(
        !String::from_utf8_lossy(&o.stderr).contains("CONSOLE"),
        "{}",
        text(&o)
    );
    assert!(
        dom.contains("data-ready=\"1\""),
        "the script did not finish"
    );
    assert!(
        dom.contains("<p id=\"report-errors\" role=\"alert\"></p>"),
        "script errors"
    );
    assert!(
        dom.contains("19 of 19 phases"),
        "the filter's count is missing"
    );
    let journal = std::fs::read_to_string(report.with_file_name("events.jsonl")).unwrap();
    let mut finished = 0;
    for line in journal.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event"] != "phase_finished" {
            continue;
        }
        finished += 1;
        let (subject, phase) = (
            v["subject"]["id"].as_str().unwrap(),
            v["phase"].as_str().unwrap(),
        );
        let kind = v["subject"]["kind"].as_str().unwrap();
        let title = format!("{kind} {subject} · {phase} · attempt {}", v["attempt"]);
        assert!(dom.contains(&title), "no bar for {title}");
    }
    assert_eq!(finished, 19);
    assert_eq!(phase_rows(&dom).len(), finished);
    assert_eq!(dom.matches("<rect class=\"ph ").count(), finished);
}

#[test]
fn status_watch_refreshes_until_ctrl_c_and_plain_output_stays_plain() {
    let tmp = tempfile::tempdir().unwrap();
    let (dir, _) = demo(tmp.path());
    let mut child = Command::new(bin())
        .args(["status", "--watch", "--interval", "0.1"])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first view is out (however loaded the machine), then a few refreshes' time.
    let mut stdout = child.stdout.take().unwrap();
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let line = regex::Regex::new(
        r"epic-execute epic 1  finished  3 done, 1 failed, 19 agent calls, (\d+) tokens, \$\d+\.\d\d\n",
    )
    .unwrap();
    while !line.is_match(&String::from_utf8_lossy(&seen)) {
        assert!(std::time::Instant::now() < deadline, "no view in 60 s");
        let mut buf = [0u8; 4096];
        let n = std::io::Read::read(&mut stdout, &mut buf).unwrap();
        assert!(n > 0, "status --watch ended early");
        seen.extend_from_slice(&buf[..n]);
    }
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: kill(2) of the child we started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    std::io::Read::read_to_end(&mut stdout, &mut seen).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    let out = String::from_utf8(seen).unwrap();
    // Nothing changed: one view, no terminal escapes in a pipe.
    assert_eq!(out.matches("--- ").count(), 1, "{out}");
    assert!(!out.contains('\x1b'));
    let tokens: u64 = line.captures(&out).expect(&out)[1].parse().unwrap();
    // --json: one object a line.
    let o = Command::new(bin())
        .args(["status", "--json"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"][0]["tokens"], tokens);
    assert!(tokens > 6000, "{tokens}");
    assert_eq!(v["runs"][0]["running"], serde_json::json!([]));
    Test::new()
        .args(["status", "--interval", "2"])
        .stderr_contains("--watch")
        .status(2)
        .run();
}

/// What bash offers after `words` (the last one being completed), with baton's completions
/// loaded, in `dir`.
fn bash_offers(dir: &Path, words: &[&str]) -> Vec<String> {
    let script = format!(
        "source <('{}' completions bash) || exit 9\n\
         COMP_WORDS=({}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 )); COMP_TYPE=9\n\
         _clap_complete_baton baton \"${{COMP_WORDS[$COMP_CWORD]}}\"\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        bin().display(),
        words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let o = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn bash_completes_commands_and_the_projects_runs_tasks_and_queues() {
    let o = Command::new("bash")
        .args([
            "-c",
            &format!(
                "source <('{}' completions bash) && complete -p baton",
                bin().display()
            ),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "complete -o bashdefault -o nosort -o nospace -F _clap_complete_baton baton\n"
    );
    let p = Proj::new();
    p.ok(&["task", "init", "Add login"]);
    p.ok(&["queue", "add", "dat-q1", "BMNR"]);
    let run = p.path().join(".baton/runs/20990101T000000-abcdef");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("events.jsonl"), "{\"v\":2,\"seq\":1,\"ts\":\"2099-01-01T00:00:00Z\",\"event\":\"run_started\",\"run_id\":\"20990101T000000-abcdef\",\"workflow\":\"verify\",\"subjects\":[\"dat-q1\"],\"options\":{}}\n").unwrap();
    assert!(bash_offers(p.path(), &["baton", "rep"]).contains(&"report".to_string()));
    assert_eq!(
        bash_offers(p.path(), &["baton", "run", "orchestrate", "a"]),
        ["add-login"]
    );
    assert_eq!(
        bash_offers(p.path(), &["baton", "metrics", "--task", "add"]),
        ["add-login"]
    );
    assert_eq!(
        bash_offers(p.path(), &["baton", "run", "verify", "--queue", "d"]),
        ["dat-q1"]
    );
    assert_eq!(
        bash_offers(p.path(), &["baton", "run", "--resume", "2099"]),
        ["20990101T000000-abcdef"]
    );
    assert_eq!(
        bash_offers(p.path(), &["baton", "stop", "2"]),
        ["20990101T000000-abcdef"]
    );
    for shell in ["zsh", "fish"] {
        let out = Test::new().args(["completions", shell]).any_stdout().run();
        assert!(
            out.stdout.contains("BATON_COMPLETE"),
            "{shell}: {}",
            out.stdout
        );
    }
    Test::new()
        .args(["completions", "tcsh"])
        .stderr_contains("invalid value 'tcsh'")
        .status(2)
        .run();
}

#[test]
fn man_pages_come_from_the_commands() {
    let out = Test::new().args(["man"]).any_stdout().run();
    assert!(out.stdout.starts_with(".ie") && out.stdout.contains(".TH baton 1"));
    assert!(out.stdout.contains("baton\\-report"), "{}", out.stdout);
    let p = Proj::new();
    std::fs::create_dir(p.path().join("man")).unwrap();
    p.ok(&["man", "--dir", "man"]);
    assert!(p.path().join("man/baton.1").is_file());
    assert!(p.path().join("man/baton-report.1").is_file());
    assert!(p.path().join("man/baton-run-epic-execute.1").is_file());
}

//! The real `claude` CLI (claude-code 2.1.197) answered by the model double: what the model is
//! really shown once baton's hooks have run, baton's MCP tools called for real, a whole epic
//! committed by `baton run` under baton's defaults, and the API's failures as baton reads them.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::json;

use crate::util::model_double::{ModelDouble, Reply};
use crate::util::real_agent::{
    CLAUDE, a_failing_api_pauses_the_run_naming_it, a_refused_connection_stops_the_run,
    an_auth_failure_stops_the_run, assert_masked_as, assert_red_reached, commits_every_story,
    generated, last_tool_result, one_call, pauses_on_a_rate_limit_past_the_backoff, recovers_from,
};
use crate::util::scripted_agent::{GEN, RED};
use crate::util::{Proj, text};

/// A session the user starts in the project they trust (the trust dialog accepted, as claude
/// records it in `~/.claude.json`): `claude -p PROMPT`, with the user's own permission for the
/// one command the script runs.
fn session(cli: &Path, p: &Proj, home: &Path, double: &ModelDouble, allow: &str) -> Output {
    let trusted =
        json!({"projects": {p.path().to_string_lossy(): {"hasTrustDialogAccepted": true}}});
    std::fs::write(home.join(".claude.json"), trusted.to_string()).unwrap();
    CLAUDE
        .env(Command::new(cli), cli, p.path(), home, double)
        .args(["-p", "run the tests", "--output-format", "stream-json"])
        .args(["--verbose", "--allowedTools", allow])
        .output()
        .unwrap()
}

fn init_claude(p: &Proj) {
    let o = p.cmd(&["init", "claude"]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::write(p.path().join("gen.sh"), GEN).unwrap();
}

#[test]
fn a_large_output_reaches_the_model_masked_with_its_failure_wherever_it_is() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    for at in [0, 1850, 3699] {
        let cmd = format!("sh gen.sh {at}");
        let double = CLAUDE.double(one_call(
            "Bash",
            json!({"command": cmd, "description": "run the tests"}),
        ));
        let out = session(&cli, &p, home.path(), &double, &format!("Bash({cmd})"));
        assert!(out.status.success(), "{}", text(&out));
        let seen = last_tool_result(&double);
        assert_masked_as(&seen, p.path(), &generated(p.path(), at), true);
        // Claude's own pointer is kept.
        assert!(
            seen.contains("Claude Code's own copy of the full output: "),
            "{seen}"
        );
    }
}

/// A red test run, as the user runs it: `make test` exits 1 (claude then hands the output to
/// `PostToolUseFailure`, cut to its head). baton's pre-tool hook routed it through `baton
/// mask` first, as the user's own permission for `make test` allows it to: the model gets the
/// summary of all 200 KB, the failing test and its assertion message, and exit code 1.
#[test]
fn a_red_test_run_reaches_the_model_with_its_failure_and_message() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    std::fs::write(p.path().join("red.sh"), RED).unwrap();
    std::fs::write(p.path().join("Makefile"), "test:\n\tsh red.sh\n").unwrap();
    // The user's own permission, where they keep it.
    std::fs::write(
        p.path().join(".claude/settings.local.json"),
        r#"{"permissions": {"allow": ["Bash(make test)"]}}"#,
    )
    .unwrap();
    let home = tempfile::tempdir().unwrap();
    let double = CLAUDE.double(one_call(
        "Bash",
        json!({"command": "make test", "description": "run the tests"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "Read");
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    assert_red_reached(&seen);
    // make's own exit code for a failed recipe, unchanged by the routing.
    assert!(seen.starts_with("Exit code 2\n"), "{seen}");
    assert!(seen.contains("\"exit_code\": 2"), "{seen}");
    assert_eq!(p.mask_records(), 1, "one record for one output");
}

/// The same red run given permission only on claude's command line, which baton's hook cannot
/// read: not routed. Claude hands it to `PostToolUseFailure` cut to its head; the model is told
/// beside it that the rest was cut, what the head holds, and the command that shows it all.
#[test]
fn a_red_run_claude_cut_is_named_as_cut_beside_it() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    std::fs::write(p.path().join("red.sh"), RED).unwrap();
    let home = tempfile::tempdir().unwrap();
    let double = CLAUDE.double(one_call(
        "Bash",
        json!({"command": "sh red.sh", "description": "run the tests"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "Bash(sh red.sh)");
    assert!(out.status.success(), "{}", text(&out));
    let seen = last_tool_result(&double);
    assert!(seen.starts_with("Exit code 1\n"), "{}", &seen[..200]);
    // What claude itself passes on: the head only (the failure, in the middle, is not in it).
    assert!(!seen.contains("test_answer"), "claude's cut changed");
    let last = double.requests().last().unwrap().body.to_string();
    assert!(
        last.contains("the failure itself may be missing"),
        "no note beside the cut output"
    );
    assert!(last.contains("mask -- sh red.sh"), "no way to see it all");
    assert_eq!(p.mask_records(), 1);
}

#[test]
fn a_small_output_reaches_the_model_unchanged() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    let double = CLAUDE.double(one_call(
        "Bash",
        json!({"command": "echo hello baton", "description": "say hello"}),
    ));
    let out = session(&cli, &p, home.path(), &double, "Bash(echo hello baton)");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(last_tool_result(&double), "hello baton");
}

#[test]
fn batons_mcp_tools_are_offered_and_a_call_round_trips() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let home = tempfile::tempdir().unwrap();
    let double = CLAUDE.double(one_call(
        "mcp__baton__budget",
        json!({"text": "hello world"}),
    ));
    // No permission of the user's: `baton init claude` granted baton's own tools.
    let out = session(&cli, &p, home.path(), &double, "Read");
    assert!(out.status.success(), "{}", text(&out));
    let tools = double.requests().last().unwrap().tools();
    for t in [
        "mcp__baton__budget",
        "mcp__baton__mask",
        "mcp__baton__status",
    ] {
        assert!(tools.iter().any(|x| x == t), "{t} not in {tools:?}");
    }
    let seen = last_tool_result(&double);
    assert!(seen.contains("STATUS: success"), "{seen}");
    assert!(seen.contains("tokens (o200k_base)"), "{seen}");
}

#[test]
fn baton_run_commits_every_story_with_claude_under_batons_defaults() {
    commits_every_story(&CLAUDE);
}

#[test]
fn an_auth_failure_stops_the_run_within_seconds_and_commits_nothing() {
    an_auth_failure_stops_the_run(&CLAUDE);
}

#[test]
fn a_refused_connection_stops_the_run_within_seconds_as_no_network() {
    a_refused_connection_stops_the_run(&CLAUDE);
}

#[test]
fn a_short_rate_limit_is_waited_out_without_spending_an_attempt() {
    recovers_from(&CLAUDE, 2, || Reply::rate_limited(1));
}

#[test]
fn a_server_error_is_retried_without_spending_an_attempt() {
    recovers_from(&CLAUDE, 1, || Reply::error(500, "internal"));
}

#[test]
fn a_stream_cut_mid_message_is_retried_without_spending_an_attempt() {
    recovers_from(&CLAUDE, 1, || Reply::Cut);
}

#[test]
fn a_rate_limit_past_the_backoff_pauses_the_run_and_resume_finishes_it() {
    pauses_on_a_rate_limit_past_the_backoff(&CLAUDE);
}

/// A Rust file of `n` small functions, one doc line each.
pub fn big_source(n: usize) -> String {
    let mut s = String::from("//! A module.\n\nuse std::fmt;\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "/// Function number {i}.\npub fn function_{i}(x: u32) -> u32 {{\n    let y = x + {i};\n    let z = y.wrapping_mul(31).rotate_left(3);\n    if z % 7 == 0 {{\n        return z;\n    }}\n    (z ^ y).count_ones() * 2\n}}\n\n"
        ));
    }
    s
}

#[test]
fn a_large_file_read_reaches_the_model_outline_first_and_whole_when_asked_for() {
    let Some(cli) = CLAUDE.cli() else {
        return;
    };
    let p = Proj::new();
    init_claude(&p);
    let src = big_source(150);
    let file = p.write("src/lib.rs", &src);
    let home = tempfile::tempdir().unwrap();
    // Claude refuses a second whole read of an unchanged file ("Wasted call"): all of it is
    // asked for as the whole range, as the guide says.
    let lines = src.lines().count();
    let read = json!({"file_path": file.display().to_string()});
    let all = json!({"file_path": file.display().to_string(), "offset": 1, "limit": lines});
    let double = CLAUDE.double(Box::new(
        move |r: &crate::util::model_double::Request| match (r.tools().is_empty(), r.turns()) {
            (false, 0) => Reply::tool("Read", read.clone()),
            (false, 1) => Reply::tool("Read", all.clone()),
            _ => Reply::Text("DONE".into()),
        },
    ));
    let out = session(&cli, &p, home.path(), &double, "Read");
    assert!(out.status.success(), "{}", text(&out));
    let reqs = double.requests();
    let results = reqs.last().unwrap().tool_results();
    assert_eq!(results.len(), 2, "{results:?}");
    let o200k = |t: &str| baton_context::tokens::Encoding::O200kBase.count(t);
    // The first read: the file's first lines, numbered by Claude as its own, not the rest.
    assert!(results[0].contains("//! A module."), "{}", results[0]);
    assert!(!results[0].contains("function_149"), "{}", results[0]);
    assert!(o200k(&results[0]) * 4 < o200k(&src), "{}", results[0]);
    // The outline came with it, in the request after the read.
    let after_first = reqs
        .iter()
        .find(|r| r.turns() == 1)
        .unwrap()
        .body
        .to_string();
    assert!(
        after_first.contains("baton extract FILE --symbol NAME"),
        "{after_first}"
    );
    assert!(after_first.contains("pub fn function_20("), "no outline");
    // All of the outline, the last function named, shown whole: never saved to a file with a
    // 2 KB preview (claude does that to a hook's context over 10,000 characters).
    assert!(
        after_first.contains("pub fn function_149("),
        "the outline was cut"
    );
    assert!(!after_first.contains("persisted-output"), "{after_first}");
    assert!(
        after_first.contains(&format!("offset 1 and limit {lines}")),
        "{after_first}"
    );
    // All of it, asked for.
    assert!(results[1].contains("function_149"), "{}", results[1]);
    let log = std::fs::read_to_string(p.path().join(".baton/masks.jsonl")).unwrap();
    let rec: serde_json::Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(rec["kind"], "outline");
    assert_eq!(rec["agent"], "claude");
    assert_eq!(
        log.lines().count(),
        1,
        "a read with a range is not outlined"
    );
}

/// A subscriber's spent session limit, as the API answers it (a 429 whose unified rate-limit
/// headers say `rejected`, the `five_hour` claim and its reset): claude words it ("You've hit
/// your session limit · resets …"); baton pauses the run naming the reset, and `--resume`
/// finishes the story once the limit is lifted.
#[test]
fn a_subscribers_spent_session_limit_pauses_the_run_and_resume_finishes_it() {
    crate::util::real_agent::a_spent_limit_pauses_and_resume_finishes(
        &crate::util::real_agent::CLAUDE_SUBSCRIBER,
        "hit your session limit",
    );
}

/// An API key whose spend limit is reached, as the API answers it (a 400 naming when access
/// comes back): a spent limit, the run pauses (exit 7) naming the reset. An account with no
/// credit left pauses it too, saying to add credits: nothing resets that by itself.
#[test]
fn an_api_keys_spend_limit_or_empty_balance_pauses_the_run_saying_what_to_do() {
    if CLAUDE.cli().is_none() {
        return;
    }
    for (answer, says, step) in [
        (
            "You have reached your specified API usage limits. You will regain access on 2099-12-01 at 00:00 UTC.",
            "reached your specified API usage limits",
            "claude's usage limit resets at 2099-12-01 00:00 UTC",
        ),
        (
            "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.",
            "Credit balance is too low",
            "add credits to the API account claude uses",
        ),
    ] {
        let double = CLAUDE.double(Box::new(move |r: &crate::util::model_double::Request| {
            if r.tools().is_empty() {
                Reply::Text("ok".into())
            } else {
                Reply::error(400, answer)
            }
        }));
        let tmp = tempfile::tempdir().unwrap();
        let dir = crate::util::scripted_agent::one_story_project(tmp.path());
        let (out, took) = CLAUDE.run_epic(&dir, &double);
        let said = text(&out);
        crate::util::assert_exit(&out, 7);
        assert!(said.contains(says), "{said}");
        assert!(said.contains(step), "{said}");
        assert!(took < std::time::Duration::from_secs(120), "{took:?}");
        assert_eq!(
            crate::util::scripted_agent::story_commits(&dir),
            Vec::<String>::new()
        );
    }
}

/// BMAD's installed `bmad-build-auto` (from the real installer) dispatched through the real
/// claude: invoked by name, claude gives the model the skill's own SKILL.md; the model double
/// plays the skill (it writes the story file at `done` and its code, and commits), and baton
/// commits the story once, with its trailers.
#[test]
fn the_installed_build_skill_is_invoked_by_name_through_the_real_claude() {
    if CLAUDE.cli().is_none() {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let Some(d) = crate::bmad_installed::installed_project(t.path()) else {
        return;
    };
    let project = d.clone();
    let double = CLAUDE.double(Box::new(move |r: &crate::util::model_double::Request| {
        if r.tools().is_empty() {
            return Reply::Text("ok".into());
        }
        let tree = crate::util::work_dir(&project);
        let story = tree.join(crate::bmad_installed::SPEC).join("stories/1-add-rate-limiting.md");
        match r.turns() {
            0 => Reply::tool(
                "Write",
                json!({"file_path": tree.join("src/limiter.txt"), "content": "token bucket\n"}),
            ),
            1 => Reply::tool(
                "Write",
                json!({"file_path": story, "content": "---\nstatus: done\n---\n\n# Add rate limiting to the public API\n\n## Auto Run Result\n\nStatus: done\n"}),
            ),
            2 => Reply::tool(
                "Bash",
                json!({"command": "git add -A && git commit -qm 'feat: rate limiting'", "description": "commit"}),
            ),
            _ => Reply::Text("HALT: done".into()),
        }
    }));
    let (out, _) = CLAUDE.baton_run(
        &d,
        &double,
        &[
            "epic-execute",
            "spec-rate-limiting",
            "--agent",
            "claude",
            "--dev",
            "bmad-build-auto",
            "--only",
            "1",
        ],
    );
    let said = text(&out);
    crate::util::assert_exit(&out, 0);
    let first = double
        .requests()
        .into_iter()
        .find(|r| !r.tools().is_empty())
        .unwrap();
    // The skill's own SKILL.md (as the installer wrote it) reached the model: claude invoked it.
    assert!(
        first.body.to_string().contains("render_skill.py"),
        "{}",
        first.user_text()
    );
    let subjects = crate::util::git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert_eq!(
        subjects
            .lines()
            .filter(|s| s.starts_with("feat(story 1)"))
            .count(),
        1,
        "{subjects}\n{said}"
    );
    assert!(
        !subjects.contains("feat: rate limiting"),
        "folded into baton's commit: {subjects}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("src/limiter.txt")).unwrap(),
        "token bucket\n"
    );
}

/// A model API answering 500 to every request: claude is not left retrying for minutes; the
/// run pauses, the server errors named as such.
#[test]
fn an_api_answering_500_pauses_the_run_naming_the_server_errors() {
    a_failing_api_pauses_the_run_naming_it(
        &CLAUDE,
        || Reply::error(500, "internal"),
        "the API answers 500 (a server error) to every request: claude retried",
        std::time::Duration::from_secs(90),
    );
}

/// A model API that takes every request and never answers: after `api_patience_secs` of
/// claude waiting with nothing heard, baton stops it and the run pauses naming it.
#[test]
fn an_api_that_never_answers_pauses_the_run_naming_it() {
    a_failing_api_pauses_the_run_naming_it(
        &CLAUDE,
        || Reply::Silent,
        "no answer from the model API for 20 s",
        std::time::Duration::from_secs(90),
    );
}

//! `baton run --resume RUN --retry STORY`: a failed story re-armed after a human looked at
//! it. The real binary, a real git repository, the simulated agent (its review fails as
//! often as the scenario says, counted by the records in the story file).

use std::path::Path;

use crate::util::{assert_exit, git, run_in, temp_demo as demo, text};

/// (subject, body) of every commit on `tip` since `main`, newest first.
fn commits(dir: &Path, tip: &str) -> Vec<(String, String)> {
    git(
        dir,
        &["log", "--format=%s%x00%b%x1e", &format!("main..{tip}")],
    )
    .split('\u{1e}')
    .filter(|c| !c.trim().is_empty())
    .map(|c| {
        let (s, b) = c.trim_start().split_once('\0').unwrap();
        (s.to_string(), b.to_string())
    })
    .collect()
}

fn events(dir: &Path, id: &str) -> Vec<serde_json::Value> {
    crate::util::json_lines(
        &std::fs::read(dir.join(".baton/runs").join(id).join("events.jsonl")).unwrap(),
    )
}

/// Story 1.1 fails both attempts (its review fails twice), its changes are stashed and its
/// records committed; the run pauses after it. Re-armed with `--apply-stash`, it starts
/// from those changes, gets its attempts anew (numbered 3 and on), passes and is committed
/// once, under its round's trailer. Re-arming it again is refused: it is done.
#[test]
fn a_failed_story_re_armed_starts_from_its_stash_and_is_committed_once() {
    let (_t, d) = demo("[story.\"1.1\"]\nreview = [\"fail\", \"fail\", \"pass\"]\n");
    let o = run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--pause-after",
            "story",
        ],
        &[],
    );
    assert_exit(&o, 143);
    // The only run yet.
    let id = crate::util::newest_run_id(&d);
    let branch = format!("baton/run-{id}");
    let stash = format!("baton {id}: story 1.1 failed");
    assert!(git(&d, &["stash", "list"]).contains(&stash));
    let before = commits(&d, &branch);
    assert_eq!(before.len(), 1, "{before:?}");
    assert!(
        before[0].0.starts_with("docs(story 1.1): failed"),
        "{before:?}"
    );

    // A story the run's epics do not have, and one not run yet: refused, nothing journaled.
    let n = events(&d, &id).len();
    for (story, says) in [
        ("9.9", "--retry names story 9.9, which run"),
        ("1.2", "story 1.2 has not run in run"),
    ] {
        let o = run_in(&d, &["run", "--resume", &id, "--retry", story], &[]);
        assert!(!o.status.success(), "{}", text(&o));
        assert!(text(&o).contains(says), "{}", text(&o));
    }
    assert_eq!(events(&d, &id).len(), n, "a refused retry journals nothing");

    let o = run_in(
        &d,
        &["run", "--resume", &id, "--retry", "1.1", "--apply-stash"],
        &[],
    );
    // It pauses after the story again: its new round is a new point.
    assert_exit(&o, 143);
    let said = text(&o);
    assert!(
        said.contains(
            "story 1.1 re-armed: developed again with up to 2 attempts, numbered on from 3"
        ),
        "{said}"
    );
    assert!(
        said.contains("its earlier round's changes are back (") && said.contains(&stash),
        "{said}"
    );
    let after = commits(&d, &branch);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after[0].0.starts_with("feat(story 1.1)"), "{after:?}");
    assert!(after[0].1.contains("Baton-Round: 2"), "{after:?}");
    assert!(
        after[0].1.contains(&format!("Baton-Run: {id}")),
        "{after:?}"
    );
    // The new round's attempts: 3, numbered on; attempts 1 and 2 stay as they were.
    let devs: Vec<u64> = events(&d, &id)
        .iter()
        .filter(|e| {
            e["event"] == "phase_finished" && e["phase"] == "dev" && e["subject"]["id"] == "1.1"
        })
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(devs, [1, 2, 3]);
    let retried: Vec<serde_json::Value> = events(&d, &id)
        .into_iter()
        .filter(|e| e["event"] == "story_retried")
        .collect();
    assert_eq!(retried.len(), 1);
    assert_eq!(retried[0]["after_attempt"], 2);
    assert_eq!(retried[0]["stash"], stash.as_str());

    // Done now: not re-armed again.
    let o = run_in(&d, &["run", "--resume", &id, "--retry", "1.1"], &[]);
    assert!(!o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains(&format!("story 1.1 is done in run {id}")),
        "{}",
        text(&o)
    );
    // Resumed as it is, the run goes on to the next story, never the first again.
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 143);
    let feats = commits(&d, &branch)
        .iter()
        .filter(|(s, _)| s.starts_with("feat(story 1.1)"))
        .count();
    assert_eq!(feats, 1);
}

/// A run that finished with story 1.1 failed: `--retry 1.1` develops it in a new run with the
/// finished run's options, which lands on the user's branch. `--apply-stash` is refused there
/// (the finished run's tree is gone), saying how to start from the stash instead.
#[test]
fn retry_of_a_finished_run_develops_the_story_in_a_new_run() {
    let (_t, d) = demo("[story.\"1.1\"]\nreview = [\"fail\", \"fail\", \"pass\"]\n");
    let o = run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--only",
            "1.1",
        ],
        &[],
    );
    assert_exit(&o, 1);
    // The only run yet.
    let id = crate::util::newest_run_id(&d);
    let o = run_in(
        &d,
        &["run", "--resume", &id, "--retry", "1.1", "--apply-stash"],
        &[],
    );
    assert_exit(&o, 2);
    assert!(
        text(&o).contains("apply the stash in your checkout"),
        "{}",
        text(&o)
    );
    let o = run_in(&d, &["run", "--resume", &id, "--retry", "1.1"], &[]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains(&format!(
            "run {id} finished: 1.1 developed again in a new run"
        )),
        "{}",
        text(&o)
    );
    let subjects: Vec<String> = commits(&d, "HEAD").into_iter().map(|(s, _)| s).collect();
    assert_eq!(
        subjects
            .iter()
            .filter(|s| s.starts_with("feat(story 1.1)"))
            .count(),
        1,
        "{subjects:?}"
    );
    // Only 1.1 ran in the new run: the others of the epic are still to do.
    assert!(
        !subjects.iter().any(|s| s.contains("story 1.2")),
        "{subjects:?}"
    );
}

/// A failure analysis escalated story 1.1 and paused the run mid-story. `--retry 1.1` gives it
/// its attempts anew (numbered on from 2). The retry killed right after it is journaled: the
/// same command again goes on, re-arming nothing twice, and the story is committed once.
#[test]
fn an_escalated_story_is_re_armed_once_even_when_the_retry_is_killed() {
    let (_t, d) =
        demo("[story.\"1.1\"]\ndev = [\"block\", \"ok\"]\nfailure-analysis = [\"escalate\"]\n");
    let o = run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--party-failure",
            "--only",
            "1.1",
        ],
        &[],
    );
    assert_exit(&o, 143);
    let id = crate::util::newest_run_id(&d);
    let next = (events(&d, &id).len() + 1).to_string();
    let retry = ["run", "--resume", id.as_str(), "--retry", "1.1"];
    let o = run_in(&d, &retry, &[("BATON_CRASH_AFTER_EVENT", &next)]);
    assert!(!o.status.success(), "killed: {}", text(&o));
    assert_eq!(events(&d, &id).last().unwrap()["event"], "story_retried");
    let o = run_in(&d, &retry, &[]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("story 1.1 is re-armed already: it runs now"),
        "{}",
        text(&o)
    );
    let all = events(&d, &id);
    assert_eq!(
        all.iter().filter(|e| e["event"] == "story_retried").count(),
        1
    );
    assert_eq!(
        all.iter()
            .filter(|e| e["event"] == "story_retried")
            .map(|e| e["after_attempt"].as_u64())
            .collect::<Vec<_>>(),
        [Some(1)]
    );
    let feats = commits(&d, "HEAD")
        .iter()
        .filter(|(s, _)| s.starts_with("feat(story 1.1)"))
        .count();
    assert_eq!(feats, 1);
}

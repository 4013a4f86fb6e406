//! Pauses a run asks of itself: `--pause-after story|epic`, and a failure analysis that
//! recommends escalating. The real binary, a real git repository, the simulated agent.

use std::path::Path;

use crate::util::{
    assert_exit, demo_epic_2, git, newest_run_id as run_id, run_in, temp_demo as demo, text,
};

fn feats(dir: &Path) -> usize {
    let branch = format!("baton/run-{}", run_id(dir));
    let tip = if crate::util::git_ok(dir, &["rev-parse", "--verify", "-q", &branch]) {
        branch
    } else {
        "HEAD".into()
    };
    git(dir, &["log", "--format=%s", &format!("main..{tip}")])
        .lines()
        .filter(|s| s.starts_with("feat(story "))
        .count()
}

#[test]
fn pause_after_epic_stops_a_chain_between_its_epics_and_resume_goes_on() {
    let (_t, d) = demo("");
    demo_epic_2(&d);
    let o = run_in(
        &d,
        &[
            "run",
            "epic-chain",
            "1",
            "2",
            "--agent",
            "sim",
            "--pause-after",
            "epic",
        ],
        &[],
    );
    assert_exit(&o, 143);
    assert!(
        text(&o).contains("the pause after epic 1 (--pause-after epic)"),
        "{}",
        text(&o)
    );
    let id = run_id(&d);
    assert!(
        text(&o).contains(&format!("baton run --resume {id}")),
        "{}",
        text(&o)
    );
    // Epic 2's story has not started.
    let prompts = std::fs::read_dir(d.join(".baton/runs").join(&id).join("prompts"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(!prompts.iter().any(|p| p.starts_with("2-")), "{prompts:?}");
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    assert!(!text(&o).contains("the pause after"), "{}", text(&o));
    assert_eq!(
        git(&d, &["log", "--format=%s", "-1", "--grep=story 2.1"])
            .lines()
            .count(),
        1
    );
}

#[test]
fn pause_after_story_pauses_once_after_each_story() {
    let (_t, d) = demo("");
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
            "--only",
            "1.1,1.2",
        ],
        &[],
    );
    assert_exit(&o, 143);
    assert!(
        text(&o).contains("the pause after story 1.1"),
        "{}",
        text(&o)
    );
    assert_eq!(feats(&d), 1);
    let id = run_id(&d);
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 143);
    assert!(
        text(&o).contains("the pause after story 1.2"),
        "{}",
        text(&o)
    );
    assert_eq!(feats(&d), 2);
    // After the last story there is nothing to pause before: the run ends.
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    assert_eq!(feats(&d), 2);
    let status = run_in(&d, &["status", "--json"], &[]);
    assert!(String::from_utf8_lossy(&status.stdout).contains("\"finished\""));
}

#[test]
fn a_failure_analysis_that_escalates_pauses_the_run_for_a_human() {
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
    assert!(
        text(&o).contains("story 1.1's failure analysis recommends escalating to a human"),
        "{}",
        text(&o)
    );
    // The second attempt waits for the human: resumed, it runs, and the run does not pause at
    // the same escalation again.
    let id = run_id(&d);
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    assert_eq!(feats(&d), 1, "{}", text(&o));
}

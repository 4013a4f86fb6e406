//! epic-execute end to end: the real binary, a real git repository, the simulated agent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::{EPIC_SIM, bin, no_backoff};

struct Demo {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
}

use crate::util::assert_exit;
use crate::util::git;
use crate::util::text as out;
use crate::util::{git_ok, sim_hang_pid};

/// The demo's BMAD project (4 stories) on branch epic-1, with `scenario` for the sim agent.
fn project(scenario: &str) -> Demo {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    crate::util::demo_repo(&dir, scenario);
    Demo { _tmp: tmp, dir }
}

impl Demo {
    fn run(&self, args: &[&str]) -> Output {
        self.run_env(args, &[])
    }
    fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        crate::util::run_in(&self.dir, args, env)
    }
    fn story(&self, id: &str) -> String {
        std::fs::read_to_string(crate::util::demo_story_path(&self.dir, id)).unwrap()
    }
    /// Commits of stories that passed (`feat(story …)`) on the epic branch.
    fn story_commits(&self) -> usize {
        self.log()
            .iter()
            .filter(|s| s.starts_with("feat(story "))
            .count()
    }
    /// Where the latest run's commits are: its own branch while it has one (a run in its
    /// worktree, before it lands), else the checkout's HEAD.
    fn tip(&self) -> String {
        let runs = self.dir.join(".baton/runs");
        let branch = std::fs::read_dir(&runs)
            .ok()
            .and_then(|rd| rd.flatten().map(|e| e.file_name()).max())
            .map(|id| format!("baton/run-{}", id.to_string_lossy()));
        match branch {
            Some(b) if git_ok(&self.dir, &["rev-parse", "--verify", "-q", &b]) => b,
            _ => "HEAD".into(),
        }
    }
    fn log(&self) -> Vec<String> {
        git(
            &self.dir,
            &["log", "--format=%s", &format!("main..{}", self.tip())],
        )
        .lines()
        .map(str::to_string)
        .collect()
    }
    fn files_of(&self, subject_prefix: &str) -> Vec<String> {
        let sha = git(
            &self.dir,
            &["log", "--format=%H %s", &format!("main..{}", self.tip())],
        )
        .lines()
        .find(|l| l.split_once(' ').unwrap().1.starts_with(subject_prefix))
        .map(|l| l.split(' ').next().unwrap().to_string())
        .unwrap_or_else(|| panic!("no commit {subject_prefix}"));
        git(&self.dir, &["show", "--name-only", "--format=", &sha])
            .lines()
            .map(str::to_string)
            .collect()
    }
    fn run_dir(&self) -> PathBuf {
        let runs = self.dir.join(".baton/runs");
        let mut all: Vec<_> = std::fs::read_dir(&runs)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        all.sort();
        all.pop().unwrap()
    }
    fn run_id(&self) -> String {
        self.run_dir()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }
    fn events(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.run_dir().join("events.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

#[test]
fn a_full_run_commits_each_story_with_its_records() {
    let d = project("");
    let o = d.run(&["run", "epic-execute", "1", "--agent", "sim", "--party-all"]);
    assert!(o.status.success(), "{}", out(&o));
    let log = d.log();
    for id in ["1.1", "1.2", "1.3", "1.4"] {
        assert_eq!(
            log.iter()
                .filter(|s| s.starts_with(&format!("feat(story {id})")))
                .count(),
            1,
            "{log:?}"
        );
        let s = d.story(id);
        for rec in [
            "## Story Kickoff Insights",
            "## Dev Agent Record",
            "## Code Review Record",
        ] {
            assert_eq!(s.matches(rec).count(), 1, "{id} {rec}\n{s}");
        }
        assert!(s.contains("Status: done"), "{s}");
    }
    assert!(log.iter().any(|s| s.starts_with("docs(epic 1)")), "{log:?}");
    for f in [
        "docs/uat/epic-1-uat.md",
        "docs/sprints/epic-1-retro.md",
        "docs/handoffs/epic-1-handoff.md",
    ] {
        assert!(d.dir.join(f).is_file(), "{f}");
    }
    // Each commit carries the story and the run.
    let body = git(&d.dir, &["log", "-1", "--format=%B", "--grep=story 1.2"]);
    assert!(
        body.contains("Baton-Story: 1.2") && body.contains(&format!("Baton-Run: {}", d.run_id())),
        "{body}"
    );
    assert_eq!(
        git(&d.dir, &["status", "--porcelain"]).trim(),
        "",
        "the tree is clean"
    );
    let text = out(&o);
    assert!(text.contains("4 done, 0 failed"), "{text}");
}

#[test]
fn dry_run_shows_isolated_prompts_and_changes_nothing() {
    let d = project("");
    let before = git(&d.dir, &["status", "--porcelain"]);
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--party-kickoff",
        "--dry-run",
        "--verbose",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    let section = |title: &str| -> String {
        let header = format!("===== {title} =====");
        let start = text
            .find(&header)
            .unwrap_or_else(|| panic!("no {title} in {text}"));
        let rest = &text[start + header.len()..];
        rest[..rest.find("=====").unwrap_or(rest.len())].to_string()
    };
    let dev = section("DEV PHASE: story 1.1");
    assert!(
        !dev.contains("Code Review") && !dev.to_lowercase().contains("severity"),
        "{dev}"
    );
    assert!(
        dev.contains("docs/stories/1.1.project-skeleton.md"),
        "the story is passed by path: {dev}"
    );
    let review = section("REVIEW PHASE: story 1.1");
    assert!(
        review.contains("You are seeing this code for the first time"),
        "{review}"
    );
    assert!(section("KICKOFF PHASE: story 1.1").contains("Story Kickoff Insights"));
    // --json: the same prompts, one object each, whole.
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--party-kickoff",
        "--dry-run",
        "--json",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let prompts: Vec<serde_json::Value> = crate::util::json_lines(&o.stdout);
    assert_eq!(
        prompts.len(),
        text.matches("\n===== ").count() + 1,
        "{prompts:?}"
    );
    let dev_json = prompts
        .iter()
        .find(|p| p["title"] == "DEV PHASE: story 1.1")
        .unwrap();
    assert_eq!(dev_json["event"], "prompt");
    assert_eq!(dev_json["agent"], "sim");
    // The human form heads each prompt with its agent, model and command line.
    let (head, body) = dev
        .trim_start()
        .split_once("argv: (the simulated agent: no CLI)\n")
        .unwrap();
    assert_eq!(head, "agent: sim · model: standard tier\n");
    assert_eq!(dev_json["prompt"].as_str().unwrap().trim(), body.trim());
    assert_eq!(before, git(&d.dir, &["status", "--porcelain"]));
    assert!(
        !d.dir.join(".baton/runs").exists(),
        "a dry run records no run"
    );
    assert_eq!(d.log().len(), 0);
}

#[test]
fn kickoff_writes_its_section_before_dev() {
    let d = project("");
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--party-kickoff",
        "--no-commit",
        "--start-from",
        "1.4",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let s = d.story("1.4");
    let k = s
        .find("## Story Kickoff Insights")
        .expect("kickoff section");
    let dev = s.find("## Dev Agent Record").expect("dev record");
    assert!(k < dev, "kickoff insights come first");
    assert!(
        !d.story("1.1").contains("Dev Agent Record"),
        "--start-from skipped 1.1"
    );
}

#[test]
fn a_blocked_story_gets_a_failure_analysis_and_the_run_goes_on() {
    let d = project("[story.\"1.2\"]\ndev = [\"block\"]\n");
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--party-failure",
    ]);
    // A failed story makes the exit code 1.
    assert_exit(&o, 1);
    let s = d.story("1.2");
    assert_eq!(
        s.matches("## Failure Analysis Record").count(),
        2,
        "one per failed attempt: {s}"
    );
    // BMAD has no `failed`: the story stays in progress, the reason in its record.
    assert!(s.contains("Status: in-progress"), "{s}");
    assert!(s.contains("not done"), "{s}");
    let log = d.log();
    assert!(
        log.iter().any(|l| l.starts_with("docs(story 1.2): failed")),
        "{log:?}"
    );
    assert!(
        log.iter().any(|l| l.starts_with("feat(story 1.3)")),
        "the run went on: {log:?}"
    );
    // The blocked story's code never reaches another story's commit, and is not lost.
    let files = d.files_of("feat(story 1.3)");
    assert!(!files.iter().any(|f| f.contains("story_1_2")), "{files:?}");
    let stash = git(&d.dir, &["stash", "list"]);
    assert!(stash.contains("story 1.2 failed"), "{stash}");
    assert!(
        git(
            &d.dir,
            &[
                "stash",
                "show",
                "--include-untracked",
                "--name-only",
                "stash@{0}"
            ]
        )
        .contains("src/story_1_2.txt")
    );
}

#[test]
fn a_failed_review_is_fixed_on_retry() {
    let d = project("[story.\"1.1\"]\nreview = [\"fail\", \"pass\"]\n");
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--start-from",
        "1.1",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let s = d.story("1.1");
    assert_eq!(s.matches("## Dev Agent Record").count(), 2, "{s}");
    assert_eq!(s.matches("## Code Review Record").count(), 2, "{s}");
    assert!(s.contains("Status: done"));
    assert_eq!(
        d.log()
            .iter()
            .filter(|l| l.starts_with("feat(story 1.1)"))
            .count(),
        1
    );
}

#[test]
fn claims_are_checked_against_the_disk() {
    let d = project(
        "[story.\"1.1\"]\ndev = [\"nostage\"]\n[story.\"1.2\"]\ndev = [\"norecord\"]\n[story.\"1.3\"]\ndev = [\"nosignal\"]\n[story.\"1.4\"]\ndev = [\"secret\"]\n",
    );
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 1);
    let text = out(&o);
    assert!(
        text.contains("changed no files besides the story file"),
        "{text}"
    );
    assert!(
        text.contains("did not append a `## Dev Agent Record`"),
        "{text}"
    );
    assert!(text.contains("no completion signal"), "{text}");
    assert!(text.contains("likely secrets are staged: .env"), "{text}");
    assert!(
        !d.log().iter().any(|l| l.starts_with("feat(")),
        "nothing passed"
    );
    // On the branch: the failed stories' edits (the .env among them) are set aside in stashes.
    let committed = git(&d.dir, &["log", "--format=", "--name-only", "HEAD"]);
    assert!(
        !committed.lines().any(|l| l == ".env"),
        "a secret was committed: {committed}"
    );
}

#[test]
fn a_hanging_agent_is_killed_with_its_process_group() {
    let d = project("[story.\"1.1\"]\ndev = [\"hang\"]\n");
    std::fs::create_dir_all(d.dir.join(".baton/workflows")).unwrap();
    let wf = baton_engine::workflow::epic::def::BUILTIN[0]
        .1
        .replace("timeout_secs = 1800", "timeout_secs = 2")
        .replace("grace_secs = 10", "grace_secs = 1")
        .replace("max_attempts = 2", "max_attempts = 1");
    std::fs::write(d.dir.join(".baton/workflows/epic-execute.toml"), wf).unwrap();
    let t = std::time::Instant::now();
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--start-from",
        "1.1",
        "--no-commit",
    ]);
    assert!(t.elapsed().as_secs() < 60);
    let text = out(&o);
    assert!(text.contains("timed out"), "{text}");
    let pid: i32 = std::fs::read_to_string(d.dir.join(".baton/sim-hang.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // Gone, or a zombie waiting for a reaper (in containers pid 1 may never reap it).
    let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|st| {
        st.rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next())
            != Some("Z")
    });
    assert!(!alive, "the agent's child {pid} outlived the timeout");
}

#[test]
fn fifty_megabytes_of_output_are_logged_not_held() {
    let d = project("[story.\"1.1\"]\ndev = [\"flood\"]\n");
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--start-from",
        "1.1",
        "--skip-review",
        "--no-commit",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let log = d.run_dir().join("logs/1-1.1-dev-1.log");
    assert!(
        std::fs::metadata(&log).unwrap().len() > 50_000_000,
        "the whole output is in {}",
        log.display()
    );
    assert!(d.story("1.1").contains("## Dev Agent Record"));
}

#[test]
fn epic_chain_feeds_each_handoff_into_the_next_epic() {
    let d = project("");
    crate::util::demo_epic_2(&d.dir);
    let o = d.run(&[
        "run",
        "epic-chain",
        "1",
        "2",
        "--agent",
        "sim",
        "--party-retro",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let prompt = std::fs::read_to_string(d.run_dir().join("prompts/2-2.1-dev-1.md")).unwrap();
    assert!(
        prompt.contains("docs/handoffs/epic-1-handoff.md"),
        "{prompt}"
    );
    let first = std::fs::read_to_string(d.run_dir().join("prompts/1-1.1-dev-1.md")).unwrap();
    assert!(
        !first.contains("handoff"),
        "the first epic has no handoff: {first}"
    );
    assert!(d.dir.join("docs/handoffs/epic-2-handoff.md").is_file());
}

#[test]
fn bad_input_is_refused_before_anything_runs() {
    let d = project("");
    let o = d.run(&["run", "epic-execute", "9", "--agent", "sim"]);
    assert_exit(&o, 4);
    assert!(out(&o).contains("epic 9 not found"), "{}", out(&o));
    git(&d.dir, &["switch", "-q", "main"]);
    // In place, the stories would be committed on main itself (in a worktree of its own the
    // run may start there: see run_tree).
    let o = d.run(&["run", "epic-execute", "1", "--agent", "sim", "--in-place"]);
    assert_exit(&o, 3);
    assert!(out(&o).contains("protected branch `main`"), "{}", out(&o));
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "gpt-9",
        "--no-commit",
    ]);
    assert_exit(&o, 2);
    assert!(out(&o).contains("unknown agent `gpt-9`"), "{}", out(&o));
    let o = d.run(&["run", "--resume", "20990101T000000-abcdef"]);
    assert_exit(&o, 4);
}

/// Kill the orchestrator right after each journal event of the demo epic in turn, resume, and
/// check that the result is exactly that of an uninterrupted run.
#[test]
fn a_crash_at_every_event_boundary_resumes_to_the_same_result() {
    let scenario =
        "[story.\"1.2\"]\nreview = [\"fail\", \"pass\"]\n[story.\"1.3\"]\ndev = [\"block\"]\n";
    let clean = project(scenario);
    let o = clean.run(&["run", "epic-execute", "1", "--agent", "sim", "--party-all"]);
    assert_exit(&o, 1);
    let total = clean.events().len();
    let calls = |d: &Demo| {
        d.events()
            .iter()
            .filter(|e| e["event"] == "phase_finished")
            .count()
    };
    let want_calls = calls(&clean);
    let want_log = clean.log();
    assert!(total > 30, "{total}");
    for n in 1..total {
        let d = project(scenario);
        let o = d.run_env(
            &["run", "epic-execute", "1", "--agent", "sim", "--party-all"],
            &[("BATON_CRASH_AFTER_EVENT", &n.to_string())],
        );
        assert_eq!(o.status.code(), None, "killed after event {n}");
        let o = d.run(&["run", "--resume", &d.run_id()]);
        assert!(
            o.status.code().is_some_and(|c| c <= 1),
            "resume after event {n}: {}",
            out(&o)
        );
        let events = d.events();
        assert!(
            events.last().unwrap()["event"] == "run_finished",
            "after event {n}"
        );
        // No completed agent call was repeated: each (story, phase, attempt) finished once.
        let mut keys: Vec<String> = events
            .iter()
            .filter(|e| e["event"] == "phase_finished")
            .map(|e| format!("{}-{}-{}", e["subject"]["id"], e["phase"], e["attempt"]))
            .collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(
            keys.len(),
            all,
            "an agent call was repeated after a crash at event {n}"
        );
        assert_eq!(all, want_calls, "after event {n}");
        assert_eq!(d.log(), want_log, "commits after a crash at event {n}");
        for id in ["1.1", "1.2", "1.4"] {
            let s = d.story(id);
            assert_eq!(
                s.matches("## Story Kickoff Insights").count(),
                1,
                "{id} after event {n}"
            );
        }
    }
}

/// Subjects of the run's branch, oldest first.
fn subjects_in_order(d: &Demo) -> Vec<String> {
    let mut v = d.log();
    v.reverse();
    v
}

fn worktrees(d: &Demo) -> Vec<String> {
    git(&d.dir, &["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree "))
        .map(str::to_string)
        .collect()
}

#[test]
fn parallel_stories_merge_in_story_order_and_failures_stay_on_their_branch() {
    // 200 ms per phase: long enough that running stories overlap in time if they run at once.
    let d = project("latency_ms = 200\n[story.\"1.3\"]\ndev = [\"block\"]\n");
    std::fs::write(d.dir.join("README.md"), "edited\n").unwrap();
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--parallel",
        "3",
    ]);
    // A dirty checkout is refused.
    assert_exit(&o, 3);
    assert!(out(&o).contains("README.md"), "{}", out(&o));
    git(&d.dir, &["checkout", "--", "README.md"]);

    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--parallel",
        "3",
    ]);
    assert_exit(&o, 1);
    let subjects = subjects_in_order(&d);
    let stories: Vec<&String> = subjects.iter().filter(|s| s.contains("(story ")).collect();
    assert_eq!(stories.len(), 4, "one commit per story: {subjects:?}");
    for (s, id) in stories.iter().zip(["1.1", "1.2", "1.3", "1.4"]) {
        assert!(
            s.contains(&format!("(story {id})")),
            "story order: {subjects:?}"
        );
    }
    assert!(
        stories[2].starts_with("docs(story 1.3): failed"),
        "{subjects:?}"
    );
    for id in ["1.1", "1.2", "1.4"] {
        let s = d.story(id);
        assert_eq!(s.matches("## Dev Agent Record").count(), 1, "{id}\n{s}");
        assert_eq!(s.matches("## Code Review Record").count(), 1, "{id}\n{s}");
        assert!(s.contains("Status: done"), "{s}");
        let body = git(
            &d.dir,
            &["log", "-1", "--format=%B", &format!("--grep=story {id})")],
        );
        assert!(
            body.contains(&format!("Baton-Story: {id}"))
                && body.contains(&format!("Baton-Run: {}", d.run_id())),
            "{body}"
        );
    }
    // The failed story: its records and status on the branch, its code only on its own.
    let s = d.story("1.3");
    assert!(
        s.contains("Status: in-progress")
            && s.contains("## Dev Agent Record")
            && s.contains("not done"),
        "{s}"
    );
    let tree = git(&d.dir, &["ls-tree", "-r", "--name-only", "HEAD"]);
    assert!(tree.contains("src/story_1_4.txt"), "{tree}");
    assert!(
        !tree.contains("src/story_1_3.txt"),
        "a failed story's code reached the branch"
    );
    let branch = format!("baton/{}/1.3", d.run_id());
    let kept = git(&d.dir, &["ls-tree", "-r", "--name-only", &branch]);
    assert!(kept.contains("src/story_1_3.txt"), "{kept}");
    // Worktrees: the done stories' are gone, the failed one's is kept (and said where).
    let wts = worktrees(&d);
    assert_eq!(wts.len(), 2, "{wts:?}");
    let kept_dir = d.dir.join(".baton/worktrees").join(d.run_id()).join("1.3");
    assert!(kept_dir.join("src/story_1_3.txt").is_file());
    assert!(
        out(&o).contains(&kept_dir.display().to_string()),
        "{}",
        out(&o)
    );
    for id in ["1.1", "1.2", "1.4"] {
        assert!(
            !d.dir
                .join(".baton/worktrees")
                .join(d.run_id())
                .join(id)
                .exists()
        );
    }
    assert_eq!(git(&d.dir, &["status", "--porcelain"]).trim(), "");
    // They did run at once: a later story started before the first one finished.
    let events = d.events();
    let pos = |ev: &str, story: &str| {
        events
            .iter()
            .position(|e| e["event"] == ev && (e["story"] == story || e["subject"]["id"] == story))
            .unwrap()
    };
    assert!(
        pos("phase_started", "1.2") < pos("subject_finished", "1.1"),
        "no overlap: {events:?}"
    );
}

#[test]
fn a_story_that_depends_on_another_waits_for_it_or_is_skipped() {
    let d = project("[story.\"1.1\"]\ndev = [\"block\"]\n");
    let add = |id: &str, line: &str| {
        let p = crate::util::demo_story_path(&d.dir, id);
        let t = std::fs::read_to_string(&p).unwrap();
        std::fs::write(
            &p,
            t.replace("\n## Story", &format!("\n{line}\n\n## Story")),
        )
        .unwrap();
    };
    add("1.2", "Depends on: 1.1");
    add("1.3", "**Depends on:** 1.4");
    git(&d.dir, &["commit", "-q", "-am", "dependencies"]);
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--parallel",
        "4",
    ]);
    assert_exit(&o, 1);
    let finished = |id: &str| -> serde_json::Value {
        d.events()
            .into_iter()
            .find(|e| e["event"] == "subject_finished" && e["subject"]["id"] == id)
            .unwrap()
    };
    assert_eq!(finished("1.1")["result"], "failed");
    let f = finished("1.2");
    assert_eq!(f["result"], "skipped", "{f}");
    assert!(
        f["reason"]
            .as_str()
            .unwrap()
            .contains("depends on story 1.1"),
        "{f}"
    );
    let f = finished("1.3");
    assert_eq!(f["result"], "failed", "{f}");
    assert!(f["reason"].as_str().unwrap().contains("1.4"), "{f}");
    assert_eq!(finished("1.4")["result"], "done");
    assert!(
        !d.events().iter().any(|e| e["event"] == "phase_started"
            && (e["subject"]["id"] == "1.2" || e["subject"]["id"] == "1.3")),
        "blocked stories never ran"
    );

    // With 1.1 passing, 1.2 starts only after 1.1 is on the branch, and from a branch that has it.
    let d2 = project("");
    let d = &d2;
    let dir = d.dir.join("docs/stories");
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        if p.file_name().unwrap().to_string_lossy().starts_with("1.2.") {
            let t = std::fs::read_to_string(&p).unwrap();
            std::fs::write(&p, format!("{t}\nDepends on: 1.1\n")).unwrap();
        }
    }
    git(&d.dir, &["commit", "-q", "-am", "dependency"]);
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--parallel",
        "4",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let events = d.events();
    let committed = events
        .iter()
        .position(|e| e["event"] == "story_committed" && e["story"] == "1.1")
        .unwrap();
    let started = events
        .iter()
        .position(|e| e["event"] == "phase_started" && e["subject"]["id"] == "1.2")
        .unwrap();
    assert!(committed < started, "1.2 started before 1.1 was merged");
    let subjects = subjects_in_order(d);
    assert!(
        subjects.iter().filter(|s| s.starts_with("feat(")).count() == 4,
        "{subjects:?}"
    );
}

/// Wait (up to 10 s) until no git process works in `dir`: those a killed baton started
/// finish on their own.
fn settle(dir: &std::path::Path) {
    let busy = || {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let p = e.path();
                let git = std::fs::read(p.join("comm")).is_ok_and(|c| c.starts_with(b"git"));
                git && std::fs::read_link(p.join("cwd")).is_ok_and(|c| c.starts_with(dir))
            })
    };
    let start = std::time::Instant::now();
    while busy() && start.elapsed() < std::time::Duration::from_secs(10) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Kill a parallel run right after journal event N (for a spread of N), resume it, and check
/// every story is committed exactly once, in order, with no completed agent call repeated.
#[test]
fn a_parallel_run_killed_midway_resumes_with_every_story_committed_once() {
    let scenario = "[story.\"1.2\"]\nreview = [\"fail\", \"pass\"]\n";
    let args = [
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--parallel",
        "3",
    ];
    let clean = project(scenario);
    let o = clean.run(&args);
    assert!(o.status.success(), "{}", out(&o));
    let total = clean.events().len();
    let want: Vec<String> = subjects_in_order(&clean);
    assert!(total > 20, "{total}");
    let step = (total / 9).max(1);
    let mut planted_anywhere = 0;
    for n in (1..total).step_by(step) {
        let d = project(scenario);
        let o = d.run_env(&args, &[("BATON_CRASH_AFTER_EVENT", &n.to_string())]);
        assert_eq!(o.status.code(), None, "killed after event {n}");
        // The killed baton's git command (a merged story's `git worktree remove`) goes on
        // without it: what it removes after the plant below would never be noted.
        settle(&d.dir);
        // A story write the kill cut short in a story's worktree (no pid is that high).
        let mut planted = Vec::new();
        let wts = d.dir.join(".baton/worktrees").join(d.run_id());
        for wt in std::fs::read_dir(&wts).into_iter().flatten().flatten() {
            let stories = wt.path().join("docs/stories");
            if stories.is_dir() {
                let f = stories.join(".baton-tmp-99999999-Ab12Cd");
                std::fs::write(&f, "half a story").unwrap();
                planted.push(f.strip_prefix(&d.dir).unwrap().display().to_string());
            }
        }
        let o = d.run(&["run", "--resume", &d.run_id()]);
        assert!(o.status.success(), "resume after event {n}: {}", out(&o));
        for f in &planted {
            assert!(
                out(&o).contains(&format!("note: removed {f}, left by a write")),
                "after {n}: {f} of {planted:?} not noted: {}",
                out(&o)
            );
        }
        planted_anywhere += planted.len();
        let events = d.events();
        assert_eq!(events.last().unwrap()["event"], "run_finished", "after {n}");
        let mut keys: Vec<String> = events
            .iter()
            .filter(|e| e["event"] == "phase_finished")
            .map(|e| format!("{}-{}-{}", e["subject"]["id"], e["phase"], e["attempt"]))
            .collect();
        let all = keys.len();
        keys.sort();
        keys.dedup();
        assert_eq!(
            keys.len(),
            all,
            "an agent call was repeated after event {n}"
        );
        assert_eq!(
            subjects_in_order(&d),
            want,
            "commits after a crash at event {n}"
        );
        for id in ["1.1", "1.2", "1.3", "1.4"] {
            let s = d.story(id);
            assert!(s.contains("Status: done"), "{id} after {n}: {s}");
        }
        assert!(
            !d.dir.join(".baton/worktrees").join(d.run_id()).exists(),
            "worktrees left after {n}: {:?}",
            worktrees(&d)
        );
        assert_eq!(worktrees(&d).len(), 1, "after {n}");
    }
    assert!(
        planted_anywhere > 0,
        "no crash point left a story's worktree"
    );
}

#[test]
fn baton_toml_routes_roles_to_agents() {
    let d = project("");
    std::fs::write(
        d.dir.join("baton.toml"),
        "[run]\ndefault_agent = \"sim\"\n[run.roles.review]\nagent = \"codex\"\n",
    )
    .unwrap();
    git(&d.dir, &["add", "-A"]);
    git(&d.dir, &["commit", "-q", "-m", "config"]);
    // Each phase's prompt goes to its role's agent.
    let o = d.run(&["run", "epic-execute", "1", "--dry-run"]);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("===== DEV PHASE: story 1.1 =====\nagent: sim"),
        "{text}"
    );
    assert!(
        text.contains("===== REVIEW PHASE: story 1.1 =====\nagent: codex"),
        "{text}"
    );
    // No codex on PATH: the run stops before its first phase, naming the agent.
    let o = d.run_env(
        &["run", "epic-execute", "1", "--no-commit"],
        &[("PATH", "/usr/bin:/bin")],
    );
    let text = out(&o);
    assert_exit(&o, 7);
    assert!(
        text.contains("agent CLI `codex` is not installed"),
        "{text}"
    );
    assert!(
        !d.story("1.1").contains("## Dev Agent Record"),
        "no phase ran"
    );
}

#[test]
fn status_shows_runs_and_a_damaged_journal() {
    let d = project("");
    let o = d.run(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "sim",
        "--start-from",
        "1.4",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let id = d.run_id();
    // A run keeps the agent it started with: another one at resume is refused, with the reason.
    let o = d.run(&["run", "--resume", &id, "--agent", "claude"]);
    assert_exit(&o, 2);
    assert!(
        out(&o).contains(&format!(
            "run {id} continues with the agent it started with (sim), not claude"
        )),
        "{}",
        out(&o)
    );
    let runs = d.dir.join(".baton/runs");
    std::fs::create_dir_all(runs.join("20990101T000000-abcdef")).unwrap();
    std::fs::write(
        runs.join("20990101T000000-abcdef/events.jsonl"),
        "{not json\n",
    )
    .unwrap();
    let o = d.run(&["status", "--json"]);
    assert!(o.status.success(), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["runs"].as_array().unwrap();
    let mine = rows.iter().find(|r| r["run_id"] == id.as_str()).unwrap();
    assert_eq!(mine["state"], "finished");
    assert_eq!(mine["done"], 1);
    let bad = rows
        .iter()
        .find(|r| r["run_id"] == "20990101T000000-abcdef")
        .unwrap();
    assert_eq!(bad["state"], "damaged");
    assert!(
        bad["next"]
            .as_str()
            .unwrap()
            .contains("events.jsonl line 1"),
        "{bad}"
    );
}

#[test]
fn a_signal_for_another_story_does_not_pass_the_phase() {
    let d = project("[story.\"1.1\"]\ndev = [\"wrongid\"]\n");
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 1);
    let devs: Vec<serde_json::Value> = d
        .events()
        .into_iter()
        .filter(|e| {
            e["event"] == "phase_finished" && e["subject"]["id"] == "1.1" && e["phase"] == "dev"
        })
        .collect();
    assert_eq!(devs.len(), 2, "both attempts ran: {devs:?}");
    for e in &devs {
        assert_eq!(e["outcome"]["ok"], false);
        assert_eq!(e["outcome"]["judged"], "broken");
        let detail = e["outcome"]["detail"].as_str().unwrap();
        assert!(
            detail.contains("no completion signal") && detail.contains("9.99"),
            "{detail}"
        );
    }
    let finished = d
        .events()
        .into_iter()
        .find(|e| e["event"] == "subject_finished" && e["subject"]["id"] == "1.1")
        .unwrap();
    assert_eq!(finished["result"], "failed");
    // The other stories were not affected.
    assert!(
        d.story("1.2").contains("Status: done"),
        "{}",
        d.story("1.2")
    );
}

#[test]
fn a_rate_limited_call_is_waited_out_not_counted_as_a_failure() {
    let d = project("[story.\"1.1\"]\ndev = [\"ratelimit\"]\n");
    no_backoff(&d.dir, "epic-execute");
    let o = d.run(&["run", "epic-execute", "1", "--agent", "sim", "--json"]);
    assert_exit(&o, 0);
    let lines: Vec<serde_json::Value> = crate::util::json_lines(&o.stdout);
    let retrying: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|e| e["event"] == "phase_retrying")
        .collect();
    assert_eq!(retrying.len(), 1, "{lines:?}");
    assert_eq!(retrying[0]["subject"]["id"], "1.1");
    assert_eq!(retrying[0]["phase"], "dev");
    assert!(
        retrying[0]["reason"].as_str().unwrap().contains("429"),
        "{retrying:?}"
    );
    // One attempt, recorded once, passed.
    let devs: Vec<serde_json::Value> = d
        .events()
        .into_iter()
        .filter(|e| {
            e["event"] == "phase_finished" && e["subject"]["id"] == "1.1" && e["phase"] == "dev"
        })
        .collect();
    assert_eq!(devs.len(), 1, "{devs:?}");
    assert_eq!(devs[0]["attempt"], 1);
    assert_eq!(devs[0]["outcome"]["ok"], true);
    assert_eq!(lines.last().unwrap()["event"], "run_finished");
    // Every commit is an event too, named by its story.
    let committed: Vec<&str> = lines
        .iter()
        .filter(|e| e["event"] == "committed" && e["subject"]["kind"] == "story")
        .map(|e| e["subject"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(committed, ["1.1", "1.2", "1.3", "1.4"], "{lines:?}");
}

/// A `claude` on PATH that is not logged in: it prints Claude Code's own answer for that.
fn logged_out_claude(dir: &Path) -> PathBuf {
    let bin = dir.join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/claude/not_logged_in.jsonl");
    let script = bin.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >/dev/null\necho call >> \"{}/calls\"\ncat \"{}\"\nexit 1\n",
            bin.display(),
            fixture.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

#[test]
fn an_agent_that_cannot_work_stops_the_run_at_once_and_changes_nothing() {
    let d = project("");
    let fake = logged_out_claude(&d.dir);
    let story_before = d.story("1.1");
    let head = git(&d.dir, &["rev-parse", "HEAD"]);
    let path = format!("{}:{}", fake.display(), std::env::var("PATH").unwrap());
    let o = d.run_env(
        &["run", "epic-execute", "1", "--agent", "claude"],
        &[("PATH", &path)],
    );
    let text = out(&o);
    assert_exit(&o, 7);
    assert!(
        text.contains("claude cannot run the dev phase of story 1.1: Not logged in"),
        "{text}"
    );
    assert!(
        text.contains("log in: run `claude` once interactively"),
        "{text}"
    );
    assert!(text.contains("baton run --resume"), "{text}");
    // One call: no attempt was spent on it, nothing judged, committed or stashed.
    let calls = std::fs::read_to_string(fake.join("calls")).unwrap();
    assert_eq!(calls.lines().count(), 1, "{calls}");
    assert_eq!(git(&d.dir, &["rev-parse", "HEAD"]), head);
    assert_eq!(d.story("1.1"), story_before, "the story file is as it was");
    assert!(git(&d.dir, &["stash", "list"]).is_empty());
    let events = d.events();
    assert!(
        !events.iter().any(|e| e["event"] == "phase_finished"),
        "{events:?}"
    );
    // Logged in now (a `claude` that is the simulated agent): the same run goes on from that
    // phase and commits every story once.
    let script = fake.join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nBATON_AGENT_SIM=1 exec \"{}\" \"$@\"\n",
            bin().display()
        ),
    )
    .unwrap();
    let o = d.run_env(&["run", "--resume", &d.run_id()], &[("PATH", &path)]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(d.story_commits(), 4, "{:?}", d.log());
}

/// Ctrl-C as a terminal sends it: SIGINT to baton's whole process group while an agent works.
#[test]
fn ctrl_c_stops_the_agent_journals_the_interruption_and_the_run_resumes() {
    use std::os::unix::process::CommandExt;
    let d = project("[story.\"1.1\"]\ndev = [\"hang\"]\n");
    let child = Command::new(bin())
        .args(["run", "epic-execute", "1", "--agent", "sim", "--json"])
        .current_dir(&d.dir)
        .env_remove("BATON_AGENT_SIM")
        .process_group(0)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the hanging agent (and its grandchild) runs.
    let t = std::time::Instant::now();
    let pid_file = loop {
        if let Some(f) = sim_hang_pid(&d.dir) {
            break f;
        }
        assert!(t.elapsed().as_secs() < 30, "the agent never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let grandchild: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill(2) of the child's own process group, as a terminal's Ctrl-C does.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let t = std::time::Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(t.elapsed().as_secs() < 20, "took {:?}", t.elapsed());
    let text = out(&o);
    assert_exit(&o, 130);
    assert!(text.contains("interrupted by SIGINT"), "{text}");
    let id = d.run_id();
    assert!(text.contains(&format!("baton run --resume {id}")), "{text}");
    let interrupted = crate::util::json_lines(&o.stdout)
        .into_iter()
        .find(|e| e["event"] == "interrupted")
        .unwrap_or_else(|| panic!("no interrupted event: {text}"));
    assert_eq!(interrupted["signal"], "SIGINT");
    assert_eq!(interrupted["resume"], format!("baton run --resume {id}"));
    // The agent's whole group is gone, its grandchild too.
    // SAFETY: kill(2) with signal 0 only checks that the pid exists.
    let alive = unsafe { libc::kill(grandchild, 0) } == 0;
    let zombie = std::fs::read_to_string(format!("/proc/{grandchild}/stat"))
        .is_ok_and(|s| s.split(' ').nth(2) == Some("Z"));
    assert!(
        !alive || zombie,
        "the agent's grandchild {grandchild} survived"
    );
    let events = d.events();
    assert_eq!(events.last().unwrap()["event"], "interrupted", "{events:?}");
    assert!(
        !events.iter().any(|e| e["event"] == "phase_finished"),
        "{events:?}"
    );
    // Resumed (the agent behaves now): every story committed once, nothing repeated.
    std::fs::write(d.dir.join(".baton/sim.toml"), "").unwrap();
    let o = d.run(&["run", "--resume", &id]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(d.story_commits(), 4, "{:?}", d.log());
}

/// A Ctrl-C that reaches baton's group while a git command is being started kills that git
/// before it runs (it has no group of its own yet): baton runs it again, then stops at its next
/// step, resumable. Here a `git` first on PATH does it at the first commit: it sends SIGINT to
/// baton and dies of one itself.
#[test]
fn a_git_command_killed_by_the_interrupting_signal_is_run_again() {
    let d = project("");
    let bin = d._tmp.path().join("fake-bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap();
    let real = String::from_utf8(real.stdout).unwrap();
    let real = real.trim();
    let script = bin.join("git");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nfor w in \"$@\"; do if [ \"$w\" = commit ] && [ ! -e \"{b}/killed\" ]; then\n  : > \"{b}/killed\"; kill -INT $PPID; kill -INT $$; fi; done\nexec \"{real}\" \"$@\"\n",
            b = bin.display(),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = d.run_env(&EPIC_SIM, &[("PATH", &path)]);
    assert!(bin.join("killed").exists(), "no `git commit` was killed");
    assert_exit(&o, 130);
    assert!(out(&o).contains("interrupted by SIGINT"), "{}", out(&o));
    // The commit ran again and landed before baton stopped.
    assert_eq!(d.story_commits(), 1, "{:?}", d.log());
    let o = d.run_env(&["run", "--resume", &d.run_id()], &[("PATH", &path)]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(d.story_commits(), 4, "{:?}", d.log());
    assert_eq!(git(&d.dir, &["status", "--porcelain"]), "");
    let finished: Vec<String> = d
        .events()
        .iter()
        .filter(|e| e["event"] == "phase_finished")
        .map(|e| format!("{} {} {}", e["subject"]["id"], e["phase"], e["attempt"]))
        .collect();
    let mut once = finished.clone();
    once.sort();
    once.dedup();
    assert_eq!(once.len(), finished.len(), "{finished:?}");
}

/// A story-file write killed half-way leaves its temp file beside the story: the next run
/// removes it before an agent's `git add -A` could stage it when its writer is gone or it is
/// old; a fresh one of a live writer may be a write in progress and stays, never committed.
#[test]
fn temp_files_of_a_killed_write_are_removed_not_committed() {
    let d = project("");
    let stale = d.dir.join("docs/stories/.baton-tmp-Ab12Cd");
    let fresh = d.dir.join("docs/stories/.baton-tmp-Zz99Yy");
    // Named by a writer that is alive (this test) and by one that is gone (no pid is that
    // high): the second is a killed write's, however recent.
    let live = d.dir.join(format!(
        "docs/stories/.baton-tmp-{}-Xx11Ww",
        std::process::id()
    ));
    let orphan = d.dir.join("docs/stories/.baton-tmp-99999999-Qq11Rr");
    std::fs::write(&live, "a write in progress").unwrap();
    std::fs::write(&orphan, "half a story").unwrap();
    std::fs::write(&stale, "half a story").unwrap();
    let o = Command::new("touch")
        .args(["-d", "5 minutes ago"])
        .arg(&stale)
        .output()
        .unwrap();
    assert!(o.status.success());
    std::fs::write(&fresh, "a write in progress").unwrap();
    let o = d.run(&EPIC_SIM);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains("note: removed docs/stories/.baton-tmp-Ab12Cd"),
        "{}",
        out(&o)
    );
    assert!(
        out(&o).contains("note: removed docs/stories/.baton-tmp-99999999-Qq11Rr"),
        "{}",
        out(&o)
    );
    assert!(!stale.exists() && !orphan.exists());
    assert!(
        fresh.exists() && live.exists(),
        "a recent temp file may be a write in progress"
    );
    // The sim agent's own `git add -A` staged the two left: baton commits neither.
    let committed = git(&d.dir, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(!committed.contains(".baton-tmp-"), "{committed}");
    assert!(committed.contains("docs/uat/epic-1-uat.md"), "{committed}");
}

/// What a run needs is checked before it exists: a malformed sprint-status.yaml or scenario
/// file is refused up front, with no run, no story moved.
#[test]
fn a_broken_sprint_status_or_scenario_is_refused_before_the_run() {
    let d = project("");
    let story = d.story("1.1");
    std::fs::write(
        d.dir.join("docs/sprint-status.yaml"),
        "development_status:\n  1-1-project-skeleton: [unclosed\n",
    )
    .unwrap();
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 3);
    assert!(out(&o).contains("sprint-status.yaml"), "{}", out(&o));
    assert!(
        out(&o).contains("fix sprint-status.yaml first"),
        "{}",
        out(&o)
    );
    assert!(!d.dir.join(".baton/runs").exists(), "no run was created");
    assert_eq!(d.story("1.1"), story);
    std::fs::remove_file(d.dir.join("docs/sprint-status.yaml")).unwrap();
    std::fs::write(d.dir.join(".baton/sim.toml"), "[story.\"1.1\"\ndev = 3\n").unwrap();
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 5);
    assert!(out(&o).contains("sim.toml line 1"), "{}", out(&o));
    assert!(
        out(&o).contains("fix the simulated agent's scenario"),
        "{}",
        out(&o)
    );
    assert!(!d.dir.join(".baton/runs").exists(), "no run was created");
}

/// baton killed with SIGKILL while an agent works: the agent's own process group outlives it.
/// The resumed run stops that agent before calling the phase again, so two calls never edit
/// the tree at once.
#[test]
fn a_resumed_run_stops_the_agent_a_killed_baton_left_running() {
    let d = project(HANG_FIRST_DEV);
    let (mut child, marker, pgid) = start_slow_run(&d);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(alive(pgid), "the agent outlived baton");
    std::fs::write(d.dir.join(".baton/sim.toml"), "").unwrap();
    // A prompt write of the killed baton cut short (no pid is that high), and one of a live
    // writer (this test), which may be in progress.
    let prompts = d.run_dir().join("prompts");
    let cut_short = prompts.join(".baton-tmp-99999999-Ab12Cd");
    let live = prompts.join(format!(".baton-tmp-{}-Ef34Gh", std::process::id()));
    std::fs::write(&cut_short, "half a prompt").unwrap();
    std::fs::write(&live, "a prompt being written").unwrap();
    let o = d.run(&["run", "--resume", &d.run_id()]);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "(process group {pgid}) left running by a killed baton"
        )),
        "{text}"
    );
    assert!(!alive(pgid), "the orphaned agent was stopped");
    assert!(!marker.exists());
    assert_eq!(d.story_commits(), 4);
    assert!(
        text.contains(&format!(
            "note: removed .baton/runs/{}/prompts/.baton-tmp-99999999-Ab12Cd, left by a write that was cut short",
            d.run_id()
        )),
        "{text}"
    );
    assert!(!cut_short.exists() && live.exists());
}

/// `baton stop` stops a live run the way Ctrl-C does (resumable), and after a kill -9,
/// `status` shows the agent the killed baton left running and `baton stop` ends it.
#[test]
fn stop_ends_a_live_run_and_the_agent_a_killed_baton_left() {
    let d = project(HANG_FIRST_DEV);
    let (mut child, _marker, pgid) = start_slow_run(&d);
    let id = d.run_id();
    let state = |d: &Demo| {
        let o = d.run(&["status", "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["runs"][0].clone()
    };
    assert_eq!(state(&d)["state"], "running");
    let o = d.run(&["stop", &id]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout)
            .starts_with(&format!("run {id}: stopped (its baton, pid {}", child.id())),
        "{}",
        out(&o)
    );
    assert_eq!(
        child.wait().unwrap().code(),
        Some(143),
        "stopped as by SIGTERM"
    );
    assert!(!alive(pgid), "its agent went with it");
    assert_eq!(state(&d)["state"], "interrupted");
    // Killed outright, the baton leaves its agent: status shows it, stop ends it.
    if let Some(f) = sim_hang_pid(&d.dir) {
        std::fs::remove_file(f).unwrap();
    }
    let mut child = Command::new(bin())
        .args(["run", "--resume", &id])
        .current_dir(&d.dir)
        .env_remove("BATON_AGENT_SIM")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let t = std::time::Instant::now();
    while sim_hang_pid(&d.dir).is_none() {
        assert!(t.elapsed().as_secs() < 60, "the agent never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pgid = orphan_pgid(&d);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(alive(pgid));
    let run = state(&d);
    assert_eq!(run["state"], "interrupted");
    assert_eq!(run["left_running"][0]["pgid"], pgid, "{run}");
    let o = d.run(&["status"]);
    assert!(
        out(&o).contains(&format!("still running: the agent of 1-1.1-dev-1 (process group {pgid}), left by a killed baton: `baton stop {id}` ends it")),
        "{}",
        out(&o)
    );
    let o = d.run(&["stop", "--all"]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains(&format!(
            "run {id}: stopped the agent of 1-1.1-dev-1 (process group {pgid})"
        )),
        "{}",
        out(&o)
    );
    assert!(!alive(pgid));
    assert!(state(&d).get("left_running").is_none());
}

/// The process group of the one agent call running in the demo's run.
fn orphan_pgid(d: &Demo) -> i32 {
    let logs = d.run_dir().join("logs");
    let marker = std::fs::read_dir(&logs)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "pgid"))
        .expect("a running call's marker");
    std::fs::read_to_string(marker)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

/// A run a baton is working on is not resumed by a second one, nor is its epic started again
/// beside it; once that baton is killed, a new run of the epic stops the agent it left and
/// says how to continue the old run instead.
#[test]
fn a_live_run_is_not_run_twice_and_a_new_run_stops_a_killed_ones_agent() {
    let d = project(HANG_FIRST_DEV);
    let (mut child, _marker, pgid) = start_slow_run(&d);
    let id = d.run_id();
    let o = d.run(&["run", "--resume", &id]);
    assert_exit(&o, 3);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: run {id} is being run by another baton\n  hint: wait for it to finish (`baton status` shows where it is), or stop it and continue it here: baton run --resume {id}\n"
        )
    );
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 3);
    assert!(
        out(&o).contains(&format!(
            "error: epic 1 is being worked on by run {id}, in another baton"
        )),
        "{}",
        out(&o)
    );
    assert!(alive(pgid), "the live run's agent was left alone");
    assert_eq!(d.story_commits(), 0);

    child.kill().unwrap();
    child.wait().unwrap();
    assert!(alive(pgid), "the agent outlived baton");
    std::fs::write(d.dir.join(".baton/sim.toml"), "").unwrap();
    let o = d.run(&EPIC_SIM);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "(process group {pgid}) left running by a killed baton"
        )),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "note: run {id} of epic 1 did not finish: closed, this run takes over"
        )),
        "{text}"
    );
    assert!(!alive(pgid), "the orphaned agent was stopped");
    // The closed run is not offered again, and says why.
    let o = d.run(&["run", "--resume", &id]);
    assert_exit(&o, 3);
    assert!(
        out(&o).contains(&format!(
            "error: run {id} was closed: a new run of its epic took over"
        )),
        "{}",
        out(&o)
    );
}

/// A killed run resumed while a newer run of its epic works on it: refused — the newer run
/// closed it when it took the epic over (before, the two would have edited one tree, each
/// taking the other's work for its own).
#[test]
fn a_resumed_run_is_refused_while_a_newer_run_works_on_its_epic() {
    let d = project(HANG_FIRST_DEV);
    let (mut a, _, _) = start_slow_run(&d);
    let old = d.run_id();
    a.kill().unwrap();
    a.wait().unwrap();
    // A new run of the epic, hanging in its own first dev call (its agent has a marker of its
    // own, under its own run).
    let mut b = spawn_run(&d, false);
    let t = std::time::Instant::now();
    // Its run is the other one (ids sort by the second they start in, not within it).
    let (_newer, pgid) = loop {
        let other = std::fs::read_dir(d.dir.join(".baton/runs"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|r| !r.ends_with(&old));
        let marker = other.as_ref().and_then(|r| {
            std::fs::read_dir(r.join("logs"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "pgid"))
        });
        if let (Some(r), Some(m)) = (other, marker) {
            let text = std::fs::read_to_string(m).unwrap();
            let pgid: i32 = text.split_whitespace().next().unwrap().parse().unwrap();
            break (r.file_name().unwrap().to_string_lossy().into_owned(), pgid);
        }
        assert!(
            t.elapsed().as_secs() < 60,
            "the new run's agent never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(25));
    };
    // The newer run took the epic over: the old one was closed, and is not resumed.
    let o = d.run(&["run", "--resume", &old]);
    assert_exit(&o, 3);
    assert!(
        String::from_utf8_lossy(&o.stderr).starts_with(&format!(
            "error: run {old} was closed: a new run of its epic took over\n"
        )),
        "{}",
        out(&o)
    );
    assert!(alive(pgid), "the newer run's agent was left alone");
    b.kill().unwrap();
    b.wait().unwrap();
    // SAFETY: kill(2) of the hanging agent's process group.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// Two new runs of one epic started at the same instant: one runs it, the other is refused
/// (before, both could pass the check for a live run and edit one tree).
#[test]
fn two_runs_of_one_epic_started_together_run_it_once() {
    let d = project(HANG_FIRST_DEV);
    let mut runs = [spawn_run(&d, true), spawn_run(&d, true)];
    // The one refused ends; the other hangs in its first dev call.
    let t = std::time::Instant::now();
    let refused = loop {
        if let Some(i) = (0..2).find(|&i| runs[i].try_wait().unwrap().is_some()) {
            break i;
        }
        if t.elapsed().as_secs() > 60 {
            for r in &mut runs {
                let _ = r.kill();
            }
            panic!("neither run was refused: both started the epic");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let [a, b] = runs;
    let (loser, mut winner) = if refused == 0 { (a, b) } else { (b, a) };
    let o = loser.wait_with_output().unwrap();
    assert_exit(&o, 3);
    let id = d.run_id();
    assert!(
        out(&o).contains(&format!(
            "error: epic 1 is being worked on by run {id}, in another baton"
        )),
        "{}",
        out(&o)
    );
    let journals = std::fs::read_dir(d.dir.join(".baton/runs"))
        .unwrap()
        .count();
    assert_eq!(journals, 1, "one run was started");
    assert!(
        winner.try_wait().unwrap().is_none(),
        "the first run goes on"
    );
    // Its agent hangs: stop it and the run.
    let marker = (0..400)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            std::fs::read_dir(d.dir.join(".baton/runs").join(&id).join("logs"))
                .ok()?
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "pgid"))
        })
        .expect("an agent started");
    let pgid: i32 = std::fs::read_to_string(marker)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    winner.kill().unwrap();
    winner.wait().unwrap();
    // SAFETY: kill(2) of the hanging agent's process group.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// The first story's dev call never ends (until its process group is killed).
const HANG_FIRST_DEV: &str = "[story.\"1.1\"]\ndev = [\"hang\"]\n";

/// `baton run epic-execute 1 --agent sim`, started; its stdout and stderr piped to us, or
/// thrown away.
fn spawn_run(d: &Demo, piped: bool) -> std::process::Child {
    let out = || {
        if piped {
            std::process::Stdio::piped()
        } else {
            std::process::Stdio::null()
        }
    };
    Command::new(bin())
        .args(EPIC_SIM)
        .current_dir(&d.dir)
        .env_remove("BATON_AGENT_SIM")
        .stdout(out())
        .stderr(out())
        .spawn()
        .unwrap()
}

/// `baton run epic-execute 1` whose first agent call hangs: the child, the agent's marker
/// (`<run>/logs/<phase>.pgid`) and its process group, once the agent has read its prompt.
fn start_slow_run(d: &Demo) -> (std::process::Child, std::path::PathBuf, i32) {
    let child = spawn_run(d, false);
    let marker = (0..400)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(25));
            let runs = std::fs::read_dir(d.dir.join(".baton/runs")).ok()?;
            runs.flatten()
                .filter_map(|r| std::fs::read_dir(r.path().join("logs")).ok())
                .flatten()
                .flatten()
                .map(|e| e.path())
                .find(|p| p.extension().is_some_and(|x| x == "pgid"))
        })
        .expect("an agent started");
    // The marker is created, then written: wait for its number.
    let pgid: i32 = (0..400)
        .find_map(|_| {
            let text = std::fs::read_to_string(&marker).ok()?;
            let n = text.split_whitespace().next().and_then(|w| w.parse().ok());
            if n.is_none() {
                std::thread::sleep(std::time::Duration::from_millis(25));
            }
            n
        })
        .expect("the agent's marker names its process group");
    let t = std::time::Instant::now();
    while sim_hang_pid(&d.dir).is_none() {
        assert!(
            t.elapsed().as_secs() < 60,
            "the agent never read its prompt"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (child, marker, pgid)
}

/// The process group's leader is there, not a zombie (a killed orphan waits to be reaped by
/// whoever adopted it).
fn alive(g: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{g}/stat")).is_ok_and(|s| {
        let state = s.rsplit(')').next().unwrap_or("").split_whitespace().next();
        !matches!(state, Some("Z") | Some("X") | None)
    })
}

/// `baton run … | head -3`: stdout's reader goes away at once; the run finishes as it would
/// have (every story committed), baton exits with the run's own code, and the closed stdout is
/// never a panic.
#[test]
fn a_run_whose_stdout_reader_goes_away_finishes_quietly() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("p");
    crate::util::demo_repo(&dir, "");
    let mut child = std::process::Command::new(crate::util::bin())
        .args(["run", "epic-execute", "1", "--agent", "sim"])
        .current_dir(&dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(o.status.code(), Some(0), "{err}");
    let log = crate::util::git(&dir, &["log", "--oneline"]);
    for story in ["1.1", "1.2"] {
        assert!(log.contains(&format!("story {story}")), "{log}");
    }
}

/// A story title holding terminal escapes (set the window title, clear the screen) and a NUL
/// reaches the run's progress with them made visible: no escape byte reaches the terminal.
#[test]
fn escape_sequences_from_a_story_never_reach_the_terminal() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("p");
    crate::util::demo_repo(&dir, "");
    let story = dir.join("docs/stories/1.1.project-skeleton.md");
    let text = std::fs::read_to_string(&story).unwrap().replacen(
        "# Story 1.1: Project skeleton",
        "# Story 1.1: Project \u{1b}]0;owned\u{7}skeleton\u{1b}[2J\u{0}",
        1,
    );
    std::fs::write(&story, text).unwrap();
    crate::util::git(&dir, &["commit", "-qam", "a title with escapes"]);
    let o = std::process::Command::new(crate::util::bin())
        .args(["run", "epic-execute", "1", "--agent", "sim"])
        .current_dir(&dir)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("story 1.1: Project \\x1B]0;owned\\x07skeleton\\x1B[2J\\x00"),
        "{err}"
    );
    assert!(!o.stderr.contains(&0x1b) && !o.stderr.contains(&0), "{err}");
}

/// The same command again after a finished run: the stories it finished say done and are
/// skipped, saying so — no agent call, no second commit; `--redo` runs one again on purpose.
#[test]
fn running_the_same_command_again_never_redoes_done_stories() {
    let d = project("");
    let o = d.run(&EPIC_SIM);
    assert!(o.status.success(), "{}", out(&o));
    let commits = d.story_commits();
    assert!(commits >= 2, "{:?}", d.log());
    let first = d.run_id();
    let o = d.run(&EPIC_SIM);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("skipped — already done (its status says so; `--redo 1.1` runs it again)"),
        "{text}"
    );
    assert_eq!(d.story_commits(), commits, "{:?}", d.log());
    // The second run's journal (two runs in one second do not sort by start).
    let second = std::fs::read_dir(d.dir.join(".baton/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|r| !r.ends_with(&first))
        .expect("a second run");
    let journal = std::fs::read_to_string(second.join("events.jsonl")).unwrap();
    let calls: Vec<serde_json::Value> = journal
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|e: &serde_json::Value| {
            e["event"] == "phase_finished" && e["subject"]["kind"] == "story"
        })
        .collect();
    assert!(journal.contains("already done"), "{journal}");
    assert!(calls.is_empty(), "stories ran again: {calls:?}");
    // On purpose: one story again, the others left as they are.
    let redo: Vec<&str> = EPIC_SIM.iter().copied().chain(["--redo", "1.1"]).collect();
    let o = d.run(&redo);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(d.story_commits(), commits + 1, "{:?}", d.log());
}

/// An interrupted run the user gives up: `baton stop RUN_ID` closes it, saying what stays;
/// `status` no longer offers `--resume` for it, and a resume is refused with the reason.
#[test]
fn stop_closes_an_interrupted_run_that_is_given_up() {
    let d = project("");
    let o = d.run_env(&EPIC_SIM, &[("BATON_CRASH_AFTER_EVENT", "6")]);
    assert_eq!(o.status.code(), None, "killed");
    let id = d.run_id();
    let status = out(&d.run(&["status"]));
    assert!(
        status.contains(&format!("baton run --resume {id}")),
        "{status}"
    );
    let o = d.run(&["stop", &id]);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "run {id}: closed; it is no longer offered for --resume"
        )),
        "{text}"
    );
    let status = out(&d.run(&["status"]));
    assert!(!status.contains("--resume"), "{status}");
    assert!(
        status.contains("closed: closed by `baton stop`"),
        "{status}"
    );
    let o = d.run(&["run", "--resume", &id]);
    assert_exit(&o, 3);
    assert!(
        out(&o).contains(&format!("run {id} was closed")),
        "{}",
        out(&o)
    );
}

/// A story the epic lists with no file yet (normal mid-epic in BMAD) is named and counted, and
/// the epic's UAT waits for it unless `--allow-missing`; a story still drafted is not developed
/// unless `--allow-draft`, and says why. `--dry-run` names both.
#[test]
fn missing_and_drafted_stories_are_named_never_silent() {
    let d = project("");
    // The epic lists its stories as BMAD's epics do; 1.4's file is not written yet.
    std::fs::write(
        d.dir.join("docs/epics/epic-1.md"),
        "# Epic 1: Notes service\n\n### Story 1.1: Project skeleton\n\n### Story 1.2: Create notes\n\n### Story 1.3: Search notes\n\n### Story 1.4: Export notes\n",
    )
    .unwrap();
    std::fs::remove_file(crate::util::demo_story_path(&d.dir, "1.4")).unwrap();
    let s2 = crate::util::demo_story_path(&d.dir, "1.2");
    let text = std::fs::read_to_string(&s2).unwrap();
    std::fs::write(&s2, text.replace("Status: ready-for-dev", "Status: Draft")).unwrap();
    git(
        &d.dir,
        &["commit", "-qam", "1.4 not written yet, 1.2 drafted"],
    );
    let o = d.run(&["run", "epic-execute", "1", "--agent", "sim", "--dry-run"]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains(
            "story 1.4: no story file yet: create it with the BMAD create-story workflow"
        ),
        "{}",
        out(&o)
    );
    let o = d.run(&EPIC_SIM);
    let text = out(&o);
    assert!(o.status.success(), "{text}");
    assert!(
        text.contains("1.4 has no story file yet: create it with the BMAD create-story workflow"),
        "{text}"
    );
    assert!(
        text.contains("its status is still drafted: not ready for development"),
        "{text}"
    );
    assert!(
        text.contains(
            "the epic's UAT and retrospective are not run: 1 of its stories have no file yet"
        ),
        "{text}"
    );
    assert!(!d.log().iter().any(|l| l.contains("UAT")), "{:?}", d.log());
    assert!(
        !d.log().iter().any(|l| l.contains("story 1.2")),
        "{:?}",
        d.log()
    );
    assert!(
        d.story("1.2").contains("Status: Draft"),
        "the drafted story is left as it was"
    );
    // Asked for: the drafted story is developed, the UAT runs.
    let more: Vec<&str> = EPIC_SIM
        .iter()
        .copied()
        .chain(["--allow-draft", "--allow-missing"])
        .collect();
    let o = d.run(&more);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        d.log().iter().any(|l| l.starts_with("feat(story 1.2)")),
        "{:?}",
        d.log()
    );
    assert!(d.log().iter().any(|l| l.contains("UAT")), "{:?}", d.log());
}

/// A phase's budget has one place: `[budget.phases] dev = …` in baton.toml, as `baton config`
/// shows it, is the budget the run's dev phase gets (over the workflow definition's 15,000).
#[test]
fn a_phase_budget_in_baton_toml_is_the_one_the_run_uses() {
    let d = project("");
    std::fs::write(d.dir.join("baton.toml"), "[budget.phases]\ndev = 2000\n").unwrap();
    let o = d.run(&EPIC_SIM);
    assert!(o.status.success(), "{}", out(&o));
    assert!(out(&o).contains("/2000"), "{}", out(&o));
    let budgets: Vec<(String, u64)> = d
        .events()
        .into_iter()
        .filter(|e| e["event"] == "phase_finished")
        .map(|e| {
            (
                e["phase"].as_str().unwrap().to_string(),
                e["outcome"]["budget"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert!(budgets.iter().any(|(p, _)| p == "dev"), "{budgets:?}");
    // `over_budget` is always there, false included: a missing field is not an unknown.
    for e in d.events().iter().filter(|e| e["event"] == "phase_finished") {
        assert_eq!(e["outcome"]["over_budget"], false, "{e}");
    }
    for (p, b) in &budgets {
        if p == "dev" {
            assert_eq!(*b, 2000, "{budgets:?}");
        } else {
            assert_ne!(*b, 2000, "{p}: {budgets:?}");
        }
    }
}

/// `baton stop --graceful RUN_ID` returns at once; the run lets the phase in flight finish,
/// then stops before its next call (journaled, resumable), and `--resume` finishes it with no
/// call made twice.
#[test]
fn a_graceful_stop_lets_the_phase_in_flight_finish_then_pauses() {
    let d = project("latency_ms = 1500\n");
    let mut child = spawn_run(&d, false);
    // Wait for the first call to start.
    let t = std::time::Instant::now();
    let id = loop {
        if let Ok(rd) = std::fs::read_dir(d.dir.join(".baton/runs")) {
            let started = rd.flatten().find(|r| {
                std::fs::read_to_string(r.path().join("events.jsonl"))
                    .is_ok_and(|j| j.contains("\"phase_started\""))
            });
            if let Some(r) = started {
                break r.file_name().to_string_lossy().into_owned();
            }
        }
        assert!(t.elapsed().as_secs() < 30, "the run never started a phase");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let asked = std::time::Instant::now();
    let o = d.run(&["stop", "--graceful", &id]);
    assert!(o.status.success(), "{}", out(&o));
    assert!(
        out(&o).contains(&format!("run {id}: stops after the phase in flight")),
        "{}",
        out(&o)
    );
    assert!(asked.elapsed().as_secs() < 5, "stop --graceful waited");
    let status = child.wait().unwrap();
    assert!(!status.success(), "the run went on to its end");
    let events = d.events();
    let finished: Vec<_> = events
        .iter()
        .filter(|e| e["event"] == "phase_finished")
        .collect();
    assert_eq!(
        finished.len(),
        1,
        "the phase in flight finished, no other: {events:?}"
    );
    assert!(finished[0]["outcome"]["ok"] == true);
    assert!(
        events
            .iter()
            .any(|e| e["event"] == "interrupted"
                && e["signal"].as_str().unwrap().contains("graceful")),
        "{events:?}"
    );
    std::fs::write(d.dir.join(".baton/sim.toml"), "").unwrap();
    // A request a killed baton never took is not obeyed by the one that resumes.
    std::fs::write(
        d.dir.join(".baton/runs").join(&id).join("stop-after-phase"),
        "stale\n",
    )
    .unwrap();
    let o = d.run(&["run", "--resume", &id]);
    assert!(o.status.success(), "{}", out(&o));
    let mut keys: Vec<String> = d
        .events()
        .iter()
        .filter(|e| e["event"] == "phase_finished")
        .map(|e| format!("{}-{}-{}", e["subject"]["id"], e["phase"], e["attempt"]))
        .collect();
    let all = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), all, "a call was made twice");
    assert!(d.story_commits() >= 2, "{:?}", d.log());
}

/// `[notify] command` hears a failed story (with its reason), then the run's end (counts and
/// cost), as JSON on stdin; `.baton/ATTENTION.md` lists what waits for a human. A notifier that
/// fails, or hangs past its timeout, changes nothing about the run.
#[test]
fn a_notifier_hears_the_failed_story_and_the_end_and_never_holds_the_run() {
    let d = project("[story.\"1.3\"]\ndev = [\"block\"]\n");
    std::fs::write(
        d.dir.join("baton.toml"),
        "[notify]\ncommand = \"cat >> .baton/heard.jsonl; echo >> .baton/heard.jsonl\"\n",
    )
    .unwrap();
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 1);
    let heard = std::fs::read_to_string(d.dir.join(".baton/heard.jsonl")).unwrap();
    let events: Vec<serde_json::Value> = heard
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["story_failed", "run_ended"], "{heard}");
    assert_eq!(events[0]["subject"]["id"], "1.3");
    assert!(
        events[0]["text"]
            .as_str()
            .unwrap()
            .contains("story 1.3 failed: dev:"),
        "{heard}"
    );
    assert_eq!(events[1]["failed"], 1);
    assert!(events[1]["done"].as_u64().unwrap() >= 3, "{heard}");
    let attention = std::fs::read_to_string(d.dir.join(".baton/ATTENTION.md")).unwrap();
    assert!(attention.contains("story 1.3 failed"), "{attention}");

    // A notifier that fails, then one that hangs: the run ends as it would, within its bound.
    for (cmd, says) in [("exit 3", "it failed"), ("sleep 30", "it took over 1 s")] {
        let d = project("[story.\"1.3\"]\ndev = [\"block\"]\n");
        std::fs::write(
            d.dir.join("baton.toml"),
            format!("[notify]\ncommand = \"{cmd}\"\ntimeout_secs = 1\n"),
        )
        .unwrap();
        let t = std::time::Instant::now();
        let o = d.run(&EPIC_SIM);
        assert_exit(&o, 1);
        assert!(
            t.elapsed().as_secs() < 15,
            "{cmd}: held the run {:?}",
            t.elapsed()
        );
        assert!(out(&o).contains(says), "{cmd}: {}", out(&o));
        assert!(d.story_commits() >= 3, "{:?}", d.log());
    }
}

/// `[notify] webhook` hears the failed story and the end as JSON POSTs whose `text`,
/// `content` and `message` hold the line chat tools show; `desktop = true` shows each on the
/// desktop (notify-send, here a stand-in on PATH). A webhook that is down changes nothing.
#[test]
fn a_webhook_and_the_desktop_hear_the_events_and_a_webhook_down_changes_nothing() {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let heard = bodies.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut c) = conn else { break };
            let mut req = Vec::new();
            let mut buf = [0u8; 4096];
            // Headers, then as many body bytes as Content-Length says.
            loop {
                let n = c.read(&mut buf).unwrap_or(0);
                if n == 0 {
                    break;
                }
                req.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&req).into_owned();
                if let Some(end) = text.find("\r\n\r\n") {
                    let len: usize = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if req.len() >= end + 4 + len {
                        heard.lock().unwrap().push(text[end + 4..].to_string());
                        break;
                    }
                }
            }
            let _ =
                c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        }
    });
    let d = project("[story.\"1.3\"]\ndev = [\"block\"]\n");
    let bin = d.dir.parent().unwrap().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let shown = bin.join("shown");
    let fake = bin.join("notify-send");
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" >> {}\necho >> {}\n",
            shown.display(),
            shown.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        d.dir.join("baton.toml"),
        format!("[notify]\nwebhook = \"http://127.0.0.1:{port}/hook\"\ndesktop = true\n"),
    )
    .unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = d.run_env(&EPIC_SIM, &[("PATH", &path)]);
    assert_exit(&o, 1);
    let events: Vec<serde_json::Value> = bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap())
        .collect();
    let names: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["story_failed", "run_ended"], "{events:?}");
    for e in &events {
        assert_eq!(e["text"], e["content"], "{e}");
        assert_eq!(e["text"], e["message"], "{e}");
    }
    assert!(
        events[0]["text"]
            .as_str()
            .unwrap()
            .contains("story 1.3 failed"),
        "{events:?}"
    );
    let shown = std::fs::read_to_string(&shown).unwrap();
    assert!(
        shown
            .lines()
            .next()
            .unwrap()
            .contains("baton|story 1.3 failed"),
        "{shown}"
    );
    assert_eq!(shown.lines().count(), 2, "{shown}");

    // Down: nothing listens there. The run ends as it would, saying so, the URL unsaid.
    let d = project("[story.\"1.3\"]\ndev = [\"block\"]\n");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = closed.local_addr().unwrap().port();
    drop(closed);
    std::fs::write(
        d.dir.join("baton.toml"),
        format!("[notify]\nwebhook = \"http://127.0.0.1:{dead}/secret-token\"\ntimeout_secs = 2\n"),
    )
    .unwrap();
    let o = d.run(&EPIC_SIM);
    assert_exit(&o, 1);
    assert!(
        out(&o).contains("the [notify] webhook did not take the story_failed event"),
        "{}",
        out(&o)
    );
    assert!(!out(&o).contains("secret-token"), "{}", out(&o));
    assert!(d.story_commits() >= 3, "{:?}", d.log());
}

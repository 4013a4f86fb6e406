//! An epic run works in a worktree of its own and lands on the user's branch when it ends: the
//! user's checkout is left alone meanwhile, their uncommitted story files are carried in, and a
//! branch that moved is never overwritten. The real binary, real git, the simulated agent.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::util::{
    EPIC_SIM, assert_exit, bin, demo_story_path, git, git_ok, newest_run_id as run_id,
    temp_demo as demo, text,
};

fn spawn(dir: &Path, args: &[&str]) -> Child {
    Command::new(bin())
        .args(args)
        .current_dir(dir)
        .env_remove("BATON_AGENT_SIM")
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

use std::os::unix::process::CommandExt;

/// The run's own worktree, once it is there.
fn wait_for_tree(dir: &Path) -> PathBuf {
    let t = Instant::now();
    loop {
        if let Ok(rd) = std::fs::read_dir(dir.join(".baton/worktrees")) {
            for e in rd.flatten() {
                let tree = e.path().join("@run");
                if tree.join(".git").is_file() {
                    return tree;
                }
            }
        }
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "no worktree was made"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn feat_commits(dir: &Path, range: &str) -> Vec<String> {
    git(dir, &["log", "--format=%s", range])
        .lines()
        .filter(|s| s.starts_with("feat(story "))
        .map(str::to_string)
        .collect()
}

#[test]
fn edits_made_during_a_run_stay_the_users_and_the_run_lands_on_their_branch() {
    let (_t, d) = demo("latency_ms = 150\n");
    let start = git(&d, &["rev-parse", "HEAD"]).trim().to_string();
    let child = spawn(&d, &EPIC_SIM);
    let tree = wait_for_tree(&d);
    // The user goes on working: a tracked file changed, a new one, while stories run.
    std::fs::write(d.join("README.md"), "# mine, edited during the run\n").unwrap();
    std::fs::write(d.join("notes.txt"), "my notes\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("your branch `epic-1` now has the run's commits"),
        "{}",
        text(&o)
    );
    // Landed: the four stories on the user's branch, once each, fast-forwarded.
    assert_eq!(feat_commits(&d, "main..epic-1").len(), 4);
    assert!(git_ok(&d, &["merge-base", "--is-ancestor", &start, "HEAD"]));
    // No story commit holds the user's files; they are as the user left them, uncommitted.
    let committed = git(&d, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(
        !committed
            .lines()
            .any(|l| l == "README.md" || l == "notes.txt"),
        "{committed}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("README.md")).unwrap(),
        "# mine, edited during the run\n"
    );
    let status = git(&d, &["status", "--porcelain"]);
    assert!(
        status.contains(" M README.md") && status.contains("?? notes.txt"),
        "{status}"
    );
    // The checkout shows the run's result (the stories say done there).
    for id in ["1.1", "1.4"] {
        let s = std::fs::read_to_string(demo_story_path(&d, id)).unwrap();
        assert!(s.contains("Status: done"), "{id}: {s}");
    }
    // The worktree and the run's branch are gone once landed.
    assert!(!tree.exists());
    let id = run_id(&d);
    assert!(!git_ok(
        &d,
        &["rev-parse", "--verify", "-q", &format!("baton/run-{id}")]
    ));
    assert_eq!(git(&d, &["worktree", "list"]).lines().count(), 1);
}

#[test]
fn uncommitted_story_files_are_carried_in_and_replaced_by_the_run_s_versions() {
    let (_t, d) = demo("");
    // BMAD's create-story leaves a story file uncommitted; the user adds a note to another.
    let s13 = demo_story_path(&d, "1.3");
    let rel13 = s13.strip_prefix(&d).unwrap().display().to_string();
    git(&d, &["rm", "-q", "--cached", &rel13]);
    git(&d, &["commit", "-q", "-m", "1.3 not yet committed"]);
    let s12 = demo_story_path(&d, "1.2");
    let mut text12 = std::fs::read_to_string(&s12).unwrap();
    text12.push_str("\nA note of mine.\n");
    std::fs::write(&s12, &text12).unwrap();
    let o = crate::util::run_in(&d, &EPIC_SIM, &[]);
    assert_exit(&o, 0);
    assert_eq!(feat_commits(&d, "main..HEAD").len(), 4, "{}", text(&o));
    // Both reached their stories' commits, the user's note in 1.2's.
    let at_head = git(&d, &["show", &format!("HEAD:{rel13}")]);
    assert!(at_head.contains("Status: done"), "{at_head}");
    let rel12 = s12.strip_prefix(&d).unwrap().display().to_string();
    let c12 = git(&d, &["show", &format!("HEAD:{rel12}")]);
    assert!(
        c12.contains("A note of mine.") && c12.contains("Status: done"),
        "{c12}"
    );
    // The checkout has the run's versions, nothing left over.
    assert_eq!(git(&d, &["status", "--porcelain"]), "", "{}", text(&o));
}

#[test]
fn a_branch_that_moved_or_a_committed_file_the_user_changed_keeps_the_run_on_its_branch() {
    let (_t, d) = demo("latency_ms = 150\n");
    let child = spawn(&d, &EPIC_SIM);
    wait_for_tree(&d);
    // The user commits on their branch meanwhile.
    std::fs::write(d.join("mine.txt"), "mine\n").unwrap();
    git(&d, &["add", "mine.txt"]);
    git(&d, &["commit", "-q", "-m", "my own commit"]);
    let mine = git(&d, &["rev-parse", "HEAD"]);
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    let id = run_id(&d);
    let branch = format!("baton/run-{id}");
    assert!(
        text(&o).contains(&format!("git merge {branch}")) && text(&o).contains("has moved"),
        "{}",
        text(&o)
    );
    // Their branch is exactly as they left it; the run's commits are on its branch.
    assert_eq!(git(&d, &["rev-parse", "HEAD"]), mine);
    assert_eq!(feat_commits(&d, &format!("main..{branch}")).len(), 4);
    assert!(!git(&d, &["log", "--format=%s", "main..HEAD"]).contains("feat("));

    // A story file the user edits while the run commits it: never overwritten.
    let (_t2, d) = demo("latency_ms = 150\n");
    let child = spawn(&d, &EPIC_SIM);
    wait_for_tree(&d);
    let s = demo_story_path(&d, "1.4");
    let mut t = std::fs::read_to_string(&s).unwrap();
    t.push_str("\nedited by me during the run\n");
    std::fs::write(&s, &t).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 0);
    let rel = s.strip_prefix(&d).unwrap().display().to_string();
    assert!(
        text(&o).contains(&format!("you changed {rel} since the run started")),
        "{}",
        text(&o)
    );
    assert_eq!(std::fs::read_to_string(&s).unwrap(), t);
    assert_eq!(feat_commits(&d, "main..HEAD").len(), 0);
}

#[test]
fn a_run_may_start_on_a_protected_branch_which_it_never_moves() {
    let (_t, d) = demo("");
    git(&d, &["switch", "-q", "main"]);
    let main = git(&d, &["rev-parse", "main"]);
    let o = crate::util::run_in(&d, &EPIC_SIM, &[]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("`main` is a protected branch"),
        "{}",
        text(&o)
    );
    assert_eq!(git(&d, &["rev-parse", "main"]), main);
    let branch = format!("baton/run-{}", run_id(&d));
    assert_eq!(feat_commits(&d, &format!("main..{branch}")).len(), 4);
    // --json says the same.
    let o = crate::util::run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--redo-all",
            "--json",
        ],
        &[],
    );
    let last = crate::util::json_lines(&o.stdout)
        .into_iter()
        .rev()
        .find(|v| v["event"] == "run_finished")
        .unwrap();
    assert_eq!(last["summary"]["landing"]["landing"], "kept", "{last}");
}

/// A run stopped by Ctrl-C while story 1.3's dev hangs: 1.1 and 1.2 committed on its branch.
fn interrupted_at_1_3(d: &Path) -> String {
    std::fs::write(
        d.join(".baton/sim.toml"),
        "[story.\"1.3\"]\ndev = [\"hang\"]\n",
    )
    .unwrap();
    let child = spawn(d, &EPIC_SIM);
    let t = Instant::now();
    while crate::util::sim_hang_pid(d).is_none() {
        assert!(t.elapsed() < Duration::from_secs(60), "1.3 never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) of the child's own process group, as a terminal's Ctrl-C does.
    unsafe {
        libc::kill(-(child.id() as i32), libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_exit(&o, 130);
    // Nothing reached the user's branch yet.
    assert!(feat_commits(d, "main..HEAD").is_empty());
    std::fs::write(d.join(".baton/sim.toml"), "").unwrap();
    run_id(d)
}

#[test]
fn ctrl_c_then_a_new_run_lands_what_the_first_committed_and_redoes_none_of_it() {
    let (_t, d) = demo("");
    let first = interrupted_at_1_3(&d);
    let o = crate::util::run_in(&d, &EPIC_SIM, &[]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains(&format!(
            "run {first}: your branch `epic-1` now has the run's commits"
        )),
        "{}",
        text(&o)
    );
    let feats = feat_commits(&d, "main..HEAD");
    assert_eq!(feats.len(), 4, "{feats:?}");
    for id in ["1.1", "1.2", "1.3", "1.4"] {
        let n = feats
            .iter()
            .filter(|s| s.starts_with(&format!("feat(story {id})")))
            .count();
        assert_eq!(n, 1, "{id}: {feats:?}");
    }
    // The interrupted story's half-done work stays in the first run's worktree, said so.
    assert!(
        text(&o).contains("is kept: it holds changes no commit has"),
        "{}",
        text(&o)
    );
}

#[test]
fn in_place_works_in_the_checkout_itself() {
    let (_t, d) = demo("");
    let o = crate::util::run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--in-place",
            "--json",
        ],
        &[],
    );
    assert_exit(&o, 0);
    assert!(!d.join(".baton/worktrees").exists());
    let last = crate::util::json_lines(&o.stdout)
        .into_iter()
        .rev()
        .find(|v| v["event"] == "run_finished")
        .unwrap();
    assert!(last["summary"]["landing"].is_null(), "{last}");
    assert_eq!(feat_commits(&d, "main..HEAD").len(), 4);
}

#[test]
fn stop_closes_an_interrupted_run_landing_what_it_committed() {
    let (_t, d) = demo("");
    let id = interrupted_at_1_3(&d);
    let o = crate::util::run_in(&d, &["stop", &id], &[]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains(&format!(
            "run {id}: your branch `epic-1` now has the run's commits"
        )),
        "{}",
        text(&o)
    );
    let feats = feat_commits(&d, "main..HEAD");
    assert_eq!(feats.len(), 2, "{feats:?}");
    // The half-done 1.3 stays in the run's worktree, which is kept; nothing else changed.
    assert!(text(&o).contains("is kept"), "{}", text(&o));
    assert_eq!(git(&d, &["status", "--porcelain"]), "");
    let o = crate::util::run_in(&d, &["run", "--resume", &id], &[]);
    assert!(
        !o.status.success(),
        "a closed run is not resumed: {}",
        text(&o)
    );
}

/// `--no-commit` works in the checkout and leaves its work staged; a later run skips the story
/// it finished and commits none of its files, and leaves them as they were, staged.
#[test]
fn a_no_commit_run_never_changes_what_a_later_run_commits() {
    let (_t, d) = demo("");
    let o = crate::util::run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--only",
            "1.1",
            "--no-commit",
        ],
        &[],
    );
    assert_exit(&o, 0);
    assert!(
        !d.join(".baton/worktrees").exists(),
        "--no-commit works in place"
    );
    let staged = git(&d, &["diff", "--cached", "--name-only"]);
    assert!(staged.contains("src/story_1_1.txt"), "{staged}");
    let o = crate::util::run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--only",
            "1.1,1.2",
        ],
        &[],
    );
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("already done (its status says so; `--redo 1.1` runs it again)"),
        "{}",
        text(&o)
    );
    let feats = feat_commits(&d, "main..HEAD");
    assert_eq!(feats.len(), 1, "only 1.2 is committed: {feats:?}");
    let committed = git(&d, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(!committed.contains("story_1_1"), "{committed}");
    // 1.1's work is still the user's, staged as the first run left it (the epic's UAT file
    // that run wrote is written again, and committed, by this one's own UAT).
    let now = git(&d, &["diff", "--cached", "--name-only"]);
    for f in ["docs/stories/1.1.project-skeleton.md", "src/story_1_1.txt"] {
        assert!(now.lines().any(|l| l == f), "{f}: {now}");
    }
}

/// `[publish]`: the branch that holds the run's commits is pushed (the user's, once landed;
/// the run's own when kept, as on a protected branch, whose remote copy is never touched)
/// and `gh` opens the pull request; a remote that cannot be reached is a warning only.
#[test]
fn publish_pushes_the_branch_that_holds_the_run_and_opens_a_pull_request() {
    let (t, d) = demo("");
    git(t.path(), &["init", "-q", "--bare", "remote.git"]);
    let remote = t.path().join("remote.git");
    git(
        &d,
        &["remote", "add", "origin", &remote.display().to_string()],
    );
    git(&d, &["push", "-q", "origin", "main"]);
    let bin = t.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let gh_args = t.path().join("gh-args");
    let gh = bin.join("gh");
    std::fs::write(
        &gh,
        format!(
            "#!/bin/sh\nprintf '%s|' \"$@\" > {}\necho https://example.invalid/pr/1\n",
            gh_args.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&gh, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(d.join("baton.toml"), "[publish]\npr = true\n").unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let o = crate::util::run_in(&d, &EPIC_SIM, &[("PATH", &path)]);
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("publish: pushed `epic-1` to origin"),
        "{}",
        text(&o)
    );
    assert!(
        text(&o).contains("publish: pull request https://example.invalid/pr/1"),
        "{}",
        text(&o)
    );
    assert_eq!(
        git(&remote, &["rev-parse", "refs/heads/epic-1"]),
        git(&d, &["rev-parse", "HEAD"])
    );
    let args = std::fs::read_to_string(&gh_args).unwrap();
    assert!(
        args.starts_with("pr|create|--head|epic-1|--title|baton: epic 1 (run "),
        "{args}"
    );

    // From protected main: the run's own branch goes, the remote's main stays.
    git(&d, &["switch", "-q", "main"]);
    let main_before = git(&remote, &["rev-parse", "refs/heads/main"]);
    let o = crate::util::run_in(
        &d,
        &["run", "epic-execute", "1", "--agent", "sim", "--redo-all"],
        &[("PATH", &path)],
    );
    assert_exit(&o, 0);
    // This run's id from its own output: two runs started in one second do not sort by id.
    let id = text(&o)
        .lines()
        .find_map(|l| {
            l.strip_prefix("run ")?
                .split_once(": epic-execute")
                .map(|(id, _)| id.to_string())
        })
        .unwrap();
    let branch = format!("baton/run-{id}");
    assert!(
        text(&o).contains(&format!("publish: pushed `{branch}` to origin")),
        "{}",
        text(&o)
    );
    assert_eq!(git(&remote, &["rev-parse", "refs/heads/main"]), main_before);
    assert!(git_ok(
        &remote,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}")
        ]
    ));

    // A remote that cannot be reached: said, the run as it was.
    git(&d, &["switch", "-q", "epic-1"]);
    git(
        &d,
        &["remote", "set-url", "origin", "/nonexistent/remote.git"],
    );
    let o = crate::util::run_in(
        &d,
        &["run", "epic-execute", "1", "--agent", "sim", "--redo-all"],
        &[("PATH", &path)],
    );
    assert_exit(&o, 0);
    assert!(
        text(&o).contains("publish: warning: `epic-1` was not pushed to origin"),
        "{}",
        text(&o)
    );
}

//! `--dev bmad-build-auto`: each story of a BMAD 6 spec folder dispatched to the user's
//! installed build skill by folder and id, the phase ended by the story file's status. The
//! real binary, real git, the simulated agent playing the skill (`sim/build_auto.rs`: it
//! writes the story file and commits its own work, and halts on a dirty tree as the skill
//! does).

use std::path::{Path, PathBuf};

use crate::util::{assert_exit, git, run_in, text};

const FOLDER: &str = "_bmad-output/specs/limits";

/// A project with the spec folder `limits` (stories 1–3, none planned yet), the skill
/// installed where claude keeps skills, the simulated skill's `scenario`, and `[checks]`
/// that fail while a source file says RED.
fn project(stories: &str, scenario: &str) -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    let f = d.join(FOLDER);
    std::fs::create_dir_all(&f).unwrap();
    std::fs::write(f.join("SPEC.md"), "# Limits\n\nThe spec.\n").unwrap();
    std::fs::write(f.join("stories.yaml"), stories).unwrap();
    let skill = d.join(".claude/skills/bmad-build-auto");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        "---\nname: bmad-build-auto\ndescription: 'One iteration of an unattended development loop.'\n---\n\nRender the workflow and follow it.\n",
    )
    .unwrap();
    std::fs::write(
        d.join("baton.toml"),
        "[checks]\ncommands = [\"! grep -rqs RED src\"]\n",
    )
    .unwrap();
    std::fs::write(d.join(".gitignore"), ".baton/\n").unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    git(&d, &["config", "user.name", "t"]);
    git(&d, &["config", "user.email", "t@t.invalid"]);
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "spec"]);
    git(&d, &["switch", "-q", "-c", "limits"]);
    std::fs::create_dir_all(d.join(".baton")).unwrap();
    std::fs::write(d.join(".baton/sim.toml"), scenario).unwrap();
    (t, d)
}

const THREE: &str = "- id: \"1\"\n  title: Add the limiter\n  description: A token bucket.\n- id: \"2\"\n  title: Expose metrics\n  description: Counters.\n- id: \"3\"\n  title: Alert on rejections\n  description: Pages.\n";

fn run(d: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "run",
        "epic-execute",
        "limits",
        "--agent",
        "sim",
        "--dev",
        "bmad-build-auto",
    ];
    args.extend_from_slice(extra);
    run_in(d, &args, &[])
}

fn status_of(d: &Path, id: &str) -> String {
    let dir = d.join(FOLDER).join("stories");
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .find(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{id}-"))
        })
        .unwrap_or_else(|| panic!("no story file for {id} in {}", dir.display()));
    let text = std::fs::read_to_string(file.path()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix("status: ").map(str::to_string))
        .unwrap()
}

fn prompt(d: &Path, name: &str) -> String {
    let id = crate::util::newest_run_id(d);
    std::fs::read_to_string(d.join(".baton/runs").join(id).join("prompts").join(name))
        .unwrap_or_default()
}

/// Stories 1–3 are dispatched in order. 1 ends `done` and is committed once, the skill's own
/// commit folded into baton's; 2 ends `done` but red, is dispatched again with the failing
/// check and committed green; 3 ends `blocked` and fails naming its condition, dispatched
/// once. The run lands on the user's branch.
#[test]
fn each_story_is_dispatched_and_its_file_status_decides_what_is_committed() {
    let (_t, d) = project(
        THREE,
        "[build]\n\"2\" = [\"red\", \"done\"]\n\"3\" = [\"blocked\"]\n",
    );
    let o = run(&d, &[]);
    assert_exit(&o, 1);
    let said = text(&o);
    assert!(said.contains("blocked: intent gap (simulated)"), "{said}");
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(
        subjects,
        [
            "docs(epic limits): UAT and retrospective",
            "docs(story 3): failed — records of the attempts",
            "feat(story 2): Expose metrics",
            "feat(story 1): Add the limiter",
        ],
        "the skill's own commits are folded into one per story: {said}"
    );
    assert_eq!(status_of(&d, "1"), "done");
    assert_eq!(status_of(&d, "2"), "done");
    assert_eq!(status_of(&d, "3"), "blocked");
    let read = |p: &str| std::fs::read_to_string(d.join(p)).ok();
    assert_eq!(read("src/story-1.txt").as_deref(), Some("built\n"));
    assert_eq!(read("src/story-2.txt").as_deref(), Some("built\n"));
    assert_eq!(read("src/story-3.txt"), None);
    // The dispatch, by folder and id, pointed at the installed skill.
    let first = prompt(&d, "limits-1-dev-1.md");
    assert!(
        first.contains("bmad-build-auto/SKILL.md and follow it exactly"),
        "{first}"
    );
    assert!(
        first.contains(&format!("Spec folder: {FOLDER}\nStory id: 1")),
        "{first}"
    );
    // Story 2's second dispatch was told what the checks said.
    let again = prompt(&d, "limits-2-dev-2.md");
    assert!(again.contains("The project's checks failed"), "{again}");
    // A blocked story is not dispatched again.
    assert_eq!(prompt(&d, "limits-3-dev-2.md"), "");
    assert!(!prompt(&d, "limits-3-dev-1.md").is_empty());
}

/// A story whose entry asks for a spec checkpoint is dispatched to plan only ("Halt after
/// planning.", with its `invoke_dev_with` guidance); the run pauses with its spec at
/// `ready-for-dev` for a human, and `--resume` dispatches it again to implement it.
#[test]
fn a_spec_checkpoint_plans_pauses_and_resume_implements() {
    let (_t, d) = project(
        "- id: \"1\"\n  title: Add the limiter\n  description: A token bucket.\n  spec_checkpoint: true\n  invoke_dev_with: Keep the bucket in memory.\n",
        "",
    );
    let o = run(&d, &[]);
    assert_exit(&o, 143);
    let said = text(&o);
    assert!(
        said.contains("story 1's spec is planned (spec_checkpoint)"),
        "{said}"
    );
    let plan = prompt(&d, "limits-1-plan-1.md");
    assert!(plan.contains("Halt after planning."), "{plan}");
    assert!(plan.contains("Keep the bucket in memory."), "{plan}");
    let id = crate::util::newest_run_id(&d);
    let tree = d.join(".baton/worktrees").join(&id).join("@run");
    let planned =
        std::fs::read_to_string(tree.join(FOLDER).join("stories/1-simulated.md")).unwrap();
    assert!(
        planned.starts_with("---\nstatus: ready-for-dev\n"),
        "{planned}"
    );
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    assert_eq!(status_of(&d, "1"), "done");
    let dev = prompt(&d, "limits-1-dev-1.md");
    assert!(!dev.contains("Halt after planning."), "{dev}");
    let feats = git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert_eq!(
        feats
            .lines()
            .filter(|s| s.starts_with("feat(story 1)"))
            .count(),
        1,
        "{feats}"
    );
    assert!(prompt(&d, "limits-1-plan-2.md").is_empty(), "planned once");
}

/// A dispatch that crashed left a half-written file: the next one finds it set aside in a
/// stash (the skill needs a clean tree) and the story is committed as the skill finished it.
#[test]
fn what_a_crashed_dispatch_left_is_set_aside_before_the_next() {
    let (_t, d) = project(THREE, "[build]\n\"1\" = [\"crash\", \"done\"]\n");
    let o = run(&d, &["--only", "1"]);
    assert_exit(&o, 0);
    let id = crate::util::newest_run_id(&d);
    let stashes = git(&d, &["stash", "list"]);
    assert!(
        stashes.contains(&format!(
            "baton {id}: story 1 leftovers before dev attempt 2"
        )),
        "{stashes}"
    );
    assert_eq!(
        std::fs::read_to_string(d.join("src/story-1.txt")).unwrap(),
        "built\n"
    );
}

/// What cannot work is refused before anything runs, saying what to do: an epic file (not a
/// spec folder), the skill not installed, --no-commit (the skill commits).
#[test]
fn build_auto_is_refused_where_it_cannot_work() {
    let (_t, d) = project(THREE, "");
    let o = run(&d, &["--no-commit"]);
    assert_exit(&o, 2);
    assert!(
        text(&o).contains("the skill commits its own work"),
        "{}",
        text(&o)
    );
    let o = run(&d, &["--parallel", "2"]);
    assert_exit(&o, 2);
    assert!(text(&o).contains("one story at a time"), "{}", text(&o));
    // In the user's checkout, a change outside the spec folders and BMAD's files: refused
    // (the skill needs a clean tree), nothing run, the change left as it was.
    std::fs::write(d.join("notes.txt"), "mine\n").unwrap();
    let o = run(&d, &["--in-place"]);
    assert!(!o.status.success());
    assert!(
        text(&o).contains(
            "bmad-build-auto needs a clean work tree, and your checkout has changes: notes.txt"
        ),
        "{}",
        text(&o)
    );
    assert!(
        !d.join(".baton/runs").exists()
            || std::fs::read_dir(d.join(".baton/runs"))
                .unwrap()
                .next()
                .is_none()
    );
    assert_eq!(
        std::fs::read_to_string(d.join("notes.txt")).unwrap(),
        "mine\n"
    );
    std::fs::remove_file(d.join("notes.txt")).unwrap();
    std::fs::remove_dir_all(d.join(".claude")).unwrap();
    git(&d, &["commit", "-qam", "no skill"]);
    let o = run(&d, &[]);
    assert_exit(&o, 4);
    assert!(
        text(&o).contains("npx bmad-method install --modules bmm"),
        "{}",
        text(&o)
    );
    let (_t2, demo) = crate::util::temp_demo("");
    let o = run_in(
        &demo,
        &[
            "run",
            "epic-execute",
            "1",
            "--agent",
            "sim",
            "--dev",
            "bmad-build-auto",
        ],
        &[],
    );
    assert_exit(&o, 2);
    assert!(
        text(&o).contains("epic 1 is an epic file, not a spec folder"),
        "{}",
        text(&o)
    );
}

/// With `--party-review`, baton's own review follows the skill's `done`: a failed review sends
/// the story back to the skill (told why), the reviewed work kept meanwhile; once it passes,
/// the story is one commit, the skill's and the interim ones folded in.
#[test]
fn baton_s_review_after_the_skill_sends_it_back_once_and_one_commit_follows() {
    let (_t, d) = project(THREE, "[story.\"1\"]\nreview = [\"fail\", \"pass\"]\n");
    let o = run(&d, &["--only", "1", "--party-review"]);
    assert_exit(&o, 0);
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    let subjects: Vec<&str> = subjects.lines().collect();
    assert_eq!(
        subjects,
        [
            "docs(epic limits): UAT and retrospective",
            "feat(story 1): Add the limiter"
        ],
        "{}",
        text(&o)
    );
    let again = prompt(&d, "limits-1-dev-2.md");
    assert!(
        again.contains("baton's review of the last run of this story failed"),
        "{again}"
    );
    assert!(!prompt(&d, "limits-1-review-1.md").is_empty());
    assert!(!prompt(&d, "limits-1-review-2.md").is_empty());
    assert_eq!(status_of(&d, "1"), "done");
}

/// `done_checkpoint: true` pauses the run once the story is committed, before the next one.
#[test]
fn a_done_checkpoint_pauses_after_the_commit() {
    let (_t, d) = project(
        "- id: \"1\"\n  title: Add the limiter\n  description: A token bucket.\n  done_checkpoint: true\n- id: \"2\"\n  title: Expose metrics\n  description: Counters.\n",
        "",
    );
    let o = run(&d, &[]);
    assert_exit(&o, 143);
    assert!(
        text(&o).contains("story 1's done checkpoint"),
        "{}",
        text(&o)
    );
    let id = crate::util::newest_run_id(&d);
    let branch = format!("baton/run-{id}");
    let subjects = git(&d, &["log", "--format=%s", &format!("main..{branch}")]);
    assert!(subjects.contains("feat(story 1)"), "{subjects}");
    assert!(!subjects.contains("feat(story 2)"), "{subjects}");
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert_eq!(subjects.matches("feat(story 1)").count(), 1, "{subjects}");
    assert_eq!(subjects.matches("feat(story 2)").count(), 1, "{subjects}");
}

/// An epic chain of two spec folders, the second written but not committed (as right after
/// bmad-spec): each folder is committed before its first dispatch, and both epics' stories
/// are developed.
#[test]
fn each_spec_folder_of_a_chain_is_made_clean_for_the_skill() {
    let (_t, d) = project(THREE, "");
    let second = d.join("_bmad-output/specs/alerts");
    std::fs::create_dir_all(&second).unwrap();
    std::fs::write(second.join("SPEC.md"), "# Alerts\n").unwrap();
    std::fs::write(
        second.join("stories.yaml"),
        "- id: \"a1\"\n  title: Page the on-call\n  description: Paging.\n",
    )
    .unwrap();
    let o = run_in(
        &d,
        &[
            "run",
            "epic-chain",
            "limits",
            "alerts",
            "--agent",
            "sim",
            "--dev",
            "bmad-build-auto",
        ],
        &[],
    );
    assert_exit(&o, 0);
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert!(
        subjects.contains("docs(spec): the spec folders and BMAD's files"),
        "{subjects}"
    );
    assert!(
        subjects.contains("feat(story a1): Page the on-call"),
        "{subjects}"
    );
    assert_eq!(subjects.matches("feat(story ").count(), 4, "{subjects}");
    assert_eq!(git(&d, &["status", "--porcelain"]), "");
}

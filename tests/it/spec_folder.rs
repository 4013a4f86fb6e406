//! BMAD 6 spec folders (`bmad-spec`): `stories.yaml` order, each story's status from its
//! file's frontmatter, done and blocked stories not run, stories with no file named, and
//! malformed folders refused with the file and line. The real binary, real git, the
//! simulated agent.

use std::path::{Path, PathBuf};

use crate::util::{assert_exit, git, run_in, text};

const FOLDER: &str = "_bmad-output/specs/rate-limiting";

const STORIES: &str = r#"# Story breakdown of SPEC.md
- id: "1"
  title: Add the limiter
  description: Token bucket in front of the public API.
- id: 2
  title: Expose limiter metrics
  description: Counters the dashboard scrapes.
  spec_checkpoint: false
  closes_deferred: [DW-3]
- id: "3"
  title: Alert on rejections
  description: Page on sustained rejections.
- id: "4"
  title: Document the limits
  description: Not planned yet.
- id: "5"
  title: Tune the defaults
  description: From the load test.
  done_checkpoint: false
"#;

fn story(status: &str, title: &str, extra: &str) -> String {
    format!(
        "---\ntitle: '{title}'\ntype: 'feature'\nstatus: {status} # draft | ready-for-dev | in-progress | in-review | done | blocked\ndeferred: []\n---\n\n# {title}\n\n## Intent\n\nDo it.\n{extra}"
    )
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let t = tempfile::tempdir().unwrap();
    let d = t.path().join("p");
    let f = d.join(FOLDER);
    std::fs::create_dir_all(f.join("stories")).unwrap();
    std::fs::write(f.join("SPEC.md"), "# Rate limiting\n\nThe spec.\n").unwrap();
    std::fs::write(f.join("stories.yaml"), STORIES).unwrap();
    for (name, body) in [
        ("1-add-the-limiter.md", story("done", "Add the limiter", "")),
        (
            "2-expose-limiter-metrics.md",
            story("'ready-for-dev'", "Expose limiter metrics", ""),
        ),
        (
            "3-alert-on-rejections.md",
            story(
                "blocked",
                "Alert on rejections",
                "\n## Auto Run Result\n\nStatus: blocked\nBlocking condition: intent gap\n",
            ),
        ),
        (
            "5-tune-the-defaults.md",
            story("ready-for-dev", "Tune the defaults", ""),
        ),
    ] {
        std::fs::write(f.join("stories").join(name), body).unwrap();
    }
    git(&d, &["init", "-q", "-b", "main"]);
    git(&d, &["config", "user.name", "t"]);
    git(&d, &["config", "user.email", "t@t.invalid"]);
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "spec"]);
    git(&d, &["switch", "-q", "-c", "limits"]);
    (t, d)
}

fn file(d: &Path, name: &str) -> String {
    std::fs::read_to_string(d.join(FOLDER).join("stories").join(name)).unwrap()
}

#[test]
fn stories_lists_a_spec_folder_in_its_order_with_each_files_status() {
    let (_t, d) = project();
    for arg in ["rate-limiting", FOLDER] {
        let o = run_in(&d, &["stories", arg], &[]);
        assert_exit(&o, 0);
        let out = String::from_utf8_lossy(&o.stdout);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            format!("Spec folder {FOLDER}  ({FOLDER}/SPEC.md)"),
            "{out}"
        );
        let order: Vec<(&str, &str)> = lines[1..]
            .iter()
            .filter(|l| !l.contains('↳'))
            .map(|l| {
                let mut w = l.split_whitespace();
                (w.next().unwrap(), w.next().unwrap())
            })
            .collect();
        assert_eq!(
            order,
            [
                ("1", "done"),
                ("2", "ready-for-dev"),
                ("3", "blocked"),
                ("4", "not"),
                ("5", "ready-for-dev")
            ],
            "{out}"
        );
        assert!(out.contains("↳ blocked: intent gap"), "{out}");
    }
    let o = run_in(&d, &["stories", "rate-limiting", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["stories"][1]["id"], "2");
    assert_eq!(v["stories"][3]["file"], serde_json::Value::Null);
}

#[test]
fn a_run_of_a_spec_folder_develops_the_ready_stories_and_leaves_the_others() {
    let (_t, d) = project();
    let o = run_in(
        &d,
        &["run", "epic-execute", "rate-limiting", "--agent", "sim"],
        &[],
    );
    assert_exit(&o, 0);
    let out = text(&o);
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    let feats: Vec<&str> = subjects
        .lines()
        .filter(|l| l.starts_with("feat("))
        .collect();
    assert_eq!(
        feats,
        [
            "feat(story 5): Tune the defaults",
            "feat(story 2): Expose limiter metrics"
        ],
        "{out}"
    );
    // Their files say done, in the file's own frontmatter and quoting.
    assert!(file(&d, "2-expose-limiter-metrics.md").contains("\nstatus: 'done' # draft"));
    assert!(file(&d, "5-tune-the-defaults.md").contains("\nstatus: done # draft"));
    // Done, blocked and unplanned stories: not run, each said why.
    assert!(out.contains("already done"), "{out}");
    assert!(out.contains("blocked: intent gap"), "{out}");
    assert!(
        out.contains("4 has no story file yet: create it with the BMAD create-story workflow"),
        "{out}"
    );
    assert_eq!(
        file(&d, "1-add-the-limiter.md"),
        story("done", "Add the limiter", "")
    );
    assert!(file(&d, "3-alert-on-rejections.md").contains("status: blocked"));
    let prompts = std::fs::read_dir(d.join(".baton/runs"))
        .unwrap()
        .flatten()
        .flat_map(|r| {
            std::fs::read_dir(r.path().join("prompts"))
                .unwrap()
                .flatten()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect::<Vec<_>>();
    assert!(
        !prompts
            .iter()
            .any(|p| p.contains("-1-") || p.contains("-3-")),
        "{prompts:?}"
    );
}

#[test]
fn a_malformed_spec_folder_is_refused_with_its_file_and_line() {
    type Breaks<'a> = &'a dyn Fn(&Path);
    let cases: [(&str, Breaks, &str); 4] = [
        (
            "duplicated id",
            &|f| {
                let text = STORIES.replace("id: \"5\"", "id: \"2\"");
                std::fs::write(f.join("stories.yaml"), text).unwrap();
            },
            "stories.yaml line 16: story id 2 is given twice (first at line 5)",
        ),
        (
            "YAML that does not parse",
            &|f| std::fs::write(f.join("stories.yaml"), "- id: \"1\"\n  title: [oops\n").unwrap(),
            "stories.yaml line 3: not valid YAML",
        ),
        (
            "two files for one story",
            &|f| {
                std::fs::write(
                    f.join("stories/2-metrics-again.md"),
                    story("draft", "x", ""),
                )
                .unwrap()
            },
            "story 2 has two story files",
        ),
        (
            "a file no entry names",
            &|f| std::fs::write(f.join("stories/9-stray.md"), story("draft", "x", "")).unwrap(),
            "9-stray.md: no entry of",
        ),
    ];
    for (what, break_it, says) in cases {
        let (_t, d) = project();
        break_it(&d.join(FOLDER));
        for args in [
            &["stories", "rate-limiting"][..],
            &["run", "epic-execute", "rate-limiting", "--agent", "sim"],
        ] {
            let o = run_in(&d, args, &[]);
            assert!(!o.status.success(), "{what}: {args:?}");
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(says), "{what}: {args:?}: {err}");
            assert!(err.contains("hint: "), "{what}: {err}");
        }
        assert!(
            !d.join(".baton/runs").exists(),
            "{what}: no run was started"
        );
    }
}

#[test]
fn a_name_that_is_neither_an_epic_nor_a_spec_folder_lists_the_folders_found() {
    let (_t, d) = project();
    let o = run_in(
        &d,
        &["run", "epic-execute", "rate-limits", "--agent", "sim"],
        &[],
    );
    assert_exit(&o, 2);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(&format!(
            "`rate-limits` is neither an epic id nor a spec folder; spec folders found: {FOLDER}"
        )),
        "{err}"
    );
    // epic-chain takes spec folders too, in the order given.
    let o = run_in(
        &d,
        &[
            "run",
            "epic-chain",
            "rate-limiting",
            "--agent",
            "sim",
            "--dry-run",
        ],
        &[],
    );
    assert_exit(&o, 0);
    assert!(text(&o).contains("DEV PHASE: story 2"), "{}", text(&o));
}

const LEDGER: &str = "# Deferred work\n\n## DW-3: Limiter state is per process\n\nShared state needs Redis.\n\n## Deferred from: code review of story-1 (2026-11-20)\n\n- Missing index on sessions [db/schema.sql:40] — deferred, pre-existing\n- [x] Old flaky test — fixed since\n";

#[test]
fn the_deferred_ledger_is_listed_and_a_done_story_closes_what_it_names() {
    let (_t, d) = project();
    let art = d.join("_bmad-output/implementation-artifacts");
    std::fs::create_dir_all(&art).unwrap();
    std::fs::write(art.join("deferred-work.md"), LEDGER).unwrap();
    // Story 1 (done) deferred a finding in its own frontmatter.
    let s1 = d.join(FOLDER).join("stories/1-add-the-limiter.md");
    let body = std::fs::read_to_string(&s1).unwrap().replace(
        "deferred: []",
        "deferred:\n  - summary: Retry-After is rounded down\n    evidence: seen in review\n    location: src/limit.rs:12\n    severity: low",
    );
    std::fs::write(&s1, body).unwrap();
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "ledger"]);
    let o = run_in(&d, &["deferred"], &[]);
    assert_exit(&o, 0);
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    for want in [
        "DW-3  Limiter state is per process",
        "Missing index on sessions [db/schema.sql:40] — deferred, pre-existing\n    deferred by story-1",
        "(low)  Retry-After is rounded down\n    deferred by story 1 (",
        "    at src/limit.rs:12",
    ] {
        assert!(out.contains(want), "{want:?} in {out}");
    }
    assert!(
        !out.contains("Old flaky test"),
        "closed in the ledger: {out}"
    );
    let o = run_in(&d, &["status"], &[]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("deferred work: 3 open"),
        "{}",
        text(&o)
    );
    // Story 2 closes DW-3 once done.
    let o = run_in(
        &d,
        &["run", "epic-execute", "rate-limiting", "--agent", "sim"],
        &[],
    );
    assert_exit(&o, 0);
    let o = run_in(&d, &["deferred", "--json"], &[]);
    let open: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(open.len(), 2, "{open:?}");
    assert!(!open.iter().any(|e| e["id"] == "DW-3"), "{open:?}");
    let o = run_in(&d, &["deferred", "--all"], &[]);
    let all = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        all.contains("DW-3  Limiter state is per process\n    closed: story 2 ("),
        "{all}"
    );
    // The run's report lists what is still open, with who deferred it.
    let runs = d.join(".baton/runs");
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        html.contains("Deferred work (open)"),
        "no ledger in the report"
    );
    assert!(
        html.contains("Retry-After is rounded down — deferred by story 1"),
        "{}",
        &html[html.find("Deferred work").unwrap()..][..600]
    );
}

/// `done_checkpoint` pauses the run once its story is committed, `spec_checkpoint` before its
/// story is developed; `--resume` goes on past each, once.
#[test]
fn checkpoints_in_stories_yaml_pause_the_run_where_they_say() {
    let (_t, d) = project();
    let yaml = d.join(FOLDER).join("stories.yaml");
    let flags = std::fs::read_to_string(&yaml)
        .unwrap()
        .replace("  spec_checkpoint: false\n", "  done_checkpoint: true\n")
        .replace("  done_checkpoint: false\n", "  spec_checkpoint: true\n");
    std::fs::write(&yaml, flags).unwrap();
    git(&d, &["commit", "-qam", "checkpoints"]);
    let o = run_in(
        &d,
        &["run", "epic-execute", "rate-limiting", "--agent", "sim"],
        &[],
    );
    assert_exit(&o, 143);
    // Story 2 committed, then nothing ran before story 5: one stop, both reasons.
    assert!(
        text(&o).contains(
            "story 2's done checkpoint (stories.yaml); and story 5's spec checkpoint (stories.yaml): review"
        ),
        "{}",
        text(&o)
    );
    let id = crate::util::newest_run_id(&d);
    let feats = git(
        &d,
        &["log", "--format=%s", &format!("main..baton/run-{id}")],
    );
    assert_eq!(
        feats.lines().filter(|l| l.starts_with("feat(")).count(),
        1,
        "{feats}"
    );
    let o = run_in(&d, &["run", "--resume", &id], &[]);
    assert_exit(&o, 0);
    let landed = git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert_eq!(
        landed.lines().filter(|l| l.starts_with("feat(")).count(),
        2,
        "{landed}"
    );
}

/// A spec folder that cannot be read does not hide the rest of the ledger: `baton deferred`
/// lists what it can and names the broken file.
#[test]
fn deferred_names_a_spec_folder_it_cannot_read_and_lists_the_rest() {
    let (_t, d) = project();
    let art = d.join("_bmad-output/implementation-artifacts");
    std::fs::create_dir_all(&art).unwrap();
    std::fs::write(art.join("deferred-work.md"), LEDGER).unwrap();
    std::fs::write(
        d.join(FOLDER).join("stories.yaml"),
        "- id: \"1\"\n  title: [oops\n",
    )
    .unwrap();
    let o = run_in(&d, &["deferred"], &[]);
    assert_exit(&o, 0);
    assert!(String::from_utf8_lossy(&o.stdout).contains("DW-3  Limiter state is per process"));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("stories.yaml line 3: not valid YAML"), "{err}");
}

/// A spec folder reached through a link that leads out of the project is refused: statuses
/// would be written there.
#[test]
fn a_spec_folder_linked_outside_the_project_is_refused() {
    let (t, d) = project();
    let outside = t.path().join("outside");
    std::fs::rename(d.join(FOLDER), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, d.join(FOLDER)).unwrap();
    let before =
        std::fs::read_to_string(outside.join("stories/2-expose-limiter-metrics.md")).unwrap();
    let o = run_in(&d, &["run", "epic-execute", FOLDER, "--agent", "sim"], &[]);
    assert!(!o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("rate-limiting"), "{err}");
    assert_eq!(
        std::fs::read_to_string(outside.join("stories/2-expose-limiter-metrics.md")).unwrap(),
        before
    );
    assert!(!d.join(".baton/runs").exists());
}

/// A project that keeps statuses in sprint-status.yaml too: a story file without a frontmatter
/// `status` takes the status of the key named like the file — `done` there is skipped as done,
/// `ready-for-dev` is developed and its key set to done —, and a story file's own status wins
/// over its key.
#[test]
fn a_story_file_without_a_status_takes_it_from_sprint_status() {
    let (_t, d) = project();
    let stories = d.join(FOLDER).join("stories");
    for (name, title) in [
        ("2-expose-limiter-metrics.md", "Expose limiter metrics"),
        ("5-tune-the-defaults.md", "Tune the defaults"),
    ] {
        std::fs::write(
            stories.join(name),
            format!("---\ntitle: '{title}'\n---\n\n# {title}\n"),
        )
        .unwrap();
    }
    let sprint = d.join("_bmad-output/implementation-artifacts");
    std::fs::create_dir_all(&sprint).unwrap();
    std::fs::write(
        sprint.join("sprint-status.yaml"),
        "development_status:\n  1-add-the-limiter: backlog\n  2-expose-limiter-metrics: done\n  5-tune-the-defaults: ready-for-dev\n",
    )
    .unwrap();
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "tracked"]);
    let o = run_in(&d, &["stories", "rate-limiting", "--json"], &[]);
    assert_exit(&o, 0);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let status_of = |id: &str| {
        v["stories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id)
            .unwrap()["status"]
            .clone()
    };
    assert_eq!(status_of("2"), "done", "{v}");
    assert_eq!(status_of("5"), "ready-for-dev", "{v}");
    // Its own frontmatter wins over the key.
    assert_eq!(status_of("1"), "done", "{v}");
    let o = run_in(
        &d,
        &["run", "epic-execute", "rate-limiting", "--agent", "sim"],
        &[],
    );
    assert_exit(&o, 0);
    let feats = git(&d, &["log", "--format=%s", "main..HEAD"]);
    assert!(feats.contains("feat(story 5)"), "{feats}");
    assert!(
        !feats.contains("feat(story 2)"),
        "done by sprint-status: {feats}"
    );
    let tracked = std::fs::read_to_string(sprint.join("sprint-status.yaml")).unwrap();
    assert!(tracked.contains("5-tune-the-defaults: done"), "{tracked}");
    assert!(
        tracked.contains("1-add-the-limiter: backlog"),
        "left as it was: {tracked}"
    );
}

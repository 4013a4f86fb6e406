//! `baton stories`: real BMAD layouts in real temp git repositories, read by the real binary.

use std::path::Path;

use crate::util::{Proj, Test};
use serde_json::Value;

/// (id, status, file or "-") of every story, in the order printed.
fn rows(v: &Value) -> Vec<(String, String, String)> {
    v["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["status"]
                    .as_str()
                    .unwrap_or(if s["created"] == false {
                        "not created"
                    } else {
                        "no status"
                    })
                    .to_string(),
                s["file"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

fn row(id: &str, status: &str, file: &str) -> (String, String, String) {
    (id.into(), status.into(), file.into())
}

fn story<'a>(v: &'a Value, id: &str) -> &'a Value {
    v["stories"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["id"] == id)
        .unwrap_or_else(|| panic!("no story {id} in {v}"))
}

fn skipped(v: &Value) -> Vec<(String, String)> {
    v["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["file"].as_str().unwrap().into(),
                s["reason"].as_str().unwrap().into(),
            )
        })
        .collect()
}

#[test]
fn v4_layout_numeric_order_and_not_created() {
    let p = Proj::new();
    p.write("docs/epics/epic-1.md",
        "# Epic 1: Foundation\n\n## Story 1.1 Project setup\n\n## Story 1.2: Login\n\n## Story 1.15: Audit log\n",
    );
    p.write(
        "docs/stories/1.1.project-setup.md",
        "# Story 1.1: Project setup\n\n## Status\n\nDone\n",
    );
    p.write(
        "docs/stories/1.2.login.md",
        "# Story 1.2: Login\n\n## Status\n\nApproved\n",
    );
    p.write(
        "docs/stories/1.10.reports.md",
        "# Story 1.10: Reports\n\n## Status\nDraft\n",
    );
    p.write(
        "docs/stories/1.14-payments.md",
        "# Story 1.14: Payments\n\n## Status\n\nInProgress\n",
    );
    p.write(
        "docs/stories/story-1.3.md",
        "# Story 1.3: Logout\n\nStatus: Review\n",
    );
    p.write("docs/stories/README.md", "# Stories\n");
    p.write("docs/stories/1.2.test-plan.md", "# Test plan\n");
    p.write("docs/stories/2.1.other-epic.md", "# Story 2.1: Other\n");

    let v = p.json(&["stories", "1"]);
    assert_eq!(v["title"], "Foundation");
    assert_eq!(v["epic_file"], "docs/epics/epic-1.md");
    assert_eq!(
        rows(&v),
        [
            row("1.1", "done", "docs/stories/1.1.project-setup.md"),
            row("1.2", "ready-for-dev", "docs/stories/1.2.login.md"),
            row("1.3", "review", "docs/stories/story-1.3.md"),
            row("1.10", "drafted", "docs/stories/1.10.reports.md"),
            row("1.14", "in-progress", "docs/stories/1.14-payments.md"),
            row("1.15", "not created", "-"),
        ]
    );
    assert_eq!(
        story(&v, "1.15")["listed_in"],
        "docs/epics/epic-1.md line 7"
    );
    assert_eq!(story(&v, "1.15")["title"], "Audit log");
    assert_eq!(story(&v, "1.2")["status_raw"], "Approved");
    assert_eq!(story(&v, "1.2")["status_form"], "heading");
    assert_eq!(
        skipped(&v),
        [
            (
                "docs/stories/1.2.test-plan.md".into(),
                "the file name marks a test-plan, not a story".into()
            ),
            (
                "docs/stories/README.md".into(),
                "no story id in the file name or the title".into()
            ),
        ]
    );
    // Human output: the same order; skipped files only with --verbose.
    let out = p.ok(&["stories", "epic-1"]);
    let ids: Vec<&str> = out
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(ids, ["1.1", "1.2", "1.3", "1.10", "1.14", "1.15"], "{out}");
    assert!(out.contains("ready-for-dev (Approved)"), "{out}");
    assert!(!out.contains("README"), "{out}");
    let out = p.ok(&["stories", "1", "--verbose"]);
    assert!(out.contains("docs/stories/README.md: no story id"), "{out}");
    // Epic 2 exists only through its story file.
    assert_eq!(
        rows(&p.json(&["stories", "2"])),
        [row("2.1", "no status", "docs/stories/2.1.other-epic.md")]
    );
}

#[test]
fn v6_sprint_artifacts_with_agreeing_sprint_status_and_combined_epics() {
    let p = Proj::new();
    p.write("docs/epics.md",
        "# Epics\n\n## Epic 1: Accounts\n\n### Story 1.1: Sign up\n\n### Story 1.2: User auth\n\n### Story 1.3: Reset password\n\n## Epic 2: Billing\n\n### Story 2.1: Invoices\n",
    );
    p.write(
        "docs/sprint-artifacts/1-1-sign-up.md",
        "# Story 1.1: Sign up\n\nStatus: done\n\n## Story\n",
    );
    p.write(
        "docs/sprint-artifacts/1-2-user-auth.md",
        "# Story 1.2: User auth\n\nStatus: in-progress\n",
    );
    p.write(
        "docs/sprint-artifacts/validation-report-1-2.md",
        "# Validation Report\n",
    );
    p.write(
        "docs/sprint-artifacts/1-2-user-auth-validation-report.md",
        "# Validation Report: Story 1.2\n",
    );
    p.write("docs/sprint-artifacts/sprint-status.yaml",
        "# generated by sprint-planning\nproject: demo\n\ndevelopment_status:\n  epic-1: in-progress\n  1-1-sign-up: done\n  1-2-user-auth: in-progress\n  1-3-reset-password: backlog\n  epic-1-retrospective: optional\n  epic-2: backlog\n  2-1-invoices: backlog\n",
    );
    let v = p.json(&["stories", "1"]);
    assert_eq!(v["title"], "Accounts");
    assert_eq!(v["epic_file"], "docs/epics.md");
    assert_eq!(v["sprint_file"], "docs/sprint-artifacts/sprint-status.yaml");
    assert_eq!(v["sprint_epic_status"], "in-progress");
    assert_eq!(
        rows(&v),
        [
            row("1.1", "done", "docs/sprint-artifacts/1-1-sign-up.md"),
            row(
                "1.2",
                "in-progress",
                "docs/sprint-artifacts/1-2-user-auth.md"
            ),
            row("1.3", "not created", "-"),
        ]
    );
    for s in v["stories"].as_array().unwrap() {
        assert_eq!(s["disagreement"], Value::Null, "{s}");
    }
    assert_eq!(story(&v, "1.2")["sprint_key"], "1-2-user-auth");
    assert_eq!(story(&v, "1.3")["sprint_status"], "backlog");
    assert_eq!(skipped(&v).len(), 2, "{v}");
    let v2 = p.json(&["stories", "2"]);
    assert_eq!(v2["title"], "Billing");
    assert_eq!(rows(&v2), [row("2.1", "not created", "-")]);
    assert!(!p.ok(&["stories", "1"]).contains('≠'));
}

#[test]
fn nested_epic_folders_and_three_part_ids() {
    let p = Proj::new();
    let d = "docs/sprint-artifacts/stories/epic-3";
    p.write(
        &format!("{d}/3-1-catalog.md"),
        "# Story 3.1: Catalog\n\nStatus: done\n",
    );
    p.write(
        &format!("{d}/3-10-search.md"),
        "# Story 3.10: Search\n\nStatus: backlog\n",
    );
    // Both three-part forms: in the file name, and only in the title.
    p.write(
        &format!("{d}/3-5-0-hotfix.md"),
        "Status: review\n\n# Hotfix\n",
    );
    p.write(
        &format!("{d}/hotfix-followup.md"),
        "# Story 3.5.1: Follow-up\n\n**Status:** ready-for-dev\n",
    );
    p.write(
        &format!("{d}/3-5-cart.md"),
        "# Story 3.5: Cart\n\nStatus: done\n",
    );
    p.write(&format!("{d}/epic-3-retro.md"), "# Epic 3 Retrospective\n");
    let v = p.json(&["stories", "3"]);
    assert_eq!(
        rows(&v),
        [
            row("3.1", "done", &format!("{d}/3-1-catalog.md")),
            row("3.5", "done", &format!("{d}/3-5-cart.md")),
            row("3.5.0", "review", &format!("{d}/3-5-0-hotfix.md")),
            row("3.5.1", "ready-for-dev", &format!("{d}/hotfix-followup.md")),
            row("3.10", "backlog", &format!("{d}/3-10-search.md")),
        ]
    );
    assert_eq!(story(&v, "3.5.0")["title"], "Hotfix");
    assert_eq!(story(&v, "3.5.1")["status_form"], "inline");
    assert_eq!(
        skipped(&v),
        [(
            format!("{d}/epic-3-retro.md"),
            "no story id in the file name or the title".to_string()
        )]
    );
}

#[test]
fn decimal_epic_argument_and_story_prefix_forms() {
    let p = Proj::new();
    p.write(
        "docs/stories/story-2.9.md",
        "# Story 2.9: Nine\nStatus: Done\n",
    );
    p.write(
        "docs/stories/story-2.9.1.md",
        "# Story 2.9.1: Nine point one\nStatus: Ready\n",
    );
    p.write(
        "docs/stories/story-2.10.md",
        "# Story 2.10: Ten\nStatus: Blocked\n",
    );
    let v = p.json(&["stories", "2"]);
    assert_eq!(
        rows(&v),
        [
            row("2.9", "done", "docs/stories/story-2.9.md"),
            row("2.9.1", "ready-for-dev", "docs/stories/story-2.9.1.md"),
            row("2.10", "blocked", "docs/stories/story-2.10.md"),
        ]
    );
    // 2.9 is no epic here (nothing declares it): the message says which epics exist, with a
    // story of this project as the example.
    let hint = "  hint: see an epic's stories with `baton stories 2`; a story's id starts with its epic's: story 2.9.1 is in epic 2\n";
    p.test()
        .args(["stories", "2.9"])
        .stderr(&format!(
            "error: epic 2.9 not found; epics found: 2\n{hint}"
        ))
        .status(4)
        .run();
    p.test()
        .args(["stories", "5"])
        .stderr(&format!("error: epic 5 not found; epics found: 2\n{hint}"))
        .status(4)
        .run();
}

#[test]
fn bmad_output_layout_with_disagreeing_sprint_status() {
    let p = Proj::new();
    let d = "_bmad-output/implementation-artifacts";
    p.write(
        "_bmad-output/planning-artifacts/epics.md",
        "## Epic 1: Core\n### Story 1.1: A\n### Story 1.2: B\n### Story 1.3: C\n### Story 1.4: D\n",
    );
    p.write(
        &format!("{d}/1-1-a.md"),
        "# Story 1.1: A\n\nStatus: review\n",
    );
    p.write(&format!("{d}/1-2-b.md"), "# Story 1.2: B\n\nStatus: done\n");
    p.write(
        &format!("{d}/1-3-c.md"),
        "# Story 1.3: C\n\nNo status here.\n",
    );
    p.write(&format!("{d}/sprint-status.yaml"),
        "development_status:\n  epic-1: in-progress\n  1-1-a: done\n  1-2-b: done   # agreed\n  1-3-c: in-progress\n  1-4-d: in-progress\n",
    );
    let v = p.json(&["stories", "1"]);
    assert_eq!(v["sprint_file"], format!("{d}/sprint-status.yaml"));
    let dis: Vec<(String, Value)> = v["stories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["id"].as_str().unwrap().to_string(),
                s["disagreement"].clone(),
            )
        })
        .collect();
    assert_eq!(
        dis,
        [
            (
                "1.1".into(),
                Value::from("story file says review, sprint-status says done")
            ),
            ("1.2".into(), Value::Null),
            (
                "1.3".into(),
                Value::from("story file has no status; sprint-status says in-progress")
            ),
            (
                "1.4".into(),
                Value::from("sprint-status says in-progress but there is no story file")
            ),
        ]
    );
    let out = p.ok(&["stories", "1"]);
    assert!(out.contains("[sprint: done] ≠"), "{out}");
    assert!(
        out.contains("3 disagreements with sprint-status.yaml"),
        "{out}"
    );
}

#[test]
fn mixed_status_forms() {
    let p = Proj::new();
    let forms = [
        (
            "1-1-a",
            "# Story 1.1: A\n\nStatus: ready-for-dev\n",
            "ready-for-dev",
            "ready-for-dev",
            "inline",
        ),
        (
            "1-2-b",
            "# Story 1.2: B\n\n**Status:** Done\n",
            "done",
            "Done",
            "inline",
        ),
        (
            "1-3-c",
            "# Story 1.3: C\n\n## Status\n\n**Done** ✅\n",
            "done",
            "**Done** ✅",
            "heading",
        ),
        (
            "1-4-d",
            "# Story 1.4: D\n\n## Story Status\n\n- **Status**: Complete\n",
            "done",
            "Complete",
            "heading",
        ),
        (
            "1-5-e",
            "# Story 1.5: E\n\nSTATUS: In Progress\n",
            "in-progress",
            "In Progress",
            "inline",
        ),
        (
            "1-6-f",
            "# Story 1.6: F\n\n```\nStatus: done\n```\n",
            "",
            "",
            "",
        ),
        (
            "1-7-g",
            "# Story 1.7: G\n\nStatus: someday maybe\n",
            "someday maybe",
            "someday maybe",
            "inline",
        ),
    ];
    for (stem, text, ..) in forms {
        p.write(&format!("docs/stories/{stem}.md"), text);
    }
    let v = p.json(&["stories", "1"]);
    for ((stem, _, status, raw, form), s) in forms.iter().zip(v["stories"].as_array().unwrap()) {
        assert_eq!(s["file"], format!("docs/stories/{stem}.md"));
        assert_eq!(s["status"].as_str().unwrap_or(""), *status, "{stem}");
        assert_eq!(s["status_raw"].as_str().unwrap_or(""), *raw, "{stem}");
        assert_eq!(s["status_form"].as_str().unwrap_or(""), *form, "{stem}");
    }
}

#[test]
fn bad_input_is_reported_not_fatal() {
    let p = Proj::new();
    p.write("docs/epics/epic-4-empty.md", "# Epic 4: Nothing yet\n");
    p.write("docs/stories/1.1.ok.md", "# Story 1.1: Ok\nStatus: done\n");
    std::fs::write(
        p.path().join("docs/stories/1.2.latin1.md"),
        b"# Story 1.2: Caf\xe9\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink("loop", p.path().join("docs/stories/loop")).unwrap();
    p.write(
        "docs/sprint-artifacts/sprint-status.yaml",
        "development_status:\n  1-1-ok: done\n  1-2-x: [unclosed\n",
    );
    let v = p.json(&["stories", "1"]);
    assert_eq!(rows(&v), [row("1.1", "done", "docs/stories/1.1.ok.md")]);
    assert_eq!(
        skipped(&v),
        [(
            "docs/stories/1.2.latin1.md".into(),
            "not UTF-8 (invalid byte at offset 16)".into()
        )]
    );
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    #[cfg(unix)]
    assert!(
        warnings
            .iter()
            .any(|w| w.starts_with("cannot read docs/stories/loop:")),
        "{warnings:?}"
    );
    assert!(
        warnings.iter().any(|w| w
            .starts_with("docs/sprint-artifacts/sprint-status.yaml line 4: invalid YAML")
            && w.ends_with("sprint-status ignored")),
        "{warnings:?}"
    );
    // Ignored means ignored: no sprint value is attached to any story.
    assert_eq!(v["sprint_file"], Value::Null);
    // An epic with no stories is listed, empty.
    let v4 = p.json(&["stories", "4"]);
    assert_eq!(v4["title"], "Nothing yet");
    assert_eq!(rows(&v4), []);
    assert!(p.ok(&["stories", "4"]).contains("no stories yet"));
}

#[cfg(unix)]
#[test]
fn unreadable_folder_is_a_warning() {
    use std::os::unix::fs::PermissionsExt;
    let p = Proj::new();
    p.write("docs/stories/1.1.a.md", "# Story 1.1: A\n");
    p.write("docs/stories/locked/1.2.b.md", "# Story 1.2: B\n");
    let locked = p.path().join("docs/stories/locked");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let v = p.json(&["stories", "1"]);
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    // root reads through any mode: then the folder is simply read.
    if unsafe { libc::geteuid() } == 0 {
        assert_eq!(rows(&v).len(), 2);
        return;
    }
    assert_eq!(rows(&v), [row("1.1", "no status", "docs/stories/1.1.a.md")]);
    assert!(
        v["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("cannot read folder docs/stories/locked"),
        "{v}"
    );
}

#[test]
fn no_bmad_project_and_help() {
    let p = Proj::new();
    let hint = "  hint: stories are looked for under docs/stories, docs/sprint-artifacts and \
                _bmad-output/implementation-artifacts (and the folders _bmad/bmm/config.yaml or \
                .bmad-core/core-config.yaml name)\n";
    for epic in ["1", "x"] {
        p.test()
            .args(["stories", epic])
            .stderr(&format!(
                "error: epic {epic} not found: no BMAD epics or stories in this project\n{hint}"
            ))
            .status(4)
            .run();
    }
    Test::new()
        .args(["stories", "--help"])
        .stdout_contains(
            "Examples:\n  baton stories 1\n  baton stories epic-2 --verbose\n  \
             baton stories 3.5                # an epic inserted between 3 and 4\n  \
             baton stories 3 --json | jq '.stories[] | select(.disagreement)'\n",
        )
        .stdout_contains("Exit codes: 0 ok, 4 no such epic (the message lists the epics found).\n")
        .run();
}

#[test]
fn status_update_keeps_story_file_and_sprint_status_in_step() {
    use baton_engine::workflow::epic::bmad::{Status, StoryId, set_story_status};
    let p = Proj::new();
    let d = "docs/sprint-artifacts";
    let story_text = "# Story 1.2: Auth\n\nStatus: ready-for-dev\n\n## Dev Agent Record\n\nStatus: not this one\n";
    let yaml = "# keep me\ndevelopment_status:\n  epic-1: in-progress\n  1-2-auth: ready-for-dev  # note\n";
    p.write(&format!("{d}/1-2-auth.md"), story_text);
    p.write(&format!("{d}/sprint-status.yaml"), yaml);
    let id = StoryId::parse("1.2").unwrap();
    for st in [Status::InProgress, Status::Review, Status::Done] {
        let up = set_story_status(p.path(), &id, &st).unwrap();
        assert_eq!(up.story_file, Path::new(d).join("1-2-auth.md"));
        assert_eq!(up.sprint.as_ref().map(|s| s.1.as_str()), Some("1-2-auth"));
        let text = std::fs::read_to_string(p.path().join(d).join("1-2-auth.md")).unwrap();
        assert_eq!(text, story_text.replacen("ready-for-dev", st.as_str(), 1));
        let y = std::fs::read_to_string(p.path().join(d).join("sprint-status.yaml")).unwrap();
        assert_eq!(
            y,
            yaml.replace("1-2-auth: ready-for-dev", &format!("1-2-auth: {st}"))
        );
        let v = p.json(&["stories", "1"]);
        assert_eq!(
            rows(&v),
            [row("1.2", st.as_str(), &format!("{d}/1-2-auth.md"))]
        );
        assert_eq!(story(&v, "1.2")["disagreement"], Value::Null);
    }
    // A broken sprint-status stops the update before the story file is touched.
    p.write(
        &format!("{d}/sprint-status.yaml"),
        "development_status: [\n",
    );
    let before = std::fs::read(p.path().join(d).join("1-2-auth.md")).unwrap();
    assert!(set_story_status(p.path(), &id, &Status::Failed).is_err());
    assert_eq!(
        std::fs::read(p.path().join(d).join("1-2-auth.md")).unwrap(),
        before
    );
    assert!(set_story_status(p.path(), &StoryId::parse("9.9").unwrap(), &Status::Done).is_err());
}

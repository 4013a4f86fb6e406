//! Projects as the real BMAD installer writes them (`bmad-method`, pinned in `.ci/run`), next
//! to the older layouts `bmad_layouts.rs` covers: a spec folder `bmad-spec` would write under
//! the installer's output folder, found by name and run through the installed
//! `bmad-build-auto` skill (played by the simulated agent here; by the real claude, answered
//! by the model double, in `real_claude.rs`).

use std::path::{Path, PathBuf};

use crate::util::{assert_exit, git, run_in, text};

pub const SPEC: &str = "_bmad-output/specs/spec-rate-limiting";

/// The schema's own example (`stories-schema.md` of the installed bmad-spec skill).
const STORIES: &str = r#"- id: "1"
  title: Add rate limiting to the public API
  description: >-
    Introduce a token-bucket limiter in front of the public endpoints;
    return 429 with a Retry-After header on limit breach.
  invoke_dev_with: >-
    Rate limit state must be shared across instances; use the existing
    Redis client, not in-process memory.
- id: "2"
  title: Expose limiter metrics to the ops dashboard
  description: >-
    Emit per-route accept/reject counters the existing dashboard can
    scrape; no new dashboard panels in this story.
"#;

/// A git repository with one commit, on a feature branch, then BMAD installed and a spec
/// folder written — neither committed, as right after `npx bmad-method install` and
/// `bmad-spec`. None when the installer is not there (the test skips).
pub fn installed_project(root: &Path) -> Option<PathBuf> {
    let d = root.join("p");
    std::fs::create_dir_all(&d).unwrap();
    git(&d, &["init", "-q", "-b", "main"]);
    git(&d, &["config", "user.name", "t"]);
    git(&d, &["config", "user.email", "t@t.invalid"]);
    std::fs::write(d.join("README.md"), "# The service\n").unwrap();
    std::fs::write(d.join(".gitignore"), ".baton/\n").unwrap();
    git(&d, &["add", "-A"]);
    git(&d, &["commit", "-q", "-m", "init"]);
    git(&d, &["switch", "-q", "-c", "rate-limiting"]);
    if !crate::util::bmad_installer::install(&d) {
        return None;
    }
    let spec = d.join(SPEC);
    std::fs::create_dir_all(&spec).unwrap();
    std::fs::write(
        spec.join("SPEC.md"),
        "---\ntitle: Rate limiting\n---\n\n# Rate limiting\n\nLimit the public API.\n",
    )
    .unwrap();
    std::fs::write(spec.join("stories.yaml"), STORIES).unwrap();
    Some(d)
}

#[test]
fn a_spec_folder_beside_the_real_installation_runs_through_its_build_skill() {
    let t = tempfile::tempdir().unwrap();
    let Some(d) = installed_project(t.path()) else {
        return;
    };
    // Found by name under the installer's output folder, in stories.yaml order, unplanned.
    let o = run_in(&d, &["stories", "spec-rate-limiting", "--json"], &[]);
    assert_exit(&o, 0);
    let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let text_of = listed.to_string();
    assert!(
        text_of.find("Add rate limiting").unwrap() < text_of.find("Expose limiter").unwrap(),
        "{text_of}"
    );
    std::fs::create_dir_all(d.join(".baton")).unwrap();
    // The user's customizations as the installer left them, to compare after the run.
    let custom = [
        ".claude/skills/bmad-build-auto/customize.toml",
        ".agents/skills/bmad-build-auto/customize.toml",
        "_bmad/custom/config.toml",
        "_bmad/config.toml",
    ];
    let before: Vec<Vec<u8>> = custom
        .iter()
        .map(|f| std::fs::read(d.join(f)).unwrap())
        .collect();
    let o = run_in(
        &d,
        &[
            "run",
            "epic-execute",
            "spec-rate-limiting",
            "--agent",
            "sim",
            "--dev",
            "bmad-build-auto",
        ],
        &[],
    );
    assert_exit(&o, 0);
    let subjects = git(&d, &["log", "--format=%s", "main..HEAD"]);
    let subjects: Vec<&str> = subjects.lines().rev().collect();
    assert!(
        subjects[0].starts_with("docs(spec): the spec folders and BMAD's files"),
        "{subjects:?}"
    );
    assert_eq!(
        &subjects[1..3],
        [
            "feat(story 1): Add rate limiting to the public API",
            "feat(story 2): Expose limiter metrics to the ops dashboard"
        ],
        "{}",
        text(&o)
    );
    // The installation is committed whole: the checkout is clean after the landing.
    assert_eq!(git(&d, &["status", "--porcelain"]), "");
    for (f, was) in custom.iter().zip(&before) {
        assert_eq!(&std::fs::read(d.join(f)).unwrap(), was, "{f} changed");
    }
    let id = crate::util::newest_run_id(&d);
    let prompt = std::fs::read_to_string(
        d.join(".baton/runs")
            .join(&id)
            .join("prompts/spec-rate-limiting-1-dev-1.md"),
    )
    .unwrap();
    // The sim is no claude: pointed at the skill where codex and gemini find it.
    assert!(
        prompt.contains(".agents/skills/bmad-build-auto/SKILL.md and follow it exactly"),
        "{prompt}"
    );
    assert!(
        prompt.contains("use the existing Redis client, not in-process memory."),
        "invoke_dev_with goes along: {prompt}"
    );
    for id in ["1", "2"] {
        let dir = d.join(SPEC).join("stories");
        let file = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .find(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{id}-"))
            })
            .unwrap();
        let body = std::fs::read_to_string(file.path()).unwrap();
        assert!(body.starts_with("---\nstatus: done\n"), "{body}");
    }
}

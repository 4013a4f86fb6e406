//! The simulated agent playing BMAD's `bmad-build-auto` skill by folder+id dispatch, as a
//! test of baton's dispatch needs it: recognised by the prompt's `bmad-build-auto` and its
//! `Spec folder:` / `Story id:` lines. Like the real skill it halts `blocked` on a dirty work
//! tree (a spec file of its own story aside), writes the story file
//! `<folder>/stories/<id>-<slug>.md` with its frontmatter `status` and an `## Auto Run Result`,
//! and commits its work itself.
//!
//! Actions, from `[build]` of the scenario by story id, one per dispatch (counted in
//! `.baton/sim-build/<id>` of the work tree; the last repeats):
//!
//! ```toml
//! [build]
//! "1" = ["blocked"]        # status blocked, "Blocking condition: intent gap (simulated)"
//! "2" = ["red", "done"]    # done, but src/story-2.txt holds RED; then a fixed one
//! ```
//!
//! `done` (default), `red`, `blocked`, `stuck` (status `in-review`, its work uncommitted),
//! `crash` (a half-written file, exit 3). A prompt saying "Halt after planning." gets a story
//! file at `ready-for-dev`, uncommitted, as the skill's planning leaves it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Scenario;
use crate::error::Result;

struct Ask {
    folder: String,
    id: String,
    plan_only: bool,
}

fn read(prompt: &str) -> Option<Ask> {
    if !prompt.contains("bmad-build-auto") {
        return None;
    }
    let field = |name: &str| {
        prompt
            .lines()
            .find_map(|l| l.trim().strip_prefix(name).map(|v| v.trim().to_string()))
    };
    Some(Ask {
        folder: field("Spec folder:")?,
        id: field("Story id:")?,
        plan_only: prompt.lines().any(|l| l.trim() == "Halt after planning."),
    })
}

fn git(cwd: &Path, args: &[&str]) -> String {
    Command::new("git")
        .arg("-C")
        .arg(cwd)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

/// The story's file: the one its id names, else a new one.
fn story_file(cwd: &Path, ask: &Ask) -> PathBuf {
    let dir = cwd.join(&ask.folder).join("stories");
    std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&format!("{}-", ask.id)))
        })
        .unwrap_or_else(|| dir.join(format!("{}-simulated.md", ask.id)))
}

/// `Ok(None)` when the prompt is not a build-auto dispatch.
pub fn run(
    prompt: &str,
    cwd: &Path,
    scenario: &Scenario,
    mut out: &mut dyn Write,
) -> Result<Option<u8>> {
    let Some(ask) = read(prompt) else {
        return Ok(None);
    };
    let session = super::init(&mut out, cwd);
    let file = story_file(cwd, &ask);
    let before = std::fs::read_to_string(&file).unwrap_or_default();
    let counter = cwd.join(".baton/sim-build").join(&ask.id);
    let runs = std::fs::read_to_string(&counter).map_or(0, |c| c.lines().count());
    let _ = std::fs::create_dir_all(cwd.join(".baton/sim-build"));
    let _ = std::fs::write(&counter, "dispatch\n".repeat(runs + 1));
    let action = match scenario.build.get(&ask.id) {
        Some(l) if !l.is_empty() => l[runs.min(l.len() - 1)].clone(),
        _ => "done".to_string(),
    };
    let own = file
        .strip_prefix(cwd)
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let dirty: Vec<String> = git(cwd, &["status", "--porcelain"])
        .lines()
        .map(|l| l[3.min(l.len())..].to_string())
        .filter(|p| *p != own && !own.starts_with(p.as_str()) && !p.starts_with(".baton/"))
        .collect();
    let write = |status: &str, note: &str| {
        let _ = std::fs::create_dir_all(file.parent().unwrap_or(cwd));
        let body = before
            .split_once("\n---\n")
            .map(|(_, b)| b.to_string())
            .unwrap_or_else(|| format!("\n# Story {} (simulated bmad-build-auto)\n", ask.id));
        let text = format!(
            "---\nstatus: {status}\n---\n{}\n## Auto Run Result\n\nStatus: {status}\n{note}",
            body.trim_end()
        );
        let _ = std::fs::write(&file, text);
    };
    if !dirty.is_empty() {
        write(
            "blocked",
            &format!(
                "Blocking condition: dirty work tree ({})\n",
                dirty.join(", ")
            ),
        );
        return super::emit(
            &mut out,
            &session,
            prompt,
            "HALT: blocked (dirty work tree)",
            0,
        )
        .map(Some);
    }
    if ask.plan_only {
        write("ready-for-dev", "");
        return super::emit(&mut out, &session, prompt, "HALT: ready-for-dev", 0).map(Some);
    }
    let src = cwd.join(format!("src/story-{}.txt", ask.id));
    let _ = std::fs::create_dir_all(cwd.join("src"));
    match action.as_str() {
        "blocked" => {
            write("blocked", "Blocking condition: intent gap (simulated)\n");
            super::emit(&mut out, &session, prompt, "HALT: blocked", 0).map(Some)
        }
        "crash" => {
            let _ = std::fs::write(&src, "half\n");
            let _ = writeln!(
                out,
                "{}",
                serde_json::json!({"type": "assistant", "message": {"content": [{"type": "text", "text": "(simulated agent) crashing mid-phase"}]}})
            );
            Ok(Some(3))
        }
        "stuck" => {
            let _ = std::fs::write(&src, "unreviewed\n");
            write("in-review", "");
            super::emit(
                &mut out,
                &session,
                prompt,
                "(simulated agent) stopped in review",
                0,
            )
            .map(Some)
        }
        other => {
            let body = if other == "red" { "RED\n" } else { "built\n" };
            let _ = std::fs::write(&src, body);
            write("done", "Files changed: src/story-*.txt (simulated)\n");
            git(cwd, &["add", "-A"]);
            git(
                cwd,
                &[
                    "-c",
                    "user.name=bmad-build-auto (simulated)",
                    "-c",
                    "user.email=sim@baton.invalid",
                    "commit",
                    "-q",
                    "-m",
                    &format!("feat({}): simulated bmad-build-auto", ask.id),
                ],
            );
            super::emit(&mut out, &session, prompt, "HALT: done", 0).map(Some)
        }
    }
}

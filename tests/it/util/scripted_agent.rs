//! A scripted agent for the model double: what a dev, reviewer and QA agent do in an epic run,
//! in each CLI's tool names, and the helpers the real-CLI tests share.

use std::path::Path;

use serde_json::{Value, json};

use super::model_double::{Reply, Request, Script};
use super::{demo_repo, git, no_backoff};

/// A CLI's names for the tools the scripted agent uses.
pub struct Dialect {
    pub read: &'static str,
    pub edit: &'static str,
    pub write: &'static str,
    pub shell: &'static str,
    /// gemini's `replace` also wants an `instruction`.
    pub edit_instruction: bool,
}

impl Dialect {
    fn edit_input(&self, mut input: Value) -> Value {
        if self.edit_instruction {
            input["instruction"] = json!("Record the work in the story file.");
        }
        input
    }
}

pub const CLAUDE: Dialect = Dialect {
    read: "Read",
    edit: "Edit",
    write: "Write",
    shell: "Bash",
    edit_instruction: false,
};

pub const GEMINI: Dialect = Dialect {
    read: "read_file",
    edit: "replace",
    write: "write_file",
    shell: "run_shell_command",
    edit_instruction: true,
};

/// `BATON mask` as the prompt spells it ("Wrap commands … in `BATON mask -- CMD`").
fn mask_command(prompt: &str) -> String {
    let end = prompt
        .find(" mask -- CMD`")
        .expect("the prompt asks for baton mask");
    let start = prompt[..end].rfind('`').expect("a quoted command") + 1;
    format!("{} mask", &prompt[start..end])
}

/// The project's tests, for `run-tests.sh`: long enough that `baton mask` summarises them.
pub fn project_tests() -> String {
    (0..400)
        .map(|i| format!("echo 'test notes::case_{i} ... ok'\n"))
        .collect::<String>()
        + "echo 'test result: ok. 400 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.20s'\n"
}

/// A 200 KB test log whose one failing test is line `at` (of 3,700).
pub const GEN: &str = "#!/bin/sh\nawk -v at=\"$1\" 'BEGIN { for (i = 0; i < 3700; i++) { if (i == at) print \"test tests::the_failing_one ... FAILED\"; else printf \"test tests::case_%05d ... ok (padding padding padding)\\n\", i } }'\n";

/// What a dev, reviewer and QA agent do, played per phase from baton's prompt: read the story,
/// write code, run the tests through `baton mask` as the prompt asks, fill the record, print
/// the signal.
pub fn epic_agent(dir: &Path, d: &'static Dialect) -> Script {
    let dir = dir.to_path_buf();
    Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            return Reply::Text("ok".into());
        }
        let prompt = r.user_text();
        let field = |name: &str| -> String {
            prompt
                .lines()
                .find_map(|l| l.trim().strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        let story = dir.join(field("Story file:"));
        let story = story.to_string_lossy().to_string();
        let id = field("Story ID:");
        let n = r.turns();
        if prompt.contains("You are the Dev agent") {
            let code = dir.join(format!("src/story_{}.txt", id.replace('.', "_")));
            match n {
                0 => Reply::tool(d.read, json!({"file_path": story})),
                1 => Reply::tool(
                    d.edit,
                    d.edit_input(json!({"file_path": story, "old_string": "2. It is tested.\n",
                           "new_string": "2. It is tested.\n\n## Dev Agent Record\n\n### Implementation Summary\nDone by the model double.\n"})),
                ),
                2 => Reply::tool(
                    d.write,
                    json!({"file_path": code.to_string_lossy(), "content": format!("story {id}\n")}),
                ),
                3 => Reply::tool(
                    d.shell,
                    json!({"command": format!("{} -- sh run-tests.sh", mask_command(&prompt)),
                           "description": "tests"}),
                ),
                _ => Reply::Text(format!(
                    "```json\n{{\"status\": \"COMPLETE\", \"story_id\": \"{id}\", \"summary\": \"done\", \"files_changed\": [], \"tests_added\": 1}}\n```\nIMPLEMENTATION COMPLETE: {id}"
                )),
            }
        } else if prompt.contains("Senior Code Reviewer") {
            match n {
                0 => Reply::tool(
                    d.shell,
                    json!({"command": "git diff --staged --no-ext-diff", "description": "the changes"}),
                ),
                1 => Reply::tool(d.read, json!({"file_path": story})),
                2 => Reply::tool(
                    d.edit,
                    d.edit_input(json!({"file_path": story, "old_string": "Done by the model double.\n",
                           "new_string": "Done by the model double.\n\n## Code Review Record\n\nNo issues.\n"})),
                ),
                _ => Reply::Text(format!("REVIEW PASSED: {id}")),
            }
        } else if prompt.contains("user acceptance test plan") {
            let file = dir.join(field("Files to write:"));
            let epic = field("Epic file:");
            let _ = epic;
            match n {
                0 => Reply::tool(
                    d.write,
                    json!({"file_path": file.to_string_lossy(), "content": "# UAT\n\nScenarios.\n"}),
                ),
                _ => Reply::Text("UAT COMPLETE: Epic 1".into()),
            }
        } else {
            Reply::Text("I do not know this phase.".into())
        }
    })
}

/// A demo project whose epic has one story (1.1) and waits no time between rate-limit retries.
pub fn one_story_project(tmp: &Path) -> std::path::PathBuf {
    let dir = tmp.join("p");
    demo_repo(&dir, "");
    for id in ["1.2", "1.3", "1.4"] {
        std::fs::remove_file(crate::util::demo_story_path(&dir, id)).unwrap();
    }
    no_backoff(&dir, "epic-execute");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "one story"]);
    dir
}

/// The stories' commits.
pub fn story_commits(dir: &Path) -> Vec<String> {
    git(dir, &["log", "--format=%s"])
        .lines()
        .filter(|l| l.contains("(story "))
        .map(String::from)
        .collect()
}

/// The model of [`epic_agent`] behind `first` failures of the API (`fail` answers them).
pub fn failing_first(
    dir: &Path,
    d: &'static Dialect,
    first: usize,
    fail: impl Fn() -> Reply + Send + Sync + 'static,
) -> Script {
    let agent = epic_agent(dir, d);
    let n = std::sync::atomic::AtomicUsize::new(0);
    Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            return Reply::Text("ok".into());
        }
        if n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) < first {
            return fail();
        }
        agent(r)
    })
}

/// The journal's `phase_finished` events of the latest run.
pub fn finished_phases(dir: &Path) -> Vec<Value> {
    let runs = dir.join(".baton/runs");
    let mut ids: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ids.sort();
    let journal = std::fs::read_to_string(ids.last().unwrap().join("events.jsonl")).unwrap();
    journal
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "phase_finished")
        .collect()
}

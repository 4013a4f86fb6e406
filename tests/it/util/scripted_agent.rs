//! A scripted agent for the model double: what a dev, reviewer and QA agent do in an epic run,
//! in each CLI's tool names, and the helpers the real-CLI tests share.

use std::path::Path;

use serde_json::{Value, json};

use super::model_double::{Reply, Request, Script};
use super::{demo_repo, git, no_backoff};

/// What the scripted agent does in one tool call.
enum Action<'a> {
    Read(&'a str),
    /// Append `text` after the file's last line `after` (the only edits the script makes).
    Append {
        path: &'a str,
        after: &'a str,
        text: &'a str,
    },
    Write(&'a str, &'a str),
    Shell(String),
}

/// How a CLI's tools spell each [`Action`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Claude,
    Gemini,
    /// codex has one tool for all of it: `exec_command {cmd}`, a shell command line.
    Codex,
}

/// `s` as one single-quoted shell word.
fn sh(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

impl Dialect {
    fn call(self, action: Action) -> Reply {
        use Action::*;
        if self == Dialect::Codex {
            let cmd = match action {
                Read(p) => format!("cat {}", sh(p)),
                Append { path, text, .. } => format!("printf '%s' {} >> {}", sh(text), sh(path)),
                Write(p, text) => format!(
                    "mkdir -p \"$(dirname {p})\" && printf '%s' {} > {p}",
                    sh(text),
                    p = sh(p)
                ),
                Shell(c) => c,
            };
            return Reply::tool("exec_command", json!({"cmd": cmd}));
        }
        let gemini = self == Dialect::Gemini;
        let name =
            |claude: &str, gemini_name: &str| if gemini { gemini_name } else { claude }.to_string();
        let (tool, input) = match action {
            Read(p) => (name("Read", "read_file"), json!({"file_path": p})),
            Append { path, after, text } => {
                let mut input = json!({"file_path": path, "old_string": after,
                                       "new_string": format!("{after}{text}")});
                if gemini {
                    input["instruction"] = json!("Record the work in the story file.");
                }
                (name("Edit", "replace"), input)
            }
            Write(p, text) => (
                name("Write", "write_file"),
                json!({"file_path": p, "content": text}),
            ),
            Shell(c) => (
                name("Bash", "run_shell_command"),
                json!({"command": c, "description": "run it"}),
            ),
        };
        Reply::Tool { name: tool, input }
    }
}

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

/// `sh red.sh`: a red pytest run as a test suite prints it (`-v`), ~200 KB, one failing test in
/// the middle with its assertion message in the FAILURES section, and exit code 1.
pub const RED: &str = r#"#!/bin/sh
awk 'BEGIN {
  print "============================= test session starts =============================="
  print "platform linux -- Python 3.11.7, pytest-8.3.4, pluggy-1.5.0"
  print "collected 2500 items"
  print ""
  for (i = 0; i < 2500; i++) {
    if (i == 1250) printf "tests/test_calc.py::test_answer FAILED                                   [ 50%%]\n"
    else printf "tests/test_calc.py::test_case_%05d PASSED (padding padding padding)     [ %2d%%]\n", i, i / 25
  }
  print ""
  print "=================================== FAILURES ==================================="
  print "_________________________________ test_answer __________________________________"
  print ""
  print "    def test_answer():"
  print ">       assert compute() == 42"
  print "E       AssertionError: assert 41 == 42"
  print "E        +  where 41 = compute()"
  print ""
  print "tests/test_calc.py:12: AssertionError"
  print "=========================== short test summary info ============================"
  print "FAILED tests/test_calc.py::test_answer - AssertionError: assert 41 == 42"
  print "======================== 1 failed, 2499 passed in 3.21s ========================"
}'
exit 1
"#;

/// What a dev, reviewer and QA agent do, played per phase from baton's prompt: read the story,
/// write code, run the tests through `baton mask` as the prompt asks, fill the record, print
/// the signal.
pub fn epic_agent(dir: &Path, d: Dialect) -> Script {
    let project = dir.to_path_buf();
    Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            return Reply::Text("ok".into());
        }
        // The agent works where the run works: its own worktree, while it has one.
        let dir = crate::util::work_dir(&project);
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
            let code = code.to_string_lossy();
            match n {
                0 => d.call(Action::Read(&story)),
                1 => d.call(Action::Append {
                    path: &story,
                    after: "2. It is tested.\n",
                    text: "\n## Dev Agent Record\n\n### Implementation Summary\nDone by the model double.\n",
                }),
                2 => d.call(Action::Write(&code, &format!("story {id}\n"))),
                3 => d.call(Action::Shell(format!(
                    "{} -- sh run-tests.sh",
                    mask_command(&prompt)
                ))),
                _ => Reply::Text(format!(
                    "```json\n{{\"status\": \"COMPLETE\", \"story_id\": \"{id}\", \"summary\": \"done\", \"files_changed\": [], \"tests_added\": 1}}\n```\nIMPLEMENTATION COMPLETE: {id}"
                )),
            }
        } else if prompt.contains("Senior Code Reviewer") {
            match n {
                0 => d.call(Action::Shell("git diff --staged --no-ext-diff".into())),
                1 => d.call(Action::Read(&story)),
                2 => d.call(Action::Append {
                    path: &story,
                    after: "Done by the model double.\n",
                    text: "\n## Code Review Record\n\nNo issues.\n",
                }),
                _ => Reply::Text(format!("REVIEW PASSED: {id}")),
            }
        } else if prompt.contains("user acceptance test plan") {
            let file = dir.join(field("Files to write:"));
            match n {
                0 => d.call(Action::Write(
                    &file.to_string_lossy(),
                    "# UAT\n\nScenarios.\n",
                )),
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
    d: Dialect,
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

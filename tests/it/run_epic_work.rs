//! A story's work with an agent that only edits files: baton stages it, the review sees it,
//! one commit; a failed story keeps a BMAD status and only its own changes are stashed. The
//! agent is a fake `claude` on PATH: a shell script that reads its prompt, edits files (never
//! runs git to write) and answers in Claude Code's stream-json.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::util::assert_exit;
use crate::util::bin;
use crate::util::text as out;

pub use crate::util::git;

/// A story as BMAD's story template makes it: the `## Dev Agent Record` section is there,
/// empty, before any dev work.
pub fn template_story(id: &str, title: &str, status: &str) -> String {
    format!(
        "# Story {id}: {title}\n\nStatus: {status}\n\n## Story\n\nAs a user, I want {title}.\n\n\
## Acceptance Criteria\n\n1. It works.\n\n## Tasks / Subtasks\n\n- [ ] Do it\n\n\
## Dev Notes\n\n## Dev Agent Record\n\n### Agent Model Used\n\n{{{{agent_model_name_version}}}}\n\n\
### Debug Log References\n\n### Completion Notes List\n\n### File List\n"
    )
}

/// The fake agent. dev: writes `src/<slug>.txt`, changes `src/lib.txt`, deletes
/// `src/old.txt`, fills in the story's Dev Agent Record; blocks when `<bin>/block` exists;
/// adds the user's `notes.txt` to `.gitignore` when `<bin>/ignore-notes` exists; stages
/// everything itself (`git add -A`, dev and epic phases) when `<bin>/add-all` exists.
/// review: keeps its prompt and the staged diff it sees (`git diff --cached`, read only),
/// appends its record, passes. Epic phases (UAT, retro): writes the files its prompt names
/// and answers their signal. Every call is listed in `<bin>/calls`.
pub fn fake_claude(root: &Path) -> PathBuf {
    let bin_dir = root.join("fake-bin");
    std::fs::create_dir_all(&bin_dir).unwrap();
    let b = bin_dir.display();
    let script = format!(
        r#"#!/bin/sh
B="{b}"
cat > "$B/prompt"
id=$(sed -n 's/^Story ID: //p' "$B/prompt" | head -n 1)
file=$(sed -n 's/^Story file: //p' "$B/prompt" | head -n 1)
slug=$(echo "$id" | tr '.' '_')
say() {{
  printf '{{"type":"system","subtype":"init","session_id":"s1","model":"fake"}}\n'
  printf '{{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s1","total_cost_usd":0.01,"usage":{{"input_tokens":10,"output_tokens":5}}}}\n' "$1"
}}
if grep -q "You are the Dev agent" "$B/prompt"; then
  echo "dev $id" >> "$B/calls"
  cp "$B/prompt" "$B/dev-prompt-$id"
  mkdir -p src
  echo "greeting of story $id" > "src/story_$slug.txt"
  echo "changed by story $id" >> src/lib.txt
  rm -f src/old.txt
  if [ -e "$B/fixes" ] && grep -q "The project's checks failed" "$B/prompt"; then
    echo "fixed" >> "src/story_$slug.txt"
  fi
  if [ -e "$B/ignore-notes" ]; then echo notes.txt >> .gitignore; fi
  if [ -e "$B/add-all" ]; then git add -A; fi
  sed 's/^{{{{agent_model_name_version}}}}$/fake-model-1/' "$file" > "$file.new" && mv "$file.new" "$file"
  printf '\n- src/story_%s.txt (new)\n- src/lib.txt (changed)\n' "$slug" >> "$file"
  if [ -e "$B/block" ]; then
    say "IMPLEMENTATION BLOCKED: $id - the fake agent was told to block"
  else
    say "IMPLEMENTATION COMPLETE: $id"
  fi
elif grep -q "Senior Code Reviewer" "$B/prompt"; then
  echo "review $id" >> "$B/calls"
  cp "$B/prompt" "$B/review-prompt-$id"
  git diff --cached > "$B/review-diff-$id"
  printf '\n## Code Review Record\n\nLooks right.\n' >> "$file"
  say "REVIEW PASSED: $id"
else
  echo other >> "$B/calls"
  files=$(sed -n 's/^Files to write: //p' "$B/prompt" | head -n 1)
  sig=$(grep -E '^(UAT|RETRO) COMPLETE: Epic ' "$B/prompt" | head -n 1)
  IFS=','
  for f in $files; do
    f=$(echo "$f" | sed 's/^ *//')
    mkdir -p "$(dirname "$f")"
    printf '# %s

Written by the fake agent.
' "$sig" > "$f"
  done
  unset IFS
  if [ -e "$B/add-all" ]; then git add -A; fi
  say "${{sig:-nothing to do}}"
fi
"#
    );
    let path = bin_dir.join("claude");
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin_dir
}

pub struct Proj {
    _tmp: tempfile::TempDir,
    pub dir: PathBuf,
    pub fake: PathBuf,
}

impl Proj {
    /// A git repository with `files` committed on `main`, then on branch `work`.
    pub fn new(files: &[(&str, &str)]) -> Proj {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("p");
        std::fs::create_dir_all(&dir).unwrap();
        git(&dir, &["init", "-q", "-b", "main"]);
        git(&dir, &["config", "user.name", "t"]);
        git(&dir, &["config", "user.email", "t@t.invalid"]);
        for (rel, text) in files {
            let p = dir.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        std::fs::write(dir.join(".gitignore"), ".baton/\n").unwrap();
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-q", "-m", "init"]);
        git(&dir, &["switch", "-q", "-c", "work"]);
        let fake = fake_claude(tmp.path());
        Proj {
            _tmp: tmp,
            dir,
            fake,
        }
    }

    pub fn baton(&self, args: &[&str]) -> Output {
        let path = format!("{}:{}", self.fake.display(), std::env::var("PATH").unwrap());
        Command::new(bin())
            .args(args)
            .current_dir(&self.dir)
            .env_remove("BATON_AGENT_SIM")
            .env("PATH", path)
            .output()
            .unwrap()
    }

    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.dir.join(rel)).unwrap_or_default()
    }

    /// The folder of the project's one run.
    pub fn only_run(&self) -> PathBuf {
        let mut runs = std::fs::read_dir(self.dir.join(".baton/runs"))
            .unwrap()
            .map(|e| e.unwrap().path());
        let run = runs.next().expect("a run");
        assert!(runs.next().is_none(), "more than one run");
        run
    }

    pub fn fake_file(&self, name: &str) -> String {
        std::fs::read_to_string(self.fake.join(name)).unwrap_or_default()
    }

    pub fn log(&self) -> Vec<String> {
        git(&self.dir, &["log", "--format=%s", "main..HEAD"])
            .lines()
            .map(str::to_string)
            .collect()
    }

    pub fn files_of(&self, rev: &str) -> Vec<String> {
        git(&self.dir, &["show", "--name-only", "--format=", rev])
            .lines()
            .map(str::to_string)
            .collect()
    }
}

const STORY: &str = "docs/stories/1.1.greeting.md";

fn project() -> Proj {
    let p = Proj::new(&[
        (STORY, &template_story("1.1", "Greeting", "ready-for-dev")),
        ("src/lib.txt", "lib\n"),
        ("src/old.txt", "to be removed\n"),
        ("README.md", "readme\n"),
    ]);
    // The user's own work, there before the run: never the story's.
    std::fs::write(p.dir.join("notes.txt"), "my notes\n").unwrap();
    std::fs::write(p.dir.join("README.md"), "readme, edited by the user\n").unwrap();
    p
}

/// The story's commit, then the epic's UAT; the story's commit holds the new, changed and
/// deleted files baton staged, and none of the user's.
fn assert_one_story_commit(p: &Proj) {
    assert_eq!(
        p.log(),
        [
            "docs(epic 1): UAT and retrospective",
            "feat(story 1.1): Greeting"
        ]
    );
    let mut files = p.files_of("HEAD~1");
    files.sort();
    assert_eq!(
        files,
        [STORY, "src/lib.txt", "src/old.txt", "src/story_1_1.txt"]
    );
}

#[test]
fn an_agent_that_only_edits_files_drives_a_story_to_one_commit() {
    let p = project();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert!(o.status.success(), "{}", out(&o));
    assert_one_story_commit(&p);
    // The review saw exactly the staged change: in its prompt and in `git diff --cached`.
    let review = p.fake_file("review-prompt-1.1");
    assert!(
        review.contains("staged now: ") && review.contains("src/story_1_1.txt"),
        "{review}"
    );
    let diff = p.fake_file("review-diff-1.1");
    assert!(diff.contains("+greeting of story 1.1"), "{diff}");
    // The list the prompt names (the dev judge's, reused) is exactly what git has staged.
    let after = review.split("staged now: ").nth(1).unwrap();
    let listed: Vec<&str> = after[..after.find(".\n").unwrap()].split(", ").collect();
    let mut in_diff: Vec<&str> = diff
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git a/"))
        .map(|l| l.split(" b/").next().unwrap())
        .collect();
    in_diff.sort();
    assert_eq!(listed, in_diff, "{review}");
    assert!(diff.contains("deleted file mode"), "{diff}");
    assert!(
        !diff.contains("notes.txt") && !diff.contains("README.md"),
        "{diff}"
    );
    // The prompts no longer ask for `git add`; the template's record is filled in, not added.
    let dev = p.fake_file("dev-prompt-1.1");
    assert!(!dev.contains("git add -A"), "{dev}");
    assert!(
        dev.contains("Fill in the story file's `Dev Agent Record` section"),
        "{dev}"
    );
    let story = p.read(STORY);
    assert_eq!(story.matches("## Dev Agent Record").count(), 1, "{story}");
    assert!(
        story.contains("fake-model-1") && story.contains("Status: done"),
        "{story}"
    );
    // The user's files are as they were, and still not committed.
    assert_eq!(p.read("notes.txt"), "my notes\n");
    assert_eq!(p.read("README.md"), "readme, edited by the user\n");
    let status = git(&p.dir, &["status", "--porcelain"]);
    assert_eq!(status, " M README.md\n?? notes.txt\n", "{status}");
}

/// The dev agent makes a file that was the user's before the run ignored (`.gitignore`): git
/// refuses to name an ignored path even to exclude it, so baton stages the work path by path,
/// and the story still gets its commit, without the user's files.
#[test]
fn a_pre_run_file_the_agent_makes_ignored_still_stays_out_of_the_story() {
    let p = project();
    std::fs::write(p.fake.join("ignore-notes"), "").unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert!(o.status.success(), "{}", out(&o));
    let mut files = p.files_of("HEAD~1");
    files.sort();
    assert_eq!(
        files,
        [
            ".gitignore",
            STORY,
            "src/lib.txt",
            "src/old.txt",
            "src/story_1_1.txt"
        ]
    );
    assert_eq!(p.read("notes.txt"), "my notes\n");
    let status = git(&p.dir, &["status", "--porcelain"]);
    assert_eq!(status, " M README.md\n", "{status}");
}

/// An agent that stages everything itself (`git add -A`, in dev and in UAT) stages the user's
/// files too: baton unstages them before each commit, the story's and the epic's.
#[test]
fn an_agent_that_stages_everything_commits_none_of_the_users_files() {
    let p = project();
    std::fs::write(p.fake.join("add-all"), "").unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert!(o.status.success(), "{}", out(&o));
    assert_one_story_commit(&p);
    let uat = p.files_of("HEAD");
    assert!(
        !uat.iter().any(|f| f == "notes.txt" || f == "README.md"),
        "{uat:?}"
    );
    assert!(uat.iter().any(|f| f.starts_with("docs/uat/")), "{uat:?}");
    assert_eq!(p.read("notes.txt"), "my notes\n");
    let status = git(&p.dir, &["status", "--porcelain"]);
    assert_eq!(status, " M README.md\n?? notes.txt\n", "{status}");
}

/// A story file the user wrote before the run and never committed (as BMAD's create-story
/// leaves it) is committed with its story: with the git on PATH, and with an older git where
/// this machine has one (`/usr/bin/git`: before 2.45, `git commit --include` leaves out an
/// untracked path without a word).
#[test]
fn an_untracked_story_file_is_committed_with_its_story() {
    let mut gits = vec![None];
    let older = Path::new("/usr/bin/git");
    if older.is_file() {
        gits.push(Some(older));
    } else {
        eprintln!("an_untracked_story_file…: no /usr/bin/git, checked with the git on PATH only");
    }
    for g in gits {
        let p = project();
        git(&p.dir, &["rm", "-q", "--cached", STORY]);
        git(
            &p.dir,
            &["commit", "-q", "-m", "the story not committed yet"],
        );
        if let Some(g) = g {
            std::os::unix::fs::symlink(g, p.fake.join("git")).unwrap();
        }
        let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
        assert!(o.status.success(), "{g:?}: {}", out(&o));
        let files = p.files_of("HEAD~1");
        assert!(files.iter().any(|f| f == STORY), "{g:?}: {files:?}");
        assert!(p.read(STORY).contains("Status: done"), "{g:?}");
        let status = git(&p.dir, &["status", "--porcelain"]);
        assert!(!status.contains(STORY), "{g:?}: {status}");
    }
}

#[test]
fn a_failed_story_stays_in_progress_and_only_its_own_changes_are_stashed() {
    let p = project();
    std::fs::write(p.fake.join("block"), "").unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert_exit(&o, 1);
    // Two attempts, then the story failed: a BMAD status, the reason in its record.
    assert_eq!(p.fake_file("calls"), "dev 1.1\ndev 1.1\nother\n");
    let story = p.read(STORY);
    assert!(story.contains("Status: in-progress"), "{story}");
    let note = story.find("not done").expect("the failure is recorded");
    let record = story.find("## Dev Agent Record").unwrap();
    assert!(note > record, "{story}");
    assert!(
        story.contains("the fake agent was told to block"),
        "{story}"
    );
    assert_eq!(
        p.log(),
        [
            "docs(epic 1): UAT and retrospective",
            "docs(story 1.1): failed — records of the attempts"
        ]
    );
    assert_eq!(p.files_of("HEAD~1"), [STORY]);
    // One stash, with exactly the story's own edits.
    let stashes = git(&p.dir, &["stash", "list", "--format=%s"]);
    assert_eq!(stashes.lines().count(), 1, "{stashes}");
    assert!(stashes.contains("story 1.1 failed"), "{stashes}");
    let mut tracked: Vec<String> = git(&p.dir, &["stash", "show", "--name-only", "stash@{0}"])
        .lines()
        .map(str::to_string)
        .collect();
    tracked.sort();
    assert_eq!(tracked, ["src/lib.txt", "src/old.txt"]);
    let untracked = git(&p.dir, &["show", "--name-only", "--format=", "stash@{0}^3"]);
    assert_eq!(untracked.trim(), "src/story_1_1.txt");
    // The user's files survive untouched, and the tree has nothing of the story.
    assert_eq!(p.read("notes.txt"), "my notes\n");
    assert_eq!(p.read("README.md"), "readme, edited by the user\n");
    let status = git(&p.dir, &["status", "--porcelain"]);
    assert_eq!(status, " M README.md\n?? notes.txt\n", "{status}");
    // The reason is in baton's journal too.
    let run = p.only_run();
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    assert!(
        events
            .lines()
            .any(|l| l.contains("\"subject_finished\"") && l.contains("told to block")),
        "{events}"
    );
}

/// The same agent as a `command` agent of baton.toml: plain text out, no CLI at all. It edits
/// files and runs no git; baton stages, the review sees it, one commit.
#[test]
fn a_command_agent_of_baton_toml_drives_a_story_to_one_commit() {
    let p = project();
    let claude = std::fs::read_to_string(p.fake.join("claude")).unwrap();
    let start = claude.find("say() {").unwrap();
    let end = start + claude[start..].find("\n}\n").unwrap() + 3;
    let script = format!(
        "{}say() {{ printf '%s\\n' \"$1\"; }}\n{}",
        &claude[..start],
        &claude[end..]
    );
    let agent = p.fake.join("agent.sh");
    std::fs::write(&agent, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        p.dir.join("baton.toml"),
        format!(
            "[run]\ndefault_agent = \"scripted\"\n[agents.scripted]\nprogram = \"{}\"\n",
            agent.display()
        ),
    )
    .unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--dry-run"]);
    assert!(out(&o).contains("agent: scripted"), "{}", out(&o));
    let o = p.baton(&["run", "epic-execute", "1"]);
    assert!(o.status.success(), "{}", out(&o));
    // baton.toml, there before the run, is the user's: not in the commit's exact file list.
    assert_one_story_commit(&p);
    assert!(
        p.fake_file("review-diff-1.1")
            .contains("+greeting of story 1.1")
    );
    assert_eq!(p.fake_file("calls").matches("dev 1.1").count(), 1);
    assert_eq!(
        git(&p.dir, &["status", "--porcelain"]),
        " M README.md\n?? baton.toml\n?? notes.txt\n"
    );
}

/// The project's test suite, as pytest prints it: green before the story exists (nothing to
/// test yet) and once its file says `fixed`; red with `test_greeting`'s assertion otherwise.
const CHECK: &str = r#"[ -e src/story_1_1.txt ] || { echo "== 2 passed in 0.01s =="; exit 0; }
if grep -q fixed src/story_1_1.txt; then echo "== 3 passed in 0.01s =="; exit 0; fi
cat <<'EOF'
============================= test session starts ==============================
collected 3 items

tests/test_greeting.py ..F                                               [100%]

=================================== FAILURES ===================================
________________________________ test_greeting _________________________________

    def test_greeting():
>       assert greeting() == 'fixed'
E       AssertionError: assert 'greeting' == 'fixed'

tests/test_greeting.py:7: AssertionError
=========================== short test summary info ============================
FAILED tests/test_greeting.py::test_greeting - AssertionError: assert 'greeting' == 'fixed'
========================= 1 failed, 2 passed in 0.02s ==========================
EOF
exit 1
"#;

/// A test suite that is red on the starting commit already (`test_legacy`), whatever a story
/// does.
const LEGACY: &str = r#"cat <<'EOF'
collected 3 items

=================================== FAILURES ===================================
_________________________________ test_legacy __________________________________

>       assert legacy() == 1
E       AssertionError: assert 0 == 1

tests/test_legacy.py:3: AssertionError
=========================== short test summary info ============================
FAILED tests/test_legacy.py::test_legacy - AssertionError: assert 0 == 1
========================= 1 failed, 2 passed in 0.02s ==========================
EOF
exit 1
"#;

/// A project whose only test command is a Makefile `test` target (no `[checks]`).
fn checked_project() -> Proj {
    Proj::new(&[
        (STORY, &template_story("1.1", "Greeting", "ready-for-dev")),
        ("src/lib.txt", "lib\n"),
        ("Makefile", "test:\n\tsh check.sh\n"),
        ("check.sh", CHECK),
    ])
}

fn story_commits(p: &Proj) -> usize {
    p.log()
        .iter()
        .filter(|l| l.starts_with("feat(story 1.1)"))
        .count()
}

/// The dev writes a bug its reviewer would pass; the project's tests (found: the Makefile's
/// `test` target, shown by --dry-run) are red, so nothing is committed and the next dev
/// attempt is told the failing test, its assertion and where the whole output is; it fixes it,
/// the tests go green, and the story is committed once.
#[test]
fn a_red_story_is_retried_with_its_failing_test_and_committed_green_once() {
    let p = checked_project();
    std::fs::write(p.fake.join("fixes"), "").unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude", "--dry-run"]);
    assert!(
        out(&o).contains("checks before each commit: `make test` (found: Makefile)"),
        "{}",
        out(&o)
    );
    for cmd in ["config", "doctor"] {
        let o = p.baton(&[cmd]);
        assert!(
            out(&o).contains("checks before each commit: `make test` (found: Makefile)"),
            "{cmd}: {}",
            out(&o)
        );
    }
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(p.fake_file("calls").matches("dev 1.1").count(), 2);
    assert_eq!(
        p.fake_file("calls").matches("review 1.1").count(),
        1,
        "no review of red code"
    );
    let second = p.fake_file("dev-prompt-1.1");
    assert!(second.contains("The project's checks failed"), "{second}");
    assert!(
        second.contains(
            "tests/test_greeting.py::test_greeting (tests/test_greeting.py:7): \
             AssertionError: assert 'greeting' == 'fixed'"
        ),
        "{second}"
    );
    assert!(second.contains(".baton/scratch/"), "{second}");
    assert_eq!(story_commits(&p), 1, "{:?}", p.log());
    assert!(
        git(&p.dir, &["show", "HEAD~1:src/story_1_1.txt"]).contains("fixed"),
        "the committed code is the green one"
    );
    let err = out(&o);
    assert!(err.contains("checks pass on the starting commit"), "{err}");
    assert!(err.contains("`make test` failed (exit 2)"), "{err}");
    // The report lists every check per story: the red one with its failing test, then green.
    let run = p.only_run();
    let html = std::fs::read_to_string(run.join("report.html")).unwrap();
    let at = html
        .find("<h2>Checks</h2>")
        .expect("no checks in the report");
    let checks = &html[at..html[at..].find("</ul>").map_or(html.len(), |e| at + e)];
    assert!(
        checks.contains("story 1.1 after dev (attempt 1)")
            && checks.contains("test_greeting.py::test_greeting"),
        "the red check is not in the report: {checks}"
    );
    assert!(
        checks.contains("story 1.1 after dev (attempt 2)"),
        "{checks}"
    );
    assert!(checks.contains("epic 1 on the starting commit"), "{checks}");
}

/// An agent that never fixes it: no commit holds its code, the story fails naming the
/// failing test (terminal and journal), and the code is set aside in a stash.
#[test]
fn a_story_that_stays_red_is_never_committed_and_names_its_failing_test() {
    let p = checked_project();
    std::fs::write(p.dir.join("baton.toml"), crate::util::NOTIFY_TO_FILE).unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    let err = out(&o);
    assert_eq!(story_commits(&p), 0, "{:?}", p.log());
    let committed = git(&p.dir, &["log", "--name-only", "--format=", "main..HEAD"]);
    assert!(!committed.contains("src/story_1_1.txt"), "{committed}");
    assert!(
        err.contains("tests/test_greeting.py::test_greeting"),
        "{err}"
    );
    let run = p.only_run();
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    assert!(
        events.lines().any(|l| l.contains("\"subject_finished\"")
            && l.contains("tests/test_greeting.py::test_greeting")),
        "{events}"
    );
    assert!(git(&p.dir, &["stash", "list"]).contains("1.1"));
    // The notifier heard the failed story with its failing test, then the end.
    let heard = crate::util::heard(&p.dir);
    let names: Vec<&str> = heard.iter().map(|e| e["event"].as_str().unwrap()).collect();
    assert_eq!(names, ["story_failed", "run_ended"], "{heard:?}");
    assert!(
        heard[0]["text"]
            .as_str()
            .unwrap()
            .contains("tests/test_greeting.py::test_greeting"),
        "{heard:?}"
    );
    // `status` names it too.
    let status = out(&p.baton(&["status"]));
    assert!(
        status.contains("failed: story 1.1: dev: `make test` failed (exit 2)")
            && status.contains("tests/test_greeting.py::test_greeting"),
        "{status}"
    );
}

/// A test that fails on the starting commit already does not block a story that adds no new
/// failure (the run says so); `--no-checks` commits on the agents' word, saying so.
#[test]
fn a_failure_the_starting_commit_had_does_not_block_and_checks_can_be_turned_off() {
    let p = checked_project();
    std::fs::write(p.dir.join("legacy.sh"), LEGACY).unwrap();
    std::fs::write(
        p.dir.join("baton.toml"),
        "[checks]\ncommands = [\"sh legacy.sh\"]\n",
    )
    .unwrap();
    git(&p.dir, &["add", "-A"]);
    git(
        &p.dir,
        &["commit", "-qm", "a red test the project already had"],
    );
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    let err = out(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("checks fail on the starting commit already"),
        "{err}"
    );
    assert!(
        err.contains("fails as it did on the starting commit"),
        "{err}"
    );
    assert_eq!(story_commits(&p), 1);

    let p = checked_project();
    let o = p.baton(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "claude",
        "--no-checks",
    ]);
    let err = out(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains("checks: off for this run (--no-checks)"),
        "{err}"
    );
    assert_eq!(p.fake_file("calls").matches("dev 1.1").count(), 1);
    assert_eq!(story_commits(&p), 1);
}

/// Under `--parallel` the checks run in each story's own worktree: the red story is retried
/// there with its failing test and reaches the run's branch green, once.
#[test]
fn parallel_stories_are_gated_by_the_checks_in_their_worktrees() {
    let p = checked_project();
    std::fs::write(p.fake.join("fixes"), "").unwrap();
    let o = p.baton(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "claude",
        "--parallel",
        "2",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(p.fake_file("calls").matches("dev 1.1").count(), 2);
    let second = p.fake_file("dev-prompt-1.1");
    assert!(second.contains("The project's checks failed"), "{second}");
    assert_eq!(story_commits(&p), 1, "{:?}", p.log());
    assert!(git(&p.dir, &["show", "HEAD:src/story_1_1.txt"]).contains("fixed"));
}

/// A workflow's own `[checks]` win over baton.toml's for its runs, key by key.
#[test]
fn a_workflow_s_own_checks_win_over_the_project_s() {
    let p = checked_project();
    std::fs::write(
        p.dir.join("baton.toml"),
        "[checks]\ncommands = [\"sh legacy.sh\"]\ntimeout_secs = 60\n",
    )
    .unwrap();
    let wf = p.dir.join(".baton/workflows/epic-execute.toml");
    std::fs::create_dir_all(wf.parent().unwrap()).unwrap();
    let def = baton_engine::workflow::epic::def::BUILTIN[0].1;
    std::fs::write(
        &wf,
        format!("{def}\n[checks]\ncommands = [\"make test\"]\n"),
    )
    .unwrap();
    let o = p.baton(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "claude",
        "--dry-run",
        "--json",
    ]);
    assert!(o.status.success(), "{}", out(&o));
    let pre = crate::util::json_lines(&o.stdout)
        .into_iter()
        .find(|v| v["event"] == "preflight")
        .unwrap();
    let cmds = &pre["checks"]["commands"];
    assert_eq!(cmds.as_array().map(Vec::len), Some(1), "{pre}");
    assert_eq!(cmds[0]["command"], "make test", "{pre}");
    // The timeout nobody set in the workflow is baton.toml's.
    assert_eq!(cmds[0]["timeout"], 60, "{pre}");
    // A run gates on them: the Makefile's red test keeps the story out of the commits.
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert!(!o.status.success(), "{}", out(&o));
    assert_eq!(story_commits(&p), 0);
}

/// A CLI that is not logged in stops the run (exit 7) before any work, and leaves every file
/// as it was: the story file keeps its own status line, byte for byte.
#[test]
fn a_cli_that_is_not_logged_in_leaves_every_file_as_it_was() {
    let p = Proj::new(&[
        (STORY, &template_story("1.1", "Greeting", "Approved")),
        ("src/lib.txt", "lib\n"),
    ]);
    let claude = p.fake.join("claude");
    std::fs::write(
        &claude,
        "#!/bin/sh\ncat > /dev/null\nprintf '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"fake\"}\\n'\nprintf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"result\":\"Not logged in · Please run /login\",\"session_id\":\"s1\"}\\n'\nexit 1\n",
    )
    .unwrap();
    let before = std::fs::read(p.dir.join(STORY)).unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert_exit(&o, 7);
    assert_eq!(
        std::fs::read(p.dir.join(STORY)).unwrap(),
        before,
        "the story file was changed: {}",
        p.read(STORY)
    );
    assert_eq!(git(&p.dir, &["status", "--porcelain"]), "");
}

/// With `--wait-for-quota` a spent limit is waited out (its message gives no reset time here:
/// the backoff's wait), and the run goes on by itself: the wait is said, no attempt is spent,
/// the story is committed once.
#[test]
fn with_wait_for_quota_a_spent_limit_is_waited_out_and_the_run_goes_on() {
    let p = Proj::new(&[
        (STORY, &template_story("1.1", "Greeting", "ready-for-dev")),
        ("src/lib.txt", "lib\n"),
    ]);
    crate::util::no_backoff(&p.dir, "epic-execute");
    std::fs::rename(p.fake.join("claude"), p.fake.join("claude.real")).unwrap();
    let wrapper = p.fake.join("claude");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nd=\"$(dirname \"$0\")\"\nif [ ! -e \"$d/spent\" ]; then\n  touch \"$d/spent\"; cat > /dev/null; echo quota >> \"$d/calls\"\n  printf '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"fake\"}\\n'\n  printf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,\"result\":\"You\\342\\200\\231ve hit your usage limit.\",\"session_id\":\"s1\"}\\n'\n  exit 1\nfi\nexec \"$d/claude.real\" \"$@\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    let o = p.baton(&[
        "run",
        "epic-execute",
        "1",
        "--agent",
        "claude",
        "--wait-for-quota",
    ]);
    let err = out(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "claude's usage limit is spent (no reset time in its message): trying again at"
        ),
        "{err}"
    );
    let calls = p.fake_file("calls");
    assert_eq!(calls.matches("quota").count(), 1, "{calls}");
    assert_eq!(
        calls.matches("dev 1.1").count(),
        1,
        "no attempt was spent: {calls}"
    );
    assert_eq!(story_commits(&p), 1, "{:?}", p.log());
}

/// A subscriber's spent limit, in claude's own words (with `api_error_status: 429`): no
/// attempt is spent, the story stays as it was, and the run pauses (exit 7) naming when the
/// limit resets and how to continue.
#[test]
fn a_spent_session_limit_pauses_the_run_without_spending_an_attempt() {
    let p = Proj::new(&[
        (STORY, &template_story("1.1", "Greeting", "ready-for-dev")),
        ("src/lib.txt", "lib\n"),
    ]);
    std::fs::write(
        p.fake.join("claude"),
        "#!/bin/sh\ncat > /dev/null\necho call >> \"$(dirname \"$0\")/calls\"\nprintf '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\",\"model\":\"fake\"}\\n'\nprintf '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"api_error_status\":429,\"result\":\"You\\342\\200\\231ve hit your session limit \\302\\267 resets 3pm (Europe/Berlin)\",\"session_id\":\"s1\"}\\n'\nexit 1\n",
    )
    .unwrap();
    let before = std::fs::read(p.dir.join(STORY)).unwrap();
    let o = p.baton(&["run", "epic-execute", "1", "--agent", "claude"]);
    assert_exit(&o, 7);
    let err = out(&o);
    assert!(err.contains("hit your session limit"), "{err}");
    assert!(
        err.contains("claude's usage limit resets at ") && err.contains("Europe/Berlin"),
        "{err}"
    );
    assert!(err.contains("baton run --resume"), "{err}");
    assert_eq!(
        p.fake_file("calls").lines().count(),
        1,
        "an attempt was spent again"
    );
    assert_eq!(std::fs::read(p.dir.join(STORY)).unwrap(), before);
    assert!(p.log().is_empty(), "{:?}", p.log());
}

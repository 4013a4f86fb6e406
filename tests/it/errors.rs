//! Error cases, each with its exact message and exit code (README: 2 bad input, 3 not allowed
//! in the current state, 4 not found). `Test` also checks that a 2/3/4 leaves the store as it
//! was.

use crate::util::{EPIC_SIM, Proj, Test};

const NO_TASK_HINT: &str =
    "  hint: create one first: baton task init <name> (or pass --task SLUG)\n";
/// `--agent` takes one of the agents clap knows; it lists them.
const UNKNOWN_AGENT: &str = "error: unknown agent `gpt`\n  \
hint: agents: claude, codex, gemini, sim; define your own under [agents.gpt] in baton.toml\n";

fn with_task() -> Proj {
    Test::new()
        .args(["task", "init", "Add login"])
        .stdout_contains("created task add-login")
        .run()
        .proj()
}

#[test]
fn phase_begin_without_a_task() {
    Test::new()
        .args(["phase", "begin", "architect", "--needs", "memory"])
        .stderr(&format!(
            "error: no current task in [PROJECT]/docs/orchestrator\n{NO_TASK_HINT}"
        ))
        .status(4)
        .run();
}

#[test]
fn resume_without_a_task() {
    Test::new()
        .args(["resume", "--decision", "approve"])
        .stderr(&format!(
            "error: no current task in [PROJECT]/docs/orchestrator\n{NO_TASK_HINT}"
        ))
        .status(4)
        .run();
}

#[test]
fn resume_without_a_gate() {
    with_task()
        .test()
        .args(["resume", "--decision", "approve"])
        .stderr(
            "error: nothing to resume: task `add-login` is running, \
             not paused or waiting at a gate\n  \
             hint: RESUME answers a PAUSE or a SET_GATE; see `baton task summary`\n",
        )
        .status(3)
        .run();
}

#[test]
fn task_init_of_an_empty_name() {
    Test::new()
        .args(["task", "init", ""])
        .stderr("error: task name `` has no letters or digits to make a slug from\n")
        .status(2)
        .run();
}

#[test]
fn task_use_of_a_missing_task() {
    with_task()
        .test()
        .args(["task", "use", "nope"])
        .stderr(
            "error: no task `nope` in [PROJECT]/docs/orchestrator/context/tasks\n  \
             hint: list the tasks with `baton task list`, or create it with `baton task init`\n",
        )
        .status(4)
        .run();
}

#[test]
fn run_orchestrate_of_a_missing_task() {
    Test::new()
        .args(["run", "orchestrate", "no-such-task", "--agent", "sim"])
        .stderr(
            "error: no task `no-such-task`\n  \
             hint: create it: baton task init \"no-such-task\" --workflow orchestrate \
             (list: baton task list)\n",
        )
        .status(4)
        .run();
}

#[test]
fn an_unknown_agent() {
    let p = with_task();
    p.test()
        .args(["run", "orchestrate", "add-login", "--agent", "gpt"])
        .stderr(UNKNOWN_AGENT)
        .status(2)
        .run();
    p.test()
        .args(["queue", "add", "q", "BMNR"])
        .stdout_contains("queue q: added BMNR")
        .run();
    p.test()
        .args(["run", "verify", "--queue", "q", "--agent", "gpt"])
        .stderr(UNKNOWN_AGENT)
        .status(2)
        .run();
    assert!(!p.path().join(".baton/runs").exists(), "no run was created");
}

#[test]
fn resume_of_a_missing_run() {
    Test::new()
        .args(["run", "--resume", "20260101T000000-abcdef"])
        .stderr(
            "error: no run 20260101T000000-abcdef in [PROJECT]/.baton/runs\n  \
             hint: list the runs with `baton status`\n",
        )
        .status(4)
        .run();
}

#[test]
fn an_epic_that_does_not_exist() {
    Test::new()
        .args(EPIC_SIM)
        .stderr(
            "error: epic 1 not found: no BMAD epics or stories in this project\n  \
             hint: stories are looked for under docs/stories, docs/sprint-artifacts and \
             _bmad-output/implementation-artifacts (and the folders _bmad/bmm/config.yaml or \
             .bmad-core/core-config.yaml name)\n",
        )
        .status(4)
        .run();
}

#[test]
fn an_epic_on_a_protected_branch() {
    let p = Proj::new();
    baton::cli::demo_project(p.path()).unwrap();
    for args in [
        &["symbolic-ref", "HEAD", "refs/heads/main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t.invalid",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    ] {
        let st = std::process::Command::new("git")
            .args(args)
            .current_dir(p.path())
            .status()
            .unwrap();
        assert!(st.success(), "git {args:?}");
    }
    // In place (a run in its own worktree may start there: it never moves `main`).
    p.test()
        .args(EPIC_SIM)
        .arg("--in-place")
        .stderr(
            "error: refusing to commit on the protected branch `main`\n  \
             hint: work on a branch (git switch -c epic-1), pass --no-commit, \
             or set [run] protected_branches in baton.toml\n",
        )
        .status(3)
        .run();
    assert!(!p.path().join(".baton/runs").exists(), "no run was created");
}

#[test]
fn a_queue_item_given_twice() {
    Test::new()
        .args(["queue", "add", "q", "BMNR", "bmnr"])
        .stderr("error: item `bmnr` is given twice\n")
        .status(2)
        .run();
}

#[test]
fn an_unknown_need() {
    with_task()
        .test()
        .args(["retrieve", "--needs", "everything", "--for", "spec"])
        .stderr(
            "error: unknown need `everything`\n  \
             hint: needs takes: memory, architect-output, spec, spec-signatures, \
             investigation-summary, audit-feedback, implementations, manifest, none\n",
        )
        .status(2)
        .run();
}

#[test]
fn an_unknown_subcommand_and_a_bad_value() {
    Test::new()
        .args(["frobnicate"])
        .stderr(
            "error: unrecognized subcommand 'frobnicate'\n\n\
             Usage: baton [OPTIONS] <COMMAND>\n\n\
             For more information, try '--help'.\n",
        )
        .status(2)
        .run();
    with_task()
        .test()
        .args(["metrics", "--format", "xml"])
        .stderr(
            "error: invalid value 'xml' for '--format <FORMAT>'\n  \
             [possible values: summary, detailed, json]\n\n\
             For more information, try '--help'.\n",
        )
        .status(2)
        .run();
}

#[test]
fn an_unknown_workflow() {
    Test::new()
        .args(["workflow", "show", "nope"])
        .stderr_regex(
            r"^error: no workflow `nope`\n  hint: built-in workflows: .*; or add \[PROJECT\]/\.baton/workflows/nope\.toml\n$",
        )
        .status(4)
        .run();
}

#[test]
fn an_unknown_command_of_the_command_language() {
    // The command language answers on stdout, in its own format; the exit code says bad input.
    with_task()
        .test()
        .args(["exec", "FROB x: y"])
        .stdout(
            "STATUS: error\nTASK: -\nDATA: line 1: `FROB` is not a command (next: commands: \
             INIT, START_PHASE, END_PHASE, BEGIN_PHASE, COMPLETE_PHASE, PAUSE, SET_GATE, RESUME, \
             STORE, RETRIEVE, METRICS, LIST, SUMMARY, QUERY, HISTORY)\n",
        )
        .status(2)
        .run();
}

const SPEC: &str = "# Spec\n\n## API client\n\ntext\n\n## API server\n\ntext\n";

#[test]
fn an_ambiguous_section_names_the_file_and_the_candidates() {
    Test::new()
        .write("spec.md", SPEC)
        .args(["extract", "spec.md", "--section", "API"])
        .stderr(
            "error: spec.md: section \"API\" is ambiguous; candidates:\n  \
             line 3: Spec > API client\n  line 7: Spec > API server\n  \
             hint: name it by its path, e.g. --section \"Parent > Child\", or use the exact title\n",
        )
        .status(2)
        .run();
}

#[test]
fn a_missing_section_names_the_file_and_lists_the_headings() {
    Test::new()
        .write("spec.md", SPEC)
        .args(["extract", "spec.md", "--section", "Deployment", "--json"])
        .stderr(
            "{\"error\":{\"kind\":\"not_found\",\"message\":\"spec.md: no section \\\"Deployment\\\"; \
             the document's headings are:\\n  # Spec (line 1)\\n    ## API client (line 3)\\n    \
             ## API server (line 7)\",\"hint\":\"pick one of the headings above, or see them all with \
             --outline\"}}\n",
        )
        .status(4)
        .run();
}

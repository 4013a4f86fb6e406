//! `baton discover` and `baton plan`: the dialogue in a pseudo-terminal with a scripted
//! interactive agent (tests/fixtures/agents/interactive/fake-claude, a python3 script that asks
//! two questions, logs Claude Code-style usage under $HOME and writes the specs), then the plan
//! with the simulated agent, then an orchestrate run from the plan — and what reaches which
//! prompt.

use std::path::{Path, PathBuf};
use std::process::Command;

use rexpect::process::WaitStatus;
use rexpect::session::PtySession;

use crate::util::{Proj, Test, bin, fixture};

const SLUG: &str = "add-login-with-github";

/// A project whose agent `fake` is the scripted interactive CLI (a claude, for its transcript).
fn project() -> Proj {
    let p = Proj::new();
    let fake = fixture("agents/interactive/fake-claude");
    p.write(
        "baton.toml",
        &format!(
            "[agents.fake]\nkind = \"claude\"\nprogram = \"{}\"\n\n[agents.gone]\nkind = \"claude\"\nprogram = \"/nonexistent/claude\"\n",
            fake.display()
        ),
    );
    p
}

/// `baton ARGS` in a pseudo-terminal of the project, with `home` as HOME.
fn pty(p: &Proj, home: &Path, args: &[&str], env: &[(&str, &str)]) -> PtySession {
    let mut c = Command::new(bin());
    c.args(args)
        .current_dir(p.path())
        .env("HOME", home)
        .env("TERM", "xterm-256color")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("BATON_AGENT_SIM");
    for (k, v) in env {
        c.env(k, v);
    }
    rexpect::session::spawn_command(c, Some(20_000)).unwrap()
}

/// `baton discover "Add login"` with the fake agent in a pseudo-terminal, at its first
/// question.
fn at_first_question(p: &Proj, home: &Path, env: &[(&str, &str)]) -> PtySession {
    let mut s = pty(p, home, &["discover", "Add login", "--agent", "fake"], env);
    s.exp_string("Q1: What problem should this solve?").unwrap();
    s
}

/// Store the project's file `file` as task add-login's discovery spec `id`.
fn store_spec(p: &Proj, id: &str, file: &str) {
    p.ok(&[
        "store",
        "discovery",
        "--task-id",
        id,
        "--file",
        file,
        "--task",
        "add-login",
    ]);
}

/// Task add-login with both discovery specs stored: ready for `baton plan`.
fn discovered() -> Proj {
    let p = project();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    p.write("req.md", "# R\n\n## Problem\nslow\n");
    p.write("td.md", "# T\n\n## Components\none service\n");
    store_spec(&p, "REQUIREMENTS", "req.md");
    store_spec(&p, "TECHNICAL_DESIGN", "td.md");
    p
}

fn exit_code(s: &PtySession) -> i32 {
    match s.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => code,
        other => panic!("baton did not exit: {other:?}"),
    }
}

/// The whole dialogue: two questions answered; the session's output up to baton's last line.
fn dialogue(p: &Proj, home: &Path, target: &str, env: &[(&str, &str)]) -> (String, i32) {
    let mut s = pty(p, home, &["discover", target, "--agent", "fake"], env);
    s.exp_string("Q1: What problem should this solve?").unwrap();
    s.send_line("DIALOGUE-ANSWER-ONE logins are slow").unwrap();
    s.exp_string("Q2: Who will use it?").unwrap();
    s.send_line("DIALOGUE-ANSWER-TWO the support team").unwrap();
    let rest = s.exp_eof().unwrap();
    (rest, exit_code(&s))
}

/// Every prompt saved under the project's runs.
fn saved_prompts(p: &Proj) -> Vec<(PathBuf, String)> {
    let mut out = vec![];
    let runs = p.path().join(".baton/runs");
    for run in std::fs::read_dir(runs).unwrap().flatten() {
        let Ok(rd) = std::fs::read_dir(run.path().join("prompts")) else {
            continue;
        };
        for f in rd.flatten() {
            out.push((f.path(), std::fs::read_to_string(f.path()).unwrap()));
        }
    }
    out.sort();
    out
}

#[test]
fn discovery_then_plan_then_orchestrate_carry_the_specs_and_never_the_dialogue() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    let (rest, code) = dialogue(&p, home.path(), "Add login with GitHub", &[]);
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains(&format!(
            "discovery of task {SLUG} recorded: a dialogue of 3000 tokens\r\n  specs stored: discovery/REQUIREMENTS.md, discovery/TECHNICAL_DESIGN.md\r\n  next: baton plan {SLUG}"
        )),
        "{rest}"
    );
    // The specs are the task's artifacts; the phase is done; its size is in the history.
    let task = p.task_dir(SLUG);
    let req = std::fs::read_to_string(task.join("discovery/REQUIREMENTS.md")).unwrap();
    assert!(
        req.contains("## Problem\nSPEC-TEXT Problem of REQUIREMENTS.md"),
        "{req}"
    );
    assert_eq!(
        std::fs::read_to_string(p.path().join(format!("docs/specs/{SLUG}/REQUIREMENTS.md")))
            .unwrap(),
        req
    );
    let m = p.manifest(SLUG);
    let done: Vec<(&str, &str)> = m["completed_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["phase"].as_str().unwrap(), c["status"].as_str().unwrap()))
        .collect();
    assert_eq!(done, [("discovery", "success")]);
    let history = std::fs::read_to_string(p.store().join("context/history.md")).unwrap();
    assert!(
        history.contains("discovery: dialogue of 3000 tokens (budget 20000); specs stored: discovery/REQUIREMENTS.md, discovery/TECHNICAL_DESIGN.md"),
        "{history}"
    );

    let planned = p.ok(&["plan", SLUG, "--agent", "sim"]);
    assert!(
        planned.contains(&format!(
            "task {SLUG} planned: 2 tasks in docs/orchestrator/context/tasks/{SLUG}/spec.md"
        )),
        "{planned}"
    );
    assert!(
        planned.contains(&format!("next: baton run orchestrate {SLUG} --from plan")),
        "{planned}"
    );
    // `run --resume` of the plan's run goes to `baton plan`; finished, it is not run again.
    let plan_run = std::fs::read_dir(p.path().join(".baton/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name()
        .into_string()
        .unwrap();
    let o = p.run(&["run", "--resume", &plan_run], None);
    crate::util::assert_exit(&o, 3);
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        format!(
            "error: run {plan_run} already finished\n  hint: plan the task again: baton plan {SLUG}\n"
        )
    );
    let o = p.run(
        &[
            "run",
            "orchestrate",
            SLUG,
            "--from",
            "plan",
            "--agent",
            "sim",
            "--no-wait",
        ],
        None,
    );
    let stdout = String::from_utf8_lossy(&o.stdout);
    crate::util::assert_exit(&o, 0);
    assert!(
        stdout.contains(&format!(
            "task {SLUG}: waiting at the final gate (--no-wait)"
        )),
        "{stdout}"
    );

    let prompts = saved_prompts(&p);
    let names: Vec<String> = prompts
        .iter()
        .map(|(f, _)| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert!(names.contains(&"plan-1.md".to_string()), "{names:?}");
    assert!(
        names.contains(&"implementation-1-1.md".to_string()),
        "{names:?}"
    );
    // From the plan: no architect, no spec phase ran.
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("architect") || n.starts_with("spec")),
        "{names:?}"
    );
    for (f, text) in &prompts {
        for dialogue in [
            "DIALOGUE-ANSWER-ONE",
            "DIALOGUE-ANSWER-TWO",
            "What problem should this solve",
            "Ask one question at a time",
        ] {
            assert!(
                !text.contains(dialogue),
                "{} carries the dialogue ({dialogue})",
                f.display()
            );
        }
    }
    let plan = &prompts
        .iter()
        .find(|(f, _)| f.ends_with("plan-1.md"))
        .unwrap()
        .1;
    for spec in [
        "SPEC-TEXT Problem of REQUIREMENTS.md",
        "SPEC-TEXT Acceptance Criteria of REQUIREMENTS.md",
        "SPEC-TEXT Data Model of TECHNICAL_DESIGN.md",
    ] {
        assert!(plan.contains(spec), "the plan prompt lacks {spec}:\n{plan}");
    }
    let m = p.manifest(SLUG);
    let impls = m["completed_phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["phase"] == "implementation" && c["status"] == "success")
        .count();
    assert_eq!(impls, 2, "{m}");
}

#[test]
fn the_budget_warning_fires_while_the_dialogue_runs() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    let mut s = pty(
        &p,
        home.path(),
        &["discover", "Add login with GitHub", "--agent", "fake"],
        &[("FAKE_USAGE", "25000")],
    );
    s.exp_string("Q1: What problem should this solve?").unwrap();
    s.send_line("slow").unwrap();
    // The agent waits at its second question: the warning comes while the session runs.
    s.exp_string("Q2: Who will use it?").unwrap();
    s.exp_string("baton: the discovery dialogue is at 25000 tokens, past its budget of 20000: ask the agent to write the specs now")
        .unwrap();
    s.send_line("support").unwrap();
    let rest = s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 0, "{rest}");
    assert!(
        rest.contains("recorded: a dialogue of 25000 tokens"),
        "{rest}"
    );
    assert_eq!(
        rest.matches("past its budget").count(),
        0,
        "warned twice: {rest}"
    );
}

#[test]
fn leaving_before_the_specs_records_nothing_and_discovery_runs_again() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    // Spec files from before the session (an older draft) are not this session's work.
    for f in ["REQUIREMENTS", "TECHNICAL_DESIGN"] {
        let rel = format!("docs/specs/add-login/{f}.md");
        p.write(&rel, "# an older draft\n");
        let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(p.path().join(&rel))
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }
    let mut s = pty(
        &p,
        home.path(),
        &["discover", "add-login", "--agent", "fake"],
        &[("FAKE_QUIT", "1")],
    );
    s.exp_string("Q1: What problem should this solve?").unwrap();
    s.send_line("never mind").unwrap();
    let rest = s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 1, "{rest}");
    assert!(
        rest.contains("discovery of task add-login not recorded: the session ended before docs/specs/add-login/REQUIREMENTS.md, docs/specs/add-login/TECHNICAL_DESIGN.md were written\r\n  again: baton discover add-login"),
        "{rest}"
    );
    assert_eq!(
        p.manifest("add-login")["completed_phases"],
        serde_json::json!([])
    );
    assert!(!p.task_dir("add-login").join("discovery").exists());
    Test::with(p)
        .args(["plan", "add-login", "--agent", "sim"])
        .stderr("error: task `add-login` has no specs from discovery to plan from\n  hint: run `baton discover add-login` first (or store one: baton store discovery --task-id REQUIREMENTS --file …)\n")
        .status(3)
        .run();
}

/// A recording a kill cut short leaves discovery running: the next session finishes it, with
/// one discovery phase in the task's record.
#[test]
fn a_recording_cut_short_is_finished_by_the_next_session() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    p.ok(&["phase", "start", "discovery", "--task", "add-login"]);
    let (rest, code) = dialogue(&p, home.path(), "add-login", &[]);
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains("discovery of task add-login recorded"),
        "{rest}"
    );
    let m = p.manifest("add-login");
    assert_eq!(m["running_phases"], serde_json::json!([]), "{m}");
    let done: Vec<&str> = m["completed_phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["phase"].as_str().unwrap())
        .collect();
    assert_eq!(done, ["discovery"]);
}

#[test]
fn a_second_session_after_leaving_records_the_phase() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    let mut s = pty(
        &p,
        home.path(),
        &["discover", "add-login", "--agent", "fake"],
        &[("FAKE_QUIT", "1")],
    );
    s.exp_string("Q1").unwrap();
    s.send_line("later").unwrap();
    s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 1);
    let (rest, code) = dialogue(&p, home.path(), "add-login", &[]);
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains("discovery of task add-login recorded"),
        "{rest}"
    );
    assert!(
        p.task_dir("add-login")
            .join("discovery/TECHNICAL_DESIGN.md")
            .is_file()
    );
}

#[test]
fn discovery_refuses_to_run_without_a_terminal_and_changes_nothing() {
    let p = project();
    let before = p.snapshot();
    let p = Test::with(p)
        .args(["discover", "Add login", "--agent", "fake"])
        .stderr("error: discovery is a dialogue with a person: it needs a terminal, and stdin or stdout is not one\n  hint: run `baton discover add-login` in a terminal (`--dry-run` shows its prompt anywhere); the headless phase is `baton plan`\n")
        .status(2)
        .run()
        .proj();
    assert_eq!(p.snapshot(), before);
}

/// A single word names a task: a typo is not taken for an idea. An idea whose first words
/// name a task that exists is not folded into it.
#[test]
fn discovery_of_an_unknown_task_or_a_clashing_idea_is_refused() {
    let p = project();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    p.ok(&[
        "task",
        "init",
        "Sign in with GitHub for teams",
        "--workflow",
        "orchestrate",
    ]);
    let before = p.snapshot();
    let p = Test::with(p)
        .args(["discover", "add-logn", "--agent", "fake"])
        .stderr("error: no task `add-logn` (did you mean `add-login`?)\n  hint: see the tasks with `baton task list`; an idea is a sentence: baton discover \"Let people sign in with GitHub\"\n")
        .status(4)
        .run()
        .proj();
    let p = Test::with(p)
        .args(["discover", "Sign in with GitHub for teams and orgs", "--agent", "fake"])
        .stderr("error: the idea would be task `sign-in-with-github-for-teams`, which exists already\n  hint: continue that task: baton discover sign-in-with-github-for-teams; or word the idea's first words differently\n")
        .status(3)
        .run()
        .proj();
    assert_eq!(p.snapshot(), before);
}

#[test]
fn discovery_bad_input() {
    let p = project();
    let p = Test::with(p)
        .args(["discover", "Add login", "--agent", "fake", "--spec-dir", "../elsewhere"])
        .stderr(
            "error: spec directory `../elsewhere` is outside the project ([PROJECT])\n  hint: give a directory relative to the project, e.g. --spec-dir docs/specs/{task}\n",
        )
        .status(2)
        .run()
        .proj();
    let p = Test::with(p)
        .args(["discover", "Add login", "--agent", "sim"])
        .stderr("error: discovery is a dialogue with a person: the simulated agent cannot hold it (agent `sim`)\n  hint: pick an interactive agent CLI: --agent claude|codex|gemini or an [agents.<name>] of baton.toml\n")
        .status(2)
        .run()
        .proj();
    let p = Test::with(p)
        .args(["discover", "Add login", "--agent", "gone"])
        .stderr("error: agent CLI `/nonexistent/claude` is not an executable file\n  hint: install it (npm install -g @anthropic-ai/claude-code), or set `program` in baton.toml's [agents] table; `--agent sim` runs without any CLI\n")
        .status(7)
        .run()
        .proj();
    assert!(!p.task_dir("add-login").exists());
    Test::with(p)
        .args(["run", "orchestrate", "add-login", "--from", "plan", "--agent", "sim"])
        .stderr("error: no task `add-login`\n  hint: create it: baton task init \"add-login\" --workflow orchestrate (list: baton task list)\n")
        .status(4)
        .run();
}

#[test]
fn orchestrate_from_plan_needs_a_plan() {
    let p = project();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    Test::with(p)
        .args(["run", "orchestrate", "add-login", "--from", "plan", "--agent", "sim"])
        .stderr("error: task `add-login` has no plan to start from\n  hint: plan it first: baton discover add-login, then baton plan add-login\n")
        .status(3)
        .run();
}

/// A plan made before the latest discovery would implement specs that have since changed.
#[test]
fn orchestrate_from_plan_needs_a_plan_newer_than_the_specs() {
    let p = project();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    for phase in ["discovery", "plan", "discovery"] {
        p.ok(&["phase", "start", phase, "--task", "add-login"]);
        p.ok(&[
            "phase",
            "end",
            phase,
            "--status",
            "success",
            "--task",
            "add-login",
        ]);
    }
    let before = p.snapshot();
    let p = Test::with(p)
        .args(["run", "orchestrate", "add-login", "--from", "plan", "--agent", "sim"])
        .stderr("error: the plan of task `add-login` is older than its latest discovery\n  hint: plan it again from the new specs: baton plan add-login\n")
        .status(3)
        .run()
        .proj();
    assert_eq!(p.snapshot(), before);
}

#[test]
fn dry_runs_show_the_prompts_and_change_nothing() {
    let p = project();
    let ran = Test::with(p)
        .args(["discover", "Add login", "--agent", "fake", "--dry-run"])
        .any_stdout()
        .run();
    let out = ran.stdout.clone();
    let p = ran.proj();
    assert!(
        out.starts_with("discovery of task add-login (a new task) (dry run: nothing started)\n"),
        "{out}"
    );
    assert!(
        out.contains("--- prompt ---\nYou run the discovery of task `add-login`"),
        "{out}"
    );
    assert!(
        out.contains("   - docs/specs/add-login/REQUIREMENTS.md: ## Problem, ## Users, ## Requirements, ## Out of Scope, ## Acceptance Criteria\n"),
        "{out}"
    );
    assert!(out.contains("  budget: 20000 tokens\n"), "{out}");
    assert!(!p.task_dir("add-login").exists());

    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    p.write(
        "req.md",
        "# R\n\n## Problem\nPLANNED-PROBLEM\n\n## Chatter\nNOT-EXTRACTED\n",
    );
    store_spec(&p, "REQUIREMENTS", "req.md");
    // One of the two specs: no plan would see what the other says.
    let before = p.snapshot();
    let p = Test::with(p)
        .args(["plan", "add-login", "--agent", "sim", "--dry-run"])
        .stderr("error: task `add-login` lacks specs to plan from: TECHNICAL_DESIGN.md not stored\n  hint: run `baton discover add-login` again, or store it: baton store discovery --task add-login --task-id TECHNICAL_DESIGN --file …\n")
        .status(3)
        .run()
        .proj();
    assert_eq!(p.snapshot(), before);
    p.write("td.md", "# T\n\n## Components\nPLANNED-DESIGN\n");
    store_spec(&p, "TECHNICAL_DESIGN", "td.md");
    let before = p.snapshot();
    let out = p.ok(&["plan", "add-login", "--agent", "sim", "--dry-run"]);
    assert!(
        out.starts_with("PLAN PHASE: task add-login (dry run: nothing sent)\n  agent: sim\n"),
        "{out}"
    );
    assert!(out.contains("## Problem\nPLANNED-PROBLEM"), "{out}");
    assert!(out.contains("## Components\nPLANNED-DESIGN"), "{out}");
    assert!(!out.contains("NOT-EXTRACTED"), "{out}");
    assert_eq!(p.snapshot(), before);
}

#[test]
fn a_plan_without_tasks_pauses_the_task() {
    let p = discovered();
    p.write(".baton/sim.toml", "[task]\nplan = [\"tasks=0\"]\n");
    let o = p.run(&["plan", "add-login", "--agent", "sim"], None);
    let stdout = String::from_utf8_lossy(&o.stdout);
    crate::util::assert_exit(&o, 1);
    assert!(stdout.contains("task add-login: plan paused: "), "{stdout}");
    assert!(
        stdout.contains("has no `### Task N: <title>` sections"),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            "continue: baton resume --task add-login --decision retry, then baton plan add-login"
        ),
        "{stdout}"
    );
    assert_eq!(p.manifest("add-login")["status"], "paused");
}

#[test]
fn a_workflow_with_discovery_in_front_waits_for_the_dialogue() {
    let p = project();
    p.ok(&["task", "init", "Add login", "--workflow", "orchestrate"]);
    let builtin = p.ok(&["workflow", "show", "orchestrate"]);
    let own = builtin.replace(
        "name = \"architect\"\nrole",
        "name = \"architect\"\nafter = [\"discovery\"]\nrole",
    ) + "\n[roles.discovery]\ntier = \"strong\"\n\n[[phase]]\nname = \"discovery\"\nrole = \"discovery\"\ntemplate = \"discover\"\nsignal = \"DISCOVERY COMPLETE\"\n\n[[phase.specs]]\nfile = \"REQUIREMENTS.md\"\nsections = [\"Problem\"]\n";
    p.write(".baton/workflows/orchestrate.toml", &own);
    let o = p.run(&["run", "orchestrate", "add-login", "--agent", "sim"], None);
    crate::util::assert_exit(&o, 3);
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("error: task `add-login` has no discovery yet: it is a dialogue with a person, not run headless\n  hint: run `baton discover add-login` in a terminal, then this command again (the run continues)\n"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let dry = p.ok(&[
        "discover",
        "add-login",
        "--workflow",
        "orchestrate",
        "--agent",
        "fake",
        "--dry-run",
    ]);
    assert!(
        dry.contains("   - docs/specs/add-login/REQUIREMENTS.md: ## Problem\n"),
        "{dry}"
    );
}

/// A prompt template that starts with `-` (here a front matter) reaches the CLI as its first
/// message, not as an option (the fake, like claude, refuses an unknown option).
#[test]
fn a_template_starting_with_a_dash_is_the_prompt_not_an_option() {
    let p = project();
    let builtin = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("crates/baton-engine/src/workflow/builtin/prompts/discover.md.j2"),
    )
    .unwrap();
    p.write(
        ".baton/prompts/discover.md.j2",
        &format!("---\nphase: discovery\n---\n{builtin}"),
    );
    let home = tempfile::tempdir().unwrap();
    let (rest, code) = dialogue(&p, home.path(), "Add login", &[]);
    assert_eq!(code, 0, "{rest}");
    assert!(
        rest.contains("discovery of task add-login recorded"),
        "{rest}"
    );
}

/// Ctrl-C and Ctrl-\ during the dialogue are the person's to give the agent, however often
/// pressed: baton neither ends nor stops waiting, and records the phase when the agent ends.
#[test]
fn ctrl_c_during_the_dialogue_does_not_end_baton() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    let mut s = at_first_question(&p, home.path(), &[("FAKE_OWN_CTRL_C", "1")]);
    for _ in 0..3 {
        s.send_control('c').unwrap();
        s.exp_string("fake-claude: ^C ignored").unwrap();
    }
    for _ in 0..2 {
        s.send_control('\\').unwrap();
        s.exp_string("fake-claude: ^\\ ignored").unwrap();
    }
    s.send_line("logins are slow").unwrap();
    s.exp_string("Q2: Who will use it?").unwrap();
    s.send_line("the support team").unwrap();
    let rest = s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 0, "{rest}");
    assert!(
        rest.contains("discovery of task add-login recorded"),
        "{rest}"
    );
}

/// `kill` of baton during the dialogue ends the agent too (it is passed on), and baton says
/// what was not recorded instead of waiting on, or leaving the agent behind.
#[test]
fn a_kill_of_baton_during_the_dialogue_is_passed_on_to_the_agent() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    let mut s = at_first_question(&p, home.path(), &[]);
    s.process_mut()
        .signal(rexpect::process::Signal::SIGTERM)
        .unwrap();
    let rest = s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 1, "{rest}");
    assert!(
        rest.contains("discovery of task add-login not recorded: the session ended before"),
        "{rest}"
    );
}

/// An agent that does not end on the SIGTERM passed on to it is killed a few seconds later:
/// a `kill` of baton ends both.
#[test]
fn an_agent_that_ignores_the_kill_passed_on_is_killed_after_a_grace() {
    let p = project();
    let home = tempfile::tempdir().unwrap();
    let mut s = at_first_question(&p, home.path(), &[("FAKE_IGNORE_TERM", "1")]);
    let t = std::time::Instant::now();
    s.process_mut()
        .signal(rexpect::process::Signal::SIGTERM)
        .unwrap();
    s.exp_string("fake-claude: SIGTERM ignored").unwrap();
    let rest = s.exp_eof().unwrap();
    assert_eq!(exit_code(&s), 1, "{rest}");
    assert!(
        t.elapsed() >= std::time::Duration::from_secs(4),
        "{:?}",
        t.elapsed()
    );
    assert!(
        rest.contains("discovery of task add-login not recorded"),
        "{rest}"
    );
}

#[test]
fn a_second_plan_of_the_task_is_refused_while_the_first_runs() {
    let p = discovered();
    // The plan phase's agent takes 5 s: long enough for a second `baton plan` to try.
    p.write(".baton/sim.toml", "[task]\nplan = [\"sleep=5000\"]\n");
    let args = ["plan", "add-login", "--agent", "sim"];
    let first = p
        .cmd(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Until the first has started its phase (its prompt is saved).
    let runs = p.path().join(".baton/runs");
    let started = std::time::Instant::now();
    let prompt_saved = || {
        std::fs::read_dir(&runs)
            .into_iter()
            .flatten()
            .flatten()
            .any(|r| {
                r.path()
                    .join("prompts")
                    .read_dir()
                    .is_ok_and(|mut d| d.next().is_some())
            })
    };
    while !prompt_saved() {
        assert!(
            started.elapsed().as_secs() < 20,
            "the first plan never started its phase"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = p.run(&args, None);
    let stderr = String::from_utf8_lossy(&second.stderr);
    crate::util::assert_exit(&second, 3);
    assert!(stderr.contains("is being run by another baton"), "{stderr}");
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    // One plan phase ran: the second started none.
    let run = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let events = std::fs::read_to_string(run.join("events.jsonl")).unwrap();
    let finished = events
        .lines()
        .filter(|l| l.contains("\"event\":\"phase_finished\""))
        .count();
    assert_eq!(finished, 1, "{events}");
}

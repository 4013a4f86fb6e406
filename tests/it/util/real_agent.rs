//! The three real agent CLIs as a user has them, answered by the model double: each one's
//! setup (its user settings, the API pointed at the double), and the checks every CLI must pass
//! the same way (`tests/it/real_claude.rs`, `real_codex.rs`, `real_gemini.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use baton_context::tokens::Encoding;
use serde_json::{Value, json};

use super::model_double::{Api, ModelDouble, Reply, Request, Script};
use super::scripted_agent::{
    Dialect, epic_agent, failing_first, finished_phases, one_story_project, project_tests,
    story_commits,
};
use super::{agent_cli, bin, demo_repo, git, path_with, text};

/// One agent CLI: its name (the `--agent` of baton and the npm executable), the API it calls,
/// and how its tools spell the scripted agent's actions.
pub struct Agent {
    pub name: &'static str,
    pub api: Api,
    pub dialect: Dialect,
    /// Logged in as a subscriber (claude: `CLAUDE_CODE_OAUTH_TOKEN`), not with an API key:
    /// the CLI then reads its plan's limits from the API's headers.
    pub subscriber: bool,
}

pub const CLAUDE: Agent = Agent {
    name: "claude",
    api: Api::Anthropic,
    dialect: Dialect::Claude,
    subscriber: false,
};

/// claude logged in with a subscription (Pro, Max) rather than an API key.
pub const CLAUDE_SUBSCRIBER: Agent = Agent {
    subscriber: true,
    ..CLAUDE
};

pub const CODEX: Agent = Agent {
    name: "codex",
    api: Api::OpenAi,
    dialect: Dialect::Codex,
    subscriber: false,
};

pub const GEMINI: Agent = Agent {
    name: "gemini",
    api: Api::Gemini,
    dialect: Dialect::Gemini,
    subscriber: false,
};

impl Agent {
    /// The CLI's executable, or `None` after printing why the test skips.
    pub fn cli(&self) -> Option<PathBuf> {
        agent_cli(self.name)
    }

    pub fn double(&self, script: Script) -> ModelDouble {
        match self.api {
            Api::Anthropic => ModelDouble::anthropic(script),
            Api::Gemini => ModelDouble::gemini(script),
            Api::OpenAi => ModelDouble::openai(script),
        }
    }

    /// A double whose address nothing listens on: every connection is refused.
    pub fn gone(&self) -> ModelDouble {
        let mut gone = self.double(Box::new(|_| Reply::Text("never".into())));
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        gone.url = format!("http://{}", free.local_addr().unwrap());
        gone
    }

    /// The user's environment for this CLI, whatever `c` runs (the CLI itself or baton): a HOME
    /// of its own with the user settings a logged-in user has, the API at `double`, baton and
    /// the CLI on PATH. Nothing of baton's loosened.
    pub fn env(
        &self,
        mut c: Command,
        cli: &Path,
        dir: &Path,
        home: &Path,
        double: &ModelDouble,
    ) -> Command {
        c.current_dir(dir)
            .env("HOME", home)
            .env(
                "PATH",
                path_with(&[bin().parent().unwrap(), cli.parent().unwrap()]),
            )
            .env_remove("BATON_RUN_DIR")
            .env_remove("BATON_RUN_PHASE")
            // The CLIs' folders under this HOME, wherever the machine's user moved theirs.
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("GEMINI_CLI_HOME");
        match self.api {
            Api::Anthropic => {
                c.env("ANTHROPIC_BASE_URL", &double.url)
                    .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                    .env_remove("CLAUDECODE");
                if self.subscriber {
                    c.env("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-double")
                        .env_remove("ANTHROPIC_API_KEY");
                } else {
                    c.env("ANTHROPIC_API_KEY", "sk-ant-double")
                        .env_remove("CLAUDE_CODE_OAUTH_TOKEN");
                }
            }
            Api::Gemini => {
                // Logged in with an API key, in the user's settings (kept: `init --global`'s).
                std::fs::create_dir_all(home.join(".gemini")).unwrap();
                let file = home.join(".gemini/settings.json");
                let mut user: serde_json::Value = std::fs::read(&file)
                    .map(|b| serde_json::from_slice(&b).unwrap())
                    .unwrap_or_else(|_| json!({}));
                user["security"]["auth"]["selectedType"] = json!("gemini-api-key");
                std::fs::write(&file, user.to_string()).unwrap();
                c.env("GOOGLE_GEMINI_BASE_URL", &double.url)
                    .env("GEMINI_API_KEY", "gemini-double-key")
                    .env_remove("GEMINI_CLI_TRUST_WORKSPACE");
            }
            Api::OpenAi => {
                // A provider pointed at the double, and a model codex knows (with an unknown
                // one codex offers the model no tools).
                let codex_home = home.join(".codex");
                std::fs::create_dir_all(&codex_home).unwrap();
                let config = format!(
                    "model = \"gpt-5-codex\"\nmodel_provider = \"double\"\n\n\
                     [model_providers.double]\nname = \"double\"\nbase_url = \"{}/v1\"\n\
                     env_key = \"BATON_DOUBLE_KEY\"\nwire_api = \"responses\"\n",
                    double.url
                );
                std::fs::write(codex_home.join("config.toml"), config).unwrap();
                c.env("CODEX_HOME", &codex_home)
                    .env("BATON_DOUBLE_KEY", "sk-double")
                    .env_remove("OPENAI_API_KEY");
            }
        }
        c
    }

    /// `baton run ARGS` in `dir` against `double`; its output and how long it took. baton is
    /// started by its path, with nothing of it on PATH: the agents must still reach it.
    pub fn baton_run(&self, dir: &Path, double: &ModelDouble, args: &[&str]) -> (Output, Duration) {
        let cli = self.cli().expect("checked by the caller");
        let home = dir.parent().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let started = Instant::now();
        let out = self
            .env(Command::new(bin()), &cli, dir, &home, double)
            .env("PATH", path_with(&[cli.parent().unwrap()]))
            .arg("run")
            .args(args)
            .output()
            .unwrap();
        (out, started.elapsed())
    }

    /// `baton run epic-execute 1 --agent <this>`.
    pub fn run_epic(&self, dir: &Path, double: &ModelDouble) -> (Output, Duration) {
        self.baton_run(dir, double, &["epic-execute", "1", "--agent", self.name])
    }
}

/// A model that makes one tool call, then ends its turn (a request without tools, a CLI's own
/// small call, gets a text).
pub fn one_call(name: &str, input: Value) -> Script {
    let name = name.to_string();
    Box::new(move |r: &Request| {
        if r.tools().is_empty() || r.turns() > 0 {
            Reply::Text("DONE".into())
        } else {
            Reply::tool(&name, input.clone())
        }
    })
}

/// The last tool result the model was shown.
pub fn last_tool_result(double: &ModelDouble) -> String {
    let reqs = double.requests();
    let last = reqs.last().expect("the CLI sent requests");
    last.tool_results()
        .pop()
        .expect("a tool result was sent back")
}

/// What a masked output must be when it reaches the model: ≤ 2,000 tokens, naming the failing
/// test and a file in `dir` that holds all of `full` — exactly, for claude (its saved copy)
/// and codex (the routed command's own output); gemini adds lines of its own around it.
pub fn assert_masked(seen: &str, dir: &Path, full: &[u8]) {
    assert_masked_as(seen, dir, full, false)
}

/// [`assert_masked`]; `exact`: the file is the output, byte for byte (trailing line breaks
/// aside).
pub fn assert_masked_as(seen: &str, dir: &Path, full: &[u8], exact: bool) {
    let tokens = Encoding::O200kBase.count(seen);
    assert!(tokens <= 2_000, "{tokens} tokens shown: {seen}");
    assert!(seen.contains("tests::the_failing_one"), "{seen}");
    let re = regex::Regex::new(r#""full_output_path": "([^"]+)""#).unwrap();
    let path = re
        .captures(seen)
        .unwrap_or_else(|| panic!("no full_output_path in {seen}"))[1]
        .to_string();
    let kept = std::fs::read_to_string(dir.join(&path)).unwrap();
    let full = String::from_utf8_lossy(full);
    assert!(full.len() > 200_000);
    assert!(
        kept.contains(full.as_ref()),
        "{path} lacks part of the output"
    );
    if exact {
        assert_eq!(
            kept.trim_end_matches('\n'),
            full.trim_end_matches('\n'),
            "{path} is not the output"
        );
    }
}

/// What a red test run (`RED`, ~200 KB, exit 1) must be when it reaches the model: at most
/// 8,000 characters, naming the failing test and its assertion message, and the scratch file.
pub fn assert_red_reached(seen: &str) {
    let chars = seen.chars().count();
    assert!(chars <= 8_000, "{chars} characters shown: {seen}");
    assert!(seen.contains("tests/test_calc.py::test_answer"), "{seen}");
    assert!(seen.contains("AssertionError: assert 41 == 42"), "{seen}");
    assert!(seen.contains("full_output_path"), "{seen}");
}

/// The output of `sh gen.sh AT` in `dir`: what the scratch file must hold.
pub fn generated(dir: &Path, at: usize) -> Vec<u8> {
    Command::new("sh")
        .args(["gen.sh", &at.to_string()])
        .current_dir(dir)
        .output()
        .unwrap()
        .stdout
}

/// Under baton's defaults the agent commits every story of the demo epic: the dev's test run
/// (through `baton mask`, by the path the prompt gives) and the reviewer's diff reach the model.
/// The double, for more checks of the agent's own.
pub fn commits_every_story(a: &Agent) -> Option<ModelDouble> {
    a.cli()?;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("p");
    demo_repo(&dir, "");
    std::fs::write(dir.join("run-tests.sh"), project_tests()).unwrap();
    git(&dir, &["add", "run-tests.sh"]);
    git(&dir, &["commit", "-q", "-m", "tests"]);
    let double = a.double(epic_agent(&dir, a.dialect));
    let (out, _) = a.run_epic(&dir, &double);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 4, "{:?}", story_commits(&dir));
    for id in ["1.1", "1.2", "1.3", "1.4"] {
        let f = dir.join(format!("src/story_{}.txt", id.replace('.', "_")));
        assert!(f.is_file(), "{}", f.display());
    }
    let results: Vec<String> = double
        .requests()
        .iter()
        .flat_map(|r| r.tool_results())
        .collect();
    assert!(
        results.iter().any(|t| t.contains("400 passed")),
        "no test run reached the model: {results:#?}"
    );
    assert!(
        results.iter().any(|t| t.contains("+story 1.1")),
        "no diff reached the reviewer: {results:#?}"
    );
    assert!(dir.join("docs/uat/epic-1-uat.md").is_file());
    assert_eq!(git(&dir, &["status", "--porcelain"]), "");
    assert_context_peaks(a, &dir, &double);
    Some(double)
}

/// Every agent phase of the run recorded the context its agent really held: the largest
/// request of its session, as the API reported it (the double reports a body's size / 4), and
/// `over_budget` exactly when that passed the phase's context budget (its prompt budget plus
/// the CLI's floor). The floor baton assumes is what the CLI really sends before baton's
/// prompt (o200k tokens of the smallest request, less the prompt), within 30 %.
fn assert_context_peaks(a: &Agent, dir: &Path, double: &ModelDouble) {
    let floor = baton_agent::AgentKind::parse(a.name)
        .unwrap()
        .context_floor();
    let mut largest = 0;
    for e in finished_phases(dir) {
        let o = &e["outcome"];
        let peak = o["context_peak_tokens"]
            .as_u64()
            .unwrap_or_else(|| panic!("no context peak: {e}"));
        assert!(peak > 0, "{e}");
        let budget = o["budget"].as_u64().unwrap();
        assert_eq!(o["context_budget"].as_u64(), Some(budget + floor), "{e}");
        assert_eq!(
            o["over_budget"].as_bool().unwrap_or(false),
            peak > budget + floor,
            "{e}"
        );
        largest = largest.max(peak);
    }
    let requests = double.requests();
    let sent = requests.iter().map(|r| r.size / 4).max().unwrap();
    assert_eq!(
        largest as usize, sent,
        "the run's largest context is the largest request"
    );
    let o200k = |t: &str| Encoding::O200kBase.count(t) as u64;
    let measured = requests
        .iter()
        .filter(|r| !r.tools().is_empty())
        .map(|r| o200k(&r.body.to_string()) - o200k(&r.user_text()))
        .min()
        .unwrap();
    println!(
        "{} floor under baton run: {measured} o200k tokens (baton assumes {floor})",
        a.name
    );
    assert!(
        measured <= floor && measured * 10 >= floor * 7,
        "{}'s floor is {measured} tokens; AgentKind::context_floor says {floor}",
        a.name
    );
}

/// One story through a model whose first `first` answers are `fail`: the CLI's own retries, or
/// baton's backoff, carry it, and no attempt is spent.
pub fn recovers_from(a: &Agent, first: usize, fail: fn() -> Reply) {
    if a.cli().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = a.double(failing_first(&dir, a.dialect, first, fail));
    let (out, took) = a.run_epic(&dir, &double);
    assert!(out.status.success(), "{}", text(&out));
    assert!(took < Duration::from_secs(120), "{took:?}");
    assert!(
        double
            .requests()
            .iter()
            .all(|r| r.path.starts_with(a.api.path()))
    );
    assert_eq!(story_commits(&dir).len(), 1);
    let finished = finished_phases(&dir);
    assert!(finished.len() >= 3, "{finished:?}");
    for e in finished {
        assert_eq!(e["attempt"], 1, "{e}");
    }
}

/// A run against `double` stops with exit 7 within `limit`, saying `says`, nothing committed.
pub fn stops_the_run(a: &Agent, double: ModelDouble, says: &str, limit: Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let (out, took) = a.run_epic(&dir, &double);
    crate::util::assert_exit(&out, 7);
    assert!(text(&out).contains(says), "{}", text(&out));
    assert!(took < limit, "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
}

/// A model API that fails for good, every model call answered `fail` (a 500, or nothing
/// at all): with `[run] api_patience_secs = 20` the run pauses (exit 7) within `limit`,
/// naming the cause (`says`), with the way on; no attempt is spent, nothing committed. baton's
/// backoff is 30 s here, doubling: a backoff not bounded by the patience would pass `limit`.
/// Once the API answers again, `--resume` commits the story in its first attempt.
pub fn a_failing_api_pauses_the_run_naming_it(
    a: &Agent,
    fail: fn() -> Reply,
    says: &str,
    limit: Duration,
) {
    if a.cli().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let workflow = dir.join(".baton/workflows/epic-execute.toml");
    let def = std::fs::read_to_string(&workflow).unwrap();
    assert!(def.contains("backoff_secs = 0"), "{def}");
    std::fs::write(
        &workflow,
        def.replace("backoff_secs = 0", "backoff_secs = 30"),
    )
    .unwrap();
    std::fs::write(dir.join("baton.toml"), "[run]\napi_patience_secs = 20\n").unwrap();
    git(&dir, &["add", "baton.toml"]);
    git(&dir, &["commit", "-q", "-m", "patience"]);
    let back = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let agent = epic_agent(&dir, a.dialect);
    let gate = back.clone();
    let double = a.double(Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            // A CLI's own small calls (titles, routing) are answered: the agent's turn is not.
            Reply::Text("ok".into())
        } else if gate.load(std::sync::atomic::Ordering::SeqCst) {
            agent(r)
        } else {
            fail()
        }
    }));
    let (out, took) = a.run_epic(&dir, &double);
    let said = text(&out);
    println!("{} paused after {took:?}", a.name);
    crate::util::assert_exit(&out, 7);
    assert!(said.contains(says), "{said}");
    assert!(said.contains("baton run --resume"), "{said}");
    assert!(took < limit, "{took:?}: {said}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
    assert!(
        finished_phases(&dir).iter().all(|e| e["phase"] != "dev"),
        "no attempt of the dev phase was spent"
    );
    // The API is back: the paused run goes on, the story committed once, in attempt 1.
    back.store(true, std::sync::atomic::Ordering::SeqCst);
    let id = std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let (out, _) = a.baton_run(&dir, &double, &["--resume", &id.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1);
    let devs: Vec<Value> = finished_phases(&dir)
        .into_iter()
        .filter(|e| e["phase"] == "dev")
        .collect();
    assert_eq!(devs.len(), 1, "{devs:?}");
    assert_eq!(devs[0]["attempt"], 1, "{devs:?}");
}

/// A `baton run` whose model calls baton's MCP tool `tool` (as this CLI names it) first:
/// the tool is offered, called, and its answer reaches the model.
pub fn mcp_tool_call_round_trips_in_a_run(a: &Agent, tool: &'static str) {
    if a.cli().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let double = a.double(Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            Reply::Text("ok".into())
        } else if r.turns() == 0 {
            Reply::tool(tool, json!({"text": "hello world"}))
        } else {
            Reply::Text("IMPLEMENTATION BLOCKED: 1.1 - the double only counts tokens".into())
        }
    }));
    let _ = a.run_epic(&dir, &double);
    let requests = double.requests();
    let offered = requests
        .iter()
        .find(|r| !r.tools().is_empty())
        .map(|r| r.tools())
        .unwrap_or_default();
    assert!(offered.iter().any(|t| t == tool), "{offered:?}");
    let seen: Vec<String> = requests.iter().flat_map(|r| r.tool_results()).collect();
    assert!(
        seen.iter().any(|t| t.contains("tokens (o200k_base)")),
        "{seen:#?}"
    );
}

/// The API refusing the key stops the run within seconds.
pub fn an_auth_failure_stops_the_run(a: &Agent) {
    if a.cli().is_some() {
        let double = a.double(Box::new(|_| Reply::error(401, "invalid API key")));
        stops_the_run(a, double, "log in", Duration::from_secs(60));
    }
}

/// No answer at all is no network, not a failed story.
pub fn a_refused_connection_stops_the_run(a: &Agent) {
    if a.cli().is_some() {
        stops_the_run(a, a.gone(), "no network", Duration::from_secs(90));
    }
}

/// A 429 that outlasts baton's backoff pauses the run (exit 7, "is paused in the dev phase",
/// nothing committed, every call's log kept), and `--resume` finishes it.
pub fn pauses_on_a_rate_limit_past_the_backoff(a: &Agent) {
    if a.cli().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    // Every request is refused (an hour's retry-after) until the paused run is resumed; the
    // CLI's own retries, however many, do not get past it.
    let open = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let agent = epic_agent(&dir, a.dialect);
    let gate = open.clone();
    let double = a.double(Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            Reply::Text("ok".into())
        } else if gate.load(std::sync::atomic::Ordering::SeqCst) {
            agent(r)
        } else {
            Reply::rate_limited(3600)
        }
    }));
    let (out, _) = a.run_epic(&dir, &double);
    open.store(true, std::sync::atomic::Ordering::SeqCst);
    crate::util::assert_exit(&out, 7);
    let said = text(&out);
    assert!(said.contains("is paused in the dev phase"), "{said}");
    assert!(said.contains("baton run --resume"), "{said}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
    // Every call kept its own log.
    let runs: Vec<_> = std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .map(|e| e.unwrap())
        .collect();
    assert_eq!(runs.len(), 1);
    let logs = runs[0].path().join("logs");
    let n = std::fs::read_dir(&logs)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("log".as_ref()))
        .count();
    assert!(n >= 4, "{n} logs in {}", logs.display());
    let run_id = runs[0].file_name();
    let paused: Vec<_> = std::fs::read_dir(&logs)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let (out, _) = a.baton_run(&dir, &double, &["--resume", &run_id.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1);
    // The resumed call reused the paused call's label: the paused call's log is kept whole.
    let dev_log = paused
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .find(|f| {
            f.contains("-dev-")
                && f.ends_with(".log")
                && !f.contains("retry")
                && !f.contains("stderr")
        })
        .unwrap_or_else(|| panic!("the paused dev call's log in {paused:?}"));
    let name = dev_log.trim_end_matches(".log");
    // gemini says it on stderr, claude and codex in their event streams.
    let kept = std::fs::read_to_string(logs.join(format!("{name}.earlier-1.log"))).unwrap()
        + &std::fs::read_to_string(logs.join(format!("{name}.earlier-1.stderr.log")))
            .unwrap_or_default();
    assert!(kept.contains("429"), "{kept}");
}

/// A spent usage limit, as the agent's API answers it (`Reply::QuotaSpent`, reset three hours
/// on): the CLI words it (`says`), baton pauses the run (exit 7) naming the reset, with no
/// attempt spent and nothing committed; once the limit is lifted, `--resume` finishes the
/// story in its first attempt.
pub fn a_spent_limit_pauses_and_resume_finishes(a: &Agent, says: &str) {
    if a.cli().is_none() {
        return;
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let resets_at = (now / 3600 + 3) * 3600;
    let tmp = tempfile::tempdir().unwrap();
    let dir = one_story_project(tmp.path());
    let lifted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let agent = epic_agent(&dir, a.dialect);
    let gate = lifted.clone();
    let double = a.double(Box::new(move |r: &Request| {
        if r.tools().is_empty() {
            Reply::Text("ok".into())
        } else if gate.load(std::sync::atomic::Ordering::SeqCst) {
            agent(r)
        } else {
            Reply::QuotaSpent { resets_at }
        }
    }));
    let (out, took) = a.run_epic(&dir, &double);
    let said = text(&out);
    crate::util::assert_exit(&out, 7);
    assert!(said.contains(says), "{said}");
    assert!(
        said.contains(&format!("{}'s usage limit resets at", a.name)),
        "{said}"
    );
    assert!(took < Duration::from_secs(120), "{took:?}");
    assert_eq!(story_commits(&dir), Vec::<String>::new());
    lifted.store(true, std::sync::atomic::Ordering::SeqCst);
    let id = std::fs::read_dir(dir.join(".baton/runs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .file_name();
    let (out, _) = a.baton_run(&dir, &double, &["--resume", &id.to_string_lossy()]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(story_commits(&dir).len(), 1);
    let events =
        std::fs::read_to_string(dir.join(".baton/runs").join(&id).join("events.jsonl")).unwrap();
    let dev_attempts: Vec<u64> = events
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["event"] == "phase_finished" && e["phase"] == "dev")
        .map(|e| e["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(dev_attempts, [1], "the spent limit was no attempt");
}

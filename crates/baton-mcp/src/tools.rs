//! The MCP tools: small hand-written schemas (the whole `tools/list` answer is measured in a
//! test: it costs every session tokens), each tool a thin call into the library. The task store
//! tools go through the command language (`lang::run_command`), so they answer in its
//! STATUS/TASK/DATA form and share its messages.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use baton_context::mask::{self, capture};
use baton_context::tokens::Encoding;
use baton_core::error::Fault;
use baton_engine::{Error, Result};
use baton_store::lang::{self, Command};

/// The tools: name, description, input schema (properties, required).
pub fn list() -> Vec<(&'static str, &'static str, Value)> {
    let s = |d: &str| json!({"type": "string", "description": d});
    let task = s("task slug (default: current task)");
    let n = |d: &str| json!({"type": "integer", "minimum": 1, "description": d});
    let obj = |props: Value, req: &[&str]| json!({"type": "object", "properties": props, "required": req});
    vec![
        (
            "task_init",
            "Create a task; it becomes the current task.",
            obj(
                json!({
                    "task": s("task name"),
                    "mode": {"enum": ["standard", "poc"]},
                    "workflow": {"enum": ["orchestrate", "poc", "graduate"]},
                }),
                &["task"],
            ),
        ),
        (
            "phase_begin",
            "Start a phase and get the context it needs (RETRIEVE+START).",
            obj(
                json!({
                    "phase": s("e.g. architect, spec, implementation"),
                    "needs": s("comma-separated, e.g. memory"),
                    "task_id": s("parallel sub-task id"),
                    "task": task,
                }),
                &["phase"],
            ),
        ),
        (
            "phase_complete",
            "End a phase, storing its output (STORE+END).",
            obj(
                json!({
                    "phase": s("phase name"),
                    "status": {"enum": ["success", "failed"]},
                    "content": s("the phase's output (Markdown)"),
                    "task_id": s("parallel sub-task id"),
                    "task": task,
                }),
                &["phase", "status"],
            ),
        ),
        (
            "gate",
            "Stop at a gate for human approval (gate), or answer an open gate or pause (decision).",
            obj(
                json!({
                    "gate": {"enum": ["design", "investigation", "final"]},
                    "prompt": s("what the human decides"),
                    "decision": s("approve, reject, retry, full, lite, shelf, cancel"),
                    "task": task,
                }),
                &[],
            ),
        ),
        (
            "store",
            "Store an artifact of a phase (never overwrites: writes a new version).",
            obj(
                json!({
                    "phase": s("phase name"),
                    "content": s("Markdown"),
                    "task_id": s("parallel sub-task id"),
                    "task": task,
                }),
                &["phase", "content"],
            ),
        ),
        (
            "retrieve",
            "The condensed context a phase needs.",
            obj(
                json!({
                    "for_phase": s("target phase"),
                    "needs": s("comma-separated, e.g. memory, spec-signatures"),
                    "task": task,
                }),
                &["for_phase"],
            ),
        ),
        (
            "status",
            "The task's state: done, running, waiting, the next command. Lists tasks when there is none.",
            obj(
                json!({
                    "task": task,
                }),
                &[],
            ),
        ),
        (
            "query",
            "Search every task's artifacts and the history.",
            obj(
                json!({
                    "query": s("text to find"),
                }),
                &["query"],
            ),
        ),
        (
            "mask",
            "Run a command (no shell); large output is saved to a file and summarized (tests: counts, first failure).",
            obj(
                json!({
                    "command": {"type": "array", "items": {"type": "string"}, "description": "argv, e.g. [\"cargo\",\"test\"]"},
                    "timeout_secs": n("stop after (default 600)"),
                    "threshold": n("mask above this many tokens (default 2000)"),
                }),
                &["command"],
            ),
        ),
        (
            "extract",
            "A Markdown section of a spec (or its heading outline without section).",
            obj(
                json!({
                    "file": s("path in the project"),
                    "section": s("heading title; \"Parent > Child\""),
                    "max_tokens": n("cut the result"),
                }),
                &["file"],
            ),
        ),
        (
            "outline",
            "Definitions of a source file (or every tracked file of a directory) with line ranges and token counts.",
            obj(
                json!({
                    "file": s("file or directory in the project"),
                }),
                &["file"],
            ),
        ),
        (
            "budget",
            "Count tokens of a file or text and check them against a window or phase budget.",
            obj(
                json!({
                    "file": s("path in the project"),
                    "text": s("text to count"),
                    "window": n("context window (default from baton.toml)"),
                    "phase": s("phase budget, e.g. implementer"),
                }),
                &[],
            ),
        ),
    ]
}

/// What a tool may do to the project, as MCP's annotations say it (clients that ask before
/// writing, or run read-only tools without asking, go by them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only.
    ReadOnly,
    /// Adds to the task store; never overwrites (every store is a new version).
    Additive,
    /// Runs a command: anything may happen.
    Anything,
}

/// The effect of tool `name`.
pub fn effect(name: &str) -> Effect {
    match name {
        "retrieve" | "status" | "query" | "extract" | "outline" | "budget" => Effect::ReadOnly,
        "mask" => Effect::Anything,
        _ => Effect::Additive,
    }
}

/// What the server needs to answer.
pub struct Ctx {
    pub project: baton_engine::config::Project,
    pub store: baton_store::Store,
    /// Told the name of every tool called (the server's log: stdout is the protocol).
    pub log: fn(&str),
}

/// A tool's answer: the text, and whether it is an error the model should read.
pub struct Answer {
    pub text: String,
    pub is_error: bool,
}

impl Answer {
    fn ok(text: String) -> Answer {
        Answer {
            text,
            is_error: false,
        }
    }
    pub fn error(e: &dyn Fault) -> Answer {
        Answer {
            text: format!("STATUS: error\nDATA: {}\n", lang::error_data(e)),
            is_error: true,
        }
    }
}

fn args<T: for<'de> Deserialize<'de>>(tool: &str, a: &Map<String, Value>) -> Result<T> {
    // Name the tool's own arguments, not every field of a shared struct.
    if let Some((_, _, schema)) = list().into_iter().find(|(n, _, _)| *n == tool) {
        let known: Vec<&String> = schema["properties"]
            .as_object()
            .map(|p| p.keys().collect())
            .unwrap_or_default();
        if let Some(k) = a.keys().find(|k| !known.contains(k)) {
            let names: Vec<&str> = known.iter().map(|s| s.as_str()).collect();
            return Err(Error::invalid(format!("{tool}: unknown argument `{k}`"))
                .hint(format!("{tool} takes: {}", names.join(", "))));
        }
    }
    serde_json::from_value(Value::Object(a.clone()))
        .map_err(|e| Error::invalid(format!("{tool}: bad arguments: {e}")))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StoreArgs {
    task: Option<String>,
    mode: Option<String>,
    workflow: Option<String>,
    phase: Option<String>,
    needs: Option<String>,
    task_id: Option<String>,
    status: Option<String>,
    content: Option<String>,
    gate: Option<String>,
    prompt: Option<String>,
    decision: Option<String>,
    for_phase: Option<String>,
    query: Option<String>,
}

/// The store tools as commands of the language. `None`: not a store tool.
fn store_command(tool: &str, a: StoreArgs) -> Result<Option<Command>> {
    let name = match tool {
        "task_init" => "INIT",
        "phase_begin" => "BEGIN_PHASE",
        "phase_complete" => "COMPLETE_PHASE",
        "gate" if a.decision.is_some() => {
            if a.gate.is_some() {
                return Err(Error::invalid(
                    "gate: give `gate` (to set one) or `decision` (to answer one), not both",
                ));
            }
            "RESUME"
        }
        "gate" if a.gate.is_some() => "SET_GATE",
        "gate" => {
            return Err(Error::invalid(
                "gate: give `gate` (to set one) or `decision` (to answer one)",
            ));
        }
        "store" => "STORE",
        "retrieve" => "RETRIEVE",
        "status" => "SUMMARY",
        "query" => "QUERY",
        _ => return Ok(None),
    };
    let pairs = [
        ("task", a.task),
        ("mode", a.mode),
        ("workflow", a.workflow),
        ("phase", a.phase),
        ("needs", a.needs),
        ("task_id", a.task_id),
        ("status", a.status),
        ("gate", a.gate),
        ("prompt", a.prompt),
        ("decision", a.decision),
        ("for_phase", a.for_phase),
        ("query", a.query),
        ("content", a.content),
    ];
    Ok(Some(Command {
        name: name.to_string(),
        positional: String::new(),
        args: pairs
            .into_iter()
            .filter_map(|(k, v)| Some((k.to_string(), v?)))
            .collect(),
        line: 1,
    }))
}

/// Answer a tool call. `Err` only for a tool that does not exist (a protocol error).
pub fn call(ctx: &Ctx, tool: &str, a: &Map<String, Value>) -> std::result::Result<Answer, String> {
    let res = match tool {
        "mask" => return Err("mask runs through run_mask".into()),
        "extract" => extract(ctx, a),
        "outline" => outline(ctx, a),
        "budget" => budget(ctx, a),
        _ => match args::<StoreArgs>(tool, a).and_then(|sa| store_command(tool, sa)) {
            Ok(Some(c)) => Ok(store_answer(ctx, &c)),
            Ok(None) => return Err(format!("unknown tool `{tool}`")),
            Err(e) => Err(e),
        },
    };
    Ok(match res {
        Ok(t) => t,
        Err(e) => Answer::error(&e),
    })
}

fn store_answer(ctx: &Ctx, c: &Command) -> Answer {
    // SUMMARY with no task at all: list the tasks instead (a fresh session's first question).
    let c =
        if c.name == "SUMMARY" && c.args.is_empty() && ctx.store.current().ok().flatten().is_none()
        {
            &Command {
                name: "LIST".into(),
                ..c.clone()
            }
        } else {
            c
        };
    let r = lang::run_command(&ctx.store, c);
    let head = format!(
        "STATUS: {}\nTASK: {}\nDATA: ",
        r.status,
        r.task.as_deref().unwrap_or("-")
    );
    Answer {
        text: head + &spill(ctx, &r.data, "result"),
        is_error: r.code != 0,
    }
}

/// Results larger than this many tokens go to a scratch file; the answer keeps their start.
const MAX_RESULT_TOKENS: usize = 2_000;
const HEAD_TOKENS: usize = 400;

/// `text`, or its start plus the path of a scratch file holding all of it.
fn spill(ctx: &Ctx, text: &str, label: &str) -> String {
    let enc = Encoding::O200kBase;
    let text = text.trim_end();
    if text.len() <= MAX_RESULT_TOKENS || enc.count(text) <= MAX_RESULT_TOKENS {
        return format!("{text}\n");
    }
    let total = enc.count(text);
    let saved = mask::scratch::scratch_dir(&ctx.project.local_dir())
        .and_then(|d| mask::scratch::create(&d, label))
        .and_then(|(mut f, p)| {
            use std::io::Write;
            f.write_all(text.as_bytes())
                .map_err(|e| baton_context::Error::io(&p, e))?;
            Ok(p)
        });
    let (head, _) = enc.truncate(text, HEAD_TOKENS);
    match saved {
        Ok(p) => format!(
            "{head}\n… ({total} tokens in all; the whole result is in {})\n",
            p.display()
        ),
        Err(e) => format!("{head}\n… ({total} tokens in all; cut: {e})\n"),
    }
}

/// A path argument: relative to the project, and inside it.
fn project_path(ctx: &Ctx, file: &str) -> Result<PathBuf> {
    let p = Path::new(file);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        ctx.project.dir.join(p)
    };
    let inside = full
        .canonicalize()
        .map_err(|e| Error::io(&full, e))?
        .starts_with(
            ctx.project
                .dir
                .canonicalize()
                .map_err(|e| Error::io(&ctx.project.dir, e))?,
        );
    if !inside {
        return Err(Error::invalid(format!("{file} is outside the project"))
            .hint("give a path inside the project directory"));
    }
    Ok(full)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ExtractArgs {
    file: String,
    section: Option<String>,
    max_tokens: Option<usize>,
}

fn extract(ctx: &Ctx, a: &Map<String, Value>) -> Result<Answer> {
    let a: ExtractArgs = args("extract", a)?;
    let path = project_path(ctx, &a.file)?;
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let all = baton_core::markdown::sections(&text);
    let enc = Encoding::O200kBase;
    let Some(title) = a.section else {
        let mut out = format!("DATA: {} headings in {}\n", all.len(), a.file);
        for s in &all {
            out.push_str(&s.outline_line(enc.count(s.text(&text))));
            out.push('\n');
        }
        return Ok(Answer::ok(format!(
            "STATUS: success\n{}",
            spill(ctx, &out, "extract")
        )));
    };
    let s = baton_context::extract::find(&all, &title)
        .map_err(|e| Error::invalid(format!("{}: {e}", a.file)))?;
    let body = &text[s.start..s.end];
    let body = match a.max_tokens {
        Some(max) => {
            baton_context::extract::limit(body, enc, max, &a.file, (s.start_line, s.end_line)).0
        }
        None => body.to_string(),
    };
    Ok(Answer::ok(format!(
        "STATUS: success\nDATA: {} lines {}-{}\n{}",
        a.file,
        s.start_line,
        s.end_line,
        spill(ctx, &body, "extract")
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileArgs {
    file: String,
}

fn outline(ctx: &Ctx, a: &Map<String, Value>) -> Result<Answer> {
    use baton_context::outline;
    let a: FileArgs = args("outline", a)?;
    let path = project_path(ctx, &a.file)?;
    let text = if path.is_dir() {
        let files = outline::tracked_files(&path)?;
        let outlines = outline::outline_files(&files, Encoding::O200kBase, false, true);
        let mut text: String = outlines
            .into_iter()
            .flatten()
            .map(|mut o| {
                // Named as the model gave the folder, not by this machine's absolute path.
                if let Ok(rel) = Path::new(&o.file).strip_prefix(&path) {
                    o.file = Path::new(&a.file).join(rel).display().to_string();
                }
                outline::render(&o)
            })
            .collect();
        if text.is_empty() {
            text = format!("no files tracked by git under {}\n", a.file);
        }
        text
    } else {
        let mut src = outline::Source::read(&path)?;
        src.name = a.file.clone();
        outline::render(&outline::outline(&src, None, Encoding::O200kBase))
    };
    Ok(Answer::ok(format!(
        "STATUS: success\nDATA: {}",
        spill(ctx, &text, "outline")
    )))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BudgetArgs {
    file: Option<String>,
    text: Option<String>,
    window: Option<usize>,
    phase: Option<String>,
}

fn budget(ctx: &Ctx, a: &Map<String, Value>) -> Result<Answer> {
    use baton_context::budget;
    let a: BudgetArgs = args("budget", a)?;
    let cfg = &ctx.project.config.budget;
    cfg.validate()?;
    let text = match (&a.file, a.text) {
        (Some(f), None) => {
            let p = project_path(ctx, f)?;
            std::fs::read_to_string(&p).map_err(|e| Error::io(&p, e))?
        }
        (None, Some(t)) => t,
        _ => {
            return Err(Error::invalid(
                "budget: give `file` or `text` (one of them)",
            ));
        }
    };
    let window = match (&a.phase, a.window) {
        (Some(p), _) => budget::phase_window(cfg, cfg.phase(p)?),
        (None, Some(w)) => w,
        (None, None) => cfg.window,
    };
    let tokens = Encoding::O200kBase.count(&text);
    let c = budget::check(cfg, window, tokens, budget::Activity::default());
    let mut out = format!(
        "STATUS: success\nDATA: {tokens} tokens (o200k_base) of a {window} window: {:.1}%, zone {}, verdict {}",
        c.usage * 100.0,
        c.zone.name(),
        c.verdict.name()
    );
    for t in &c.triggers {
        out.push_str(&format!("; rotate: {t}"));
    }
    Ok(Answer::ok(out + "\n"))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskArgs {
    pub command: Vec<String>,
    pub timeout_secs: Option<u64>,
    pub threshold: Option<usize>,
}

/// Default and largest timeout of the mask tool.
pub const MASK_TIMEOUT: Duration = Duration::from_secs(600);
const MASK_TIMEOUT_MAX: u64 = 3600;

pub fn parse_mask(a: &Map<String, Value>) -> Result<MaskArgs> {
    let m: MaskArgs = args("mask", a)?;
    if m.command.is_empty() || m.command[0].is_empty() {
        return Err(Error::invalid("mask: `command` is empty").hint("e.g. [\"cargo\", \"test\"]"));
    }
    if m.timeout_secs
        .is_some_and(|t| t == 0 || t > MASK_TIMEOUT_MAX)
    {
        return Err(Error::invalid(format!(
            "mask: timeout_secs must be 1..={MASK_TIMEOUT_MAX}"
        )));
    }
    Ok(m)
}

/// Run the mask tool (blocking: the server runs it off its protocol thread).
/// `started` is told the command's process group when it runs.
pub fn run_mask(ctx: &Ctx, m: &MaskArgs, started: &dyn Fn(i32)) -> Answer {
    let local = ctx.project.local_dir();
    let opts = capture::Options {
        local_dir: &local,
        threshold: m
            .threshold
            .or(ctx.project.config.mask.threshold)
            .unwrap_or(mask::DEFAULT_THRESHOLD),
        kind: mask::Kind::Auto,
        redact_scratch: ctx.project.config.mask.redact_scratch,
    };
    let timeout = m.timeout_secs.map_or(MASK_TIMEOUT, Duration::from_secs);
    let o = match capture::mask_command(&opts, &m.command, timeout, started) {
        Ok(o) => o,
        Err(e) => return Answer::error(&e),
    };
    let exit = match (o.timed_out, o.exit) {
        (Some(t), _) => format!("timed out after {}", mask::timeout::secs_text(t)),
        (None, Some(e)) => format!("exit code {}", e.shell_code()),
        (None, None) => "exit unknown".into(),
    };
    let body = if o.masked {
        serde_json::to_string_pretty(&o.to_json()).unwrap_or_default()
    } else {
        let raw = o.passthrough.as_deref().unwrap_or_default();
        String::from_utf8_lossy(raw).into_owned()
    };
    let text = format!("STATUS: success\nDATA: {exit}\n{}\n", body.trim_end());
    if o.masked {
        use mask::record::{MaskRecord, Origin, Source};
        let rec = MaskRecord::of(&o, Source::Mcp, Origin::from_env(), &m.command, &text);
        // The answer does not depend on its record: a log that cannot be written is skipped.
        let _ = mask::record::append(&local, &rec);
    }
    Answer::ok(text)
}

//! The context-manager command language (docs/ARCHITECTURE.md), verbatim:
//! `BEGIN_PHASE phase: architect needs: memory`. An agent prompt written for a context-manager
//! agent that speaks it works unchanged: each command answers in the language's output format
//! (`STATUS:`, `TASK:`, `DATA:`), at zero token cost.
//!
//! Grammar: a command word, then `key: value` pairs. Only the command's own keys delimit
//! values (so prose such as `reason: tests fail: timeout` keeps its colons); `content:` takes
//! the rest of the command, including following lines that do not start with a command word.

use serde::Serialize;

use crate::error::{Error, Result};
use crate::model::*;
use crate::{Content, Store, metrics, query, view};
use baton_core::error::Fault;

/// Every command word and the keys it takes.
const COMMANDS: &[(&str, &[&str])] = &[
    ("INIT", &["task", "mode", "workflow"]),
    ("START_PHASE", &["phase", "task_id", "task"]),
    ("END_PHASE", &["phase", "status", "task_id", "task"]),
    ("BEGIN_PHASE", &["phase", "needs", "task_id", "task"]),
    (
        "COMPLETE_PHASE",
        &["phase", "status", "task_id", "iteration", "task", "content"],
    ),
    ("PAUSE", &["reason", "recommendations", "task"]),
    ("SET_GATE", &["gate", "prompt", "artifacts", "task"]),
    ("RESUME", &["decision", "task"]),
    (
        "STORE",
        &["phase", "task_id", "iteration", "task", "content"],
    ),
    ("RETRIEVE", &["needs", "for_phase", "task"]),
    ("METRICS", &["format", "task"]),
    ("LIST", &[]),
    ("SUMMARY", &["task"]),
    ("QUERY", &["query"]),
    ("HISTORY", &["tail", "task"]),
];

/// One parsed command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub name: String,
    /// Text before the first key (`QUERY rate limit`).
    pub positional: String,
    pub args: Vec<(String, String)>,
    /// 1-based line where the command starts.
    pub line: usize,
}

impl Command {
    fn get(&self, key: &str) -> Option<&str> {
        self.args
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    fn req(&self, key: &str) -> Result<&str> {
        match self.get(key) {
            Some(v) if !v.is_empty() => Ok(v),
            _ => Err(Error::invalid(format!("{} needs `{key}:`", self.name))
                .hint(format!("write it as: {}", usage(&self.name)))),
        }
    }
    fn list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split(',')
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn usage(name: &str) -> String {
    let keys = COMMANDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, k)| *k)
        .unwrap_or(&[]);
    let mut s = name.to_string();
    for k in keys.iter().filter(|k| **k != "task" || name == "INIT") {
        s.push_str(&format!(" {k}: <{k}>"));
    }
    s
}

fn keys_of(word: &str) -> Option<&'static [&'static str]> {
    COMMANDS.iter().find(|(n, _)| *n == word).map(|(_, k)| *k)
}

fn first_word(line: &str) -> &str {
    line.split_whitespace().next().unwrap_or("")
}

/// Split a script into commands. Lines that do not start with a command word continue the
/// previous command's `content:`; anywhere else they are an error naming the line.
pub fn parse(script: &str) -> Result<Vec<Command>> {
    let mut out: Vec<Command> = Vec::new();
    let mut open_content = false;
    for (i, line) in script.lines().enumerate() {
        let n = i + 1;
        let word = first_word(line);
        if let Some(keys) = keys_of(word) {
            let rest = line.trim_start()[word.len()..].to_string();
            let cmd = parse_args(word, keys, &rest, n)?;
            open_content = cmd.get("content").is_some();
            out.push(cmd);
            continue;
        }
        if open_content && let Some(last) = out.last_mut() {
            if let Some((_, v)) = last.args.iter_mut().find(|(k, _)| k == "content") {
                v.push('\n');
                v.push_str(line);
            }
            continue;
        }
        if line.trim().is_empty() || line.trim_start().starts_with("//") {
            continue;
        }
        let known: Vec<&str> = COMMANDS.iter().map(|(n, _)| *n).collect();
        return Err(
            Error::invalid(format!("line {n}: `{word}` is not a command"))
                .hint(format!("commands: {}", known.join(", "))),
        );
    }
    for c in &mut out {
        if let Some((_, v)) = c.args.iter_mut().find(|(k, _)| k == "content") {
            let trimmed = v.trim_end_matches(['\n', ' ', '\t']).len();
            v.truncate(trimmed);
            v.push('\n');
        }
    }
    Ok(out)
}

fn parse_args(name: &str, keys: &[&str], rest: &str, line: usize) -> Result<Command> {
    // Find each `key:` of this command that starts a word.
    let mut marks: Vec<(usize, &str)> = Vec::new();
    for key in keys {
        let pat = format!("{key}:");
        let mut from = 0;
        while let Some(off) = rest[from..].find(&pat) {
            let at = from + off;
            let starts_word = at == 0 || rest[..at].ends_with(char::is_whitespace);
            if starts_word {
                marks.push((at, key));
            }
            from = at + pat.len();
        }
    }
    marks.sort();
    // Everything after `content:` is content, whatever keys it mentions.
    if let Some(ci) = marks.iter().position(|(_, k)| *k == "content") {
        marks.truncate(ci + 1);
    }
    // A key repeated inside an earlier value (e.g. `prompt: see phase: x`) would split it; keep
    // the first occurrence of each key.
    let mut seen = Vec::new();
    marks.retain(|(_, k)| {
        if seen.contains(k) {
            false
        } else {
            seen.push(*k);
            true
        }
    });
    let positional = rest[..marks.first().map_or(rest.len(), |m| m.0)]
        .trim()
        .to_string();
    let mut args = Vec::new();
    for (i, (at, key)) in marks.iter().enumerate() {
        let start = at + key.len() + 1;
        let end = marks.get(i + 1).map_or(rest.len(), |m| m.0);
        let raw = &rest[start..end];
        let value = if *key == "content" {
            raw.strip_prefix(' ').unwrap_or(raw).to_string()
        } else {
            raw.trim().to_string()
        };
        args.push((key.to_string(), value));
    }
    if !positional.is_empty() && !matches!(name, "QUERY") {
        return Err(Error::invalid(format!(
            "line {line}: unexpected `{positional}` after {name}"
        ))
        .hint(format!("write it as: {}", usage(name))));
    }
    Ok(Command {
        name: name.to_string(),
        positional,
        args,
        line,
    })
}

/// The answer to one command, in the command language's output format.
#[derive(Debug, Clone, Serialize)]
pub struct Response {
    pub status: &'static str,
    pub task: Option<String>,
    pub data: String,
    /// Exit code of the error, for callers that stop at the first one.
    #[serde(skip)]
    pub code: u8,
}

impl Response {
    pub fn render(&self) -> String {
        format!(
            "STATUS: {}\nTASK: {}\nDATA: {}\n",
            self.status,
            self.task.as_deref().unwrap_or("-"),
            self.data.trim_end()
        )
    }
}

/// Run a script; stops at the first error (later commands may depend on the failed one).
pub fn run_script(store: &Store, script: &str) -> Vec<Response> {
    let cmds = match parse(script) {
        Ok(c) => c,
        Err(e) => return vec![error_response(None, &e)],
    };
    let mut out = Vec::new();
    for c in cmds {
        let r = run_command(store, &c);
        let failed = r.code != 0;
        out.push(r);
        if failed {
            break;
        }
    }
    out
}

/// Run one command (the MCP server builds them from its tools' arguments).
pub fn run_command(store: &Store, c: &Command) -> Response {
    match run_one(store, c) {
        Ok((task, data)) => Response {
            status: "success",
            task,
            data,
            code: 0,
        },
        Err(e) => {
            let task = store.resolve(c.get("task")).ok();
            error_response(task, &e)
        }
    }
}

fn error_response(task: Option<String>, e: &Error) -> Response {
    Response {
        status: "error",
        task,
        data: error_data(e),
        code: e.exit_code(),
    }
}

/// An error as the command language's DATA says it: the message, then `(next: HINT)`. The
/// MCP tools answer any crate's error in these words too.
pub fn error_data(e: &dyn Fault) -> String {
    match e.hint_text() {
        Some(h) => format!("{e} (next: {h})"),
        None => e.to_string(),
    }
}

fn run_one(store: &Store, c: &Command) -> Result<(Option<String>, String)> {
    if c.name == "INIT" {
        let name = c.req("task")?;
        let mode: Mode = c.get("mode").unwrap_or("standard").parse()?;
        let workflow: Workflow = c.get("workflow").unwrap_or("orchestrate").parse()?;
        let m = store.init(name, mode, workflow)?;
        let data = format!(
            "created task {} ({} mode, {} workflow); it is the current task",
            m.name, m.mode, m.workflow
        );
        return Ok((Some(m.name), data));
    }
    if c.name == "LIST" {
        let all = store.list()?;
        let current = store.current().ok().flatten();
        let mut data = format!("{} task(s)", all.len());
        for m in all {
            let mark = if current.as_deref() == Some(m.name.as_str()) {
                " (current)"
            } else {
                ""
            };
            data.push_str(&format!(
                "\n- {}{mark}: mode {}, workflow {}, status {}, created {}, updated {}",
                m.name, m.mode, m.workflow, m.status, m.created_at, m.updated_at
            ));
        }
        return Ok((current, data));
    }
    if c.name == "QUERY" {
        let text = c.get("query").unwrap_or(&c.positional);
        let (hits, truncated) = query::search(store, text, 100)?;
        let mut data = format!(
            "{} hit(s){}",
            hits.len(),
            if truncated { ", truncated" } else { "" }
        );
        for h in hits {
            data.push_str(&format!("\n{}:{}: {}", h.path, h.line, h.text));
        }
        return Ok((store.current().ok().flatten(), data));
    }
    if c.name == "HISTORY" {
        let n: usize = match c.get("tail") {
            Some(v) => v
                .parse()
                .map_err(|_| Error::invalid(format!("tail: `{v}` is not a number")))?,
            None => 20,
        };
        let data = store.history_tail(n)?.join("\n");
        return Ok((store.current().ok().flatten(), data));
    }

    let slug = store.resolve(c.get("task"))?;
    let task_id = c.get("task_id").filter(|s| !s.is_empty());
    let data = match c.name.as_str() {
        "START_PHASE" => {
            let phase = c.req("phase")?;
            store.start_phase(&slug, phase, task_id)?;
            format!("phase {} started", phase_label(phase, task_id))
        }
        "END_PHASE" => {
            let phase = c.req("phase")?;
            let o = store.end_phase(&slug, phase, task_id, c.req("status")?.parse()?)?;
            ended(&o)
        }
        "BEGIN_PHASE" => {
            let phase = c.req("phase")?;
            let (_, got) = store.begin_phase(&slug, phase, task_id, &c.list("needs"))?;
            format!(
                "phase {} started; context follows\n{}",
                phase_label(phase, task_id),
                got.render()
            )
        }
        "COMPLETE_PHASE" => {
            let phase = c.req("phase")?;
            let content = c.get("content").map(|t| Content {
                task_id: task_id.map(Into::into),
                iteration: None,
                text: t.to_string(),
            });
            let content = match content {
                Some(mut ct) => {
                    ct.iteration = iteration(c)?;
                    Some(ct)
                }
                None => None,
            };
            let o =
                store.complete_phase(&slug, phase, task_id, c.req("status")?.parse()?, content)?;
            ended(&o)
        }
        "PAUSE" => {
            store.pause(&slug, c.req("reason")?, c.list("recommendations"))?;
            "paused; continue with RESUME decision: retry (or reject)".to_string()
        }
        "SET_GATE" => {
            let gate: Gate = c.req("gate")?.parse()?;
            store.set_gate(
                &slug,
                gate,
                c.get("prompt").unwrap_or(""),
                c.list("artifacts"),
            )?;
            let d = match gate {
                Gate::Investigation => "full|lite|shelf|cancel|reject",
                _ => "approve|reject",
            };
            format!("waiting at the {gate} gate; decide with RESUME decision: {d}")
        }
        "RESUME" => {
            let d: Decision = c.req("decision")?.parse()?;
            let o = store.resume(&slug, d)?;
            match o.effects.first().and_then(|e| e.continue_at.clone()) {
                Some(at) => format!("{d} → {}; continue at: {at}", o.manifest.status),
                None => format!("{d} → {}", o.manifest.status),
            }
        }
        "STORE" => {
            let phase = c.req("phase")?;
            let text = c.req("content")?.to_string();
            let o = store.store(
                &slug,
                phase,
                Content {
                    task_id: task_id.map(Into::into),
                    iteration: iteration(c)?,
                    text,
                },
            )?;
            format!("stored {}", o.stored.join(", "))
        }
        "RETRIEVE" => {
            let for_phase = c.req("for_phase")?;
            store.retrieve(&slug, &c.list("needs"), for_phase)?.render()
        }
        "METRICS" => {
            let r = metrics::report(&store.manifest(&slug)?);
            match c.get("format").unwrap_or("summary") {
                "summary" => r.render(false),
                "detailed" => r.render(true),
                "json" => {
                    serde_json::to_string_pretty(&r).map_err(|e| Error::internal(e.to_string()))?
                }
                other => {
                    return Err(Error::invalid(format!(
                        "format: `{other}` is not summary, detailed or json"
                    )));
                }
            }
        }
        "SUMMARY" => view::summary(&store.manifest(&slug)?).render(),
        other => return Err(Error::invalid(format!("`{other}` is not a command"))),
    };
    Ok((Some(slug), data))
}

fn iteration(c: &Command) -> Result<Option<u32>> {
    c.get("iteration")
        .filter(|s| !s.is_empty())
        .map(|v| {
            v.parse::<u32>()
                .map_err(|_| Error::invalid(format!("iteration: `{v}` is not a number")))
        })
        .transpose()
}

fn ended(o: &crate::Outcome) -> String {
    let mut s = String::new();
    for p in &o.stored {
        s.push_str(&format!("stored {p}; "));
    }
    s.push_str(&format!(
        "phase {}; total retries: {}",
        o.ended_line(),
        o.manifest.metrics.total_retries
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_language_examples() {
        let c = parse("BEGIN_PHASE phase: architect needs: memory").unwrap();
        assert_eq!(c[0].get("phase"), Some("architect"));
        assert_eq!(c[0].get("needs"), Some("memory"));
        let c = parse(
            "COMPLETE_PHASE phase: implementation status: success task_id: 1 content: ## Task 1...",
        )
        .unwrap();
        assert_eq!(c[0].get("task_id"), Some("1"));
        assert_eq!(c[0].get("content"), Some("## Task 1...\n"));
        let c = parse("INIT task: Add login mode: standard workflow: orchestrate").unwrap();
        assert_eq!(c[0].get("task"), Some("Add login"));
    }

    #[test]
    fn only_own_keys_split_values() {
        let c =
            parse("PAUSE reason: tests fail: timeout in phase: x recommendations: a, b").unwrap();
        assert_eq!(c[0].get("reason"), Some("tests fail: timeout in phase: x"));
        assert_eq!(c[0].list("recommendations"), vec!["a", "b"]);
    }

    #[test]
    fn content_takes_the_rest_and_following_lines() {
        let script = "STORE phase: spec content: # Spec\n## Types\nstatus: not a key here\n\nRETRIEVE needs: memory for_phase: implementation\n";
        let c = parse(script).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c[0].get("content"),
            Some("# Spec\n## Types\nstatus: not a key here\n")
        );
        assert_eq!(c[1].get("for_phase"), Some("implementation"));
        assert_eq!(c[1].line, 5);
    }

    #[test]
    fn stray_lines_are_errors_naming_the_line() {
        let e = parse("START_PHASE phase: a\nhello there\n")
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2") && e.contains("hello"), "{e}");
        let e = parse("START_PHASE oops phase: a").unwrap_err().to_string();
        assert!(e.contains("unexpected `oops`"), "{e}");
    }
}

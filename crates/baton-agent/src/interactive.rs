//! An agent CLI started for a person: the prompt is the session's first message and the
//! person's terminal is its stdin, stdout and stderr (no `-p`, nothing captured). Each CLI
//! takes that first message its own way: `claude -- PROMPT`, `codex -- PROMPT`,
//! `gemini --prompt-interactive=PROMPT`;
//! a `command` agent gets it as its last argument. Never through a shell.

use std::path::PathBuf;

use super::{AgentKind, AgentSpec};
use crate::error::{Error, Result};

/// The program and arguments of an interactive session of `spec` opening with `prompt`;
/// `session`: the session id claude is to use (`--session-id`), so that baton reads that
/// session's transcript and no other.
pub fn argv(
    spec: &AgentSpec,
    prompt: &str,
    session: Option<&str>,
) -> Result<(PathBuf, Vec<String>)> {
    let default = match spec.kind {
        AgentKind::Claude => "claude",
        AgentKind::Codex => "codex",
        AgentKind::Gemini => "gemini",
        AgentKind::Command => "",
        AgentKind::Sim => {
            return Err(Error::invalid(
                "the simulated agent cannot hold a dialogue with a person",
            )
            .hint("run discovery with claude, codex, gemini or an [agents.<name>] of baton.toml (--agent)"));
        }
    };
    let program = match (&spec.program, spec.kind) {
        (Some(p), _) => p.clone(),
        (None, AgentKind::Command) => {
            return Err(Error::invalid("a `command` agent needs a program")
                .hint("set `program` (and `args`) for this agent"));
        }
        (None, _) => PathBuf::from(default),
    };
    let mut args = vec![];
    if let Some(m) = &spec.model
        && spec.kind != AgentKind::Command
    {
        args.extend(["--model".to_string(), m.clone()]);
    }
    args.extend(spec.args.iter().cloned());
    if let Some(id) = session
        && spec.kind == AgentKind::Claude
    {
        args.extend(["--session-id".to_string(), id.to_string()]);
    }
    // The prompt is one argument whatever its first character: a template that starts with
    // `-` (a `---` front matter) is not an option. Checked with the real CLIs: claude and codex
    // take `--` as the end of options; gemini's `-i` takes no value that starts with `-`, its
    // `=` form takes any.
    match spec.kind {
        AgentKind::Gemini => args.push(format!("--prompt-interactive={prompt}")),
        AgentKind::Claude | AgentKind::Codex => args.extend(["--".into(), prompt.to_string()]),
        _ => args.push(prompt.to_string()),
    }
    Ok((program, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cli_gets_the_prompt_its_way() {
        let mut s = AgentSpec::new(AgentKind::Claude);
        s.model = Some("opus".into());
        assert_eq!(
            argv(&s, "hello", None).unwrap(),
            (
                "claude".into(),
                vec!["--model".into(), "opus".into(), "--".into(), "hello".into()]
            )
        );
        // The session id baton chose, for claude only (the others name their own sessions).
        assert_eq!(
            argv(&s, "hello", Some("1b4e28ba-2fa1-41d2-883f-0016d3cca427"))
                .unwrap()
                .1,
            [
                "--model",
                "opus",
                "--session-id",
                "1b4e28ba-2fa1-41d2-883f-0016d3cca427",
                "--",
                "hello"
            ]
        );
        let s = AgentSpec::new(AgentKind::Gemini);
        assert_eq!(
            argv(&s, "-hi", Some("x")).unwrap(),
            ("gemini".into(), vec!["--prompt-interactive=-hi".into()])
        );
        let s = AgentSpec::new(AgentKind::Codex);
        assert_eq!(argv(&s, "---\nhi", None).unwrap().1, ["--", "---\nhi"]);
        let s = AgentSpec::command("bin/agent", &["--chat"]);
        assert_eq!(
            argv(&s, "hi", None).unwrap(),
            ("bin/agent".into(), vec!["--chat".into(), "hi".into()])
        );
        let e = argv(&AgentSpec::new(AgentKind::Sim), "hi", None).unwrap_err();
        assert!(e.to_string().contains("cannot hold a dialogue"), "{e}");
    }
}

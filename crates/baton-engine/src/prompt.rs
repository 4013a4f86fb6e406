//! Prompt templates: minijinja, the built-ins embedded in the binary, each overridable by a
//! project file `.baton/prompts/<name>.md.j2`.

use std::path::Path;

use crate::error::{Error, Result};
use baton_agent::wiring::baton_command;

pub const BUILTIN_PROMPTS: &[(&str, &str)] = &[
    (
        "kickoff",
        include_str!("workflow/builtin/prompts/kickoff.md.j2"),
    ),
    ("dev", include_str!("workflow/builtin/prompts/dev.md.j2")),
    (
        "bmad-build-auto",
        include_str!("workflow/builtin/prompts/bmad-build-auto.md.j2"),
    ),
    (
        "review",
        include_str!("workflow/builtin/prompts/review.md.j2"),
    ),
    (
        "party-review",
        include_str!("workflow/builtin/prompts/party-review.md.j2"),
    ),
    (
        "failure-analysis",
        include_str!("workflow/builtin/prompts/failure-analysis.md.j2"),
    ),
    ("uat", include_str!("workflow/builtin/prompts/uat.md.j2")),
    (
        "retro",
        include_str!("workflow/builtin/prompts/retro.md.j2"),
    ),
    (
        "conductor",
        include_str!("workflow/builtin/prompts/conductor.md.j2"),
    ),
    (
        "verify-phase",
        include_str!("workflow/builtin/prompts/verify-phase.md.j2"),
    ),
    (
        "verify-reminder",
        include_str!("workflow/builtin/prompts/verify-reminder.md.j2"),
    ),
    (
        "task-architect",
        include_str!("workflow/builtin/prompts/task-architect.md.j2"),
    ),
    (
        "task-design-audit",
        include_str!("workflow/builtin/prompts/task-design-audit.md.j2"),
    ),
    (
        "task-architect-revision",
        include_str!("workflow/builtin/prompts/task-architect-revision.md.j2"),
    ),
    (
        "discover",
        include_str!("workflow/builtin/prompts/discover.md.j2"),
    ),
    ("plan", include_str!("workflow/builtin/prompts/plan.md.j2")),
    (
        "task-spec",
        include_str!("workflow/builtin/prompts/task-spec.md.j2"),
    ),
    (
        "task-implementation",
        include_str!("workflow/builtin/prompts/task-implementation.md.j2"),
    ),
    (
        "task-tests",
        include_str!("workflow/builtin/prompts/task-tests.md.j2"),
    ),
    (
        "task-test-results",
        include_str!("workflow/builtin/prompts/task-test-results.md.j2"),
    ),
    (
        "task-impl-audit",
        include_str!("workflow/builtin/prompts/task-impl-audit.md.j2"),
    ),
    (
        "task-implementation-fix",
        include_str!("workflow/builtin/prompts/task-implementation-fix.md.j2"),
    ),
    (
        "task-debt",
        include_str!("workflow/builtin/prompts/task-debt.md.j2"),
    ),
];

/// Render a prompt template (undefined variables are empty: a template may leave things out).
/// Every template may name baton as `{{ baton }}` ([`baton_command`]).
pub fn render(name: &str, template: &str, ctx: &serde_json::Value) -> Result<String> {
    let mut env = minijinja::Environment::new();
    env.set_undefined_behavior(minijinja::UndefinedBehavior::Lenient);
    env.add_global("baton", baton_command());
    env.add_template(name, template)
        .map_err(|e| Error::invalid(format!("prompt template `{name}`: {e}")))?;
    env.get_template(name)
        .and_then(|t| t.render(ctx))
        .map_err(|e| Error::invalid(format!("prompt template `{name}`: {e}")))
}
/// Whether `template` reads the variable `name` (a template that does not parse: yes, so
/// rendering it reports the error).
pub fn uses(template: &str, name: &str) -> bool {
    let env = minijinja::Environment::new();
    env.template_from_str(template)
        .map_or(true, |t| t.undeclared_variables(false).contains(name))
}

/// A prompt template: the project's `<dir>/<name>.md.j2` if present, else the built-in.
pub fn template(name: &str, override_dir: &Path) -> Result<String> {
    let file = override_dir.join(format!("{name}.md.j2"));
    if file.is_file() {
        return std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e));
    }
    BUILTIN_PROMPTS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, t)| t.to_string())
        .ok_or_else(|| {
            Error::not_found(format!("no prompt template `{name}`"))
                .hint(format!("add {}", file.display()))
        })
}

/// Text for agent prompts (the implementer and reviewer prompts carry it):
/// read structure first and then only the definitions needed, with the commands that make it
/// cheap. `baton` is how the agent's shell reaches baton ([`baton_command`]).
pub fn read_strategy(baton: &str) -> String {
    format!(
        "\
Reading code: structure first, then only what you need.
- To understand a file or module, run `{baton} outline PATH` (a directory gives a repository map):
  every definition with its signature, line range and token count, for a few percent of the
  file's tokens.
- To read one definition, run `{baton} extract FILE --symbol NAME` (`Type::method` or
  `Class.method` for members); it prints exactly that definition with its docs and attributes.
- Read a whole file only when you are going to modify most of it. Do not `cat` large files or
  whole directories, and do not re-read files already in your context."
    )
}

/// Observation masking, for the implementer and reviewer prompts.
pub fn mask_hint(baton: &str) -> String {
    format!(
        "Wrap commands with long output (test runs, builds, diffs) in `{baton} mask -- CMD`: \
you get a summary (counts, the first failure with file and line) and the path of the full output."
    )
}

#[cfg(test)]
mod tests {
    use super::{BUILTIN_PROMPTS, uses};

    #[test]
    fn a_template_uses_a_variable_it_reads_anywhere() {
        let t = |name: &str| BUILTIN_PROMPTS.iter().find(|(n, _)| *n == name).unwrap().1;
        assert!(uses(t("review"), "staged"));
        assert!(uses(t("party-review"), "staged"));
        assert!(!uses(t("dev"), "staged"));
        assert!(uses("{% for f in staged %}{{ f }}{% endfor %}", "staged"));
        assert!(!uses("{% set staged = 1 %}{{ staged }}", "staged"));
        // Not a template: said when it is rendered.
        assert!(uses("{% if %}", "staged"));
    }
}

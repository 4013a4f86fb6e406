//! Validation of every name that becomes part of a path: task slugs, phases, task ids.
//! Anything that could climb out of the store (`..`, `/`, NUL, an absolute path) is refused
//! outright rather than silently rewritten.

use crate::error::{Error, Result};

fn refuse_path_tricks(what: &str, s: &str) -> Result<()> {
    if s.contains('\0') {
        return Err(Error::invalid(format!("{what} contains a NUL byte")));
    }
    if s.contains('/') || s.contains('\\') || s.contains("..") {
        return Err(Error::invalid(format!(
            "{what} `{s}` must not contain `/`, `\\` or `..`: it becomes a file name inside the store"
        )));
    }
    Ok(())
}

/// A task's slug: lowercase, hyphenated. `Add Login Flow` → `add-login-flow`.
pub fn slugify(name: &str) -> Result<String> {
    refuse_path_tricks("task name", name)?;
    let mut slug = String::with_capacity(name.len());
    for ch in name.trim().chars() {
        if ch.is_ascii_alphanumeric() {
            slug.push(ch.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        return Err(Error::invalid(format!(
            "task name `{name}` has no letters or digits to make a slug from"
        )));
    }
    if slug.len() > 80 {
        return Err(Error::invalid(format!(
            "task name is too long ({} characters, at most 80 in the slug)",
            slug.len()
        )));
    }
    Ok(slug)
}

/// A slug given back to us (`--task`, `task:`): must already be in slug form.
pub fn check_slug(slug: &str) -> Result<()> {
    refuse_path_tricks("task slug", slug)?;
    if slug.is_empty()
        || !slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || slug.starts_with('-')
    {
        return Err(Error::invalid(format!(
            "task slug `{slug}` is not a slug (lowercase letters, digits and `-`)"
        ))
        .hint("list the tasks with: baton task list"));
    }
    Ok(())
}

/// Phase names: lowercase words joined by `-`, `_` or `.` (`design-audit`, `test-results`).
pub fn check_phase(phase: &str) -> Result<()> {
    refuse_path_tricks("phase", phase)?;
    let ok = !phase.is_empty()
        && phase.len() <= 64
        && phase.as_bytes()[0].is_ascii_alphanumeric()
        && phase.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'_' | b'.')
        });
    if !ok {
        return Err(Error::invalid(format!(
            "phase `{phase}` is not a phase name (lowercase letters, digits, `-`, `_`, `.`)"
        )));
    }
    Ok(())
}

/// Task ids of spec tasks (`implementations/task-<id>.md`): letters, digits, `-`, `_`, `.`.
pub fn check_task_id(id: &str) -> Result<()> {
    refuse_path_tricks("task id", id)?;
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !ok {
        return Err(Error::invalid(format!(
            "task id `{id}` must be letters, digits, `-`, `_` or `.`"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slugify("Add Login Flow").unwrap(), "add-login-flow");
        assert_eq!(slugify("  Fix: cache (v2)!! ").unwrap(), "fix-cache-v2");
        for bad in ["../etc", "a/b", "/abs", "x\0y", "!!!", "a\\b"] {
            assert!(slugify(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn checks() {
        assert!(check_slug("add-login").is_ok());
        for bad in ["Add", "a/b", "..", "", "-x", "a b"] {
            assert!(check_slug(bad).is_err(), "{bad}");
        }
        assert!(check_phase("design-audit").is_ok());
        for bad in ["../x", "a/b", "", "Spec", "x\0"] {
            assert!(check_phase(bad).is_err(), "{bad}");
        }
        assert!(check_task_id("3").is_ok() && check_task_id("T-3.1").is_ok());
        for bad in ["..", "a/b", "", "x y"] {
            assert!(check_task_id(bad).is_err(), "{bad}");
        }
    }
}

/// The candidate closest to `word`, when close enough to be what was meant (a typo): for
/// "did you mean …?".
pub fn closest<'a>(word: &str, among: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    among
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, c)| *score > 0.8 && *c != word)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// ` (did you mean `x`?)` when one of `among` is close to `word`, else nothing.
pub fn did_you_mean<'a>(word: &str, among: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, among).map_or(String::new(), |c| format!(" (did you mean `{c}`?)"))
}

#[cfg(test)]
mod closest_tests {
    #[test]
    fn a_typo_finds_what_was_meant_and_nothing_else_does() {
        let phases = ["architect", "spec", "implementation"];
        assert_eq!(super::closest("archtect", phases), Some("architect"));
        assert_eq!(
            super::closest("implementaton", phases),
            Some("implementation")
        );
        assert_eq!(super::closest("deploy", phases), None);
        assert_eq!(
            super::did_you_mean("add-logn", ["add-login", "cache"]),
            " (did you mean `add-login`?)"
        );
        assert_eq!(super::did_you_mean("zzz", ["add-login"]), "");
    }
}

//! `baton init AGENT`: write the project's agent configuration — baton's MCP server, its hooks,
//! slash commands, a marked section of the instructions file — merged into what is there, and
//! recorded in `.baton/init-<agent>.json` (`--global`: `~/.config/baton/`) so `--uninstall`
//! removes exactly what was added.
//!
//! The record keeps baton's part of each file and how the file was laid out, never its text
//! (a user's settings hold their tokens). Uninstall takes baton's entries out (compared by
//! value), its marked section, its TOML table, or a file baton created that nobody edited
//! since; a JSON file goes back in its own layout, byte for byte for the pretty-printed files
//! the CLIs write.
//!
//! Crash-safe at every step (`disk`): the record is written before any file (install) and
//! removed after every file (uninstall), each file replaced whole by a rename from a temp file
//! of a fixed name beside it, which the next init or uninstall sweeps away. A kill anywhere
//! leaves the old state, or files with baton's entries and a record naming them; the same
//! command run again completes it, and uninstall undoes it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use baton_agent::wiring::{HookAgent, Scope};

mod disk;
mod files;
mod jsontext;
mod merge;

pub use files::plugin_files;

/// How a file was changed, so a file edited since can still lose only baton's part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Edit {
    /// JSON settings: keys set and array entries appended, and the containers created for them;
    /// the text edits that did it, in order (empty: the file goes back by value alone).
    Json {
        added: Vec<merge::Added>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        splices: Vec<jsontext::Splice>,
    },
    /// Codex's config.toml: the `[mcp_servers.baton]` table.
    TomlTable { table: Vec<String> },
    /// A marked section of an instructions file.
    Section,
    /// A whole file baton created.
    Whole,
}

/// One file init writes: its text before (None: absent) and after.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub path: PathBuf,
    pub before: Option<String>,
    pub after: Option<String>,
    pub edit: Edit,
}

/// What the record keeps of one file init wrote: baton's part and how to take it out again,
/// never the file's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Kept {
    pub path: PathBuf,
    pub edit: Edit,
    /// baton made the file (it was absent before the first init).
    pub created: bool,
    /// How the file was laid out before baton's part went in.
    #[serde(default)]
    pub layout: jsontext::Layout,
    /// SHA-256 (hex) of what init last wrote: a file still holding it is unchanged since.
    pub written: String,
}

impl Kept {
    fn of(c: &Change) -> Kept {
        Kept {
            path: c.path.clone(),
            edit: c.edit.clone(),
            created: c.before.is_none(),
            layout: jsontext::Layout::of(c.before.as_deref()),
            written: disk::fingerprint(c.after.as_deref().unwrap_or("")),
        }
    }
}

/// A record's file as any baton wrote it: this one's, or (version 1) an older baton's, which
/// kept the texts before and after; read, it becomes a [`Kept`] and the texts are dropped
/// when the record is next written.
#[derive(Deserialize)]
#[serde(untagged)]
enum AnyKept {
    Kept(Kept),
    V1 {
        path: PathBuf,
        before: Option<String>,
        after: Option<String>,
        edit: Edit,
    },
}

impl From<AnyKept> for Kept {
    fn from(k: AnyKept) -> Kept {
        match k {
            AnyKept::Kept(k) => k,
            AnyKept::V1 {
                path,
                before,
                after,
                edit,
            } => Kept::of(&Change {
                path,
                before,
                after,
                edit,
            }),
        }
    }
}

/// The record of an init, kept in `.baton/init-<agent>.json`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Record {
    pub version: u32,
    /// Per file: baton's part of it.
    #[serde(deserialize_with = "any_kept")]
    pub files: Vec<Kept>,
}

fn any_kept<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Vec<Kept>, D::Error> {
    Ok(Vec::<AnyKept>::deserialize(d)?
        .into_iter()
        .map(Kept::from)
        .collect())
}

/// The record's version: 2 keeps no file's text.
const RECORD_VERSION: u32 = 2;

fn record_path(local: &Path, agent: HookAgent) -> PathBuf {
    local.join(format!("init-{}.json", agent.name()))
}

fn read_opt(p: &Path) -> Result<Option<String>> {
    match std::fs::read(p) {
        Ok(b) => String::from_utf8(b).map(Some).map_err(|_| {
            Error::invalid(format!("{} is not UTF-8 text", p.display()))
                .hint("baton init merges into text files only; fix or move the file")
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(p, e)),
    }
}

/// The record of `agent`'s init in `local`, checked before anything is done with it: a
/// regular file (no link, FIFO or device), naming only files `baton init` writes for that
/// agent and scope ([`allowed`]). A record that names anything else — a planted one can name
/// any file the user may write, by absolute path or `..` — is refused as damaged, with the
/// path, and nothing is written.
fn load_record(dir: &Path, local: &Path, agent: HookAgent, scope: Scope) -> Result<Option<Record>> {
    let p = record_path(local, agent);
    if !baton_core::fs::own_file(&p)? {
        return Ok(None);
    }
    let damaged = |msg: String| {
        Error::corrupt(&p, None, msg)
            .hint("restore the file, or delete it and remove baton's entries by hand")
    };
    let text = read_opt(&p)?.unwrap_or_default();
    let rec: Record =
        serde_json::from_str(&text).map_err(|e| damaged(format!("not an init record: {e}")))?;
    for f in &rec.files {
        if !allowed(dir, agent, scope, &f.path) {
            return Err(damaged(format!(
                "names {}, which `baton init {}` never writes: nothing was changed",
                f.path.display(),
                agent.name()
            )));
        }
    }
    Ok(Some(rec))
}

/// Whether `path` (as a record names it) is a file `baton init` writes for `agent` in `scope`:
/// for a project, one of its own relative paths, inside the project once links are followed;
/// for the user, where the CLI keeps that file ([`baton_agent::wiring::user_file`]), or (a
/// record of an older baton) the same path relative to HOME.
fn allowed(dir: &Path, agent: HookAgent, scope: Scope, path: &Path) -> bool {
    let wanted = files::wanted(agent, scope);
    match scope {
        Scope::User => wanted.iter().any(|w| {
            path == w.path
                || baton_agent::wiring::user_file(agent, &w.path, &baton_agent::wiring::process_env)
                    .is_some_and(|u| u == path)
        }),
        _ => {
            wanted.iter().any(|w| w.path == path)
                && baton_core::fs::confined(dir, &dir.join(path)).is_ok()
        }
    }
}

/// What `baton init AGENT` would change (files whose text stays the same are left out). A
/// project's files are named relative to `dir`; the user's (`Scope::User`) by where the CLI
/// reads them ([`baton_agent::wiring::user_file`]: `$CODEX_HOME` and the like are followed).
pub fn plan(dir: &Path, agent: HookAgent, scope: Scope) -> Result<Vec<Change>> {
    let mut out = Vec::new();
    for want in files::wanted(agent, scope) {
        let rel = match scope {
            Scope::User => {
                baton_agent::wiring::user_file(agent, &want.path, &baton_agent::wiring::process_env)
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "--global cannot tell where {} keeps its settings: HOME is not set",
                            agent.name()
                        ))
                        .hint("set HOME to your home folder")
                    })?
            }
            _ => want.path.clone(),
        };
        let path = dir.join(&rel);
        if scope == Scope::Project {
            // A link planted in the project (`.claude` → the user's own) must not take init's
            // writes out of it.
            baton_core::fs::confined(dir, &path)?;
        }
        let before = read_opt(&path)?;
        let (after, edit) = merge::apply(&want, before.as_deref()).map_err(|e| in_file(e, &rel))?;
        if before.as_deref() != Some(after.as_str()) {
            out.push(Change {
                path: rel,
                before,
                after: Some(after),
                edit,
            });
        }
    }
    Ok(out)
}

/// Remove the temp files a killed init or uninstall left beside the files it writes (each a
/// whole copy of its file, the user's tokens with it): every file `agent`'s init writes in
/// `scope`, and every file its record names. Only `baton init` itself calls it — not a dry
/// run, not doctor, which change nothing. A project's file is swept only inside the project.
pub fn sweep(dir: &Path, local: &Path, agent: HookAgent, scope: Scope) {
    let mut paths: Vec<PathBuf> = files::wanted(agent, scope)
        .into_iter()
        .filter_map(|w| match scope {
            Scope::User => {
                baton_agent::wiring::user_file(agent, &w.path, &baton_agent::wiring::process_env)
            }
            _ => Some(w.path),
        })
        .collect();
    if let Ok(Some(rec)) = load_record(dir, local, agent, scope) {
        paths.extend(rec.files.into_iter().map(|f| f.path));
    }
    for p in paths {
        let path = dir.join(p);
        if scope == Scope::User || baton_core::fs::confined(dir, &path).is_ok() {
            disk::sweep(&path);
        }
    }
}

/// What `baton init AGENT --uninstall` would change.
pub fn plan_uninstall(
    dir: &Path,
    local: &Path,
    agent: HookAgent,
    scope: Scope,
) -> Result<Vec<Change>> {
    let Some(rec) = load_record(dir, local, agent, scope)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for f in rec.files {
        let path = dir.join(&f.path);
        let Some(now) = read_opt(&path)? else {
            continue;
        };
        let untouched = disk::fingerprint(&now) == f.written;
        let restored = if f.created && untouched {
            // Made by baton and untouched since: gone.
            None
        } else if let (true, Edit::Json { splices, .. }) = (untouched, &f.edit)
            && !splices.is_empty()
            && let Some(text) = jsontext::undo_all(&now, splices)
        {
            // Untouched since: baton's bytes out, the file as it was.
            Some(text)
        } else {
            merge::remove(&f.edit, f.created, f.layout, &now).map_err(|e| in_file(e, &f.path))?
        };
        if restored.as_deref() != Some(now.as_str()) {
            out.push(Change {
                path: f.path.clone(),
                before: Some(now),
                after: restored,
                edit: f.edit.clone(),
            });
        }
    }
    Ok(out)
}

/// Write `changes`; `install` records them first, else the record goes after them. On an
/// error nothing is changed: what was written before it is put back, the record too.
pub fn write(
    dir: &Path,
    local: &Path,
    agent: HookAgent,
    changes: &[Change],
    install: bool,
    scope: Scope,
) -> Result<()> {
    let rec_path = record_path(local, agent);
    let old_record = if baton_core::fs::own_file(&rec_path)? {
        read_opt(&rec_path)?
    } else {
        None
    };
    // All or nothing: a file (or the record) that cannot be written puts back every file
    // written before it, and the record as it was.
    let undo = |done: &[&Change], e: Error| {
        for d in done.iter().rev() {
            let _ = disk::apply(dir, &d.path, d.before.as_deref());
        }
        let _ = match &old_record {
            Some(text) => baton_core::fs::write_atomic_private(&rec_path, text.as_bytes()),
            None => std::fs::remove_file(&rec_path).or(Ok(())),
        };
        e
    };
    if install {
        if scope == Scope::Project {
            // `.baton/` is created ignored by git before anything of baton's goes in it.
            baton_context::mask::scratch::scratch_dir(local).map_err(|e| undo(&[], e.into()))?;
        } else {
            baton_core::fs::create_dir_all(local).map_err(|e| undo(&[], e.into()))?;
        }
        // Ahead of the files: a kill between two of them leaves a record naming both.
        let mut rec = load_record(dir, local, agent, scope)?.unwrap_or_default();
        rec.version = RECORD_VERSION;
        for c in changes {
            // A record of an older baton may name a user's file relative to HOME.
            match rec
                .files
                .iter_mut()
                .find(|f| dir.join(&f.path) == dir.join(&c.path))
            {
                // Init again after an edit: the file is still the one baton found first
                // (made by it or not, laid out so), with more of baton's in it.
                Some(f) => {
                    let in_turn =
                        c.before.as_deref().map(disk::fingerprint).as_ref() == Some(&f.written);
                    f.written = Kept::of(c).written;
                    f.edit = merge::union(&f.edit, &c.edit, in_turn);
                }
                None => rec.files.push(Kept::of(c)),
            }
        }
        let text =
            serde_json::to_string_pretty(&rec).map_err(|e| Error::internal(e.to_string()))?;
        baton_core::fs::write_atomic_private(&rec_path, text.as_bytes())
            .map_err(|e| undo(&[], e.into()))?;
        disk::step();
    }
    let mut done: Vec<&Change> = Vec::new();
    for c in changes {
        // A program of the user's may write its settings meanwhile (claude rewrites
        // ~/.claude.json as it runs): a write made since the plan read the file is not replaced
        // by a merge of older text. One landing between this check and the rename still is:
        // the CLIs take no lock baton could share, so the window is only made small.
        let path = dir.join(&c.path);
        if read_opt(&path).map_err(|e| undo(&done, e))? != c.before {
            return Err(undo(
                &done,
                Error::state(format!(
                    "{} changed while baton init was merging into it",
                    path.display()
                ))
                .hint("nothing was changed: run baton init again"),
            ));
        }
        disk::apply(dir, &c.path, c.after.as_deref()).map_err(|e| undo(&done, e))?;
        done.push(c);
        disk::step();
    }
    if !install {
        match std::fs::remove_file(&rec_path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&rec_path, e)),
        }
    }
    Ok(())
}

/// A unified diff of one change, for `--dry-run`.
pub fn diff(c: &Change) -> String {
    let name = c.path.display().to_string();
    let old = c.before.as_deref().unwrap_or("");
    let new = c.after.as_deref().unwrap_or("");
    let d = similar::TextDiff::from_lines(old, new);
    let (a, b) = match (&c.before, &c.after) {
        (None, _) => ("/dev/null".to_string(), format!("b/{name}")),
        (_, None) => (format!("a/{name}"), "/dev/null".to_string()),
        _ => (format!("a/{name}"), format!("b/{name}")),
    };
    d.unified_diff()
        .context_radius(3)
        .header(&a, &b)
        .to_string()
}

fn in_file(e: Error, path: &Path) -> Error {
    match e {
        Error::Fault(baton_core::Error::Invalid { msg, hint }) => {
            Error::Fault(baton_core::Error::Invalid {
                msg: format!("{}: {msg}", path.display()),
                hint,
            })
        }
        other => other,
    }
}

/// The value of a JSON document at `path`, if any (tests and `merge`).
pub fn get<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A settings file another program wrote after init read it is not overwritten with a
    /// merge of the older text: init stops (a state error its caller plans again on), and what
    /// it wrote before is put back.
    #[test]
    fn a_file_changed_after_the_plan_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let local = dir.path().join(".baton");
        std::fs::write(dir.path().join(".mcp.json"), "{}\n").unwrap();
        let changes = plan(dir.path(), HookAgent::Claude, Scope::Project).unwrap();
        assert!(changes.len() > 2, "{changes:?}");
        // Another program writes the last file init will merge into.
        let last = dir.path().join(&changes.last().unwrap().path);
        std::fs::create_dir_all(last.parent().unwrap()).unwrap();
        std::fs::write(&last, "the user's own words\n").unwrap();
        let install = |changes: &[Change]| {
            write(
                dir.path(),
                &local,
                HookAgent::Claude,
                changes,
                true,
                Scope::Project,
            )
        };
        let e = install(&changes).unwrap_err();
        assert!(
            matches!(e, Error::Fault(baton_core::Error::State { .. })),
            "{e}"
        );
        assert!(e.to_string().contains("changed while baton init"), "{e}");
        assert_eq!(
            std::fs::read_to_string(&last).unwrap(),
            "the user's own words\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
            "{}\n",
            "what was written before is put back"
        );
        // Planned again from what the file holds now, init goes through and keeps the words.
        install(&plan(dir.path(), HookAgent::Claude, Scope::Project).unwrap()).unwrap();
        assert!(
            std::fs::read_to_string(&last)
                .unwrap()
                .contains("the user's own words")
        );
    }
}

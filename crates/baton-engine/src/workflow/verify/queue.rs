//! Queues of items to verify, machine-local under `.baton/queues/<name>/`:
//!
//! ```text
//! queue.json                      {"v":1,"name":…,"createdAt":…,"items":[{"id":"BMNR","addedAt":…}]}
//! .lock                           held while queue.json is read-modified-written
//! run.lock                        held by the `baton run verify` working the queue
//! items/<ITEM>/verification-state.json   the item's state, the only progress record
//! items/<ITEM>/<item>-<phase output>.md  what the sub-agents wrote
//! ```
//!
//! queue.json holds only the order of the items; every item's progress lives in its state file,
//! so the two can never disagree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::state::{ItemStatus, State};
use crate::error::{Error, Result};
use baton_core::fs;

pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueFile {
    pub v: u32,
    pub name: String,
    pub created_at: String,
    pub items: Vec<QueueItem>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QueueItem {
    pub id: String,
    pub added_at: String,
}

pub struct Queues {
    pub dir: PathBuf,
}

/// Queue names: lowercase letters, digits, `-` and `_`, at most 64.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "`{name}` is not a queue name (lowercase letters, digits, `-`, `_`; at most 64)"
        ))
        .hint("e.g. baton queue add dat-q1 BMNR MARA"))
    }
}

/// Item ids: letters, digits, `.`, `-`, `_`, starting with a letter or digit, at most 64.
pub fn check_item(id: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id.as_bytes()[0].is_ascii_alphanumeric()
        && !id.contains("..")
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "`{id}` is not an item id (letters, digits, `.`, `-`, `_`; at most 64)"
        ))
        .hint("items are ids like BMNR or 2026-q1.report"))
    }
}

/// What `queue add` is given, checked the same on every backend: a queue name and at least one
/// item, each a valid id and none given twice (ids compare without case).
pub fn check_additions(name: &str, items: &[String]) -> Result<()> {
    check_name(name)?;
    if items.is_empty() {
        return Err(Error::invalid("no items to add")
            .hint(format!("e.g. baton queue add {name} BMNR MARA")));
    }
    for i in items {
        check_item(i)?;
    }
    for (k, i) in items.iter().enumerate() {
        if items[..k].iter().any(|o| o.eq_ignore_ascii_case(i)) {
            return Err(Error::invalid(format!("item `{i}` is given twice")));
        }
    }
    Ok(())
}

impl Queues {
    pub fn new(local: &Path) -> Queues {
        Queues {
            dir: local.join("queues"),
        }
    }

    pub fn queue_dir(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn item_dir(&self, name: &str, item: &str) -> PathBuf {
        self.queue_dir(name).join("items").join(item)
    }

    pub fn state_path(&self, name: &str, item: &str) -> PathBuf {
        self.item_dir(name, item).join(super::state::FILE_NAME)
    }

    fn file(&self, name: &str) -> PathBuf {
        self.queue_dir(name).join("queue.json")
    }

    /// Every queue's name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(&self.dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().join("queue.json").is_file())
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        out.sort();
        out
    }

    /// A queue (or its items) symlinked out of the project is refused.
    fn confined(&self, name: &str) -> Result<()> {
        let base = self.dir.parent().unwrap_or(&self.dir);
        Ok(fs::confined(base, &self.queue_dir(name).join("items"))?)
    }

    pub fn load(&self, name: &str) -> Result<QueueFile> {
        check_name(name)?;
        self.confined(name)?;
        let path = self.file(name);
        let Some(text) = fs::read_text_opt(&path)? else {
            let known = self.names();
            return Err(
                Error::not_found(format!("no queue `{name}`")).hint(if known.is_empty() {
                    format!("create it: baton queue add {name} ITEM…")
                } else {
                    format!(
                        "queues: {}; or create it: baton queue add {name} ITEM…",
                        known.join(", ")
                    )
                }),
            );
        };
        let q: QueueFile = serde_json::from_str(&text)
            .map_err(|e| Error::corrupt(&path, Some(e.line()), format!("not a queue file: {e}")))?;
        if q.v != FORMAT {
            return Err(Error::corrupt(
                &path,
                None,
                format!("queue format v{} is not supported", q.v),
            ));
        }
        Ok(q)
    }

    /// Append `items` to queue `name` (created if missing): all of them or, on any error, none.
    pub fn add(&self, name: &str, items: &[String]) -> Result<QueueFile> {
        check_additions(name, items)?;
        self.confined(name)?;
        let qdir = self.queue_dir(name);
        fs::create_dir_all(&qdir)?;
        let _lock = fs::lock(&qdir.join(".lock"))?;
        let mut q = if self.file(name).is_file() {
            self.load(name)?
        } else {
            QueueFile {
                v: FORMAT,
                name: name.to_string(),
                created_at: baton_core::ids::now(),
                items: vec![],
            }
        };
        for i in items {
            if let Some(o) = q.items.iter().find(|o| o.id.eq_ignore_ascii_case(i)) {
                return Err(Error::state(format!(
                    "item `{i}` is already in queue `{name}`{}",
                    if o.id != *i {
                        format!(" (as `{}`)", o.id)
                    } else {
                        String::new()
                    }
                ))
                .hint(format!(
                    "nothing was added; see the queue with `baton queue show {name}`"
                )));
            }
        }
        let now = baton_core::ids::now();
        q.items.extend(items.iter().map(|i| QueueItem {
            id: i.clone(),
            added_at: now.clone(),
        }));
        let mut bytes =
            serde_json::to_vec_pretty(&q).map_err(|e| Error::internal(e.to_string()))?;
        bytes.push(b'\n');
        fs::write_atomic(&self.file(name), &bytes)?;
        Ok(q)
    }

    /// The `i`-th item of the queue, read afresh (items added during a run are picked up).
    pub fn item_at(&self, name: &str, i: usize) -> Result<Option<String>> {
        Ok(self.load(name)?.items.get(i).map(|x| x.id.clone()))
    }

    /// The item's state file, if it has one.
    pub fn state(&self, name: &str, item: &str) -> Result<Option<State>> {
        State::load_opt(&self.state_path(name, item))
    }

    pub fn status(&self, name: &str, item: &str) -> Result<ItemStatus> {
        Ok(match self.state(name, item)? {
            None => ItemStatus::pending(item),
            Some(s) => s.item_status(),
        })
    }

    /// Whether a `baton run verify` holds the queue right now.
    pub fn running(&self, name: &str) -> bool {
        fs::is_locked(&self.queue_dir(name).join("run.lock"))
    }

    /// Hold the queue for one run; a second run of the same queue is refused.
    pub fn lock_run(&self, name: &str) -> Result<std::fs::File> {
        let p = self.queue_dir(name).join("run.lock");
        fs::try_lock_for(&p, std::time::Duration::from_secs(3))?.ok_or_else(|| {
            Error::state(format!(
                "queue `{name}` is being run by another `baton run verify`"
            ))
            .hint("see where it is with `baton status`")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_lock_released_a_moment_later_is_taken_and_a_held_one_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let q = Queues::new(t.path());
        q.add("q", &["A".to_string()]).unwrap();
        // Released after 300 ms, as a killed run's lock is once its process is gone.
        let held = q.lock_run("q").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(held);
        });
        assert!(q.lock_run("q").is_ok());
        release.join().unwrap();
        // Held for good: refused, with the reason.
        let _held = q.lock_run("q").unwrap();
        let e = q.lock_run("q").unwrap_err().to_string();
        assert!(e.contains("is being run by another"), "{e}");
    }
}

//! QUERY: search every task's artifacts, the memory files and the history.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::Store;
use crate::error::{Error, Result};

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    /// Path relative to the store root.
    pub path: String,
    pub line: usize,
    pub text: String,
}

/// Case-insensitive substring search; at most `limit` hits, in a stable file order.
pub fn search(store: &Store, needle: &str, limit: usize) -> Result<(Vec<Hit>, bool)> {
    if needle.trim().is_empty() {
        return Err(Error::invalid("nothing to search for: the query is empty"));
    }
    let needle = needle.to_lowercase();
    let mut files = Vec::new();
    for slug in store.slugs()? {
        collect_md(&store.task_dir(&slug), &mut files);
    }
    collect_md(&store.memory_dir(), &mut files);
    files.push(store.history_path());
    let mut hits = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        let text = String::from_utf8_lossy(&bytes);
        for (i, line) in text.lines().enumerate() {
            if line.to_lowercase().contains(&needle) {
                if hits.len() == limit {
                    return Ok((hits, true));
                }
                hits.push(Hit {
                    path: f
                        .strip_prefix(store.root())
                        .unwrap_or(&f)
                        .display()
                        .to_string(),
                    line: i + 1,
                    text: line.trim_end().to_string(),
                });
            }
        }
    }
    Ok((hits, false))
}

fn collect_md(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            collect_md(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

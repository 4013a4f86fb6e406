//! `--symbol NAME`: find one definition in an outline by name or qualified name
//! (`Type::method`, `Class.method`, `Outer.Inner.method`).

use super::{FileOutline, Item};
use crate::error::{Error, Result};

/// How many near names a "no such symbol" error lists.
const NEAREST: usize = 6;

/// The names of `it` and its enclosing items, outermost first.
fn path(o: &FileOutline, mut i: usize) -> Vec<&str> {
    let mut out = Vec::new();
    // Parents always come earlier in the list; the bound guards against a malformed chain.
    for _ in 0..o.items.len() {
        let Some(it) = o.items.get(i) else { break };
        out.push(it.name.as_str());
        match it.parent {
            Some(p) if p < i => i = p,
            _ => break,
        }
    }
    out.reverse();
    out
}

/// The qualified name people type: `Scope::name` (the language's separator).
pub fn qualified(it: &Item, sep: &str) -> String {
    if it.scope.is_empty() {
        it.name.clone()
    } else {
        format!("{}{sep}{}", it.scope, it.name)
    }
}

fn split_query(q: &str) -> Vec<&str> {
    let parts: Vec<&str> = if q.contains("::") {
        q.split("::").collect()
    } else {
        q.split('.').collect()
    };
    parts.into_iter().map(str::trim).collect()
}

/// Whether `query` (split into parts) names item `i`: its last part is the name and the
/// parts before it are the innermost enclosing names (or the Go receiver scope).
fn matches(o: &FileOutline, i: usize, parts: &[&str], fold: bool) -> bool {
    let eq = |a: &str, b: &str| {
        if fold {
            a.eq_ignore_ascii_case(b)
        } else {
            a == b
        }
    };
    let Some(it) = o.items.get(i) else {
        return false;
    };
    let mut full = path(o, i);
    if it.parent.is_none() && !it.scope.is_empty() {
        // Go methods: the receiver is the scope, not an enclosing item.
        full.insert(0, it.scope.as_str());
    }
    parts.len() <= full.len()
        && parts
            .iter()
            .rev()
            .zip(full.iter().rev())
            .all(|(q, n)| eq(q, n))
}

/// Find the one item `query` names. Ambiguous names list the candidates with their lines; a
/// missing name lists the nearest names by edit distance.
pub fn find_symbol(o: &FileOutline, query: &str) -> Result<usize> {
    let sep = o.language.map_or(".", |l| l.separator());
    let parts = split_query(query);
    if parts.iter().any(|p| p.is_empty()) {
        return Err(Error::invalid(format!("bad symbol {query:?}"))
            .hint("name a definition: `parse`, `Type::method` or `Class.method`"));
    }
    let mut hits: Vec<usize> = Vec::new();
    for fold in [false, true] {
        hits = (0..o.items.len())
            .filter(|&i| matches(o, i, &parts, fold))
            .collect();
        if !hits.is_empty() {
            break;
        }
    }
    // `Foo` names both `struct Foo` and its `impl Foo` blocks: the type is what is meant.
    if hits.len() > 1 {
        let not_impl: Vec<usize> = hits
            .iter()
            .copied()
            .filter(|&i| o.items.get(i).is_some_and(|it| it.kind != "impl"))
            .collect();
        if not_impl.len() == 1 {
            hits = not_impl;
        }
    }
    match hits.as_slice() {
        [one] => Ok(*one),
        [] => {
            let near = nearest_names(o, query);
            let msg = if o.items.is_empty() {
                format!("no symbol {query:?}: the file has no definitions baton can see")
            } else if near.is_empty() {
                format!("no symbol {query:?}")
            } else {
                format!(
                    "no symbol {query:?}; nearest names:\n{}",
                    near.iter()
                        .map(|(n, line)| format!("  line {line}: {n}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                )
            };
            Err(Error::not_found(msg).hint(format!(
                "see every definition with `baton outline {}`",
                o.file
            )))
        }
        many => {
            let list: Vec<String> = many
                .iter()
                .filter_map(|&i| o.items.get(i))
                .map(|it| {
                    format!(
                        "  line {}: {} {}",
                        it.start_line,
                        it.kind,
                        qualified(it, sep)
                    )
                })
                .collect();
            Err(Error::invalid(format!(
                "symbol {query:?} is ambiguous; candidates:\n{}",
                list.join("\n")
            ))
            .hint(format!(
                "qualify it with its enclosing type, e.g. `Type{sep}name`"
            )))
        }
    }
}

/// The names closest to `query` by edit distance (qualified names too), with their lines.
pub fn nearest_names(o: &FileOutline, query: &str) -> Vec<(String, usize)> {
    let sep = o.language.map_or(".", |l| l.separator());
    let q = query.to_lowercase();
    let mut scored: Vec<(usize, String, usize)> = o
        .items
        .iter()
        .map(|it| {
            let qn = qualified(it, sep);
            let d =
                levenshtein(&q, &it.name.to_lowercase()).min(levenshtein(&q, &qn.to_lowercase()));
            (d, qn, it.start_line)
        })
        .collect();
    scored.sort();
    scored.dedup_by(|a, b| a.1 == b.1);
    scored
        .into_iter()
        .take(NEAREST)
        .map(|(_, n, l)| (n, l))
        .collect()
}

/// Edit distance on chars (two rows; names are short).
fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    #[test]
    fn edit_distance() {
        assert_eq!(super::levenshtein("kitten", "sitting"), 3);
        assert_eq!(super::levenshtein("", "abc"), 3);
        assert_eq!(super::levenshtein("parse", "parse"), 0);
    }
}

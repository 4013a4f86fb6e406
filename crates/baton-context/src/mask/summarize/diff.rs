//! `git diff` (unified patch) and `git diff --stat`: "3 files, +45/-12".

use std::sync::LazyLock;

use regex::Regex;

use super::{DiffStat, FileChange, Kind, Summarizer, Summary, num};

/// Files listed individually in the summary; the totals always cover every file.
const MAX_FILES: usize = 20;

static STAT_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^ (.+?)\s+\|\s+(?:(\d+)(?: ([+-]*))?|Bin .*)$").expect("regex"));
static STAT_TOTAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^ (\d+) files? changed(?:, (\d+) insertions?\(\+\))?(?:, (\d+) deletions?\(-\))?")
        .expect("regex")
});

fn phrase(d: &DiffStat) -> String {
    format!(
        "{} file{}, +{}/-{}",
        d.files_changed,
        if d.files_changed == 1 { "" } else { "s" },
        d.insertions,
        d.deletions
    )
}

#[derive(Debug, Default)]
pub struct GitDiff {
    stat: DiffStat,
    in_hunk: bool,
    /// Index into `stat.files` of the file being read, when it is listed.
    current: Option<usize>,
}

impl Summarizer for GitDiff {
    fn line(&mut self, line: &str) {
        if let Some(rest) = line.strip_prefix("diff --git ") {
            self.stat.files_changed += 1;
            self.in_hunk = false;
            // `a/x b/x`: the b side is the file's (new) name.
            let name = rest
                .rsplit_once(" b/")
                .map(|(_, b)| b)
                .unwrap_or(rest)
                .to_string();
            self.current = if self.stat.files.len() < MAX_FILES {
                self.stat.files.push(FileChange {
                    file: name,
                    insertions: 0,
                    deletions: 0,
                    binary: false,
                });
                Some(self.stat.files.len() - 1)
            } else {
                None
            };
            return;
        }
        if line.starts_with("@@") {
            self.in_hunk = true;
            return;
        }
        if !self.in_hunk {
            if line.starts_with("Binary files ")
                && let Some(i) = self.current
            {
                self.stat.files[i].binary = true;
            }
            return;
        }
        let (ins, del) = match line.as_bytes().first() {
            Some(b'+') => (1, 0),
            Some(b'-') => (0, 1),
            Some(b' ') | Some(b'\\') => return,
            // Anything else ends the hunk (e.g. the next file's header lines).
            _ => {
                self.in_hunk = false;
                return;
            }
        };
        self.stat.insertions += ins;
        self.stat.deletions += del;
        if let Some(i) = self.current {
            self.stat.files[i].insertions += ins;
            self.stat.files[i].deletions += del;
        }
    }

    fn finish(&mut self) -> Summary {
        let mut s = Summary::new(Kind::GitDiff, phrase(&self.stat));
        s.diff = Some(self.stat.clone());
        s
    }
}

#[derive(Debug, Default)]
pub struct GitDiffStat {
    stat: DiffStat,
    listed: u64,
    total_seen: bool,
}

impl Summarizer for GitDiffStat {
    fn line(&mut self, line: &str) {
        if let Some(c) = STAT_TOTAL.captures(line) {
            // The closing line is authoritative (a long file list may have been cut).
            self.total_seen = true;
            self.stat.files_changed = num(&c[1]);
            self.stat.insertions = c.get(2).map_or(0, |m| num(m.as_str()));
            self.stat.deletions = c.get(3).map_or(0, |m| num(m.as_str()));
            return;
        }
        if let Some(c) = STAT_LINE.captures(line) {
            self.listed += 1;
            if self.stat.files.len() < MAX_FILES {
                let binary = c.get(2).is_none();
                let changes = c.get(2).map_or(0, |m| num(m.as_str()));
                let bar = c.get(3).map_or("", |m| m.as_str());
                // The +/- bar is scaled on wide diffs; split the count in the bar's proportion.
                let plus = bar.bytes().filter(|&b| b == b'+').count() as u64;
                let minus = bar.bytes().filter(|&b| b == b'-').count() as u64;
                let (ins, del) = match (changes * plus).checked_div(plus + minus) {
                    Some(ins) => (ins, changes - ins),
                    None => (0, 0),
                };
                self.stat.files.push(FileChange {
                    file: c[1].trim().to_string(),
                    insertions: ins,
                    deletions: del,
                    binary,
                });
            }
        }
    }

    fn finish(&mut self) -> Summary {
        if !self.total_seen {
            self.stat.files_changed = self.listed;
            self.stat.insertions = self.stat.files.iter().map(|f| f.insertions).sum();
            self.stat.deletions = self.stat.files.iter().map(|f| f.deletions).sum();
        }
        let mut s = Summary::new(Kind::GitDiffStat, phrase(&self.stat));
        if !self.total_seen {
            s.notes
                .push("no `N files changed` line: totals are summed from the listed files".into());
        }
        s.diff = Some(self.stat.clone());
        s
    }
}

#[cfg(test)]
mod tests {
    use super::super::run;
    use super::*;

    #[test]
    fn patch_counts_lines_per_file() {
        let log = "diff --git a/src/a.rs b/src/a.rs
index 1..2 100644
--- a/src/a.rs
+++ b/src/a.rs
@@ -1,3 +1,4 @@
 keep
-old
+new
+more
diff --git a/img.png b/img.png
Binary files a/img.png and b/img.png differ
diff --git a/b.txt b/b.txt
--- a/b.txt
+++ b/b.txt
@@ -1 +0,0 @@
--- a line that starts with dashes
\\ No newline at end of file
";
        let s = run(Kind::GitDiff, log);
        assert_eq!(s.summary, "3 files, +2/-2");
        let d = s.diff.unwrap();
        assert_eq!(d.files[0].file, "src/a.rs");
        assert_eq!((d.files[0].insertions, d.files[0].deletions), (2, 1));
        assert!(d.files[1].binary);
        assert_eq!(d.files[2].deletions, 1);
    }

    #[test]
    fn stat_uses_closing_line() {
        let log = " src/a.rs   | 10 +++++++---
 img.png    | Bin 0 -> 12 bytes
 3 files changed, 45 insertions(+), 12 deletions(-)
";
        let s = run(Kind::GitDiffStat, log);
        assert_eq!(s.summary, "3 files, +45/-12");
        let d = s.diff.unwrap();
        assert_eq!((d.files[0].insertions, d.files[0].deletions), (7, 3));
        assert!(d.files[1].binary);
    }
}

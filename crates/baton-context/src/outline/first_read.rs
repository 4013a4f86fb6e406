//! Outline-first reads: an agent's read of a whole large file (Claude's Read, gemini's
//! read_file, `cat FILE`) is answered with the file's first lines, its outline (each
//! definition's line range) and how to read more — a line range, one definition whole, or
//! the whole file by asking again — so the agent still edits what it needs without holding
//! every line of the file.

use std::path::Path;

use super::{Source, outline_with, render::render};
use crate::tokens::Encoding;

/// An outline-first answer to a whole-file read.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstRead {
    /// The file's first lines, as they are (a line range the agent can trust).
    pub head: String,
    pub head_lines: usize,
    pub total_lines: usize,
    /// What goes with the head: the outline and how to read more.
    pub guide: String,
    /// Tokens of the whole file (o200k_base).
    pub file_tokens: usize,
}

impl FirstRead {
    /// The head then the guide, as one text (for a CLI that takes one replacement text).
    pub fn text(&self) -> String {
        format!(
            "{}\n--- lines 1-{} of {} shown above ---\n{}",
            self.head.trim_end_matches('\n'),
            self.head_lines,
            self.total_lines,
            self.guide
        )
    }
}

/// The file a command prints whole: `cat FILE`, also as a shell's `-c` script without shell
/// syntax (`bash -c 'cat src/lib.rs'`, the form a routed command runs in).
pub fn whole_file_read(argv: &[String]) -> Option<String> {
    let words: Vec<String> = match argv {
        [sh, c, script]
            if matches!(
                Path::new(sh).file_name().and_then(|n| n.to_str()),
                Some("bash" | "sh")
            ) && c == "-c" =>
        {
            if script.contains(|ch: char| "|&;<>()$`\\\"'*?[]{}~#!\n".contains(ch)) {
                return None;
            }
            script.split_whitespace().map(String::from).collect()
        }
        _ => argv.to_vec(),
    };
    match words.as_slice() {
        [cat, file] if cat == "cat" && !file.starts_with('-') => Some(file.clone()),
        [cat, dd, file] if cat == "cat" && dd == "--" => Some(file.clone()),
        _ => None,
    }
}

/// The outline shown is cut at this many lines (a file of thousands of definitions).
const OUTLINE_MAX_LINES: usize = 200;
/// At most this many lines of the file itself come first.
const HEAD_MAX_LINES: usize = 200;

/// `text`, the whole of the file `name`, answered outline first when it is over `threshold`
/// tokens; `None` when it is small enough to show whole.
pub fn first_read(name: &str, text: &str, threshold: usize) -> Option<FirstRead> {
    // A token is at least one byte: a text this short is under the threshold.
    if text.len() <= threshold {
        return None;
    }
    // One exact count of the file: the outline's (its total is the file's).
    let src = Source::from_bytes(name, text.as_bytes().to_vec());
    let o = outline_with(&src, None, Encoding::O200kBase, true);
    let file_tokens = o.tokens;
    if file_tokens <= threshold {
        return None;
    }
    // About a quarter of the threshold's worth of the file itself (four bytes a token), and
    // half of it of outline (below): the answer stays well under the threshold.
    let head_budget = threshold.max(1);
    let mut head_end = 0;
    let mut head_lines = 0;
    for line in text.split_inclusive('\n') {
        if head_lines > 0 && (head_end + line.len() > head_budget || head_lines >= HEAD_MAX_LINES) {
            break;
        }
        head_end += line.len();
        head_lines += 1;
    }
    // One huge line (minified code, data): nothing to show less of.
    if head_end >= text.len() {
        return None;
    }
    let total_lines = text.lines().count();
    let outline_budget = threshold.saturating_mul(2);
    let mut rendered: Vec<&str> = Vec::new();
    let full = render(&o);
    let mut used = 0;
    for (i, l) in full.lines().enumerate() {
        if i > OUTLINE_MAX_LINES || (i > 0 && used + l.len() > outline_budget) {
            rendered.push("  … (outline cut; `baton outline FILE` has all of it)");
            break;
        }
        used += l.len() + 1;
        rendered.push(l);
    }
    let shown = if Path::new(name).extension().is_some() {
        name.to_string()
    } else {
        format!("'{name}'")
    };
    let guide = format!(
        "baton: {shown} is {total_lines} lines, {file_tokens} tokens (over the {threshold}-token \
         read threshold): lines 1-{head_lines} were shown, and its outline follows (each \
         definition's line range).\n\
         Read more: a line range (the read tool's offset/limit or start_line/end_line; \
         `sed -n 'A,Bp' FILE`), one definition whole (`baton extract FILE --symbol NAME`), or \
         all of it as the range 1-{total_lines} (offset 1 and limit {total_lines}).\n{}\n",
        rendered.join("\n")
    );
    Some(FirstRead {
        head: text[..head_end].to_string(),
        head_lines,
        total_lines,
        guide,
        file_tokens,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn big_rust() -> String {
        let mut s = String::from("//! A module.\n\nuse std::fmt;\n\n");
        for i in 0..150 {
            s.push_str(&format!(
                "/// Function number {i}.\npub fn function_{i}(x: u32) -> u32 {{\n    let y = x + {i};\n    let z = y.wrapping_mul(31).rotate_left(3);\n    if z % 7 == 0 {{\n        return z;\n    }}\n    let w = (z ^ y).count_ones();\n    w * 2\n}}\n\n"
            ));
        }
        s
    }

    #[test]
    fn a_large_file_is_answered_with_its_head_and_outline() {
        let text = big_rust();
        let r = first_read("src/lib.rs", &text, 2000).unwrap();
        assert!(text.starts_with(&r.head));
        assert_eq!(r.file_tokens, Encoding::O200kBase.count(&text));
        assert!(r.guide.contains(&format!("{} tokens", r.file_tokens)));
        assert_eq!(r.total_lines, text.lines().count());
        assert_eq!(r.head.lines().count(), r.head_lines);
        // About half the threshold of the file itself.
        assert!(
            r.head.len() <= 4000 && r.head_lines > 10,
            "{}",
            r.head_lines
        );
        assert!(r.guide.contains("function_0("), "{}", r.guide);
        assert!(r.guide.contains("baton extract FILE --symbol NAME"));
        assert!(
            r.guide
                .contains(&format!("lines 1-{} were shown", r.head_lines))
        );
        let shown = Encoding::O200kBase.count(&r.text());
        assert!(shown * 4 < r.file_tokens, "{shown} of {}", r.file_tokens);
        // The outline's line ranges are the file's.
        let at = text
            .lines()
            .position(|l| l.starts_with("pub fn function_5("))
            .unwrap()
            + 1;
        assert!(r.guide.contains(&format!("{at}-{}", at + 8)), "{}", r.guide);
    }

    #[test]
    fn only_a_plain_cat_of_one_file_is_a_whole_file_read() {
        let v = |a: &[&str]| whole_file_read(&a.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(v(&["cat", "src/lib.rs"]).as_deref(), Some("src/lib.rs"));
        assert_eq!(
            v(&["bash", "-c", "cat src/lib.rs"]).as_deref(),
            Some("src/lib.rs")
        );
        assert_eq!(v(&["cat", "--", "-odd"]).as_deref(), Some("-odd"));
        for not in [
            &["cat", "a", "b"][..],
            &["cat", "-n", "a"],
            &["head", "a"],
            &["bash", "-c", "cat a | grep x"],
            &["bash", "-c", "cat $F"],
            &["bash", "-c", "cat a > b"],
        ] {
            assert_eq!(v(not), None, "{not:?}");
        }
    }

    #[test]
    fn a_small_file_is_shown_whole() {
        assert_eq!(first_read("a.rs", "fn main() {}\n", 2000), None);
        let text = big_rust();
        assert_eq!(first_read("src/lib.rs", &text, 1_000_000), None);
    }

    #[test]
    fn a_file_of_one_long_line_is_left_whole() {
        // Its first line is all of it: an outline-first answer would show more, not less.
        assert_eq!(first_read("data.min.js", &"x".repeat(50_000), 2000), None);
        let two = format!("{}\n{}\n", "a".repeat(30_000), "b".repeat(30_000));
        let r = first_read("data.txt", &two, 2000).unwrap();
        assert_eq!((r.head_lines, r.total_lines), (1, 2));
    }
}

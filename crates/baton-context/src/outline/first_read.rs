//! Outline-first reads: an agent's read of a whole large file (Claude's Read, gemini's
//! read_file, `cat FILE`) is answered with the file's first lines, its outline (each
//! definition's line range) and how to read more — a line range, one definition whole, or
//! the whole file by asking again — so the agent still edits what it needs without holding
//! every line of the file.

use std::path::Path;

use super::{Source, outline_with, render_within};
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
    /// The guide then the head, as one text (for a CLI that takes one replacement text):
    /// the structure first, so that whatever cuts the answer short leaves it whole.
    pub fn text(&self) -> String {
        format!(
            "{}--- lines 1-{} of {} ---\n{}",
            self.guide, self.head_lines, self.total_lines, self.head
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

/// At most this many lines of the file itself come with the outline.
const HEAD_MAX_LINES: usize = 200;

/// Characters of an outline-first answer, at most: what every CLI shows of a hook's answer
/// whole (measured with claude-code 2.1.197, codex 0.171 and gemini 0.61 against the model
/// double). claude saves a hook's `additionalContext` of more than 10,000 characters to a
/// file and shows the model a 2 KB preview of it; codex cuts a command's output to about
/// 10 KB, head and tail; gemini showed a 60,000-character answer whole, where the reason to
/// outline is to show less.
pub const ANSWER_MAX_CHARS: usize = 9_500;

/// `text`, the whole of the file `name`, answered outline first when it is over `threshold`
/// tokens; `None` when it is small enough to show whole. The answer fits [`ANSWER_MAX_CHARS`]
/// (and three characters a token of the threshold): the file's structure first, at most three
/// quarters of it, said more briefly until it fits ([`super::render_within`]); its first lines
/// in what is left.
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
    let total_lines = text.lines().count();
    let shown = if Path::new(name).extension().is_some() {
        name.to_string()
    } else {
        format!("'{name}'")
    };
    let intro = |head_lines: usize| {
        format!(
            "baton: {shown} is {total_lines} lines, {file_tokens} tokens (over the {threshold}-token \
             read threshold): lines 1-{head_lines} were shown, and its outline follows (each \
             definition's line range).\n\
             Read more: a line range (the read tool's offset/limit or start_line/end_line; \
             `sed -n 'A,Bp' FILE`), one definition whole (`baton extract FILE --symbol NAME`), or \
             all of it as the range 1-{total_lines} (offset 1 and limit {total_lines}).\n"
        )
    };
    // Never more than the CLIs show whole, nor (at about three characters a token) more
    // than the threshold itself.
    let max = ANSWER_MAX_CHARS.min(threshold.saturating_mul(3));
    // The widest the intro can be (its head line count at most the file's).
    let intro_max = intro(total_lines).chars().count();
    let room = (max * 3 / 4).saturating_sub(intro_max);
    let (outline, _) = render_within(&o, room);
    let outline_chars = outline.chars().count();
    // What the structure left, for the file's own first lines (and the line between).
    let head_budget = threshold
        .max(1)
        .min(max.saturating_sub(intro_max + outline_chars + 60));
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
    Some(FirstRead {
        head: text[..head_end].to_string(),
        head_lines,
        total_lines,
        guide: format!("{}{outline}", intro(head_lines)),
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
        // Every definition named, with its line range, however briefly.
        for i in [0, 75, 149] {
            assert!(
                r.guide.contains(&format!("fn function_{i}\n")),
                "{}",
                r.guide
            );
        }
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
    fn the_answer_fits_what_the_clis_show_structure_first() {
        let mut text = String::new();
        for i in 0..2_000 {
            text.push_str(&format!(
                "pub fn f_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
            ));
        }
        let r = first_read("src/many.rs", &text, 6000).unwrap();
        let all = r.text();
        assert!(
            all.chars().count() <= ANSWER_MAX_CHARS,
            "{}",
            all.chars().count()
        );
        assert!(r.guide.chars().count() <= ANSWER_MAX_CHARS * 3 / 4);
        assert!(all.starts_with("baton: src/many.rs is 8000 lines"), "{all}");
        // The structure as far as it fits, saying what it left out and where the rest is.
        assert!(r.guide.contains("f_0:1 f_1:5"), "{}", r.guide);
        assert!(
            r.guide.contains("`baton outline FILE` lists them all"),
            "{}",
            r.guide
        );
        // The file's own first lines after it, exactly.
        assert!(r.head_lines >= 1 && text.starts_with(&r.head));
        assert!(all.ends_with(&r.head));
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

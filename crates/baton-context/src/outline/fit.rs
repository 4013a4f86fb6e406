//! An outline made to fit an answer a CLI shows whole: the same file's structure, said more
//! briefly at each step until it fits — docs and token counts dropped, nested members folded
//! onto their parent's line, signatures down to names, names packed with their first line —
//! and cut, saying so, only when even that does not fit.

use std::fmt::Write;

use super::render::{brief_members, render};
use super::{FileOutline, Item, SIG_MAX, cut};

/// How briefly an outline is said, from [`render`]'s full form on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Brevity {
    /// [`render`]: every definition, its signature, tokens and doc.
    Full,
    /// Every definition with its line range and signature.
    Signatures,
    /// Top-level definitions with their signatures; nested ones by name on their line.
    Folded,
    /// Top-level definitions by kind and name, with their line range.
    Names,
    /// Top-level names and first lines, packed.
    Packed,
}

impl Brevity {
    /// Every form, fullest first.
    pub const ALL: [Brevity; 5] = [
        Brevity::Full,
        Brevity::Signatures,
        Brevity::Folded,
        Brevity::Names,
        Brevity::Packed,
    ];
}

/// The outline of `o` in at most `max` characters: the fullest [`Brevity`] that fits, then
/// [`Brevity::Packed`] cut with a line saying how many definitions were left out.
pub fn render_within(o: &FileOutline, max: usize) -> (String, Brevity) {
    for b in Brevity::ALL {
        let text = render_as(o, b);
        if text.chars().count() <= max {
            return (text, b);
        }
    }
    let text = render_as(o, Brevity::Packed);
    let mut out = String::new();
    let total = text.lines().count();
    for (n, line) in text.lines().enumerate() {
        // Room for the line that says what was cut.
        if out.chars().count() + line.chars().count() + 100 > max {
            let _ = writeln!(
                out,
                "  … {} more lines of names (`baton outline FILE` lists them all)",
                total - n
            );
            break;
        }
        out.push_str(line);
        out.push('\n');
    }
    (out, Brevity::Packed)
}

fn range(it: &Item) -> String {
    if it.end_line > it.start_line {
        format!("{}-{}", it.start_line, it.end_line)
    } else {
        it.start_line.to_string()
    }
}

/// Names of the items under `i` (nested at any depth), with their first line.
fn nested(o: &FileOutline, i: usize) -> Vec<String> {
    let top = &o.items[i];
    o.items
        .iter()
        .skip(i + 1)
        .take_while(|m| m.start < top.end && m.depth > top.depth)
        .map(|m| format!("{}:{}", m.name, m.start_line))
        .collect()
}

fn render_as(o: &FileOutline, b: Brevity) -> String {
    if b == Brevity::Full {
        return render(o);
    }
    let full = render(o);
    // The first line (file, language, size) stays as it is.
    let mut out = full.lines().next().unwrap_or_default().to_string();
    out.push('\n');
    for n in &o.notes {
        let _ = writeln!(out, "  note: {n}");
    }
    for h in &o.head {
        let _ = writeln!(out, "  | {h}");
    }
    let mut packed: Vec<String> = Vec::new();
    for (i, it) in o.items.iter().enumerate() {
        match b {
            Brevity::Signatures if !it.brief => {
                let _ = write!(
                    out,
                    "{}{} {}",
                    "  ".repeat(it.depth),
                    range(it),
                    cut(&it.signature, SIG_MAX)
                );
                let members = brief_members(o, i);
                if !members.is_empty() {
                    let _ = write!(out, ": {}", members.join(" "));
                }
                out.push('\n');
            }
            Brevity::Folded if it.depth == 0 => {
                let _ = write!(out, "{} {}", range(it), cut(&it.signature, SIG_MAX));
                let inner = nested(o, i);
                if !inner.is_empty() {
                    let _ = write!(out, ": {}", inner.join(" "));
                }
                out.push('\n');
            }
            Brevity::Names if it.depth == 0 => {
                let _ = write!(out, "{} {} {}", range(it), it.kind, it.name);
                let inner = nested(o, i).len();
                if inner > 0 {
                    let _ = write!(out, " (+{inner} inside)");
                }
                out.push('\n');
            }
            Brevity::Packed if it.depth == 0 => {
                packed.push(format!("{}:{}", it.name, it.start_line))
            }
            _ => {}
        }
    }
    if b == Brevity::Packed {
        let _ = writeln!(out, "  (name:first line of each top-level definition)");
        let mut line = String::new();
        for p in packed {
            if line.len() + p.len() > 100 {
                let _ = writeln!(out, "{}", line.trim_end());
                line.clear();
            }
            line.push_str(&p);
            line.push(' ');
        }
        if !line.is_empty() {
            let _ = writeln!(out, "{}", line.trim_end());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::outline::{Source, outline_with};
    use crate::tokens::Encoding;

    fn outline(n: usize) -> FileOutline {
        let mut s = String::from("//! A module.\n\n");
        for i in 0..n {
            s.push_str(&format!(
                "/// The type number {i}, documented at some length so that docs weigh.\npub struct Thing{i} {{\n    a: u32,\n}}\n\nimpl Thing{i} {{\n    /// Makes one.\n    pub fn new_{i}(a: u32) -> Self {{\n        Thing{i} {{ a }}\n    }}\n\n    pub fn get_{i}(&self) -> u32 {{\n        self.a\n    }}\n}}\n\n"
            ));
        }
        let src = Source::from_bytes("src/things.rs", s.into_bytes());
        outline_with(&src, None, Encoding::O200kBase, false)
    }

    #[test]
    fn each_step_is_briefer_and_keeps_every_top_level_line_range() {
        let o = outline(60);
        let mut last = usize::MAX;
        for b in Brevity::ALL {
            let text = render_as(&o, b);
            assert!(text.len() < last, "{b:?} is not briefer");
            last = text.len();
            // The last type and its impl are named, with where they start.
            let at = o
                .items
                .iter()
                .find(|i| i.name == "Thing59")
                .unwrap()
                .start_line;
            assert!(text.contains(&at.to_string()), "{b:?}: {text}");
            assert!(text.contains("Thing59"), "{b:?}");
        }
        // Folded: the methods are on their impl's line, by name and line.
        let folded = render_as(&o, Brevity::Folded);
        let new0 = o
            .items
            .iter()
            .find(|i| i.name == "new_0")
            .unwrap()
            .start_line;
        assert!(folded.contains(&format!("new_0:{new0}")), "{folded}");
        assert!(
            !folded
                .lines()
                .any(|l| l.trim_start().contains("pub fn new_0"))
        );
    }

    #[test]
    fn the_fullest_form_that_fits_is_chosen_and_a_cut_says_so() {
        let o = outline(60);
        let (full, b) = render_within(&o, usize::MAX);
        assert_eq!((full, b), (render(&o), Brevity::Full));
        let (text, b) = render_within(&o, 4_000);
        assert!(text.chars().count() <= 4_000);
        assert!(b > Brevity::Full && b <= Brevity::Packed, "{b:?}");
        let (text, b) = render_within(&outline(600), 3_000);
        assert_eq!(b, Brevity::Packed);
        assert!(text.chars().count() <= 3_000, "{}", text.chars().count());
        assert!(
            text.contains("more lines of names (`baton outline FILE`"),
            "{text}"
        );
        assert!(text.contains("Thing0:"), "{text}");
    }
}

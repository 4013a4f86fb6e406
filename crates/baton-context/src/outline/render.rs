//! The outline as text, its cost, and the hint `baton mask` gives when a command only printed
//! a file.

use std::path::Path;

use super::{DOC_MAX, FileOutline, Lang, MAX_PARSE_BYTES, SIG_MAX, Source, cut, outline_with};
use crate::tokens::Encoding;

/// The outline as people (and agents) read it: one line per definition, indented by
/// nesting: `START-END signature [tokens]  // doc`; members of trait impls by name on their
/// impl's line.
pub fn render(o: &FileOutline) -> String {
    use std::fmt::Write;
    let mut body = String::new();
    let approx = if o.tokens_estimated { "~" } else { "" };
    for n in &o.notes {
        let _ = writeln!(body, "  note: {n}");
    }
    for h in &o.head {
        let _ = writeln!(body, "  | {h}");
    }
    for (i, it) in o.items.iter().enumerate() {
        if it.brief {
            continue;
        }
        let range = if it.end_line > it.start_line {
            format!("{}-{}", it.start_line, it.end_line)
        } else {
            it.start_line.to_string()
        };
        let _ = write!(
            body,
            "{}{range} {} [{approx}{}]",
            "  ".repeat(it.depth),
            cut(&it.signature, SIG_MAX),
            it.tokens
        );
        if let Some(d) = &it.doc {
            let _ = write!(body, "  // {}", doc_summary(d));
        }
        let members = brief_members(o, i);
        if !members.is_empty() {
            let _ = write!(body, ": {}", members.join(" "));
        }
        body.push('\n');
    }
    let tokens = if o.tokens_estimated {
        format!("~{} tokens, estimated; --exact-tokens for exact", o.tokens)
    } else {
        format!("{} tokens", o.tokens)
    };
    let what = match o.language {
        Some(l) => format!("{}, {} lines, {tokens}", l.name(), o.lines),
        None => format!("{} lines, {} bytes, {tokens}", o.lines, o.bytes),
    };
    format!("{}  ({what})\n{body}", o.file)
}

/// The members of item `i` shown by name on its line (`name:line`): a trait impl's.
pub(super) fn brief_members(o: &FileOutline, i: usize) -> Vec<String> {
    let it = &o.items[i];
    o.items
        .iter()
        .skip(i + 1)
        .take_while(|m| m.start < it.end)
        .filter(|m| m.brief && m.parent == Some(i))
        .map(|m| format!("{}:{}", m.name, m.start_line))
        .collect()
}

/// A doc line as the outline shows it: its first sentence, cut on a word boundary.
pub(super) fn doc_summary(d: &str) -> String {
    let first = match d.find(". ") {
        Some(i) => &d[..i],
        None => d.trim_end_matches('.'),
    };
    if first.chars().count() <= DOC_MAX {
        return first.to_string();
    }
    let mut end = first
        .char_indices()
        .nth(DOC_MAX)
        .map_or(first.len(), |(i, _)| i);
    if let Some(space) = first[..end].rfind(' ')
        && space > DOC_MAX / 2
    {
        end = space;
    }
    format!("{}…", first[..end].trim_end_matches([',', ';', ':', ' ']))
}

/// The token cost of a rendered outline line set vs the file: the ratio `outline / file`.
pub fn ratio(o: &FileOutline) -> f64 {
    if o.tokens == 0 {
        0.0
    } else {
        o.outline_tokens as f64 / o.tokens as f64
    }
}

/// For `baton mask`: when the masked command only printed (part of) one source file that has an
/// outline (`cat F`, `head -n 200 F`, `tail F`, `sed -n '1,400p' F`), say that an outline is
/// cheaper: `{"command": "baton outline F", "outline_tokens": N, "file_tokens": M,
/// "tokens_estimated": true}`.
pub fn hint_for_command(argv: &[String]) -> Option<serde_json::Value> {
    let file = single_file_operand(argv)?;
    let path = Path::new(file);
    Lang::from_path(path)?;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() as usize > MAX_PARSE_BYTES {
        return None;
    }
    let src = Source::read(path).ok()?;
    // Estimated, as the masked output's own figure mostly is: a hint is not worth loading
    // the vocabulary for (`mask::tally`).
    let o = outline_with(&src, None, Encoding::O200kBase, false);
    Some(serde_json::json!({
        "command": format!("baton outline {}", shell_word(file)),
        "outline_tokens": o.outline_tokens,
        "file_tokens": o.tokens,
        "tokens_estimated": true,
    }))
}

/// Quote a path for the suggested command when it needs it.
fn shell_word(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./+,:@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The one file a `cat`/`head`/`tail`/`sed -n …p` invocation prints, if it prints exactly one.
pub(super) fn single_file_operand(argv: &[String]) -> Option<&str> {
    let (prog, args) = argv.split_first()?;
    let prog = Path::new(prog).file_name()?.to_str()?;
    let mut operands: Vec<&str> = Vec::new();
    let mut it = args.iter();
    let mut script_given = false;
    while let Some(a) = it.next() {
        match (prog, a.as_str()) {
            (_, "--") => {
                operands.extend(it.by_ref().map(String::as_str));
                break;
            }
            ("head" | "tail", "-n" | "-c" | "--lines" | "--bytes") => {
                it.next();
            }
            ("sed", "-e" | "--expression") => {
                script_given = true;
                it.next();
            }
            ("sed", "-f" | "--file" | "-i" | "--in-place") => return None,
            (_, a) if a.starts_with('-') && a.len() > 1 => {}
            (_, a) => operands.push(a),
        }
    }
    match prog {
        "cat" | "head" | "tail" => {}
        "sed" => {
            // Without -e, the first operand is the script; it must only print (`p`).
            if !script_given {
                if operands.is_empty() {
                    return None;
                }
                let script = operands.remove(0);
                if !script.trim_end().ends_with('p') {
                    return None;
                }
            }
        }
        _ => return None,
    }
    match operands.as_slice() {
        [one] => Some(one),
        _ => None,
    }
}

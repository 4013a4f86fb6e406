//! The line grammar shared by every signal set: which lines of a text can be signals (fences,
//! quotes, indentation) and how one line splits into keyword, id and detail.

use super::normalize_id;

/// A set of keywords to recognise, tried longest first.
pub(super) struct Keywords<'a> {
    /// (index in the caller's list, the keyword's words), longest keyword first.
    entries: Vec<(usize, Vec<&'a str>)>,
    /// Whether a leading `Signal:` / `Fail signal:` label is tolerated.
    label: bool,
    /// The keyword after which a leading `Epic` word is grammar, not id (`RETRO COMPLETE:
    /// Epic 42` names `42`).
    epic_word_after: Option<usize>,
}

impl<'a> Keywords<'a> {
    /// `keywords` in the caller's order: among keywords of equal length the first is tried
    /// first, so a keyword listed twice keeps its first index. Empty keywords are dropped.
    pub(super) fn new(keywords: impl IntoIterator<Item = &'a str>) -> Self {
        let mut entries: Vec<(usize, Vec<&'a str>)> = keywords
            .into_iter()
            .enumerate()
            .map(|(i, k)| (i, k.split_whitespace().collect::<Vec<_>>()))
            .filter(|(_, words)| !words.is_empty())
            .collect();
        // Longest first (`REVIEW PASSED WITH FIXES` before `REVIEW PASSED`); the sort is stable.
        entries.sort_by_key(|(_, words)| {
            std::cmp::Reverse(words.iter().map(|w| w.len() + 1).sum::<usize>())
        });
        Keywords {
            entries,
            label: false,
            epic_word_after: None,
        }
    }

    pub(super) fn with_label(mut self) -> Self {
        self.label = true;
        self
    }

    pub(super) fn with_epic_word_after(mut self, index: usize) -> Self {
        self.epic_word_after = Some(index);
        self
    }

    /// The keyword `s` starts with (its index) and the text after it and its separator.
    fn strip<'s>(&self, s: &'s str) -> Option<(usize, &'s str)> {
        'entries: for (index, words) in &self.entries {
            let mut rest = s;
            for (i, word) in words.iter().enumerate() {
                if i > 0 {
                    // Any whitespace between words, but some.
                    let t = rest.trim_start();
                    if t.len() == rest.len() {
                        continue 'entries;
                    }
                    rest = t;
                }
                match rest.get(..word.len()) {
                    Some(head) if head.eq_ignore_ascii_case(word) => rest = &rest[word.len()..],
                    _ => continue 'entries,
                }
            }
            // A whole word: `REVIEW PASSEDX` is no keyword.
            let ends_in_word = words
                .last()
                .and_then(|w| w.chars().last())
                .is_some_and(is_word);
            if ends_in_word && rest.chars().next().is_some_and(is_word) {
                continue;
            }
            let rest = rest.trim_start();
            let rest = rest
                .strip_prefix([':', '-', '–', '—'])
                .unwrap_or(rest)
                .trim();
            return Some((*index, rest));
        }
        None
    }
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `s` without a leading `Signal:` or `Fail signal:` label (case-insensitive), if it has one.
fn strip_label(s: &str) -> Option<&str> {
    let lower = |n: usize| s.get(..n).map(str::to_ascii_lowercase);
    let mut rest = s;
    if lower(4).as_deref() == Some("fail") {
        let t = s[4..].trim_start();
        if t.len() == s.len() - 4 {
            return None;
        }
        rest = t;
    }
    let head = rest.get(..6)?;
    if !head.eq_ignore_ascii_case("signal") {
        return None;
    }
    rest[6..]
        .trim_start()
        .strip_prefix(':')
        .map(str::trim_start)
}

/// One signal line, before the caller gives it meaning.
#[derive(Debug)]
pub(super) struct Raw {
    /// Index of the keyword in the list [`Keywords::new`] was given.
    pub index: usize,
    /// The id as written (punctuation and backticks trimmed, not normalised).
    pub id: String,
    pub detail: Option<String>,
    /// 1-based.
    pub line: usize,
}

/// Parse one line as a signal (no fence context: [`scan`] handles that).
pub(super) fn parse_line(raw: &str, line: usize, keywords: &Keywords) -> Option<Raw> {
    let indent = raw.len() - raw.trim_start_matches(' ').len();
    if indent > 3 || raw.starts_with('\t') {
        return None;
    }
    let s = raw.trim();
    if s.starts_with('>') || s.starts_with('`') {
        return None;
    }
    let s = s.trim_start_matches('#').trim_start();
    // Emphasis markers never belong to the grammar; ids do not contain `*`.
    let cleaned: String = s.replace('*', "");
    let mut s = cleaned.trim();
    s = s.strip_prefix("__").unwrap_or(s);
    s = s.strip_suffix("__").unwrap_or(s).trim();

    let labelled = keywords
        .label
        .then(|| strip_label(s))
        .flatten()
        .and_then(|t| keywords.strip(t));
    let (index, mut rest) = labelled.or_else(|| keywords.strip(s))?;

    if keywords.epic_word_after == Some(index) {
        // `RETRO COMPLETE: Epic 42`: the word Epic is grammar, not id.
        if let (Some(word), Some(tail)) = (rest.get(..4), rest.get(4..))
            && word.eq_ignore_ascii_case("epic")
            && tail.starts_with(' ')
        {
            rest = tail.trim_start();
        }
    }
    // `Story 1.2` written with a space: join the word to the id (`Story story-1-2`: the id
    // already carries the word).
    let mut tokens = rest.splitn(2, char::is_whitespace);
    let mut id = tokens.next().unwrap_or("").to_string();
    let mut after = tokens.next().unwrap_or("").trim_start().to_string();
    if (id.eq_ignore_ascii_case("story") || id.eq_ignore_ascii_case("epic")) && !after.is_empty() {
        let mut t = after.splitn(2, char::is_whitespace);
        let next = t.next().unwrap_or("").to_string();
        let tail = t.next().unwrap_or("").trim_start().to_string();
        let repeats = next
            .get(..id.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(&id));
        id = if repeats {
            next
        } else {
            format!("{id}-{next}")
        };
        after = tail;
    }
    // Detail introduced by a dash or colon; `1.2:` glued to the id counts too.
    let mut glued_colon = false;
    if let Some(stripped) = id.strip_suffix(':') {
        id = stripped.to_string();
        glued_colon = true;
    }
    let id = id
        .trim_matches(['`', '"', '\''])
        .trim_end_matches(['.', ',', ';', ':', '!', '?'])
        .trim_matches(['`', '"', '\''])
        .to_string();
    if id.is_empty() || normalize_id(&id).is_empty() {
        return None;
    }
    let detail = {
        let d = after.trim();
        let d = if glued_colon {
            d
        } else {
            d.strip_prefix(['-', '–', '—', ':']).unwrap_or(d).trim()
        };
        let d = d.trim_end_matches(['.', '!']).trim();
        (!d.is_empty()).then(|| d.to_string())
    };
    Some(Raw {
        index,
        id,
        detail,
        line,
    })
}

/// What [`scan`] reports, in document order.
pub(super) enum Event<'t> {
    /// A line outside fenced code: (1-based line number, the line).
    Line(usize, &'t str),
    /// A closed fenced block: (1-based line of its opening fence, its content). Bodies over
    /// 64 KB are cut (a status block is small).
    Block(usize, &'t str),
}

/// Walk `text` line by line, telling fenced blocks (```` ``` ```` or `~~~`, closed by a fence of
/// the same character at least as long) from the lines outside them. With `blocks` false no
/// [`Event::Block`] is reported.
pub(super) fn scan(text: &str, blocks: bool, mut on: impl FnMut(Event<'_>)) {
    let mut open: Option<(char, usize, usize)> = None; // fence char, length, opening line
    let mut body = String::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if let Some((c, len, start)) = open {
            let closes = fence(line).is_some_and(|(fc, fl)| {
                fc == c && fl >= len && line.trim().chars().all(|x| x == c)
            });
            if closes {
                open = None;
                if blocks {
                    on(Event::Block(start, &body));
                }
                body.clear();
            } else if blocks && body.len() < 64 * 1024 {
                body.push_str(line);
                body.push('\n');
            }
            continue;
        }
        if let Some((c, len)) = fence(line) {
            open = Some((c, len, n));
            body.clear();
            continue;
        }
        on(Event::Line(n, line));
    }
}

/// A fence opener: at most 3 spaces, then 3+ backticks or tildes.
fn fence(line: &str) -> Option<(char, usize)> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let t = &line[indent..];
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

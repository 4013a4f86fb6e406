//! Id normalisation: when two ids written by people and agents name the same subject.

/// Normalise an id for comparison.
///
/// Lowercase; surrounding backticks, quotes and trailing punctuation dropped; a leading
/// `story`/`epic` word or prefix (`story-1-2`, `Story 1.2`, `epic-42`) dropped; `-`, `_` and `.`
/// all become `.`; leading zeros of numeric parts dropped. So `story-1-2`, `1.2`, `1-2`,
/// `Story_01.2` all name the same story. `/` stays significant and each of its segments is
/// normalised on its own (empty segments dropped): `add-login/3` is `add_login/03` but neither
/// `add-login/30` nor `add-login`. Two ids that differ only in those respects are the same
/// id; any other difference makes them different.
pub fn normalize_id(id: &str) -> String {
    let mut s = id
        .trim()
        .trim_start_matches(['`', '"', '\'', '*'])
        .trim_end_matches(|c: char| {
            matches!(
                c,
                '`' | '"' | '\'' | '*' | '.' | ',' | ';' | ':' | '!' | '?' | ')' | ']'
            )
        })
        .to_lowercase();
    for prefix in ["story", "epic"] {
        if let Some(rest) = s.strip_prefix(prefix) {
            // Only a prefix when separated or followed by a number: `storyboard` stays.
            let separated = rest.starts_with([' ', '-', '_', '.', '#'])
                || rest.starts_with(|c: char| c.is_ascii_digit());
            let trimmed = rest.trim_start_matches([' ', '-', '_', '.', '#']);
            if separated && !trimmed.is_empty() {
                s = trimmed.to_string();
            }
            break;
        }
    }
    s.split('/')
        .map(segment)
        .filter(|seg| !seg.is_empty())
        .collect::<Vec<_>>()
        .join("/")
}

/// One `/`-separated part of an id: separators unified, numbers without leading zeros.
fn segment(s: &str) -> String {
    s.split(['-', '_', '.'])
        .filter(|p| !p.is_empty())
        .map(|p| {
            if p.bytes().all(|b| b.is_ascii_digit()) {
                let t = p.trim_start_matches('0');
                if t.is_empty() { "0" } else { t }
            } else {
                p
            }
        })
        .collect::<Vec<_>>()
        .join(".")
}

//! Story and epic ids: `1.2`, `1.14`, three-part `2.9.1` / `3.5.0`.
//!
//! Rule: the first number is always the epic, the rest numbers the story inside it, compared
//! part by part as integers. So `2.9.1` is epic 2's story `9.1` (BMAD inserts such stories
//! between 2.9 and 2.10 when a course correction adds work), and it sorts after 2.9 and before
//! 2.10. Epics themselves are whole numbers, as in BMAD's `epic-2` sprint-status keys.

use std::cmp::Ordering;
use std::fmt;
use std::sync::LazyLock;

use regex::Regex;

/// A story id: epic number, then one or two story numbers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoryId(Vec<u32>);

impl StoryId {
    /// From its parts; `None` unless there are 2 or 3 of them.
    pub fn new(parts: Vec<u32>) -> Option<StoryId> {
        (2..=3).contains(&parts.len()).then_some(StoryId(parts))
    }

    pub fn epic(&self) -> u32 {
        self.0[0]
    }

    pub fn parts(&self) -> &[u32] {
        &self.0
    }

    /// `1.2` / `3.5.0`; numbers are integers, so `1.02` reads as `1.2`.
    pub fn parse(s: &str) -> Option<StoryId> {
        let parts: Option<Vec<u32>> = s
            .trim()
            .split(['.', '-', '_'])
            .map(|p| p.parse::<u32>().ok())
            .collect();
        StoryId::new(parts?)
    }

    /// The `N-M` form used by v6 file names and sprint-status keys.
    pub fn dashed(&self) -> String {
        self.0
            .iter()
            .map(u32::to_string)
            .collect::<Vec<_>>()
            .join("-")
    }
}

impl fmt::Display for StoryId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for p in &self.0 {
            if !first {
                f.write_str(".")?;
            }
            first = false;
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl Ord for StoryId {
    /// Numeric, part by part; a shorter id first on a tie (2.9 before 2.9.0 before 2.9.1).
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.cmp(&other.0)
    }
}

impl PartialOrd for StoryId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl serde::Serialize for StoryId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn re(pattern: &str) -> Regex {
    // The patterns are constants of this file; a typo is caught by the unit tests.
    Regex::new(pattern).expect("valid regex")
}

/// `story-1.2`, `story_2.9.1-slug`, `story-1-2-slug`.
static STORY_PREFIXED: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^story[-_ ]?(\d{1,3})[.\-_](\d{1,3})(?:[.\-_](\d{1,3}))?(?:[.\-_ ](.*))?$")
});
/// v4: `1.2.slug`, `1.14-slug`, `2.9.1.slug`, `1.2` (dots only, so a date-like name is no id).
static DOTTED: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?:[.\-_ ](.*))?$"));
/// v6: `1-2-slug`, `3-5-0-slug`.
static DASHED: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\d{1,3})-(\d{1,3})(?:-(\d{1,3}))?(?:-(.*))?$"));
/// A story title: `Story 1.2: Title`, `Story 3.5.0 - Title`, v4's `Story 1.2 Title`.
static TITLE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^story\s+(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?(?:\s*([:\-–—.])\s*|\s+|$)(.*)$")
});
/// An epic: `Epic 1: Title`, `Epic 2 - Title`, `Epic 3`.
static EPIC_TITLE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^epic\s+(\d{1,3})(?:\s*[:\-–—.]\s*|\s+|$)(.*)$"));
/// An epic file: `epic-1`, `epic_2-slug`, `epic1`.
static EPIC_FILE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^epic[-_ ]?(\d{1,3})(?:[.\-_ ](.*))?$"));

fn num(c: Option<regex::Match<'_>>) -> Option<u32> {
    c.and_then(|m| m.as_str().parse().ok())
}

fn from_caps(c: &regex::Captures<'_>) -> Option<StoryId> {
    let mut parts = vec![num(c.get(1))?, num(c.get(2))?];
    if let Some(m) = c.get(3) {
        parts.push(m.as_str().parse().ok()?);
    }
    StoryId::new(parts)
}

/// The id a file name (without `.md`) carries, and the rest of the name (the slug).
pub fn from_file_stem(stem: &str) -> Option<(StoryId, String)> {
    for re in [&*STORY_PREFIXED, &*DOTTED, &*DASHED] {
        if let Some(c) = re.captures(stem) {
            let slug = c.get(4).map_or("", |m| m.as_str()).to_string();
            return Some((from_caps(&c)?, slug));
        }
    }
    None
}

/// A story heading's id and title. `explicit` is false for v4's `Story 1.2 Title` form, with
/// no separator after the id: such a title is trusted less (`Story 1.2 Validation Report`).
pub struct TitleId {
    pub id: StoryId,
    pub title: String,
    pub explicit: bool,
}

pub fn from_title(title: &str) -> Option<TitleId> {
    let c = TITLE.captures(title.trim())?;
    let rest = c.get(5).map_or("", |m| m.as_str()).trim().to_string();
    Some(TitleId {
        id: from_caps(&c)?,
        explicit: c.get(4).is_some() || rest.is_empty(),
        title: rest,
    })
}

/// An epic heading's number and title.
pub fn epic_from_title(title: &str) -> Option<(u32, String)> {
    let c = EPIC_TITLE.captures(title.trim())?;
    Some((
        num(c.get(1))?,
        c.get(2).map_or("", |m| m.as_str()).trim().to_string(),
    ))
}

/// An epic file name's number and slug.
pub fn epic_from_file_stem(stem: &str) -> Option<(u32, String)> {
    let c = EPIC_FILE.captures(stem)?;
    Some((
        num(c.get(1))?,
        c.get(2).map_or("", |m| m.as_str()).to_string(),
    ))
}

/// What the user typed for an epic: `1`, `epic-1`, `Epic 1`, `epic1`.
pub fn parse_epic_arg(s: &str) -> Option<u32> {
    let s = s.trim();
    let digits = s
        .strip_prefix("epic")
        .or_else(|| s.strip_prefix("Epic"))
        .or_else(|| s.strip_prefix("EPIC"))
        .unwrap_or(s)
        .trim_start_matches(['-', '_', ' ']);
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> StoryId {
        StoryId::parse(s).unwrap()
    }

    #[test]
    fn file_names() {
        let cases = [
            ("1.2.user-login", "1.2", "user-login"),
            ("1.14-payments", "1.14", "payments"),
            ("story-1.2", "1.2", ""),
            ("story-2.9.1", "2.9.1", ""),
            ("Story_1-2-auth", "1.2", "auth"),
            ("3-5-0-hotfix", "3.5.0", "hotfix"),
            ("1-2-user-auth", "1.2", "user-auth"),
            ("1-2-3d-viewer", "1.2", "3d-viewer"),
            ("2.9.1.inserted", "2.9.1", "inserted"),
        ];
        for (stem, want, slug) in cases {
            let (got, s) = from_file_stem(stem).unwrap_or_else(|| panic!("{stem}"));
            assert_eq!(got.to_string(), want, "{stem}");
            assert_eq!(s, slug, "{stem}");
        }
        for stem in [
            "README",
            "epic-1",
            "test-plan",
            "1",
            "story",
            "2024-01",
            "v1.2",
        ] {
            assert!(from_file_stem(stem).is_none(), "{stem}");
        }
    }

    #[test]
    fn titles() {
        let t = from_title("Story 3.5.0: Hot fix").unwrap();
        assert_eq!(
            (t.id.to_string(), t.title.as_str(), t.explicit),
            ("3.5.0".into(), "Hot fix", true)
        );
        let t = from_title("story 1.2 - Login").unwrap();
        assert_eq!(
            (t.id.to_string(), t.title.as_str(), t.explicit),
            ("1.2".into(), "Login", true)
        );
        let t = from_title("Story 1.2 Validation Report").unwrap();
        assert!(!t.explicit);
        assert!(from_title("Story 1.2").unwrap().explicit);
        assert!(from_title("Test plan for Story 1.2").is_none());
        assert!(from_title("Story time").is_none());
        assert_eq!(
            epic_from_title("Epic 2: Payments"),
            Some((2, "Payments".into()))
        );
        assert_eq!(epic_from_title("Epic 10"), Some((10, String::new())));
        assert_eq!(
            epic_from_file_stem("epic-3-checkout"),
            Some((3, "checkout".into()))
        );
        assert_eq!(parse_epic_arg("epic-4"), Some(4));
        assert_eq!(parse_epic_arg("Epic 4"), Some(4));
        assert_eq!(parse_epic_arg("2.9"), None);
    }

    #[test]
    fn numeric_order() {
        let mut ids = [
            id("1.10"),
            id("2.9.1"),
            id("1.2"),
            id("2.10"),
            id("2.9"),
            id("3.5.0"),
            id("1.9"),
        ];
        ids.sort();
        let got: Vec<String> = ids.iter().map(ToString::to_string).collect();
        assert_eq!(got, ["1.2", "1.9", "1.10", "2.9", "2.9.1", "2.10", "3.5.0"]);
        assert_eq!(id("3.5.0").epic(), 3);
        assert_eq!(id("3.5.0").dashed(), "3-5-0");
    }
}

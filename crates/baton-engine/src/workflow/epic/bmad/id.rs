//! Story and epic ids: `1.2`, `1.14`, three-part `2.9.1` / `3.5.0`.
//!
//! Epics are whole numbers (`epic-2`) or decimal ones (`epic 2.9`, `epic 3.5`: an epic
//! inserted between 3 and 4 by a course correction, with its own epic file and story folder,
//! and sprint-status keys `epic-3-5`, `3-5-0-…`). Rule for a three-part story id `a.b.c`: it
//! belongs to epic `a.b` when the project declares that epic (an `Epic 3.5` heading, an
//! `epic-3.5` file or folder, an `epic-3-5` sprint key), else to epic `a` as its story `b.c`
//! (BMAD inserts such stories between 2.9 and 2.10). Two-part ids `a.b` are epic `a`'s. Ids
//! compare part by part as integers: 2.9 < 2.9.1 < 2.10.

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
        dashed(&self.0)
    }
}

/// An epic id: `3`, or a decimal one `3.5`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EpicId(Vec<u32>);

impl EpicId {
    pub fn whole(n: u32) -> EpicId {
        EpicId(vec![n])
    }

    /// From one or two numbers.
    pub fn new(parts: Vec<u32>) -> Option<EpicId> {
        (1..=2).contains(&parts.len()).then_some(EpicId(parts))
    }

    /// `3`, `3.5`, `3-5` (numbers as integers).
    pub fn parse(s: &str) -> Option<EpicId> {
        let parts: Option<Vec<u32>> = s
            .trim()
            .split(['.', '-', '_'])
            .map(|p| p.parse::<u32>().ok())
            .collect();
        EpicId::new(parts?)
    }

    pub fn is_decimal(&self) -> bool {
        self.0.len() == 2
    }

    /// `3-5`: as in sprint-status keys (`epic-3-5`, `epic-3-5-retrospective`).
    pub fn dashed(&self) -> String {
        dashed(&self.0)
    }
}

impl fmt::Display for EpicId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&dotted(&self.0))
    }
}

impl serde::Serialize for EpicId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

fn dotted(parts: &[u32]) -> String {
    parts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn dashed(parts: &[u32]) -> String {
    parts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join("-")
}

impl StoryId {
    /// The epic the story belongs to, given the decimal epics the project declares.
    pub fn epic_in(&self, declared: &std::collections::BTreeSet<EpicId>) -> EpicId {
        if self.0.len() == 3 {
            let decimal = EpicId(self.0[..2].to_vec());
            if declared.contains(&decimal) {
                return decimal;
            }
        }
        EpicId::whole(self.0[0])
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
/// An epic: `Epic 1: Title`, `Epic 2 - Title`, `Epic 3`, `Epic 3.5: Title`.
static EPIC_TITLE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^epic\s+(\d{1,3})(?:\.(\d{1,3}))?(?:\s*[:\-–—.]\s*|\s+|$)(.*)$"));
/// An epic file or folder: `epic-1`, `epic_2-slug`, `epic1`, `epic-3.5-slug`.
static EPIC_FILE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^epic[-_ ]?(\d{1,3})(?:\.(\d{1,3}))?(?:[.\-_ ](.*))?$"));
/// An epic's sprint-status key: `epic-3`, `epic-3-5`, and their `-retrospective`.
static EPIC_KEY: LazyLock<Regex> =
    LazyLock::new(|| re(r"^epic-(\d{1,3})(?:[-.](\d{1,3}))?(-retrospective)?$"));

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

fn epic_caps(c: &regex::Captures<'_>) -> Option<EpicId> {
    let mut parts = vec![num(c.get(1))?];
    if let Some(m) = c.get(2) {
        parts.push(m.as_str().parse().ok()?);
    }
    EpicId::new(parts)
}

/// An epic heading's id and title.
pub fn epic_from_title(title: &str) -> Option<(EpicId, String)> {
    let c = EPIC_TITLE.captures(title.trim())?;
    Some((
        epic_caps(&c)?,
        c.get(3).map_or("", |m| m.as_str()).trim().to_string(),
    ))
}

/// An epic file's (or folder's) id and slug.
pub fn epic_from_file_stem(stem: &str) -> Option<(EpicId, String)> {
    let c = EPIC_FILE.captures(stem)?;
    Some((
        epic_caps(&c)?,
        c.get(3).map_or("", |m| m.as_str()).to_string(),
    ))
}

/// A sprint-status key of an epic (`epic-3-5`) or of its retrospective
/// (`epic-3-5-retrospective`, the bool).
pub fn epic_from_key(key: &str) -> Option<(EpicId, bool)> {
    let c = EPIC_KEY.captures(key)?;
    Some((epic_caps(&c)?, c.get(3).is_some()))
}

/// What the user typed for an epic: `1`, `epic-1`, `Epic 1`, `epic1`, `3.5`, `epic-3.5`.
pub fn parse_epic_arg(s: &str) -> Option<EpicId> {
    let s = s.trim();
    let digits = s
        .strip_prefix("epic")
        .or_else(|| s.strip_prefix("Epic"))
        .or_else(|| s.strip_prefix("EPIC"))
        .unwrap_or(s)
        .trim_start_matches(['-', '_', ' ']);
    EpicId::parse(digits)
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
        let e = |s: &str| EpicId::parse(s).unwrap();
        assert_eq!(
            epic_from_title("Epic 2: Payments"),
            Some((e("2"), "Payments".into()))
        );
        assert_eq!(epic_from_title("Epic 10"), Some((e("10"), String::new())));
        assert_eq!(
            epic_from_title("Epic 3.5: Help overlay"),
            Some((e("3.5"), "Help overlay".into()))
        );
        assert_eq!(
            epic_from_file_stem("epic-3-checkout"),
            Some((e("3"), "checkout".into()))
        );
        assert_eq!(
            epic_from_file_stem("epic-3.5-help-overlay"),
            Some((e("3.5"), "help-overlay".into()))
        );
        assert_eq!(epic_from_key("epic-3-5"), Some((e("3.5"), false)));
        assert_eq!(epic_from_key("epic-3-retrospective"), Some((e("3"), true)));
        assert_eq!(
            epic_from_key("epic-2-9-retrospective"),
            Some((e("2.9"), true))
        );
        assert_eq!(epic_from_key("epic-3-notes"), None);
        assert_eq!(parse_epic_arg("epic-4"), Some(e("4")));
        assert_eq!(parse_epic_arg("Epic 4"), Some(e("4")));
        assert_eq!(parse_epic_arg("2.9"), Some(e("2.9")));
        assert_eq!(parse_epic_arg("epic-3.5").unwrap().to_string(), "3.5");
        assert_eq!(e("3.5").dashed(), "3-5");
        assert_eq!(parse_epic_arg("2.9.1"), None);
        assert_eq!(parse_epic_arg("x"), None);
    }

    #[test]
    fn a_three_part_story_is_in_its_decimal_epic_when_the_project_has_it() {
        let declared: std::collections::BTreeSet<EpicId> =
            [EpicId::parse("3.5").unwrap()].into_iter().collect();
        assert_eq!(id("3.5.0").epic_in(&declared).to_string(), "3.5");
        assert_eq!(id("3.5").epic_in(&declared).to_string(), "3");
        assert_eq!(id("2.9.1").epic_in(&declared).to_string(), "2");
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
        assert_eq!(id("3.5.0").dashed(), "3-5-0");
    }
}

//! Which stories of a run's epics it works on: `--start-from STORY` and `--only STORY,…`,
//! checked against the stories the epics really have before anything runs. A value naming no
//! story is refused (a typo must not skip a whole epic and still run its UAT); an epic none
//! of whose stories are selected is skipped whole, UAT and retrospective included.

use std::collections::BTreeSet;

use super::EpicRef;
use crate::error::{Error, Result};
use baton_context::signals::normalize_id;

/// Why a selected run leaves a story out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Left {
    BeforeStart,
    NotOnly,
}

impl Left {
    pub fn reason(self) -> &'static str {
        match self {
            Left::BeforeStart => "before --start-from",
            Left::NotOnly => "not in --only",
        }
    }
}

/// The stories a run leaves out, by (epic, story).
#[derive(Debug, Default)]
pub struct Selection {
    left: Vec<((String, String), Left)>,
}

impl Selection {
    /// `start_from` counts across the run's epics in order: in `epic-chain 1 2 --start-from
    /// 2.3`, epic 1 is left out whole.
    pub fn new(epics: &[EpicRef], start_from: Option<&str>, only: &[String]) -> Result<Selection> {
        let all: Vec<(&EpicRef, &str)> = epics
            .iter()
            .flat_map(|e| e.stories.iter().map(move |s| (e, s.id.as_str())))
            .collect();
        let known = |flag: &str, v: &str| -> Result<String> {
            let n = normalize_id(v);
            if all.iter().any(|(_, s)| normalize_id(s) == n) {
                return Ok(n);
            }
            let ids: Vec<&str> = all.iter().map(|(_, s)| *s).collect();
            let epic_list: Vec<&str> = epics.iter().map(|e| e.id.as_str()).collect();
            Err(Error::invalid(format!(
                "{flag} {v}: no story `{v}` in epic {} (its stories: {})",
                epic_list.join(", "),
                ids.join(", ")
            ))
            .hint(format!(
                "see the stories with `baton stories {}`",
                epic_list.first().copied().unwrap_or("1")
            )))
        };
        let start = start_from.map(|v| known("--start-from", v)).transpose()?;
        let only: BTreeSet<String> = only
            .iter()
            .map(|v| known("--only", v))
            .collect::<Result<_>>()?;
        let mut reached = start.is_none();
        let mut left = Vec::new();
        for (e, s) in &all {
            let n = normalize_id(s);
            reached |= start.as_deref() == Some(n.as_str());
            let why = if !reached {
                Some(Left::BeforeStart)
            } else if !only.is_empty() && !only.contains(&n) {
                Some(Left::NotOnly)
            } else {
                None
            };
            if let Some(w) = why {
                left.push(((e.id.clone(), s.to_string()), w));
            }
        }
        if left.len() == all.len() {
            // --only 1.3 --start-from 1.4: nothing left to run.
            return Err(
                Error::invalid("--start-from and --only together select no story")
                    .hint("--only's stories must come at or after --start-from's"),
            );
        }
        Ok(Selection { left })
    }

    /// Why the run leaves this story out, if it does.
    pub fn left_out(&self, epic: &str, story: &str) -> Option<Left> {
        self.left
            .iter()
            .find(|((e, s), _)| e == epic && s == story)
            .map(|(_, w)| *w)
    }

    /// Every story of the epic left out: its epic phases (UAT, retro) are skipped too.
    pub fn whole_epic_left_out(&self, epic: &EpicRef) -> bool {
        epic.stories
            .iter()
            .all(|s| self.left_out(&epic.id, &s.id).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workflow::epic::StoryRef;
    use baton_core::error::Fault;

    fn epic(id: &str, stories: &[&str]) -> EpicRef {
        EpicRef {
            id: id.into(),
            path: None,
            stories: stories
                .iter()
                .map(|s| StoryRef {
                    id: s.to_string(),
                    title: String::new(),
                    path: format!("{s}.md").into(),
                    status: "ready".into(),
                    blocked: None,
                    spec_checkpoint: false,
                    done_checkpoint: false,
                })
                .collect(),
            missing: Vec::new(),
            spec_dir: None,
        }
    }

    #[test]
    fn start_from_counts_across_the_chain() {
        let epics = [epic("1", &["1.1", "1.2"]), epic("2", &["2.1", "2.2"])];
        let s = Selection::new(&epics, Some("2.2"), &[]).unwrap();
        assert!(s.whole_epic_left_out(&epics[0]));
        assert!(!s.whole_epic_left_out(&epics[1]));
        assert_eq!(s.left_out("2", "2.1"), Some(Left::BeforeStart));
        assert_eq!(s.left_out("2", "2.2"), None);
    }

    #[test]
    fn only_and_start_from_combine() {
        let epics = [epic("1", &["1.1", "1.2", "1.3"])];
        let s = Selection::new(&epics, Some("1.2"), &["1.3".into()]).unwrap();
        assert_eq!(s.left_out("1", "1.1"), Some(Left::BeforeStart));
        assert_eq!(s.left_out("1", "1.2"), Some(Left::NotOnly));
        assert_eq!(s.left_out("1", "1.3"), None);
        let none = Selection::new(&epics, Some("1.3"), &["1.1".into()]).unwrap_err();
        assert!(none.to_string().contains("select no story"), "{none}");
    }

    #[test]
    fn an_unknown_story_is_refused_naming_it_and_the_real_ones() {
        let epics = [epic("1", &["1.1", "1.2"])];
        let e = Selection::new(&epics, Some("1.9"), &[]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--start-from 1.9: no story `1.9` in epic 1 (its stories: 1.1, 1.2)"
        );
        assert_eq!(e.exit_code(), 2);
        let e = Selection::new(&epics, None, &["1.2".into(), "7".into()]).unwrap_err();
        assert!(e.to_string().starts_with("--only 7: no story"), "{e}");
        // Written the way people write ids: a leading zero or a `story-` prefix is the same story.
        assert!(Selection::new(&epics, Some("1.02"), &[]).is_ok());
    }
}

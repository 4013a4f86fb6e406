//! What masking saved: the mask log's records ([`super::record`]) totalled, and grouped by
//! command, kind, agent, source and day. Pure: `baton gain`, the run report and `status` feed
//! it the records they read and render what it returns.

use std::collections::BTreeMap;

use serde::Serialize;

use super::record::MaskRecord;

/// Which records count.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Records at or after this timestamp (the log's own `YYYY-MM-DDTHH:MM:SS.mmmZ`, which
    /// sorts as text; a prefix such as `2026-11-27` works too).
    pub since: Option<String>,
    pub run: Option<String>,
    pub session: Option<String>,
    pub agent: Option<String>,
}

impl Filter {
    pub fn keeps(&self, r: &MaskRecord) -> bool {
        self.since.as_deref().is_none_or(|s| r.ts.as_str() >= s)
            && self
                .run
                .as_deref()
                .is_none_or(|x| r.run.as_deref() == Some(x))
            && self
                .session
                .as_deref()
                .is_none_or(|x| r.session.as_deref() == Some(x))
            && self
                .agent
                .as_deref()
                .is_none_or(|x| r.agent.as_deref() == Some(x))
    }
}

/// Totals of a set of masked outputs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    /// Outputs masked.
    pub count: u64,
    /// Tokens of the full outputs.
    pub tokens: u64,
    /// Tokens the agents read instead.
    pub shown_tokens: u64,
    pub saved_tokens: u64,
}

impl Totals {
    fn add(&mut self, r: &MaskRecord) {
        self.count += 1;
        self.tokens += r.tokens;
        self.shown_tokens += r.masked_tokens;
        self.saved_tokens += r.saved();
    }

    /// Saved as a share of the full outputs, in percent.
    pub fn saved_percent(&self) -> f64 {
        if self.tokens == 0 {
            0.0
        } else {
            self.saved_tokens as f64 * 100.0 / self.tokens as f64
        }
    }
}

/// One row of a grouping.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Group {
    pub key: String,
    #[serde(flatten)]
    pub totals: Totals,
}

/// Everything `baton gain` shows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Gain {
    #[serde(flatten)]
    pub totals: Totals,
    /// The first and last record's time.
    pub first: Option<String>,
    pub last: Option<String>,
    /// Rows by most saved first.
    pub by_command: Vec<Group>,
    pub by_kind: Vec<Group>,
    pub by_agent: Vec<Group>,
    pub by_source: Vec<Group>,
    /// Rows by day, oldest first.
    pub by_day: Vec<Group>,
}

/// Total and group the records `filter` keeps.
pub fn gain<'a>(records: impl IntoIterator<Item = &'a MaskRecord>, filter: &Filter) -> Gain {
    let mut g = Gain::default();
    let mut groups: [BTreeMap<String, Totals>; 5] = Default::default();
    for r in records.into_iter().filter(|r| filter.keeps(r)) {
        g.totals.add(r);
        if g.first.as_deref().is_none_or(|f| r.ts.as_str() < f) {
            g.first = Some(r.ts.clone());
        }
        if g.last.as_deref().is_none_or(|l| r.ts.as_str() > l) {
            g.last = Some(r.ts.clone());
        }
        let or_unknown = |s: &str| {
            if s.is_empty() {
                "(unknown)".to_string()
            } else {
                s.to_string()
            }
        };
        let keys = [
            or_unknown(&r.command),
            or_unknown(&r.kind),
            or_unknown(r.agent.as_deref().unwrap_or("")),
            r.source.name().to_string(),
            r.ts.get(..10).unwrap_or(&r.ts).to_string(),
        ];
        for (map, key) in groups.iter_mut().zip(keys) {
            map.entry(key).or_default().add(r);
        }
    }
    let [command, kind, agent, source, day] = groups;
    let by_saved = |m: BTreeMap<String, Totals>| {
        let mut rows: Vec<Group> = m
            .into_iter()
            .map(|(key, totals)| Group { key, totals })
            .collect();
        // Most saved first; equal savings by name, so the order is stable.
        rows.sort_by_key(|r| std::cmp::Reverse(r.totals.saved_tokens));
        rows
    };
    g.by_command = by_saved(command);
    g.by_kind = by_saved(kind);
    g.by_agent = by_saved(agent);
    g.by_source = by_saved(source);
    g.by_day = day
        .into_iter()
        .map(|(key, totals)| Group { key, totals })
        .collect();
    g
}

/// A bar of `width` cells for `value` out of `max` (eighths of a cell, so small values show).
pub fn bar(value: u64, max: u64, width: usize) -> String {
    const PARTS: [char; 8] = ['▏', '▎', '▍', '▌', '▋', '▊', '▉', '█'];
    if max == 0 || value == 0 {
        return String::new();
    }
    let eighths = ((value as u128 * width as u128 * 8) / max as u128).max(1) as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(PARTS[eighths % 8 - 1]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::super::record::{Source, VERSION};
    use super::*;

    fn rec(ts: &str, command: &str, agent: Option<&str>, tokens: u64, shown: u64) -> MaskRecord {
        MaskRecord {
            v: VERSION,
            ts: ts.into(),
            source: if agent.is_some() {
                Source::PostToolUse
            } else {
                Source::Cli
            },
            agent: agent.map(String::from),
            session: agent.map(|a| format!("{a}-session")),
            run: None,
            phase: None,
            command: command.into(),
            kind: "generic".into(),
            scratch: "/s".into(),
            tokens,
            tokens_estimated: false,
            masked_tokens: shown,
        }
    }

    fn sample() -> Vec<MaskRecord> {
        vec![
            rec(
                "2026-11-25T09:00:00.000Z",
                "cargo test",
                Some("claude"),
                50_000,
                500,
            ),
            rec(
                "2026-11-26T09:00:00.000Z",
                "npm test",
                Some("codex"),
                20_000,
                400,
            ),
            rec(
                "2026-11-26T10:00:00.000Z",
                "cargo test",
                Some("claude"),
                30_000,
                300,
            ),
            rec("2026-11-27T08:00:00.000Z", "git diff", None, 8_000, 800),
        ]
    }

    #[test]
    fn totals_and_groups_add_up() {
        let recs = sample();
        let g = gain(&recs, &Filter::default());
        assert_eq!(
            g.totals,
            Totals {
                count: 4,
                tokens: 108_000,
                shown_tokens: 2_000,
                saved_tokens: 106_000
            }
        );
        assert_eq!(g.first.as_deref(), Some("2026-11-25T09:00:00.000Z"));
        assert_eq!(g.last.as_deref(), Some("2026-11-27T08:00:00.000Z"));
        let keys = |rows: &[Group]| rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&g.by_command), ["cargo test", "npm test", "git diff"]);
        assert_eq!(g.by_command[0].totals.count, 2);
        assert_eq!(g.by_command[0].totals.saved_tokens, 79_200);
        assert_eq!(keys(&g.by_agent), ["claude", "codex", "(unknown)"]);
        assert_eq!(keys(&g.by_source), ["post-tool-use", "cli"]);
        assert_eq!(keys(&g.by_day), ["2026-11-25", "2026-11-26", "2026-11-27"]);
        assert_eq!(g.by_day[1].totals.saved_tokens, 49_300);
        for rows in [
            &g.by_command,
            &g.by_kind,
            &g.by_agent,
            &g.by_source,
            &g.by_day,
        ] {
            let sum: u64 = rows.iter().map(|r| r.totals.saved_tokens).sum();
            assert_eq!(sum, g.totals.saved_tokens);
        }
        assert!((g.totals.saved_percent() - 98.148).abs() < 0.01);
    }

    #[test]
    fn filters_keep_only_what_they_name() {
        let recs = sample();
        let since = Filter {
            since: Some("2026-11-26".into()),
            ..Filter::default()
        };
        assert_eq!(gain(&recs, &since).totals.count, 3);
        let claude = Filter {
            agent: Some("claude".into()),
            ..Filter::default()
        };
        assert_eq!(gain(&recs, &claude).totals.saved_tokens, 79_200);
        let session = Filter {
            session: Some("codex-session".into()),
            ..Filter::default()
        };
        assert_eq!(gain(&recs, &session).totals.count, 1);
        let run = Filter {
            run: Some("r1".into()),
            ..Filter::default()
        };
        assert_eq!(gain(&recs, &run), Gain::default());
    }

    #[test]
    fn bars_scale_to_the_largest_value() {
        assert_eq!(bar(10, 10, 4), "████");
        assert_eq!(bar(5, 10, 4), "██");
        assert_eq!(bar(1, 1000, 4), "▏");
        assert_eq!(bar(0, 10, 4), "");
        assert_eq!(bar(3, 0, 4), "");
    }
}

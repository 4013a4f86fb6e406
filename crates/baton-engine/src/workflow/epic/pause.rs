//! Pauses a run asks of itself: after each story or each epic (`--pause-after`), and when a
//! failure analysis recommends escalating to a human. A pause is a graceful stop requested of
//! the run's own next call (`interrupt::request_pause`): the phase in flight has finished and
//! is journaled, the run stops as `baton stop --graceful` stops it (exit 143, `--resume` goes
//! on), and the notifier hears of it. Each pause point is journaled first (`PausePoint`), so a
//! resumed run — which replays what came before — never pauses at the same point twice.

use serde::{Deserialize, Serialize};

use super::EpicEngine;
use crate::error::{Error, Result};
use crate::journal::Entry;

/// Where `--pause-after` pauses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PauseAfter {
    /// After every story that finished (done or failed), before the next one.
    Story,
    /// After every epic, before the next one (epic-chain).
    Epic,
}

impl PauseAfter {
    pub fn name(self) -> &'static str {
        match self {
            PauseAfter::Story => "story",
            PauseAfter::Epic => "epic",
        }
    }
}

impl EpicEngine<'_> {
    /// `--pause-after unit`: pause here, after `at` (`story 1.2`, `epic 1`).
    pub(crate) fn pause_after(&self, unit: PauseAfter, at: &str) -> Result<()> {
        if self.opts.pause_after != Some(unit) {
            return Ok(());
        }
        self.pause(
            at,
            &format!("the pause after {at} (--pause-after {})", unit.name()),
        )
    }

    /// Stop the run before its next call, saying `why`, unless it paused at `at` already.
    pub(crate) fn pause(&self, at: &str, why: &str) -> Result<()> {
        if self.opts.dry_run {
            return Ok(());
        }
        let mut j = self.journal();
        let seen = j
            .records
            .iter()
            .any(|r| matches!(&r.entry, Entry::PausePoint { at: a } if a == at));
        if seen {
            return Ok(());
        }
        j.log(Entry::PausePoint { at: at.into() })?;
        let dir = j.dir.clone();
        drop(j);
        crate::interrupt::request_pause(&dir, why).map_err(|e| Error::io(&dir, e))
    }
}

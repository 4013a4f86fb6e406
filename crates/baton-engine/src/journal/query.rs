//! Questions a journal answers beyond its core: the project's checks as it records them
//! (`Entry::ChecksRun`), and whether a run was closed unfinished (`Entry::Closed`).

use super::{Entry, Journal};
use crate::subject::Subject;

impl Journal {
    /// Why the run was closed without finishing, if it was.
    pub fn closed(&self) -> Option<&str> {
        self.records.iter().find_map(|r| match &r.entry {
            Entry::Closed { reason } => Some(reason.as_str()),
            _ => None,
        })
    }

    /// The checks recorded after `phase` of `attempt` of `subject`, if they ran.
    pub fn checks_run(
        &self,
        subject: &Subject,
        phase: &str,
        attempt: u32,
    ) -> Option<Vec<crate::checks::CheckResult>> {
        self.records.iter().rev().find_map(|r| match &r.entry {
            Entry::ChecksRun {
                subject: s,
                phase: p,
                attempt: a,
                results,
                ..
            } if s == subject && p == phase && *a == attempt => Some(results.clone()),
            _ => None,
        })
    }

    /// The staged tree of the last checks of `attempt` of `subject`, when they all passed.
    pub fn green_tree(&self, subject: &Subject, attempt: u32) -> Option<String> {
        self.records.iter().rev().find_map(|r| match &r.entry {
            Entry::ChecksRun {
                subject: s,
                attempt: a,
                results,
                tree,
                ..
            } if s == subject && *a == attempt => {
                if results.iter().all(|r| r.passed) {
                    tree.clone()
                } else {
                    None
                }
            }
            _ => None,
        })
    }
}

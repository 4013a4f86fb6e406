//! Mask records: when `baton mask` runs inside an agent of a `baton run` (the run pipeline
//! sets `BATON_RUN_DIR` and `BATON_RUN_PHASE` for every agent process), each masked output
//! appends one line to `<run dir>/masks.jsonl`: which phase masked what, where the full text
//! is and how many tokens the agent did not have to read. The HTML report links the scratch
//! files from their phase and totals the tokens saved.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use baton_core::error::Result;

/// The run directory of the phase an agent runs (the run pipeline sets it for every agent
/// process).
pub const RUN_DIR_ENV: &str = "BATON_RUN_DIR";
/// The phase's label (`prompts/<label>.md`, `logs/<label>.log`).
pub const PHASE_ENV: &str = "BATON_RUN_PHASE";

/// The records' file in a run directory.
pub const FILE: &str = "masks.jsonl";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskRecord {
    pub v: u32,
    pub ts: String,
    /// The phase's label (`prompts/<label>.md`).
    pub phase: String,
    /// The program's name only: arguments can hold secrets.
    pub command: String,
    /// The scratch file with the full output.
    pub scratch: String,
    /// Tokens of the full output (bytes/4 when `tokens_estimated`).
    pub tokens: u64,
    #[serde(default)]
    pub tokens_estimated: bool,
    /// Tokens of what the agent read instead (the masked JSON).
    pub masked_tokens: u64,
}

impl MaskRecord {
    pub fn saved(&self) -> u64 {
        self.tokens.saturating_sub(self.masked_tokens)
    }
}

/// The run directory and phase this process masks for, when an agent of a run started it.
/// A directory without a journal is not a run's: nothing is recorded there.
pub fn target() -> Option<(PathBuf, String)> {
    let dir = PathBuf::from(std::env::var_os(RUN_DIR_ENV)?);
    let phase = std::env::var(PHASE_ENV).ok()?;
    (dir.is_absolute() && dir.join("events.jsonl").is_file() && !phase.is_empty())
        .then_some((dir, phase))
}

/// Append one record (one `write` of one line, so concurrent agents' lines do not mix).
pub fn append(run_dir: &Path, rec: &MaskRecord) -> Result<()> {
    let mut line =
        serde_json::to_vec(rec).map_err(|e| baton_core::error::Error::internal(e.to_string()))?;
    line.push(b'\n');
    baton_core::fs::append(&run_dir.join(FILE), &line)
}

/// Every record of a run; lines that are not records (a torn last line, a newer format) are
/// counted, not fatal: the report says how many it left out.
pub fn read(run_dir: &Path) -> (Vec<MaskRecord>, usize) {
    let Ok(text) = std::fs::read_to_string(run_dir.join(FILE)) else {
        return (vec![], 0);
    };
    let mut bad = 0;
    let recs = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| match serde_json::from_str::<MaskRecord>(l) {
            Ok(r) if r.v == 1 => Some(r),
            _ => {
                bad += 1;
                None
            }
        })
        .collect();
    (recs, bad)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_bad_lines_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let rec = MaskRecord {
            v: 1,
            ts: "t".into(),
            phase: "1-1.1-dev-1".into(),
            command: "cargo".into(),
            scratch: "/x/.baton/scratch/a.log".into(),
            tokens: 9000,
            tokens_estimated: false,
            masked_tokens: 200,
        };
        append(dir.path(), &rec).unwrap();
        append(dir.path(), &rec).unwrap();
        std::fs::write(
            dir.path().join(FILE),
            std::fs::read_to_string(dir.path().join(FILE)).unwrap() + "{\"v\":1,\"ts\"",
        )
        .unwrap();
        let (recs, bad) = read(dir.path());
        assert_eq!(recs, vec![rec.clone(), rec.clone()]);
        assert_eq!(bad, 1);
        assert_eq!(rec.saved(), 8800);
    }
}

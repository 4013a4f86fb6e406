//! METRICS: execution numbers computed from a manifest's completed phases and waves.

use serde::Serialize;

use super::model::{Manifest, PhaseStatus};

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub task: String,
    pub status: String,
    pub phases_completed: usize,
    pub phases_succeeded: usize,
    pub phases_failed: usize,
    pub phases_running: usize,
    pub total_retries: u32,
    pub total_duration_ms: Option<u64>,
    /// Sum of every phase's own duration (what a strictly sequential run would take).
    pub sequential_duration_ms: u64,
    pub parallelization_savings_ms: Option<u64>,
    pub per_phase: Vec<PhaseStat>,
    pub waves: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseStat {
    pub phase: String,
    pub runs: usize,
    pub failures: usize,
    pub total_ms: u64,
    pub last_status: PhaseStatus,
}

pub fn report(m: &Manifest) -> Report {
    let mut per_phase: Vec<PhaseStat> = Vec::new();
    for c in m.completed_phases.iter() {
        let failed = usize::from(c.status == PhaseStatus::Failed);
        match per_phase.iter_mut().find(|p| p.phase == c.phase) {
            Some(p) => {
                p.runs += 1;
                p.failures += failed;
                p.total_ms += c.duration_ms;
                p.last_status = c.status;
            }
            None => per_phase.push(PhaseStat {
                phase: c.phase.clone(),
                runs: 1,
                failures: failed,
                total_ms: c.duration_ms,
                last_status: c.status,
            }),
        }
    }
    let failed = m
        .completed_phases
        .iter()
        .filter(|c| c.status == PhaseStatus::Failed)
        .count();
    Report {
        task: m.name.clone(),
        status: m.status.to_string(),
        phases_completed: m.completed_phases.len(),
        phases_succeeded: m.completed_phases.len() - failed,
        phases_failed: failed,
        phases_running: m.running_phases.len(),
        total_retries: m.metrics.total_retries,
        total_duration_ms: m.metrics.total_duration_ms,
        sequential_duration_ms: m.completed_phases.iter().map(|c| c.duration_ms).sum(),
        parallelization_savings_ms: m.metrics.parallelization_savings_ms,
        per_phase,
        waves: m.waves.execution.len(),
    }
}

impl Report {
    /// Human text: a summary, plus a per-phase table when `detailed`.
    pub fn render(&self, detailed: bool) -> String {
        let opt = |v: Option<u64>| v.map(human_ms).unwrap_or_else(|| "-".into());
        let mut s = format!("task {} ({})\n", self.task, self.status);
        s.push_str(&format!(
            "phases: {} completed ({} succeeded, {} failed), {} running; retries: {}\n",
            self.phases_completed,
            self.phases_succeeded,
            self.phases_failed,
            self.phases_running,
            self.total_retries
        ));
        s.push_str(&format!(
            "duration: {} busy, {} if sequential, {} saved by parallel phases\n",
            opt(self.total_duration_ms),
            human_ms(self.sequential_duration_ms),
            opt(self.parallelization_savings_ms)
        ));
        if detailed {
            s.push_str(&format!(
                "\n  {:<24} {:>5} {:>8} {:>10}  last\n",
                "phase", "runs", "failed", "time"
            ));
            for p in &self.per_phase {
                s.push_str(&format!(
                    "  {:<24} {:>5} {:>8} {:>10}  {}\n",
                    p.phase,
                    p.runs,
                    p.failures,
                    human_ms(p.total_ms),
                    p.last_status
                ));
            }
        }
        s
    }
}

/// `1234` → `1.2s`, `75000` → `1m15s`.
pub fn human_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_well() {
        assert_eq!(human_ms(12), "12ms");
        assert_eq!(human_ms(1234), "1.2s");
        assert_eq!(human_ms(75_000), "1m15s");
    }
}

//! SUMMARY: a task's state in a few lines, with what to do next.

use serde::Serialize;

use super::model::{Gate, Manifest, PhaseStatus, Status};

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub task: String,
    pub mode: String,
    pub workflow: String,
    pub status: String,
    pub current_phase: Option<String>,
    pub running: Vec<String>,
    pub completed: usize,
    pub failed: usize,
    pub last_completed: Option<String>,
    pub waiting_for: Option<String>,
    /// The command that moves the task on.
    pub next: String,
    pub updated_at: String,
}

pub fn summary(m: &Manifest) -> Summary {
    let running: Vec<String> = m.running_phases.iter().map(|r| r.label()).collect();
    let waiting_for = match m.status {
        Status::Paused => m
            .failure_context
            .as_ref()
            .map(|f| format!("paused: {}", f.reason)),
        Status::WaitingGate => m.gate_context.as_ref().map(|g| {
            let arts = if g.artifacts.is_empty() {
                String::new()
            } else {
                format!(" (artifacts: {})", g.artifacts.join(", "))
            };
            format!("{} gate: {}{arts}", g.gate, g.prompt)
        }),
        _ => None,
    };
    let next = match m.status {
        Status::Running if !running.is_empty() => {
            "end the running phases: baton phase complete <phase> --status success|failed"
                .to_string()
        }
        Status::Running => {
            "begin the next phase: baton phase begin <phase> --needs <what>".to_string()
        }
        Status::Paused => "baton resume --decision retry|reject".to_string(),
        Status::WaitingGate => match m.gate_context.as_ref().map(|g| g.gate) {
            Some(Gate::Investigation) => {
                "baton resume --decision full|lite|shelf|cancel|reject".to_string()
            }
            _ => "baton resume --decision approve|reject".to_string(),
        },
        s => format!("nothing: the task is {s}"),
    };
    Summary {
        task: m.name.clone(),
        mode: m.mode.to_string(),
        workflow: m.workflow.to_string(),
        status: m.status.to_string(),
        current_phase: m.current_phase.clone(),
        running,
        completed: m.completed_phases.len(),
        failed: m
            .completed_phases
            .iter()
            .filter(|c| c.status == PhaseStatus::Failed)
            .count(),
        last_completed: m
            .completed_phases
            .last()
            .map(|c| format!("{} {}", c.label(), c.status)),
        waiting_for,
        next,
        updated_at: m.updated_at.clone(),
    }
}

impl Summary {
    pub fn render(&self) -> String {
        let mut s = format!(
            "task: {} ({} mode, {} workflow)\nstatus: {}\n",
            self.task, self.mode, self.workflow, self.status
        );
        if let Some(w) = &self.waiting_for {
            s.push_str(&format!("waiting: {w}\n"));
        }
        s.push_str(&format!(
            "running: {}\n",
            if self.running.is_empty() {
                "none".to_string()
            } else {
                self.running.join(", ")
            }
        ));
        s.push_str(&format!(
            "completed: {} phases ({} failed)",
            self.completed, self.failed
        ));
        if let Some(l) = &self.last_completed {
            s.push_str(&format!(", last: {l}"));
        }
        s.push_str(&format!("\nnext: {}\n", self.next));
        s
    }
}

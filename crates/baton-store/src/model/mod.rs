//! The store's data: events (the source of truth) and the manifest derived from them.
//! Field names of `Manifest` are exactly those of the context-manager's manifest.json (agent
//! prompts read them by name; docs/ARCHITECTURE.md, "The task store"), plus `version`.

pub mod completed;

use serde::{Deserialize, Serialize};

/// Version of the on-disk event format. Every event line carries it as `v`.
pub const EVENT_FORMAT: u32 = 1;

macro_rules! word_enum {
    ($(#[$m:meta])* $name:ident { $($var:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        pub enum $name { $(#[serde(rename = $s)] $var),* }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$var),*];
            pub fn as_str(self) -> &'static str {
                match self { $($name::$var => $s),* }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = crate::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s.trim() {
                    $($s => Ok($name::$var),)*
                    other => Err(crate::Error::invalid(format!(
                        "unknown {} `{other}`: expected one of {}",
                        stringify!($name).to_lowercase(),
                        [$($s),*].join(", ")
                    ))),
                }
            }
        }
    };
}

word_enum!(Mode { Standard = "standard", Poc = "poc" });
word_enum!(Workflow { Orchestrate = "orchestrate", Poc = "poc", Graduate = "graduate" });
word_enum!(Status {
    Running = "running",
    Paused = "paused",
    WaitingGate = "waiting_gate",
    Completed = "completed",
    Failed = "failed",
    Shelved = "shelved",
    Cancelled = "cancelled",
});
word_enum!(PhaseStatus { Success = "success", Failed = "failed" });
word_enum!(Gate { Design = "design", Investigation = "investigation", Final = "final" });
word_enum!(Decision {
    Approve = "approve",
    Reject = "reject",
    Retry = "retry",
    Full = "full",
    Lite = "lite",
    Shelf = "shelf",
    Cancel = "cancel",
});

impl Status {
    /// A task in a terminal status accepts no further phases or artifacts.
    pub fn is_terminal(self) -> bool {
        matches!(self, Status::Completed | Status::Failed | Status::Cancelled)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub name: String,
    pub mode: Mode,
    pub workflow: Workflow,
    pub status: Status,
    pub current_phase: Option<String>,
    pub running_phases: Vec<RunningPhase>,
    pub completed_phases: completed::Completed,
    pub failure_context: Option<FailureContext>,
    pub gate_context: Option<GateContext>,
    pub shelf_context: Option<ShelfContext>,
    pub metrics: Metrics,
    pub waves: Waves,
    pub created_at: String,
    pub updated_at: String,
    /// Sequence number of the last event this manifest reflects. A manifest whose version is
    /// below the last event's `seq` is stale and is rebuilt by replaying the events.
    pub version: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunningPhase {
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub started_at: String,
    pub attempt: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompletedPhase {
    pub phase: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    pub status: PhaseStatus,
    pub started_at: String,
    pub ended_at: String,
    pub duration_ms: u64,
    pub attempt: u32,
}

impl CompletedPhase {
    pub fn label(&self) -> String {
        phase_label(&self.phase, self.task_id.as_deref())
    }
}

impl RunningPhase {
    pub fn label(&self) -> String {
        phase_label(&self.phase, self.task_id.as_deref())
    }
}

/// `implementation` or `implementation#3` (phase run for spec task 3).
pub fn phase_label(phase: &str, task_id: Option<&str>) -> String {
    match task_id {
        Some(id) => format!("{phase}#{id}"),
        None => phase.to_string(),
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailureContext {
    pub reason: String,
    pub recommendations: Vec<String>,
    /// The phase to continue from on `retry`: the last phase that ended failed, if the most
    /// recent one did.
    pub failed_phase: Option<String>,
    pub paused_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GateContext {
    pub gate: Gate,
    pub prompt: String,
    pub artifacts: Vec<String>,
    pub set_at: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShelfContext {
    pub investigation_summary: String,
    pub shelved_at: String,
    pub shelved_phase: String,
    pub completed_phases: Vec<String>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metrics {
    /// Wall-clock time during which at least one phase was running.
    pub total_duration_ms: Option<u64>,
    /// Sum of phase durations minus `total_duration_ms`: time saved by running phases at once.
    pub parallelization_savings_ms: Option<u64>,
    pub total_retries: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waves {
    pub task_breakdown: Option<serde_json::Value>,
    pub execution: Vec<serde_json::Value>,
}

/// One line of `events.jsonl`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub v: u32,
    pub seq: u64,
    pub ts: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    TaskCreated {
        name: String,
        mode: Mode,
        workflow: Workflow,
    },
    PhaseStarted {
        phase: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
    },
    PhaseEnded {
        phase: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        status: PhaseStatus,
    },
    ArtifactStored {
        phase: String,
        /// Path relative to the task directory.
        path: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task_id: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        iteration: Option<u32>,
        bytes: u64,
        /// The content itself: the event log is the source of truth for artifacts too, so one
        /// fsync makes a STORE durable and `baton doctor` can restore a lost file.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        content: Option<String>,
    },
    Paused {
        reason: String,
        recommendations: Vec<String>,
    },
    GateSet {
        gate: Gate,
        prompt: String,
        artifacts: Vec<String>,
    },
    Resumed {
        decision: Decision,
        /// For `shelf`: the investigation summary taken from architect.md when deciding.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        investigation_summary: Option<String>,
    },
    /// The spec's task breakdown and the waves computed from it (`waves.task_breakdown`).
    WavesRecorded { task_breakdown: serde_json::Value },
    /// One wave ran: appended to `waves.execution`.
    WaveExecuted { wave: serde_json::Value },
}

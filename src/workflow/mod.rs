//! Workflows the orchestrator runs. For now: reading BMAD projects as they are (`bmad`).

pub mod bmad;

//! The run engine: workflow definitions and prompts, the epic-execute engine and its journal,
//! git, agents (the simulated one included), and reading BMAD projects as they are (`bmad`).

pub mod agents;
pub mod bmad;
pub mod cli_agents;
pub mod conductor;
pub mod def;
pub mod epic;
pub mod git;
pub mod journal;
pub mod parallel;
pub mod progress;
pub mod project;
pub mod sim;
pub mod sim_conductor;
pub mod sim_task;
pub mod sim_verify;
pub mod task;
pub mod task_def;
pub mod verify;

//! The run engines, one folder each with its definition: `epic` (epic-execute, epic-chain,
//! parallel stories, BMAD projects), `task` (orchestrate, poc, graduate: gates and waves) and
//! `verify` (queues of items through a pipeline of sub-agents). What they share is in
//! `crate`.

pub mod epic;
pub mod task;
pub mod verify;

//! The run engine: workflow definitions, prompts, git, the simulated agent.

pub mod def;
pub mod epic;
pub mod git;
pub mod journal;
pub mod progress;

pub mod agents;
pub mod sim;
pub mod cli_agents;
pub mod project;

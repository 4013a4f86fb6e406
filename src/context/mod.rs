//! The context toolkit: what keeps every agent context small — markdown sections, token
//! counts and budgets, spec extraction, summary blocks and session directories.

pub mod budget;
pub mod extract;
pub mod input;
pub mod mask;
pub mod outline;
pub mod session;
pub mod signals;
pub mod summary;
pub mod tokens;

//! baton's integration tests, one binary: the real `baton` binary and the library, in real temp
//! git repositories. One module per area; shared helpers in `util`.

mod util;

mod agent;
mod agent_big_output;
mod agent_settings;
mod bad_input;
mod binary;
mod bmad_layouts;
mod claude_cli;
mod concurrency;
mod conductor;
mod confine;
mod context;
mod context_held;
mod crash_points;
mod discover;
mod errors;
mod exec_lang;
mod formats;
mod gain;
mod hooks;
mod init;
mod install;
mod interrupt_random;
mod layout;
mod mask;
mod mask_corpus;
mod mask_secrets;
mod mcp;
mod newcomer;
mod outline;
mod plugin;
mod queue_pg;
mod queue_pg_faults;
mod queue_pg_workers;
mod real_claude;
mod real_codex;
mod real_gemini;
mod report;
mod run_epic;
mod run_epic_work;
mod run_task;
mod store_cli;
mod stories;
mod verify_queue;

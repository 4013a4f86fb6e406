//! baton's integration tests, one binary: the real `baton` binary and the library, in real temp
//! git repositories. One module per area; shared helpers in `util`.

mod util;

mod agent;
mod agent_big_output;
mod claude_cli;
mod concurrency;
mod conductor;
mod confine;
mod context;
mod errors;
mod exec_lang;
mod formats;
mod hooks;
mod init;
mod layout;
mod mask;
mod mask_corpus;
mod mask_secrets;
mod mcp;
mod outline;
mod run_epic;
mod run_task;
mod store_cli;
mod stories;
mod verify_queue;

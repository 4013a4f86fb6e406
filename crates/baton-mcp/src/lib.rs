//! baton-mcp: baton's task store and context tools served over MCP on stdio (`baton mcp`),
//! with the official Rust SDK (`rmcp`). At most 12 tools with small schemas ([`tools`]); every
//! answer is short text in the command language's STATUS/TASK/DATA form, large results go to
//! scratch files. stdout is the protocol: the caller's log function (stderr) says each call.
//!
//! Depends on baton-core, baton-store, baton-context and baton-engine (the project's
//! configuration); the binary's crate starts it. A crate of its own so that the SDK's code
//! compiles beside the engine rather than inside the binary's crate.

#![cfg_attr(test, allow(clippy::print_stdout, clippy::print_stderr))]

use std::sync::Arc;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler, ServiceExt};

use baton_engine::{Error, Result};

pub mod gate;
pub mod tools;

/// How often the mask tool reports progress while its command runs.
const PROGRESS_EVERY: Duration = Duration::from_secs(2);

pub struct Server {
    ctx: Arc<tools::Ctx>,
    tools: Vec<Tool>,
}

impl Server {
    pub fn new(ctx: tools::Ctx) -> Server {
        Server {
            ctx: Arc::new(ctx),
            tools: tool_list(),
        }
    }
}

/// The tools as the protocol lists them.
pub fn tool_list() -> Vec<Tool> {
    tools::list()
        .into_iter()
        .map(|(name, description, schema)| {
            let schema = match schema {
                serde_json::Value::Object(m) => m,
                _ => serde_json::Map::new(),
            };
            let effect = tools::effect(name);
            let mut notes = ToolAnnotations::new()
                .read_only(effect == tools::Effect::ReadOnly)
                .destructive(effect == tools::Effect::Anything);
            notes.open_world_hint = Some(effect == tools::Effect::Anything);
            Tool::new(name, description, Arc::new(schema)).annotate(notes)
        })
        .collect()
}

fn result(a: tools::Answer) -> CallToolResponse {
    let content = vec![ContentBlock::text(a.text)];
    if a.is_error {
        CallToolResult::error(content).into()
    } else {
        CallToolResult::success(content).into()
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("baton", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "baton: durable task state (phases, gates, artifacts) and context tools. \
                 Answers are STATUS/TASK/DATA text; large ones name a file with the rest.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        // The progress token comes in the request's `_meta` (or the context's, by version).
        let token = request
            .meta
            .as_ref()
            .and_then(|m| m.get_progress_token())
            .or_else(|| context.meta.get_progress_token());
        (self.ctx.log)(&name);
        if name == "mask" {
            let m = match tools::parse_mask(&args) {
                Ok(m) => m,
                Err(e) => return Ok(result(error_answer(&e))),
            };
            return Ok(result(self.mask(m, token, context).await));
        }
        // Store and file tools are quick: answered on the blocking pool all the same, so a
        // slow disk never stalls the protocol.
        let ctx = self.ctx.clone();
        let answer = tokio::task::spawn_blocking(move || tools::call(&ctx, &name, &args))
            .await
            .map_err(|e| McpError::internal_error(format!("tool failed: {e}"), None))?;
        match answer {
            Ok(a) => Ok(result(a)),
            Err(msg) => Err(McpError::invalid_params(msg, None)),
        }
    }
}

fn error_answer(e: &Error) -> tools::Answer {
    tools::Answer::error(e)
}

impl Server {
    /// Run the mask tool off the protocol thread, reporting progress while it runs (when the
    /// client asked for it with a progress token).
    async fn mask(
        &self,
        m: tools::MaskArgs,
        token: Option<rmcp::model::ProgressToken>,
        context: RequestContext<RoleServer>,
    ) -> tools::Answer {
        let ctx = self.ctx.clone();
        let what = m.command.join(" ");
        // A call the client cancels (or a connection that closes) drops this future: the
        // guard then stops the command's process group, which would otherwise run on.
        let group = Arc::new(std::sync::Mutex::new(None::<i32>));
        let guard = StopOnDrop(group.clone());
        let mut job = tokio::task::spawn_blocking(move || {
            let answer = tools::run_mask(&ctx, &m, &|pgid| {
                *group
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(pgid);
            });
            *group
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
            answer
        });
        let t0 = Instant::now();
        let mut tick = tokio::time::interval(PROGRESS_EVERY);
        tick.tick().await;
        loop {
            tokio::select! {
                done = &mut job => {
                    drop(guard);
                    return done.unwrap_or_else(|e| error_answer(&Error::internal(format!("mask failed: {e}"))));
                }
                _ = context.ct.cancelled() => {
                    drop(guard);
                    return error_answer(&Error::invalid("cancelled by the client: the command was stopped"));
                }
                _ = tick.tick() => {
                    if let Some(t) = &token {
                        let secs = t0.elapsed().as_secs_f64();
                        let p = ProgressNotificationParam::new(t.clone(), secs)
                            .with_message(format!("running {what}: {secs:.0}s"));
                        let _ = context.peer.notify_progress(p).await;
                    }
                }
            }
        }
    }
}

/// Stops the process group it names, if any, when dropped: SIGTERM, then SIGKILL 2 s later.
struct StopOnDrop(Arc<std::sync::Mutex<Option<i32>>>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        let group = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(pgid) = group {
            baton_core::process::signal_group(pgid, libc::SIGTERM);
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_secs(2));
                baton_core::process::signal_group(pgid, libc::SIGKILL);
            });
        }
    }
}

/// Serve on stdin/stdout until the client closes the stream.
pub fn serve(ctx: tools::Ctx) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::internal(format!("cannot start the MCP runtime: {e}")))?;
    rt.block_on(async {
        // The SDK reads and writes through the gate (see `gate`).
        let (sdk_in, client_side) = tokio::io::duplex(64 << 10);
        let (sdk_side, sdk_out) = tokio::io::duplex(64 << 10);
        let pump = tokio::spawn(gate::run(
            tokio::io::stdin(),
            client_side,
            sdk_out,
            tokio::io::stdout(),
        ));
        let service = Server::new(ctx)
            .serve((sdk_in, sdk_side))
            .await
            .map_err(|e| Error::invalid(format!("MCP handshake failed: {e}")))?;
        service
            .waiting()
            .await
            .map_err(|e| Error::internal(format!("MCP server stopped: {e}")))?;
        let _ = pump.await;
        Ok(())
    })
}

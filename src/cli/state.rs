//! `baton state show ITEM`: where a verify item is and what to do next (its state file).

use std::process::ExitCode;

use clap::Subcommand;

use super::Ctx;
use crate::error::{Error, Result};
use baton_engine::workflow::verify::backend::Backend;
use baton_engine::workflow::verify::pipeline;

#[derive(Debug, Subcommand)]
#[command(defer = true)] // arguments built only for the subcommand that runs
pub enum StateCmd {
    /// An item's verification state: its phases, the context estimate, the command to continue
    #[command(
        after_help = "Examples:\n  baton state show BMNR\n  baton state show BMNR --queue dat-q1\n  \
baton state show BMNR --json     # the verification-state.json itself"
    )]
    Show {
        item: String,
        /// The queue holding the item (needed when several do)
        #[arg(long, value_name = "NAME")]
        queue: Option<String>,
    },
}

pub fn run(ctx: &Ctx, cmd: StateCmd) -> Result<ExitCode> {
    let StateCmd::Show { item, queue } = cmd;
    let local = ctx.project.local_dir();
    let mut queues = Backend::open(&ctx.project.config.queue, &local)?;
    baton_engine::workflow::verify::queue::check_item(&item)?;
    // Items are matched as `queue add` does, ignoring case; the stored spelling is used.
    let stored = |queues: &mut Backend, q: &str| -> Result<Option<String>> {
        Ok(queues
            .items(q)?
            .into_iter()
            .find(|i| i.eq_ignore_ascii_case(&item)))
    };
    let holding: Vec<(String, String)> = match &queue {
        Some(q) => match stored(&mut queues, q)? {
            Some(id) => vec![(q.clone(), id)],
            None => {
                return Err(
                    Error::not_found(format!("item `{item}` is not in queue `{q}`"))
                        .hint(format!("see its items: baton queue show {q}")),
                );
            }
        },
        None => {
            let mut v = vec![];
            for n in queues.names()? {
                if let Some(id) = stored(&mut queues, &n)? {
                    v.push((n, id));
                }
            }
            v
        }
    };
    let q = match holding.as_slice() {
        [] => {
            return Err(Error::not_found(format!("no queue holds item `{item}`"))
                .hint("add it: baton queue add NAME ITEM (see the queues: baton queue list)"));
        }
        [one] => one.clone(),
        many => {
            let names: Vec<&str> = many.iter().map(|(n, _)| n.as_str()).collect();
            return Err(Error::invalid(format!(
                "item `{item}` is in several queues: {}",
                names.join(", ")
            ))
            .hint(format!(
                "pick one: baton state show {item} --queue {}",
                names[0]
            )));
        }
    };
    let (q, item) = q;
    let cmd = queues.work_command(&q);
    let Some(st) = queues.state(&q, &item)? else {
        let v = serde_json::json!({"item": item, "queue": q, "status": "pending", "next": cmd});
        ctx.out.emit(&v, |w| {
            writeln!(
                w,
                "{item} (queue {q}): pending, no phase run yet\nstart with: {cmd}"
            )
        });
        return Ok(ExitCode::SUCCESS);
    };
    if ctx.out.json {
        ctx.out.emit(&st, |_| Ok(()));
        return Ok(ExitCode::SUCCESS);
    }
    // Phases in pipeline order when the pipeline still has them.
    let mut order: Vec<String> = pipeline::load(&local.join("workflows"))
        .map(|l| l.def.phases.into_iter().map(|p| p.id).collect())
        .unwrap_or_default();
    order.retain(|id| st.phases.contains_key(id));
    for id in st.phases.keys() {
        if !order.contains(id) {
            order.push(id.clone());
        }
    }
    let rel = queues.state_location(&q, &item, &ctx.project.dir);
    ctx.out.emit(&st, |w| {
        writeln!(
            w,
            "{item} (queue {q}): {}{}  · updated {}",
            st.status,
            st.failure
                .as_ref()
                .map(|f| format!(" — {f}"))
                .unwrap_or_default(),
            st.updated_at
        )?;
        for id in &order {
            let p = &st.phases[id];
            let key = p
                .summary
                .as_ref()
                .map(|s| {
                    let first = s["keyFindings"]
                        .as_array()
                        .and_then(|a| a.first())
                        .and_then(|v| v.as_str())
                        .unwrap_or("");
                    format!(
                        "{} issues · {first}",
                        s["issuesNoted"].as_u64().unwrap_or(0)
                    )
                })
                .or_else(|| p.error.clone())
                .or_else(|| {
                    p.partial_output.as_ref().map(|x| {
                        format!(
                            "partial output from attempt {} ({} lines)",
                            x.attempt, x.lines
                        )
                    })
                })
                .unwrap_or_default();
            writeln!(
                w,
                "  {id:<4} {:<12} {:<24} {:<34} {key}",
                p.status, p.agent, p.output_file
            )?;
        }
        let c = &st.context_estimate;
        writeln!(
            w,
            "context: ~{} of {} tokens (rotation at {}; {} rotations)",
            c.total_estimate, c.session_limit, c.rotation_threshold, st.rotations
        )?;
        writeln!(w, "{rel}")?;
        writeln!(
            w,
            "next: {}",
            if st.status == baton_engine::workflow::verify::state::Progress::Complete {
                "nothing: the item is complete".to_string()
            } else {
                st.next.clone()
            }
        )
    });
    Ok(ExitCode::SUCCESS)
}

//! The report's HTML: one self-contained file (inline CSS, an inline SVG timeline, a small
//! inline script for filtering; nothing fetched). The geometry and every text are computed
//! here; the minijinja template (`report.html.j2`) only places them, escaping everything.

use std::path::Path;

use serde::Serialize;

use super::model::{Model, Phase};
use crate::error::{Error, Result};
use baton_store::metrics::human_ms;

const TEMPLATE: &str = include_str!("report.html.j2");

/// SVG units: the label column, the plot, the rows.
const LABEL_W: f64 = 170.0;
const PLOT_W: f64 = 1000.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 30.0;
const ROW_H: f64 = 18.0;
const BAR_H: f64 = 12.0;
/// The narrowest bar drawn: a 3 ms phase of a 3 hour run must still be seen (and clicked).
const MIN_W: f64 = 1.5;
/// Longer signals are cut in the table (the log has them whole).
const DETAIL_CHARS: usize = 300;

#[derive(Serialize)]
struct Geometry {
    width: f64,
    height: f64,
    top: f64,
    plot_h: f64,
    row_h: f64,
    bar_h: f64,
}

#[derive(Serialize)]
struct RunView {
    id: String,
    workflow: String,
    subjects: String,
    state: String,
    started_at: String,
    updated_at: String,
    dir: String,
}

#[derive(Serialize)]
struct TotalsView {
    /// How the subjects ended, in the terminal's words and counts ("3 done, 1 failed").
    results: String,
    phases: usize,
    retries: usize,
    statuses: String,
    tokens: u64,
    prompt_tokens: u64,
    cost: String,
    wall: String,
    busy: String,
    savings: String,
    lanes: usize,
    mask_saved: u64,
    masked: usize,
    gate_wait: String,
}

#[derive(Serialize)]
struct RowView {
    y: f64,
    ty: f64,
    odd: bool,
    short: String,
    label: String,
    result: String,
    reason: String,
    /// The subject's attempts, as the terminal counts them (the highest attempt number).
    attempts: u32,
    /// Its agent calls (every phase of every attempt).
    calls: usize,
    tokens: u64,
    cost: String,
    commit: Option<String>,
    commit_short: String,
}

#[derive(Serialize)]
struct MaskView {
    href: minijinja::Value,
    command: String,
    title: String,
}

#[derive(Serialize)]
struct PhaseView {
    id: String,
    x: f64,
    w: f64,
    y: f64,
    status: &'static str,
    retry: bool,
    title: String,
    subject: String,
    phase: String,
    attempt: u32,
    start: String,
    duration: String,
    prompt_tokens: u64,
    budget: Option<u64>,
    bar: f64,
    budget_at: Option<f64>,
    over: bool,
    budget_title: String,
    /// `29441/43000`, empty when the agent did not report it.
    context: String,
    context_over: bool,
    context_title: String,
    tokens: u64,
    usage_title: String,
    cost: String,
    detail: String,
    prompt: Option<minijinja::Value>,
    log: Option<minijinja::Value>,
    masks: Vec<MaskView>,
}

#[derive(Serialize)]
struct Span {
    x: f64,
    w: f64,
    y: f64,
    title: String,
}

#[derive(Serialize)]
struct WaveView {
    x: f64,
    w: f64,
    wave: u64,
    title: String,
}

#[derive(Serialize)]
struct Tick {
    x: f64,
    text: String,
}

#[derive(Serialize)]
struct Page {
    version: &'static str,
    run: RunView,
    totals: TotalsView,
    row_word: &'static str,
    g: Geometry,
    rows: Vec<RowView>,
    phases: Vec<PhaseView>,
    gates: Vec<Span>,
    rotations: Vec<Span>,
    /// The project's checks, one line each.
    checks: Vec<String>,
    /// The deferred-work ledger's open entries, one line each.
    deferred: Vec<String>,
    waves: Vec<WaveView>,
    ticks: Vec<Tick>,
    masks_unreadable: usize,
    masks_unreadable_files: Vec<String>,
}

/// Rounded to a tenth of a unit: enough for a screen, and it keeps 2,000 bars small.
fn r1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

fn cost(c: f64) -> String {
    if c == 0.0 {
        "–".into()
    } else if c < 0.01 {
        format!("${c:.4}")
    } else {
        format!("${c:.2}")
    }
}

fn cut(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// A relative URL from the report's directory to `target`, safe as it is in an attribute:
/// only unreserved characters, `%XX` and `/` (so the template need not escape its slashes).
fn href(target: &Path, base: &Path) -> minijinja::Value {
    minijinja::Value::from_safe_string(url(target, base))
}

fn url(target: &Path, base: &Path) -> String {
    let rel = pathdiff::diff_paths(target, base).unwrap_or_else(|| target.to_path_buf());
    let mut out = String::new();
    for (i, part) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for b in part.as_os_str().as_encoded_bytes() {
            if b.is_ascii_alphanumeric() || b"-._~".contains(b) {
                out.push(*b as char);
            } else {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// Tick spacing: a round duration giving at most ~8 ticks over `span` ms.
fn tick_step(span: u64) -> u64 {
    const STEPS: [u64; 21] = [
        1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 30_000, 60_000, 120_000,
        300_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
    ];
    STEPS
        .iter()
        .copied()
        .find(|s| span / s <= 8)
        .unwrap_or(span.div_ceil(8).max(1))
}

fn phase_view(p: &Phase, i: usize, m: &Model, x: &dyn Fn(u64) -> f64, base: &Path) -> PhaseView {
    let row = &m.rows[p.row];
    let subject = row.subject.label();
    let x0 = x(p.start_ms);
    let w = (x(p.end_ms) - x0).max(MIN_W);
    let scale = p.prompt_tokens.max(p.budget.unwrap_or(0)).max(1) as f64;
    let over = p.budget.is_some_and(|b| p.prompt_tokens > b);
    let u = &p.usage;
    PhaseView {
        id: format!("p{i}"),
        x: r1(x0),
        w: r1(w),
        y: r1(TOP + p.row as f64 * ROW_H + (ROW_H - BAR_H) / 2.0),
        status: p.status.word(),
        retry: p.attempt > 1,
        title: format!(
            "{subject} · {} · attempt {} · {} · {} · {} tokens",
            p.phase,
            p.attempt,
            p.status.word(),
            human_ms(p.duration_ms),
            u.total()
        ),
        subject,
        phase: p.phase.clone(),
        attempt: p.attempt,
        start: format!("+{}", human_ms(p.start_ms)),
        duration: human_ms(p.duration_ms),
        prompt_tokens: p.prompt_tokens,
        budget: p.budget,
        bar: r1(p.prompt_tokens as f64 * 100.0 / scale),
        budget_at: p.budget.map(|b| r1(b as f64 * 100.0 / scale).min(99.0)),
        over,
        budget_title: match p.budget {
            Some(b) => format!(
                "prompt {} tokens of a {b}-token budget ({:.0} %)",
                p.prompt_tokens,
                p.prompt_tokens as f64 * 100.0 / b.max(1) as f64
            ),
            None => format!("prompt {} tokens; the phase has no budget", p.prompt_tokens),
        },
        context: match (p.context_peak, p.context_budget) {
            (Some(c), Some(b)) => format!("{c}/{b}"),
            (Some(c), None) => c.to_string(),
            _ => String::new(),
        },
        context_over: p.over_budget,
        context_title: match (p.context_peak, p.context_budget) {
            (Some(c), Some(b)) => format!(
                "the agent's largest request held {c} tokens: {:.0} % of the phase's context \
                 budget of {b} (its prompt budget plus what the CLI holds before baton's prompt)",
                c as f64 * 100.0 / b.max(1) as f64
            ),
            (Some(c), None) => format!("the agent's largest request held {c} tokens"),
            _ => "the agent did not report the context it held".into(),
        },
        tokens: u.total(),
        usage_title: format!(
            "input {} · cache write {} · cache read {} · output {}",
            u.input, u.cache_creation, u.cache_read, u.output
        ),
        cost: cost(p.cost_usd.unwrap_or(0.0)),
        detail: cut(&p.detail, DETAIL_CHARS),
        prompt: p.prompt.as_deref().map(|f| href(f, base)),
        log: p.log.as_deref().map(|f| href(f, base)),
        masks: p
            .masks
            .iter()
            .map(|&k| {
                let r = &m.masks[k];
                MaskView {
                    href: href(Path::new(&r.scratch), base),
                    command: r.command.clone(),
                    title: format!(
                        "{}{} tokens of output, {} read instead ({} saved)",
                        if r.tokens_estimated { "~" } else { "" },
                        r.tokens,
                        r.masked_tokens,
                        r.saved()
                    ),
                }
            })
            .collect(),
    }
}

/// The report of `m`, its links relative to `base` (the directory the file is written to).
/// "3 done, 1 failed, 0 skipped": the rows' results counted as the terminal's summary counts
/// them (rows without a result, an epic's own phases or a subject not finished, are not).
fn results(rows: &[super::model::Row]) -> String {
    use baton_engine::events::SubjectResult;
    let mut counts: Vec<(SubjectResult, usize)> = [
        SubjectResult::Done,
        SubjectResult::Failed,
        SubjectResult::Skipped,
    ]
    .into_iter()
    .map(|r| (r, 0))
    .collect();
    for result in rows.iter().filter_map(|r| r.result) {
        match counts.iter_mut().find(|(r, _)| *r == result) {
            Some(c) => c.1 += 1,
            None => counts.push((result, 1)),
        }
    }
    counts
        .iter()
        .map(|(w, n)| format!("{n} {w}"))
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn render(m: &Model, base: &Path) -> Result<String> {
    let span = m.span_ms.max(1) as f64;
    let x = move |ms: u64| LABEL_W + ms as f64 * PLOT_W / span;
    let plot_h = m.rows.len().max(1) as f64 * ROW_H;
    let row_y = |row: usize| TOP + row as f64 * ROW_H;
    let t = &m.totals;
    let mut per_row: Vec<(usize, u64, f64, u32)> = vec![(0, 0, 0.0, 0); m.rows.len()];
    for p in &m.phases {
        let r = &mut per_row[p.row];
        r.0 += 1;
        r.1 += p.usage.total();
        r.2 += p.cost_usd.unwrap_or(0.0);
        r.3 = r.3.max(p.attempt);
    }
    let rows = m
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let label = r.subject.label();
            RowView {
                y: row_y(i),
                ty: row_y(i) + ROW_H - 5.0,
                odd: i % 2 == 1,
                short: cut(&label, 24),
                label,
                result: r.result.map_or_else(|| "–".into(), |r| r.to_string()),
                reason: cut(&r.reason, DETAIL_CHARS),
                attempts: per_row[i].3,
                calls: per_row[i].0,
                tokens: per_row[i].1,
                cost: cost(per_row[i].2),
                commit_short: r
                    .commit
                    .as_deref()
                    .map_or("", |c| &c[..c.len().min(10)])
                    .into(),
                commit: r.commit.clone(),
            }
        })
        .collect();
    let gates: Vec<Span> = m
        .gates
        .iter()
        .map(|g| Span {
            x: r1(x(g.start_ms)),
            w: r1((x(g.end_ms) - x(g.start_ms)).max(MIN_W)),
            y: r1(row_y(g.row) + (ROW_H - BAR_H) / 2.0),
            title: format!(
                "{}: {} gate, waited {}{}",
                m.rows[g.row].subject.label(),
                g.gate,
                human_ms(g.end_ms - g.start_ms),
                g.decision
                    .as_deref()
                    .map_or(" (still open)".into(), |d| format!(" → {d}"))
            ),
        })
        .collect();
    let rotations: Vec<Span> = m
        .rotations
        .iter()
        .map(|r| Span {
            x: r1(x(r.at_ms)),
            w: 0.0,
            y: row_y(r.row),
            title: format!(
                "+{} {}: {} session rotated: {}",
                human_ms(r.at_ms),
                m.rows[r.row].subject.label(),
                r.session,
                r.reason
            ),
        })
        .collect();
    let step = tick_step(m.span_ms);
    let ticks = (0..=m.span_ms / step)
        .map(|k| Tick {
            x: r1(x(k * step)),
            text: human_ms(k * step),
        })
        .collect();
    let page = Page {
        version: env!("CARGO_PKG_VERSION"),
        run: RunView {
            id: m.run_id.clone(),
            workflow: m.workflow.clone(),
            subjects: m.subjects.join(", "),
            state: m.state.clone(),
            started_at: m.started_at.clone(),
            updated_at: m.updated_at.clone(),
            dir: m.run_dir.display().to_string(),
        },
        totals: TotalsView {
            results: results(&m.rows),
            phases: t.phases,
            retries: t.retries,
            statuses: t
                .by_status
                .iter()
                .map(|(s, n)| format!("{n} {}", s.word()))
                .collect::<Vec<_>>()
                .join(", "),
            tokens: t.tokens,
            prompt_tokens: t.prompt_tokens,
            cost: format!("${:.2}", t.cost_usd),
            wall: human_ms(t.wall_ms),
            busy: human_ms(t.busy_ms),
            savings: human_ms(t.parallel_savings_ms),
            lanes: t.lanes,
            mask_saved: t.mask_tokens_saved,
            masked: t.masked_outputs,
            gate_wait: human_ms(t.gate_wait_ms),
        },
        row_word: super::model::row_word(&m.rows),
        g: Geometry {
            width: LABEL_W + PLOT_W + RIGHT,
            height: TOP + plot_h + 4.0,
            top: TOP,
            plot_h,
            row_h: ROW_H,
            bar_h: BAR_H,
        },
        rows,
        phases: m
            .phases
            .iter()
            .enumerate()
            .map(|(i, p)| phase_view(p, i, m, &x, base))
            .collect(),
        gates,
        rotations,
        deferred: m.deferred.clone(),
        checks: m
            .checks
            .iter()
            .map(|c| {
                let r = &c.result;
                let verdict = if r.passed {
                    format!("`{}` passed: {}", r.command, r.summary)
                } else {
                    r.describe()
                };
                let output = r
                    .output
                    .as_ref()
                    .map(|o| format!(" — output: {}", o.display()))
                    .unwrap_or_default();
                let when = if c.attempt == 0 {
                    "on the starting commit".to_string()
                } else {
                    format!("after {} (attempt {})", c.phase, c.attempt)
                };
                format!(
                    "{} {when}, {}: {verdict}{output}",
                    m.rows[c.row].subject.label(),
                    human_ms(r.duration_ms)
                )
            })
            .collect(),
        waves: m
            .waves
            .iter()
            .map(|w| WaveView {
                x: r1(x(w.start_ms)),
                w: r1((x(w.end_ms) - x(w.start_ms)).max(MIN_W)),
                wave: w.wave,
                title: format!(
                    "wave {}: tasks {} · {} · saved {}",
                    w.wave,
                    w.tasks,
                    human_ms(w.end_ms - w.start_ms),
                    human_ms(w.savings_ms)
                ),
            })
            .collect(),
        ticks,
        masks_unreadable: m.masks_unreadable,
        masks_unreadable_files: m.masks_unreadable_files.clone(),
    };
    let mut env = minijinja::Environment::new();
    // The name ends in .html: minijinja escapes every value for HTML.
    env.add_template("report.html", TEMPLATE)
        .map_err(|e| Error::internal(format!("report template: {e}")))?;
    env.get_template("report.html")
        .and_then(|t| t.render(&page))
        .map_err(|e| Error::internal(format!("report template: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_are_relative_and_encoded() {
        let base = Path::new("/p/.baton/runs/r");
        assert_eq!(
            url(Path::new("/p/.baton/runs/r/prompts/1-1.1-dev-1.md"), base),
            "prompts/1-1.1-dev-1.md"
        );
        assert_eq!(
            url(Path::new("/p/.baton/scratch/a b#c.log"), base),
            "../../scratch/a%20b%23c.log"
        );
    }

    #[test]
    fn ticks_are_round_and_few() {
        assert_eq!(tick_step(40), 5);
        assert_eq!(tick_step(213), 50);
        assert_eq!(tick_step(3_600_000), 600_000);
        assert!(tick_step(100_000_000) * 8 >= 100_000_000);
    }
}

//! Token budgets: a context window, a 50% target, zones and refresh triggers, and
//! per-phase allowances. All thresholds are fractions of the window so they scale with it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// `[budget]` in baton.toml. Every field has a default, given in its doc.
#[derive(Debug, Clone, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct BudgetConfig {
    /// Context window in tokens (default 200K).
    pub window: usize,
    /// Usage the context should stay under (fraction of the window; default 50%).
    pub target: f64,
    /// Where the warning zone starts (fraction; default 40%, 80K of 200K).
    pub warning: f64,
    /// Refresh trigger: usage above this fraction (default 70%).
    pub refresh_usage: f64,
    /// Refresh trigger: this many tasks completed in the context (default 5).
    pub refresh_tasks: u64,
    /// Refresh trigger: more than this many bytes of accumulated feedback (default 10 KB).
    pub refresh_feedback_bytes: u64,
    /// Claude has no public tokenizer: counts are o200k × this factor (an estimate).
    pub claude_factor: f64,
    /// Per-phase budgets in tokens; these override or extend [`default_phases`].
    pub phases: BTreeMap<String, usize>,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            window: 200_000,
            target: 0.5,
            warning: 0.4,
            refresh_usage: 0.7,
            refresh_tasks: 5,
            refresh_feedback_bytes: 10 * 1024,
            claude_factor: 1.15,
            phases: BTreeMap::new(),
        }
    }
}

/// The default per-phase budgets, in tokens (for a phase whose need varies, the upper end).
pub fn default_phases() -> BTreeMap<String, usize> {
    [
        ("discovery", 20_000),
        ("planning", 10_000),
        ("conductor", 5_000),
        ("implementer", 15_000),
        ("reviewer", 10_000),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

impl BudgetConfig {
    /// All phase budgets: the defaults overlaid with baton.toml's.
    pub fn all_phases(&self) -> BTreeMap<String, usize> {
        let mut all = default_phases();
        all.extend(
            self.phases
                .iter()
                .map(|(k, v)| (k.to_ascii_lowercase(), *v)),
        );
        all
    }

    pub fn phase(&self, name: &str) -> Result<usize> {
        let all = self.all_phases();
        all.get(&name.to_ascii_lowercase()).copied().ok_or_else(|| {
            let names: Vec<_> = all.keys().map(String::as_str).collect();
            Error::not_found(format!("no budget for phase {name:?}")).hint(format!(
                "known phases: {}; add one under [budget.phases] in baton.toml",
                names.join(", ")
            ))
        })
    }

    /// Thresholds must be ordered fractions, or the zones make no sense.
    pub fn validate(&self) -> Result<()> {
        let frac = |v: f64| v.is_finite() && v > 0.0 && v <= 1.0;
        let ok = self.window > 0
            && frac(self.warning)
            && frac(self.target)
            && frac(self.refresh_usage)
            && self.warning <= self.target;
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "bad [budget] thresholds: window {} warning {} target {} refresh_usage {}",
                self.window, self.warning, self.target, self.refresh_usage
            ))
            .hint(
                "in baton.toml, window > 0 and 0 < warning <= target <= 1, 0 < refresh_usage <= 1",
            ))
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// Below the warning threshold.
    Safe,
    /// Between warning and target (inclusive).
    Warning,
    /// Above the target.
    Danger,
}

impl Zone {
    pub fn name(self) -> &'static str {
        match self {
            Zone::Safe => "safe",
            Zone::Warning => "warning",
            Zone::Danger => "danger",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Ok,
    Warn,
    Rotate,
}

impl Verdict {
    /// Exit codes, documented in `baton budget --help`.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Ok => 0,
            Verdict::Warn => 10,
            Verdict::Rotate => 11,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Rotate => "rotate",
        }
    }
}

/// Extra signals beyond the token count: the refresh triggers other than usage.
#[derive(Debug, Clone, Copy, Default)]
pub struct Activity {
    pub tasks_completed: u64,
    pub feedback_bytes: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub tokens: usize,
    pub window: usize,
    pub usage: f64,
    pub warning_at: usize,
    pub target: usize,
    pub refresh_at: usize,
    pub zone: Zone,
    /// Why a refresh is due (empty when none is).
    pub triggers: Vec<String>,
    pub verdict: Verdict,
}

/// Check `tokens` against `window`: the zone from the thresholds, then the refresh triggers.
pub fn check(cfg: &BudgetConfig, window: usize, tokens: usize, act: Activity) -> Check {
    let at = |f: f64| (window as f64 * f).floor() as usize;
    let (warning_at, target, refresh_at) = (at(cfg.warning), at(cfg.target), at(cfg.refresh_usage));
    let zone = if tokens > target {
        Zone::Danger
    } else if tokens >= warning_at {
        Zone::Warning
    } else {
        Zone::Safe
    };
    let mut triggers = Vec::new();
    if tokens > refresh_at {
        triggers.push(format!(
            "usage above {:.0}% of the window",
            cfg.refresh_usage * 100.0
        ));
    }
    if cfg.refresh_tasks > 0 && act.tasks_completed >= cfg.refresh_tasks {
        triggers.push(format!(
            "{} tasks completed (refresh every {})",
            act.tasks_completed, cfg.refresh_tasks
        ));
    }
    if act.feedback_bytes > cfg.refresh_feedback_bytes {
        triggers.push(format!(
            "{} bytes of feedback (more than {})",
            act.feedback_bytes, cfg.refresh_feedback_bytes
        ));
    }
    let verdict = if !triggers.is_empty() {
        Verdict::Rotate
    } else if zone == Zone::Safe {
        Verdict::Ok
    } else {
        Verdict::Warn
    };
    Check {
        tokens,
        window,
        usage: tokens as f64 / window as f64,
        warning_at,
        target,
        refresh_at,
        zone,
        triggers,
        verdict,
    }
}

/// The window a phase budget stands for: the phase budget is that context's target, so the
/// window is budget / target (implementer 15K at a 50% target → a 30K window).
pub fn phase_window(cfg: &BudgetConfig, phase_budget: usize) -> usize {
    ((phase_budget as f64 / cfg.target).round() as usize).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use baton_core::error::Fault;

    #[test]
    fn default_zones_at_200k() {
        let cfg = BudgetConfig::default();
        let z = |t| check(&cfg, 200_000, t, Activity::default());
        assert_eq!(z(79_999).zone, Zone::Safe);
        assert_eq!(z(79_999).verdict, Verdict::Ok);
        assert_eq!(z(80_000).zone, Zone::Warning);
        assert_eq!(z(100_000).zone, Zone::Warning);
        assert_eq!(z(100_001).zone, Zone::Danger);
        assert_eq!(z(100_001).verdict, Verdict::Warn);
        assert_eq!(z(140_000).verdict, Verdict::Warn);
        assert_eq!(z(140_001).verdict, Verdict::Rotate);
        let act = |t, f| {
            check(
                &cfg,
                200_000,
                10,
                Activity {
                    tasks_completed: t,
                    feedback_bytes: f,
                },
            )
        };
        assert_eq!(act(4, 10_240).verdict, Verdict::Ok);
        assert_eq!(act(5, 0).verdict, Verdict::Rotate);
        assert_eq!(act(0, 10_241).verdict, Verdict::Rotate);
    }

    #[test]
    fn zones_scale_and_phases_merge() {
        let mut cfg = BudgetConfig::default();
        assert_eq!(
            check(&cfg, 1000, 400, Activity::default()).zone,
            Zone::Warning
        );
        cfg.phases.insert("Implementer".into(), 8_000);
        cfg.phases.insert("tester".into(), 3_000);
        assert_eq!(cfg.phase("implementer").unwrap(), 8_000);
        assert_eq!(cfg.phase("tester").unwrap(), 3_000);
        assert_eq!(cfg.phase("reviewer").unwrap(), 10_000);
        assert_eq!(cfg.phase("nope").unwrap_err().exit_code(), 4);
        assert_eq!(phase_window(&cfg, 15_000), 30_000);
        cfg.warning = 0.9;
        assert!(cfg.validate().is_err());
    }
}

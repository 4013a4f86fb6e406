//! Which commands a pre-tool hook routes through `baton mask` before they run (`[mask]
//! route`): those likely to print a lot, for an agent CLI that cuts a command's output before
//! its post-tool hooks see it (codex).

use super::MaskConfig;

/// Commands likely to print a lot: test runners, builds, linters, diffs, logs and file reads.
pub const DEFAULT_ROUTE: &[&str] = &[
    "cargo test",
    "cargo nextest",
    "cargo build",
    "cargo check",
    "cargo clippy",
    "go test",
    "go build",
    "go vet",
    "pytest",
    "python -m pytest",
    "python3 -m pytest",
    "npm test",
    "npm run test",
    "npm run build",
    "npm run lint",
    "yarn test",
    "pnpm test",
    "npx jest",
    "npx vitest",
    "jest",
    "vitest",
    "make",
    "mvn",
    "gradle",
    "./gradlew",
    "tsc",
    "eslint",
    "ruff",
    "mypy",
    "git diff",
    "git log",
    "docker logs",
    "kubectl logs",
    "journalctl",
    // A whole-file read: answered outline first when the file is large (`[mask]
    // read_threshold`), whole otherwise.
    "cat",
];

impl MaskConfig {
    /// The routed command prefixes in effect (`[mask] route`, else [`DEFAULT_ROUTE`]).
    pub fn route(&self) -> Vec<String> {
        match &self.route {
            Some(r) => r.clone(),
            None => DEFAULT_ROUTE.iter().map(|s| s.to_string()).collect(),
        }
    }
}

/// Whether `command` starts with one of `route`'s entries, word for word.
pub fn matches(command: &str, route: &[String]) -> bool {
    let words: Vec<&str> = command.split_whitespace().collect();
    route.iter().any(|r| {
        let want: Vec<&str> = r.split_whitespace().collect();
        !want.is_empty() && words.len() >= want.len() && words[..want.len()] == want[..]
    })
}

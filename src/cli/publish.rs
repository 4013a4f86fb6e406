//! Publishing a finished epic run (`[publish]`, opt-in): its branch pushed to the project's
//! remote — never a protected branch, never forced — and a pull request opened with `gh`
//! when it is installed. Which branch: the user's, when the run landed there; the run's own
//! (`baton/run-<id>`) when its commits were kept there; the checkout's, for a run in place.
//! Nothing that goes wrong here fails the run: a remote that cannot be reached, a refused
//! push or a missing `gh` is a warning saying what to do by hand.

use baton_engine::config::Project;
use baton_engine::git::Git;
use baton_engine::workflow::epic::tree::Landing;

/// What publishing did, line by line (said after the run's summary).
pub fn publish(
    project: &Project,
    landing: Option<&Landing>,
    title: &str,
    body: &str,
) -> Vec<String> {
    let cfg = &project.config.publish;
    if !cfg.push && !cfg.pr {
        return vec![];
    }
    let git = Git::new(&project.dir);
    let branch = match landing {
        Some(Landing::Moved { branch, .. }) | Some(Landing::Kept { branch, .. }) => branch.clone(),
        Some(Landing::Nothing) => {
            return vec!["publish: the run committed nothing: nothing to push".into()];
        }
        None => match git.branch() {
            Ok(b) if b != "HEAD" => b,
            _ => return vec!["publish: warning: no branch to push (detached HEAD)".into()],
        },
    };
    if project.config.run.protected_branches.contains(&branch) {
        return vec![format!(
            "publish: warning: `{branch}` is protected: not pushed"
        )];
    }
    let remote = cfg.remote.as_deref().unwrap_or("origin");
    if remote.starts_with('-') || remote.is_empty() {
        return vec![format!("publish: warning: `{remote}` is not a remote name")];
    }
    let refspec = format!("refs/heads/{branch}:refs/heads/{branch}");
    if let Err(e) = push(&project.dir, remote, &refspec) {
        return vec![format!(
            "publish: warning: `{branch}` was not pushed to {remote}: {e}; push it yourself: git push {remote} {branch}"
        )];
    }
    let mut out = vec![format!("publish: pushed `{branch}` to {remote}")];
    if cfg.pr {
        out.push(pull_request(&project.dir, &branch, title, body));
    }
    out
}

/// `git push -q REMOTE REFSPEC`, never asking anyone anything: the run is unattended, so no
/// password or passphrase prompt (git's, ssh's on the terminal) may hold its end up.
fn push(dir: &std::path::Path, remote: &str, refspec: &str) -> Result<(), String> {
    let mut c = std::process::Command::new("git");
    c.arg("-C")
        .arg(dir)
        .args(["push", "-q", remote, refspec])
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null());
    if std::env::var_os("GIT_SSH_COMMAND").is_none() {
        c.env(
            "GIT_SSH_COMMAND",
            "ssh -o BatchMode=yes -o ConnectTimeout=30",
        );
    }
    let o = c.output().map_err(|e| format!("cannot run git: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&o.stderr).trim().to_string())
    }
}

/// `gh pr create` for `branch`: its URL, or why not.
fn pull_request(dir: &std::path::Path, branch: &str, title: &str, body: &str) -> String {
    let gh = std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .map(|d| d.join("gh"))
        .find(|p| p.is_file());
    let Some(gh) = gh else {
        return format!(
            "publish: warning: gh is not installed: open the pull request for `{branch}` yourself"
        );
    };
    // Arguments, never a shell; stdin closed: gh must not wait for a prompt.
    let o = std::process::Command::new(gh)
        .args([
            "pr", "create", "--head", branch, "--title", title, "--body", body,
        ])
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output();
    match o {
        Ok(o) if o.status.success() => format!(
            "publish: pull request {}",
            String::from_utf8_lossy(&o.stdout).trim()
        ),
        Ok(o) => format!(
            "publish: warning: gh could not open the pull request: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("publish: warning: gh could not run: {e}"),
    }
}

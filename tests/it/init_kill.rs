//! `baton init --global` and `--uninstall` killed at every step (`BATON_INIT_KILL_AT`: each
//! file written, each temp file before its rename, the record): the user's files keep their
//! permissions and links, no copy of their token is left where the next run does not sweep
//! it, baton's entries are never stranded without a record, and the same command run again
//! completes (install) or undoes (uninstall) it, byte for byte.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;

use crate::util::{Proj, snapshot};

const TOKEN: &str = "t0p-s3cret-4f9a";

/// A user's home as claude leaves it: `~/.claude.json` 0600 with an MCP server's token in it,
/// pretty-printed as claude writes it; settings kept in a dotfiles folder, linked.
fn home_with_secrets(h: &Path) {
    std::fs::create_dir_all(h.join(".claude")).unwrap();
    std::fs::create_dir_all(h.join("dotfiles")).unwrap();
    let state = format!(
        "{{\n  \"numStartups\": 3,\n  \"mcpServers\": {{\n    \"db\": {{\n      \"command\": \"db-mcp\",\n      \"env\": {{\n        \"DB_TOKEN\": \"{TOKEN}\"\n      }}\n    }}\n  }}\n}}"
    );
    std::fs::write(h.join(".claude.json"), state).unwrap();
    std::fs::set_permissions(
        h.join(".claude.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(
        h.join("dotfiles/claude-settings.json"),
        "{\n    \"model\": \"opus\",\n    \"hooks\": {}\n}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        h.join("dotfiles/claude-settings.json"),
        h.join(".claude/settings.json"),
    )
    .unwrap();
}

/// `baton init claude --global ARGS` for HOME `h`, killed at step `kill` (0: never).
fn init(p: &Proj, h: &Path, args: &[&str], kill: u32) -> std::process::Output {
    let mut c = p.cmd(&["init", "claude", "--global"]);
    c.args(args)
        .env("HOME", h)
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("CLAUDE_CONFIG_DIR");
    if kill > 0 {
        c.env("BATON_INIT_KILL_AT", kill.to_string());
    }
    c.output().unwrap()
}

/// What must hold whenever init stops, killed or not.
fn check(h: &Path, when: &str) {
    let mode = std::fs::metadata(h.join(".claude.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{when}: ~/.claude.json loosened");
    let link = std::fs::symlink_metadata(h.join(".claude/settings.json")).unwrap();
    assert!(
        link.file_type().is_symlink(),
        "{when}: the settings link was replaced"
    );
    let files = snapshot(h);
    for (path, bytes) in &files {
        let name = path.file_name().unwrap().to_string_lossy();
        // The user's file itself, and the temp file of a write killed before its rename
        // (beside it, as private, swept by the next init or uninstall).
        if name == ".claude.json" || name == "..claude.json.baton-init" {
            continue;
        }
        assert!(
            !String::from_utf8_lossy(bytes).contains(TOKEN),
            "{when}: the token is in {}",
            path.display()
        );
    }
    let has_entries = files.iter().any(|(p, b)| {
        !p.starts_with(h.join(".config")) && String::from_utf8_lossy(b).contains("baton")
    });
    assert!(
        !has_entries || h.join(".config/baton/init-claude.json").is_file(),
        "{when}: baton's entries without a record"
    );
}

fn no_temps(h: &Path) {
    for path in snapshot(h).keys() {
        assert!(
            !path.to_string_lossy().ends_with(".baton-init"),
            "{} left behind",
            path.display()
        );
    }
}

#[test]
fn global_init_killed_at_every_step_is_completed_or_undone_by_running_it_again() {
    let p = Proj::new();
    let mut steps = 0;
    for kill in 1.. {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        home_with_secrets(h);
        let pristine = snapshot(h);
        let o = init(&p, h, &[], kill);
        if o.status.success() {
            steps = kill - 1;
            break;
        }
        assert_eq!(
            o.status.signal(),
            Some(9),
            "step {kill}: {}",
            crate::util::text(&o)
        );
        check(h, &format!("killed at install step {kill}"));
        // A dry run changes nothing, not even the temp file a kill left.
        let before_dry = snapshot(h);
        let o = init(&p, h, &["--dry-run"], 0);
        assert!(o.status.success(), "{}", crate::util::text(&o));
        assert_eq!(
            snapshot(h),
            before_dry,
            "a dry run after a kill at step {kill}"
        );
        // Uninstall straight after the kill undoes what the killed init did…
        let o = init(&p, h, &["--uninstall"], 0);
        assert!(o.status.success(), "{}", crate::util::text(&o));
        no_temps(h);
        let mut after = snapshot(h);
        after.retain(|k, _| !k.starts_with(h.join(".config")));
        assert_eq!(after, pristine, "uninstall after a kill at step {kill}");
        // …and init run again completes it.
        let o = init(&p, h, &[], 0);
        assert!(o.status.success(), "{}", crate::util::text(&o));
        check(h, "init again");
        no_temps(h);
        let state = std::fs::read_to_string(h.join(".claude.json")).unwrap();
        assert!(
            state.contains("\"baton\"") && state.contains(TOKEN),
            "{state}"
        );
    }
    assert!(steps >= 5, "only {steps} steps: the hook is not reached");
    // Uninstall killed at every step: run again, every file is back byte for byte.
    for kill in 1..=steps + 1 {
        let home = tempfile::tempdir().unwrap();
        let h = home.path();
        home_with_secrets(h);
        let pristine = snapshot(h);
        assert!(init(&p, h, &[], 0).status.success());
        let record = std::fs::read_to_string(h.join(".config/baton/init-claude.json")).unwrap();
        assert!(
            !record.contains(TOKEN),
            "the record keeps the token: {record}"
        );
        let o = init(&p, h, &["--uninstall"], kill);
        if !o.status.success() {
            assert_eq!(o.status.signal(), Some(9), "{}", crate::util::text(&o));
        }
        check(h, &format!("killed at uninstall step {kill}"));
        let o = init(&p, h, &["--uninstall"], 0);
        assert!(o.status.success(), "{}", crate::util::text(&o));
        no_temps(h);
        let mut after = snapshot(h);
        after.retain(|k, _| !k.starts_with(h.join(".config")));
        assert_eq!(
            after, pristine,
            "uninstall killed at step {kill}, then run again"
        );
    }
}

/// A user's file baton edits stays theirs: run by root (an admin setting up a user's home,
/// a container), init and uninstall keep the file's owner, not root's.
#[test]
fn init_keeps_the_owner_of_the_files_it_edits() {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: reading this process's user id.
    if unsafe { libc::geteuid() } != 0 {
        println!("skipped: only root can give a file to another user");
        return;
    }
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    home_with_secrets(h);
    let state = h.join(".claude.json");
    std::os::unix::fs::chown(&state, Some(4321), Some(4322)).unwrap();
    let owner = |f: &Path| {
        let m = std::fs::metadata(f).unwrap();
        (m.uid(), m.gid())
    };
    assert!(init(&p, h, &[], 0).status.success());
    assert!(
        std::fs::read_to_string(&state)
            .unwrap()
            .contains("\"baton\"")
    );
    assert_eq!(owner(&state), (4321, 4322));
    assert!(init(&p, h, &["--uninstall"], 0).status.success());
    assert_eq!(owner(&state), (4321, 4322));
}

/// A record an older baton wrote (version 1: each file's whole text before and after) is
/// still read: uninstall takes baton's part out, and the next init rewrites the record
/// without those texts.
#[test]
fn an_older_record_is_read_and_rewritten_without_the_users_texts() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    home_with_secrets(h);
    let pristine = snapshot(h);
    assert!(init(&p, h, &[], 0).status.success());
    let record = h.join(".config/baton/init-claude.json");
    let mut v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
    // Version 1's shape, as an older baton left it.
    v["version"] = 1.into();
    for f in v["files"].as_array_mut().unwrap() {
        let path = h.join(f["path"].as_str().unwrap());
        let now = std::fs::read_to_string(&path).unwrap();
        let before = pristine
            .get(&path)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        let o = f.as_object_mut().unwrap();
        for k in ["created", "layout", "written"] {
            o.remove(k);
        }
        if let Some(e) = o.get_mut("edit").and_then(|e| e.as_object_mut()) {
            e.remove("splices");
        }
        o.insert("before".into(), before.into());
        o.insert("after".into(), now.into());
    }
    std::fs::write(&record, v.to_string()).unwrap();
    // Init again reads it and writes it back as version 2: no text of the user's in it.
    assert!(init(&p, h, &[], 0).status.success());
    let again = std::fs::read_to_string(&record).unwrap();
    assert!(
        again.contains("\"version\": 2") && !again.contains(TOKEN),
        "{again}"
    );
    assert!(init(&p, h, &["--uninstall"], 0).status.success());
    let mut after = snapshot(h);
    after.retain(|k, _| !k.starts_with(h.join(".config")));
    assert_eq!(after, pristine);
}

//! `baton init`: merged into existing files, idempotent, `--dry-run` a diff, `--uninstall` exact.

use std::path::Path;

use serde_json::{Value, json};

use crate::util::{Proj, snapshot};

/// A user's own settings: other hooks, permissions, keys baton does not know, odd formatting.
const SETTINGS: &str = r#"{
  "permissions": {"allow": ["Bash(npm test:*)", "mcp__github"], "deny": ["Read(./.env)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  },
  "env": {"FOO": "1"},
  "model": "opus"
}
"#;

fn json_at(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

/// Every file of the project outside .git and .baton.
fn files(p: &Proj) -> std::collections::BTreeMap<std::path::PathBuf, Vec<u8>> {
    snapshot(p.path())
        .into_iter()
        .filter(|(k, _)| {
            let r = k.strip_prefix(p.path()).unwrap();
            !r.starts_with(".git") && !r.starts_with(".baton")
        })
        .collect()
}

#[test]
fn claude_keeps_every_key_and_uninstall_restores_bytes() {
    let p = Proj::new();
    p.write(".claude/settings.json", SETTINGS);
    p.write("CLAUDE.md", "# My project\n\nRun `make`.\n");
    let before = files(&p);
    // Dry run: a diff, nothing written.
    p.test()
        .args(["init", "claude", "--dry-run"])
        .stdout_contains("+++ b/.claude/settings.json")
        .stdout_contains("+    \"baton\": {")
        .stdout_contains("(dry run: nothing written)")
        .run();
    assert_eq!(files(&p), before);
    p.test()
        .args(["init", "claude"])
        .stdout(
            "created .mcp.json\nchanged .claude/settings.json\n\
             created .claude/commands/baton-status.md\ncreated .claude/commands/baton-begin.md\n\
             created .claude/commands/baton-complete.md\ncreated .claude/commands/baton-epic.md\n\
             changed CLAUDE.md\n\
             baton is set up for claude; `baton init claude --uninstall` removes it\n\
             Before claude uses it:\n\
             - trust this folder in claude (start `claude` here once and accept the trust dialog): \
             until then claude ignores the project's permission for baton's MCP tools\n\
             - restart the claude sessions already running here\n",
        )
        .run();
    let s = json_at(&p.path().join(".claude/settings.json"));
    let orig: Value = serde_json::from_str(SETTINGS).unwrap();
    // The user's keys keep their order (not sorted); baton's come after them.
    let text = std::fs::read_to_string(p.path().join(".claude/settings.json")).unwrap();
    let at = |key: &str| {
        text.find(&format!("\"{key}\""))
            .unwrap_or_else(|| panic!("{key} in {text}"))
    };
    assert!(at("permissions") < at("hooks"), "{text}");
    assert!(at("hooks") < at("env") && at("env") < at("model"), "{text}");
    assert!(at("allow") < at("deny"), "{text}");
    assert!(at("PostToolUse") < at("Stop"), "{text}");
    assert!(at("Stop") < at("SessionStart"), "{text}");
    // Every original key and entry is still there.
    // The user's permissions, and baton's MCP tools allowed after them.
    let mut perms = orig["permissions"].clone();
    perms["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("mcp__baton"));
    assert_eq!(s["permissions"], perms);
    assert_eq!(s["enabledMcpjsonServers"], json!(["baton"]));
    assert_eq!(s["env"], orig["env"]);
    assert_eq!(s["model"], "opus");
    assert_eq!(s["hooks"]["Stop"], orig["hooks"]["Stop"]);
    assert_eq!(
        s["hooks"]["PostToolUse"][0],
        orig["hooks"]["PostToolUse"][0]
    );
    assert_eq!(
        s["hooks"]["PostToolUse"][1]["hooks"][0]["command"],
        "baton hook claude post-tool-use"
    );
    assert_eq!(
        s["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "baton hook claude session-start"
    );
    assert_eq!(
        json_at(&p.path().join(".mcp.json")),
        json!({"mcpServers": {"baton": {"command": "baton", "args": ["mcp"]}}})
    );
    let md = std::fs::read_to_string(p.path().join("CLAUDE.md")).unwrap();
    assert!(
        md.starts_with("# My project\n\nRun `make`.\n\n<!-- baton:begin"),
        "{md}"
    );
    // Idempotent.
    let installed = files(&p);
    p.test()
        .args(["init", "claude"])
        .stdout("claude: already set up: nothing to change\n")
        .run();
    assert_eq!(files(&p), installed);
    // Uninstall: byte for byte what was there.
    p.test()
        .args(["init", "claude", "--uninstall"])
        .any_stdout()
        .run();
    assert_eq!(files(&p), before);
    p.test()
        .args(["init", "claude", "--uninstall"])
        .stdout("claude: nothing of baton's to remove\n")
        .run();
}

#[test]
fn uninstall_after_an_edit_removes_only_batons_entries() {
    let p = Proj::new();
    p.write(".claude/settings.json", SETTINGS);
    p.test().args(["init", "claude"]).any_stdout().run();
    // The user adds a permission after init.
    let path = p.path().join(".claude/settings.json");
    let mut s = json_at(&path);
    s["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(ls:*)"));
    // And two hook events of their own, after baton's.
    let notify = json!([{"hooks": [{"type": "command", "command": "notify-send"}]}]);
    s["hooks"]["UserPromptSubmit"] = notify.clone();
    s["hooks"]["Notification"] = notify.clone();
    std::fs::write(&path, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    p.test()
        .args(["init", "claude", "--uninstall"])
        .any_stdout()
        .run();
    let mut want: Value = serde_json::from_str(SETTINGS).unwrap();
    want["permissions"]["allow"]
        .as_array_mut()
        .unwrap()
        .push(json!("Bash(ls:*)"));
    want["hooks"]["UserPromptSubmit"] = notify.clone();
    want["hooks"]["Notification"] = notify;
    assert_eq!(json_at(&path), want);
    // What baton took out leaves the user's keys in their order.
    let events: Vec<String> = json_at(&path)["hooks"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(
        events,
        ["PostToolUse", "Stop", "UserPromptSubmit", "Notification"]
    );
    assert!(!p.path().join(".mcp.json").exists());
    assert!(!p.path().join(".claude/commands").exists());
}

#[test]
fn codex_and_gemini_files() {
    let p = Proj::new();
    p.write(".codex/config.toml", "# my codex\nmodel = \"o3\"\n");
    p.test().args(["init", "codex"]).any_stdout().run();
    let toml = std::fs::read_to_string(p.path().join(".codex/config.toml")).unwrap();
    assert_eq!(
        toml,
        "# my codex\nmodel = \"o3\"\n\n[mcp_servers.baton]\ncommand = \"baton\"\nargs = [\"mcp\"]\n\
         default_tools_approval_mode = \"approve\"\n"
    );
    let hooks = json_at(&p.path().join(".codex/hooks.json"));
    assert_eq!(hooks["hooks"]["PostToolUse"][0]["matcher"], "Bash");
    assert_eq!(
        hooks["hooks"]["PreToolUse"][0]["hooks"][0]["command"],
        "baton hook codex pre-tool-use"
    );
    assert!(
        std::fs::read_to_string(p.path().join("AGENTS.md"))
            .unwrap()
            .contains("## baton")
    );
    p.test()
        .args(["init", "codex", "--uninstall"])
        .any_stdout()
        .run();
    assert_eq!(
        std::fs::read_to_string(p.path().join(".codex/config.toml")).unwrap(),
        "# my codex\nmodel = \"o3\"\n"
    );
    assert!(!p.path().join(".codex/hooks.json").exists());

    p.test().args(["init", "gemini"]).any_stdout().run();
    let g = json_at(&p.path().join(".gemini/settings.json"));
    assert_eq!(g["mcpServers"]["baton"]["command"], "baton");
    // baton's server, and only it, needs no confirmation: gemini offers it headless.
    assert_eq!(g["mcpServers"]["baton"]["trust"], true);
    assert_eq!(
        g["hooks"]["AfterTool"][0]["matcher"],
        "run_shell_command|read_file"
    );
    assert!(g["hooks"].get("BeforeTool").is_none());
    assert_eq!(
        g["hooks"]["PreCompress"][0]["hooks"][0]["command"],
        "baton hook gemini pre-compact"
    );
    let cmd = std::fs::read_to_string(p.path().join(".gemini/commands/baton-begin.toml")).unwrap();
    assert!(cmd.contains("{{args}}"), "{cmd}");
}

#[test]
fn a_broken_settings_file_is_refused_and_left_alone() {
    let p = Proj::new();
    p.write(".claude/settings.json", "{ \"hooks\": [ }");
    let before = files(&p);
    p.test()
        .args(["init", "claude"])
        .stderr_contains("error: .claude/settings.json: not valid JSON")
        .status(2)
        .run();
    assert_eq!(files(&p), before);
}

/// `baton init AGENT --global`: the user's settings under HOME, merged into what is there,
/// recorded in ~/.config/baton, and `--global --uninstall` restores every file byte for byte;
/// the project is not touched.
#[test]
fn global_init_writes_the_users_settings_and_uninstall_restores_them() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    // The user's own files: Claude's state file, settings, a codex config, gemini settings.
    let claude_json =
        "{\"numStartups\": 7, \"projects\": {\"/x\": {\"hasTrustDialogAccepted\": true}}}\n";
    std::fs::create_dir_all(h.join(".claude")).unwrap();
    std::fs::create_dir_all(h.join(".codex")).unwrap();
    std::fs::create_dir_all(h.join(".gemini")).unwrap();
    std::fs::write(h.join(".claude.json"), claude_json).unwrap();
    std::fs::write(h.join(".claude/settings.json"), SETTINGS).unwrap();
    std::fs::write(h.join(".codex/config.toml"), "model = \"gpt-5-codex\"\n").unwrap();
    std::fs::write(h.join(".gemini/settings.json"), "{\"theme\": \"dark\"}\n").unwrap();
    let project_before = files(&p);
    let home_before = snapshot(h);
    let run = |args: &[&str]| {
        let o = p
            .cmd(args)
            .env("HOME", h)
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::util::text(&o));
        String::from_utf8(o.stdout).unwrap()
    };
    for agent in ["claude", "codex", "gemini"] {
        let out = run(&["init", agent, "--global"]);
        assert!(out.contains("in every project"), "{out}");
        assert!(
            out.contains(&format!("`baton init {agent} --global --uninstall`")),
            "{out}"
        );
        assert!(h.join(format!(".config/baton/init-{agent}.json")).is_file());
        // Again: nothing to change.
        assert!(run(&["init", agent, "--global"]).contains("nothing to change"));
    }
    let settings = json_at(&h.join(".claude/settings.json"));
    let hook = settings["hooks"]["PostToolUse"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["matcher"] == "Bash|Read|mcp__.*")
        .unwrap();
    assert_eq!(
        hook["hooks"][0]["command"],
        "baton hook claude post-tool-use --scope user"
    );
    assert_eq!(settings["model"], "opus", "the user's keys are kept");
    assert!(settings.get("enabledMcpjsonServers").is_none());
    let state = json_at(&h.join(".claude.json"));
    assert_eq!(state["mcpServers"]["baton"]["args"], json!(["mcp"]));
    assert_eq!(state["numStartups"], 7);
    assert!(h.join(".claude/commands/baton-status.md").is_file());
    assert!(
        std::fs::read_to_string(h.join(".claude/CLAUDE.md"))
            .unwrap()
            .contains("## baton")
    );
    let codex = std::fs::read_to_string(h.join(".codex/config.toml")).unwrap();
    assert!(codex.contains("[mcp_servers.baton]") && codex.contains("model = \"gpt-5-codex\""));
    assert!(
        std::fs::read_to_string(h.join(".codex/hooks.json"))
            .unwrap()
            .contains("--scope user")
    );
    let gemini = json_at(&h.join(".gemini/settings.json"));
    assert_eq!(gemini["theme"], "dark");
    assert_eq!(gemini["mcpServers"]["baton"]["trust"], true);
    assert_eq!(files(&p), project_before, "the project is not touched");
    for agent in ["claude", "codex", "gemini"] {
        run(&["init", agent, "--global", "--uninstall"]);
    }
    let mut after = snapshot(h);
    // The record folder baton made stays (empty of records).
    after.retain(|k, _| !k.starts_with(h.join(".config")));
    assert_eq!(after, home_before, "every user file restored byte for byte");
}

/// A CLI whose folder the user moved ($CLAUDE_CONFIG_DIR, $CODEX_HOME, $GEMINI_CLI_HOME) is
/// wired there, where the CLI reads it, not under HOME; doctor finds it there, and uninstall
/// restores it byte for byte.
#[test]
fn global_init_follows_each_clis_folder_where_its_variable_puts_it() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let moved = tempfile::tempdir().unwrap();
    let (h, m) = (home.path(), moved.path());
    let (claude, codex, gemini) = (m.join("claude"), m.join("codex"), m.join("gem"));
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::write(codex.join("config.toml"), "model = \"gpt-5-codex\"\n").unwrap();
    let moved_before = snapshot(m);
    // Each CLI installed (doctor looks at the wiring of installed CLIs only).
    let bin = tempfile::tempdir().unwrap();
    for cli in ["claude", "codex", "gemini"] {
        use std::os::unix::fs::PermissionsExt;
        let f = bin.path().join(cli);
        std::fs::write(&f, "#!/bin/sh\necho '9.9.9'\n").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let cmd = |args: &[&str]| {
        let mut c = p.cmd(args);
        c.env("HOME", h)
            .env("PATH", crate::util::path_with(&[bin.path()]))
            .env("CLAUDE_CONFIG_DIR", &claude)
            .env("CODEX_HOME", &codex)
            .env("GEMINI_CLI_HOME", &gemini)
            .env_remove("XDG_CONFIG_HOME");
        c
    };
    for agent in ["claude", "codex", "gemini"] {
        let o = cmd(&["init", agent, "--global"]).output().unwrap();
        assert!(o.status.success(), "{}", crate::util::text(&o));
    }
    let hook = json_at(&claude.join("settings.json"))["hooks"]["PostToolUse"].to_string();
    assert!(hook.contains("--scope user"), "{hook}");
    assert_eq!(
        json_at(&claude.join(".claude.json"))["mcpServers"]["baton"]["args"],
        json!(["mcp"])
    );
    assert!(claude.join("commands/baton-status.md").is_file());
    let config = std::fs::read_to_string(codex.join("config.toml")).unwrap();
    assert!(config.contains("[mcp_servers.baton]") && config.contains("gpt-5-codex"));
    assert!(
        std::fs::read_to_string(codex.join("hooks.json"))
            .unwrap()
            .contains("--scope user")
    );
    assert!(codex.join("AGENTS.md").is_file());
    assert_eq!(
        json_at(&gemini.join(".gemini/settings.json"))["mcpServers"]["baton"]["trust"],
        true
    );
    // Nothing went under HOME but baton's record of it.
    let in_home: Vec<_> = snapshot(h)
        .into_keys()
        .filter(|k| !k.starts_with(h.join(".config/baton")))
        .collect();
    assert!(in_home.is_empty(), "{in_home:?}");
    // doctor looks where the CLI reads.
    let o = cmd(&["doctor", "--agents", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    for a in v["agents"].as_array().unwrap() {
        assert_eq!(a["wired_at"], json!(["user"]), "{a}");
    }
    for agent in ["claude", "codex", "gemini"] {
        let o = cmd(&["init", agent, "--global", "--uninstall"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::util::text(&o));
    }
    assert_eq!(snapshot(m), moved_before, "restored byte for byte");
}

/// A user settings file that is not JSON is refused, and nothing is written.
#[test]
fn global_init_refuses_a_broken_user_settings_file() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join(".claude")).unwrap();
    std::fs::write(home.path().join(".claude/settings.json"), "{ not json").unwrap();
    let before = snapshot(home.path());
    let o = p
        .cmd(&["init", "claude", "--global"])
        .env("HOME", home.path())
        .output()
        .unwrap();
    crate::util::assert_exit(&o, 2);
    assert!(
        crate::util::text(&o).contains(".claude/settings.json"),
        "{}",
        crate::util::text(&o)
    );
    assert_eq!(snapshot(home.path()), before);
}

/// One output is masked once: a user-level (or plugin) hook steps aside in a project wired
/// itself, and answers where nothing else is wired.
#[test]
fn a_user_level_hook_steps_aside_for_the_projects_own() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let big: String = (0..4000).map(|i| format!("compiling unit {i}\n")).collect();
    let payload = json!({"session_id": "s", "tool_name": "Bash", "tool_input": {"command": "make"},
        "tool_response": {"stdout": big, "stderr": "", "interrupted": false, "isImage": false}})
    .to_string();
    let answers = |scope: &str| {
        use std::io::Write;
        let mut child = p
            .cmd(&["hook", "claude", "post-tool-use", "--scope", scope])
            .env("HOME", home.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        !child.wait_with_output().unwrap().stdout.is_empty()
    };
    assert!(answers("user") && answers("plugin") && answers("project"));
    let o = p.cmd(&["init", "claude"]).output().unwrap();
    assert!(o.status.success());
    assert!(!answers("user") && !answers("plugin"));
    assert!(answers("project"));
}

/// A place init cannot write (a folder that is a file: the user's settings folder, or the
/// record's) stops init with the path named, and nothing is changed: nothing half set up.
#[test]
fn init_that_cannot_write_a_file_puts_back_what_it_wrote() {
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::write(h.join(".claude.json"), "{\"numStartups\": 1}\n").unwrap();
    // `baton init claude --global` fails saying `says`, and HOME is as it was.
    let refused = |says: &str| {
        let before = snapshot(h);
        let o = p
            .cmd(&["init", "claude", "--global"])
            .env("HOME", h)
            .env_remove("XDG_CONFIG_HOME")
            .output()
            .unwrap();
        let t = crate::util::text(&o);
        crate::util::assert_exit(&o, 6);
        assert!(t.contains(says), "{t}");
        assert_eq!(snapshot(h), before);
    };
    // The record's folder is a file: caught before any file is written.
    std::fs::create_dir_all(h.join(".config")).unwrap();
    std::fs::write(h.join(".config/baton"), "not a folder").unwrap();
    refused(".config/baton");
    std::fs::remove_file(h.join(".config/baton")).unwrap();
    // The record itself cannot be written (its path is a folder): the files written before it
    // are put back.
    std::fs::create_dir_all(h.join(".config/baton/init-claude.json/x")).unwrap();
    refused("nothing was changed");
    assert!(!h.join(".claude").exists());
    std::fs::remove_dir_all(h.join(".config")).unwrap();
    // The settings folder is a file: refused while planning, the file named.
    std::fs::write(h.join(".claude"), "not a folder").unwrap();
    refused(".claude/settings.json");
}

/// `init --global` keeps the user's files as they were: a 0600 `~/.claude.json` stays 0600, a
/// settings file that is a link into a dotfiles checkout stays a link (its target is what is
/// written), and the record baton keeps of them is the user's alone (0600); uninstall puts
/// the content back through the link.
#[test]
fn global_init_keeps_the_users_permissions_and_links() {
    use std::os::unix::fs::PermissionsExt;
    let p = Proj::new();
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    std::fs::create_dir_all(h.join(".claude")).unwrap();
    std::fs::create_dir_all(h.join("dotfiles")).unwrap();
    let secret = "{\"mcpServers\": {\"x\": {\"env\": {\"TOKEN\": \"t0p-s3cret\"}}}}\n";
    std::fs::write(h.join(".claude.json"), secret).unwrap();
    std::fs::set_permissions(
        h.join(".claude.json"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    std::fs::write(
        h.join("dotfiles/claude-settings.json"),
        "{\"theme\": \"dark\"}\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(
        h.join("dotfiles/claude-settings.json"),
        h.join(".claude/settings.json"),
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = p
            .cmd(args)
            .env("HOME", h)
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", crate::util::text(&o));
    };
    let mode = |f: &std::path::Path| std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
    run(&["init", "claude", "--global"]);
    assert_eq!(
        mode(&h.join(".claude.json")),
        0o600,
        "the user's file was loosened"
    );
    assert!(
        std::fs::read_to_string(h.join(".claude.json"))
            .unwrap()
            .contains("\"baton\"")
    );
    let link = h.join(".claude/settings.json");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced by a file"
    );
    assert!(
        std::fs::read_to_string(h.join("dotfiles/claude-settings.json"))
            .unwrap()
            .contains("hook claude post-tool-use"),
        "the link's target was not written"
    );
    let record = h.join(".config/baton/init-claude.json");
    assert_eq!(mode(&record), 0o600, "the record is readable by others");
    run(&["init", "claude", "--global", "--uninstall"]);
    assert_eq!(
        std::fs::read_to_string(h.join(".claude.json")).unwrap(),
        secret
    );
    assert_eq!(mode(&h.join(".claude.json")), 0o600);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(
        std::fs::read_to_string(h.join("dotfiles/claude-settings.json")).unwrap(),
        "{\"theme\": \"dark\"}\n"
    );
}

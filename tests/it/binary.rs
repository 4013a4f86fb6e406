//! The binary itself: on x86_64 Linux with glibc it is linked statically (build.rs), and what
//! that changes, name look-ups, still works.

use crate::util::{Test, bin};

#[cfg(baton_static)]
/// The program header types of an ELF64 little-endian executable.
fn program_headers(elf: &[u8]) -> Vec<u32> {
    assert_eq!(&elf[..4], b"\x7fELF", "not an ELF file");
    let u16_at = |o: usize| u16::from_le_bytes([elf[o], elf[o + 1]]) as usize;
    let offset = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
    let (size, count) = (u16_at(0x36), u16_at(0x38));
    (0..count)
        .map(|i| {
            let o = offset + i * size;
            u32::from_le_bytes(elf[o..o + 4].try_into().unwrap())
        })
        .collect()
}

#[cfg(baton_static)]
#[test]
fn the_binary_needs_no_dynamic_loader() {
    const PT_DYNAMIC: u32 = 2;
    const PT_INTERP: u32 = 3;
    let types = program_headers(&std::fs::read(bin()).unwrap());
    assert!(types.contains(&1), "no loadable segment: {types:?}");
    assert!(
        !types.contains(&PT_INTERP),
        "an interpreter is named: {types:?}"
    );
    assert!(!types.contains(&PT_DYNAMIC), "a dynamic section: {types:?}");
}

#[test]
fn a_database_host_name_is_looked_up() {
    // `localhost` comes from /etc/hosts; nothing listens on port 1: the look-up worked when
    // the connection is what failed.
    Test::new()
        .write("baton.toml", "[queue]\nbackend = \"postgres\"\n")
        .args(["queue", "list"])
        .env("BATON_DATABASE_URL", "postgresql://baton@localhost:1/baton")
        .status(3)
        .stderr_regex(
            r"^error: cannot connect to the queue database: error connecting to server: Connection refused \(os error 111\)\n",
        )
        .run();
}

/// `--version` names the commit the binary was built from (and its date), so that workers on
/// several machines can be checked to run the same baton.
#[test]
fn version_names_the_commit_it_was_built_from() {
    let o = std::process::Command::new("git")
        .args(["log", "-1", "--format=%h %cs", "--abbrev=12"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    let commit = String::from_utf8(o.stdout).unwrap();
    let commit = match commit.trim() {
        "" => "no git commit",
        c => c,
    };
    Test::new()
        .arg("--version")
        .stdout(&format!("baton {} ({commit})\n", env!("CARGO_PKG_VERSION")))
        .run();
}

/// Every command's `--help` opens with its own description, the one `baton --help` lists —
/// never a code comment of an options struct it shares with other commands (a doc comment on
/// a flattened struct used to become each command's `about`, and its man page's).
#[test]
fn every_commands_help_opens_with_its_own_description() {
    let top = std::process::Command::new(crate::util::bin())
        .arg("--help")
        .output()
        .unwrap();
    let top = String::from_utf8_lossy(&top.stdout).into_owned();
    let listed: Vec<(String, String)> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let l = l.trim_start();
            let (name, about) = l.split_once(char::is_whitespace)?;
            Some((name.to_string(), about.trim().to_string()))
        })
        .filter(|(name, _)| name != "help")
        .collect();
    assert!(listed.len() > 30, "{top}");
    let mut wrong = Vec::new();
    for (name, about) in &listed {
        let o = std::process::Command::new(crate::util::bin())
            .args([name.as_str(), "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8_lossy(&o.stdout);
        let first = help.lines().next().unwrap_or("");
        // The listing may cut a long description to the terminal's width.
        let words: String = about
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
            .join(" ");
        if !first.starts_with(&words) {
            wrong.push(format!("{name}: `{first}` (listed: `{about}`)"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

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

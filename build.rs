//! Build steps of the `baton` binary:
//!
//! 1. Link it as a position-dependent executable on Linux/glibc. Every bookkeeping command is
//!    a whole process, so start-up is most of its cost: as a PIE, the dynamic loader must apply
//!    ~20K relocations (clap, regex and unicode tables) before `main`, ~0.4 ms per run. Linked
//!    with `-no-pie` they are resolved at link time. Only the binaries get the flag (the
//!    library and proc-macros stay position-independent). The cost: the executable's own image
//!    is not randomized (ASLR still covers the heap, stack and shared libraries).
//! 2. Link glibc statically into the binary (see `static_glibc`), or at least the unwinder
//!    (see `static_unwinder`).
//!
//! 3. Stamp the version with the commit it was built from (`baton --version`).
//!
//! The BPE vocabularies are shipped by baton-context's own build script.
//! See docs/BENCHMARKS.md, "Close to the floor".
use std::path::{Path, PathBuf};

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR is set by cargo"));
    println!("cargo::rustc-check-cfg=cfg(baton_static)");
    if os == "linux" && env == "gnu" && arch == "x86_64" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    // The host's C compiler names the archives: only when building for the host.
    if os == "linux" && env == "gnu" && std::env::var("TARGET").ok() == std::env::var("HOST").ok() {
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        static_unwinder(&cc, &out);
        if arch == "x86_64" && std::env::var_os("BATON_DYNAMIC_LINK").is_none() {
            static_glibc(&cc, &out);
        }
    }
    commit_stamp();
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CC");
    println!("cargo:rerun-if-env-changed=BATON_DYNAMIC_LINK");
}

/// `BATON_COMMIT`: the commit's short hash and date, as rustc's `--version` gives them (the
/// commit's date, not the clock's, so that two builds of one commit are the same binary);
/// "no git commit" when built outside a repository (a source archive).
fn commit_stamp() {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let stamp = git(&["log", "-1", "--format=%h %cs", "--abbrev=12"])
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "no git commit".into());
    println!("cargo:rustc-env=BATON_COMMIT={stamp}");
    // Again when HEAD moves: HEAD itself, the branch it names, the packed refs. Only files
    // that exist (a missing one would rerun this on every build).
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        let head = git_dir.join("HEAD");
        let mut watch = vec![head.clone(), git_dir.join("packed-refs")];
        if let Ok(text) = std::fs::read_to_string(&head)
            && let Some(r) = text.trim().strip_prefix("ref: ")
        {
            watch.push(git_dir.join(r));
        }
        for f in watch.iter().filter(|f| f.is_file()) {
            println!("cargo:rerun-if-changed={}", f.display());
        }
    }
}

/// The absolute path of one of the C toolchain's files (`cc -print-file-name`), if it has it.
fn toolchain_file(cc: &str, name: &str) -> Option<PathBuf> {
    let o = std::process::Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
    // An unknown file is printed back as its bare name.
    (o.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}

/// Write the linker script that stands for `inputs` as `dir/lib<name>.so` and `.a`: a folder
/// of them, searched before the system's, turns the `-l<name>` that Rust's std asks for into
/// archives, whether the linker looks for a shared or (under `-Bstatic`) a static library.
fn linker_script(dir: &Path, name: &str, inputs: &[&Path]) {
    let inputs: Vec<String> = inputs.iter().map(|p| p.display().to_string()).collect();
    std::fs::create_dir_all(dir).expect("OUT_DIR is writable");
    for ext in ["so", "a"] {
        std::fs::write(
            dir.join(format!("lib{name}.{ext}")),
            format!("GROUP ( {} )\n", inputs.join(" ")),
        )
        .expect("OUT_DIR is writable");
    }
}

/// Whether the C toolchain links a static glibc program that looks a host and a user up: the
/// archives are there and link, and glibc is 2.34 or later, whose `libc.a` has the files and
/// DNS name services built in (before, a static program loaded them as shared objects).
fn static_glibc_links(cc: &str, out: &Path) -> bool {
    let dir = out.join("static-glibc-check");
    std::fs::create_dir_all(&dir).expect("OUT_DIR is writable");
    let src = dir.join("check.c");
    std::fs::write(
        &src,
        "#include <features.h>\n\
         #if !defined(__GLIBC__) || __GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 34)\n\
         #error glibc before 2.34\n\
         #endif\n\
         #include <netdb.h>\n#include <pwd.h>\n\
         int main(void) { struct addrinfo *r; getpwuid(0);\n\
           return getaddrinfo(\"localhost\", 0, 0, &r) != 0; }\n",
    )
    .expect("OUT_DIR is writable");
    std::process::Command::new(cc)
        .args(["-static", "-w", "-o"])
        .arg(dir.join("check"))
        .arg(&src)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Link the unwinder (libgcc_eh.a) into every executable instead of loading libgcc_s.so.1:
/// Rust's std asks for `-lgcc_s`, and that library's constructor probes the CPU with a series
/// of `cpuid`s (each a VM exit on a virtual machine) before `main`, on top of loading one more
/// shared object — about 0.1 ms of every command. As gcc's `-static-libgcc` does for C. Panics
/// unwind and `catch_unwind` works the same. Skipped when the C compiler does not know the
/// archive, and when cross-compiling.
fn static_unwinder(cc: &str, out: &Path) {
    let Some(gcc_eh) = toolchain_file(cc, "libgcc_eh.a") else {
        return;
    };
    let dir = out.join("static-libgcc");
    linker_script(&dir, "gcc_s", &[&gcc_eh]);
    println!("cargo:rustc-link-search=native={}", dir.display());
}

/// Link the `baton` binary statically against glibc, as `-C target-feature=+crt-static` would
/// (which cargo cannot set for one package: it also reaches proc-macros and needs `--target`).
/// No dynamic loader runs before `main`: no shared objects to find and map, no symbol to bind.
/// That is a third of a bookkeeping command's start-up, and makes `baton --version` as fast
/// as a dynamically linked `/bin/true` (docs/BENCHMARKS.md, "Close to the floor").
///
/// How: `-static` for the binaries only (not the test harnesses), and a folder searched first
/// whose `libc.so`, `libm.so`, … are linker scripts naming the static archives, so the
/// `-lc -lm …` std asks for link those. The library code is the same: std is precompiled
/// either way. Name look-ups are the one difference: see `static_name_service` in main.rs.
/// Skipped (a dynamic binary) when an archive is missing, when the toolchain cannot link a
/// static program or its glibc is older than 2.34 (see `static_glibc_links`), and with
/// `BATON_DYNAMIC_LINK` set.
fn static_glibc(cc: &str, out: &Path) {
    let (Some(libc), Some(gcc), Some(gcc_eh)) = (
        toolchain_file(cc, "libc.a"),
        toolchain_file(cc, "libgcc.a"),
        toolchain_file(cc, "libgcc_eh.a"),
    ) else {
        return;
    };
    if !static_glibc_links(cc, out) {
        println!(
            "cargo:warning=a dynamically linked baton: this C toolchain cannot link a static glibc \
             2.34+ program (docs/BENCHMARKS.md, \"Close to the floor\")"
        );
        return;
    }
    let dir = out.join("static-glibc");
    linker_script(&dir, "c", &[&libc, &gcc, &gcc_eh]);
    linker_script(&dir, "gcc_s", &[&gcc_eh]);
    // Since glibc 2.34 these are empty archives (their code is in libc.a); before, real ones.
    for name in ["m", "pthread", "dl", "rt", "util"] {
        let archive = toolchain_file(cc, &format!("lib{name}.a"));
        linker_script(&dir, name, &[archive.as_deref().unwrap_or(&libc)]);
    }
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-L{}", dir.display());
    println!("cargo:rustc-cfg=baton_static");
}

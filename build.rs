//! Link the `baton` binary as a position-dependent executable on Linux/glibc.
//!
//! Every bookkeeping command is a whole process, so start-up is most of its cost: as a PIE,
//! the dynamic loader must apply ~20K relocations (clap, regex and unicode tables) before
//! `main`, ~0.4 ms per run. Linked with `-no-pie` they are resolved at link time. Only the
//! binaries get the flag (the library and proc-macros stay position-independent). The cost:
//! the executable's own image is not randomized (ASLR still covers the heap, stack and shared
//! libraries). See docs/BENCHMARKS.md, "The task store".
fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if os == "linux" && env == "gnu" && arch == "x86_64" {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! The `baton` binary, with its own C `main`: every bookkeeping command is a whole process,
//! and std's start-up work (reading /proc/self/maps to place the main thread's stack guard,
//! an alternate signal stack for overflow reports) is a tenth of one that does nothing.
//! What of it baton relies on is done here. See docs/BENCHMARKS.md, "Start-up".
// (Under `cargo test` the harness brings its own `main`.)
#![cfg_attr(not(test), no_main)]

#[cfg(not(test))]
use std::process::ExitCode;

#[cfg(not(test))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    // As std's start-up does: a write to a closed pipe is an EPIPE error, not a fatal signal.
    // SAFETY: setting a signal's disposition to SIG_IGN before any thread is started.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    #[cfg(baton_static)]
    let _ = baton_engine::workflow::verify::pg::BEFORE_FIRST_LOOKUP.set(static_name_service);
    // A panic must not unwind out of a C function: report it as std would (exit code 101).
    let code = std::panic::catch_unwind(baton::cli::main).unwrap_or(ExitCode::from(101));
    let n = (0..=u8::MAX)
        .find(|&k| ExitCode::from(k) == code)
        .unwrap_or(1);
    // `exit`, not a return: it flushes stdout like std's start-up does after `main`.
    std::process::exit(i32::from(n))
}

/// In a statically linked baton (build.rs), the queue database's client (baton-engine's
/// `workflow::verify::pg`, which calls this before its first connection) looks names up only
/// through the services glibc has built in: host names in /etc/hosts and DNS, the user (when
/// neither the URL nor the environment names one) in /etc/passwd. Any other module /etc/nsswitch.conf names (mdns,
/// systemd-resolved, sss, ldap, …) is a shared object that a static process can load only
/// while the system's glibc is the very one baton was linked with.
#[cfg(all(not(test), baton_static))]
fn static_name_service() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    unsafe extern "C" {
        // glibc's <nss.h>, for static programs: replaces one database's line of
        // nsswitch.conf.
        fn __nss_configure_lookup(
            db: *const libc::c_char,
            services: *const libc::c_char,
        ) -> libc::c_int;
    }
    // SAFETY: two NUL-terminated strings; before this process's first host look-up.
    ONCE.call_once(|| unsafe {
        __nss_configure_lookup(c"hosts".as_ptr(), c"files dns".as_ptr());
        __nss_configure_lookup(c"passwd".as_ptr(), c"files".as_ptr());
    });
}

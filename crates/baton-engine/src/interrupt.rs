//! Ctrl-C, `kill` and a closed terminal during `baton run`. SIGINT, SIGTERM and SIGHUP are
//! caught: the running agent's process group is stopped (through the agent runner's cancel
//! token: SIGTERM, the grace, SIGKILL), the pipeline journals `interrupted` instead of judging
//! the cut-off call, and the run exits 128 + the signal with the command that continues it.
//! Git runs in process groups of its own, so the terminal's Ctrl-C never cuts a git command
//! half-way; baton stops at the next step instead. A second signal is not caught: it ends the
//! process at once (the journal makes that safe too).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::Duration;

use baton_agent::CancelToken;

static SIGNAL: AtomicI32 = AtomicI32::new(0);
static TOKEN: OnceLock<CancelToken> = OnceLock::new();

extern "C" fn on_signal(sig: libc::c_int) {
    // Only async-signal-safe work here: an atomic swap, and for a second signal, the default
    // action again and the signal raised anew.
    if SIGNAL.swap(sig, Ordering::SeqCst) != 0 {
        // SAFETY: signal(2) and raise(3) are async-signal-safe.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// Catch SIGINT, SIGTERM and SIGHUP for the rest of the process (idempotent).
pub fn install() {
    static ONCE: OnceLock<()> = OnceLock::new();
    ONCE.get_or_init(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: installs a handler that only touches an atomic (see `on_signal`).
            unsafe {
                libc::signal(sig, on_signal as *const () as libc::sighandler_t);
            }
        }
        // The cancel token is what the agent runner polls; a thread turns the signal into it.
        std::thread::spawn(|| {
            loop {
                if SIGNAL.load(Ordering::SeqCst) != 0 {
                    token().cancel();
                    return;
                }
                std::thread::sleep(Duration::from_millis(25));
            }
        });
    });
}

extern "C" fn for_the_dialogue(_sig: libc::c_int) {}

/// While a person's agent CLI holds the terminal (`baton discover`): Ctrl-C and Ctrl-\ are the
/// person's, however often pressed — the terminal sends them to the agent too, which decides
/// what they mean — and baton goes on waiting for it to end, then records. A handler that does
/// nothing rather than `SIG_IGN`: the agent, started after this, must not inherit an ignored
/// signal. SIGTERM and SIGHUP are caught as in [`install`], and passed on to the agent
/// (`workflow::task::discover`).
pub fn install_for_dialogue() {
    install();
    for sig in [libc::SIGINT, libc::SIGQUIT] {
        // SAFETY: installs a handler that does nothing.
        unsafe {
            libc::signal(sig, for_the_dialogue as *const () as libc::sighandler_t);
        }
    }
}

/// The token every agent call of this process is cancelled by.
pub fn token() -> &'static CancelToken {
    TOKEN.get_or_init(CancelToken::new)
}

thread_local! {
    static SCOPED: std::cell::RefCell<Option<CancelToken>> = const { std::cell::RefCell::new(None) };
}

/// The token an agent call made on this thread is cancelled by: the one [`cancellable`] put in
/// place, else the process's.
pub fn call_token() -> CancelToken {
    SCOPED
        .with(|s| s.borrow().clone())
        .unwrap_or_else(|| token().clone())
}

/// Run `f` with the agent calls it makes on this thread cancelled by `cancel` (make it a
/// [`CancelToken::child`] of [`token`] so that a signal still stops them): a worker's claim
/// that is lost stops its agent.
pub fn cancellable<T>(cancel: &CancelToken, f: impl FnOnce() -> T) -> T {
    let before = SCOPED.with(|s| s.replace(Some(cancel.clone())));
    let out = f();
    SCOPED.with(|s| *s.borrow_mut() = before);
    out
}

/// The signal that interrupted the run, if one did.
pub fn received() -> Option<i32> {
    match SIGNAL.load(Ordering::SeqCst) {
        0 => None,
        s => Some(s),
    }
}

/// `SIGINT`, `SIGTERM`, `SIGHUP`, or the number.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        libc::SIGHUP => "SIGHUP".into(),
        n => format!("signal {n}"),
    }
}

/// The file in a run's folder that `baton stop --graceful` writes: the run lets the phase in
/// flight finish, then stops before its next call (as Ctrl-C would stop it there).
pub const GRACEFUL_FILE: &str = "stop-after-phase";

/// Whether a graceful stop was asked of the run in `run_dir`, and why (empty: by `baton stop
/// --graceful`; else the run's own pause); the request is taken (removed), so the resumed run
/// goes on.
pub fn take_graceful(run_dir: &std::path::Path) -> Option<String> {
    let file = run_dir.join(GRACEFUL_FILE);
    let why = std::fs::read_to_string(&file).unwrap_or_default();
    std::fs::remove_file(&file).ok().map(|()| why)
}

/// Ask the run in `run_dir` to stop before its next call, saying `why` (a pause it asked of
/// itself); a pause asked already and not yet taken keeps its reason, `why` joins it.
pub fn request_pause(run_dir: &std::path::Path, why: &str) -> std::io::Result<()> {
    let file = run_dir.join(GRACEFUL_FILE);
    let before = std::fs::read_to_string(&file).unwrap_or_default();
    let text = match before.trim() {
        "" => why.to_string(),
        b => format!("{b}; and {why}"),
    };
    std::fs::write(file, text)
}

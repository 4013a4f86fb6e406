//! Tests share the machine: most run side by side (the real agent CLIs' tests wait on
//! back-offs and timeouts for minutes and use little CPU), but a test whose assertions time
//! what a loaded machine slows down (a lease's seconds, a heartbeat's beats) runs alone.
//!
//! A test's turn lasts until its thread ends: libtest runs each test on a thread of its own,
//! named after the test, and joins it before it reports the next result, so the turn is
//! released with the thread's locals. Threads a test spawns itself have no name and take no
//! turn: they run within their test's.

use std::cell::RefCell;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

static MACHINE: RwLock<()> = RwLock::new(());

#[allow(dead_code)] // the guards are held for their drop, not read
enum Turn {
    Shared(RwLockReadGuard<'static, ()>),
    Alone(RwLockWriteGuard<'static, ()>),
}

thread_local! {
    static TURN: RefCell<Option<Turn>> = const { RefCell::new(None) };
}

/// Whether this thread is a test's own (named by libtest), not one a test spawned.
fn is_test_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|n| n != "main" && n.contains("::"))
}

/// The calling test runs beside others until it ends; it waits while a test runs alone.
pub fn share() {
    if !is_test_thread() {
        return;
    }
    TURN.with(|t| {
        let mut t = t.borrow_mut();
        if t.is_none() {
            *t = Some(Turn::Shared(
                MACHINE.read().unwrap_or_else(PoisonError::into_inner),
            ));
        }
    });
}

/// The calling test runs alone from here until it ends: it waits for the tests running beside
/// it to finish, and no other starts meanwhile. std's lock is writer-preferring on Linux, so
/// a test waiting here is not starved by tests that keep starting.
pub fn alone() {
    if !is_test_thread() {
        return;
    }
    TURN.with(|t| {
        let mut t = t.borrow_mut();
        if matches!(*t, Some(Turn::Alone(_))) {
            return;
        }
        // Its own shared turn first, or it would wait for itself.
        *t = None;
        *t = Some(Turn::Alone(
            MACHINE.write().unwrap_or_else(PoisonError::into_inner),
        ));
    });
}

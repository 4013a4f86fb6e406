//! Command-language scripts run against a real store (on tmpfs when there is one): whatever a
//! script asks, every command answers in the language's format and the store stays readable.
#![no_main]

use std::path::PathBuf;
use std::sync::LazyLock;
use std::sync::atomic::{AtomicU32, Ordering};

use baton_store::Store;
use baton_store::lang::run_script;
use libfuzzer_sys::fuzz_target;

static DIR: LazyLock<tempfile::TempDir> = LazyLock::new(|| {
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        tempfile::tempdir_in(shm).expect("temp dir")
    } else {
        tempfile::tempdir().expect("temp dir")
    }
});
static CALLS: AtomicU32 = AtomicU32::new(0);

fuzz_target!(|script: &str| {
    let root: PathBuf = DIR.path().join("store");
    // A fresh store now and then: a script builds on what earlier ones left, within bounds.
    if CALLS.fetch_add(1, Ordering::Relaxed) % 200 == 0 {
        let _ = std::fs::remove_dir_all(&root);
    }
    let store = Store::new(&root);
    for r in run_script(&store, script) {
        let text = r.render();
        assert!(text.starts_with("STATUS: "), "{text}");
        assert!(matches!(r.status, "success" | "error"), "{text}");
        assert_eq!(r.code == 0, r.status == "success", "{text}");
    }
});

//! baton.toml: any text is a configuration or an error naming the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let file = Path::new("/project/baton.toml");
    if let Err(e) = baton_engine::config::parse(file, text) {
        assert!(e.to_string().contains("baton.toml"), "{e}");
    }
});

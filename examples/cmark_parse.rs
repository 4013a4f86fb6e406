//! The floor for `baton extract`: read a file and run pulldown-cmark over all of it (same
//! options as baton: YAML front matter), print the event count.
//! Used by `benches/context.rs`; `cargo run --release --example cmark_parse FILE`.

use pulldown_cmark::{Options, Parser};

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: cmark_parse FILE");
        std::process::exit(2);
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => {
            let events = Parser::new_ext(&text, Options::ENABLE_YAML_STYLE_METADATA_BLOCKS).count();
            println!("{events}");
        }
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}

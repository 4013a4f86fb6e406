//! The floor for `baton tokens`: read a file, count it with bpe-openai's o200k_base, print.
//! Used by `benches/context.rs`; `cargo run --release --example count_tokens FILE`.

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: count_tokens FILE");
        std::process::exit(2);
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => println!("{}", bpe_openai::o200k_base().count(&text)),
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    }
}

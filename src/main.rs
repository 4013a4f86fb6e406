fn main() -> std::process::ExitCode {
    baton::cli::main()
}

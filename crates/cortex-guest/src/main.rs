fn main() -> std::process::ExitCode {
    cortex_guest::main_entry(std::env::args().skip(1))
}

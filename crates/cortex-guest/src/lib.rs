//! The guest agent: serves the workspace catalog's operations over JSON lines.
//!
//! The agent reads [`GuestRequest`](cortex_protocol::GuestRequest)s, one per
//! line, and writes [`GuestResponse`](cortex_protocol::GuestResponse)s. It
//! handles requests concurrently (a long `bash` does not block a `stop`), so
//! the harness can multiplex. It starts read-only; only a `capabilities`
//! request makes it writable or allows `bash`, and a read-only guest refuses
//! `write_file`, `edit_file` and `bash` itself, whatever the harness asks.
//!
//! This crate is process start-up and protocol only; isolation (namespaces,
//! Landlock, seccomp) is layered around it by the runtime, never mixed in.

#![warn(missing_docs)]

mod cli;
pub mod lines;
mod listen;
mod memory;
mod process;
mod quota;
mod serve;
mod state;
mod tool;

pub use listen::{TlsSetupError, listen, tls_acceptor};
pub use serve::{MAX_REQUEST_BYTES, serve};
pub use state::GuestConfig;

/// This agent's build identity: the crate version and a hash of every
/// source it is made of (see `build.rs`). `cortex-guest --build-id` prints
/// it; a harness starts a `cortex-guest` binary only when it prints the
/// same identity the harness was built with.
pub const BUILD_ID: &str = env!("CORTEX_GUEST_BUILD");

/// Entry point of the `cortex-guest` binary (and `cortex guest`): serves
/// stdin/stdout for the workspace given by `--root PATH` (default: the current
/// folder). Commands run with the agent's own environment, which its parent
/// built from an allow-list.
pub fn main_entry(args: impl IntoIterator<Item = String>) -> std::process::ExitCode {
    cli::main_entry(args)
}

//! Command line and process start-up of the agent. stdout carries protocol
//! lines only; everything else goes to stderr.

use crate::{GuestConfig, serve};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\
usage: cortex-guest [--root PATH] [--sandbox SPEC]

Serves the Cortex guest protocol (JSON lines) on stdin/stdout for the
workspace at PATH (default: the current folder). With --sandbox, first
enters the local sandbox that SPEC (JSON) describes. Log level on stderr:
CORTEX_GUEST_LOG=error|warn|info|debug|trace (default warn).";

#[derive(Debug, PartialEq, Eq)]
enum Command {
    Help,
    Serve {
        root: Option<PathBuf>,
        sandbox: Option<String>,
    },
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command, String> {
    let mut root = None;
    let mut sandbox = None;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), value.to_owned()),
            _ => {
                let name = arg.clone();
                if name == "-h" || name == "--help" {
                    return Ok(Command::Help);
                }
                if name != "--root" && name != "--sandbox" {
                    return Err(format!("unexpected argument `{name}`"));
                }
                let value = args.next().ok_or_else(|| format!("{name} needs a value"))?;
                (name, value)
            }
        };
        let slot = match name.as_str() {
            "--root" => root.replace(PathBuf::from(value)).is_some(),
            "--sandbox" => sandbox.replace(value).is_some(),
            other => return Err(format!("unexpected argument `{other}`")),
        };
        if slot {
            return Err(format!("{name} given twice"));
        }
    }
    Ok(Command::Serve { root, sandbox })
}

pub(crate) fn main_entry(args: impl IntoIterator<Item = String>) -> ExitCode {
    let (root, sandbox) = match parse_args(args) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve { root, sandbox }) => (root, sandbox),
        Err(message) => {
            eprintln!("cortex-guest: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Before anything else: namespaces need a single-threaded process.
    let sandbox = match sandbox.map(|spec| enter_sandbox(&spec)).transpose() {
        Ok(report) => report,
        Err(message) => {
            eprintln!("cortex-guest: {message}");
            return ExitCode::from(3);
        }
    };
    init_logging();
    let root = match root {
        Some(root) => root,
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!("cortex-guest: cannot read the current folder: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    if !root.is_dir() {
        eprintln!(
            "cortex-guest: the workspace `{}` is not an existing folder\n{USAGE}",
            root.display()
        );
        return ExitCode::from(2);
    }
    // The parent built our environment from an allow-list; commands get it as is.
    let bash_env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let config = GuestConfig {
        root,
        bash_env,
        sandbox,
    };

    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cortex-guest: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(serve(tokio::io::stdin(), tokio::io::stdout(), config));
    // A stdin read may still be parked on a blocking thread; do not wait for it.
    runtime.shutdown_timeout(Duration::from_millis(500));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("cortex-guest: {e}");
            ExitCode::FAILURE
        }
    }
}

fn enter_sandbox(spec: &str) -> Result<cortex_sandbox::Report, String> {
    let spec: cortex_sandbox::SandboxSpec =
        serde_json::from_str(spec).map_err(|e| format!("bad --sandbox spec: {e}"))?;
    cortex_sandbox::enter(&spec).map_err(|e| e.to_string())
}

fn init_logging() {
    let level = std::env::var("CORTEX_GUEST_LOG")
        .ok()
        .and_then(|l| l.parse::<tracing::Level>().ok())
        .unwrap_or(tracing::Level::WARN);
    // Fails harmlessly when the host process (`cortex guest`) set one up.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(level)
        .with_ansi(false)
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Command, String> {
        parse_args(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn arguments() {
        let serve = |root: Option<&str>, sandbox: Option<&str>| {
            Ok(Command::Serve {
                root: root.map(PathBuf::from),
                sandbox: sandbox.map(str::to_owned),
            })
        };
        assert_eq!(parse(&[]), serve(None, None));
        assert_eq!(parse(&["--root", "/w"]), serve(Some("/w"), None));
        assert_eq!(parse(&["--root=/w"]), serve(Some("/w"), None));
        assert_eq!(
            parse(&["--root", "/w", "--sandbox", "{}"]),
            serve(Some("/w"), Some("{}"))
        );
        assert!(parse(&["--sandbox"]).is_err());
        assert_eq!(parse(&["--help"]), Ok(Command::Help));
        assert!(parse(&["--root"]).is_err());
        assert!(parse(&["--root", "a", "--root", "b"]).is_err());
        assert!(parse(&["--frobnicate"]).is_err());
    }
}

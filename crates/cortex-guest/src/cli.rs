//! Command line and process start-up of the agent. stdout carries protocol
//! lines only; everything else goes to stderr.

use crate::{GuestConfig, serve};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "\
usage: cortex-guest [--root PATH] [--sandbox SPEC] [--die-with PID]
                    [--listen ADDR --token-file FILE [--tls-cert PEM --tls-key PEM]]
       cortex-guest --build-id

Serves the Cortex guest protocol (JSON lines) on stdin/stdout for the
workspace at PATH (default: the current folder). With --die-with, the agent
is killed when its parent (which must be PID) ends, and exits at once if it
already has. With --sandbox, first enters the local sandbox that SPEC (JSON)
describes. With --listen, serves TCP connections on ADDR instead, each of
which must first present the token (from FILE, or CORTEX_GUEST_TOKEN), over
TLS when a certificate and key are given. Log level on stderr:
CORTEX_GUEST_LOG=error|warn|info|debug|trace (default warn).";

#[derive(Debug, Default, PartialEq, Eq)]
struct Options {
    root: Option<PathBuf>,
    sandbox: Option<String>,
    die_with: Option<String>,
    listen: Option<String>,
    token_file: Option<PathBuf>,
    tls_cert: Option<PathBuf>,
    tls_key: Option<PathBuf>,
}

#[derive(Debug, PartialEq, Eq)]
enum Command {
    Help,
    BuildId,
    Serve(Options),
}

/// Why the agent does not start; the message is printed after
/// `cortex-guest: `.
#[derive(Debug, thiserror::Error)]
enum StartError {
    #[error("{0} needs a value")]
    MissingValue(String),
    #[error("unexpected argument `{0}`")]
    Unexpected(String),
    #[error("{0} given twice")]
    Twice(String),
    #[error("--die-with needs a process id, not `{0}`")]
    BadParent(String),
    #[error("cannot ask to die with the harness: {0}")]
    DeathSignal(std::io::Error),
    #[error("the harness (pid {0}) has already ended")]
    ParentGone(libc::pid_t),
    #[error("cannot read the token file {}: {error}", path.display())]
    TokenFile {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("--listen needs a token: --token-file FILE or {TOKEN_ENV}")]
    NoToken,
    #[error("the token must be at least 16 characters")]
    ShortToken,
    #[error("bad --sandbox spec: {0}")]
    BadSandboxSpec(serde_json::Error),
    #[error("{0}")]
    Sandbox(cortex_sandbox::SandboxError),
}

const VALUED: [&str; 7] = [
    "--root",
    "--sandbox",
    "--die-with",
    "--listen",
    "--token-file",
    "--tls-cert",
    "--tls-key",
];

/// Be killed when the parent ends. The harness asks for this here rather
/// than between fork and exec: a hook there makes the standard library
/// fork (copying the harness's page tables for every guest) where it could
/// otherwise `posix_spawn`.
fn die_with(parent: &str) -> Result<(), StartError> {
    let parent: libc::pid_t = parent
        .parse()
        .map_err(|_| StartError::BadParent(parent.to_owned()))?;
    // SAFETY: prctl with these arguments only sets a flag of this process.
    if unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) } == -1 {
        return Err(StartError::DeathSignal(std::io::Error::last_os_error()));
    }
    // The parent may have ended before the flag was set.
    // SAFETY: getppid has no preconditions.
    if unsafe { libc::getppid() } != parent {
        return Err(StartError::ParentGone(parent));
    }
    Ok(())
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Command, StartError> {
    let mut options = Options::default();
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "-h" || arg == "--help" {
            return Ok(Command::Help);
        }
        if arg == "--build-id" {
            return Ok(Command::BuildId);
        }
        let (name, value) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_owned(), value.to_owned()),
            _ if VALUED.contains(&arg.as_str()) => {
                let value = args
                    .next()
                    .ok_or_else(|| StartError::MissingValue(arg.clone()))?;
                (arg, value)
            }
            _ => return Err(StartError::Unexpected(arg)),
        };
        let taken = match name.as_str() {
            "--root" => options.root.replace(PathBuf::from(value)).is_some(),
            "--sandbox" => options.sandbox.replace(value).is_some(),
            "--die-with" => options.die_with.replace(value).is_some(),
            "--listen" => options.listen.replace(value).is_some(),
            "--token-file" => options.token_file.replace(PathBuf::from(value)).is_some(),
            "--tls-cert" => options.tls_cert.replace(PathBuf::from(value)).is_some(),
            "--tls-key" => options.tls_key.replace(PathBuf::from(value)).is_some(),
            _ => return Err(StartError::Unexpected(name)),
        };
        if taken {
            return Err(StartError::Twice(name));
        }
    }
    Ok(Command::Serve(options))
}

pub(crate) fn main_entry(args: impl IntoIterator<Item = String>) -> ExitCode {
    // Before anything of our own is open: the agent keeps only its pipes.
    if let Err(e) = cortex_sandbox::close_inherited_fds() {
        eprintln!("cortex-guest: cannot close inherited descriptors: {e}");
        return ExitCode::from(3);
    }
    let options = match parse_args(args) {
        Ok(Command::Help) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Ok(Command::BuildId) => {
            println!("{}", crate::BUILD_ID);
            return ExitCode::SUCCESS;
        }
        Ok(Command::Serve(options)) => options,
        Err(e) => {
            eprintln!("cortex-guest: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // SAFETY: no thread has been started yet (the async runtime is built
    // below, logging starts none).
    let entered = match unsafe { isolate(&options) } {
        Ok(entered) => entered,
        Err(code) => return code,
    };
    init_logging();
    match configure(options, entered) {
        Ok((config, listen)) => run(config, listen),
        Err(code) => code,
    }
}

/// What entering the sandbox gave: what it enforces, and the spec it was
/// entered with (its quotas and home).
type Entered = (cortex_sandbox::Report, cortex_sandbox::SandboxSpec);

/// Die with the parent (`--die-with`), then enter the sandbox (`--sandbox`);
/// what the sandbox enforces, or the exit code after the message.
///
/// # Safety
/// The process must be single-threaded: namespaces need it (see
/// [`cortex_sandbox::enter`]).
unsafe fn isolate(options: &Options) -> Result<Option<Entered>, ExitCode> {
    if let Some(parent) = options.die_with.as_deref()
        && let Err(message) = die_with(parent)
    {
        eprintln!("cortex-guest: {message}");
        return Err(ExitCode::from(3));
    }
    // Before anything else: namespaces need a single-threaded process.
    // SAFETY: forwarded from this function's own contract.
    options
        .sandbox
        .as_deref()
        .map(|spec| unsafe { enter_sandbox(spec) })
        .transpose()
        .map_err(|message| {
            eprintln!("cortex-guest: {message}");
            ExitCode::from(3)
        })
}

/// Where a listening agent serves: `--listen ADDR` with its token and TLS.
struct Listen {
    addr: String,
    token: String,
    tls: Option<tokio_rustls::TlsAcceptor>,
}

/// The workspace, the listener's token and TLS, and the environment
/// commands get; or the exit code after the message.
fn configure(
    options: Options,
    entered: Option<Entered>,
) -> Result<(GuestConfig, Option<Listen>), ExitCode> {
    let root = match options.root {
        Some(root) => root,
        None => std::env::current_dir().map_err(|e| {
            eprintln!("cortex-guest: cannot read the current folder: {e}");
            ExitCode::FAILURE
        })?,
    };
    if !root.is_dir() {
        eprintln!(
            "cortex-guest: the workspace `{}` is not an existing folder\n{USAGE}",
            root.display()
        );
        return Err(ExitCode::from(2));
    }
    let token = match &options.listen {
        Some(_) => Some(
            read_token(options.token_file.as_deref()).map_err(|message| {
                eprintln!("cortex-guest: {message}");
                ExitCode::from(2)
            })?,
        ),
        None => None,
    };
    let tls = match (&options.tls_cert, &options.tls_key) {
        (Some(cert), Some(key)) => Some(crate::tls_acceptor(cert, key).map_err(|message| {
            eprintln!("cortex-guest: {message}");
            ExitCode::from(2)
        })?),
        (None, None) => None,
        _ => {
            eprintln!("cortex-guest: --tls-cert and --tls-key go together");
            return Err(ExitCode::from(2));
        }
    };
    // The parent built our environment from an allow-list; commands get it as
    // is (minus the listener's own token).
    let bash_env = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .filter(|(k, _)| k != TOKEN_ENV)
        .collect();
    let config = GuestConfig {
        root,
        bash_env,
        quotas: entered.as_ref().map(|(_, spec)| spec.quotas),
        home: entered
            .as_ref()
            .and_then(|(_, spec)| spec.home.as_ref())
            .map(|_| cortex_sandbox::guest_home()),
        memory_watch: entered
            .as_ref()
            .filter(|(report, _)| !report.layers.contains("cgroup"))
            .map(|(_, spec)| spec.limits.memory_bytes),
        sandbox: entered.map(|(report, _)| report),
    };
    let listen = options
        .listen
        .zip(token)
        .map(|(addr, token)| Listen { addr, token, tls });
    Ok((config, listen))
}

/// Serve stdin/stdout, or every connection of `listen`, until the end.
fn run(config: GuestConfig, listen: Option<Listen>) -> ExitCode {
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
    let result = runtime.block_on(async move {
        match listen {
            Some(Listen { addr, token, tls }) => {
                let listener = tokio::net::TcpListener::bind(&addr).await?;
                // The address is printed so that a caller that asked for port
                // 0 learns the real one.
                println!("listening on {}", listener.local_addr()?);
                crate::listen(listener, token, tls, config).await
            }
            None => serve(tokio::io::stdin(), tokio::io::stdout(), config).await,
        }
    });
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

/// Where a listening agent's token comes from when no file is given.
const TOKEN_ENV: &str = "CORTEX_GUEST_TOKEN";

fn read_token(file: Option<&std::path::Path>) -> Result<String, StartError> {
    let token = match file {
        Some(path) => std::fs::read_to_string(path).map_err(|error| StartError::TokenFile {
            path: path.to_path_buf(),
            error,
        })?,
        None => std::env::var(TOKEN_ENV).map_err(|_| StartError::NoToken)?,
    };
    let token = token.trim().to_owned();
    if token.len() < 16 {
        return Err(StartError::ShortToken);
    }
    Ok(token)
}

/// Parse the spec and enter the sandbox it describes; the spec comes back
/// with the report (the agent enforces its disk quotas).
///
/// # Safety
/// The process must be single-threaded (see [`cortex_sandbox::enter`]).
unsafe fn enter_sandbox(
    spec: &str,
) -> Result<(cortex_sandbox::Report, cortex_sandbox::SandboxSpec), StartError> {
    let spec: cortex_sandbox::SandboxSpec =
        serde_json::from_str(spec).map_err(StartError::BadSandboxSpec)?;
    // SAFETY: forwarded from this function's own contract.
    let report = unsafe { cortex_sandbox::enter(&spec) }.map_err(StartError::Sandbox)?;
    Ok((report, spec))
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
        parse_args(args.iter().map(|s| s.to_string())).map_err(|e| e.to_string())
    }

    #[test]
    fn arguments() {
        let serve = |root: Option<&str>, sandbox: Option<&str>| {
            Ok(Command::Serve(Options {
                root: root.map(PathBuf::from),
                sandbox: sandbox.map(str::to_owned),
                ..Options::default()
            }))
        };
        assert_eq!(parse(&[]), serve(None, None));
        assert_eq!(parse(&["--root", "/w"]), serve(Some("/w"), None));
        assert_eq!(parse(&["--root=/w"]), serve(Some("/w"), None));
        assert_eq!(
            parse(&["--root", "/w", "--sandbox", "{}"]),
            serve(Some("/w"), Some("{}"))
        );
        assert_eq!(
            parse(&["--listen", "127.0.0.1:0", "--token-file=/t"]),
            Ok(Command::Serve(Options {
                listen: Some("127.0.0.1:0".into()),
                token_file: Some("/t".into()),
                ..Options::default()
            }))
        );
        assert!(parse(&["--sandbox"]).is_err());
        assert_eq!(parse(&["--help"]), Ok(Command::Help));
        assert_eq!(parse(&["--build-id"]), Ok(Command::BuildId));
        assert!(parse(&["--root"]).is_err());
        assert!(parse(&["--root", "a", "--root", "b"]).is_err());
        assert!(parse(&["--frobnicate"]).is_err());
        // The messages the agent prints for each mistake.
        assert_eq!(parse(&["--root"]), Err("--root needs a value".to_owned()));
        assert_eq!(
            parse(&["--root", "a", "--root=b"]),
            Err("--root given twice".to_owned())
        );
        assert_eq!(
            parse(&["--frobnicate=1"]),
            Err("unexpected argument `--frobnicate`".to_owned())
        );
        assert_eq!(
            die_with("x").map_err(|e| e.to_string()),
            Err("--die-with needs a process id, not `x`".to_owned())
        );
    }
}

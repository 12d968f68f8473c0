//! Where `tracing` records go.
//!
//! Human output (exec's rows, the TUI) is for the user: a transient state
//! such as a retried model request is an event the renderers show as a
//! status line, never a log record with a timestamp and a module path. So
//! the records go to a log file under the state folder
//! (`$XDG_STATE_HOME/cortex/cortex.log`, else `~/.local/state/cortex/`),
//! and to stderr only when asked for: `--verbose`, or a filter in
//! `CORTEX_LOG` or `RUST_LOG`, or `cortex serve`, whose stderr is a
//! service's log. Either way every record passes the sanitiser: records
//! quote errors that quote what a model or a guest wrote, and a log file is
//! read with `cat` and `tail -f` on a terminal too.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// The default filter. llama.cpp warns about quirks of the model files it
/// loads; they are not the user's to act on.
const QUIET: &str = "warn,llama-cpp-2=error";
/// With `--verbose`.
const VERBOSE: &str = "info,llama-cpp-2=warn";
/// A log file larger than this when a process starts is moved to
/// `cortex.log.1` (replacing the one before), so it never grows unbounded.
const ROTATE_AT: u64 = 8 * 1024 * 1024;

/// Where the records of this process go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sink {
    /// Standard error (asked for, or a server's).
    Stderr,
    /// The log file; nothing on the terminal.
    File,
}

/// Which sink `verbose` and the environment choose; `server` for
/// `cortex serve`.
pub fn choose(verbose: bool, server: bool) -> Sink {
    let asked = ["CORTEX_LOG", "RUST_LOG"]
        .iter()
        .any(|name| std::env::var_os(name).is_some_and(|v| !v.is_empty()));
    if verbose || server || asked {
        Sink::Stderr
    } else {
        Sink::File
    }
}

/// Install the subscriber for `sink`.
pub fn init(sink: Sink, verbose: bool) {
    let filter = ["CORTEX_LOG", "RUST_LOG"]
        .iter()
        .find_map(|name| tracing_subscriber::EnvFilter::try_from_env(name).ok())
        .unwrap_or_else(|| {
            tracing_subscriber::EnvFilter::new(if verbose { VERBOSE } else { QUIET })
        });
    let builder = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_env_filter(filter);
    match sink {
        Sink::Stderr => builder.with_writer(|| Sanitised(Target::Stderr)).init(),
        Sink::File => {
            // A log that cannot be opened loses its records rather than
            // writing them between the user's rows.
            let file = open_log().ok().map(|f| Arc::new(Mutex::new(f)));
            builder
                .with_writer(move || Sanitised(Target::File(file.clone())))
                .init()
        }
    }
}

/// `$XDG_STATE_HOME/cortex/cortex.log` (an absolute `XDG_STATE_HOME` only,
/// as the XDG spec says), else `$HOME/.local/state/cortex/cortex.log`.
pub fn log_path() -> Option<PathBuf> {
    let state = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|home| home.join(".local/state"))
        })?;
    Some(state.join("cortex").join("cortex.log"))
}

fn open_log() -> std::io::Result<File> {
    let path = log_path().ok_or_else(|| std::io::Error::other("no state folder"))?;
    if let Some(dir) = path.parent() {
        // Records quote requests and errors: the user's alone.
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > ROTATE_AT) {
        let _ = std::fs::rename(&path, path.with_extension("log.1"));
    }
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
}

enum Target {
    Stderr,
    File(Option<Arc<Mutex<File>>>),
}

/// One record's writer. The formatter writes each record whole, so an
/// escape sequence is never split between writes.
struct Sanitised(Target);

impl Write for Sanitised {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        let clean = cortex_term::sanitize(&text);
        match &self.0 {
            Target::Stderr => std::io::stderr().write_all(clean.as_bytes())?,
            Target::File(Some(file)) => file
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .write_all(clean.as_bytes())?,
            Target::File(None) => {}
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &self.0 {
            Target::Stderr => std::io::stderr().flush(),
            Target::File(Some(file)) => file.lock().unwrap_or_else(PoisonError::into_inner).flush(),
            Target::File(None) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_and_a_verbose_run_log_to_stderr() {
        assert_eq!(choose(true, false), Sink::Stderr);
        assert_eq!(choose(false, true), Sink::Stderr);
    }
}

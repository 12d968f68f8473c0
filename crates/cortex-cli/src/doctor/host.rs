//! The checks of this machine outside the guest: the session store, the
//! terminal the TUI would draw on, and the versions.

use super::Check;
use crate::config::{Config, data_dir};

/// The store opened as every command opens it (which creates an empty one
/// where there is none, as the first session would), with its size.
pub async fn store(config: &Config) -> Check {
    let path = match data_dir() {
        Ok(dir) => dir.join("cortex.db"),
        Err(e) => {
            return Check::fail("store", format!("{e:#}"), "set HOME or XDG_DATA_HOME").required();
        }
    };
    let existed = path.exists();
    let store = match crate::config::open_store().await {
        Ok(store) => store,
        Err(e) => {
            let fix = format!(
                "check the permissions of {} and the disk; a damaged file can be moved aside \
                 (a new, empty store is made)",
                path.display()
            );
            return Check::fail("store", format!("{e:#}"), fix).required();
        }
    };
    drop(store);
    // The write-ahead log and its index are part of what the store takes.
    let size: u64 = ["", "-wal", "-shm"]
        .iter()
        .filter_map(|suffix| {
            let mut file = path.clone().into_os_string();
            file.push(suffix);
            std::fs::metadata(file).ok()
        })
        .map(|m| m.len())
        .sum();
    let created = if existed { "" } else { " (created now, empty)" };
    let detail = format!("{}: {:.1} MB{created}", path.display(), size as f64 / 1e6);
    match config.store.quota_mb {
        Some(mb) if size >= mb.saturating_mul(1 << 20) / 10 * 9 => Check::warn(
            "store",
            format!("{detail}, near its quota of {mb} MB (past it, turns fail)"),
            Some("raise [store] quota_mb in the config file".to_owned()),
        ),
        Some(mb) => Check::ok("store", format!("{detail} of a {mb} MB quota")),
        None => Check::ok("store", detail),
    }
}

/// The terminal the TUI would draw on: its size and colours.
pub fn terminal() -> Check {
    if let Err(e) = cortex_tui::check_terminal() {
        return Check::warn(
            "terminal",
            format!("{e}: the TUI needs one; `cortex exec` works without"),
            None,
        );
    }
    let colours = colours();
    match size() {
        Some((cols, rows)) if cols < 60 || rows < 15 => Check::warn(
            "terminal",
            format!("{cols}×{rows}, {colours}: small for the TUI"),
            Some("a terminal of at least 80×24".to_owned()),
        ),
        Some((cols, rows)) => Check::ok("terminal", format!("{cols}×{rows}, {colours}")),
        None => Check::ok("terminal", format!("size unknown, {colours}")),
    }
}

/// Columns and rows of stdout's terminal.
fn size() -> Option<(u16, u16)> {
    // SAFETY: TIOCGWINSZ writes one `winsize` into the struct it is given.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: fd 1 is a terminal (checked by the caller); `ws` is valid.
    let done = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut ws) } == 0;
    (done && ws.ws_col > 0).then_some((ws.ws_col, ws.ws_row))
}

/// What colours the TUI uses here, from `NO_COLOR`, `COLORTERM` and `TERM`.
fn colours() -> String {
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty()) {
        return "no colours (NO_COLOR is set)".to_owned();
    }
    let term = var("TERM");
    let colorterm = var("COLORTERM");
    if colorterm == "truecolor" || colorterm == "24bit" {
        format!("24-bit colour (TERM={term})")
    } else if term.contains("256color") {
        format!("256 colours (TERM={term})")
    } else if term.is_empty() || term == "dumb" {
        format!("TERM={term:?}: colours and cursor keys may not work")
    } else {
        format!("16 colours (TERM={term})")
    }
}

/// Cortex's version and build, and the kernel.
pub fn versions() -> Check {
    let features = if cfg!(feature = "local") {
        "embedded model (llama.cpp)"
    } else {
        "no embedded model (built without `local`)"
    };
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "?".to_owned(), |r| r.trim().to_owned());
    Check::ok(
        "versions",
        format!(
            "cortex {} (guest build {}), {features}; {} {kernel} {}",
            env!("CARGO_PKG_VERSION"),
            cortex_guest::BUILD_ID,
            std::env::consts::OS,
            std::env::consts::ARCH
        ),
    )
}

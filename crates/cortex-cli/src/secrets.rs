//! The secrets this process was started with: provider keys and tokens.
//!
//! [`take`] runs first thing in `main`, while the process is single-threaded:
//! the variables Cortex itself reads secrets from (the providers' keys,
//! also under the names `api_key_env` gives them, `CORTEX_TOKEN` and
//! `CORTEX_GUEST_TOKEN`) are moved into this module, their values
//! overwritten with zeros where the kernel keeps the process's original
//! environment, and the variables removed. So no child inherits them by
//! accident, `/proc/PID/environ` of this process shows nothing of them, and
//! a process of the user's own (a `full-access` command) cannot read them;
//! the process is also made non-dumpable, which keeps same-uid processes out
//! of its memory (and `/proc/PID/environ`) altogether. Other variables stay:
//! the user may pass them on on purpose (`[guest] env`, an MCP server's
//! `bearer_token_env_var`). Code that needs a key asks [`secret`], never the
//! environment.

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::OnceLock;

static TAKEN: OnceLock<HashMap<String, String>> = OnceLock::new();

/// The variables Cortex reads secrets from, whatever the configuration.
pub const KNOWN: &[&str] = &[
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "CORTEX_TOKEN",
    "CORTEX_GUEST_TOKEN",
];

/// Take the secrets named by [`KNOWN`] and `configured` out of the
/// environment and make the process non-dumpable.
///
/// # Safety
/// The process must be single-threaded: the environment is changed in
/// place, which is undefined behaviour while another thread reads it.
pub unsafe fn take(configured: &[String]) {
    let names: Vec<&str> = KNOWN
        .iter()
        .copied()
        .chain(configured.iter().map(String::as_str))
        .filter(|name| !name.is_empty() && !name.contains(['=', '\0']))
        .collect();
    let mut taken = HashMap::new();
    for name in names {
        let Some(value) = std::env::var_os(name) else {
            continue;
        };
        if let Ok(value) = value.into_string() {
            taken.insert(name.to_owned(), value);
        }
        if let Ok(c_name) = CString::new(name) {
            // SAFETY: single-threaded (this function's contract); getenv's
            // pointer is valid until the environment changes, and its
            // string is overwritten within its own length.
            unsafe {
                let value = libc::getenv(c_name.as_ptr());
                if !value.is_null() {
                    std::ptr::write_bytes(value, 0, libc::strlen(value));
                }
            }
        }
        // SAFETY: single-threaded (this function's contract).
        unsafe { std::env::remove_var(name) };
    }
    let _ = TAKEN.set(taken);
    // SAFETY: prctl with these arguments only sets a flag of this process.
    unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
}

/// The value of a variable [`take`] took, else of the environment's:
/// trimmed, non-empty.
pub fn secret(name: &str) -> Option<String> {
    TAKEN
        .get()
        .and_then(|taken| taken.get(name).cloned())
        .or_else(|| std::env::var(name).ok())
        .map(|value| value.trim().to_owned())
        .filter(|value| !value.is_empty())
}

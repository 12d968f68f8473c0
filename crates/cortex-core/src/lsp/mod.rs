//! Language servers (`[lsp.NAME]` of the user's config): after a
//! `write_file` or `edit_file` that succeeded in Agent mode, the servers of
//! the file's language report their diagnostics for it, appended to the
//! call's result after the guest's own checks.
//!
//! A server starts on the first write of a file of its language, in a guest
//! of its own built from the session's guest spec (sandbox policy, network,
//! environment and the mode's lock, as an MCP server's), and is kept warm
//! for the next edits (`session.rs`). Nothing about it can fail or hold up
//! the call: a server that is missing, crashes or does not answer within
//! its deadline is a note in the result, the write's status stays what the
//! guest said. Only the user's configuration declares servers: the
//! repository never names a program the harness starts.

mod client;
mod diagnostics;
mod session;

pub(crate) use session::SessionLsp;

use std::collections::BTreeMap;
use std::time::Duration;

/// How long a server gets to publish diagnostics after an edit, unless its
/// config says otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3);

/// The languages a config may name, with the file extensions each covers.
const LANGUAGES: &[(&str, &[&str])] = &[
    ("python", &["py", "pyi"]),
    ("rust", &["rs"]),
    ("typescript", &["ts", "tsx", "mts", "cts"]),
    ("javascript", &["js", "jsx", "mjs", "cjs"]),
    ("go", &["go"]),
];

/// One language server as the user configured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspSpec {
    /// The name of its `[lsp.NAME]` table: what notes call it.
    pub name: String,
    /// The program, looked up in the guest's `PATH`.
    pub command: String,
    /// Its arguments (`--stdio` for most servers).
    pub args: Vec<String>,
    /// Added to the environment the guest gives commands.
    pub env: BTreeMap<String, String>,
    /// The file extensions it checks, without the dot, lower case.
    pub extensions: Vec<String>,
    /// How long it gets to publish diagnostics after an edit.
    pub timeout: Duration,
}

/// Why a `[lsp.NAME]` table was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LspConfigError {
    /// `command` is missing or empty.
    #[error("[lsp.{0}]: `command` is required")]
    NoCommand(String),
    /// A language this table does not know.
    #[error("[lsp.{name}]: unknown language `{language}` (known: {known})")]
    UnknownLanguage {
        /// The server's name.
        name: String,
        /// The language as written.
        language: String,
        /// The languages that are known.
        known: String,
    },
    /// Neither `languages` nor `extensions` names a file it checks.
    #[error("[lsp.{0}]: `languages` or `extensions` must name at least one kind of file")]
    NoFiles(String),
    /// An extension that is not a plain name (`.py`, `py`).
    #[error("[lsp.{name}]: `{extension}` is not a file extension")]
    BadExtension {
        /// The server's name.
        name: String,
        /// The extension as written.
        extension: String,
    },
    /// `timeout_ms` of 0 or above a minute: the turn waits that long.
    #[error("[lsp.{0}]: `timeout_ms` must be between 1 and 60000")]
    BadTimeout(String),
}

impl LspSpec {
    /// A server from its config table's fields: `languages` (`python`,
    /// `rust`, `typescript`, `javascript`, `go`) and `extensions` (`.py` or
    /// `py`) together name the files it checks; `timeout_ms` is the wait
    /// for its diagnostics after an edit ([`DEFAULT_TIMEOUT`] when absent).
    pub fn new(
        name: &str,
        command: &str,
        args: Vec<String>,
        languages: &[String],
        extensions: &[String],
        timeout_ms: Option<u64>,
    ) -> Result<LspSpec, LspConfigError> {
        if command.trim().is_empty() {
            return Err(LspConfigError::NoCommand(name.to_owned()));
        }
        let mut exts: Vec<String> = Vec::new();
        for language in languages {
            let Some((_, known)) = LANGUAGES
                .iter()
                .find(|(l, _)| l.eq_ignore_ascii_case(language))
            else {
                return Err(LspConfigError::UnknownLanguage {
                    name: name.to_owned(),
                    language: language.clone(),
                    known: LANGUAGES
                        .iter()
                        .map(|(l, _)| *l)
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            };
            exts.extend(known.iter().map(|e| (*e).to_owned()));
        }
        for extension in extensions {
            let bare = extension.strip_prefix('.').unwrap_or(extension);
            if bare.is_empty() || !bare.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(LspConfigError::BadExtension {
                    name: name.to_owned(),
                    extension: extension.clone(),
                });
            }
            exts.push(bare.to_ascii_lowercase());
        }
        exts.sort();
        exts.dedup();
        if exts.is_empty() {
            return Err(LspConfigError::NoFiles(name.to_owned()));
        }
        let timeout = match timeout_ms {
            None => DEFAULT_TIMEOUT,
            Some(ms @ 1..=60_000) => Duration::from_millis(ms),
            Some(_) => return Err(LspConfigError::BadTimeout(name.to_owned())),
        };
        Ok(LspSpec {
            name: name.to_owned(),
            command: command.to_owned(),
            args,
            env: BTreeMap::new(),
            extensions: exts,
            timeout,
        })
    }

    /// Whether it checks the file at `path` (by its extension).
    pub(crate) fn covers(&self, path: &str) -> bool {
        extension(path).is_some_and(|ext| self.extensions.contains(&ext))
    }
}

/// `path`'s extension, lower case.
fn extension(path: &str) -> Option<String> {
    let file = path.rsplit('/').next()?;
    let (stem, ext) = file.rsplit_once('.')?;
    (!stem.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// The LSP `languageId` of a file, by its extension.
pub(crate) fn language_id(path: &str) -> &'static str {
    match extension(path).as_deref() {
        Some("py" | "pyi") => "python",
        Some("rs") => "rust",
        Some("ts" | "mts" | "cts") => "typescript",
        Some("tsx") => "typescriptreact",
        Some("js" | "mjs" | "cjs") => "javascript",
        Some("jsx") => "javascriptreact",
        Some("go") => "go",
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn languages_and_extensions_name_the_files_a_server_checks() {
        let spec = LspSpec::new(
            "py",
            "pyright-langserver",
            strings(&["--stdio"]),
            &strings(&["Python"]),
            &strings(&[".pyw"]),
            None,
        )
        .expect("valid");
        assert_eq!(spec.extensions, strings(&["py", "pyi", "pyw"]));
        assert_eq!(spec.timeout, DEFAULT_TIMEOUT);
        assert!(spec.covers("src/a.py"));
        assert!(spec.covers("B.PYI"));
        assert!(!spec.covers("a.rs"));
        assert!(!spec.covers(".py"));
        assert!(!spec.covers("py"));
    }

    #[test]
    fn a_table_without_command_files_or_a_sane_timeout_is_refused() {
        let none: Vec<String> = Vec::new();
        let py = strings(&["python"]);
        assert_eq!(
            LspSpec::new("x", " ", none.clone(), &py, &none, None),
            Err(LspConfigError::NoCommand("x".into()))
        );
        assert_eq!(
            LspSpec::new("x", "s", none.clone(), &none, &none, None),
            Err(LspConfigError::NoFiles("x".into()))
        );
        assert!(matches!(
            LspSpec::new("x", "s", none.clone(), &strings(&["cobol"]), &none, None),
            Err(LspConfigError::UnknownLanguage { .. })
        ));
        assert!(matches!(
            LspSpec::new("x", "s", none.clone(), &none, &strings(&["../py"]), None),
            Err(LspConfigError::BadExtension { .. })
        ));
        assert_eq!(
            LspSpec::new("x", "s", none.clone(), &py, &none, Some(0)),
            Err(LspConfigError::BadTimeout("x".into()))
        );
        let spec = LspSpec::new("x", "s", none.clone(), &py, &none, Some(250)).expect("valid");
        assert_eq!(spec.timeout, Duration::from_millis(250));
    }

    #[test]
    fn language_ids_follow_the_extension() {
        assert_eq!(language_id("a/b.tsx"), "typescriptreact");
        assert_eq!(language_id("main.rs"), "rust");
        assert_eq!(language_id("README"), "plaintext");
    }
}

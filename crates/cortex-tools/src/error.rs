use std::path::PathBuf;

/// A tool failure; `Display` is the message the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The path resolves (after `..` and symlinks) to somewhere outside the
    /// root.
    #[error("path `{path}` is outside the workspace")]
    Escape {
        /// The path as the model gave it.
        path: String,
    },
    /// A write into one of the [`crate::PROTECTED_PATHS`].
    #[error(
        "`{path}` is in `{protected}`, which the agent may not change (it would run or \
         configure things outside the sandbox); ask the user to make this change"
    )]
    Protected {
        /// The path as the model gave it.
        path: String,
        /// The protected entry it falls in, e.g. `.git/hooks`.
        protected: String,
    },
    /// `hint` names similar files (see `suggest.rs`), or is empty.
    #[error("`{path}` does not exist{hint}")]
    NotFound {
        /// The path as shown to the model (relative to the root), or the
        /// root given to [`crate::Workspace::new`].
        path: String,
        /// Starts with its own separator, so it reads on from `path`.
        hint: String,
    },
    /// Anything else the model got wrong (an edit that matches nothing or
    /// too much, a folder where a file was meant, a binary file, a bad
    /// pattern); the message says what to do instead.
    #[error("{0}")]
    Invalid(String),
    /// The filesystem failed on a path that was allowed.
    #[error("I/O error on `{path}`: {source}")]
    Io {
        /// The path that failed: usually the resolved, absolute one; the
        /// model's own when resolving it failed.
        path: PathBuf,
        /// What the filesystem said.
        #[source]
        source: std::io::Error,
    },
}

impl ToolError {
    /// Refusal for FIFOs, sockets and devices (opening one could block
    /// forever).
    pub(crate) fn not_regular(shown: &str) -> ToolError {
        ToolError::Invalid(format!(
            "`{shown}` is not a regular file (a pipe, socket or device)"
        ))
    }
}

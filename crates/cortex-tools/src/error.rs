use std::path::PathBuf;

/// A tool failure; `Display` is the message the model reads.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    #[error("path `{path}` is outside the workspace")]
    Escape { path: String },
    #[error(
        "`{path}` is in `{protected}`, which the agent may not change (it would run or \
         configure things outside the sandbox); ask the user to make this change"
    )]
    Protected { path: String, protected: String },
    /// `hint` names similar files (see `suggest.rs`), or is empty.
    #[error("`{path}` does not exist{hint}")]
    NotFound { path: String, hint: String },
    #[error("{0}")]
    Invalid(String),
    #[error("I/O error on `{path}`: {source}")]
    Io {
        path: PathBuf,
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

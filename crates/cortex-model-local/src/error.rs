use cortex_model::ModelError;
use std::path::PathBuf;

/// Why the local provider failed. `Display` is a message for the user.
///
/// As a [`ModelError`], `Decode` and `EngineGone` become a retryable
/// [`ModelError::Stream`] and everything else [`ModelError::Config`] —
/// `ContextOverflow` included, not [`ModelError::ContextTooLong`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalError {
    /// No file at the model's path.
    #[error(
        "model file {path} not found; fetch it with `cortex models fetch NAME` (names: `cortex models list`) or, offline, `scripts/fetch-default-model NAME`"
    )]
    Missing {
        /// The GGUF file that was asked for.
        path: PathBuf,
    },
    /// The llama.cpp backend could not start.
    #[error("cannot initialise llama.cpp: {0}")]
    Backend(String),
    /// The file exists but llama.cpp cannot load it (not a GGUF, an
    /// unsupported architecture, out of memory).
    #[error("cannot load the model {path}: {reason}")]
    Load {
        /// The GGUF file.
        path: PathBuf,
        /// llama.cpp's reason.
        reason: String,
    },
    /// The context (KV cache) of the configured size could not be made.
    #[error("cannot create the inference context: {0}")]
    Context(String),
    /// The model's chat template cannot be compiled or rendered.
    #[error("chat template: {0}")]
    Template(String),
    /// The rendered prompt does not fit the context window.
    #[error("the prompt is {prompt} tokens; the model context holds {context}")]
    ContextOverflow {
        /// Tokens of the rendered prompt.
        prompt: usize,
        /// The context window, in tokens.
        context: u32,
    },
    /// The tool-call grammar built from the tool schemas was refused.
    #[error("tool-call grammar: {0}")]
    Grammar(String),
    /// llama.cpp failed while evaluating the prompt or generating.
    #[error("inference failed: {0}")]
    Decode(String),
    /// The inference thread has ended (it panicked, or the provider is
    /// being dropped); no request can run.
    #[error("the inference thread is gone")]
    EngineGone,
}

impl From<LocalError> for ModelError {
    fn from(err: LocalError) -> Self {
        match err {
            LocalError::Decode(_) | LocalError::EngineGone => ModelError::Stream(err.to_string()),
            _ => ModelError::Config(err.to_string()),
        }
    }
}

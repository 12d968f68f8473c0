use cortex_model::ModelError;
use std::path::PathBuf;

/// Why the local provider failed. `Display` is a message for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocalError {
    #[error(
        "model file {path} not found; fetch it with `cortex models fetch NAME` (names: `cortex models list`) or, offline, `scripts/fetch-default-model NAME`"
    )]
    Missing { path: PathBuf },
    #[error("cannot initialise llama.cpp: {0}")]
    Backend(String),
    #[error("cannot load the model {path}: {reason}")]
    Load { path: PathBuf, reason: String },
    #[error("cannot create the inference context: {0}")]
    Context(String),
    #[error("chat template: {0}")]
    Template(String),
    #[error("the prompt is {prompt} tokens; the model context holds {context}")]
    ContextOverflow { prompt: usize, context: u32 },
    #[error("tool-call grammar: {0}")]
    Grammar(String),
    #[error("inference failed: {0}")]
    Decode(String),
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

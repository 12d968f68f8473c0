use cortex_model::ModelError;
use cortex_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("repository `{0}` does not exist or is not a folder")]
    Repository(String),
    #[error("workspace: {0}")]
    Workspace(String),
    #[error("no session `{0}`")]
    NoSession(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Model(#[from] ModelError),
}

use crate::HarnessFolderError;
use cortex_model::ModelError;
use cortex_store::StoreError;

#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    #[error("repository `{0}` does not exist or is not a folder")]
    Repository(String),
    #[error(transparent)]
    HarnessFolder(#[from] HarnessFolderError),
    #[error("workspace: {0}")]
    Workspace(String),
    #[error("no session `{0}`")]
    NoSession(String),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Model(#[from] ModelError),
}

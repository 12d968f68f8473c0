use crate::HarnessFolderError;
use cortex_model::ModelError;
use cortex_store::StoreError;

/// Why a session operation failed. A tool or model failure inside a turn is
/// not one of these: it is recorded on the timeline and the turn goes on
/// or fails; these are failures of the session itself.
#[derive(Debug, thiserror::Error)]
pub enum CoreError {
    /// The repository does not exist or is not a folder.
    #[error("repository `{0}` does not exist or is not a folder")]
    Repository(String),
    /// The repository contains, or lies inside, one of Cortex's own folders.
    #[error(transparent)]
    HarnessFolder(#[from] HarnessFolderError),
    /// The workspace (an isolated copy) could not be made or named.
    #[error("workspace: {0}")]
    Workspace(String),
    /// No stored session has this id.
    #[error("no session `{0}`")]
    NoSession(String),
    /// The store failed: the timeline could not be read or written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The model failed outside a turn (a turn records model failures instead).
    #[error(transparent)]
    Model(#[from] ModelError),
}

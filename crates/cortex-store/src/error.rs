#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("database error: {0}")]
    Postgres(String),
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error("no session `{0}`")]
    NoSession(String),
    #[error("cannot open the store at {path}: {reason}")]
    Open { path: String, reason: String },
    /// The caller asked for something the timeline cannot record, e.g. a
    /// `turn.started` without a turn id, or closing a turn that is not running.
    /// Nothing was written.
    #[error("rejected: {0}")]
    Invalid(String),
}

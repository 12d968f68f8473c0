//! The workspace root and path confinement.

use crate::error::ToolError;
use std::path::{Path, PathBuf};

/// A folder the tools operate in. Holds the canonical root.
#[derive(Debug, Clone)]
pub struct Workspace {
    root: PathBuf,
}

/// What a write or edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    /// One line for the model, e.g. "Edited src/lib.rs (1 replacement)".
    pub summary: String,
    /// Unified diff of the change (capped).
    pub diff: String,
}

impl Workspace {
    /// Opens `root`, which must be an existing folder.
    pub fn new(root: impl AsRef<Path>) -> Result<Self, ToolError> {
        let _ = root;
        unimplemented!("filled in by the tools work")
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolve a model-supplied path (relative to the root, or absolute inside
    /// it) to a real path inside the root. `..` and symlinks are resolved
    /// first; anything that ends up outside is [`ToolError::Escape`]. A path
    /// that does not exist yet (for writes) is resolved through its nearest
    /// existing ancestor.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, ToolError> {
        let _ = path;
        unimplemented!()
    }
}

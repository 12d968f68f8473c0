use crate::{ToolError, Workspace, Written};
use cortex_protocol::{EditFileArgs, WriteFileArgs};

impl Workspace {
    /// Create or replace a file; parent folders created.
    pub fn write_file(&self, args: &WriteFileArgs) -> Result<Written, ToolError> {
        let _ = args;
        unimplemented!()
    }

    /// Exact-match replacement; zero or ambiguous matches are errors that say
    /// how many matched.
    pub fn edit_file(&self, args: &EditFileArgs) -> Result<Written, ToolError> {
        let _ = args;
        unimplemented!()
    }
}

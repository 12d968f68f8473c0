use crate::{ToolError, Workspace};
use cortex_protocol::{GlobArgs, GrepArgs};

impl Workspace {
    /// Gitignore-aware glob, newest first, capped with a count of what was
    /// left out.
    pub fn glob(&self, args: &GlobArgs) -> Result<String, ToolError> {
        let _ = args;
        unimplemented!()
    }

    /// ripgrep semantics through grep-searcher / grep-regex + ignore.
    pub fn grep(&self, args: &GrepArgs) -> Result<String, ToolError> {
        let _ = args;
        unimplemented!()
    }
}

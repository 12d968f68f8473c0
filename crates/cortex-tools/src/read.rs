use crate::{ToolError, Workspace};
use cortex_protocol::ReadFileArgs;

impl Workspace {
    /// Numbered lines (`cat -n` style), default 2000 lines from `offset`;
    /// long lines cut; binary files refused with a clear message.
    pub fn read_file(&self, args: &ReadFileArgs) -> Result<String, ToolError> {
        let _ = args;
        unimplemented!()
    }
}

//! The current contents of the files a session touched, read through the
//! guest (the workspace may not be on this machine).

use cortex_protocol::{GuestReply, ReadFileArgs, ToolArgs};
use cortex_runtime::Guest;

/// At most this many files are read, however small.
const MAX_FILES: usize = 16;

/// `(path, contents)` of each file that could be read, in the order given
/// (newest first), stopping once `budget` bytes are used. A file that is
/// gone or unreadable is skipped: the summary and diffs still mention it.
pub(crate) async fn read(guest: &Guest, paths: &[String], budget: usize) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut used = 0;
    for path in paths.iter().take(MAX_FILES) {
        if used >= budget {
            break;
        }
        let Some(contents) = read_one(guest, path).await else {
            continue;
        };
        used += contents.len();
        files.push((path.clone(), contents));
    }
    super::keep::within_budget(files, budget)
}

async fn read_one(guest: &Guest, path: &str) -> Option<String> {
    let mut handle = guest
        .call(ToolArgs::ReadFile(ReadFileArgs {
            path: path.to_owned(),
            offset: None,
            limit: None,
        }))
        .await
        .ok()?;
    while let Some(reply) = handle.next().await {
        if let GuestReply::Result(outcome) = reply {
            return outcome.is_ok().then_some(outcome.output);
        }
    }
    None
}

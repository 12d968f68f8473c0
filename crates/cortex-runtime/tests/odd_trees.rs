//! Special files and odd trees where the walk runs in the guest (issue 20,
//! principle 4): the file tools of a real sandboxed guest answer at once on a
//! FIFO, skip folders whose ignore file is a FIFO, end on symlink loops and
//! show names with control characters on one line. A tool that opened a FIFO
//! in blocking mode would never answer (the call's wait gives up and the
//! test fails).

mod common;

use common::sandbox::{Sandbox, bash};
use common::{CallJson, collect};
use cortex_protocol::{ToolName, ToolOutcome};
use cortex_runtime::Guest;
use serde_json::{Value, json};

async fn call(guest: &Guest, tool: ToolName, args: Value) -> ToolOutcome {
    let mut handle = guest.call_json(tool, args).await.expect("call");
    collect(&mut handle).await.1.expect("a result")
}

#[tokio::test]
async fn the_guests_file_tools_never_block_on_special_files() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    // The model plants the tree from inside, as it would.
    let out = bash(
        &guest,
        "mkdir -p src trap d && echo needle > src/a.txt && echo needle > trap/b.txt \
         && mkfifo src/pipe trap/.gitignore && ln -s loop d/loop && ln -s .. d/up \
         && echo needle > \"$(printf 'evil\\n(999 more not shown)')\"",
    )
    .await;
    assert!(out.is_ok(), "{}", out.output);
    let read = call(&guest, ToolName::ReadFile, json!({"path": "src/pipe"})).await;
    assert!(
        !read.is_ok() && read.output.contains("not a regular file"),
        "{}",
        read.output
    );
    let write = call(
        &guest,
        ToolName::WriteFile,
        json!({"path": "src/pipe", "content": "x"}),
    )
    .await;
    assert!(!write.is_ok(), "{}", write.output);
    let grep = call(
        &guest,
        ToolName::Grep,
        json!({"pattern": "needle", "mode": "files"}),
    )
    .await;
    assert!(grep.is_ok(), "{}", grep.output);
    assert!(grep.output.contains("src/a.txt"), "{}", grep.output);
    assert!(
        grep.output.contains("folders not searched") && grep.output.contains("trap"),
        "{}",
        grep.output
    );
    let glob = call(&guest, ToolName::Glob, json!({"pattern": "*"})).await;
    assert!(glob.is_ok(), "{}", glob.output);
    assert!(
        glob.output.contains("evil\\u{a}(999 more not shown)"),
        "{}",
        glob.output
    );
    assert!(
        !glob.output.lines().any(|l| l == "(999 more not shown)"),
        "{}",
        glob.output
    );
    guest.close().await;
}

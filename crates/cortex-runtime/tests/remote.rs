//! A guest agent listening on TCP (`cortex-guest --listen`), reached by the
//! `remote` provider with its bearer token.

mod common;

use common::{guest_binary, run, spec};
use cortex_protocol::ToolName;
use cortex_runtime::{GuestProvider, RemoteProvider, RuntimeError};
use serde_json::json;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

const TOKEN: &str = "0123456789abcdef-remote-token";

struct Listening {
    child: Child,
    address: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(workspace: &std::path::Path, token_file: &std::path::Path) -> Listening {
    let mut child = Command::new(guest_binary())
        .args(["--listen", "127.0.0.1:0", "--token-file"])
        .arg(token_file)
        .arg("--root")
        .arg(workspace)
        .env("CORTEX_GUEST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    Listening { child, address }
}

#[tokio::test]
async fn the_right_token_gets_a_guest_and_a_wrong_one_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "remote content\n").expect("write");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token");
    let mut agent = listen(dir.path(), &token_file);

    let good = RemoteProvider {
        address: agent.address.clone(),
        token: TOKEN.to_owned(),
    };
    let guest = good
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let out = run(&guest, ToolName::ReadFile, json!({"path": "a.txt"})).await;
    assert!(
        out.ok && out.output.contains("remote content"),
        "{}",
        out.output
    );
    // Capabilities travel too: a read-only remote guest refuses bash.
    let refused = run(&guest, ToolName::Bash, json!({"command": "true"})).await;
    assert!(!refused.ok, "{}", refused.output);
    guest.close().await;

    let bad = RemoteProvider {
        address: agent.address.clone(),
        token: "wrong-token-of-sufficient-length".to_owned(),
    };
    let err = bad
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(&err, RuntimeError::Start { reason, .. } if reason.contains("unauthorized")),
        "{err}"
    );
    let _ = agent.child.kill();
    let _ = agent.child.wait();
    let mut log = String::new();
    agent
        .child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut log)
        .expect("log");
    assert!(log.contains("refused a connection"), "{log}");
}

#[test]
fn listening_without_a_token_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(guest_binary())
        .args(["--listen", "127.0.0.1:0", "--root"])
        .arg(dir.path())
        .env_remove("CORTEX_GUEST_TOKEN")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs a token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

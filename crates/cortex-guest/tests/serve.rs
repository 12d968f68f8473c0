//! The agent over an in-memory pipe: protocol, refusals, multiplexing, stop.

use cortex_guest::{GuestConfig, serve};
use cortex_protocol::{GuestOp, GuestReply, GuestRequest, GuestResponse, ToolName, ToolOutcome};
use serde_json::json;
use std::time::Duration;
use tokio::io::{
    AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines, ReadHalf, WriteHalf,
};
use tokio::task::JoinHandle;

const WAIT: Duration = Duration::from_secs(20);

struct Agent {
    to_guest: WriteHalf<DuplexStream>,
    from_guest: Lines<BufReader<ReadHalf<DuplexStream>>>,
    task: JoinHandle<std::io::Result<()>>,
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
}

impl Agent {
    fn start() -> Agent {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().to_path_buf();
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let (r, w) = tokio::io::split(theirs);
        let config = GuestConfig {
            root: root.clone(),
            bash_env: vec![("PATH".into(), std::env::var("PATH").unwrap_or_default())],
            sandbox: None,
            quotas: None,
            home: None,
            memory_watch: None,
        };
        let task = tokio::spawn(serve(r, w, config));
        let (r, w) = tokio::io::split(ours);
        Agent {
            to_guest: w,
            from_guest: BufReader::new(r).lines(),
            task,
            _dir: dir,
            root,
        }
    }

    async fn send_raw(&mut self, line: &str) {
        self.to_guest
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
    }

    async fn send(&mut self, id: u64, op: GuestOp) {
        let line = serde_json::to_string(&GuestRequest { id, op }).expect("encode");
        self.send_raw(&line).await;
    }

    async fn recv(&mut self) -> GuestResponse {
        let line = tokio::time::timeout(WAIT, self.from_guest.next_line())
            .await
            .expect("a response in time")
            .expect("read")
            .expect("a line");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad response {line}: {e}"))
    }

    /// The next result, skipping deltas.
    async fn result(&mut self) -> (u64, ToolOutcome) {
        loop {
            let response = self.recv().await;
            if let GuestReply::Result(outcome) = response.reply {
                return (response.id, outcome);
            }
        }
    }

    /// A tool request written as raw JSON, so a test can also send
    /// arguments that do not parse.
    async fn tool(&mut self, id: u64, name: ToolName, args: serde_json::Value) {
        let line = serde_json::json!({"id": id, "op": "tool", "tool": name, "args": args});
        self.send_raw(&line.to_string()).await;
    }

    async fn finish(mut self) {
        self.to_guest.shutdown().await.expect("shutdown");
        let result = tokio::time::timeout(WAIT, self.task)
            .await
            .expect("serve returns after EOF")
            .expect("serve task");
        result.expect("serve ok");
    }
}

#[tokio::test]
async fn ping_and_capabilities() {
    let mut agent = Agent::start();
    agent.send(1, GuestOp::Ping).await;
    let (id, outcome) = agent.result().await;
    assert_eq!(
        (id, outcome.is_ok(), outcome.output.as_str()),
        (1, true, "pong")
    );
    agent
        .send(
            2,
            GuestOp::Capabilities {
                writable: true,
                bash: false,
            },
        )
        .await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 2);
    assert!(outcome.is_ok(), "{outcome:?}");
    agent.finish().await;
}

#[tokio::test]
async fn read_only_by_default() {
    let mut agent = Agent::start();
    agent
        .tool(
            1,
            ToolName::WriteFile,
            json!({"path": "a.txt", "content": "x"}),
        )
        .await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 1);
    assert!(!outcome.is_ok());
    assert_eq!(
        outcome.output,
        "this guest is read-only: write_file refused"
    );
    agent
        .tool(
            2,
            ToolName::EditFile,
            json!({"path": "a.txt", "old_string": "x", "new_string": "y"}),
        )
        .await;
    let (_, outcome) = agent.result().await;
    assert!(
        outcome.output.contains("read-only: edit_file refused"),
        "{outcome:?}"
    );
    agent
        .tool(3, ToolName::Bash, json!({"command": "touch x"}))
        .await;
    let (_, outcome) = agent.result().await;
    assert!(!outcome.is_ok());
    assert!(outcome.output.contains("bash refused"), "{outcome:?}");
    // Writable does not imply bash.
    agent
        .send(
            4,
            GuestOp::Capabilities {
                writable: true,
                bash: false,
            },
        )
        .await;
    assert!(agent.result().await.1.is_ok());
    agent
        .tool(5, ToolName::Bash, json!({"command": "touch x"}))
        .await;
    assert!(!agent.result().await.1.is_ok());
    assert!(!agent.root.join("a.txt").exists());
    assert!(!agent.root.join("x").exists());
    agent.finish().await;
}

#[tokio::test]
async fn harness_tools_and_bad_arguments_are_errors() {
    let mut agent = Agent::start();
    agent
        .tool(1, ToolName::TodoWrite, json!({"todos": []}))
        .await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 1);
    assert!(!outcome.is_ok());
    assert!(
        outcome.output.contains("does not run in the guest"),
        "{outcome:?}"
    );
    agent.tool(2, ToolName::ReadFile, json!({"path": 3})).await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 2);
    assert!(!outcome.is_ok());
    assert!(outcome.output.contains("malformed request"), "{outcome:?}");
    agent.finish().await;
}

#[tokio::test]
async fn malformed_lines_are_answered_not_fatal() {
    let mut agent = Agent::start();
    agent.send_raw("this is not json").await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 0);
    assert!(!outcome.is_ok());
    assert!(
        outcome.output.starts_with("malformed request"),
        "{outcome:?}"
    );
    agent.send_raw(r#"{"id":7,"op":"launch_missiles"}"#).await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 7);
    assert!(!outcome.is_ok());
    agent
        .send_raw(r#"{"id":8,"op":"tool","tool":"rm_rf","args":{}}"#)
        .await;
    let (id, _) = agent.result().await;
    assert_eq!(id, 8);
    agent.send_raw("").await;
    agent.send_raw("\u{0}\u{1}garbage").await;
    assert_eq!(agent.result().await.0, 0);
    let huge = "x".repeat(cortex_guest::MAX_REQUEST_BYTES + 10);
    agent.send_raw(&huge).await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 0);
    assert!(outcome.output.contains("limit"), "{outcome:?}");
    agent.send(9, GuestOp::Ping).await;
    assert_eq!(agent.result().await, (9, ToolOutcome::ok("pong")));
    agent.finish().await;
}

#[tokio::test]
async fn stop_with_nothing_running() {
    let mut agent = Agent::start();
    agent.send(1, GuestOp::Stop { target: None }).await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 1);
    assert!(outcome.is_ok());
    agent.send(2, GuestOp::Stop { target: Some(99) }).await;
    assert!(agent.result().await.1.is_ok());
    agent.finish().await;
}

#[tokio::test]
async fn eof_ends_serve() {
    let agent = Agent::start();
    agent.finish().await;
}

// ---- these need cortex-tools' tool bodies ----

async fn grant_all(agent: &mut Agent) {
    agent
        .send(
            100,
            GuestOp::Capabilities {
                writable: true,
                bash: true,
            },
        )
        .await;
    assert!(agent.result().await.1.is_ok());
}

#[tokio::test]
async fn write_read_edit_round_trip() {
    let mut agent = Agent::start();
    grant_all(&mut agent).await;
    agent
        .tool(
            1,
            ToolName::WriteFile,
            json!({"path": "dir/a.txt", "content": "hello\nworld\n"}),
        )
        .await;
    let (id, outcome) = agent.result().await;
    assert_eq!(id, 1);
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.diff.is_some(), "{outcome:?}");
    agent
        .tool(2, ToolName::ReadFile, json!({"path": "dir/a.txt"}))
        .await;
    let (_, outcome) = agent.result().await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.output.contains("hello") && outcome.output.contains("world"));
    agent
        .tool(
            3,
            ToolName::EditFile,
            json!({"path": "dir/a.txt", "old_string": "world", "new_string": "there"}),
        )
        .await;
    let (_, outcome) = agent.result().await;
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(outcome.diff.as_deref().is_some_and(|d| d.contains("there")));
    let content = std::fs::read_to_string(agent.root.join("dir/a.txt")).expect("read");
    assert_eq!(content, "hello\nthere\n");
    agent
        .tool(4, ToolName::ReadFile, json!({"path": "../escape"}))
        .await;
    assert!(!agent.result().await.1.is_ok());
    agent.finish().await;
}

#[tokio::test]
async fn bash_streams_then_fails_with_exit_code() {
    let mut agent = Agent::start();
    grant_all(&mut agent).await;
    agent
        .tool(
            1,
            ToolName::Bash,
            json!({"command": "echo out; echo err >&2; exit 3"}),
        )
        .await;
    let mut streamed = String::new();
    let outcome = loop {
        let response = agent.recv().await;
        assert_eq!(response.id, 1);
        match response.reply {
            GuestReply::Delta { text, .. } => streamed.push_str(&text),
            GuestReply::Result(outcome) => break outcome,
        }
    };
    assert!(
        streamed.contains("out") && streamed.contains("err"),
        "{streamed}"
    );
    assert!(!outcome.is_ok());
    assert_eq!(outcome.exit_code, Some(3));
    assert!(outcome.output.contains('3'), "{outcome:?}");
    agent.finish().await;
}

#[tokio::test]
async fn stop_kills_a_running_command_while_others_answer() {
    let mut agent = Agent::start();
    grant_all(&mut agent).await;
    agent
        .tool(1, ToolName::Bash, json!({"command": "sleep 100"}))
        .await;
    agent.send(2, GuestOp::Ping).await;
    assert_eq!(agent.result().await, (2, ToolOutcome::ok("pong")));
    tokio::time::sleep(Duration::from_millis(200)).await;
    agent.send(3, GuestOp::Stop { target: Some(1) }).await;
    let mut results = [agent.result().await, agent.result().await];
    results.sort_by_key(|(id, _)| *id);
    assert_eq!(results[1].0, 3);
    assert!(results[1].1.is_ok());
    assert!(results[1].1.output.contains('1'), "{:?}", results[1]);
    assert_eq!(results[0].0, 1);
    assert!(results[0].1.is_stopped(), "{:?}", results[0]);
    assert!(!results[0].1.is_ok());
    agent.finish().await;
}

#[tokio::test]
async fn eof_kills_running_commands() {
    let mut agent = Agent::start();
    grant_all(&mut agent).await;
    agent
        .tool(1, ToolName::Bash, json!({"command": "sleep 100"}))
        .await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    agent.finish().await;
    assert!(started.elapsed() < Duration::from_secs(5));
}

//! Crash durability: every event `append` returned survives a `kill -9`.
//!
//! The parent test re-runs this test binary as a child in helper mode
//! (`CORTEX_STORE_CRASH_CHILD` set to the database path). The child appends
//! events to a running turn, printing each seq only after `append` returned,
//! until it is killed mid-stream. The parent then reopens the file and checks
//! that everything printed is there and the turn is still `running`.

use cortex_protocol::{EventKind, Mode, SessionId, StopRule, TurnId};
use cortex_store::{SessionRecord, SqliteStore, Store, TurnStatus};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "CORTEX_STORE_CRASH_CHILD";
const CHILD_TEST: &str = "crash_child";
const SEQ_PREFIX: &str = "CRASH-SEQ ";
/// How many acknowledged appends the parent waits for before killing.
const KILL_AFTER: usize = 25;

fn session() -> SessionId {
    SessionId::from("crash")
}

fn turn() -> TurnId {
    TurnId::from("crash-turn")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Helper mode only: a no-op unless the parent set the environment variable.
#[test]
fn crash_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    runtime().block_on(async {
        let store = SqliteStore::open(Path::new(&path)).expect("child open");
        let mut stdout = std::io::stdout().lock();
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut i = 0u64;
        // Bounded, so an orphaned child stops by itself.
        while Instant::now() < deadline {
            let event = store
                .append(
                    &session(),
                    Some(&turn()),
                    EventKind::MessageDelta {
                        text: format!("chunk {i} {}", "x".repeat(200)),
                    },
                )
                .await
                .expect("child append");
            writeln!(stdout, "{SEQ_PREFIX}{}", event.seq).expect("print seq");
            stdout.flush().expect("flush");
            i += 1;
            // No pause: the kill most likely lands inside an append.
        }
    });
}

#[test]
fn appended_events_survive_kill_9() {
    if std::env::var_os(CHILD_ENV).is_some() {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("crash.db");
    runtime().block_on(async {
        let store = SqliteStore::open(&path).expect("open");
        store
            .create_session(&SessionRecord {
                id: session(),
                repository: "/repo".into(),
                mode: Mode::Agent,
                model: "scripted:test".into(),
                stop_rule: StopRule::Code,
                created_at: cortex_protocol::now_rfc3339(),
                last_seq: 0,
                title: None,
                parent: None,
            })
            .await
            .expect("create");
        store
            .append(
                &session(),
                Some(&turn()),
                EventKind::TurnStarted {
                    message: "survive".into(),
                    mode: Mode::Agent,
                },
            )
            .await
            .expect("start");
    });

    let exe = std::env::current_exe().expect("current exe");
    let mut child = Command::new(exe)
        .args(["--exact", CHILD_TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn child");
    let stdout = child.stdout.take().expect("child stdout");

    let mut printed = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("read child");
        // libtest may print `test crash_child ... ` on the same line first.
        if let Some((_, seq)) = line.split_once(SEQ_PREFIX) {
            printed.push(seq.trim().parse::<u64>().expect("seq"));
            if printed.len() >= KILL_AFTER {
                break;
            }
        }
    }
    // SIGKILL: no destructors, no checkpoint, no clean close.
    child.kill().expect("kill -9 child");
    let status = child.wait().expect("wait child");
    assert!(!status.success(), "the child was killed, not finished");
    assert_eq!(printed.len(), KILL_AFTER, "the child printed too few seqs");
    // turn.started was seq 1; the child's appends follow it.
    let expected: Vec<u64> = (2..2 + KILL_AFTER as u64).collect();
    assert_eq!(printed, expected);

    runtime().block_on(async {
        let store = SqliteStore::open(&path).expect("reopen after kill");
        let events = store.events(&session(), 0).await.expect("events");
        let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
        for seq in &printed {
            assert!(seqs.contains(seq), "acknowledged seq {seq} was lost");
        }
        // Whatever else landed is gapless and matches the session's counter.
        let last = *seqs.last().expect("events");
        assert_eq!(seqs, (1..=last).collect::<Vec<_>>());
        let record = store
            .get_session(&session())
            .await
            .expect("get")
            .expect("some");
        assert_eq!(record.last_seq, last);

        let running = store.running_turns().await.expect("running turns");
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].id, turn());
        assert_eq!(running[0].status, TurnStatus::Running);
        assert_eq!(running[0].ended_at, None);
    });
}

//! SQLite-only behaviour of the store: files on disk, reopening,
//! migrations, corruption.

mod support;

use cortex_protocol::{EventKind, Mode};
use cortex_store::{SqliteStore, Store, StoreError};
use std::path::Path;
use support::*;

#[tokio::test]
async fn a_failed_turn_keeps_its_error_in_the_turns_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store.db");
    let store = SqliteStore::open(&path).expect("open");
    store
        .create_session(&record("s", "2026-01-01T00:00:00.000Z"))
        .await
        .expect("create");
    let s = sid("s");
    for (turn, end) in [
        (
            "t1",
            EventKind::TurnCompleted {
                rounds: 1,
                finish: None,
                unverified: Vec::new(),
            },
        ),
        (
            "t2",
            EventKind::TurnStopped {
                reason: "user".into(),
            },
        ),
        (
            "t3",
            EventKind::TurnFailed {
                error: "boom".into(),
                finish: None,
            },
        ),
    ] {
        let t = tid(turn);
        store
            .append(&s, Some(&t), started(turn))
            .await
            .expect("start");
        store.append(&s, Some(&t), end).await.expect("end");
    }
    // The failure's error is kept with the turn.
    let conn = rusqlite::Connection::open(&path).expect("raw open");
    let errors: Vec<Option<String>> = conn
        .prepare("SELECT error FROM turns ORDER BY id")
        .expect("prepare")
        .query_map([], |row| row.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(errors, vec![None, None, Some("boom".to_owned())]);
}

async fn fill(path: &Path) {
    let store = SqliteStore::open(path).expect("open");
    store
        .create_session(&record("s", "2026-01-01T00:00:00.000Z"))
        .await
        .expect("create");
    store
        .append(&sid("s"), Some(&tid("t1")), started("persist me"))
        .await
        .expect("start");
    store
        .append(&sid("s"), Some(&tid("t1")), delta("hi"))
        .await
        .expect("delta");
    store
        .append(
            &sid("s"),
            Some(&tid("t1")),
            EventKind::ModeChanged {
                from: Mode::Agent,
                to: Mode::Ask,
            },
        )
        .await
        .expect("mode");
}

#[tokio::test]
async fn reopened_file_store_sees_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A parent folder that does not exist yet is created.
    let path = dir.path().join("nested/data/cortex.db");
    fill(&path).await;
    let before = {
        let store = SqliteStore::open(&path).expect("reopen");
        store.events(&sid("s"), 0).await.expect("events")
    };
    assert_eq!(before.len(), 3);

    let store = SqliteStore::open(&path).expect("reopen again");
    assert_eq!(store.events(&sid("s"), 0).await.expect("events"), before);
    let session = store
        .get_session(&sid("s"))
        .await
        .expect("get")
        .expect("some");
    assert_eq!(session.last_seq, 3);
    assert_eq!(session.mode, Mode::Ask);
    assert_eq!(session.title.as_deref(), Some("persist me"));
    let running = store.running_turns().await.expect("running");
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].id, tid("t1"));
    // Appending continues the sequence.
    let next = store
        .append(
            &sid("s"),
            Some(&tid("t1")),
            EventKind::TurnCompleted {
                rounds: 1,
                finish: None,
                unverified: Vec::new(),
            },
        )
        .await
        .expect("append");
    assert_eq!(next.seq, 4);
    assert!(store.running_turns().await.expect("running").is_empty());
}

#[test]
fn migrations_are_idempotent_and_refuse_newer_schemas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("m.db");
    let first = SqliteStore::open(&path).expect("open");
    let version = first.schema_version().expect("version");
    assert!(version >= 1);
    drop(first);
    let second = SqliteStore::open(&path).expect("open twice");
    assert_eq!(second.schema_version().expect("version"), version);
    drop(second);

    let conn = rusqlite::Connection::open(&path).expect("raw");
    let journal: String = conn
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .expect("journal mode");
    assert_eq!(journal.to_ascii_lowercase(), "wal");
    conn.pragma_update(None, "user_version", version + 1)
        .expect("bump");
    drop(conn);
    match SqliteStore::open(&path) {
        Err(StoreError::Open {
            reason: cortex_store::OpenError::TooNew { found, known, .. },
            ..
        }) => {
            assert_eq!((found, known), (version + 1, version));
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a newer schema must be refused"),
    }

    assert_eq!(
        SqliteStore::in_memory()
            .expect("memory")
            .schema_version()
            .expect("version"),
        version
    );
}

#[test]
fn a_file_that_is_not_a_database_is_a_clear_open_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("junk.db");
    std::fs::write(&path, vec![0x42u8; 8192]).expect("write junk");
    match SqliteStore::open(&path) {
        Err(e @ StoreError::Open { .. }) => assert!(e.to_string().contains("junk.db"), "{e}"),
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("junk must not open"),
    }
}

#[tokio::test]
async fn malformed_payload_is_reported_as_corrupt_with_its_seq() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.db");
    fill(&path).await;
    let conn = rusqlite::Connection::open(&path).expect("raw");
    conn.execute(
        "UPDATE events SET payload = '{\"text\": 5}' WHERE session_id = 's' AND seq = 2",
        [],
    )
    .expect("corrupt");
    drop(conn);
    let store = SqliteStore::open(&path).expect("open");
    match store.events(&sid("s"), 0).await {
        Err(StoreError::Corrupt {
            row,
            reason: cortex_store::Corruption::NotItsKind { type_name, .. },
        }) => {
            assert_eq!(row, "event seq 2 of session `s`");
            assert_eq!(type_name, "message.delta");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // Reading past the bad row still works.
    assert_eq!(store.events(&sid("s"), 2).await.expect("events").len(), 1);
}

#[tokio::test]
async fn past_its_quota_the_store_refuses_appends_but_ends_the_turn() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("store.db");
    let store = SqliteStore::open(&path).expect("open");
    store
        .create_session(&record("s", "2026-01-01T00:00:00.000Z"))
        .await
        .expect("create");
    store.set_quota(256 * 1024).expect("quota");
    let (s, t) = (sid("s"), tid("t"));
    store
        .append(&s, Some(&t), started("flood"))
        .await
        .expect("start");
    let line = "x".repeat(16 * 1024);
    let mut written = 0;
    let full = loop {
        let event = EventKind::MessageDelta { text: line.clone() };
        match store.append(&s, Some(&t), event).await {
            Ok(_) => written += 1,
            Err(e) => break e,
        }
        assert!(written < 1000, "the quota never bit");
    };
    assert!(matches!(full, StoreError::Full { .. }), "{full}");
    assert!(full.to_string().contains("store is full"), "{full}");
    // The timeline keeps what it has, and the turn still ends with the error.
    let failed = EventKind::TurnFailed {
        error: full.to_string(),
        finish: None,
    };
    store.append(&s, Some(&t), failed).await.expect("turn end");
    let events = store.events(&s, 0).await.expect("events");
    assert_eq!(events.len(), written + 2);
    assert!(matches!(
        events.last().map(|e| &e.kind),
        Some(EventKind::TurnFailed { .. })
    ));
    let size = std::fs::metadata(&path).expect("db").len();
    eprintln!("{written} deltas of 16 KiB before the 256 KiB quota; the file is {size} bytes");
    // Reopened without a quota, it takes appends again.
    drop(store);
    let store = SqliteStore::open(&path).expect("reopen");
    store
        .append(&s, Some(&tid("t2")), started("again"))
        .await
        .expect("no quota");
}

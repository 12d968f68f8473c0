//! The `Store` contract: one suite, run against SQLite and PostgreSQL (a
//! private server, see `pg`). The timeline half is here, sessions, owners
//! and rules in `contract/`. SQLite-only behaviour (files, corruption) is
//! in `sqlite_file.rs`; migrating databases of older schemas, for both
//! stores, in `migrate.rs`.

#[macro_use]
mod contract;
mod pg;
mod support;

use cortex_protocol::{EventKind, Mode, StopRule};
use cortex_store::{SessionRecord, Store, StoreError, TurnStatus};
use std::collections::BTreeSet;
use std::sync::Arc;
use support::*;

/// The trait-level behaviour every store must have. Expanded once per
/// store; each expansion site defines `async fn new_store() ->
/// Option<Arc<dyn Store>>` (`None`: that store cannot run here, skip).
macro_rules! store_suite {
    () => {
        use super::*;

        async fn store_with(ids: &[&str]) -> Option<Arc<dyn Store>> {
            let store = new_store().await?;
            for (i, id) in ids.iter().enumerate() {
                let created = format!("2026-01-01T00:00:0{i}.000Z");
                store
                    .create_session(&record(id, &created))
                    .await
                    .expect("create session");
            }
            Some(store)
        }

        #[tokio::test]
        async fn every_event_kind_round_trips() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            let kinds = every_kind();
            let covered: BTreeSet<usize> = kinds.iter().map(|(_, k)| variant_index(k)).collect();
            assert_eq!(covered.len(), VARIANTS, "every variant is exercised");

            let mut appended = Vec::new();
            for (turn, kind) in &kinds {
                let turn = turn.map(tid);
                let event = store
                    .append(&sid("s"), turn.as_ref(), kind.clone())
                    .await
                    .unwrap_or_else(|e| panic!("append {}: {e}", kind.type_name()));
                assert_eq!(&event.kind, kind);
                assert_eq!(event.turn_id, turn);
                assert_eq!(event.session_id, sid("s"));
                appended.push(event);
            }
            let read = store.events(&sid("s"), 0).await.expect("events");
            assert_eq!(read, appended);
            // The wire form is unchanged by the trip through the database.
            for (a, b) in read.iter().zip(&appended) {
                assert_eq!(
                    serde_json::to_string(a).expect("json"),
                    serde_json::to_string(b).expect("json")
                );
            }
        }

        #[tokio::test]
        async fn seq_is_monotonic_per_session_and_independent() {
            let Some(store) = store_with(&["a", "b"]).await else {
                return;
            };
            for i in 1..=5u64 {
                let ea = store
                    .append(&sid("a"), None, delta("x"))
                    .await
                    .expect("append a");
                assert_eq!(ea.seq, i);
                if i <= 2 {
                    let eb = store
                        .append(&sid("b"), None, delta("y"))
                        .await
                        .expect("append b");
                    assert_eq!(eb.seq, i);
                }
            }
            let a: Vec<u64> = store
                .events(&sid("a"), 0)
                .await
                .expect("events")
                .iter()
                .map(|e| e.seq)
                .collect();
            assert_eq!(a, vec![1, 2, 3, 4, 5]);
            let b = store.events(&sid("b"), 0).await.expect("events");
            assert_eq!(b.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2]);
            assert!(b.iter().all(|e| e.session_id == sid("b")));

            let session = store
                .get_session(&sid("a"))
                .await
                .expect("get")
                .expect("some");
            assert_eq!(session.last_seq, 5);
            // Timestamps are RFC 3339 with milliseconds and never go backwards.
            let events = store.events(&sid("a"), 0).await.expect("events");
            assert!(events.windows(2).all(|w| w[0].ts <= w[1].ts));
            assert!(
                events
                    .iter()
                    .all(|e| e.ts.len() == 24 && e.ts.ends_with('Z'))
            );
        }

        #[tokio::test]
        async fn events_after_filters() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            for i in 0..6 {
                store
                    .append(&sid("s"), None, delta(&i.to_string()))
                    .await
                    .expect("append");
            }
            let seqs =
                |events: Vec<cortex_protocol::Event>| events.iter().map(|e| e.seq).collect::<Vec<_>>();
            assert_eq!(
                seqs(store.events(&sid("s"), 0).await.expect("e")),
                vec![1, 2, 3, 4, 5, 6]
            );
            assert_eq!(
                seqs(store.events(&sid("s"), 4).await.expect("e")),
                vec![5, 6]
            );
            assert!(store.events(&sid("s"), 6).await.expect("e").is_empty());
            assert!(
                store
                    .events(&sid("s"), u64::MAX)
                    .await
                    .expect("e")
                    .is_empty()
            );
        }

        #[tokio::test]
        async fn turn_status_follows_events() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            let s = sid("s");

            let ends = [
                (
                    "t1",
                    EventKind::TurnCompleted { rounds: 1, finish: None, unverified: Vec::new() },
                    TurnStatus::Completed,
                ),
                (
                    "t2",
                    EventKind::TurnStopped {
                        reason: "user".into(),
                    },
                    TurnStatus::Stopped,
                ),
                (
                    "t3",
                    EventKind::TurnFailed {
                        error: "boom".into(),
                        finish: None,
                    },
                    TurnStatus::Failed,
                ),
            ];
            for (turn, end, status) in ends {
                let t = tid(turn);
                store
                    .append(&s, Some(&t), started(turn))
                    .await
                    .expect("start");
                let running = store.turns(&s).await.expect("turns");
                let last = running.last().expect("a turn");
                assert_eq!(last.id, t);
                assert_eq!(last.status, TurnStatus::Running);
                assert_eq!(last.ended_at, None);
                assert_eq!(store.running_turns().await.expect("running").len(), 1);

                store
                    .append(&s, Some(&t), delta("work"))
                    .await
                    .expect("delta");
                let end_event = store.append(&s, Some(&t), end).await.expect("end");
                let turns = store.turns(&s).await.expect("turns");
                let last = turns.last().expect("a turn");
                assert_eq!(last.status, status);
                assert_eq!(last.ended_at.as_deref(), Some(end_event.ts.as_str()));
                assert!(store.running_turns().await.expect("running").is_empty());
            }
            let turns = store.turns(&s).await.expect("turns");
            assert_eq!(
                turns.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
                vec!["t1", "t2", "t3"]
            );
            assert!(turns.iter().all(|t| t.session_id == s));

        }

        #[tokio::test]
        async fn turn_events_without_a_valid_turn_are_rejected_and_write_nothing() {
            let Some(store) = store_with(&["s", "other"]).await else {
                return;
            };
            let s = sid("s");
            let invalid =
                |r: Result<cortex_protocol::Event, StoreError>| matches!(r, Err(StoreError::Invalid(_)));
            assert!(invalid(store.append(&s, None, started("hi")).await));
            assert!(invalid(
                store
                    .append(&s, None, EventKind::TurnCompleted { rounds: 0, finish: None, unverified: Vec::new() })
                    .await
            ));
            assert!(invalid(
                store
                    .append(
                        &s,
                        Some(&tid("ghost")),
                        EventKind::TurnCompleted { rounds: 0, finish: None, unverified: Vec::new() }
                    )
                    .await
            ));
            store
                .append(&s, Some(&tid("t1")), started("hi"))
                .await
                .expect("start");
            // The same turn cannot start twice, nor be ended from another session.
            assert!(invalid(
                store.append(&s, Some(&tid("t1")), started("again")).await
            ));
            assert!(invalid(
                store
                    .append(
                        &sid("other"),
                        Some(&tid("t1")),
                        EventKind::TurnCompleted { rounds: 1, finish: None, unverified: Vec::new() }
                    )
                    .await
            ));
            store
                .append(&s, Some(&tid("t1")), EventKind::TurnCompleted { rounds: 1, finish: None, unverified: Vec::new() })
                .await
                .expect("complete");
            assert!(invalid(
                store
                    .append(
                        &s,
                        Some(&tid("t1")),
                        EventKind::TurnFailed { error: "x".into(), finish: None }
                    )
                    .await
            ));

            // Only the two accepted events exist, with gapless seqs.
            let events = store.events(&s, 0).await.expect("events");
            assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), vec![1, 2]);
            assert_eq!(
                store
                    .get_session(&s)
                    .await
                    .expect("get")
                    .expect("some")
                    .last_seq,
                2
            );
            assert!(
                store
                    .events(&sid("other"), 0)
                    .await
                    .expect("events")
                    .is_empty()
            );
            let turns = store.turns(&s).await.expect("turns");
            assert_eq!(turns.len(), 1);
            assert_eq!(turns[0].status, TurnStatus::Completed);
        }

        #[tokio::test]
        async fn title_comes_from_the_first_turn() {
            let Some(store) = store_with(&["s", "titled"]).await else {
                return;
            };
            assert_eq!(
                store
                    .get_session(&sid("s"))
                    .await
                    .expect("get")
                    .expect("some")
                    .title,
                None
            );
            let long = format!("\n  {}  \nsecond line", "x".repeat(120));
            store
                .append(&sid("s"), Some(&tid("t1")), started(&long))
                .await
                .expect("start");
            store
                .append(
                    &sid("s"),
                    Some(&tid("t1")),
                    EventKind::TurnCompleted { rounds: 1, finish: None, unverified: Vec::new() },
                )
                .await
                .expect("end");
            store
                .append(&sid("s"), Some(&tid("t2")), started("another message"))
                .await
                .expect("start 2");
            let title = store
                .get_session(&sid("s"))
                .await
                .expect("get")
                .expect("some")
                .title;
            assert_eq!(title, Some("x".repeat(80)));

            // A session created with a title keeps it.
            let mut titled = record("titled2", "2026-02-01T00:00:00.000Z");
            titled.title = Some("given".into());
            store.create_session(&titled).await.expect("create");
            store
                .append(&sid("titled2"), Some(&tid("t9")), started("hello"))
                .await
                .expect("start");
            assert_eq!(
                store
                    .get_session(&sid("titled2"))
                    .await
                    .expect("get")
                    .expect("some")
                    .title
                    .as_deref(),
                Some("given")
            );
        }

        async fn mode(store: &Arc<dyn Store>) -> Mode {
            store
                .get_session(&sid("s"))
                .await
                .expect("get")
                .expect("some")
                .mode
        }

        #[tokio::test]
        async fn mode_follows_mode_changed() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            assert_eq!(mode(&store).await, Mode::Agent);
            store
                .append(
                    &sid("s"),
                    None,
                    EventKind::ModeChanged {
                        from: Mode::Agent,
                        to: Mode::Plan,
                    },
                )
                .await
                .expect("append");
            assert_eq!(mode(&store).await, Mode::Plan);
        }

        #[tokio::test]
        async fn unknown_session_is_an_error_and_writes_nothing() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            let err = store
                .append(&sid("ghost"), None, delta("x"))
                .await
                .expect_err("unknown session");
            assert!(
                matches!(err, StoreError::NoSession(ref id) if id == "ghost"),
                "{err}"
            );
            let err = store
                .append(&sid("ghost"), Some(&tid("t")), started("x"))
                .await
                .expect_err("unknown session");
            assert!(matches!(err, StoreError::NoSession(_)), "{err}");
            assert!(matches!(
                store.events(&sid("ghost"), 0).await,
                Err(StoreError::NoSession(_))
            ));
            assert!(matches!(
                store.turns(&sid("ghost")).await,
                Err(StoreError::NoSession(_))
            ));
            assert!(store.running_turns().await.expect("running").is_empty());
            assert_eq!(store.get_session(&sid("ghost")).await.expect("get"), None);
            // The next real append still starts at 1.
            let first = store
                .append(&sid("s"), None, delta("x"))
                .await
                .expect("append");
            assert_eq!(first.seq, 1);
        }

        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn concurrent_appends_are_gapless() {
            const TASKS: u64 = 8;
            const EACH: u64 = 40;
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            let mut handles = Vec::new();
            for task in 0..TASKS {
                let store = Arc::clone(&store);
                handles.push(tokio::spawn(async move {
                    let mut seqs = Vec::new();
                    for i in 0..EACH {
                        let event = store
                            .append(&sid("s"), None, delta(&format!("{task}:{i}")))
                            .await
                            .expect("append");
                        seqs.push(event.seq);
                        tokio::task::yield_now().await;
                    }
                    seqs
                }));
            }
            let mut returned = Vec::new();
            for handle in handles {
                let seqs = handle.await.expect("task");
                // Each task sees its own appends in increasing order.
                assert!(seqs.windows(2).all(|w| w[0] < w[1]));
                returned.extend(seqs);
            }
            returned.sort_unstable();
            let expected: Vec<u64> = (1..=TASKS * EACH).collect();
            assert_eq!(returned, expected);
            let stored: Vec<u64> = store
                .events(&sid("s"), 0)
                .await
                .expect("events")
                .iter()
                .map(|e| e.seq)
                .collect();
            assert_eq!(stored, expected);
        }

        #[tokio::test]
        async fn running_turns_span_sessions() {
            let Some(store) = store_with(&["a", "b"]).await else {
                return;
            };
            store
                .append(&sid("a"), Some(&tid("ta")), started("a"))
                .await
                .expect("a");
            store
                .append(&sid("b"), Some(&tid("tb")), started("b"))
                .await
                .expect("b");
            store
                .append(
                    &sid("b"),
                    Some(&tid("tb")),
                    EventKind::TurnCompleted { rounds: 1, finish: None, unverified: Vec::new() },
                )
                .await
                .expect("end b");
            store
                .append(&sid("b"), Some(&tid("tb2")), started("b2"))
                .await
                .expect("b2");
            let running = store.running_turns().await.expect("running");
            let mut ids: Vec<(String, String)> = running
                .into_iter()
                .map(|t| (t.session_id.0, t.id.0))
                .collect();
            ids.sort();
            assert_eq!(
                ids,
                vec![
                    ("a".to_owned(), "ta".to_owned()),
                    ("b".to_owned(), "tb2".to_owned())
                ]
            );
        }
    };
}

mod sqlite {
    async fn new_store() -> Option<std::sync::Arc<dyn cortex_store::Store>> {
        Some(std::sync::Arc::new(
            cortex_store::SqliteStore::in_memory().expect("in-memory store"),
        ))
    }
    store_suite!();
    sessions_suite!();
}

mod postgres {
    async fn new_store() -> Option<std::sync::Arc<dyn cortex_store::Store>> {
        let url = crate::pg::database().await?;
        Some(std::sync::Arc::new(
            cortex_store::PgStore::connect(&url).await.expect("connect"),
        ))
    }
    store_suite!();
    sessions_suite!();

    /// The server ends the store's connections (as a restart or a failover
    /// would): later calls work again without a new store.
    #[tokio::test]
    async fn closed_connections_are_opened_again() {
        let Some(url) = crate::pg::database().await else {
            return;
        };
        let store = cortex_store::PgStore::connect(&url).await.expect("connect");
        store
            .create_session(&record("s1", "2026-01-01T00:00:00.000Z"))
            .await
            .expect("create");
        store
            .append(&sid("s1"), None, delta("before"))
            .await
            .expect("append");

        let (database, admin) = match url.rsplit_once('/') {
            Some((server, database)) => (database.to_owned(), format!("{server}/postgres")),
            None => panic!("url without a database: {url}"),
        };
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls)
            .await
            .expect("admin connection");
        let task = tokio::spawn(connection);
        let ended = client
            .query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = $1 AND pid <> pg_backend_pid()",
                &[&database],
            )
            .await
            .expect("terminate");
        assert_eq!(ended.len(), 2, "the writer and the reader");
        drop(client);
        let _ = task.await;

        // The store learns of the close asynchronously: a call racing it may
        // fail; the ones after it must reconnect.
        let mut worked = false;
        for _ in 0..50 {
            let appended = store.append(&sid("s1"), None, delta("after")).await;
            let read = store.events(&sid("s1"), 0).await;
            if let (Ok(_), Ok(events)) = (appended, read) {
                assert!(events.len() >= 2, "{events:?}");
                worked = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        assert!(worked, "the store did not reconnect");
    }
}

//! The half of the `Store` contract about sessions, owners, turn listings
//! and approval rules: `sessions_suite!()` is expanded after `store_suite!()`
//! (in `store.rs`), whose `store_with` it uses, once per store.

/// Expands to the session, owner and rule tests for the store that the
/// expansion site's `new_store` opens.
macro_rules! sessions_suite {
    () => {
        #[tokio::test]
        async fn sessions_are_listed_newest_first() {
            let Some(store) = store_with(&[]).await else {
                return;
            };
            for (id, created) in [
                ("b", "2026-01-02T00:00:00.000Z"),
                ("a", "2026-01-03T00:00:00.000Z"),
                ("c", "2026-01-01T00:00:00.000Z"),
                ("d", "2026-01-03T00:00:00.000Z"),
            ] {
                store
                    .create_session(&record(id, created))
                    .await
                    .expect("create");
                store.set_owner(&sid(id), "o").await.expect("owner");
            }
            let ids: Vec<String> = store
                .list_owned("o", None, 10)
                .await
                .expect("list")
                .into_iter()
                .map(|s| s.id.0)
                .collect();
            assert_eq!(ids, vec!["d", "a", "b", "c"]);

            // A subagent's session keeps its link and is not listed.
            let mut child = record("k", "2026-01-05T00:00:00.000Z");
            child.parent = Some(cortex_protocol::ParentLink {
                session: sid("d"),
                call_id: "call_1_0".into(),
            });
            store.create_session(&child).await.expect("create child");
            store.set_owner(&sid("k"), "o").await.expect("owner");
            let got = store.get_session(&sid("k")).await.expect("get");
            assert_eq!(got.and_then(|r| r.parent), child.parent);
            let listed = store.list_owned("o", None, 10).await.expect("list");
            assert!(listed.iter().all(|s| s.id.0 != "k"), "{listed:?}");
            let after = store.list_owned("o", Some(&sid("a")), 10).await;
            assert!(after.expect("page").iter().all(|s| s.id.0 != "k"));

            let mut with_seq = record("e", "2026-01-04T00:00:00.000Z");
            with_seq.stop_rule = StopRule::Chat;
            with_seq.mode = Mode::Ask;
            with_seq.last_seq = 99;
            store.create_session(&with_seq).await.expect("create");
            let got = store
                .get_session(&sid("e"))
                .await
                .expect("get")
                .expect("some");
            // A new session has no events, whatever the record said.
            assert_eq!(
                got,
                SessionRecord {
                    last_seq: 0,
                    ..with_seq.clone()
                }
            );
            assert!(matches!(
                store.create_session(&with_seq).await,
                Err(StoreError::Invalid(_))
            ));
            assert_eq!(store.get_session(&sid("zz")).await.expect("get"), None);
        }

        #[tokio::test]
        async fn sessions_are_paged_per_owner_and_cursors_stay_private() {
            let Some(store) = store_with(&["a1", "b1", "a2", "a3", "none"]).await else {
                return;
            };
            for (id, owner) in [
                ("a1", "alice"),
                ("a2", "alice"),
                ("a3", "alice"),
                ("b1", "bob"),
            ] {
                store.set_owner(&sid(id), owner).await.expect("owner");
            }
            assert_eq!(
                store.owner(&sid("a1")).await.expect("owner"),
                Some("alice".into())
            );
            assert_eq!(store.owner(&sid("none")).await.expect("owner"), None);
            assert!(matches!(
                store.owner(&sid("missing")).await,
                Err(StoreError::NoSession(_))
            ));
            assert!(matches!(
                store.set_owner(&sid("missing"), "alice").await,
                Err(StoreError::NoSession(_))
            ));

            let ids =
                |page: Vec<SessionRecord>| page.into_iter().map(|s| s.id.0).collect::<Vec<_>>();
            let first = store.list_owned("alice", None, 2).await.expect("page 1");
            assert_eq!(ids(first), ["a3", "a2"]);
            let second = store
                .list_owned("alice", Some(&sid("a2")), 2)
                .await
                .expect("page 2");
            assert_eq!(ids(second), ["a1"]);
            let last = store
                .list_owned("alice", Some(&sid("a1")), 2)
                .await
                .expect("page 3");
            assert!(last.is_empty());
            assert_eq!(
                ids(store.list_owned("bob", None, 10).await.expect("bob")),
                ["b1"]
            );
            // Another owner's session is not a cursor: it must not reveal anything.
            assert!(matches!(
                store.list_owned("alice", Some(&sid("b1")), 2).await,
                Err(StoreError::NoSession(_))
            ));
            // A session without an owner is in no owner's listing.
            for owner in ["alice", "bob", "", "local"] {
                let listed = ids(store.list_owned(owner, None, 10).await.expect("list"));
                assert!(!listed.contains(&"none".to_owned()), "{owner}: {listed:?}");
            }
            assert!(
                store
                    .list_owned("alice", None, 0)
                    .await
                    .expect("0")
                    .is_empty()
            );
        }

        #[tokio::test]
        async fn rules_belong_to_their_principal() {
            let Some(store) = store_with(&[]).await else {
                return;
            };
            let rule = |id: &str, repository: Option<&str>, matches| cortex_protocol::Rule {
                id: id.into(),
                repository: repository.map(str::to_owned),
                matches,
                created_at: format!("2026-01-01T00:00:0{}.000Z", id.len()),
            };
            let git = rule(
                "r1",
                Some("/repo"),
                cortex_protocol::RuleMatch::Bash {
                    prefix: vec!["git".into(), "status".into()],
                },
            );
            let write = rule(
                "r22",
                None,
                cortex_protocol::RuleMatch::Write {
                    glob: "src/**".into(),
                },
            );
            store.add_rule("alice", &git).await.expect("add");
            store.add_rule("alice", &write).await.expect("add");
            // Ids are unique in the whole store, and a refused add writes nothing.
            assert!(matches!(
                store.add_rule("bob", &git).await,
                Err(StoreError::Invalid(_))
            ));
            assert!(matches!(
                store.add_rule("alice", &git).await,
                Err(StoreError::Invalid(_))
            ));
            assert_eq!(
                store.rules("alice").await.expect("rules"),
                [git.clone(), write]
            );
            assert!(store.rules("bob").await.expect("rules").is_empty());
            assert!(!store.delete_rule("bob", "r1").await.expect("delete"));
            assert!(store.delete_rule("alice", "r22").await.expect("delete"));
            assert!(!store.delete_rule("alice", "r22").await.expect("delete"));
            assert_eq!(store.rules("alice").await.expect("rules"), [git]);
        }

        #[tokio::test]
        async fn an_owner_can_be_set_again() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            store.set_owner(&sid("s"), "alice").await.expect("owner");
            store
                .set_owner(&sid("s"), "alice")
                .await
                .expect("same owner again");
            assert_eq!(
                store.owner(&sid("s")).await.expect("owner").as_deref(),
                Some("alice")
            );
            store.set_owner(&sid("s"), "bob").await.expect("new owner");
            assert_eq!(
                store.owner(&sid("s")).await.expect("owner").as_deref(),
                Some("bob")
            );
            assert!(
                store
                    .list_owned("alice", None, 10)
                    .await
                    .expect("alice")
                    .is_empty()
            );
            assert_eq!(
                store.list_owned("bob", None, 10).await.expect("bob").len(),
                1
            );
        }

        /// Turns are listed in the order they started, whatever their ids
        /// and even within one millisecond.
        #[tokio::test]
        async fn turns_are_listed_in_start_order() {
            let Some(store) = store_with(&["s", "other"]).await else {
                return;
            };
            for turn in ["z", "a", "m"] {
                store
                    .append(&sid("s"), Some(&tid(turn)), started(turn))
                    .await
                    .expect("start");
                store
                    .append(&sid("s"), None, delta("x"))
                    .await
                    .expect("delta");
                if turn != "m" {
                    store
                        .append(
                            &sid("s"),
                            Some(&tid(turn)),
                            EventKind::TurnStopped {
                                reason: "user".into(),
                            },
                        )
                        .await
                        .expect("stop");
                }
            }
            store
                .append(&sid("other"), Some(&tid("b")), started("b"))
                .await
                .expect("start other");
            let turns = store.turns(&sid("s")).await.expect("turns");
            let listed: Vec<(&str, TurnStatus, bool)> = turns
                .iter()
                .map(|t| (t.id.as_str(), t.status, t.ended_at.is_some()))
                .collect();
            assert_eq!(
                listed,
                [
                    ("z", TurnStatus::Stopped, true),
                    ("a", TurnStatus::Stopped, true),
                    ("m", TurnStatus::Running, false),
                ]
            );
            assert!(turns.iter().all(|t| t.session_id == sid("s")));
            let events = store.events(&sid("s"), 0).await.expect("events");
            assert_eq!(turns[0].started_at, events[0].ts);
            assert!(store.turns(&sid("other")).await.expect("other").len() == 1);
        }

        /// Appends dropped at any point (here by timeouts from 0 to 6 ms)
        /// are applied entirely or not at all: whatever landed is gapless,
        /// the session's `last_seq` agrees, and the store goes on.
        #[tokio::test]
        async fn dropped_appends_leave_a_gapless_timeline() {
            let Some(store) = store_with(&["s"]).await else {
                return;
            };
            for i in 0..60u64 {
                let (session, text) = (sid("s"), i.to_string());
                let append = store.append(&session, None, delta(&text));
                let budget = std::time::Duration::from_micros(i * 100);
                let _ = tokio::time::timeout(budget, append).await;
            }
            let after = store
                .append(&sid("s"), None, delta("after"))
                .await
                .expect("the store goes on");
            let events = store.events(&sid("s"), 0).await.expect("events");
            let seqs: Vec<u64> = events.iter().map(|e| e.seq).collect();
            assert_eq!(seqs, (1..=after.seq).collect::<Vec<_>>());
            let session = store.get_session(&sid("s")).await.expect("get");
            assert_eq!(session.map(|s| s.last_seq), Some(after.seq));
        }

        /// A blob is kept under its key once, however often it is put, and
        /// read back whole; an unknown key is `None`.
        #[tokio::test]
        async fn blobs_are_stored_once_by_content() {
            let Some(store) = store_with(&[]).await else {
                return;
            };
            let blob = cortex_store::Blob {
                sha256: "ab".repeat(32),
                mime_type: "image/png".into(),
                data: "iVBORw0KGgo=".into(),
            };
            store.put_blob(&blob).await.expect("put");
            store.put_blob(&blob).await.expect("put again");
            assert_eq!(store.blob(&blob.sha256).await.expect("get"), Some(blob));
            assert_eq!(store.blob(&"cd".repeat(32)).await.expect("get"), None);
        }
    };
}

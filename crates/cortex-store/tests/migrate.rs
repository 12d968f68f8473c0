//! Databases made by older builds open with this one, their data intact,
//! on both stores: a database of the last per-backend schema (version 3)
//! and one from before owners (version 1) are built with the schema text
//! those builds ran (`migrate/old_schema.rs`) and filled with rows as they
//! wrote them. Whatever its history, every database ends with the same
//! tables, columns and indexes in both backends.

#[path = "migrate/old_schema.rs"]
mod old_schema;
mod pg;
mod support;

use cortex_protocol::{EventKind, Mode, Rule, RuleMatch};
use cortex_store::{EncodedKind, PgStore, SqliteStore, Store, StoreError, TurnStatus};
use std::collections::BTreeSet;
use support::*;

/// The schema version this build writes.
const LATEST: i64 = 6;
const TS: &str = "2026-11-01T10:00:00.000Z";

fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Rows as a build of schema 3 wrote them: session `s` (alice's) with two
/// turns started in the same millisecond, `t9` completed and `t1` still
/// running, their events, and `exec`, a session without an owner. Plain
/// SQL that both dialects run.
fn old_rows() -> String {
    let events: [(u64, Option<&str>, EventKind); 5] = [
        (1, Some("t9"), started("fix the build")),
        (2, None, delta("looking")),
        (
            3,
            Some("t9"),
            EventKind::TurnCompleted {
                rounds: 1,
                finish: None,
                unverified: Vec::new(),
            },
        ),
        (4, Some("t1"), started("again")),
        (5, None, delta("still")),
    ];
    let mut sql = format!(
        "INSERT INTO sessions (id, repository, mode, model, stop_rule, created_at, title, \
         last_seq, owner) VALUES ('s', '/repo', 'agent', 'scripted:test', 'code', {TS}, \
         'fix the build', 5, 'alice'), ('exec', '/repo', 'ask', 'scripted:test', 'chat', {TS}, \
         NULL, 0, NULL);\n",
        TS = quote(TS)
    );
    for (seq, turn, kind) in events {
        let encoded = EncodedKind::new(kind).expect("encode");
        sql.push_str(&format!(
            "INSERT INTO events (session_id, seq, ts, turn_id, type, payload) \
             VALUES ('s', {seq}, {}, {}, {}, {});\n",
            quote(TS),
            turn.map_or("NULL".to_owned(), quote),
            quote(encoded.type_name()),
            quote(encoded.payload()),
        ));
    }
    // Inserted in start order, as the old builds did: with one timestamp,
    // only that order (SQLite's rowid, PostgreSQL's ord) told them apart.
    sql.push_str(&format!(
        "INSERT INTO turns (id, session_id, status, started_at, ended_at) \
         VALUES ('t9', 's', 'completed', {TS}, {TS});\n\
         INSERT INTO turns (id, session_id, status, started_at) \
         VALUES ('t1', 's', 'running', {TS});\n",
        TS = quote(TS)
    ));
    let rule = stored_rule();
    sql.push_str(&format!(
        "INSERT INTO rules (id, principal, repository, matches, created_at) \
         VALUES ('r1', 'alice', '/repo', {}, {});\n",
        quote(&serde_json::to_string(&rule.matches).expect("json")),
        quote(&rule.created_at)
    ));
    sql
}

fn stored_rule() -> Rule {
    Rule {
        id: "r1".into(),
        repository: Some("/repo".into()),
        matches: RuleMatch::Bash {
            prefix: vec!["cargo".into(), "test".into()],
        },
        created_at: TS.into(),
    }
}

async fn turns(store: &dyn Store) -> Vec<(String, TurnStatus)> {
    let turns = store.turns(&sid("s")).await.expect("turns");
    turns.into_iter().map(|t| (t.id.0, t.status)).collect()
}

/// Everything `old_rows` wrote reads back through the new code, and the
/// timeline goes on where it stopped.
async fn check_old_rows(store: &dyn Store) {
    let events = store.events(&sid("s"), 0).await.expect("events");
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
    assert_eq!(events[0].kind, started("fix the build"));
    assert_eq!(
        events[2].kind,
        EventKind::TurnCompleted {
            rounds: 1,
            finish: None,
            unverified: Vec::new()
        }
    );
    assert_eq!(events[3].turn_id, Some(tid("t1")));
    let session = store.get_session(&sid("s")).await.expect("get");
    let session = session.expect("session s");
    assert_eq!(
        (session.last_seq, session.title.as_deref()),
        (5, Some("fix the build"))
    );
    assert_eq!(
        turns(store).await,
        [
            ("t9".to_owned(), TurnStatus::Completed),
            ("t1".to_owned(), TurnStatus::Running)
        ]
    );
    let running = store.running_turns().await.expect("running");
    assert_eq!(running.len(), 1);
    assert_eq!(running[0].id, tid("t1"));
    assert_eq!(
        store.owner(&sid("s")).await.expect("owner").as_deref(),
        Some("alice")
    );
    // No backfill gives a `cortex exec` session to anyone.
    assert_eq!(store.owner(&sid("exec")).await.expect("owner"), None);
    let exec = store.get_session(&sid("exec")).await.expect("get");
    assert_eq!(exec.map(|s| s.mode), Some(Mode::Ask));
    assert_eq!(store.rules("alice").await.expect("rules"), [stored_rule()]);

    let ended = store
        .append(
            &sid("s"),
            Some(&tid("t1")),
            EventKind::TurnCompleted {
                rounds: 2,
                finish: None,
                unverified: Vec::new(),
            },
        )
        .await
        .expect("close the old running turn");
    assert_eq!(ended.seq, 6);
    store
        .append(&sid("s"), Some(&tid("t0")), started("third"))
        .await
        .expect("a new turn");
    let ids: Vec<String> = turns(store).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, ["t9", "t1", "t0"]);
    assert!(matches!(
        store
            .append(&sid("s"), Some(&tid("t9")), started("x"))
            .await,
        Err(StoreError::Invalid(_))
    ));
}

/// A session as a build of schema 1 wrote it.
const V1_ROWS: &str = "INSERT INTO sessions (id, repository, mode, model, stop_rule, created_at) \
     VALUES ('old', '/repo', 'agent', 'scripted:test', 'code', '2026-11-01T00:00:00.000Z');";

// ---- SQLite ---------------------------------------------------------------

fn sqlite_old(path: &std::path::Path, steps: &[&str], version: i64, rows: &str) {
    let conn = rusqlite::Connection::open(path).expect("open raw");
    for step in steps {
        conn.execute_batch(step).expect("old step");
    }
    conn.execute_batch(rows).expect("old rows");
    conn.pragma_update(None, "user_version", version)
        .expect("version");
}

#[tokio::test]
async fn sqlite_schema_3_databases_open_with_their_data() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.db");
    let steps = [
        old_schema::SQLITE_V1,
        old_schema::SQLITE_V2,
        old_schema::RULES,
    ];
    sqlite_old(&path, &steps, 3, &old_rows());
    let store = SqliteStore::open(&path).expect("migrate");
    assert_eq!(store.schema_version().expect("version"), LATEST);
    check_old_rows(&store).await;
    drop(store);
    let again = SqliteStore::open(&path).expect("open again");
    assert_eq!(again.schema_version().expect("version"), LATEST);
    assert_eq!(again.events(&sid("s"), 0).await.expect("events").len(), 7);
}

/// A database from before the API (schema 1): its sessions go to the local
/// CLI's principal, so `cortex sessions` still shows them.
#[tokio::test]
async fn sqlite_sessions_from_before_owners_belong_to_local() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v1.db");
    let rows = V1_ROWS;
    sqlite_old(&path, &[old_schema::SQLITE_V1], 1, rows);
    let store = SqliteStore::open(&path).expect("migrate");
    assert_eq!(
        store.owner(&sid("old")).await.expect("owner").as_deref(),
        Some("local")
    );
}

/// (table, column, not null) of every table, then every index's name.
type Shape = (BTreeSet<(String, String, bool)>, BTreeSet<String>);

fn sqlite_shape(path: &std::path::Path) -> Shape {
    let conn = rusqlite::Connection::open(path).expect("open raw");
    let mut stmt = conn
        .prepare(
            "SELECT m.name, p.name, p.\"notnull\" FROM sqlite_master m \
             JOIN pragma_table_info(m.name) p WHERE m.type = 'table'",
        )
        .expect("columns");
    let columns = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)? == 1)))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let mut stmt = conn
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'index' \
             AND name NOT LIKE 'sqlite_autoindex%'",
        )
        .expect("indexes");
    let indexes = stmt
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    (columns, indexes)
}

// ---- PostgreSQL -----------------------------------------------------------

async fn pg_client(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
}

/// A fresh database holding `steps` at `version`, or `None` without
/// PostgreSQL.
async fn pg_old(steps: &[&str], version: i64, rows: &str) -> Option<String> {
    let url = pg::database().await?;
    let client = pg_client(&url).await;
    for step in steps {
        client.batch_execute(step).await.expect("old step");
    }
    client.batch_execute(rows).await.expect("old rows");
    client
        .batch_execute(&format!(
            "CREATE TABLE cortex_schema (version BIGINT NOT NULL); \
             INSERT INTO cortex_schema (version) VALUES ({version});"
        ))
        .await
        .expect("version");
    Some(url)
}

#[tokio::test]
async fn postgres_schema_3_databases_open_with_their_data() {
    let steps = [old_schema::PG_V1, old_schema::PG_V2, old_schema::RULES];
    let Some(url) = pg_old(&steps, 3, &old_rows()).await else {
        return;
    };
    let store = PgStore::connect(&url).await.expect("migrate");
    assert_eq!(store.schema_version().await.expect("version"), LATEST);
    check_old_rows(&store).await;
    drop(store);
    let again = PgStore::connect(&url).await.expect("open again");
    assert_eq!(again.schema_version().await.expect("version"), LATEST);
    assert_eq!(again.events(&sid("s"), 0).await.expect("events").len(), 7);
}

/// PostgreSQL now runs the shared step 2, backfill included.
#[tokio::test]
async fn postgres_sessions_from_before_owners_belong_to_local() {
    let rows = V1_ROWS;
    let Some(url) = pg_old(&[old_schema::PG_V1], 1, rows).await else {
        return;
    };
    let store = PgStore::connect(&url).await.expect("migrate");
    assert_eq!(
        store.owner(&sid("old")).await.expect("owner").as_deref(),
        Some("local")
    );
}

async fn pg_shape(url: &str) -> Shape {
    let client = pg_client(url).await;
    let columns = client
        .query(
            "SELECT table_name::text, column_name::text, is_nullable = 'NO' \
             FROM information_schema.columns \
             WHERE table_schema = 'public' AND table_name <> 'cortex_schema'",
            &[],
        )
        .await
        .expect("columns")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    // Primary keys are named after their table by PostgreSQL, by SQLite not
    // at all: the columns' `NOT NULL` and the contract tests cover them.
    let indexes = client
        .query(
            "SELECT indexname::text FROM pg_indexes \
             WHERE schemaname = 'public' AND indexname NOT LIKE '%_pkey'",
            &[],
        )
        .await
        .expect("indexes")
        .iter()
        .map(|r| r.get(0))
        .collect();
    (columns, indexes)
}

/// New and migrated databases of both backends have one shape.
#[tokio::test]
async fn every_database_ends_with_the_same_tables_columns_and_indexes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fresh = dir.path().join("fresh.db");
    drop(SqliteStore::open(&fresh).expect("fresh"));
    let old = dir.path().join("old.db");
    let steps = [
        old_schema::SQLITE_V1,
        old_schema::SQLITE_V2,
        old_schema::RULES,
    ];
    sqlite_old(&old, &steps, 3, &old_rows());
    drop(SqliteStore::open(&old).expect("migrate"));
    let shape = sqlite_shape(&fresh);
    assert_eq!(sqlite_shape(&old), shape);
    let tables: BTreeSet<&str> = shape.0.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(
        tables,
        BTreeSet::from(["blobs", "events", "rules", "sessions", "turns"])
    );

    let Some(fresh) = pg::database().await else {
        return;
    };
    drop(PgStore::connect(&fresh).await.expect("fresh"));
    assert_eq!(pg_shape(&fresh).await, shape);
    let steps = [old_schema::PG_V1, old_schema::PG_V2, old_schema::RULES];
    let old = pg_old(&steps, 3, &old_rows()).await.expect("server");
    drop(PgStore::connect(&old).await.expect("migrate"));
    assert_eq!(pg_shape(&old).await, shape);
}

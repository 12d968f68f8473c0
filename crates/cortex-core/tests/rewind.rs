//! Whole-workspace checkpoints and rewind through the session: a turn's
//! edits, `bash`'s creations, deletions and mode changes and a file in a
//! folder the turn made are undone exactly (files), the next request is
//! built without the rewound turns (conversation), or both; files the user
//! changed outside the session are kept unless forced; a turn whose
//! checkpoint cannot be taken says so and runs.

mod common;

use common::config;
use cortex_core::{RewindError, Session};
use cortex_model::scripted::ScriptedProvider;
use cortex_protocol::{EventKind, Mode, RewindScope, StopRule, TurnOutcome};
use cortex_store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Every entry with its kind, mode and content, no link followed.
fn tree(dir: &Path) -> BTreeMap<String, String> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path
                .strip_prefix(base)
                .expect("prefix")
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&path).expect("lstat");
            let mode = meta.permissions().mode() & 0o777;
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&path).expect("readlink");
                out.insert(rel, format!("link {}", target.display()));
            } else if meta.is_dir() {
                out.insert(rel, format!("dir {mode:o}"));
                walk(base, &path, out);
            } else {
                let content = std::fs::read(&path).expect("read");
                out.insert(
                    rel,
                    format!("file {mode:o} {}", String::from_utf8_lossy(&content)),
                );
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

struct Rig {
    repo: tempfile::TempDir,
    _data: tempfile::TempDir,
    store: Arc<dyn Store>,
    model: Arc<ScriptedProvider>,
    session: Session,
}

async fn rig(script: Value, quota: Option<u64>) -> Rig {
    rig_with(script, quota, None).await
}

/// [`rig`] with the quota of all sessions' checkpoints together too.
async fn rig_with(script: Value, quota: Option<u64>, total: Option<u64>) -> Rig {
    let repo = tempfile::tempdir().expect("repo");
    common::write(repo.path(), "calc.py", "def add(a, b):\n    return a - b\n");
    common::write(repo.path(), "old.txt", "old\n");
    common::write(repo.path(), "run.sh", "echo hi\n");
    std::fs::set_permissions(
        repo.path().join("run.sh"),
        std::fs::Permissions::from_mode(0o644),
    )
    .expect("chmod");
    let data = tempfile::tempdir().expect("data");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
    let mut config = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Agent,
        StopRule::Code,
    );
    config.checkpoints = Some(data.path().join("checkpoints"));
    config.checkpoint_quota = quota;
    config.checkpoint_total_quota = total;
    let session = Session::create(config).await.expect("session");
    Rig {
        repo,
        _data: data,
        store,
        model,
        session,
    }
}

impl Rig {
    async fn turn(&mut self, message: &str) {
        let outcome = self
            .session
            .run_turn(message, CancellationToken::new())
            .await
            .expect("turn");
        assert!(
            matches!(outcome, TurnOutcome::Completed { .. }),
            "{outcome:?}"
        );
    }

    async fn kinds(&self) -> Vec<EventKind> {
        self.store
            .events(self.session.id(), 0)
            .await
            .expect("events")
            .into_iter()
            .map(|e| e.kind)
            .collect()
    }

    /// Whether the last request sent holds a user message with `text`.
    fn last_request_has(&self, text: &str) -> bool {
        let requests = self.model.requests();
        let last = requests.last().expect("a request");
        last.messages.iter().any(|m| m.content.contains(text))
    }
}

/// A turn that edits a file, runs `bash` to create, delete and chmod
/// files, and writes a file in a folder it created.
fn busy_turn() -> Vec<Value> {
    vec![
        json!({"tool_calls": [
            {"name": "edit_file", "arguments": {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
            {"name": "bash", "arguments": {"command": "echo made > made.txt && rm old.txt && chmod 755 run.sh && mkdir -p sub/deep"}}
        ]}),
        json!({"tool_calls": [
            {"name": "write_file", "arguments": {"path": "sub/deep/new.txt", "content": "new\n"}}
        ]}),
        json!({"text": "Done."}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_files_rewind_restores_exactly_what_the_turn_changed_and_can_be_undone() {
    let mut responses = busy_turn();
    responses.push(json!({"text": "Next."}));
    let mut r = rig(json!({ "responses": responses }), None).await;
    let before = tree(r.repo.path());
    r.turn("fix it and tidy up").await;
    let after = tree(r.repo.path());
    assert_ne!(before, after);
    assert!(after.contains_key("sub/deep/new.txt"));
    assert_eq!(after["run.sh"], "file 755 echo hi\n");
    let history = r.session.history().len();

    let rewound = r
        .session
        .rewind(None, RewindScope::Files, false)
        .await
        .expect("rewind");
    assert_eq!(tree(r.repo.path()), before, "the tree exactly as before");
    assert_eq!(rewound.diff.created, ["old.txt"]);
    assert_eq!(rewound.diff.changed, ["calc.py", "run.sh"]);
    assert_eq!(
        rewound.diff.deleted,
        ["made.txt", "sub", "sub/deep", "sub/deep/new.txt"]
    );
    // Files only: the conversation keeps the turn.
    assert_eq!(r.session.history().len(), history);

    let kinds = r.kinds().await;
    assert!(
        kinds
            .iter()
            .any(|k| matches!(k, EventKind::CheckpointTaken { files: 3, .. }))
    );
    let undo = kinds
        .iter()
        .find_map(|k| match k {
            EventKind::SessionRewound {
                scope: RewindScope::Files,
                paths: 7,
                undo,
                ..
            } => undo.clone(),
            _ => None,
        })
        .expect("session.rewound with its undo checkpoint");
    assert_eq!(rewound.undo.as_deref(), Some(undo.as_str()));

    // The rewind is itself a checkpoint: undoing it brings the turn's
    // work back.
    r.session
        .rewind(Some(&undo), RewindScope::Files, false)
        .await
        .expect("undo");
    assert_eq!(tree(r.repo.path()), after);
    r.turn("next").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_conversation_rewind_drops_the_turn_from_the_next_request_and_keeps_the_files() {
    let script = json!({"responses": [
        {"text": "First answer."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "second.txt", "content": "2\n"}}]},
        {"text": "Second answer."},
        {"text": "Third answer."}
    ]});
    let mut r = rig(script, None).await;
    r.turn("first question").await;
    r.turn("second question").await;
    let files = tree(r.repo.path());
    let rewound = r
        .session
        .rewind(None, RewindScope::Conversation, false)
        .await
        .expect("rewind");
    assert!(rewound.diff.is_empty());
    assert_eq!(tree(r.repo.path()), files, "files untouched");
    r.turn("third question").await;
    assert!(r.last_request_has("first question"));
    assert!(!r.last_request_has("second question"));
    assert!(!r.last_request_has("Second answer"));
    assert!(r.last_request_has("third question"));
    // A rewound turn is no longer in the conversation.
    let second = r
        .kinds()
        .await
        .into_iter()
        .find_map(|k| match k {
            EventKind::SessionRewound { turn_id, .. } => Some(turn_id),
            _ => None,
        })
        .expect("rewound");
    assert!(matches!(
        r.session
            .rewind(Some(&second), RewindScope::Conversation, false)
            .await,
        Err(RewindError::NotInConversation(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewind_of_both_restores_files_and_conversation() {
    let mut responses = vec![json!({"text": "First answer."})];
    responses.extend(busy_turn());
    responses.push(json!({"text": "Third answer."}));
    let mut r = rig(json!({ "responses": responses }), None).await;
    r.turn("first question").await;
    let before = tree(r.repo.path());
    r.turn("busy question").await;
    r.session
        .rewind(None, RewindScope::Both, false)
        .await
        .expect("rewind");
    assert_eq!(tree(r.repo.path()), before);
    r.turn("third question").await;
    assert!(r.last_request_has("first question"));
    assert!(!r.last_request_has("busy question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_the_user_changed_are_not_overwritten_without_force() {
    let mut r = rig(json!({ "responses": busy_turn() }), None).await;
    let before = tree(r.repo.path());
    r.turn("fix it").await;
    // The user, outside the session, edits the file the turn fixed.
    common::write(r.repo.path(), "calc.py", "# mine\n");
    let Err(RewindError::Conflict(paths)) = r.session.rewind(None, RewindScope::Both, false).await
    else {
        panic!("a conflict");
    };
    assert_eq!(paths, ["calc.py"]);
    assert_eq!(
        std::fs::read_to_string(r.repo.path().join("calc.py")).expect("read"),
        "# mine\n"
    );
    assert!(r.repo.path().join("made.txt").exists(), "nothing changed");
    let forced = r
        .session
        .rewind(None, RewindScope::Both, true)
        .await
        .expect("forced");
    assert_eq!(forced.forced, ["calc.py"]);
    assert_eq!(tree(r.repo.path()), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_whose_checkpoint_cannot_be_taken_says_so_and_runs() {
    let script = json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "x.txt", "content": "x\n"}}]},
        {"text": "Written."}
    ]});
    // A quota smaller than the tree.
    let mut r = rig(script, Some(16)).await;
    r.turn("write x").await;
    let kinds = r.kinds().await;
    let failed = kinds
        .iter()
        .position(|k| matches!(k, EventKind::CheckpointFailed { .. }))
        .expect("checkpoint.failed");
    let first_request = kinds
        .iter()
        .position(|k| matches!(k, EventKind::ModelRequest { .. }))
        .expect("a request");
    assert!(failed < first_request, "said before the turn runs");
    assert!(r.repo.path().join("x.txt").exists());
    assert!(matches!(
        r.session.rewind(None, RewindScope::Files, false).await,
        Err(RewindError::Checkpoint(_))
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_the_model_replaced_by_a_link_to_outside_is_restored_without_writing_outside() {
    let outside = tempfile::tempdir().expect("outside");
    common::write(outside.path(), "theirs.txt", "not yours\n");
    let outside_before = tree(outside.path());
    let command = format!("rm -rf sub && ln -s {} sub", outside.path().display());
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]},
        {"text": "Linked."}
    ]});
    let mut r = rig(script, None).await;
    common::write(r.repo.path(), "sub/deep/keep.txt", "keep\n");
    let before = tree(r.repo.path());
    r.turn("link it").await;
    assert!(
        std::fs::symlink_metadata(r.repo.path().join("sub"))
            .expect("lstat")
            .file_type()
            .is_symlink()
    );
    r.session
        .rewind(None, RewindScope::Files, false)
        .await
        .expect("rewind");
    assert_eq!(
        tree(outside.path()),
        outside_before,
        "nothing written outside"
    );
    assert_eq!(tree(r.repo.path()), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn old_checkpoints_are_pruned_past_the_quota_and_the_pruning_is_recorded() {
    let big = |c: &str| c.repeat(8 * 1024);
    let script = json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("a")}}]},
        {"text": "One."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("b")}}]},
        {"text": "Two."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("c")}}]},
        {"text": "Three."},
        {"text": "Four."}
    ]});
    // Room for about two versions of the big file.
    let mut r = rig(script, Some(20 * 1024)).await;
    for message in ["one", "two", "three", "four"] {
        r.turn(message).await;
    }
    let kinds = r.kinds().await;
    let pruned: Vec<String> = kinds
        .iter()
        .filter_map(|k| match k {
            EventKind::CheckpointPruned {
                checkpoints,
                used,
                quota,
                scope,
                ..
            } => {
                assert!(used <= quota);
                // The session's own quota, not the total's.
                assert_eq!(*scope, cortex_protocol::PruneScope::Session);
                Some(checkpoints.clone())
            }
            _ => None,
        })
        .flatten()
        .collect();
    assert!(!pruned.is_empty(), "{kinds:?}");
    let used = r.session.checkpoint_usage().await.expect("usage");
    assert!(used <= 20 * 1024, "{used}");
    // The oldest turn can no longer be rewound to; the last one can.
    assert!(matches!(
        r.session
            .rewind(Some(&pruned[0]), RewindScope::Files, false)
            .await,
        Err(RewindError::Checkpoint(_))
    ));
    r.session
        .rewind(None, RewindScope::Files, false)
        .await
        .expect("rewind the last");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_total_quota_the_pruning_is_recorded_with_its_scope() {
    let big = |c: &str| c.repeat(8 * 1024);
    let script = json!({"responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("a")}}]},
        {"text": "One."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("b")}}]},
        {"text": "Two."},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt", "content": big("c")}}]},
        {"text": "Three."},
        {"text": "Four."}
    ]});
    // The session's own quota has room for all; the total, for about two
    // versions of the big file.
    let mut r = rig_with(script, None, Some(20 * 1024)).await;
    for message in ["one", "two", "three", "four"] {
        r.turn(message).await;
    }
    let kinds = r.kinds().await;
    let mut pruned = Vec::new();
    for kind in &kinds {
        if let EventKind::CheckpointPruned {
            checkpoints,
            used,
            quota,
            scope,
            ..
        } = kind
        {
            assert_eq!(*scope, cortex_protocol::PruneScope::Total, "{kinds:?}");
            assert_eq!(*quota, 20 * 1024);
            assert!(used <= quota, "{used} > {quota}");
            pruned.extend(checkpoints.iter().cloned());
        }
    }
    assert!(!pruned.is_empty(), "{kinds:?}");
    assert!(matches!(
        r.session
            .rewind(Some(&pruned[0]), RewindScope::Files, false)
            .await,
        Err(RewindError::Checkpoint(_))
    ));
    r.session
        .rewind(None, RewindScope::Files, false)
        .await
        .expect("rewind the last");
}

/// The in-process guest under the name of a remote one: its workspace is
/// not on this host as far as the session knows.
struct RemoteLike;

#[async_trait::async_trait]
impl cortex_runtime::GuestProvider for RemoteLike {
    fn name(&self) -> &'static str {
        "remote"
    }

    async fn start(
        &self,
        spec: &cortex_runtime::GuestSpec,
    ) -> Result<cortex_runtime::Guest, cortex_runtime::RuntimeError> {
        cortex_runtime::InProcessProvider.start(spec).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_guest_keeps_no_checkpoints_and_says_so_once() {
    let script = json!({"responses": [{"text": "One."}, {"text": "Two."}]});
    let repo = tempfile::tempdir().expect("repo");
    let data = tempfile::tempdir().expect("data");
    let store: Arc<dyn Store> = Arc::new(SqliteStore::in_memory().expect("store"));
    let model = Arc::new(ScriptedProvider::from_json(&script.to_string()).expect("script"));
    let mut config = config(
        repo.path(),
        store.clone(),
        model,
        Mode::Agent,
        StopRule::Code,
    );
    config.checkpoints = Some(data.path().join("checkpoints"));
    config.guests = Arc::new(RemoteLike);
    let mut session = Session::create(config).await.expect("session");
    for message in ["one", "two"] {
        session
            .run_turn(message, CancellationToken::new())
            .await
            .expect("turn");
    }
    let events = store.events(session.id(), 0).await.expect("events");
    let failed: Vec<&String> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::CheckpointFailed { reason } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 1, "said once");
    assert!(failed[0].contains("remote"), "{}", failed[0]);
    assert!(matches!(
        session.rewind(None, RewindScope::Files, false).await,
        Err(RewindError::Unavailable(_))
    ));
    // The conversation can still be rewound.
    session
        .rewind(None, RewindScope::Conversation, false)
        .await
        .expect("conversation");
}

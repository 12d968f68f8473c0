//! Skills (issue 40, item 2): the model is shown each skill's name and
//! description only, in the system prompt; the `skill` tool (offered in
//! every mode, read-only) loads one's instructions and lists its files; a
//! rejected skill is never offered and loading it says why; the user's own
//! skill shadows the repository's of the same name.

mod common;

use common::{Harness, config, harness, write};
use cortex_core::{HarnessDirs, Session};
use cortex_protocol::{Mode, StopRule, ToolName, ToolStatus};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const SKILL: &str = "---\nname: release-notes\ndescription: Write release notes from the \
    changelog\n---\n# Release notes\nRun `scripts/collect.sh`, then summarise.\n";

async fn turn(h: &mut Harness, message: &str) {
    h.session
        .run_turn(message, CancellationToken::new())
        .await
        .expect("turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_model_loads_a_skill_in_every_mode_and_a_rejected_one_says_why() {
    for mode in Mode::ALL {
        let files = [
            (".cortex/skills/release-notes/SKILL.md", SKILL),
            (
                ".cortex/skills/release-notes/scripts/collect.sh",
                "git log\n",
            ),
            // Oversized: over the 64 KiB cap.
            (
                ".claude/skills/huge/SKILL.md",
                &format!(
                    "---\nname: huge\ndescription: Too big\n---\n{}",
                    "x".repeat(70_000)
                ),
            ),
            ("a.txt", "alpha\n"),
        ];
        let script = json!({"responses": [
            {"tool_calls": [{"name": "skill", "arguments": {"name": "release-notes"}}]},
            {"tool_calls": [{"name": "skill", "arguments": {"name": "huge"}}]},
            {"text": "done"}
        ]});
        let mut h = harness(&files, mode, script).await;
        turn(&mut h, "write the release notes").await;
        let requests = h.model.requests();
        let first = &requests[0];
        // Offered in every mode.
        assert!(
            first
                .tools
                .iter()
                .any(|t| t.name == ToolName::Skill.as_str()),
            "{mode}"
        );
        // Only the name and description reach the model before it loads.
        assert!(
            first
                .system
                .contains("\n- release-notes: Write release notes from the changelog"),
            "{mode}: {}",
            first.system
        );
        assert!(!first.system.contains("collect.sh"), "{mode}");
        assert!(
            !first.system.contains("huge"),
            "{mode}: a rejected skill is offered"
        );
        let results = h.results().await;
        assert_eq!(results.len(), 2, "{mode}: {results:#?}");
        let (name, status, output) = &results[0];
        assert_eq!(
            (name.as_str(), *status),
            ("skill", ToolStatus::Ok),
            "{mode}"
        );
        assert!(
            output.contains("# Release notes\nRun `scripts/collect.sh`, then summarise."),
            "{mode}: {output}"
        );
        assert!(
            output.contains("- .cortex/skills/release-notes/scripts/collect.sh\n"),
            "{mode}: {output}"
        );
        let (_, status, output) = &results[1];
        assert_eq!(*status, ToolStatus::Error, "{mode}");
        assert!(
            output.starts_with("the skill `huge` (.claude/skills/huge) cannot be used: SKILL.md: ")
                && output.ends_with("bytes; the limit is 64 KiB"),
            "{mode}: {output}"
        );
        // The event names where the catalogue came from.
        let files = h.events().await.into_iter().find_map(|e| match e.kind {
            cortex_protocol::EventKind::InstructionsLoaded { files, .. } => Some(files),
            _ => None,
        });
        assert_eq!(
            files,
            Some(vec![".cortex/skills/release-notes/SKILL.md".to_owned()]),
            "{mode}"
        );
        // Nothing was written and the mode stayed.
        assert_eq!(h.session.mode(), mode);
        assert_eq!(
            std::fs::read_to_string(h.repo.path().join("a.txt")).expect("read"),
            "alpha\n"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_users_skill_wins_and_a_resume_sends_the_same_catalogue() {
    let config_dir = tempfile::tempdir().expect("tempdir");
    write(
        config_dir.path(),
        "skills/release-notes/SKILL.md",
        "---\nname: release-notes\ndescription: My own way\n---\nMine.\n",
    );
    let (repo, store, model) = common::parts(
        &[(".agents/skills/release-notes/SKILL.md", SKILL)],
        &json!({"responses": [
            {"tool_calls": [{"name": "skill", "arguments": {"name": "release-notes"}}]},
            {"text": "ok"}
        ]}),
    );
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    cfg.harness_dirs = HarnessDirs::new().with("config", config_dir.path());
    let mut session = Session::create(cfg).await.expect("session");
    session
        .run_turn("notes", CancellationToken::new())
        .await
        .expect("turn");
    let system = model.requests()[0].system.clone();
    assert!(system.contains("\n- release-notes: My own way"), "{system}");
    assert!(!system.contains("from the changelog"), "{system}");
    let outputs = common::tool_results(&store, &session).await;
    assert_eq!(outputs[0].0, ToolStatus::Ok);
    assert!(outputs[0].1.contains("Mine."), "{}", outputs[0].1);
    assert!(outputs[0].1.contains("no other file"), "{}", outputs[0].1);
    // The catalogue rides in `instructions.loaded`, which a resumed
    // session folds back: it sends the same without reading anything.
    let events = store.events(session.id(), 0).await.expect("events");
    let recorded = events.iter().find_map(|e| match &e.kind {
        cortex_protocol::EventKind::InstructionsLoaded { text, .. } => Some(text.clone()),
        _ => None,
    });
    assert!(
        recorded.is_some_and(|t| system.ends_with(&t) && t.contains("My own way")),
        "{system}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_users_skill_file_outside_the_workspace_is_read_through_the_tool() {
    let config_dir = tempfile::tempdir().expect("tempdir");
    write(
        config_dir.path(),
        "skills/house-style/SKILL.md",
        "---\nname: house-style\ndescription: Our style\n---\nRead reference/rules.md.\n",
    );
    write(
        config_dir.path(),
        "skills/house-style/reference/rules.md",
        "Tabs, never spaces.\n",
    );
    let (repo, store, model) = common::parts(
        &[("a.txt", "alpha\n")],
        &json!({"responses": [
            {"tool_calls": [{"name": "skill", "arguments": {"name": "house-style"}}]},
            {"tool_calls": [{"name": "skill", "arguments":
                {"name": "house-style", "file": "reference/rules.md"}}]},
            {"tool_calls": [{"name": "skill", "arguments":
                {"name": "house-style", "file": "../../config.toml"}}]},
            {"text": "ok"}
        ]}),
    );
    let mut cfg = config(
        repo.path(),
        store.clone(),
        model.clone(),
        Mode::Ask,
        StopRule::Code,
    );
    cfg.harness_dirs = HarnessDirs::new().with("config", config_dir.path());
    let mut session = Session::create(cfg).await.expect("session");
    session
        .run_turn("style", CancellationToken::new())
        .await
        .expect("turn");
    let outputs = common::tool_results(&store, &session).await;
    assert_eq!(outputs.len(), 3, "{outputs:#?}");
    assert_eq!(outputs[0].0, ToolStatus::Ok);
    assert!(
        outputs[0].1.contains("read one with this tool's `file`")
            && outputs[0].1.contains("\n- reference/rules.md\n"),
        "{}",
        outputs[0].1
    );
    assert_eq!(outputs[1].0, ToolStatus::Ok);
    assert_eq!(
        outputs[1].1,
        "`reference/rules.md` of the skill `house-style`:\nTabs, never spaces.\n"
    );
    assert_eq!(outputs[2].0, ToolStatus::Error, "{}", outputs[2].1);
    assert!(outputs[2].1.contains("without `..`"), "{}", outputs[2].1);
}

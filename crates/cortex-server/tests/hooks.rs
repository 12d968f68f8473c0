//! A repository's hooks over the API (issue 40, item 4): `GET …/hooks`
//! lists the hook files with whether each is trusted; `POST …/hooks/trust`
//! trusts one at the content the caller was shown, refuses one that changed
//! since (409 `hooks_changed`), a file that is not there (422), and any
//! trust on a server that keeps none (409 `trust_unavailable`); another
//! principal's session is a 404 as always.

mod common;

use common::{ALICE, BOB, start_with};
use cortex_server::ServerConfig;
use reqwest::Method;
use serde_json::json;

const HOOKS: &str = r#"{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
  {"type": "command", "command": "./guard.sh", "timeout": 5}
]}], "Notification": []}}"#;

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_files_are_listed_and_trusted_at_the_content_shown() {
    let data = tempfile::tempdir().expect("tempdir");
    let trust = data.path().join("trusted-hooks.json");
    let server = start_with(ServerConfig {
        hook_trust: Some(trust.clone()),
        ..ServerConfig::default()
    })
    .await;
    let repo = server.repo.path();
    write(&repo.join(".cortex/hooks.json"), HOOKS);
    let id = server
        .session_in("agent", json!({"responses": [{"text": "ok"}]}))
        .await;
    let path = format!("/v1/sessions/{id}/hooks");

    let (status, list) = server.send(Method::GET, &path, Some(ALICE), None).await;
    assert_eq!(status, 200, "{list}");
    let file = &list["files"][0];
    assert_eq!(file["file"], ".cortex/hooks.json");
    assert_eq!(file["trusted"], false);
    assert_eq!(file["hooks"][0]["event"], "PreToolUse");
    assert_eq!(file["hooks"][0]["matcher"], "Bash");
    assert_eq!(file["hooks"][0]["timeout_ms"], 5000);
    let sha = file["sha256"].as_str().expect("sha").to_owned();
    assert_eq!(sha.len(), 64);

    // Another principal sees nothing of it.
    let (status, _) = server.send(Method::GET, &path, Some(BOB), None).await;
    assert_eq!(status, 404);

    let trust_path = format!("/v1/sessions/{id}/hooks/trust");
    let body = |file: &str, sha: &str| Some(json!({"file": file, "sha256": sha}));
    let (status, answer) = server
        .send(
            Method::POST,
            &trust_path,
            Some(ALICE),
            body("nope.json", &sha),
        )
        .await;
    assert_eq!(status, 422, "{answer}");
    assert_eq!(answer["error"]["code"], "unknown_hook_file");
    let (status, answer) = server
        .send(
            Method::POST,
            &trust_path,
            Some(ALICE),
            body(".cortex/hooks.json", &"0".repeat(64)),
        )
        .await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "hooks_changed");
    assert!(!trust.exists(), "nothing trusted unseen");

    let (status, answer) = server
        .send(
            Method::POST,
            &trust_path,
            Some(ALICE),
            body(".cortex/hooks.json", &sha),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["files"][0]["trusted"], true);
    let trusted = cortex_core::hooks::trust::TrustedHooks::load(&trust).expect("trust file");
    assert_eq!(trusted.trusted.len(), 1);

    // Changed: untrusted again.
    write(
        &repo.join(".cortex/hooks.json"),
        &HOOKS.replace("guard", "other"),
    );
    let (_, list) = server.send(Method::GET, &path, Some(ALICE), None).await;
    assert_eq!(list["files"][0]["trusted"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_a_trust_file_trusts_nothing() {
    let server = start_with(ServerConfig::default()).await;
    write(&server.repo.path().join(".cortex/hooks.json"), HOOKS);
    let id = server
        .session_in("agent", json!({"responses": [{"text": "ok"}]}))
        .await;
    let (_, list) = server
        .send(
            Method::GET,
            &format!("/v1/sessions/{id}/hooks"),
            Some(ALICE),
            None,
        )
        .await;
    let sha = list["files"][0]["sha256"].as_str().expect("sha").to_owned();
    let (status, answer) = server
        .send(
            Method::POST,
            &format!("/v1/sessions/{id}/hooks/trust"),
            Some(ALICE),
            Some(json!({"file": ".cortex/hooks.json", "sha256": sha})),
        )
        .await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "trust_unavailable");
}

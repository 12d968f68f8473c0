//! `cortex serve` as a user runs it: the real binary and guest processes, a
//! scripted model, private config and data folders.

use serde_json::{Value, json};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

mod serve_support;

use serve_support::{Env, Server, TOKEN};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_turn_restarts_with_the_turn_failed_and_takes_new_turns() {
    let env = Env::new();
    let hanging = env.script(
        "hang.json",
        json!({"responses": [{"text": "working on it", "hang": true}]}),
    );
    let server = env.serve("127.0.0.1:0", &hanging, Some(TOKEN));
    let (status, session) = server
        .send(
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"repository": env.repo.path()})),
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let id = session["id"].as_str().expect("id").to_owned();
    let (status, turn) = server
        .send(
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(json!({"message": "do it"})),
        )
        .await;
    assert_eq!(status, 202, "{turn}");
    let before = server
        .events_until(&id, |e| e["type"] == "message.delta")
        .await;
    let mut server = server;
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("reaped");
    drop(server);

    let after_restart = env.script("done.json", json!({"responses": [{"text": "done now"}]}));
    let mut server = env.serve("127.0.0.1:0", &after_restart, Some(TOKEN));
    let notes = server.lines_so_far().join("\n");
    assert!(
        notes.contains("marked 1 interrupted turn(s) failed"),
        "{notes}"
    );

    let (status, page) = server
        .send(reqwest::Method::GET, "/v1/sessions", None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(page["sessions"][0]["id"], id.as_str(), "{page}");
    assert!(page["sessions"][0]["running_turn"].is_null());

    let events = server
        .events_until(&id, |e| e["type"] == "turn.failed")
        .await;
    // The timeline is intact up to the kill, then the failure.
    assert_eq!(&events[..before.len()], &before[..]);
    let failed = events.last().expect("turn.failed");
    assert_eq!(failed["turn_id"], turn["turn_id"]);
    assert!(
        failed["payload"]["error"]
            .as_str()
            .expect("error")
            .contains("interrupted"),
        "{failed}"
    );

    let (status, second) = server
        .send(
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(json!({"message": "again"})),
        )
        .await;
    assert_eq!(status, 202, "{second}");
    let events = server
        .events_until(&id, |e| e["type"] == "turn.completed")
        .await;
    let last = events.last().expect("completed");
    assert_eq!(last["turn_id"], second["turn_id"]);
    assert!(events.iter().any(|e| e["payload"]["text"] == "done now"));
}

#[test]
fn a_token_file_is_created_private_and_a_public_address_needs_a_token() {
    let env = Env::new();
    let script = env.script("s.json", json!({"responses": []}));
    // No token anywhere and a non-loopback address: refused.
    let output = env
        .command(None)
        .args(["serve", "--listen", "0.0.0.0:0"])
        .output()
        .expect("run");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without a token"), "{stderr}");
    let token_file = env.home.path().join("config/cortex/token");
    assert!(!token_file.exists(), "nothing made up for a public address");

    // Loopback: a token file is created with 0600 and printed.
    let mut server = env.serve("127.0.0.1:0", &script, None);
    drop(server.lines_so_far());
    let mode = std::fs::metadata(&token_file)
        .expect("token file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let token = std::fs::read_to_string(&token_file).expect("token");
    assert_eq!(token.trim().len(), 64);
    let _ = server.child.kill();
}

#[test]
fn serves_on_a_private_unix_socket() {
    let env = Env::new();
    let script = env.script("s.json", json!({"responses": []}));
    let socket = env.home.path().join("run/cortex.sock");
    let listen = format!("unix:{}", socket.display());
    let server = env.serve(&listen, &script, Some(TOKEN));
    let mode = std::fs::metadata(&socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let mut stream = std::os::unix::net::UnixStream::connect(&socket).expect("connect");
    write!(
        stream,
        "GET /v1/sessions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .expect("request");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("answer");
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(answer.contains("\"sessions\":[]"), "{answer}");
    drop(server);
}

/// An event without what differs between runs: ids, timestamps, timings.
fn normalized(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                // Ids and times differ between any two runs (a checkpoint
                // is named by its turn's id).
                for key in ["ts", "session_id", "turn_id", "ms", "checkpoint"] {
                    map.remove(key);
                }
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

fn exec_json(env: &Env, script: &Path, server: Option<&str>) -> Vec<Value> {
    let mut cmd = env.command(server.map(|_| TOKEN));
    cmd.arg("exec")
        .arg("--repo")
        .arg(env.repo.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .arg("--json")
        .stdout(Stdio::piped());
    if let Some(url) = server {
        cmd.args(["--server", url]);
    }
    let out = cmd.arg("read a.txt").output().expect("run exec");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| normalized(serde_json::from_str(l).expect("JSON line")))
        .collect()
}

#[test]
fn exec_prints_the_same_through_a_remote_server_as_in_process() {
    let env = Env::new();
    let script = env.script(
        "turn.json",
        json!({"responses": [
            {"text": "Reading.", "tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
            {"text": "It says alpha."},
        ]}),
    );
    let in_process = exec_json(&env, &script, None);
    let server = env.serve("127.0.0.1:0", &script, Some(TOKEN));
    let remote = exec_json(&env, &script, Some(&server.base));
    assert!(in_process.len() > 5, "{in_process:#?}");
    assert_eq!(in_process, remote);
    assert_eq!(
        in_process.last().map(|e| e["type"].clone()),
        Some(json!("turn.completed"))
    );
}

/// `cortex tokens add NAME`: the token it prints once.
fn add_token(env: &Env, name: &str) -> String {
    let out = env
        .command(None)
        .args(["tokens", "add", name])
        .stdout(Stdio::piped())
        .output()
        .expect("tokens add");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn named_principals_see_only_their_own_sessions_and_a_revoked_token_stops_at_once() {
    let env = Env::new();
    let alice = add_token(&env, "alice");
    let bob = add_token(&env, "bob");
    assert_eq!(alice.len(), 64);
    assert_ne!(alice, bob);
    let file =
        std::fs::read_to_string(env.home.path().join("config/cortex/tokens")).expect("tokens file");
    assert!(
        !file.contains(&alice) && !file.contains(&bob),
        "tokens stored in clear: {file}"
    );
    let mode = std::fs::metadata(env.home.path().join("config/cortex/tokens"))
        .expect("tokens file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let list = env
        .command(None)
        .args(["tokens", "list"])
        .stdout(Stdio::piped())
        .output()
        .expect("list");
    let listed = String::from_utf8_lossy(&list.stdout);
    assert!(
        listed.contains("alice") && listed.contains("bob"),
        "{listed}"
    );

    let script = env.script("s.json", json!({"responses": [{"text": "hi"}]}));
    let server = env.serve("127.0.0.1:0", &script, Some(TOKEN));
    let (status, created) = server
        .send_as(
            &alice,
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"repository": env.repo.path()})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    // Bob, and the `local` principal of CORTEX_TOKEN, get the 404 of a
    // session that does not exist: for reading, events, turns and closing.
    for token in [bob.as_str(), TOKEN] {
        for (method, path) in [
            (reqwest::Method::GET, format!("/v1/sessions/{id}")),
            (reqwest::Method::GET, format!("/v1/sessions/{id}/events")),
            (reqwest::Method::POST, format!("/v1/sessions/{id}/turns")),
            (reqwest::Method::DELETE, format!("/v1/sessions/{id}")),
        ] {
            let body = (method == reqwest::Method::POST).then(|| json!({"message": "x"}));
            let (status, answer) = server.send_as(token, method.clone(), &path, body).await;
            assert_eq!(status, 404, "{method} {path}: {answer}");
        }
        let (status, page) = server
            .send_as(token, reqwest::Method::GET, "/v1/sessions", None)
            .await;
        assert_eq!(status, 200);
        assert_eq!(page["sessions"], json!([]), "{page}");
    }
    let (status, page) = server
        .send_as(&alice, reqwest::Method::GET, "/v1/sessions", None)
        .await;
    assert_eq!(
        (status, page["sessions"][0]["id"].clone()),
        (200, json!(id))
    );

    // Revoking takes effect on the running server.
    let revoke = env
        .command(None)
        .args(["tokens", "revoke", "alice"])
        .output()
        .expect("revoke");
    assert!(revoke.status.success());
    let (status, _) = server
        .send_as(&alice, reqwest::Method::GET, "/v1/sessions", None)
        .await;
    assert_eq!(status, 401);
    let (status, _) = server
        .send_as(&bob, reqwest::Method::GET, "/v1/sessions", None)
        .await;
    assert_eq!(status, 200);
    let again = env
        .command(None)
        .args(["tokens", "revoke", "alice"])
        .output()
        .expect("revoke");
    assert!(!again.status.success(), "revoking twice must say so");
}

/// One turn of a new in-place session of `token`'s principal on the
/// repository: the output of its one `bash` call, or `None` when this
/// machine cannot start the sandbox (the skip recorded).
async fn home_turn(server: &Server, env: &Env, token: &str) -> Option<String> {
    let (status, created) = server
        .send_as(
            token,
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"repository": env.repo.path(), "sandbox": {"workspace": "in-place"}})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let id = created["id"].as_str().expect("id").to_owned();
    let (status, turn) = server
        .send_as(
            token,
            reqwest::Method::POST,
            &format!("/v1/sessions/{id}/turns"),
            Some(json!({"message": "go"})),
        )
        .await;
    assert_eq!(status, 202, "{turn}");
    let events = server
        .events_until_as(token, &id, |e| {
            e["type"] == "turn.completed" || e["type"] == "turn.failed"
        })
        .await;
    let text = serde_json::to_string(&events).expect("json");
    if text.contains("cannot create the guest's namespaces") {
        cortex_testkit::skip_current("userns", "the sandbox cannot start here");
        return None;
    }
    let result = events
        .iter()
        .find(|e| e["type"] == "tool.result")
        .unwrap_or_else(|| panic!("no tool result: {text}"));
    assert_eq!(result["payload"]["status"], "ok", "{result}");
    Some(
        result["payload"]["output"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    )
}

/// Issue 38, principle 3: guest homes are a principal's own. Alice and Bob
/// work on the same repository in place; what Alice's guest leaves in its
/// `$HOME` is not in Bob's, and is still in Alice's next one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn principals_on_the_same_repository_do_not_share_a_home() {
    let env = Env::new();
    let alice = add_token(&env, "alice");
    let bob = add_token(&env, "bob");
    let script = env.script(
        "home.json",
        json!({"responses": [
            {"tool_calls": [{"id": "c1", "name": "bash", "arguments": {
                "command": "ls -A \"$HOME\"; echo listed; cd \"$HOME\" && touch left-by-a-session"
            }}]},
            {"text": "done"}
        ]}),
    );
    let server = env.serve("127.0.0.1:0", &script, Some(TOKEN));
    let Some(first) = home_turn(&server, &env, &alice).await else {
        return;
    };
    assert!(
        first.contains("listed") && !first.contains("left-by-"),
        "{first}"
    );
    let bobs = home_turn(&server, &env, &bob)
        .await
        .expect("started before");
    assert!(
        bobs.contains("listed") && !bobs.contains("left-by-"),
        "Bob's guest saw Alice's home: {bobs}"
    );
    // Alice's home is kept for her (so the check above could see a share).
    let again = home_turn(&server, &env, &alice)
        .await
        .expect("started before");
    assert!(again.contains("left-by-"), "{again}");
    let homes = env.home.path().join("data/cortex/homes/principals");
    let folders: Vec<String> = std::fs::read_dir(&homes)
        .expect("principals' homes")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(folders.len(), 2, "{folders:?}");
    for folder in &homes_of(&homes) {
        let mode = std::fs::metadata(folder)
            .expect("home")
            .permissions()
            .mode();
        assert_eq!(mode & 0o077, 0, "{}", folder.display());
    }
}

/// The principals' folders below `root` and the homes in each.
fn homes_of(root: &Path) -> Vec<PathBuf> {
    let folders = |dir: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(dir)
            .expect("read_dir")
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.path())
            .collect()
    };
    let principals = folders(root);
    let homes: Vec<PathBuf> = principals.iter().flat_map(|p| folders(p)).collect();
    principals.into_iter().chain(homes).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_access_needs_the_servers_consent_and_cortex_folders_are_never_a_repository() {
    let env = Env::new();
    let script = env.script("s.json", json!({"responses": [{"text": "hi"}]}));
    let full = json!({"repository": env.repo.path(), "sandbox": {"policy": "full-access"}});
    let server = env.serve("127.0.0.1:0", &script, Some(TOKEN));
    let (status, answer) = server
        .send(reqwest::Method::POST, "/v1/sessions", Some(full.clone()))
        .await;
    assert_eq!(status, 403, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("--allow-full-access")),
        "{answer}"
    );
    // The home folder holds the config and data folders; the data folder
    // holds the store.
    for repository in [
        env.home.path().to_path_buf(),
        env.home.path().join("data/cortex"),
        env.home.path().join("config"),
    ] {
        std::fs::create_dir_all(&repository).expect("mkdir");
        let (status, answer) = server
            .send(
                reqwest::Method::POST,
                "/v1/sessions",
                Some(json!({"repository": repository})),
            )
            .await;
        assert_eq!(status, 422, "{}: {answer}", repository.display());
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("Cortex's") && m.contains("folder")),
            "{answer}"
        );
    }
    drop(server);
    let server = env.serve_with(
        "127.0.0.1:0",
        &script,
        Some(TOKEN),
        &["--allow-full-access"],
    );
    let (status, answer) = server
        .send(reqwest::Method::POST, "/v1/sessions", Some(full))
        .await;
    assert_eq!(status, 201, "{answer}");

    // exec says the same about a home folder, before anything runs.
    let out = env
        .command(None)
        .args(["exec", "--repo"])
        .arg(env.home.path())
        .arg("--model")
        .arg(format!("scripted:{}", script.display()))
        .arg("hi")
        .output()
        .expect("exec");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("contains Cortex's") && stderr.contains("folder"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_goal_survives_kill_9_of_the_server_paused_as_interrupted_and_resumes() {
    let env = Env::new();
    let steps = |done: [bool; 2]| json!([{"title": "write b.txt", "done": done[0]}, {"title": "write c.txt", "done": done[1]}]);
    let first = env.script(
        "goal-1.json",
        json!({"responses": [
            {"tool_calls": [{"name": "goal", "arguments": {"steps": steps([false, false])}}]},
            {"text": "Planned."},
            {"text": "working very hard", "hang": true}
        ]}),
    );
    let server = env.serve("127.0.0.1:0", &first, Some(TOKEN));
    let (status, session) = server
        .send(
            reqwest::Method::POST,
            "/v1/sessions",
            Some(json!({"repository": env.repo.path()})),
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let id = session["id"].as_str().expect("id").to_owned();
    let goal = format!("/v1/sessions/{id}/goal");
    let (status, answer) = server
        .send(
            reqwest::Method::PUT,
            &goal,
            Some(json!({"objective": "write b.txt and c.txt"})),
        )
        .await;
    assert_eq!(status, 200, "{answer}");
    // Killed in the middle of the goal's first continuation turn.
    server
        .events_until(&id, |e| {
            e["type"] == "message.delta"
                && e["payload"]["text"]
                    .as_str()
                    .is_some_and(|t| t.contains("hard"))
        })
        .await;
    let mut server = server;
    server.child.kill().expect("SIGKILL");
    server.child.wait().expect("reaped");
    drop(server);

    let second = env.script(
        "goal-2.json",
        json!({"responses": [
            // Call ids of its own: the session refuses one it has already run.
            {"tool_calls": [
                {"id": "r0", "name": "write_file", "arguments": {"path": "b.txt", "content": "b\n"}},
                {"id": "r1", "name": "write_file", "arguments": {"path": "c.txt", "content": "c\n"}},
                {"id": "r2", "name": "goal", "arguments": {"steps": steps([true, true]), "complete": true,
                    "evidence": "both files written"}}
            ]},
            {"text": "Done."}
        ]}),
    );
    let server = env.serve("127.0.0.1:0", &second, Some(TOKEN));
    let (status, shown) = server.send(reqwest::Method::GET, &goal, None).await;
    assert_eq!(status, 200, "{shown}");
    assert_eq!(shown["status"], "paused", "{shown}");
    assert_eq!(shown["paused"], "interrupted");
    assert_eq!(shown["chip"], "Goal · 0/2");
    let (_, view) = server
        .send(reqwest::Method::GET, &format!("/v1/sessions/{id}"), None)
        .await;
    assert_eq!(
        view["goal"],
        json!({"objective": "write b.txt and c.txt", "done": 0, "total": 2, "status": "paused"})
    );

    let (status, resumed) = server
        .send(reqwest::Method::POST, &format!("{goal}/resume"), None)
        .await;
    assert_eq!(status, 202, "{resumed}");
    let completed = std::sync::atomic::AtomicBool::new(false);
    let events = server
        .events_until(&id, |e| {
            if e["type"] == "goal.completed" {
                completed.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            completed.load(std::sync::atomic::Ordering::Relaxed) && e["type"] == "turn.completed"
        })
        .await;
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let failed = kinds
        .iter()
        .position(|k| *k == "turn.failed")
        .expect("turn.failed");
    let paused = kinds
        .iter()
        .position(|k| *k == "goal.paused")
        .expect("goal.paused");
    let resumed = kinds
        .iter()
        .position(|k| *k == "goal.resumed")
        .expect("goal.resumed");
    assert!(failed < paused && paused < resumed, "{kinds:?}");
    let continuation = &events[resumed + 1];
    assert_eq!(continuation["type"], "turn.started");
    let prompt = continuation["payload"]["message"].as_str().expect("prompt");
    assert!(prompt.contains("[ ] write b.txt"), "{prompt}");
    let results: Vec<&Value> = events[resumed..]
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .collect();
    assert_eq!(results.len(), 3);
    assert!(
        results.iter().all(|e| e["payload"]["status"] == "ok"),
        "{results:#?}"
    );
    let (_, shown) = server.send(reqwest::Method::GET, &goal, None).await;
    assert_eq!(shown["status"], "complete", "{shown}");
    assert_eq!(shown["evidence"], "both files written");
}

//! `cortex exec` against HTTP providers on 127.0.0.1: the `--model`
//! prefixes reach the right wire format, and the summary line shows tokens
//! and the estimated cost.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;

/// A stream fixture of cortex-model's provider tests.
fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cortex-model/tests/fixtures")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Answers one request with `body` as an event stream; sends back the
/// request line, headers and body it read.
fn serve_once(body: String) -> (String, mpsc::Receiver<(String, String)>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((socket, _)) = listener.accept() else {
            return;
        };
        let (head, request) = common::read_request(&socket);
        let mut socket = socket;
        let _ = write!(
            socket,
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{body}"
        );
        let _ = socket.flush();
        let _ = tx.send((head, String::from_utf8_lossy(&request).into_owned()));
    });
    (format!("http://{addr}"), rx)
}

fn exec(model: &str, envs: &[(&str, String)]) -> Output {
    exec_with_config(model, envs, "")
}

fn exec_with_config(model: &str, envs: &[(&str, String)], config: &str) -> Output {
    exec_with(model, envs, config, &[])
}

fn exec_with(model: &str, envs: &[(&str, String)], config: &str, extra: &[&str]) -> Output {
    let home = tempfile::tempdir().expect("home");
    let repo = tempfile::tempdir().expect("repo");
    let config_dir = home.path().join("config/cortex");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    std::fs::write(config_dir.join("config.toml"), config).expect("config");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cortex"));
    cmd.env("XDG_DATA_HOME", home.path().join("data"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("HOME", home.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .stdin(Stdio::null())
        .args(["exec", "--repo"])
        .arg(repo.path())
        .args(["--model", model])
        .args(extra)
        .arg("say hello");
    for (name, value) in envs {
        cmd.env(name, value);
    }
    cmd.output().expect("run cortex")
}

#[test]
fn anthropic_exec_prints_cached_tokens_and_cost() {
    let (url, request) = serve_once(fixture("anthropic/text.sse"));
    let out = exec(
        "anthropic:claude-sonnet-4-20250514",
        &[
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", "sk-ant-test".into()),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Hello wörld 🌍"));
    // 25 + 1200 written + 3400 read; Sonnet 4 list prices:
    // 25*3 + 1200*3.75 + 3400*0.3 + 15*15 per million = $0.00582.
    assert!(
        stderr.contains("4625 tokens in (3400 cached), 15 out · ~$0.0058"),
        "{stderr}"
    );
    let (head, body) = request.recv().expect("the server saw the request");
    assert!(head.starts_with("POST /v1/messages "), "{head}");
    assert!(head.contains("x-api-key: sk-ant-test"), "{head}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["model"], "claude-sonnet-4-20250514");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
}

#[test]
fn model_overrides_from_the_config_shape_the_request_and_the_price() {
    let (url, request) = serve_once(fixture("anthropic/text.sse"));
    let config = r#"
        [anthropic]
        max_tokens = 1000
        prompt_caching = false

        [models."claude-sonnet-4-20250514"]
        parallel_tool_calls = false
        prices = { input = 1000000.0, output = 0.0, cache_read = 0.0, cache_write = 0.0 }
    "#;
    let out = exec_with_config(
        "anthropic:claude-sonnet-4-20250514",
        &[
            ("ANTHROPIC_BASE_URL", url),
            ("ANTHROPIC_API_KEY", "sk-ant-test".into()),
        ],
        config,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // Only the 25 uncached input tokens, at $1 each.
    assert!(stderr.contains("· ~$25.0000"), "{stderr}");
    let (_, body) = request.recv().expect("the server saw the request");
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["tool_choice"]["disable_parallel_tool_use"], true);
    assert!(!body.to_string().contains("cache_control"));
}

#[test]
fn openai_responses_prefix_speaks_the_responses_api() {
    let (url, request) = serve_once(fixture("responses/text.sse"));
    let out = exec(
        "openai-responses:o4-mini",
        &[("OPENAI_BASE_URL", format!("{url}/v1"))],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("Hello wörld 🌍"));
    assert!(stderr.contains("37 tokens in, 11 out · ~$"), "{stderr}");
    let (head, _) = request.recv().expect("the server saw the request");
    assert!(head.starts_with("POST /v1/responses "), "{head}");
}

#[test]
fn a_missing_anthropic_key_is_named() {
    let out = exec("anthropic:claude-sonnet-4", &[]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("ANTHROPIC_API_KEY"), "{stderr}");
}

/// A 1×1 PNG.
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

#[test]
fn exec_image_reaches_an_openai_server_and_a_non_image_is_refused_first() {
    let files = tempfile::tempdir().expect("files");
    let image = files.path().join("shot.png");
    std::fs::write(&image, PNG).expect("write");
    let body = [
        r#"data: {"choices":[{"index":0,"delta":{"content":"A pixel."},"finish_reason":null}]}"#,
        r#"data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
        "data: [DONE]",
    ]
    .map(|line| format!("{line}\n\n"))
    .concat();
    let (url, request) = serve_once(body);
    let image_arg = image.display().to_string();
    let out = exec_with(
        "openai:gpt-4o-mini",
        &[
            ("OPENAI_BASE_URL", format!("{url}/v1")),
            ("OPENAI_API_KEY", "sk-test".into()),
        ],
        "",
        &["--image", &image_arg],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("attached 1 image: png 1 KB"), "{stderr}");
    let (_, body) = request.recv().expect("the server saw the request");
    let body: serde_json::Value = serde_json::from_str(&body).expect("json");
    let user = &body["messages"][1];
    assert_eq!(user["content"][1]["type"], "image_url");
    let url = user["content"][1]["image_url"]["url"]
        .as_str()
        .expect("url");
    assert!(
        url.starts_with("data:image/png;base64,iVBORw0KGgo"),
        "{url}"
    );

    // Not an image: refused before any request (the server would hang up).
    let text = files.path().join("notes.png");
    std::fs::write(&text, "not a picture").expect("write");
    let text_arg = text.display().to_string();
    let out = exec_with(
        "openai:gpt-4o-mini",
        &[
            ("OPENAI_BASE_URL", "http://127.0.0.1:9/v1".into()),
            ("OPENAI_API_KEY", "sk-test".into()),
        ],
        "",
        &["--image", &text_arg],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not a PNG, JPEG, GIF or WebP image"),
        "{stderr}"
    );
}

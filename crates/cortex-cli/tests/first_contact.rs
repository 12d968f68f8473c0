//! What a new user meets in the first minute: a missing key or repository
//! is named before anything is tried, and human output carries status
//! lines, never log records.

mod common;

use std::io::Write;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `program` with a folder for HOME and the XDG folders, so nothing of
/// the user's is read or written, and no key or log filter of theirs.
fn isolated(program: &str, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("HOME", home)
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .env_remove("CORTEX_LOG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    cmd
}

fn cortex(home: &Path) -> Command {
    isolated(env!("CARGO_BIN_EXE_cortex"), home)
}

/// A loopback listener that counts the connections made to it; standing
/// in as every proxy, it sees any request the process sends anywhere.
fn counting_proxy() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let count = Arc::new(AtomicUsize::new(0));
    let seen = count.clone();
    std::thread::spawn(move || {
        for socket in listener.incoming() {
            seen.fetch_add(1, Ordering::SeqCst);
            drop(socket);
        }
    });
    (url, count)
}

fn with_proxy(cmd: &mut Command, proxy: &str) {
    for name in [
        "HTTPS_PROXY",
        "HTTP_PROXY",
        "ALL_PROXY",
        "https_proxy",
        "http_proxy",
    ] {
        cmd.env(name, proxy);
    }
    cmd.env_remove("NO_PROXY").env_remove("no_proxy");
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_missing_key_for_a_hosted_provider_fails_at_once_naming_the_variable() {
    for (model, variable, section) in [
        ("openai:gpt-4o-mini", "OPENAI_API_KEY", "[openai]"),
        (
            "anthropic:claude-sonnet-4",
            "ANTHROPIC_API_KEY",
            "[anthropic]",
        ),
    ] {
        let home = tempfile::tempdir().expect("home");
        let repo = tempfile::tempdir().expect("repo");
        let (proxy, connections) = counting_proxy();
        let mut cmd = cortex(home.path());
        with_proxy(&mut cmd, &proxy);
        // Set but empty counts as unset.
        cmd.env(variable, "")
            .args(["exec", "--repo"])
            .arg(repo.path())
            .args(["--model", model, "say hello"]);
        let out = cmd.output().expect("run cortex");
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{model}: {err}");
        assert!(err.contains(variable), "{model}: {err}");
        assert!(
            err.contains("api_key_env") && err.contains(section),
            "{model}: {err}"
        );
        assert!(!err.contains("retrying"), "{model}: {err}");
        assert_eq!(
            connections.load(Ordering::SeqCst),
            0,
            "{model}: a request went out"
        );
    }
}

#[test]
fn a_missing_repository_is_reported_before_the_model() {
    let home = tempfile::tempdir().expect("home");
    let missing = home.path().join("no-such-repository");
    // No model configured and none on disk in this home: the repository is
    // still the first thing named.
    let out = cortex(home.path())
        .args(["exec", "--repo"])
        .arg(&missing)
        .arg("say hello")
        .output()
        .expect("run cortex");
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("no-such-repository"), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    assert!(!err.to_lowercase().contains("model"), "{err}");
}

const ANSWER: &str = "data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\
    \"delta\":{\"role\":\"assistant\",\"content\":\"all good\"},\"finish_reason\":null}]}\n\n\
    data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\
    \"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

/// An OpenAI-compatible server on loopback that answers its first
/// `failures` requests with 503, then streams [`ANSWER`].
fn flaky_server(failures: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/v1", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for (n, socket) in listener.incoming().enumerate() {
            let Ok(mut socket) = socket else { return };
            common::read_request(&socket);
            let _ = if n < failures {
                let body = "{\"error\":{\"message\":\"overloaded\"}}";
                write!(
                    socket,
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                )
            } else {
                write!(
                    socket,
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{ANSWER}"
                )
            };
            let _ = socket.flush();
        }
    });
    url
}

/// `cortex exec` in a pseudo-terminal, as a user sees it: stdout and
/// stderr on one screen. `script` is util-linux's (Debian's essential
/// `bsdutils`), so it is on every machine the README's setup supports.
fn exec_in_pty(home: &Path, repo: &Path, url: &str) -> String {
    let line = format!(
        "'{}' exec --repo '{}' --model openai:gpt-4o-mini 'say hello'",
        env!("CARGO_BIN_EXE_cortex"),
        repo.display()
    );
    let out = isolated("script", home)
        .env("OPENAI_BASE_URL", url)
        .args(["-qefc", &line, "/dev/null"])
        .output()
        .expect("run script");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_retried_request_shows_status_lines_and_no_log_records() {
    let home = tempfile::tempdir().expect("home");
    let repo = tempfile::tempdir().expect("repo");
    let url = flaky_server(2);
    let screen = exec_in_pty(home.path(), repo.path(), &url);
    assert!(screen.contains("all good"), "{screen}");
    assert!(
        screen.contains("retrying the model request (1 of 4) in "),
        "{screen}"
    );
    assert!(
        screen.contains("retrying the model request (2 of 4) in "),
        "{screen}"
    );
    assert!(!screen.contains("WARN"), "{screen}");
    assert!(!screen.contains("cortex_model::"), "{screen}");
    // The records went to the log file instead.
    let log =
        std::fs::read_to_string(home.path().join("state/cortex/cortex.log")).expect("the log file");
    assert!(log.contains("retrying model request"), "{log}");
    let mode = std::fs::metadata(home.path().join("state/cortex/cortex.log"))
        .map(|m| std::os::unix::fs::PermissionsExt::mode(&m.permissions()) & 0o777)
        .expect("log metadata");
    assert_eq!(mode, 0o600);
}

#[test]
fn verbose_puts_the_log_records_on_stderr() {
    let home = tempfile::tempdir().expect("home");
    let repo = tempfile::tempdir().expect("repo");
    let url = flaky_server(1);
    let out = cortex(home.path())
        .env("OPENAI_BASE_URL", &url)
        .args(["exec", "--verbose", "--repo"])
        .arg(repo.path())
        .args(["--model", "openai:gpt-4o-mini", "say hello"])
        .output()
        .expect("run cortex");
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("WARN") && err.contains("retrying model request"),
        "{err}"
    );
}

//! `cortex models fetch` as a user runs it, against a loopback server that
//! stands in for Hugging Face (`HF_ENDPOINT`).
#![cfg(feature = "local")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};

const HF_PATH: &str =
    "/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf";

/// Serves `body` at [`HF_PATH`] (404 elsewhere) to `connections` clients.
fn serve(body: Vec<u8>, connections: usize) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    std::thread::spawn(move || {
        for sock in listener.incoming().take(connections) {
            let Ok(mut sock) = sock else { continue };
            let mut req = Vec::new();
            let mut buf = [0u8; 1024];
            while !req.windows(4).any(|w| w == b"\r\n\r\n") {
                match sock.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => req.extend_from_slice(&buf[..n]),
                }
            }
            let text = String::from_utf8_lossy(&req);
            let path = text.split_whitespace().nth(1).unwrap_or("");
            if path == HF_PATH {
                let _ = write!(
                    sock,
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                    body.len()
                );
                let _ = sock.write_all(&body);
            } else {
                let _ = sock.write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                );
            }
        }
    });
    format!("http://{addr}")
}

fn cortex(home: &std::path::Path, endpoint: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cortex"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("HOME", home)
        .env("HF_ENDPOINT", endpoint)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("run cortex")
}

fn sha256_hex(bytes: &[u8]) -> String {
    // The test computes the hash with the system tool, independent of the
    // code under test.
    let dir = tempfile::tempdir().expect("dir");
    let f = dir.path().join("f");
    std::fs::write(&f, bytes).expect("write");
    let out = Command::new("sha256sum")
        .arg(&f)
        .output()
        .expect("sha256sum");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .expect("hash")
        .to_owned()
}

#[test]
fn fetch_installs_a_checked_file_where_models_path_finds_it() {
    let home = tempfile::tempdir().expect("home");
    let body: Vec<u8> = b"GGUF"
        .iter()
        .copied()
        .chain((0..100_000u32).map(|i| (i % 253) as u8))
        .collect();
    let endpoint = serve(body.clone(), 1);
    let out = cortex(
        home.path(),
        &endpoint,
        &[
            "models",
            "fetch",
            "qwen2.5-coder-0.5b",
            "--sha256",
            &sha256_hex(&body),
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let installed = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert_eq!(std::fs::read(&installed).expect("installed"), body);
    assert!(stderr.contains("verified"), "{stderr}");
    // Not a terminal: plain progress lines.
    assert!(stderr.contains("100%"), "{stderr}");

    let path = cortex(
        home.path(),
        &endpoint,
        &["models", "path", "qwen2.5-coder-0.5b"],
    );
    assert!(path.status.success());
    assert_eq!(String::from_utf8_lossy(&path.stdout).trim(), installed);
}

#[test]
fn fetch_with_a_wrong_sha256_installs_nothing() {
    let home = tempfile::tempdir().expect("home");
    let endpoint = serve(b"GGUF not the right bytes".to_vec(), 1);
    let out = cortex(
        home.path(),
        &endpoint,
        &[
            "models",
            "fetch",
            "qwen2.5-coder-0.5b",
            "--sha256",
            &"0".repeat(64),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("not installed"), "{stderr}");
    let models = home.path().join("data/cortex/models");
    let left: Vec<_> = std::fs::read_dir(&models)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn fetch_without_hugging_face_names_the_offline_script() {
    let home = tempfile::tempdir().expect("home");
    let port = TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let out = cortex(
        home.path(),
        &format!("http://127.0.0.1:{port}"),
        &["models", "fetch", "qwen2.5-coder-0.5b"],
    );
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("scripts/fetch-default-model qwen2.5-coder-0.5b"),
        "{stderr}"
    );
}

#[test]
fn fetch_refuses_unknown_names_and_bad_hashes() {
    let home = tempfile::tempdir().expect("home");
    let out = cortex(
        home.path(),
        "http://127.0.0.1:9",
        &["models", "fetch", "nope"],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("known: qwen2.5-coder-1.5b"));
    let out = cortex(
        home.path(),
        "http://127.0.0.1:9",
        &["models", "fetch", "smollm2-135m"],
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("scripts/fetch-default-model smollm2-135m")
    );
    let out = cortex(
        home.path(),
        "http://127.0.0.1:9",
        &["models", "fetch", "qwen2.5-coder-0.5b", "--sha256", "abc"],
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("64 hex digits"));
}

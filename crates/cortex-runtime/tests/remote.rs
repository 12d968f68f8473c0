//! A guest agent listening on TCP (`cortex-guest --listen`), reached by the
//! `remote` provider with its bearer token.

mod common;

use common::{guest_binary, run, spec};
use cortex_protocol::ToolName;
use cortex_runtime::{GuestProvider, RemoteProvider, RuntimeError};
use serde_json::json;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

const TOKEN: &str = "0123456789abcdef-remote-token";

struct Listening {
    child: Child,
    address: String,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn listen(workspace: &std::path::Path, token_file: &std::path::Path) -> Listening {
    listen_with(workspace, token_file, &[])
}

fn listen_with(
    workspace: &std::path::Path,
    token_file: &std::path::Path,
    extra: &[&std::ffi::OsStr],
) -> Listening {
    let mut child = Command::new(guest_binary())
        .args(["--listen", "127.0.0.1:0", "--token-file"])
        .arg(token_file)
        .args(extra)
        .arg("--root")
        .arg(workspace)
        .env("CORTEX_GUEST_LOG", "info")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read");
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    Listening { child, address }
}

#[tokio::test]
async fn the_right_token_gets_a_guest_and_a_wrong_one_is_refused_and_logged() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "remote content\n").expect("write");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{TOKEN}\n")).expect("token");
    let mut agent = listen(dir.path(), &token_file);

    let good = RemoteProvider {
        address: agent.address.clone(),
        token: TOKEN.to_owned(),
        tls_ca: None,
    };
    let guest = good
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start");
    let out = run(&guest, ToolName::ReadFile, json!({"path": "a.txt"})).await;
    assert!(
        out.is_ok() && out.output.contains("remote content"),
        "{}",
        out.output
    );
    // Capabilities travel too: a read-only remote guest refuses bash.
    let refused = run(&guest, ToolName::Bash, json!({"command": "true"})).await;
    assert!(!refused.is_ok(), "{}", refused.output);
    guest.close().await;

    let bad = RemoteProvider {
        address: agent.address.clone(),
        token: "wrong-token-of-sufficient-length".to_owned(),
        tls_ca: None,
    };
    let err = bad
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("refused");
    assert!(
        matches!(&err, RuntimeError::Start { reason, .. } if reason.contains("unauthorized")),
        "{err}"
    );
    let _ = agent.child.kill();
    let _ = agent.child.wait();
    let mut log = String::new();
    agent
        .child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut log)
        .expect("log");
    assert!(log.contains("refused a connection"), "{log}");
}

#[test]
fn listening_without_a_token_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = Command::new(guest_binary())
        .args(["--listen", "127.0.0.1:0", "--root"])
        .arg(dir.path())
        .env_remove("CORTEX_GUEST_TOKEN")
        .output()
        .expect("run");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("needs a token"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA and a certificate it signed for 127.0.0.1, made with the openssl
/// command: (ca.pem, cert.pem, key.pem).
fn certificate(dir: &std::path::Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let openssl = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    std::fs::write(
        dir.join("ext.cnf"),
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .ok()?;
    let made = openssl(
        &[
            &["req", "-x509"][..],
            &ec,
            &[
                "-days",
                "1",
                "-subj",
                "/CN=cortex-test-ca",
                "-keyout",
                "ca.key",
                "-out",
                "ca.pem",
            ],
        ]
        .concat(),
    ) && openssl(
        &[
            &["req"][..],
            &ec,
            &[
                "-subj",
                "/CN=cortex-guest",
                "-keyout",
                "key.pem",
                "-out",
                "leaf.csr",
            ],
        ]
        .concat(),
    ) && openssl(&[
        "x509",
        "-req",
        "-in",
        "leaf.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "1",
        "-extfile",
        "ext.cnf",
        "-out",
        "cert.pem",
    ]);
    made.then(|| {
        (
            dir.join("ca.pem"),
            dir.join("cert.pem"),
            dir.join("key.pem"),
        )
    })
}

#[tokio::test]
async fn over_tls_the_agent_is_verified_and_plaintext_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Some((ca, cert, key)) = certificate(dir.path()) else {
        cortex_testkit::skip_current("openssl", "no openssl command to make a test certificate");
        return;
    };
    std::fs::write(dir.path().join("a.txt"), "over tls\n").expect("write");
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).expect("token");
    let agent = listen_with(
        dir.path(),
        &token_file,
        &[
            "--tls-cert".as_ref(),
            cert.as_os_str(),
            "--tls-key".as_ref(),
            key.as_os_str(),
        ],
    );
    let tls = RemoteProvider {
        address: agent.address.clone(),
        token: TOKEN.to_owned(),
        tls_ca: Some(ca),
    };
    let guest = tls
        .start(&spec(dir.path(), false, false))
        .await
        .expect("start over TLS");
    let out = run(&guest, ToolName::ReadFile, json!({"path": "a.txt"})).await;
    assert!(out.output.contains("over tls"), "{}", out.output);
    guest.close().await;

    // A client that does not speak TLS gets nothing it can use.
    let plain = RemoteProvider {
        address: agent.address.clone(),
        token: TOKEN.to_owned(),
        tls_ca: None,
    };
    assert!(plain.start(&spec(dir.path(), false, false)).await.is_err());
    // Nor does one that trusts another CA.
    let other = tempfile::tempdir().expect("other");
    let (other_ca, _, _) = certificate(other.path()).expect("second certificate");
    let wrong_ca = RemoteProvider {
        address: agent.address.clone(),
        token: TOKEN.to_owned(),
        tls_ca: Some(other_ca),
    };
    let err = wrong_ca
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("untrusted certificate");
    assert!(err.to_string().contains("TLS"), "{err}");
}

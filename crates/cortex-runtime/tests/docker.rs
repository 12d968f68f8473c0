//! The `docker` provider. Needs a Docker engine on the local socket and an
//! image with a glibc at least as new as the host's (`CORTEX_DOCKER_IMAGE`,
//! default `debian:12`); where either is missing the test records a skip
//! (`cortex_testkit`).

mod common;

use common::{guest_binary, run, spec};
use cortex_protocol::ToolName;
use cortex_runtime::{DockerProvider, GuestProvider, Limits, RuntimeError};
use serde_json::json;

fn provider(image: &str) -> DockerProvider {
    DockerProvider {
        image: image.to_owned(),
        program: guest_binary(),
        args: Vec::new(),
        limits: Limits::default(),
    }
}

async fn engine_available() -> bool {
    match bollard::Docker::connect_with_local_defaults() {
        Ok(docker) => docker.ping().await.is_ok(),
        Err(_) => false,
    }
}

#[tokio::test]
async fn a_guest_in_a_container_reads_and_is_confined() {
    if !engine_available().await {
        cortex_testkit::skip_current(
            "docker",
            "no Docker engine on this machine; the docker provider was not exercised",
        );
        return;
    }
    let image = std::env::var("CORTEX_DOCKER_IMAGE").unwrap_or_else(|_| "debian:12".to_owned());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("a.txt"), "in a container\n").expect("write");
    let guest = match provider(&image).start(&spec(dir.path(), true, true)).await {
        Ok(guest) => guest,
        Err(RuntimeError::Start { reason, .. }) if reason.contains("docker pull") => {
            cortex_testkit::skip_current("docker-image", &reason);
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let out = run(&guest, ToolName::ReadFile, json!({"path": "a.txt"})).await;
    assert!(out.output.contains("in a container"), "{}", out.output);
    let out = run(
        &guest,
        ToolName::Bash,
        json!({"command": "pwd; echo x > /usr/x; (exec 3<>/dev/tcp/1.1.1.1/80) && echo net"}),
    )
    .await;
    assert!(out.output.contains("/workspace"), "{}", out.output);
    assert!(
        !out.output.contains("\nnet"),
        "network is off: {}",
        out.output
    );
    guest.close().await;
}

#[tokio::test]
async fn without_an_engine_the_error_says_so() {
    if engine_available().await {
        cortex_testkit::skip_current(
            "docker-absent",
            "a Docker engine is present; this case needs none",
        );
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let err = provider("debian:12")
        .start(&spec(dir.path(), false, false))
        .await
        .err()
        .expect("no engine");
    assert!(err.to_string().contains("Docker engine"), "{err}");
}

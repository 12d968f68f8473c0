//! Escape attempts against the guest's filesystem view, from `bash` inside a
//! real local sandbox (issue 13, "an allow-listed root", "harness state is
//! never in reach", "host Unix sockets", "root and /proc"): what the
//! allow-list does not name does not exist inside, in every policy.

mod common;

use common::sandbox::{Sandbox, bash, is_root, marker};
use cortex_protocol::SandboxPolicy;

#[tokio::test]
async fn only_the_allow_listed_trees_exist() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    for path in [
        "/run",
        "/var/run",
        "/var/lib",
        "/var/snap",
        "/var/log",
        "/srv",
        "/mnt",
        "/media",
        "/root",
        "/boot",
        "/lost+found",
        "/etc/ssh/ssh_host_ed25519_key",
        "/etc/sudoers.d",
    ] {
        let out = bash(&guest, &format!("test -e '{path}' || test -L '{path}'")).await;
        assert!(!out.is_ok(), "{path} is there: {}", out.output);
    }
    let out = bash(&guest, "ls /home; ls /var; wc -c < /etc/shadow").await;
    assert_eq!(
        out.output.lines().take(3).collect::<Vec<_>>(),
        ["cortex", "tmp", "0"],
        "{}",
        out.output
    );
    // Nothing new at the top level or in /var.
    for attempt in [
        "mkdir /run",
        "touch /evil",
        "mkdir /var/lib",
        "ln -s /tmp /srv",
    ] {
        let out = bash(&guest, attempt).await;
        assert!(!out.is_ok(), "`{attempt}` succeeded: {}", out.output);
    }
    // Tools still work.
    let out = bash(
        &guest,
        "python3 -c 'print(6*7)' && git --version && bash -c 'echo ok'",
    )
    .await;
    assert!(out.is_ok() && out.output.contains("42"), "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn proc_is_masked_as_docker_masks_it() {
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        return;
    };
    for attempt in [
        "echo '|/tmp/evil' > /proc/sys/kernel/core_pattern",
        "echo 1 > /proc/sys/kernel/sysrq",
        "echo b > /proc/sysrq-trigger",
        "head -c 1 /proc/kcore | wc -c | grep -qx 1",
        "grep -q . /proc/keys",
        "grep -q . /proc/timer_list",
    ] {
        let out = bash(&guest, attempt).await;
        assert!(!out.is_ok(), "`{attempt}` succeeded: {}", out.output);
    }
    let out = bash(&guest, "grep ' /proc/sys ' /proc/self/mountinfo").await;
    assert!(out.output.contains(" ro,"), "{}", out.output);
    guest.close().await;
}

#[tokio::test]
async fn the_harness_folders_are_absent_in_every_mode() {
    for policy in [SandboxPolicy::WorkspaceWrite, SandboxPolicy::ReadOnly] {
        // As with `--repo ~`: the harness's config and data folders inside
        // the workspace, named in `hide` as the provider names its own.
        let mut sandbox = Sandbox::new();
        let config = sandbox.path(".config/cortex");
        let data = sandbox.path(".local/share/cortex");
        std::fs::create_dir_all(&config).expect("config");
        std::fs::create_dir_all(&data).expect("data");
        let secret = marker();
        std::fs::write(config.join("token"), &secret).expect("token");
        std::fs::write(data.join("cortex.db"), &secret).expect("db");
        sandbox.provider.hide.extend([config.clone(), data.clone()]);
        let mut spec = sandbox.spec();
        spec.policy = policy;
        spec.writable = policy == SandboxPolicy::WorkspaceWrite;
        let Some(guest) = sandbox.start_with(&spec).await else {
            return;
        };
        let out = bash(
            &guest,
            &format!("cat .config/cortex/token .local/share/cortex/cortex.db; grep -r {secret} . /tmp 2>/dev/null; ls -A .config/cortex"),
        )
        .await;
        assert!(!out.output.contains(&secret), "{policy:?}: {}", out.output);
        let out = bash(&guest, "echo x > .config/cortex/token").await;
        assert!(!out.is_ok(), "{}", out.output);
        guest.close().await;
        assert_eq!(
            std::fs::read_to_string(config.join("token")).expect("token"),
            secret
        );
    }
}

#[tokio::test]
async fn host_unix_sockets_are_out_of_reach() {
    if !is_root() {
        cortex_testkit::skip_current("root", "making a socket under /run needs root");
        return;
    }
    let path = std::path::PathBuf::from(format!("/run/cortex-escape-{}.sock", marker()));
    let listener = std::os::unix::net::UnixListener::bind(&path).expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let sandbox = Sandbox::new();
    let Some(guest) = sandbox.start().await else {
        let _ = std::fs::remove_file(&path);
        return;
    };
    let out = bash(
        &guest,
        &format!(
            "python3 -c \"import socket; s=socket.socket(socket.AF_UNIX); s.connect('{}')\"",
            path.display()
        ),
    )
    .await;
    guest.close().await;
    let accepted = listener.accept().is_ok();
    let _ = std::fs::remove_file(&path);
    assert!(!out.is_ok(), "{}", out.output);
    assert!(!accepted, "the host socket saw a connection");
}

//! `cortex mcp list` with the `mcp`-package test server of `cortex-mcp`:
//! started inside the local sandbox of the repository, and a server that
//! fails to start. Skips with a printed reason where the Python server is
//! not installed (`scripts/install-deps`).

mod common;

use common::{Env, json_lines};

#[path = "../../cortex-mcp/tests/support/mod.rs"]
mod support;
use support::{fixture, python};

#[test]
fn mcp_list_shows_each_server_its_state_and_tools() {
    let Some(python) = python() else { return };
    let env = Env::new(&[]);
    std::fs::copy(fixture(), env.repo.path().join("server.py")).expect("copy the server");
    let config = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&config).expect("config dir");
    let python = python.display();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[mcp_servers.docs]\ncommand = \"{python}\"\nargs = [\"server.py\"]\nread_only = true\n\n\
             [mcp_servers.broken]\ncommand = \"{python}\"\nargs = [\"server.py\", \"crash\"]\n"
        ),
    )
    .expect("config");
    let output = env
        .command()
        .args(["mcp", "list", "--json", "--repo"])
        .arg(env.repo.path())
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stderr.contains("cannot create the guest's namespaces") {
        eprintln!("SKIPPED: user namespaces are not available here");
        return;
    }
    assert_eq!(output.status.code(), Some(1), "a server failed: {stderr}");
    let servers = json_lines(&output.stdout);
    let names: Vec<&str> = servers.iter().filter_map(|s| s["name"].as_str()).collect();
    assert_eq!(names, ["broken", "docs"], "in name order");
    let broken = &servers[0];
    assert_eq!(broken["state"], "failed");
    let reason = broken["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("cannot open the index"),
        "its stderr: {reason}"
    );
    let docs = &servers[1];
    assert_eq!(docs["state"], "ready", "{docs}");
    assert_eq!(docs["read_only"], true);
    assert_eq!(
        docs["transport"],
        format!("stdio (guest): {python} server.py")
    );
    let tools: Vec<&str> = docs["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t.as_str())
        .collect();
    assert!(tools.contains(&"mcp__docs__add"), "{tools:?}");

    let human = env
        .command()
        .args(["mcp", "list", "--repo"])
        .arg(env.repo.path())
        .output()
        .expect("run");
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(text.contains("docs  stdio (guest)"), "{text}");
    assert!(text.contains("    mcp__docs__echo"), "{text}");
    assert!(text.contains("failed: "), "{text}");
}

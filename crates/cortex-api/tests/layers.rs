//! The layer rules of ARCHITECTURE.md ("Layers"), checked against the
//! workspace's manifests (`cargo metadata`): which crate of ours may depend
//! on which. A new dependency between our crates, or a new crate, changes
//! the table there and `ALLOWED` here together.

use serde_json::Value;
use std::collections::BTreeMap;
use std::process::Command;

/// What each crate may depend on (normal and build dependencies), from the
/// bottom up. Dev-dependencies (tests, benchmarks) may also use higher
/// crates, except where `STRICT` says otherwise; nothing depends on the CLI.
const ALLOWED: &[(&str, &[&str])] = &[
    ("cortex-protocol", &[]),
    ("cortex-term", &[]),
    ("cortex-sandbox", &[]),
    // Tests only: how a test records a skip. Any crate's tests may use it.
    ("cortex-testkit", &[]),
    ("cortex-api", &["cortex-protocol"]),
    ("cortex-client", &["cortex-api", "cortex-protocol"]),
    ("cortex-tools", &["cortex-protocol"]),
    ("cortex-model", &["cortex-protocol"]),
    ("cortex-model-local", &["cortex-model", "cortex-protocol"]),
    ("cortex-store", &["cortex-protocol"]),
    ("cortex-mcp", &["cortex-protocol"]),
    (
        "cortex-guest",
        &["cortex-protocol", "cortex-sandbox", "cortex-tools"],
    ),
    (
        "cortex-runtime",
        &[
            "cortex-guest",
            "cortex-protocol",
            "cortex-sandbox",
            "cortex-tools",
        ],
    ),
    (
        "cortex-core",
        &[
            "cortex-mcp",
            "cortex-model",
            "cortex-protocol",
            "cortex-runtime",
            "cortex-store",
            "cortex-tools",
        ],
    ),
    (
        "cortex-server",
        &[
            "cortex-api",
            "cortex-core",
            "cortex-model",
            "cortex-protocol",
            "cortex-runtime",
            "cortex-store",
        ],
    ),
    (
        "cortex-tui",
        &["cortex-client", "cortex-protocol", "cortex-term"],
    ),
    (
        "cortex-acp",
        &["cortex-api", "cortex-client", "cortex-protocol"],
    ),
    ("cortex-cli", &["*"]),
];

/// Crates whose dev-dependencies obey `ALLOWED` too: the contract crates
/// and the client, which any other program may embed without pulling in
/// the server (`cargo tree -p cortex-client` shows no `cortex-server`).
const STRICT: &[&str] = &["cortex-protocol", "cortex-api", "cortex-client"];

const CLI: &str = "cortex-cli";

/// Every edge between our crates: (from, to, kind), kind `normal`, `build`
/// or `dev`.
type Edges = Vec<(String, String, String)>;

/// Our crates and the edges between them.
fn workspace() -> (Vec<String>, Edges) {
    let output = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo metadata");
    assert!(
        output.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata JSON");
    let members: Vec<String> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut edges = Edges::new();
    for package in metadata["packages"].as_array().expect("packages") {
        let from = package["name"].as_str().expect("name");
        for dep in package["dependencies"].as_array().expect("dependencies") {
            let to = dep["name"].as_str().expect("dependency name");
            if members.iter().any(|m| m == to) {
                let kind = dep["kind"].as_str().unwrap_or("normal");
                edges.push((from.to_owned(), to.to_owned(), kind.to_owned()));
            }
        }
    }
    assert!(
        !edges.is_empty(),
        "no dependencies between our crates found"
    );
    (members, edges)
}

/// Every edge that breaks the rules, described.
fn violations(crates: &[String], edges: &Edges) -> Vec<String> {
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut found = Vec::new();
    for name in crates {
        if !allowed.contains_key(name.as_str()) {
            found.push(format!(
                "{name} is not in the layer table (ARCHITECTURE.md and ALLOWED)"
            ));
        }
    }
    for (from, to, kind) in edges {
        let permitted = allowed.get(from.as_str()).copied().unwrap_or(&[]);
        let in_table = permitted.iter().any(|p| *p == "*" || p == to);
        let ok = if to == CLI {
            false
        } else if kind == "dev" && !STRICT.contains(&from.as_str()) {
            true
        } else {
            in_table
        };
        if !ok {
            found.push(format!("{from} → {to} ({kind}) breaks the layer rules"));
        }
    }
    found
}

#[test]
fn dependencies_between_our_crates_follow_the_layers() {
    let (crates, edges) = workspace();
    assert!(crates.iter().any(|c| c == "cortex-server"), "{crates:?}");
    let broken = violations(&crates, &edges);
    assert!(broken.is_empty(), "{}", broken.join("\n"));
}

#[test]
fn a_dependency_up_the_layers_is_found() {
    let edge = |from: &str, to: &str, kind: &str| (from.into(), to.into(), kind.into());
    let crates: Vec<String> = [
        "cortex-client",
        "cortex-server",
        "cortex-core",
        "cortex-cli",
    ]
    .map(String::from)
    .to_vec();
    let fine = vec![
        edge("cortex-server", "cortex-core", "normal"),
        edge("cortex-server", "cortex-client", "dev"),
        edge("cortex-cli", "cortex-server", "normal"),
    ];
    assert!(violations(&crates, &fine).is_empty());
    for bad in [
        edge("cortex-client", "cortex-server", "normal"),
        edge("cortex-client", "cortex-server", "dev"),
        edge("cortex-core", "cortex-server", "normal"),
        edge("cortex-core", "cortex-cli", "dev"),
    ] {
        assert_eq!(violations(&crates, &vec![bad.clone()]).len(), 1, "{bad:?}");
    }
    let unknown = ["cortex-new".to_owned()];
    assert_eq!(violations(&unknown, &Vec::new()).len(), 1);
}

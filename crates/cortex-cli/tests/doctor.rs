//! `cortex doctor`, the real binary with private config and data folders:
//! on this machine (JSON and human), with a missing model, a failing MCP
//! server, a provider whose key is missing (and a key that is never
//! printed), and with user namespaces refused (a user namespace whose
//! `max_user_namespaces` is 0, where this machine lets the test make one).

mod common;

use common::Env;
use serde_json::Value;
use std::process::Output;

/// Every check name a report has on any machine; the layer checks follow
/// `isolation` only when the guest started.
const ALWAYS: &[&str] = &[
    "config",
    "isolation",
    "model",
    "provider openai",
    "provider anthropic",
    "store",
    "terminal",
    "versions",
];
const LAYERS: &[&str] = &["namespaces", "landlock", "seccomp", "cgroup"];

/// An environment whose config file holds `config`.
fn env_with(config: &str) -> Env {
    let env = Env::new(&[]);
    let dir = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&dir).expect("config dir");
    std::fs::write(dir.join("config.toml"), config).expect("config");
    env
}

/// A config a session can run with here without a model file: an
/// OpenAI-compatible server on loopback (nothing listens; doctor does not
/// call it).
const LOOPBACK_MODEL: &str =
    "model = \"openai:m\"\n[openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n";

fn doctor(env: &Env, extra: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut cmd = env.command();
    cmd.current_dir(env.repo.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("ANTHROPIC_BASE_URL")
        .args(["doctor", "--repo"])
        .arg(env.repo.path())
        .args(extra);
    for (name, value) in vars {
        cmd.env(name, value);
    }
    cmd.output().expect("run cortex doctor")
}

/// The `--json` document, checked for its shape.
fn parsed(output: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&output.stdout);
    let report: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "not one JSON document ({e}): {stdout}\nstderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let checks = report["checks"].as_array().expect("checks");
    for check in checks {
        assert!(check["name"].is_string(), "{check}");
        assert!(check["detail"].is_string(), "{check}");
        assert!(
            matches!(check["status"].as_str(), Some("ok" | "warn" | "fail")),
            "{check}"
        );
        assert!(
            check["fix"].is_string() || check["fix"].is_null(),
            "{check}"
        );
        if check["status"] == "fail" {
            assert!(check["fix"].is_string(), "a failure says its fix: {check}");
        }
    }
    let blocked = checks
        .iter()
        .any(|c| c["status"] == "fail" && c["required"] == true);
    assert_eq!(report["ok"], !blocked, "{report:#}");
    let code = if blocked { 1 } else { 0 };
    assert_eq!(output.status.code(), Some(code), "{report:#}");
    report
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"]
        .as_array()
        .and_then(|checks| checks.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no check `{name}` in {report:#}"))
}

fn names(report: &Value) -> Vec<String> {
    report["checks"]
        .as_array()
        .map(|checks| {
            checks
                .iter()
                .filter_map(|c| c["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn this_machine_as_json_and_as_lines() {
    let env = env_with(LOOPBACK_MODEL);
    let output = doctor(&env, &["--json"], &[]);
    let report = parsed(&output);
    let names = names(&report);
    for name in ALWAYS {
        assert!(names.iter().any(|n| n == name), "no `{name}` in {names:?}");
    }
    let isolation = check(&report, "isolation");
    if isolation["status"] == "ok" {
        for name in LAYERS {
            assert!(names.iter().any(|n| n == name), "no `{name}` in {names:?}");
        }
        // The only thing a session needs that could be missing here.
        assert_eq!(report["ok"], true, "{report:#}");
    } else {
        // The layers' checks did not run.
        cortex_testkit::skip_current(
            "userns",
            &format!("the local guest does not start here: {isolation}"),
        );
        assert_eq!(isolation["required"], true);
    }
    assert_eq!(check(&report, "model")["status"], "ok");
    assert_eq!(check(&report, "store")["status"], "ok");
    assert_eq!(check(&report, "mcp")["detail"], "no servers configured");
    // Not a terminal here: a warning, which fails nothing.
    let terminal = check(&report, "terminal");
    assert_eq!(terminal["status"], "warn", "{terminal}");
    assert!(
        check(&report, "versions")["detail"]
            .as_str()
            .is_some_and(|d| d.contains(env!("CARGO_PKG_VERSION")))
    );

    let human = doctor(&env, &[], &[]);
    assert_eq!(human.status.code(), output.status.code());
    let text = String::from_utf8_lossy(&human.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len(),
        names.len() + 1,
        "a line per check, a verdict:\n{text}"
    );
    for (line, name) in lines.iter().zip(&names) {
        assert!(
            ["✓ ", "! ", "✗ "].iter().any(|m| line.starts_with(m)),
            "{line}"
        );
        let rest = line.split_once(' ').map_or("", |(_, rest)| rest);
        assert!(rest.starts_with(name.as_str()), "{line}");
    }
    assert!(
        lines
            .iter()
            .filter(|l| l.starts_with("✗ "))
            .all(|l| l.contains(" — fix: ")),
        "{text}"
    );
}

#[test]
fn a_missing_model_fails_with_how_to_get_it() {
    // The default model, in an empty models folder.
    let env = env_with("");
    let output = doctor(&env, &["--json"], &[]);
    let report = parsed(&output);
    let model = check(&report, "model");
    assert_eq!(model["status"], "fail", "{model}");
    assert_eq!(model["required"], true);
    assert_eq!(output.status.code(), Some(1));
    if cfg!(feature = "local") {
        assert!(
            model["fix"]
                .as_str()
                .is_some_and(|f| f.contains("cortex models fetch qwen2.5-coder-1.5b")),
            "{model}"
        );
    }

    // A model file the config names, which is not there.
    let env = env_with("model = \"local:/nonexistent/missing.gguf\"\n");
    let output = doctor(&env, &[], &[]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("✗ model"))
        .unwrap_or_else(|| panic!("no failed model line:\n{text}"));
    if cfg!(feature = "local") {
        assert!(line.contains("/nonexistent/missing.gguf"), "{line}");
    }
    assert!(line.contains(" — fix: "), "{line}");
}

#[test]
fn a_failing_mcp_server_is_named_with_its_reason() {
    let env = env_with(&format!(
        "{LOOPBACK_MODEL}[mcp_servers.ghost]\ncommand = \"/nonexistent/ghost-server\"\n"
    ));
    let output = doctor(&env, &["--json"], &[]);
    let report = parsed(&output);
    let ghost = check(&report, "mcp ghost");
    assert_eq!(ghost["status"], "fail", "{ghost}");
    let detail = ghost["detail"].as_str().unwrap_or_default();
    assert!(detail.starts_with("failed ("), "with its time: {detail}");
    assert!(
        detail.len() > "failed (0 ms): ".len(),
        "with its reason: {detail}"
    );
    // A session goes on without it.
    assert_eq!(ghost["required"], false);

    let human = doctor(&env, &[], &[]);
    let text = String::from_utf8_lossy(&human.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("✗ mcp ghost") && l.contains("[mcp_servers.ghost]")),
        "{text}"
    );
}

#[test]
fn a_missing_key_is_named_and_a_present_one_never_shown() {
    let config =
        "model = \"openai:gpt-4o-mini\"\n[openai]\nbase_url = \"https://api.example.invalid/v1\"\n";
    let env = env_with(config);
    let output = doctor(&env, &["--json"], &[]);
    let missing = parsed(&output);
    let openai = check(&missing, "provider openai");
    assert_eq!(openai["status"], "fail", "{openai}");
    assert_eq!(openai["required"], true);
    assert!(
        openai["fix"]
            .as_str()
            .is_some_and(|f| f.contains("OPENAI_API_KEY")),
        "{openai}"
    );
    assert_eq!(output.status.code(), Some(1));

    let canary = "sk-canary-123";
    for extra in [&["--json"][..], &[]] {
        let output = doctor(&env, extra, &[("OPENAI_API_KEY", canary)]);
        for stream in [&output.stdout, &output.stderr] {
            assert!(
                !String::from_utf8_lossy(stream).contains(canary),
                "the key's value is printed"
            );
        }
        if extra.is_empty() {
            let text = String::from_utf8_lossy(&output.stdout);
            assert!(
                text.lines().any(|l| l.starts_with("✓ provider openai")
                    && l.contains("OPENAI_API_KEY set")),
                "{text}"
            );
        } else {
            let shown = parsed(&output);
            assert_eq!(check(&shown, "provider openai")["status"], "ok");
        }
    }
}

/// Runs `cortex doctor --json` in a new user namespace whose
/// `max_user_namespaces` is 0, so the guest's own `unshare` is refused as
/// on a system that forbids unprivileged user namespaces. Needs `unshare`
/// and a kernel that lets this user make one user namespace.
#[test]
fn namespaces_refused() {
    const LIMIT: &str = "echo 0 > /proc/sys/user/max_user_namespaces";
    let probe = std::process::Command::new("unshare")
        .args(["--user", "--map-root-user", "sh", "-c", LIMIT])
        .output();
    match probe {
        Ok(out) if out.status.success() => {}
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            cortex_testkit::skip_current(
                "userns",
                &format!(
                    "cannot make a user namespace with no room for more: {}",
                    why.trim()
                ),
            );
            return;
        }
        Err(e) => {
            cortex_testkit::skip_current("unshare", &format!("no `unshare` to run: {e}"));
            return;
        }
    }
    let env = env_with(LOOPBACK_MODEL);
    // `env.command()`'s environment, around `unshare`.
    let output = std::process::Command::new("unshare")
        .env("XDG_DATA_HOME", env.home.path().join("data"))
        .env("XDG_CONFIG_HOME", env.home.path().join("config"))
        .env("HOME", env.home.path())
        .env_remove("OPENAI_API_KEY")
        .env_remove("OPENAI_BASE_URL")
        .current_dir(env.repo.path())
        .stdin(std::process::Stdio::null())
        .args(["--user", "--map-root-user", "sh", "-c"])
        .arg(format!(
            "{LIMIT} && exec \"$0\" doctor --json --repo \"$1\""
        ))
        .arg(env!("CARGO_BIN_EXE_cortex"))
        .arg(env.repo.path())
        .output()
        .expect("run unshare");
    let report = parsed(&output);
    let isolation = check(&report, "isolation");
    assert_eq!(isolation["status"], "fail", "{isolation}");
    assert_eq!(isolation["required"], true);
    assert!(
        isolation["detail"]
            .as_str()
            .is_some_and(|d| d.contains("namespaces")),
        "{isolation}"
    );
    let fix = isolation["fix"].as_str().unwrap_or_default();
    assert!(fix.contains("--sandbox full-access"), "{fix}");
    assert!(fix.contains("user.max_user_namespaces"), "{fix}");
    assert_eq!(output.status.code(), Some(1));
    let names = names(&report);
    assert!(
        !names.iter().any(|n| LAYERS.contains(&n.as_str())),
        "no layers without a guest: {names:?}"
    );
}

#[test]
fn a_model_file_is_checked_by_its_header_and_size() {
    if !cfg!(feature = "local") {
        cortex_testkit::skip_current(
            "feature-local",
            "built without the `local` feature: no embedded model",
        );
        return;
    }
    let env = env_with("");
    let models = env.home.path().join("data/cortex/models");
    std::fs::create_dir_all(&models).expect("models dir");
    let file = models.join("qwen2.5-coder-1.5b-instruct-q4_k_m.gguf");
    std::fs::write(&file, b"GGUF and too short").expect("model");
    let report = parsed(&doctor(&env, &["--json"], &[]));
    let model = check(&report, "model");
    assert_eq!(model["status"], "warn", "a short GGUF file: {model}");
    std::fs::write(&file, b"not a model").expect("model");
    let report = parsed(&doctor(&env, &["--json"], &[]));
    let model = check(&report, "model");
    assert_eq!(model["status"], "fail", "no GGUF header: {model}");
    assert_eq!(model["required"], true);
}

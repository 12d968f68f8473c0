//! A small model behind an OpenAI-compatible server on this machine writes
//! its calls as ```json blocks, which the server returns as text: `cortex
//! exec --model openai:…` runs them as the embedded model would (issue 19,
//! item 1), and with recovery turned off it does not end the turn on them as
//! if they were answers.

mod common;
mod scripted_openai;

use common::{Env, json_lines, run};
use scripted_openai::{Server, text};
use serde_json::Value;

const APP: &str = "def greet():\n    return 'Hello, Cortex'\n";
const FENCED_EDIT: &str = "I will change it.\n```json\n{\"name\": \"edit_file\", \"arguments\": \
    {\"path\": \"app.py\", \"old_string\": \"Hello, Cortex\", \"new_string\": \"Hi\"}}\n```";

fn exec(env: &Env, server: &Server, config: &str) -> std::process::Output {
    let config_dir = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    std::fs::write(config_dir.join("config.toml"), config).expect("config");
    let mut cmd = env.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-local")
        .args(["exec", "--json", "--guest", "process", "--repo"])
        .arg(env.repo.path())
        .args(["--model", "openai:qwen2.5-coder-1.5b"])
        .arg("Change the greeting to 'Hi'.");
    run(cmd)
}

fn tool_results(events: &[Value]) -> Vec<&Value> {
    events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .collect()
}

#[test]
fn calls_written_as_text_run_through_a_server_on_this_machine() {
    let env = Env::new(&[("app.py", APP)]);
    let server = Server::start(vec![text(FENCED_EDIT), text("Done: it says 'Hi' now.")]);
    let out = exec(&env, &server, "");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let events = json_lines(&out.stdout);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{events:?}");
    assert_eq!(results[0]["payload"]["name"], "edit_file");
    assert_eq!(results[0]["payload"]["status"], "ok", "{:?}", results[0]);
    let call = events
        .iter()
        .find(|e| e["type"] == "tool.call")
        .expect("a tool.call event");
    assert!(
        call["payload"]["call_id"]
            .as_str()
            .is_some_and(|id| id.starts_with("recovered_")),
        "{call}"
    );
    // The call was never shown as the answer's text.
    let shown: String = events
        .iter()
        .filter(|e| e["type"] == "message.delta")
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect();
    assert!(!shown.contains("old_string"), "{shown}");
    assert!(
        std::fs::read_to_string(env.repo.path().join("app.py"))
            .expect("read")
            .contains("'Hi'")
    );
    // The server was told about the call and its result in the next round.
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let messages = requests[1]["messages"].as_array().expect("messages");
    assert!(messages.iter().any(|m| m["role"] == "tool"), "{messages:?}");
}

#[test]
fn with_recovery_off_a_call_written_as_text_is_not_taken_as_the_answer() {
    let env = Env::new(&[("app.py", APP)]);
    let server = Server::start(vec![text(FENCED_EDIT), text(FENCED_EDIT)]);
    let config = "[models.\"qwen2.5-coder-1.5b\"]\nrecover_text_calls = false\n";
    let out = exec(&env, &server, config);
    assert!(
        !out.status.success(),
        "a turn that ran nothing must not succeed"
    );
    let events = json_lines(&out.stdout);
    assert!(tool_results(&events).is_empty());
    let reminders: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "turn.reminder")
        .collect();
    assert_eq!(reminders.len(), 1, "{events:?}");
    let failed = events
        .iter()
        .find(|e| e["type"] == "turn.failed")
        .expect("turn.failed");
    assert!(
        failed["payload"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("did not run")),
        "{failed}"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo.path().join("app.py")).expect("read"),
        APP
    );
}

/// llama.cpp's server does not hold a reply to `tool_choice` (an object
/// naming a function is ignored with a warning, and `"required"` was
/// answered in prose, docs/BENCHMARKS.md), but it does hold
/// one to a `response_format` JSON schema. A server on this machine is sent
/// the forced call's schema, the tools as they are, and the call it writes
/// as text runs.
#[test]
fn a_server_on_this_machine_is_held_to_the_forced_call_by_a_schema() {
    let env = Env::new(&[("app.py", APP)]);
    let advice = "Change app.py to:\n```python\ndef greet():\n    return 'Hi'\n```";
    let write = "{\"name\": \"write_file\", \"arguments\": {\"path\": \"app.py\", \
                 \"content\": \"def greet():\\n    return 'Hi'\\n\"}}";
    let server = Server::start(vec![text(advice), text(write), text("Done.")]);
    // The file shown in the turn's context, so that writing it needs no read.
    let config = "[models.\"qwen2.5-coder-1.5b\"]\nverify_answers = true\n\
                  context_window = 8192\nmax_output_tokens = 2048\nfiles_in_prompt = 4096\n";
    let out = exec(&env, &server, config);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let requests = server.requests();
    let offered = |request: &Value| request["tools"].as_array().map_or(0, Vec::len);
    assert!(requests.len() >= 2, "{stderr}");
    assert!(
        requests[0].get("response_format").is_none(),
        "{}",
        requests[0]
    );
    assert!(requests[1].get("tool_choice").is_none(), "{}", requests[1]);
    let schema = &requests[1]["response_format"]["json_schema"]["schema"];
    assert_eq!(
        schema["properties"]["name"]["const"], "write_file",
        "{}",
        requests[1]
    );
    assert_eq!(offered(&requests[1]), offered(&requests[0]));
    // The call came back as text and ran.
    let events = json_lines(&out.stdout);
    let results = tool_results(&events);
    assert_eq!(results.len(), 1, "{events:?}");
    assert_eq!(results[0]["payload"]["name"], "write_file");
    assert_eq!(results[0]["payload"]["status"], "ok", "{:?}", results[0]);
    assert!(
        std::fs::read_to_string(env.repo.path().join("app.py"))
            .expect("read")
            .contains("'Hi'")
    );
}

/// A reminder is between the harness and the model: `--json` has it, and
/// human output shows neither its text nor a line about it.
#[test]
fn a_reminder_to_the_model_stays_out_of_human_output() {
    let config = "[models.\"qwen2.5-coder-1.5b\"]\nrecover_text_calls = false\n";
    let env = Env::new(&[("app.py", APP)]);
    let server = Server::start(vec![text(FENCED_EDIT), text(FENCED_EDIT)]);
    let events = json_lines(&exec(&env, &server, config).stdout);
    let reminder = events
        .iter()
        .find(|e| e["type"] == "turn.reminder")
        .and_then(|e| e["payload"]["text"].as_str())
        .expect("a turn.reminder in --json")
        .to_owned();

    let env = Env::new(&[("app.py", APP)]);
    let server = Server::start(vec![text(FENCED_EDIT), text(FENCED_EDIT)]);
    let config_dir = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    std::fs::write(config_dir.join("config.toml"), config).expect("config");
    let mut cmd = env.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .args(["exec", "--guest", "process", "--repo"])
        .arg(env.repo.path())
        .args(["--model", "openai:qwen2.5-coder-1.5b"])
        .arg("Change the greeting to 'Hi'.");
    let out = run(cmd);
    let shown = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(shown.contains("turn failed"), "{shown}");
    for line in reminder.lines().filter(|l| l.trim().len() > 12) {
        assert!(!shown.contains(line.trim()), "{line:?} shown:\n{shown}");
    }
    assert!(
        !shown.contains("reminder") && !shown.contains("asked to check"),
        "{shown}"
    );
}

//! An answer the checks still doubt ends the turn completed but marked
//! unverified: `--json` carries the doubts in `turn.completed`, and human
//! output says so under the turn.

mod common;
mod scripted_openai;

use common::{Env, json_lines, run};
use scripted_openai::{Server, text};

const APP: &str = "def greet():\n    return 'Hello, Cortex'\n";
const GUESS: &str = "It returns 'Hello, world!'.";

fn exec(json: bool) -> std::process::Output {
    let env = Env::new(&[("app.py", APP)]);
    // A guess, checked once, then the same guess again. The file's text is
    // not in the turn's context, so nothing grounds the guess.
    let server = Server::start(vec![text(GUESS), text(GUESS)]);
    let config_dir = env.home.path().join("config/cortex");
    std::fs::create_dir_all(&config_dir).expect("config dir");
    std::fs::write(
        config_dir.join("config.toml"),
        "[models.\"qwen2.5-coder-1.5b\"]\nverify_answers = true\ncontext_window = 8192\nmax_output_tokens = 2048\nfiles_in_prompt = 0\n",
    )
    .expect("config");
    let mut cmd = env.command();
    cmd.env("OPENAI_BASE_URL", server.base_url())
        .env("OPENAI_API_KEY", "sk-local")
        .arg("exec");
    if json {
        cmd.arg("--json");
    }
    cmd.args(["--guest", "process", "--repo"])
        .arg(env.repo.path())
        .args(["--model", "openai:qwen2.5-coder-1.5b"])
        .arg("What does greet() in app.py return?");
    run(cmd)
}

#[test]
fn a_guess_given_twice_is_completed_unverified() {
    let out = exec(true);
    assert!(out.status.success(), "{out:?}");
    let events = json_lines(&out.stdout);
    let completed = events
        .iter()
        .find(|e| e["type"] == "turn.completed")
        .expect("turn.completed");
    assert_eq!(
        completed["payload"]["unverified"][0]["check"], "unchecked",
        "{events:?}"
    );

    let out = exec(false);
    assert!(out.status.success(), "{out:?}");
    let shown = String::from_utf8_lossy(&out.stderr);
    assert!(
        shown.contains("unverified: the answer is not based on any successful tool call"),
        "{shown}"
    );
    assert!(shown.contains("turn completed"), "{shown}");
}

//! Hostile strings through the real CLI: a scripted model whose text, tool
//! names, tool arguments and command output carry terminal attacks (OSC 52,
//! OSC 0, CSI cursor movement, a lone carriage return, an 8-bit CSI, a bidi
//! override), in a repository whose path and file names carry them too. Human
//! output (`exec`, `sessions list`, `sessions show`) must show every one of
//! them escaped and write nothing a terminal acts on; `--json` must stay
//! valid JSON whose strings are exactly what was produced.

mod common;

use common::{Env, json_lines, run, run_ok};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Model text: every class of attack at once.
const TEXT: &str = "clip \x1b]52;c;cm0gLXJmIH4=\x07 title \x1b]0;pwned\x1b\\ up \x1b[2A\x1b[2K \
                    c1 \u{9b}31m bidi \u{202e}cba safe\rlie";
/// What bash prints (written with printf escapes in the command itself).
const PRINTF: &str =
    r"printf 'out \033]52;c;eA==\007 \033[H\033[2J \302\233 \342\200\256x end\rgot\n'";
/// An argument with raw escapes in it.
const HOSTILE_PATH: &str = "no\x1b[31mpe\u{9b}\u{202e}.txt";

/// Every character a terminal would act on: C0 but newline and tab (a
/// carriage return included: the sanitiser drops the one of a CRLF), DEL,
/// C1, bidi controls.
fn acts_on_terminal(c: char) -> bool {
    matches!(c, '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn assert_terminal_safe(bytes: &[u8], what: &str) -> String {
    let text = String::from_utf8(bytes.to_vec()).expect("human output is UTF-8");
    if let Some((at, c)) = text.char_indices().find(|(_, c)| acts_on_terminal(*c)) {
        let start = text.floor_char_boundary(at.saturating_sub(60));
        panic!(
            "{what}: {c:?} at byte {at} reaches the terminal: …{:?}",
            &text[start..text.ceil_char_boundary(at + 20)]
        );
    }
    text
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .expect("git");
    assert!(status.success(), "git {args:?}");
}

/// A git repository in a folder whose name is an escape sequence, with a
/// hostile file name and a committed `.cortex/setup` that prints attacks.
fn hostile_repo(env: &Env) -> PathBuf {
    let repo = env.repo.path().join("repo\x1b]0;x\x07\u{9b}");
    std::fs::create_dir_all(repo.join(".cortex")).expect("mkdir");
    std::fs::write(repo.join("file\x1b[2J\rname.txt"), "x\n").expect("write");
    std::fs::write(
        repo.join(".cortex/setup"),
        "printf 'setup \\033]52;c;eA==\\007 \\302\\233 done\\n'\n",
    )
    .expect("setup");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-qm", "init"]);
    repo
}

fn script(env: &Env) -> PathBuf {
    env.script(json!({"responses": [
        {"text": TEXT, "tool_calls": [
            {"name": "bash", "arguments": {"command": format!("{PRINTF} # \x1b]0;arg\x07")}},
            {"name": "read_file", "arguments": {"path": HOSTILE_PATH}},
            {"name": "evil\x1b]52;c;eA==\x07tool", "arguments": {}},
            {"name": "glob", "arguments": {"pattern": "*\u{9b}*"}}
        ]},
        {"text": "done \x1b[?1049h"}
    ]}))
}

fn exec(env: &Env, repo: &Path, script: &Path, json: bool) -> std::process::Output {
    let mut cmd = env.command();
    cmd.arg("exec")
        .arg("--repo")
        .arg(repo)
        .arg("--mode")
        .arg("agent")
        .arg("--model")
        .arg(format!("scripted:{}", script.display()));
    if json {
        cmd.arg("--json");
    }
    cmd.arg("fix \x1b]0;owned\x07 it\rnow \u{202e}");
    run(cmd)
}

fn session_id(events: &[Value]) -> String {
    events[0]["session_id"]
        .as_str()
        .expect("session id")
        .to_owned()
}

#[test]
fn human_exec_output_shows_every_attack_escaped() {
    let env = Env::new(&[]);
    let repo = hostile_repo(&env);
    let out = exec(&env, &repo, &script(&env), false);
    let stdout = assert_terminal_safe(&out.stdout, "exec stdout");
    let stderr = assert_terminal_safe(&out.stderr, "exec stderr");
    assert!(stderr.contains("turn completed"), "{stderr}");
    // The model's text, shown escaped rather than dropped.
    assert!(stdout.contains("clip ^[]52;c;cm0gLXJmIH4=^G"), "{stdout}");
    assert!(
        stdout.contains("c1 \\x9b31m bidi \\u{202e}cba safe^Mlie"),
        "{stdout}"
    );
    // Command output, tool arguments and a tool name the model made up.
    assert!(
        stdout.contains("│ out ^[]52;c;eA==^G ^[[H^[[2J \\x9b \\u{202e}x end^Mgot"),
        "{stdout}"
    );
    assert!(stdout.contains("bash printf"), "{stdout}");
    assert!(
        stdout.contains("read_file no^[[31mpe\\x9b\\u{202e}.txt · error"),
        "{stdout}"
    );
    assert!(stdout.contains("evil^[]52;c;eA==^Gtool"), "{stdout}");
    // The setup's output and the repository's path on stderr.
    assert!(
        stderr.contains("setup ^[]52;c;eA==^G \\x9b done"),
        "{stderr}"
    );
    assert!(stderr.contains("repo^[]0;x^G\\x9b"), "{stderr}");
}

#[test]
fn json_output_is_exact_and_sessions_list_and_show_are_escaped() {
    let env = Env::new(&[]);
    let repo = hostile_repo(&env);
    let out = exec(&env, &repo, &script(&env), true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Valid JSON on every line, and the strings exactly as produced.
    let events = json_lines(&out.stdout);
    let raw = String::from_utf8(out.stdout.clone()).expect("UTF-8");
    assert!(
        !raw.contains('\u{9b}') && !raw.contains('\u{202e}'),
        "{raw}"
    );
    let done: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "message.done")
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect();
    assert_eq!(done, [TEXT, "done \x1b[?1049h"]);
    let output: String = events
        .iter()
        .filter(|e| e["type"] == "tool.output.delta")
        .filter_map(|e| e["payload"]["text"].as_str())
        .collect();
    assert_eq!(
        output,
        "out \x1b]52;c;eA==\x07 \x1b[H\x1b[2J \u{9b} \u{202e}x end\rgot\n"
    );
    let call = events
        .iter()
        .find(|e| e["type"] == "tool.call" && e["payload"]["name"] == "read_file")
        .expect("read_file call");
    let args: Value =
        serde_json::from_str(call["payload"]["arguments"].as_str().expect("args")).expect("json");
    assert_eq!(args["path"], HOSTILE_PATH);
    let session = session_id(&events);

    // `sessions list`: the title (the first message) and the repository's
    // path escaped on one line; `--json` exact.
    let list = run_ok({
        let mut c = env.command();
        c.args(["sessions", "list"]);
        c
    });
    let listed = assert_terminal_safe(&list.stdout, "sessions list");
    let row = listed
        .lines()
        .find(|l| l.starts_with(&session))
        .unwrap_or_else(|| panic!("{listed}"));
    assert!(row.contains("repo^[]0;x^G\\x9b"), "{row}");
    assert!(row.contains("fix ^[]0;owned^G it^Mnow \\u{202e}"), "{row}");
    let list_json = run_ok({
        let mut c = env.command();
        c.args(["sessions", "list", "--json"]);
        c
    });
    let rows = json_lines(&list_json.stdout);
    let mine = rows
        .iter()
        .find(|r| r["id"] == session.as_str())
        .expect("listed");
    assert_eq!(mine["title"], "fix \x1b]0;owned\x07 it\rnow \u{202e}");
    assert_eq!(
        mine["repository"].as_str().map(PathBuf::from),
        Some(repo.canonicalize().expect("canonical"))
    );

    // `sessions show`: the replay is escaped like the live output.
    let show = run_ok({
        let mut c = env.command();
        c.args(["sessions", "show", &session]);
        c
    });
    let shown = assert_terminal_safe(&show.stdout, "sessions show stdout");
    assert_terminal_safe(&show.stderr, "sessions show stderr");
    assert!(shown.contains("clip ^[]52;c;cm0gLXJmIH4=^G"), "{shown}");
    assert!(shown.contains("evil^[]52;c;eA==^Gtool"), "{shown}");
    let show_json = run_ok({
        let mut c = env.command();
        c.args(["sessions", "show", &session, "--json"]);
        c
    });
    assert_eq!(json_lines(&show_json.stdout), events);
}

#[test]
fn an_error_quoting_hostile_input_is_escaped() {
    let env = Env::new(&[]);
    let script = env.script(json!({"responses": [{"text": "x"}]}));
    let mut cmd = env.command();
    cmd.args([
        "exec",
        "--repo",
        "/no/such/\x1b]52;c;eA==\x07repo",
        "--model",
    ])
    .arg(format!("scripted:{}", script.display()))
    .arg("hi");
    let out = run(cmd);
    assert_eq!(out.status.code(), Some(1));
    let stderr = assert_terminal_safe(&out.stderr, "error");
    assert!(stderr.contains("/no/such/^[]52;c;eA==^Grepo"), "{stderr}");
}

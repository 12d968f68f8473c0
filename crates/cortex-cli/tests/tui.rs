//! The terminal UI end to end: the real `cortex` binary in a 40×12 tmux
//! pane (`send-keys` to type, `capture-pane` to read the screen), against
//! a scripted model served over HTTP on loopback in the OpenAI Chat
//! Completions format. Each records a `tmux` skip where tmux is not installed.

mod common;
mod scripted_openai;

use common::{Env, pid_alive};
use scripted_openai::{Server, call, text};
use serde_json::json;
use std::process::Command;
use std::time::{Duration, Instant};

/// Longest wait for something to appear on screen (a generous bound for a
/// loaded machine; a passing run takes a fraction of it).
const PATIENCE: Duration = Duration::from_secs(60);

/// A tmux server of its own (`-L`), so nothing else's sessions are
/// touched, running one 40×12 pane.
struct Pane {
    socket: String,
}

impl Pane {
    /// A pane running a plain shell with `env` (and nothing else from this
    /// process's environment).
    fn shell(env: &[(String, String)]) -> Option<Pane> {
        if Command::new("tmux").arg("-V").output().is_err() {
            cortex_testkit::skip_current("tmux", "tmux is not installed");
            return None;
        }
        let socket = format!(
            "cortex-tui-test-{}-{}",
            std::process::id(),
            common::rand_suffix()
        );
        let mut command = String::from("env -i TERM=tmux-256color PS1='$ '");
        for (name, value) in env {
            command.push_str(&format!(" {name}='{value}'"));
        }
        command.push_str(" bash --norc --noprofile");
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "t",
            ])
            .args(["-x", "40", "-y", "12", &command])
            .status()
            .expect("tmux");
        assert!(status.success(), "tmux new-session");
        Some(Pane { socket })
    }

    fn tmux(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket])
            .args(args)
            .output()
            .expect("tmux");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Type `text` literally.
    fn type_text(&self, text: &str) {
        self.tmux(&["send-keys", "-t", "t", "-l", text]);
    }

    /// Press keys by tmux name (`Enter`, `Escape`, `BTab`, `C-c`).
    fn press(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        self.tmux(&args);
    }

    fn screen(&self) -> String {
        self.tmux(&["capture-pane", "-p", "-t", "t"])
    }

    /// A pane variable (`alternate_on`, `mouse_any_flag`, …).
    fn flag(&self, name: &str) -> String {
        self.tmux(&["display-message", "-p", "-t", "t", &format!("#{{{name}}}")])
            .trim()
            .to_owned()
    }

    /// Wait until the screen satisfies `check`; panics with the screen.
    fn wait_for(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if Instant::now() > deadline {
                panic!("never saw {what}; the screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn wait_text(&self, needle: &str) -> String {
        self.wait_for(needle, |s| s.contains(needle))
    }
}

impl Drop for Pane {
    fn drop(&mut self) {
        self.tmux(&["kill-server"]);
    }
}

/// The shell in the pane starts `cortex` (the UI) on `env`'s repository
/// against `server`.
fn start(env: &Env, server: &Server, extra: &str) -> Option<Pane> {
    start_after(env, server, extra, None)
}

/// As [`start`], with `prelude` typed into the shell first.
fn start_after(env: &Env, server: &Server, extra: &str, prelude: Option<&str>) -> Option<Pane> {
    let home = env.home.path().display().to_string();
    let vars = vec![
        ("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()),
        ("HOME".to_owned(), home.clone()),
        ("XDG_DATA_HOME".to_owned(), format!("{home}/data")),
        ("XDG_CONFIG_HOME".to_owned(), format!("{home}/config")),
        ("XDG_RUNTIME_DIR".to_owned(), format!("{home}/run")),
        ("OPENAI_BASE_URL".to_owned(), server.base_url()),
    ];
    std::fs::create_dir_all(format!("{home}/run")).expect("runtime dir");
    let pane = Pane::shell(&vars)?;
    pane.wait_text("$");
    if let Some(prelude) = prelude {
        pane.type_text(prelude);
        pane.press(&["Enter"]);
    }
    // The UI's own default is `ask`; these tests answer nothing unless
    // they say `--approval` themselves.
    let approval = if extra.contains("--approval") {
        ""
    } else {
        "--approval auto"
    };
    pane.type_text(&format!(
        "{} --repo {} --model openai:scripted --guest process {approval} {extra}",
        env!("CARGO_BIN_EXE_cortex"),
        env.repo.path().display()
    ));
    pane.press(&["Enter"]);
    pane.wait_text("? help");
    Some(pane)
}

fn bug_repo() -> Env {
    Env::new(&[
        ("calc.py", "def add(a, b):\n    return a - b\n"),
        (
            "test_calc.py",
            "from calc import add\nassert add(2, 2) == 4, add(2, 2)\nprint('tests pass')\n",
        ),
    ])
}

#[test]
fn a_prompt_runs_tool_rows_to_completion_and_fixes_the_bug() {
    let env = bug_repo();
    let server = Server::start(vec![
        call("read_file", json!({"path": "calc.py"})),
        call(
            "edit_file",
            json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        call("bash", json!({"command": "python3 test_calc.py"})),
        text("Fixed: add subtracted."),
    ]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    assert!(pane.screen().contains("Agent"), "{}", pane.screen());
    pane.type_text("fix the failing test");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("─ done");
    assert!(screen.contains("✓ bash python3 test_calc.py"), "{screen}");
    assert!(screen.contains("tests pass"), "{screen}");
    assert!(screen.contains("Fixed: add subtracted."), "{screen}");
    let fixed = std::fs::read_to_string(env.repo.path().join("calc.py")).expect("calc.py");
    assert!(fixed.contains("return a + b"), "{fixed}");
    // The earlier rows are a page up.
    pane.press(&["PageUp"]);
    let earlier = pane.wait_text("edit_file calc.py");
    assert!(earlier.contains("✓ edit_file calc.py"), "{earlier}");
    assert!(earlier.contains("+     return a + b"), "{earlier}");
    assert_eq!(server.requests().len(), 4);
}

/// The UI's approval prompt: the call waits until `y` allows it once.
#[test]
fn a_waiting_call_runs_once_y_allows_it() {
    let env = bug_repo();
    let server = Server::start(vec![
        call("bash", json!({"command": "touch approved.txt"})),
        text("Touched."),
    ]);
    let Some(pane) = start(&env, &server, "--approval ask") else {
        return;
    };
    pane.type_text("touch it");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("y allow");
    assert!(!env.repo.path().join("approved.txt").exists(), "{screen}");
    pane.press(&["y"]);
    let screen = pane.wait_text("─ done");
    assert!(screen.contains("approval: allow"), "{screen}");
    assert!(env.repo.path().join("approved.txt").exists());
}

#[test]
fn esc_during_a_long_bash_stops_the_turn_and_leaves_nothing_running() {
    let env = bug_repo();
    let server = Server::start(vec![
        call("bash", json!({"command": "echo pid=$$; sleep 600"})),
        text("never said"),
    ]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    pane.type_text("sleep");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("│ pid=");
    let pid: i32 = screen
        .lines()
        .find_map(|l| l.split("│ pid=").nth(1))
        .and_then(|p| p.split_whitespace().next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no pid on screen:\n{screen}"));
    assert!(pid_alive(pid));
    pane.press(&["Escape"]);
    let screen = pane.wait_text("■ stopped");
    assert!(screen.contains("■ bash"), "{screen}");
    let deadline = Instant::now() + PATIENCE;
    while pid_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!pid_alive(pid), "the command survived the stop");
    assert!(!screen.contains("never said"), "{screen}");
    assert_eq!(server.requests().len(), 1, "no model round after the stop");
}

#[test]
fn shift_tab_changes_the_border_mode_and_the_sessions_mode() {
    let env = bug_repo();
    let server = Server::start(vec![]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    assert!(pane.screen().contains("╭ Agent"), "{}", pane.screen());
    pane.press(&["BTab"]);
    pane.wait_text("╭ Ask");
    pane.press(&["BTab"]);
    pane.wait_text("╭ Plan");
    pane.wait_text("mode Agent → Ask");
    pane.wait_text("mode Ask → Plan");
    // The stored session says so too.
    let out = common::run({
        let mut c = env.command();
        c.env("XDG_RUNTIME_DIR", env.home.path().join("run"))
            .args(["sessions", "list", "--json"]);
        c
    });
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("\"mode\":\"plan\""), "{listed}");
}

#[test]
fn ctrl_c_twice_quits_with_the_terminal_restored() {
    let env = bug_repo();
    let server = Server::start(vec![]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    assert_eq!(pane.flag("alternate_on"), "1");
    pane.type_text("a draft");
    pane.press(&["C-c"]);
    let screen = pane.wait_text("Ctrl+C again to quit");
    assert!(
        !screen.contains("a draft"),
        "Ctrl+C clears the composer: {screen}"
    );
    pane.press(&["C-c"]);
    pane.wait_text("cortex attach");
    assert_eq!(pane.flag("alternate_on"), "0", "left the alternate screen");
    assert_eq!(pane.flag("mouse_any_flag"), "0", "mouse reporting off");
    pane.type_text("echo ECHO=$(stty -a | tr ' ;' '\\n\\n' | grep -x -e echo -e -echo)");
    pane.press(&["Enter"]);
    pane.wait_text("ECHO=echo");
}

/// The children of `parent`, from `/proc`.
fn children(parent: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| stat(*pid).is_some_and(|(_, ppid)| ppid == parent))
        .collect()
}

/// The first process below `root` whose command name is `name`.
fn named_descendant(root: i32, name: &str) -> Option<i32> {
    let mut queue = vec![root];
    while let Some(pid) = queue.pop() {
        for child in children(pid) {
            let comm = std::fs::read_to_string(format!("/proc/{child}/comm")).unwrap_or_default();
            if comm.trim() == name {
                return Some(child);
            }
            queue.push(child);
        }
    }
    None
}

/// A process's state letter and parent, from `/proc/PID/stat`.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: read after it.
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some((state, ppid))
}

/// Kills the process when dropped, so a failing test leaves nothing behind.
struct KillOnDrop(i32);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        // SAFETY: kill(2) with a pid this test found and a valid signal.
        unsafe { libc::kill(self.0, libc::SIGKILL) };
    }
}

#[test]
fn a_terminal_that_goes_away_ends_the_ui_even_when_no_sighup_reaches_it() {
    let env = bug_repo();
    let server = Server::start(vec![]);
    // A shell that ignores SIGHUP does not pass it on to its jobs (as under
    // `nohup` or some multiplexers): the UI learns of the hang-up only
    // from the terminal itself.
    let Some(pane) = start_after(&env, &server, "", Some("trap '' HUP")) else {
        return;
    };
    let shell: i32 = pane
        .tmux(&["display-message", "-p", "-t", "t", "#{pane_pid}"])
        .trim()
        .parse()
        .expect("pane pid");
    let ui = named_descendant(shell, "cortex").expect("the UI runs under the pane's shell");
    let _cleanup = KillOnDrop(ui);
    pane.tmux(&["kill-server"]);
    let deadline = Instant::now() + PATIENCE;
    while stat(ui).is_some_and(|(state, _)| state != 'Z') {
        assert!(
            Instant::now() < deadline,
            "the UI (pid {ui}) is still running after its terminal went away"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn without_a_terminal_it_points_to_exec() {
    let env = bug_repo();
    let out = common::run({
        let mut c = env.command();
        c.arg("--repo").arg(env.repo.path());
        c
    });
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cortex exec"), "{stderr}");
    // Drawing nothing: no escape sequence reached stdout.
    assert!(out.stdout.is_empty());
}

/// The plan view's verdict keys against the real API: Ctrl+R with
/// feedback asks again in Plan mode, Ctrl+Y accepts and the plan runs in
/// Agent mode.
#[test]
fn ctrl_r_rejects_with_feedback_and_ctrl_y_accepts_the_plan() {
    let env = bug_repo();
    let plan = |steps: &str| {
        call(
            "plan",
            json!({"title": "Fix add", "markdown": format!("{steps}\n```mermaid\nflowchart TD\n  A[calc.py] --> B[tests]\n```\n")}),
        )
    };
    let server = Server::start(vec![
        plan("1. edit calc.py"),
        text("Proposed."),
        plan("1. edit calc.py\n2. run the tests"),
        text("Proposed again."),
        call(
            "edit_file",
            json!({"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
        ),
        text("Fixed."),
    ]);
    let Some(pane) = start(&env, &server, "--mode plan") else {
        return;
    };
    pane.type_text("plan the fix");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("plan v1 · ^Y accept");
    assert!(screen.contains("│ tests │"), "the chart is drawn: {screen}");
    pane.press(&["C-r"]);
    pane.type_text("run the tests too");
    pane.press(&["Enter"]);
    pane.wait_text("plan v2 · ^Y accept");
    pane.press(&["C-y"]);
    let screen = pane.wait_text("Fixed.");
    assert!(screen.contains("Agent"), "{screen}");
    let fixed = std::fs::read_to_string(env.repo.path().join("calc.py")).expect("calc.py");
    assert!(fixed.contains("return a + b"), "{fixed}");
    let requests = server.requests();
    assert!(
        requests[2].to_string().contains("run the tests too"),
        "the feedback is the next message"
    );
}

/// A custom command typed in the UI (issue 40, item 1): `/review a.txt the
/// style` runs the repository's `.cortex/commands/review.md` with its
/// arguments substituted and the file `@$1` names given with it (read in
/// the guest), in the session's mode whatever the front matter says.
#[test]
fn a_custom_command_runs_with_its_arguments_and_an_included_file() {
    let env = Env::new(&[("a.txt", "alpha line\n")]);
    let commands = env.repo.path().join(".cortex/commands");
    std::fs::create_dir_all(&commands).expect("mkdir");
    std::fs::write(
        commands.join("review.md"),
        "---\ndescription: Review a file\nmode: agent\n---\nReview @$1 for $2.\n",
    )
    .expect("write");
    let server = Server::start(vec![text("Reviewed it.")]);
    let Some(pane) = start(&env, &server, "--mode ask") else {
        return;
    };
    pane.type_text("/review a.txt 'the style'");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("─ done");
    assert!(screen.contains("Reviewed it."), "{screen}");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let messages = requests[0]["messages"].as_array().expect("messages");
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .expect("a user message");
    // The turn's context (the repository's files) comes first, then the
    // included file, read in the guest, then the command's text.
    assert!(
        user["content"].as_str().unwrap_or_default().ends_with(
            "\n\nThe files the command includes (`@path`), read from the workspace:\n\n\
             `a.txt`:\n```\nalpha line\n```\n\nReview @a.txt for the style."
        ),
        "{user}"
    );
    // The front matter's `mode: agent` was not applied.
    let tools: Vec<&str> = requests[0]["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(!tools.contains(&"write_file"), "{tools:?}");
    assert!(pane.screen().contains("Ask"), "{}", pane.screen());
}

/// A repository's hook file trusted from the UI (issue 40, item 4): before
/// the trust its hook does not run; the session's `hooks.untrusted` opens a
/// prompt naming the file and its hook, `y` trusts that content (the call
/// `/hooks trust` makes), and from the next turn it runs (in the guest), its
/// context reaching the model.
#[test]
fn hooks_trust_in_the_ui_runs_the_repositorys_hook_from_the_next_turn() {
    let env = Env::new(&[("a.txt", "alpha\n")]);
    let hooks = json!({"hooks": {"UserPromptSubmit": [{"hooks": [
        {"type": "command", "command": "cat >/dev/null; echo 'hook says: tabs only'"}
    ]}]}});
    std::fs::create_dir_all(env.repo.path().join(".cortex")).expect("mkdir");
    std::fs::write(
        env.repo.path().join(".cortex/hooks.json"),
        hooks.to_string(),
    )
    .expect("write");
    let server = Server::start(vec![text("First."), text("Second.")]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    pane.type_text("one");
    pane.press(&["Enter"]);
    // The first turn finds the file untrusted: the prompt names it and its
    // hook, over the transcript.
    let screen = pane.wait_text("Trust the repository's hooks?");
    assert!(screen.contains(".cortex/hooks.json has 1 hook"), "{screen}");
    assert!(screen.contains("UserPromptSubmit"), "{screen}");
    pane.type_text("y");
    let trust = env.home.path().join("data/cortex/trusted-hooks.json");
    pane.wait_for("the trust recorded", |_| trust.exists());
    pane.wait_text("First.");
    pane.type_text("two");
    pane.press(&["Enter"]);
    pane.wait_text("Second.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        !requests[0].to_string().contains("hook says: tabs only"),
        "an untrusted hook ran"
    );
    assert!(
        requests[1].to_string().contains("hook says: tabs only"),
        "{}",
        requests[1]
    );
}

/// The first screen names the project instructions, `/status` lists them,
/// and Esc Esc rewinds what the turn's `bash` did, asking first about the
/// file the user changed since.
#[test]
fn instructions_are_named_and_esc_esc_rewinds_after_asking_about_the_users_file() {
    let env = Env::new(&[
        ("AGENTS.md", "Run the tests with make.\n"),
        ("notes.txt", "alpha\n"),
        ("old.txt", "old\n"),
    ]);
    let server = Server::start(vec![
        call(
            "bash",
            json!({"command": "echo beta > notes.txt && rm old.txt && mkdir sub && echo x > sub/new.txt"}),
        ),
        text("Changed."),
    ]);
    let Some(pane) = start(&env, &server, "") else {
        return;
    };
    pane.wait_text("instructions: AGENTS.md · given");
    pane.type_text("change things");
    pane.press(&["Enter"]);
    pane.wait_text("─ done");
    let repo = env.repo.path();
    assert!(!repo.join("old.txt").exists());
    pane.type_text("/status");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("status: session");
    assert!(screen.contains("instructions: AGENTS.md ("), "{screen}");

    // The user edits the file the turn changed.
    std::fs::write(repo.join("notes.txt"), "mine\n").expect("user edit");
    pane.press(&["Escape"]);
    std::thread::sleep(Duration::from_millis(300));
    pane.press(&["Escape"]);
    pane.wait_text("1. change things");
    pane.press(&["Enter"]);
    let screen = pane.wait_text("[both]");
    assert!(screen.contains("notes.txt"), "{screen}");
    pane.press(&["Enter"]);
    pane.wait_text("y overwrites 1");
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).expect("notes"),
        "mine\n",
        "nothing is overwritten before the answer"
    );
    pane.press(&["y"]);
    pane.wait_text("rewound to before");
    assert_eq!(
        std::fs::read_to_string(repo.join("notes.txt")).expect("notes"),
        "alpha\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("old.txt")).expect("old.txt back"),
        "old\n"
    );
    assert!(
        !repo.join("sub").exists(),
        "the folder the turn made is gone"
    );
}

//! Background commands through `cortex exec` and the real local sandbox
//! (issue 41, item 4): a server the model starts in the background is
//! reached by a later `bash` call on the guest's loopback, read with
//! `bash_output` and ended with `bash_kill` (its child with it); a stopped
//! turn leaves a background command running (the sandbox's Stop, which ends
//! every other process of the guest, spares its process group) and the
//! session's end kills it; a guest that dies takes them with it, and they
//! are reported ended. Skipped (`userns`) where the sandbox cannot start.

mod common;

use common::{Env, json_lines, read_until, run, run_ok};
use serde_json::{Value, json};
use std::process::Stdio;

/// A server on a free loopback port: writes the port to `port` once it
/// listens, prints each path it serves.
const SERVER: &str = r#"import http.server, os, sys
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        print("served " + self.path, flush=True)
        body = b"hello from the background\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
with open("port.tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename("port.tmp", "port")
print("listening", flush=True)
server.serve_forever()
"#;

fn call(name: &str, arguments: Value) -> Value {
    json!({"tool_calls": [{"name": name, "arguments": arguments}]})
}

fn bash(command: &str) -> Value {
    call("bash", json!({ "command": command }))
}

fn of_type<'a>(events: &'a [Value], kind: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["type"] == kind).collect()
}

fn results(events: &[Value]) -> Vec<String> {
    of_type(events, "tool.result")
        .iter()
        .map(|e| {
            e["payload"]["output"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// Whether the sandbox could not start here (then the test is skipped).
fn no_sandbox(stderr: &[u8]) -> bool {
    let stderr = String::from_utf8_lossy(stderr);
    let missing = stderr.contains("cannot create the guest's namespaces");
    if missing {
        cortex_testkit::skip_current("userns", "user namespaces are not available here");
    }
    missing
}

/// Host processes whose command line holds `marker`.
fn with_marker(marker: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
        .filter(|c| c.contains(marker))
        .collect()
}

fn stored(env: &Env, session: &str) -> Vec<Value> {
    let mut show = env.command();
    show.args(["sessions", "show", session, "--json"]);
    json_lines(&run_ok(show).stdout)
}

#[test]
fn a_background_server_in_the_sandbox_is_reached_on_loopback_and_killed() {
    let env = Env::new(&[("server.py", SERVER)]);
    let marker = format!("cortex-bg-{}", common::rand_suffix());
    let start = format!("sleep 1000 & echo $! > child.pid; exec python3 -u server.py {marker}");
    let fetch = "for i in $(seq 200); do [ -s port ] && break; sleep 0.05; done; \
        curl -s http://127.0.0.1:$(cat port)/a";
    let check_child = "kill -0 $(cat child.pid) 2>/dev/null && echo child alive || echo child gone";
    let script = env.script(json!({"responses": [
        call("bash", json!({"command": start, "background": true})),
        bash(fetch),
        call("bash_output", json!({"id": "bg1"})),
        bash(check_child),
        call("bash_kill", json!({"id": "bg1"})),
        bash(check_child),
        {"text": "Done."},
    ]}));
    let out = run(env.exec(&script, &["--json", "--approval", "auto"], "Serve."));
    if no_sandbox(&out.stderr) {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out.stdout);
    let outputs = results(&events);
    assert!(
        outputs[0].starts_with("Started in the background as bg1"),
        "{outputs:?}"
    );
    // curl in the guest reached the server on the guest's own loopback.
    assert!(
        outputs[1].starts_with("hello from the background"),
        "{outputs:?}"
    );
    assert!(outputs[2].starts_with("bg1 is running"), "{outputs:?}");
    assert!(outputs[3].starts_with("child alive"), "{outputs:?}");
    assert_eq!(outputs[4], "bg1 was killed, with everything it started.");
    assert!(outputs[5].starts_with("child gone"), "{outputs:?}");
    let started = of_type(&events, "process.started");
    assert_eq!(started.len(), 1, "{events:?}");
    assert_eq!(started[0]["payload"]["id"], "bg1");
    // Nothing of it outlives the session.
    assert_eq!(with_marker(&marker), Vec::<String>::new());
    let session = events[0]["session_id"].as_str().expect("session id");
    let ended: Vec<String> = of_type(&stored(&env, session), "process.ended")
        .iter()
        .map(|e| {
            e["payload"]["reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(ended, ["killed by bash_kill"]);
}

#[test]
fn a_stopped_turn_in_the_sandbox_spares_the_background_command_until_the_session_ends() {
    let env = Env::new(&[]);
    let marker = format!("cortex-bg-{}", common::rand_suffix());
    // The marker rides in its command line, where the host's /proc shows it.
    let sleeper = format!("exec python3 -c 'import time; time.sleep(1000)' {marker}");
    let script = env.script(json!({"responses": [
        call("bash", json!({"command": sleeper, "background": true})),
        // A command that escapes its group: Stop still ends it.
        bash("setsid sleep 1000 & echo running; sleep 1000"),
        {"text": "never"},
    ]}));
    let mut child = env
        .exec(&script, &["--json", "--approval", "auto"], "Serve.")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stderr = child.stderr.take().expect("stderr");
    let errors = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut stderr, &mut text);
        text
    });
    let seen = read_until(&mut child, |e| {
        e["type"] == "runtime.failed"
            || (e["type"] == "tool.output.delta"
                && e["payload"]["text"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("running"))
    });
    if seen.iter().any(|e| e["type"] == "runtime.failed") {
        let _ = child.wait();
        if no_sandbox(&errors.join().unwrap_or_default()) {
            return;
        }
        panic!("the guest did not start: {seen:?}");
    }
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(130));
    assert_eq!(with_marker(&marker), Vec::<String>::new());
    let session = seen[0]["session_id"].as_str().expect("session id");
    let events = stored(&env, session);
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    let stopped = kinds.iter().position(|k| *k == "turn.stopped");
    let ended = kinds.iter().position(|k| *k == "process.ended");
    assert!(
        stopped.is_some() && ended > stopped,
        "the background command ended before the turn's Stop: {kinds:?}"
    );
    let ended = of_type(&events, "process.ended");
    // Ended by the session's end, not by the Stop's kill of the guest.
    assert_eq!(
        ended[0]["payload"]["reason"], "killed: the session closed",
        "{ended:?}"
    );
}

#[test]
fn a_guest_that_dies_reports_its_background_commands_ended_and_the_next_call_reattaches() {
    let env = Env::new(&[]);
    let marker = format!("cortex-bg-{}", common::rand_suffix());
    let sleeper = format!("exec python3 -c 'import time; time.sleep(1000)' {marker}");
    let script = env.script(json!({"responses": [
        call("bash", json!({"command": sleeper, "background": true})),
        // The command's parent is the guest's agent: it dies, the guest with it.
        bash("kill -9 $PPID"),
        bash("echo again"),
        {"text": "Done."},
    ]}));
    let out = run(env.exec(&script, &["--json", "--approval", "auto"], "Serve."));
    if no_sandbox(&out.stderr) {
        return;
    }
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let events = json_lines(&out.stdout);
    let ended = of_type(&events, "process.ended");
    assert_eq!(ended.len(), 1, "{events:?}");
    assert_eq!(ended[0]["payload"]["reason"], "the guest ended");
    // A fresh guest ran the next call.
    assert_eq!(of_type(&events, "runtime.attached").len(), 2, "{events:?}");
    let outputs = results(&events);
    assert!(outputs[2].starts_with("again"), "{outputs:?}");
    assert_eq!(with_marker(&marker), Vec::<String>::new());
}

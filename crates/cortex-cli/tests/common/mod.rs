//! Shared by the CLI's end-to-end tests: the real `cortex` binary with a
//! private data and config folder, a scripted model, and JSON-line readers.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub struct Env {
    pub home: tempfile::TempDir,
    pub repo: tempfile::TempDir,
}

impl Env {
    pub fn new(files: &[(&str, &str)]) -> Env {
        let env = Env {
            home: tempfile::tempdir().expect("home"),
            repo: tempfile::tempdir().expect("repo"),
        };
        for (path, content) in files {
            std::fs::write(env.repo.path().join(path), content).expect("write");
        }
        env
    }

    pub fn script(&self, script: Value) -> PathBuf {
        let path = self
            .home
            .path()
            .join(format!("script-{}.json", rand_suffix()));
        std::fs::write(&path, script.to_string()).expect("script");
        path
    }

    pub fn command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cortex"));
        cmd.env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("HOME", self.home.path())
            .env_remove("OPENAI_API_KEY")
            .env_remove("OPENAI_BASE_URL")
            .stdin(Stdio::null());
        cmd
    }

    pub fn exec(&self, script: &Path, extra: &[&str], prompt: &str) -> Command {
        let mut cmd = self.command();
        cmd.arg("exec")
            .arg("--repo")
            .arg(self.repo.path())
            .arg("--model")
            .arg(format!("scripted:{}", script.display()))
            .args(extra)
            .arg(prompt);
        cmd
    }
}

pub fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default()
}

pub fn json_lines(output: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(output)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}")))
        .collect()
}

pub fn types(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default().to_owned())
        .collect()
}

pub fn run(mut cmd: Command) -> Output {
    cmd.output().expect("run cortex")
}

/// [`run`], which must succeed (its stderr is the failure message).
pub fn run_ok(cmd: Command) -> Output {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn pid_alive(pid: i32) -> bool {
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Read JSON lines from a running `cortex exec --json` until `until` matches.
pub fn read_until(child: &mut Child, until: impl Fn(&Value) -> bool) -> Vec<Value> {
    let stdout = child.stdout.take().expect("stdout");
    let mut reader = BufReader::new(stdout);
    let mut seen = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if reader.read_line(&mut line).expect("read") == 0 {
            panic!("cortex exited before the expected event: {seen:?}");
        }
        let event: Value = serde_json::from_str(&line).expect("json line");
        let done = until(&event);
        seen.push(event);
        if done {
            // Keep draining in the background so the child never blocks.
            std::thread::spawn(move || {
                let mut rest = String::new();
                while reader.read_line(&mut rest).map(|n| n > 0).unwrap_or(false) {
                    rest.clear();
                }
            });
            return seen;
        }
    }
}

/// One HTTP/1.1 request read from `socket`: its request line and headers,
/// and its body (as long as its `Content-Length` says).
pub fn read_request(socket: &std::net::TcpStream) -> (String, Vec<u8>) {
    use std::io::Read;
    let mut reader = BufReader::new(socket);
    let mut head = String::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
        head.push_str(&line);
    }
    let mut body = vec![0u8; length];
    let _ = reader.read_exact(&mut body);
    (head, body)
}

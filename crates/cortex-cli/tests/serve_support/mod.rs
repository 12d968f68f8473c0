//! The `cortex serve` tests' helpers: a private home and repository, and
//! a real server process with its stderr read line by line.

#![allow(dead_code)]

use futures::StreamExt;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const TOKEN: &str = "test-token";

pub struct Env {
    pub home: tempfile::TempDir,
    pub repo: tempfile::TempDir,
}

pub struct Server {
    pub child: Child,
    pub base: String,
    pub stderr: std::sync::mpsc::Receiver<String>,
    /// Every stderr line read so far.
    pub seen: Vec<String>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Env {
    pub fn new() -> Env {
        let env = Env {
            home: tempfile::tempdir().expect("home"),
            repo: tempfile::tempdir().expect("repo"),
        };
        std::fs::write(env.repo.path().join("a.txt"), "alpha\n").expect("write");
        env
    }

    pub fn script(&self, name: &str, script: Value) -> PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, script.to_string()).expect("script");
        path
    }

    pub fn command(&self, token: Option<&str>) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cortex"));
        cmd.env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("HOME", self.home.path())
            .env_remove("CORTEX_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        if let Some(token) = token {
            cmd.env("CORTEX_TOKEN", token);
        }
        cmd
    }

    /// Start `cortex serve` and wait for its `listening on` line.
    pub fn serve(&self, listen: &str, script: &Path, token: Option<&str>) -> Server {
        self.serve_with(listen, script, token, &[])
    }

    pub fn serve_with(
        &self,
        listen: &str,
        script: &Path,
        token: Option<&str>,
        extra: &[&str],
    ) -> Server {
        let mut child = self
            .command(token)
            .args(["serve", "--listen", listen, "--model"])
            .arg(format!("scripted:{}", script.display()))
            .args(extra)
            .spawn()
            .expect("spawn cortex serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            base: String::new(),
            stderr: rx,
            seen: Vec::new(),
        };
        let line = server.wait_line("listening on ");
        server.base = line
            .split("listening on ")
            .nth(1)
            .expect("address")
            .trim()
            .to_owned();
        server
    }
}

impl Server {
    pub fn wait_line(&mut self, needle: &str) -> String {
        loop {
            match self.stderr.recv_timeout(Duration::from_secs(30)) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    if line.contains(needle) {
                        return line;
                    }
                }
                Err(e) => panic!("no `{needle}` line from cortex serve: {e}"),
            }
        }
    }

    pub fn lines_so_far(&mut self) -> Vec<String> {
        let more: Vec<String> = self.stderr.try_iter().collect();
        self.seen.extend(more);
        self.seen.clone()
    }

    pub async fn send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        self.send_as(TOKEN, method, path, body).await
    }

    pub async fn send_as(
        &self,
        token: &str,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut request = reqwest::Client::new()
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token);
        if let Some(body) = body {
            request = request.json(&body);
        }
        let response = request.send().await.expect("send");
        let status = response.status().as_u16();
        let text = response.text().await.expect("text");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Read the event stream until `stop` says so; the events seen.
    pub async fn events_until(&self, id: &str, stop: impl Fn(&Value) -> bool) -> Vec<Value> {
        self.events_until_as(TOKEN, id, stop).await
    }

    /// [`Server::events_until`] with `token`'s principal.
    pub async fn events_until_as(
        &self,
        token: &str,
        id: &str,
        stop: impl Fn(&Value) -> bool,
    ) -> Vec<Value> {
        let response = reqwest::Client::new()
            .get(format!("{}/v1/sessions/{id}/events", self.base))
            .bearer_auth(token)
            .send()
            .await
            .expect("events");
        let mut body = response.bytes_stream();
        let mut buffer = String::new();
        let mut seen = Vec::new();
        loop {
            while let Some(end) = buffer.find("\n\n") {
                let block: String = buffer.drain(..end + 2).collect();
                for line in block.lines() {
                    if let Some(data) = line.strip_prefix("data: ") {
                        let event: Value = serde_json::from_str(data).expect("event");
                        let done = stop(&event);
                        seen.push(event);
                        if done {
                            return seen;
                        }
                    }
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(30), body.next())
                .await
                .expect("an event within 30 s")
                .expect("stream open")
                .expect("chunk");
            buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }
}

//! Finding the test servers, and running the Python one over HTTP.
//!
//! The Python interpreter with the `mcp` package: `CORTEX_MCP_PYTHON`, else
//! `/opt/cortex-test/mcp-venv/bin/python` (what `scripts/install-deps`
//! creates). `@modelcontextprotocol/server-everything`: under
//! `CORTEX_MCP_NODE_MODULES`, else `/opt/cortex-test/node_modules`. A test
//! whose server is missing records a skip (`cortex_testkit`) and returns; a
//! server that is installed but does not start fails the test.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub fn fixture() -> PathBuf {
    // From any crate beside this one (the core's and the CLI's tests use
    // this module too).
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../cortex-mcp/tests/fixtures/py_server.py")
}

/// The interpreter, if it has the `mcp` package.
pub fn python() -> Option<PathBuf> {
    let python = std::env::var_os("CORTEX_MCP_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cortex-test/mcp-venv/bin/python"));
    let ok = Command::new(&python)
        .args(["-c", "import mcp"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !ok {
        cortex_testkit::skip_current(
            "python-mcp",
            &format!(
                "no Python with the `mcp` package at {} (run scripts/install-deps, or set CORTEX_MCP_PYTHON)",
                python.display()
            ),
        );
        return None;
    }
    Some(python)
}

/// `node` and server-everything's entry point, if both are installed.
pub fn server_everything() -> Option<(PathBuf, PathBuf)> {
    let modules = std::env::var_os("CORTEX_MCP_NODE_MODULES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/opt/cortex-test/node_modules"));
    let script = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    let node = ["/usr/bin/node", "/usr/local/bin/node"]
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.exists());
    match (node, script.exists()) {
        (Some(node), true) => Some((node, script)),
        (None, _) => {
            cortex_testkit::skip_current("node", "node is not installed");
            None
        }
        (_, false) => {
            cortex_testkit::skip_current(
                "server-everything",
                &format!(
                    "{} is missing (run scripts/install-deps, or set CORTEX_MCP_NODE_MODULES)",
                    script.display()
                ),
            );
            None
        }
    }
}

/// The Python server on streamable HTTP at a free loopback port; killed
/// when dropped. The interpreter and its package being there, a server
/// that does not start or listen is a failure of the test, not a skip.
pub struct HttpServer {
    pub url: String,
    child: Child,
}

impl HttpServer {
    pub async fn start(python: &Path) -> HttpServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port");
        let child = Command::new(python)
            .arg(fixture())
            .args(["http", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("start {} {}: {e}", python.display(), fixture().display()));
        let mut server = HttpServer {
            url: format!("http://127.0.0.1:{port}/mcp"),
            child,
        };
        // Until it listens (a slow machine takes seconds to import `mcp`).
        for _ in 0..1200 {
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return server;
            }
            if let Ok(Some(status)) = server.child.try_wait() {
                panic!(
                    "the HTTP server exited ({status}); run `{} {} http {port}` to see why",
                    python.display(),
                    fixture().display()
                );
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the HTTP server did not listen on port {port} within 60 s");
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

//! A session's language servers: each started on the first write of a file
//! of its language (in Agent mode only: nothing else writes), kept warm for
//! the next edits, restarted once after it ends and then given up for the
//! session with a note. A mode change that takes writing away, and the
//! session's close, end them.

use super::client::{LspClient, LspError, Published, uri_of_path};
use super::{LspSpec, diagnostics, language_id};
use crate::Session;
use crate::answer::Answer;
use cortex_protocol::{Mode, ToolCallRequest, ToolStatus};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How long a server gets to start and answer `initialize`: its own guest
/// starts first, and a cold server reads its configuration.
const STARTUP: Duration = Duration::from_secs(10);
/// After a publish, how long to wait for a newer one (a server may publish
/// an empty list before its analysis is done), within the deadline.
const SETTLE: Duration = Duration::from_millis(300);
/// Starts of one server per session: the first, and one after it ended.
const MAX_STARTS: u32 = 2;

/// The language servers of a session.
#[derive(Default)]
pub(crate) struct SessionLsp {
    pub(crate) specs: Vec<LspSpec>,
    /// By server name. Behind a lock because calls run on a shared borrow
    /// of the session.
    servers: tokio::sync::Mutex<BTreeMap<String, Slot>>,
}

enum Slot {
    Running(Server),
    /// Given up for this session; its note was given.
    Failed,
}

struct Server {
    client: LspClient,
    starts: u32,
    /// The workspace as the server's guest sees it.
    root: PathBuf,
    /// The version last sent of each open document (by its path).
    versions: HashMap<PathBuf, i64>,
}

impl Session {
    /// The user's language servers (`[lsp.NAME]`; only the user's
    /// configuration may name them). They start when a write or edit in
    /// Agent mode first touches a file of their language. Servers already
    /// running keep running; a name given again keeps its first spec.
    pub fn set_language_servers(&mut self, specs: Vec<LspSpec>) {
        for spec in specs {
            if self.lsp.specs.iter().any(|s| s.name == spec.name) {
                tracing::warn!("language server `{}` is already in this session", spec.name);
                continue;
            }
            self.lsp.specs.push(spec);
        }
    }

    /// After a `write_file` or `edit_file` that succeeded: each server of
    /// the file's language is told the new text and its diagnostics (or a
    /// note on why there are none) are appended to `answer`. Never changes
    /// the answer's status; Stop cuts the wait short.
    pub(crate) async fn lsp_findings(
        &self,
        call: &ToolCallRequest,
        answer: &mut Answer,
        cancel: &CancellationToken,
    ) {
        if self.lsp.specs.is_empty()
            || answer.status != ToolStatus::Ok
            || !matches!(call.name.as_str(), "write_file" | "edit_file")
            || self.mode() != Mode::Agent
            || !self.guest_may_write()
            || cancel.is_cancelled()
        {
            return;
        }
        let Some(path) = serde_json::from_str::<Value>(&call.arguments)
            .ok()
            .and_then(|args| args.get("path")?.as_str().map(str::to_owned))
            .and_then(|path| self.relative_path(&path))
        else {
            return;
        };
        let shown = path.display().to_string();
        for spec in self.lsp.specs.iter().filter(|s| s.covers(&shown)) {
            let note = tokio::select! {
                note = self.check_with(spec, &path, &shown) => note,
                _ = cancel.cancelled() => None,
            };
            if let Some(note) = note {
                answer.output.push_str("\n\n");
                answer.output.push_str(&note);
            }
        }
    }

    /// `path` (as a call named it) relative to the workspace, without `.`
    /// parts; `None` for a path outside it (the write was refused anyway).
    fn relative_path(&self, path: &str) -> Option<PathBuf> {
        let path = Path::new(path);
        let path = if path.is_absolute() {
            path.strip_prefix(&self.workspace).ok()?
        } else {
            path
        };
        let mut clean = PathBuf::new();
        for part in path.components() {
            match part {
                Component::Normal(name) => clean.push(name),
                Component::CurDir => {}
                _ => return None,
            }
        }
        (!clean.as_os_str().is_empty()).then_some(clean)
    }

    /// One server's findings for `path`, or a note; `None` when there is
    /// nothing to say (it was given up earlier).
    async fn check_with(&self, spec: &LspSpec, path: &Path, shown: &str) -> Option<String> {
        let name = &spec.name;
        let mut servers = self.lsp.servers.lock().await;
        let mut said = String::new();
        let starts = match servers.get(name) {
            Some(Slot::Failed) => return None,
            Some(Slot::Running(server)) => match server.client.ended() {
                None => 0,
                Some(reason) if server.starts >= MAX_STARTS => {
                    servers.insert(name.clone(), Slot::Failed);
                    return Some(format!(
                        "[language server `{name}`] it ended again ({reason}); it is not \
                         started again in this session"
                    ));
                }
                Some(reason) => {
                    said =
                        format!("[language server `{name}`] restarted: it had ended ({reason})\n");
                    server.starts + 1
                }
            },
            None => 1,
        };
        if starts > 0 {
            if let Some(Slot::Running(old)) = servers.remove(name) {
                old.client.close().await;
            }
            match self.start_server(spec).await {
                Ok((client, root)) => {
                    let server = Server {
                        client,
                        starts,
                        root,
                        versions: HashMap::new(),
                    };
                    servers.insert(name.clone(), Slot::Running(server));
                }
                Err(reason) => {
                    servers.insert(name.clone(), Slot::Failed);
                    return Some(format!(
                        "{said}[language server `{name}`] not available: {reason}; skipped for \
                         this session"
                    ));
                }
            }
        }
        let Some(Slot::Running(server)) = servers.get_mut(name) else {
            return None;
        };
        let found = sync_and_wait(server, spec, path, shown).await;
        Some(format!("{said}{found}"))
    }

    /// A server's guest (the session's guest spec: sandbox, network,
    /// environment, the mode's lock), the server in it, and the handshake.
    async fn start_server(&self, spec: &LspSpec) -> Result<(LspClient, PathBuf), String> {
        let guest_spec = self.mcp_guest_spec();
        let root = self.guests.workspace_in_guest(&guest_spec).ok_or_else(|| {
            format!(
                "the `{}` guest provider does not say where the workspace is",
                self.guests.name()
            )
        })?;
        let guest = match tokio::time::timeout(STARTUP, self.guests.start(&guest_spec)).await {
            Ok(Ok(guest)) => guest,
            Ok(Err(e)) => return Err(format!("its guest could not start: {e}")),
            Err(_) => {
                return Err(format!(
                    "its guest did not start within {} s",
                    STARTUP.as_secs()
                ));
            }
        };
        let client = LspClient::spawn(guest, &spec.command, &spec.args, &spec.env).await?;
        let root_uri = uri_of_path(&root.display().to_string());
        let params = json!({
            "processId": null,
            "clientInfo": {"name": "cortex-code"},
            "rootUri": root_uri,
            "rootPath": root.display().to_string(),
            "workspaceFolders": [{"uri": root_uri, "name": "workspace"}],
            "capabilities": {
                "textDocument": {
                    "synchronization": {"dynamicRegistration": false},
                    "publishDiagnostics": {"versionSupport": true},
                },
                "workspace": {"configuration": true, "workspaceFolders": true},
            },
        });
        let started = async {
            client.request("initialize", params, STARTUP).await?;
            client.notify("initialized", json!({})).await
        };
        match started.await {
            Ok(()) => Ok((client, root)),
            Err(e) => {
                client.close().await;
                Err(match e {
                    LspError::Ended(reason) => reason,
                    other => other.to_string(),
                })
            }
        }
    }

    /// End every language server (and its guest).
    pub(crate) async fn close_lsp(&self) {
        let servers = std::mem::take(&mut *self.lsp.servers.lock().await);
        for (_, slot) in servers {
            if let Slot::Running(server) = slot {
                server.client.close().await;
            }
        }
    }
}

/// Send `path`'s new text to the server and wait for its diagnostics, at
/// most the server's timeout: what to append.
async fn sync_and_wait(server: &mut Server, spec: &LspSpec, path: &Path, shown: &str) -> String {
    let name = &spec.name;
    let text = match server.client.read_file(shown).await {
        Ok(text) => text,
        Err(why) => return format!("[language server `{name}`] {shown} not checked: {why}"),
    };
    let full = server.root.join(path);
    let key = full.display().to_string();
    let uri = uri_of_path(&key);
    let before = server.client.published(&key).map_or(0, |p| p.count);
    let sent = match server.versions.get_mut(&full) {
        Some(version) => {
            *version += 1;
            let params = json!({
                "textDocument": {"uri": uri, "version": *version},
                "contentChanges": [{"text": text}],
            });
            server.client.notify("textDocument/didChange", params).await
        }
        None => {
            server.versions.insert(full.clone(), 1);
            let params = json!({"textDocument": {
                "uri": uri,
                "languageId": language_id(shown),
                "version": 1,
                "text": text,
            }});
            server.client.notify("textDocument/didOpen", params).await
        }
    };
    let version = server.versions.get(&full).copied().unwrap_or(1);
    if let Err(e) = sent {
        return format!("[language server `{name}`] {shown} not checked: {e}");
    }
    let deadline = Instant::now() + spec.timeout;
    let mut latest: Option<Published> = None;
    let mut settle: Option<Instant> = None;
    loop {
        if let Some(published) = server.client.published(&key)
            && published.count > before
            && published.version.is_none_or(|v| v >= version)
            && latest.as_ref().is_none_or(|l| l.count < published.count)
        {
            latest = Some(published);
            settle = Some((Instant::now() + SETTLE).min(deadline));
        }
        if let Some(reason) = server.client.ended() {
            if latest.is_none() {
                return format!("[language server `{name}`] no diagnostics: it ended ({reason})");
            }
            break;
        }
        if !server.client.changed(settle.unwrap_or(deadline)).await {
            break;
        }
    }
    match latest {
        Some(published) => diagnostics::render(name, shown, &published.diagnostics),
        None => format!(
            "[language server `{name}`] no diagnostics for {shown} within {} (skipped)",
            seconds(spec.timeout)
        ),
    }
}

/// `3 s`, `0.5 s`.
fn seconds(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", d.as_secs_f64())
    }
}

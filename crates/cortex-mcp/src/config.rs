//! MCP servers as the user configures them (`[mcp_servers.NAME]` in
//! `config.toml`, the same shape as Codex's) and as an editor hands them over
//! (ACP's `mcpServers`), parsed once into a [`ServerSpec`].
//!
//! ```toml
//! [mcp_servers.docs]                 # stdio: runs inside the session's guest
//! command = "python3"
//! args = ["-m", "docs_server"]
//! env = { DOCS_INDEX = "/srv/index" }
//! read_only = true                   # also offered in Ask, Plan and Spec
//!
//! [mcp_servers.tracker]              # streamable HTTP, reached from the harness
//! url = "https://mcp.example.com/mcp"
//! bearer_token_env_var = "TRACKER_TOKEN"
//!
//! [mcp_servers.desktop]              # an explicit opt-out of the sandbox
//! command = "desktop-mcp"
//! sandbox = "host"
//! ```

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// How long a server gets to start and list its tools, unless configured.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long one tool call may take, unless configured.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest server name: the qualified tool name must stay within the 64
/// characters providers accept.
pub const MAX_SERVER_NAME: usize = 24;

/// One `[mcp_servers.NAME]` table exactly as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// The program of a stdio server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The program's arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables the server's process gets besides the guest's allow-list.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// Where a stdio server runs: `guest` (default) or `host`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Placement>,
    /// The endpoint of a streamable HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The variable holding the bearer token sent to an HTTP server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bearer_token_env_var: Option<String>,
    /// The server only reads: its tools are offered in Ask, Plan and Spec too.
    #[serde(default)]
    pub read_only: bool,
    /// Seconds to start and list tools (default 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub startup_timeout_sec: Option<f64>,
    /// Seconds one call may take (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_timeout_sec: Option<f64>,
    /// `false` keeps the table but starts nothing.
    #[serde(default = "yes")]
    pub enabled: bool,
}

fn yes() -> bool {
    true
}

/// Where a stdio server's process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Placement {
    /// Inside the session's guest, under its sandbox policy, like `bash`.
    #[default]
    Guest,
    /// On the host, with the harness's privileges: an explicit opt-out that
    /// only the user's own config can ask for.
    Host,
}

/// A server ready to start: validated, typed.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// `[A-Za-z0-9_-]`, at most [`MAX_SERVER_NAME`] characters, no `__`.
    pub name: String,
    /// How the harness reaches it.
    pub transport: TransportSpec,
    /// Its tools only read (`read_only = true`): offered in the read-only
    /// modes too.
    pub read_only: bool,
    /// How long starting it (process, handshake, tool list) may take.
    pub startup_timeout: Duration,
    /// How long one tool call may take; a call that takes longer fails the
    /// server.
    pub tool_timeout: Duration,
}

/// How the harness reaches a server.
#[derive(Debug, Clone, PartialEq)]
pub enum TransportSpec {
    /// A process speaking JSON-RPC on its stdin and stdout.
    Stdio(StdioSpec),
    /// A streamable-HTTP server at a URL.
    Http(HttpSpec),
}

/// A stdio server's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StdioSpec {
    /// The program, found on the `PATH` where it runs, or absolute.
    pub command: String,
    /// The program's arguments.
    pub args: Vec<String>,
    /// Variables the process gets besides the allow-list.
    pub env: BTreeMap<String, String>,
    /// Where the process runs: the session's guest or the host.
    pub placement: Placement,
}

/// A streamable-HTTP server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpSpec {
    /// `http://` or `https://`.
    pub url: String,
    /// The variable holding the bearer token, read when the server starts.
    pub bearer_token_env_var: Option<String>,
    /// Headers sent with every request, as a client handed them over (an
    /// editor's `headers`, e.g. its own `Authorization`). Never recorded.
    pub headers: BTreeMap<String, String>,
}

/// Why a server's configuration was refused; the message names the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The name has other characters, a `__`, or is too long.
    #[error(
        "MCP server name `{0}` is not allowed: use letters, digits, `-` and `_` (no `__`), at most {MAX_SERVER_NAME} characters"
    )]
    BadName(String),
    /// Neither `command` nor `url`.
    #[error("MCP server `{0}` needs either `command` (stdio) or `url` (streamable HTTP)")]
    NoTransport(String),
    /// Both `command` and `url`.
    #[error("MCP server `{0}` has both `command` and `url`; give one")]
    BothTransports(String),
    /// A setting of the other transport.
    #[error("MCP server `{name}`: `{field}` only applies to {applies_to} servers")]
    Misplaced {
        /// The server.
        name: String,
        /// The setting.
        field: &'static str,
        /// The transport it belongs to.
        applies_to: &'static str,
    },
    /// The url is not `http://` or `https://`.
    #[error("MCP server `{name}`: the url `{url}` is not http:// or https://")]
    BadUrl {
        /// The server.
        name: String,
        /// The url as written.
        url: String,
    },
    /// A timeout that is not a positive number of seconds.
    #[error("MCP server `{name}`: `{field}` must be a positive number of seconds")]
    BadTimeout {
        /// The server.
        name: String,
        /// The timeout's setting.
        field: &'static str,
    },
    /// An `env` key that is not a variable name.
    #[error("MCP server `{name}`: `{variable}` is not a valid environment variable name")]
    BadEnvName {
        /// The server.
        name: String,
        /// The key as written.
        variable: String,
    },
    /// Two servers with the same name.
    #[error("MCP server `{0}` is listed twice")]
    Duplicate(String),
    /// A header of an HTTP server that HTTP does not allow.
    #[error("MCP server `{name}`: the header `{header}` is not a valid HTTP header")]
    BadHeader {
        /// The server.
        name: String,
        /// The header as given.
        header: String,
    },
}

/// Whether `name` may name a server.
pub fn valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && !name.contains("__")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

fn valid_env_name(name: &str) -> bool {
    !name.is_empty()
        && !name.as_bytes()[0].is_ascii_digit()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn seconds(
    name: &str,
    field: &'static str,
    value: Option<f64>,
    default: Duration,
) -> Result<Duration, ConfigError> {
    match value {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s < 86_400.0 => Ok(Duration::from_secs_f64(s)),
        Some(_) => Err(ConfigError::BadTimeout {
            name: name.to_owned(),
            field,
        }),
    }
}

impl ServerConfig {
    /// Validate this table as the server `name`. `None` when it is disabled.
    pub fn to_spec(&self, name: &str) -> Result<Option<ServerSpec>, ConfigError> {
        if !valid_server_name(name) {
            return Err(ConfigError::BadName(name.to_owned()));
        }
        if !self.enabled {
            return Ok(None);
        }
        let misplaced = |field, applies_to| ConfigError::Misplaced {
            name: name.to_owned(),
            field,
            applies_to,
        };
        let transport = match (&self.command, &self.url) {
            (None, None) => return Err(ConfigError::NoTransport(name.to_owned())),
            (Some(_), Some(_)) => return Err(ConfigError::BothTransports(name.to_owned())),
            (Some(command), None) => {
                if self.bearer_token_env_var.is_some() {
                    return Err(misplaced("bearer_token_env_var", "HTTP"));
                }
                if let Some(bad) = self.env.keys().find(|k| !valid_env_name(k)) {
                    return Err(ConfigError::BadEnvName {
                        name: name.to_owned(),
                        variable: bad.clone(),
                    });
                }
                TransportSpec::Stdio(StdioSpec {
                    command: command.clone(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    placement: self.sandbox.unwrap_or_default(),
                })
            }
            (None, Some(url)) => {
                if !self.args.is_empty() {
                    return Err(misplaced("args", "stdio"));
                }
                if !self.env.is_empty() {
                    return Err(misplaced("env", "stdio"));
                }
                if self.sandbox.is_some() {
                    return Err(misplaced("sandbox", "stdio"));
                }
                if !(url.starts_with("http://") || url.starts_with("https://")) {
                    return Err(ConfigError::BadUrl {
                        name: name.to_owned(),
                        url: url.clone(),
                    });
                }
                TransportSpec::Http(HttpSpec {
                    url: url.clone(),
                    bearer_token_env_var: self.bearer_token_env_var.clone(),
                    headers: BTreeMap::new(),
                })
            }
        };
        Ok(Some(ServerSpec {
            name: name.to_owned(),
            transport,
            read_only: self.read_only,
            startup_timeout: seconds(
                name,
                "startup_timeout_sec",
                self.startup_timeout_sec,
                DEFAULT_STARTUP_TIMEOUT,
            )?,
            tool_timeout: seconds(
                name,
                "tool_timeout_sec",
                self.tool_timeout_sec,
                DEFAULT_TOOL_TIMEOUT,
            )?,
        }))
    }
}

/// Every enabled server of a `[mcp_servers]` section, in name order.
pub fn specs_from_config(
    servers: &BTreeMap<String, ServerConfig>,
) -> Result<Vec<ServerSpec>, ConfigError> {
    let mut specs = Vec::new();
    for (name, config) in servers {
        if let Some(spec) = config.to_spec(name)? {
            specs.push(spec);
        }
    }
    Ok(specs)
}

impl ServerSpec {
    /// A stdio server handed over by a client (an editor's `mcpServers`):
    /// it always runs in the guest, with the default timeouts, and is never
    /// read-only (only the user's own config can say that).
    pub fn from_client(
        name: &str,
        command: &str,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    ) -> Result<ServerSpec, ConfigError> {
        let config = ServerConfig {
            command: Some(command.to_owned()),
            args,
            env,
            enabled: true,
            ..ServerConfig::default()
        };
        config
            .to_spec(name)?
            .ok_or_else(|| ConfigError::NoTransport(name.to_owned()))
    }

    /// A streamable HTTP server handed over by a client (an editor's
    /// `mcpServers` of type `http`) with the headers it gave: the default
    /// timeouts, never read-only. It is reached from the harness, not from
    /// the guest, so whoever accepts one from a client decides whether that
    /// client may make the harness connect somewhere.
    pub fn from_client_http(
        name: &str,
        url: &str,
        headers: BTreeMap<String, String>,
    ) -> Result<ServerSpec, ConfigError> {
        let config = ServerConfig {
            url: Some(url.to_owned()),
            enabled: true,
            ..ServerConfig::default()
        };
        let mut spec = config
            .to_spec(name)?
            .ok_or_else(|| ConfigError::NoTransport(name.to_owned()))?;
        if let Some(bad) = headers.iter().find(|(k, v)| !valid_header(k, v)) {
            return Err(ConfigError::BadHeader {
                name: name.to_owned(),
                header: bad.0.clone(),
            });
        }
        if let TransportSpec::Http(http) = &mut spec.transport {
            http.headers = headers;
        }
        Ok(spec)
    }

    /// One line for listings: `stdio (guest): python3 -m srv`, `http: URL`.
    pub fn describe(&self) -> String {
        match &self.transport {
            TransportSpec::Stdio(stdio) => {
                let placement = match stdio.placement {
                    Placement::Guest => "guest",
                    Placement::Host => "HOST, unsandboxed",
                };
                let mut line = format!("stdio ({placement}): {}", stdio.command);
                for arg in &stdio.args {
                    line.push(' ');
                    line.push_str(arg);
                }
                line
            }
            TransportSpec::Http(http) => format!("http: {}", http.url),
        }
    }
}

/// Whether `name: value` can be sent as an HTTP header.
fn valid_header(name: &str, value: &str) -> bool {
    reqwest::header::HeaderName::from_bytes(name.as_bytes()).is_ok()
        && reqwest::header::HeaderValue::from_str(value).is_ok()
}

/// Make `name` a valid server name (for names a client chose): invalid
/// characters become `_`, runs of `_` collapse, and it is cut to length.
pub fn sanitize_server_name(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' {
            c
        } else {
            '_'
        };
        if c == '_' && out.ends_with('_') {
            continue;
        }
        out.push(c);
    }
    let mut out: String = out.chars().take(MAX_SERVER_NAME).collect();
    if out.is_empty() {
        out.push_str("server");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(toml_text: &str) -> BTreeMap<String, ServerConfig> {
        #[derive(Deserialize)]
        struct File {
            mcp_servers: BTreeMap<String, ServerConfig>,
        }
        let file: File = toml::from_str(toml_text).expect("toml");
        file.mcp_servers
    }

    #[test]
    fn stdio_and_http_tables_become_specs() {
        let servers = parse(
            r#"
            [mcp_servers.docs]
            command = "python3"
            args = ["-m", "srv"]
            env = { INDEX = "/i" }
            read_only = true
            tool_timeout_sec = 5

            [mcp_servers.web]
            url = "https://mcp.example.com/mcp"
            bearer_token_env_var = "WEB_TOKEN"

            [mcp_servers.off]
            command = "x"
            enabled = false
            "#,
        );
        let specs = specs_from_config(&servers).expect("valid");
        assert_eq!(specs.len(), 2, "the disabled one is skipped");
        let docs = &specs[0];
        assert_eq!(docs.name, "docs");
        assert!(docs.read_only);
        assert_eq!(docs.tool_timeout, Duration::from_secs(5));
        assert_eq!(docs.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
        match &docs.transport {
            TransportSpec::Stdio(s) => {
                assert_eq!(s.placement, Placement::Guest, "the guest by default");
                assert_eq!(s.args, ["-m", "srv"]);
                assert_eq!(s.env["INDEX"], "/i");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(docs.describe(), "stdio (guest): python3 -m srv");
        assert!(matches!(&specs[1].transport, TransportSpec::Http(h)
            if h.bearer_token_env_var.as_deref() == Some("WEB_TOKEN")));
        assert!(!specs[1].read_only);
    }

    #[test]
    fn host_placement_is_explicit_and_said_loudly() {
        let servers = parse("[mcp_servers.d]\ncommand = \"d\"\nsandbox = \"host\"\n");
        let specs = specs_from_config(&servers).expect("valid");
        assert!(specs[0].describe().contains("HOST, unsandboxed"));
    }

    #[test]
    fn bad_tables_are_refused_with_the_server_named() {
        for (text, expect) in [
            ("[mcp_servers.a]\n", "needs either"),
            (
                "[mcp_servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n",
                "both",
            ),
            ("[mcp_servers.a]\nurl = \"ftp://h\"\n", "not http"),
            (
                "[mcp_servers.a]\nurl = \"http://h\"\nsandbox = \"host\"\n",
                "only applies to stdio",
            ),
            (
                "[mcp_servers.a]\ncommand = \"x\"\nbearer_token_env_var = \"T\"\n",
                "HTTP",
            ),
            (
                "[mcp_servers.a]\ncommand = \"x\"\ntool_timeout_sec = 0\n",
                "positive",
            ),
            (
                "[mcp_servers.a]\ncommand = \"x\"\nenv = { \"A B\" = \"1\" }\n",
                "variable",
            ),
            ("[mcp_servers.\"a.b\"]\ncommand = \"x\"\n", "not allowed"),
            ("[mcp_servers.a__b]\ncommand = \"x\"\n", "not allowed"),
        ] {
            let err = specs_from_config(&parse(text)).expect_err(text).to_string();
            assert!(err.contains(expect), "{text}: {err}");
        }
        let typo = "[mcp_servers.a]\ncomand = \"x\"\n";
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct File {
            mcp_servers: BTreeMap<String, ServerConfig>,
        }
        assert!(
            toml::from_str::<File>(typo).is_err(),
            "unknown fields refused"
        );
    }

    #[test]
    fn client_servers_run_in_the_guest_and_names_are_sanitized() {
        let spec = ServerSpec::from_client("fs", "node", vec!["s.js".into()], BTreeMap::new())
            .expect("valid");
        assert!(
            matches!(&spec.transport, TransportSpec::Stdio(s) if s.placement == Placement::Guest)
        );
        assert!(!spec.read_only);
        assert_eq!(sanitize_server_name("My Server.v2"), "My_Server_v2");
        assert_eq!(sanitize_server_name("a__b"), "a_b");
        assert_eq!(sanitize_server_name(""), "server");
        assert!(valid_server_name(&sanitize_server_name(&"x".repeat(90))));
    }

    #[test]
    fn client_http_servers_keep_their_headers_and_bad_ones_are_refused() {
        let headers = BTreeMap::from([("Authorization".to_owned(), "Bearer t".to_owned())]);
        let spec =
            ServerSpec::from_client_http("web", "https://h/mcp", headers.clone()).expect("valid");
        assert!(
            matches!(&spec.transport, TransportSpec::Http(h) if h.headers == headers && h.bearer_token_env_var.is_none())
        );
        assert!(!spec.read_only);
        let bad = BTreeMap::from([("X".to_owned(), "a\nb".to_owned())]);
        let err = ServerSpec::from_client_http("web", "https://h/mcp", bad).expect_err("newline");
        assert!(err.to_string().contains("header `X`"), "{err}");
        assert!(ServerSpec::from_client_http("web", "file:///x", BTreeMap::new()).is_err());
    }
}

//! The user's own hooks: commands that run at points of a turn and may
//! refuse a call, add context, or send the model back.
//!
//! Where a hook comes from decides where it may run. Only hooks from the
//! user's own configuration are read (the CLI's `[hooks]` table and
//! `$XDG_CONFIG_HOME/cortex/hooks.json`, in Claude Code's format); they run
//! on the host as the user, since they are the user's scripts. A
//! repository's hooks would run code the user never read on the host, so
//! they are not read at all yet (they need trust and the guest).
//!
//! Events: `PreToolUse` (after the mode gate and the stop rule, before
//! approvals: it can refuse a call approvals would allow, never allow one a
//! gate refused), `PostToolUse` (its context is added to the result the
//! model reads), `Stop` (an answer a hook blocks goes back to the model once
//! per turn) and `UserPromptSubmit` (context for the turn, or a block that
//! fails it).
//!
//! A hook gets the event as JSON on stdin and answers by exit code (0 goes
//! on, 2 blocks with stderr as the reason) or a JSON object on stdout. It
//! runs with a clean environment (no provider keys), in the repository, in
//! its own process group killed at its timeout, its output capped; what it
//! says is stripped of control characters before anyone sees it.

use crate::{CoreError, Session};
use cortex_protocol::{EventKind, TurnId};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

/// How long a hook may run when its spec names no timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The most bytes of a hook's stdout and of its stderr that are kept.
pub const OUTPUT_CAP: usize = 64 * 1024;
/// The variables a hook inherits; everything else (provider keys above all)
/// is left out.
const INHERITED_ENV: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// The points of a session a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HookEvent {
    /// Before a call that passed the mode gate and the stop rule.
    PreToolUse,
    /// After a call succeeded.
    PostToolUse,
    /// When the model answers without a call.
    Stop,
    /// When a turn starts, with the user's message.
    UserPromptSubmit,
}

impl HookEvent {
    /// Every event, in the order they happen.
    pub const ALL: [HookEvent; 4] = [
        HookEvent::UserPromptSubmit,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
    ];

    /// The event's name, as in Claude Code's files.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
        }
    }

    /// The event named `name`, if it is one Cortex runs.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether a matcher on the tool name applies to it.
    fn has_tool(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One hook as the user configured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSpec {
    /// When it runs.
    pub event: HookEvent,
    /// Which tools it runs for (`PreToolUse`/`PostToolUse`): a regular
    /// expression matched against the whole tool name, Cortex's or Claude
    /// Code's (`Bash|Edit`, `bash`, `mcp__.*`); `None`, empty or `*`: all.
    pub matcher: Option<String>,
    /// A shell command line, run with `/bin/sh -c`.
    pub command: String,
    /// How long it may run; `None` is [`DEFAULT_TIMEOUT`].
    pub timeout_ms: Option<u64>,
    /// Where it was read from (a file path), for `cortex hooks list`.
    pub source: String,
    /// Read from a Claude Code `hooks.json`: its input names tools as
    /// Claude Code does (`Bash`, `Edit`), so existing scripts work.
    pub claude: bool,
}

impl HookSpec {
    /// The hook as timeline events and messages name it: its command, on
    /// one line and cut.
    pub fn name(&self) -> String {
        let line = clean(&self.command).replace('\n', " ");
        cut(&line, 120)
    }

    fn timeout(&self) -> Duration {
        self.timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// Claude Code's tool names and Cortex's for the same tools.
const CLAUDE_NAMES: [(&str, &str); 6] = [
    ("Bash", "bash"),
    ("Edit", "edit_file"),
    ("Write", "write_file"),
    ("Read", "read_file"),
    ("Glob", "glob"),
    ("Grep", "grep"),
];

/// Claude Code's name for one of Cortex's tools, when it has one.
pub fn claude_tool_name(tool: &str) -> Option<&'static str> {
    CLAUDE_NAMES
        .iter()
        .find(|(_, ours)| *ours == tool)
        .map(|(claude, _)| *claude)
}

/// What reading a `hooks.json` found: the hooks Cortex runs, and one line
/// for each entry it does not (never dropped silently).
#[derive(Debug, Default, Clone)]
pub struct ParsedHooks {
    /// The hooks Cortex runs, in the file's order.
    pub hooks: Vec<HookSpec>,
    /// One line per entry left out, with why.
    pub skipped: Vec<String>,
}

#[derive(Deserialize)]
struct ClaudeFile {
    #[serde(default)]
    hooks: std::collections::BTreeMap<String, Vec<ClaudeGroup>>,
}

#[derive(Deserialize)]
struct ClaudeGroup {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<ClaudeHook>,
}

#[derive(Deserialize)]
struct ClaudeHook {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    command: Option<String>,
    /// Seconds, as Claude Code counts them.
    #[serde(default)]
    timeout: Option<f64>,
}

/// Read a `hooks.json` in Claude Code's format (`{"hooks": {"PreToolUse":
/// [{"matcher": "Bash", "hooks": [{"type": "command", "command": "…",
/// "timeout": 30}]}]}}`). Events Cortex does not run and hooks that are not
/// commands are listed in `skipped`; a file that is not this shape is an
/// error.
pub fn parse_claude_hooks(text: &str, source: &str) -> Result<ParsedHooks, String> {
    let file: ClaudeFile =
        serde_json::from_str(text).map_err(|e| format!("{source} is not a hooks file: {e}"))?;
    let mut parsed = ParsedHooks::default();
    for (name, groups) in file.hooks {
        let Some(event) = HookEvent::parse(&name) else {
            parsed
                .skipped
                .push(format!("{name}: an event Cortex does not run yet"));
            continue;
        };
        for group in groups {
            for hook in group.hooks {
                let command = match (hook.kind.as_str(), hook.command) {
                    ("command", Some(command)) if !command.trim().is_empty() => command,
                    ("command", _) => {
                        parsed
                            .skipped
                            .push(format!("{name}: a command hook without a command"));
                        continue;
                    }
                    (kind, _) => {
                        parsed.skipped.push(format!(
                            "{name}: hooks of type `{kind}` are not supported (only `command`)"
                        ));
                        continue;
                    }
                };
                parsed.hooks.push(HookSpec {
                    event,
                    matcher: group.matcher.clone(),
                    command,
                    timeout_ms: hook
                        .timeout
                        .filter(|s| s.is_finite() && *s > 0.0)
                        .map(|s| (s * 1000.0) as u64),
                    source: source.to_owned(),
                    claude: true,
                });
            }
        }
    }
    Ok(parsed)
}

/// Which tool names a matcher takes.
#[derive(Debug, Clone)]
enum Matcher {
    All,
    Pattern(regex::Regex),
    /// Not a valid expression: `|`-separated names, compared exactly.
    Names(Vec<String>),
}

impl Matcher {
    fn new(matcher: Option<&str>) -> Matcher {
        let text = matcher.map(str::trim).unwrap_or_default();
        if text.is_empty() || text == "*" {
            return Matcher::All;
        }
        match regex::Regex::new(&format!("^(?:{text})$")) {
            Ok(pattern) => Matcher::Pattern(pattern),
            Err(_) => Matcher::Names(text.split('|').map(|n| n.trim().to_owned()).collect()),
        }
    }

    /// Whether it takes `tool`, by Cortex's name or Claude Code's.
    fn takes(&self, tool: &str) -> bool {
        let names = [Some(tool), claude_tool_name(tool)];
        names.into_iter().flatten().any(|name| match self {
            Matcher::All => true,
            Matcher::Pattern(pattern) => pattern.is_match(name),
            Matcher::Names(names) => names.iter().any(|n| n == name),
        })
    }
}

/// The session's hooks, their matchers compiled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hooks {
    hooks: Vec<(HookSpec, Matcher)>,
}

impl Hooks {
    pub(crate) fn new(specs: Vec<HookSpec>) -> Hooks {
        let hooks = specs
            .into_iter()
            .map(|spec| {
                let matcher = Matcher::new(spec.matcher.as_deref());
                (spec, matcher)
            })
            .collect();
        Hooks { hooks }
    }

    /// The hooks for `event` (and `tool`, for the tool events), in order.
    fn matching(&self, event: HookEvent, tool: Option<&str>) -> Vec<HookSpec> {
        self.hooks
            .iter()
            .filter(|(spec, matcher)| {
                spec.event == event && (!event.has_tool() || tool.is_some_and(|t| matcher.takes(t)))
            })
            .map(|(spec, _)| spec.clone())
            .collect()
    }
}

/// What a hook decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No decision: go on as without the hook.
    Continue,
    /// `allow`: treated as `Continue`, since a hook cannot approve a call
    /// (approvals still decide).
    Allow,
    /// `deny`.
    Deny,
    /// `ask`: approvals decide.
    Ask,
    /// `block`, or exit code 2.
    Block,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Decision::Continue => "continue",
            Decision::Allow => "allow",
            Decision::Deny => "deny",
            Decision::Ask => "ask",
            Decision::Block => "block",
        }
    }

    fn parse(text: &str) -> Option<Decision> {
        Some(match text {
            "allow" | "approve" => Decision::Allow,
            "deny" => Decision::Deny,
            "ask" => Decision::Ask,
            "block" => Decision::Block,
            _ => return None,
        })
    }

    /// Whether it refuses what the event is about.
    pub(crate) fn refuses(self) -> bool {
        matches!(self, Decision::Deny | Decision::Block)
    }
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HookAnswer {
    pub decision: Decision,
    /// Why, for the model (control characters removed).
    pub reason: Option<String>,
    /// Text to add to what the model reads.
    pub context: Option<String>,
}

/// What running every matching hook of an event came to.
#[derive(Debug, Default)]
pub(crate) struct HooksOutcome {
    /// The first refusal: the hook's name and its reason.
    pub refused: Option<(String, String)>,
    /// A hook that failed, for `PreToolUse` (which then refuses).
    pub failed: Option<(String, String)>,
    /// Every hook's context, in order.
    pub context: Vec<String>,
}

/// Run one hook: `input` on its stdin, in `cwd`. `Err` says why it failed
/// (cannot start, exited other than 0 or 2, timed out, answered malformed
/// JSON).
pub(crate) async fn run_hook(
    spec: &HookSpec,
    input: &serde_json::Value,
    cwd: &Path,
) -> Result<HookAnswer, String> {
    let mut command = tokio::process::Command::new("/bin/sh");
    command
        .arg("-c")
        .arg(&spec.command)
        .env_clear()
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // Its own group, so a timeout kills what it started too.
        .process_group(0)
        .kill_on_drop(true);
    for name in INHERITED_ENV {
        if let Some(value) = std::env::var_os(name) {
            command.env(name, value);
        }
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("it could not start: {e}"))?;
    let group = child
        .id()
        .and_then(|id| rustix::process::Pid::from_raw(id as i32));
    let stdin = child.stdin.take();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let input = serde_json::to_vec(input).unwrap_or_default();
    let run = async {
        let write = async {
            if let Some(mut stdin) = stdin {
                // A hook that does not read its input is no failure.
                let _ = stdin.write_all(&input).await;
            }
        };
        let (_, out, err, status) = tokio::join!(
            write,
            read_capped(stdout),
            read_capped(stderr),
            child.wait()
        );
        (out, err, status)
    };
    let (out, err, status) = match tokio::time::timeout(spec.timeout(), run).await {
        Ok(done) => done,
        Err(_) => {
            if let Some(group) = group {
                // It may have exited already, leaving nothing to kill.
                let _ = rustix::process::kill_process_group(group, rustix::process::Signal::KILL);
            }
            return Err(format!("timed out after {} ms", spec.timeout().as_millis()));
        }
    };
    let status = status.map_err(|e| format!("it could not be waited for: {e}"))?;
    let stdout = clean(&String::from_utf8_lossy(&out));
    let stderr = clean(&String::from_utf8_lossy(&err));
    match status.code() {
        Some(0) => parse_answer(&stdout, spec.event == HookEvent::UserPromptSubmit),
        Some(2) => Ok(HookAnswer {
            decision: Decision::Block,
            reason: Some(
                non_empty(stderr.trim())
                    .unwrap_or("no reason given")
                    .to_owned(),
            ),
            context: None,
        }),
        Some(code) => Err(format!("it exited with status {code}{}", said(&stderr))),
        None => Err(format!("it was killed by a signal{}", said(&stderr))),
    }
}

/// `: <stderr>` when the hook said something.
fn said(stderr: &str) -> String {
    non_empty(stderr.trim())
        .map(|s| format!(": {}", cut(s, 400)))
        .unwrap_or_default()
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

/// The answer on a hook's stdout after exit 0: a JSON object, or plain
/// text, which is context for the model only when `plain_is_context` (a
/// `UserPromptSubmit` hook, as Claude Code takes it; other hooks' chatter,
/// a formatter's say, is not the model's).
fn parse_answer(stdout: &str, plain_is_context: bool) -> Result<HookAnswer, String> {
    let text = stdout.trim();
    if !text.starts_with('{') {
        return Ok(HookAnswer {
            decision: Decision::Continue,
            reason: None,
            context: non_empty(text)
                .filter(|_| plain_is_context)
                .map(str::to_owned),
        });
    }
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("its answer is not valid JSON: {e}"))?;
    let specific = value.get("hookSpecificOutput");
    let field = |name: &str| {
        specific
            .and_then(|s| s.get(name))
            .or_else(|| value.get(name))
            .and_then(|v| v.as_str())
            .and_then(|s| non_empty(s.trim()))
            .map(str::to_owned)
    };
    let named = field("permissionDecision").or_else(|| field("decision"));
    let decision = match named {
        None => Decision::Continue,
        Some(name) => Decision::parse(&name)
            .ok_or_else(|| format!("its answer has an unknown decision `{}`", cut(&name, 40)))?,
    };
    Ok(HookAnswer {
        decision,
        reason: field("permissionDecisionReason").or_else(|| field("reason")),
        context: field("additionalContext"),
    })
}

/// Up to [`OUTPUT_CAP`] bytes of a stream, the rest read and dropped so the
/// hook never blocks on a full pipe.
async fn read_capped(stream: Option<impl AsyncRead + Unpin>) -> Vec<u8> {
    let mut kept = Vec::new();
    let Some(mut stream) = stream else {
        return kept;
    };
    let mut buf = [0u8; 8192];
    while let Ok(n) = stream.read(&mut buf).await {
        if n == 0 {
            break;
        }
        let room = OUTPUT_CAP.saturating_sub(kept.len());
        kept.extend_from_slice(&buf[..n.min(room)]);
    }
    kept
}

/// `text` without control characters but newlines and tabs: a hook's words
/// reach terminals and the model, and escape sequences belong to neither.
pub(crate) fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
        .collect()
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let kept: String = text.chars().take(max).collect();
    format!("{kept}…")
}

impl Session {
    /// Run every hook of `event` (for `tool`, if a tool event) with
    /// `fields` added to the common input, each on the timeline. Stops at
    /// the first refusal; a failure is recorded and, for `PreToolUse`,
    /// refuses too.
    pub(crate) async fn run_hooks(
        &self,
        turn: &TurnId,
        event: HookEvent,
        tool: Option<&str>,
        fields: serde_json::Value,
    ) -> Result<HooksOutcome, CoreError> {
        let mut outcome = HooksOutcome::default();
        let hooks = self.hooks.matching(event, tool);
        if hooks.is_empty() {
            return Ok(outcome);
        }
        for spec in hooks {
            let input = self.hook_input(event, &spec, tool, &fields);
            let started = Instant::now();
            let name = spec.name();
            match run_hook(&spec, &input, &self.repository).await {
                Ok(answer) => {
                    let ran = EventKind::HookRan {
                        event: event.as_str().to_owned(),
                        hook: name.clone(),
                        ms: started.elapsed().as_secs_f64() * 1000.0,
                        decision: answer.decision.as_str().to_owned(),
                    };
                    self.timeline.emit(Some(turn), ran).await?;
                    outcome.context.extend(answer.context);
                    if answer.decision.refuses() {
                        let reason = answer
                            .reason
                            .unwrap_or_else(|| "no reason given".to_owned());
                        outcome.refused = Some((name, reason));
                        break;
                    }
                }
                Err(error) => {
                    let failed = EventKind::HookFailed {
                        event: event.as_str().to_owned(),
                        hook: name.clone(),
                        error: error.clone(),
                    };
                    self.timeline.emit(Some(turn), failed).await?;
                    if event == HookEvent::PreToolUse {
                        outcome.failed = Some((name, error));
                        break;
                    }
                }
            }
        }
        Ok(outcome)
    }

    /// The JSON a hook reads on stdin.
    fn hook_input(
        &self,
        event: HookEvent,
        spec: &HookSpec,
        tool: Option<&str>,
        fields: &serde_json::Value,
    ) -> serde_json::Value {
        let mut input = serde_json::json!({
            "hook_event_name": event.as_str(),
            "session_id": self.id.to_string(),
            "cwd": self.repository.display().to_string(),
        });
        if let Some(tool) = tool {
            let name = match (spec.claude, claude_tool_name(tool)) {
                (true, Some(claude)) => claude,
                _ => tool,
            };
            input["tool_name"] = serde_json::Value::from(name);
        }
        if let (Some(input), Some(fields)) = (input.as_object_mut(), fields.as_object()) {
            for (key, value) in fields {
                input.insert(key.clone(), value.clone());
            }
        }
        input
    }
}

/// A call's arguments as a hook reads them: the JSON the model wrote, or
/// the text when it is not JSON.
pub(crate) fn tool_input(arguments: &str) -> serde_json::Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| serde_json::Value::from(arguments))
}

/// Where the user's `hooks.json` is: `$XDG_CONFIG_HOME/cortex/hooks.json`,
/// given the config folder.
pub fn hooks_json_path(config_dir: &Path) -> PathBuf {
    config_dir.join("hooks.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claude_code_hooks_file_is_read_unchanged() {
        let text = r#"{
          "hooks": {
            "PreToolUse": [
              {"matcher": "Bash|Edit", "hooks": [
                {"type": "command", "command": "~/.claude/guard.sh", "timeout": 30}
              ]}
            ],
            "PostToolUse": [
              {"matcher": "Write", "hooks": [{"type": "command", "command": "fmt.sh"}]}
            ],
            "Stop": [{"hooks": [{"type": "command", "command": "check.sh"}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "hello.sh"}]}],
            "UserPromptSubmit": [{"hooks": [{"type": "prompt", "prompt": "judge"}]}]
          }
        }"#;
        let parsed = parse_claude_hooks(text, "hooks.json").expect("parse");
        assert_eq!(parsed.hooks.len(), 3);
        let pre = &parsed.hooks[1];
        assert_eq!(pre.event, HookEvent::PreToolUse);
        assert_eq!(pre.matcher.as_deref(), Some("Bash|Edit"));
        assert_eq!(pre.command, "~/.claude/guard.sh");
        assert_eq!(pre.timeout_ms, Some(30_000));
        assert!(pre.claude);
        assert_eq!(parsed.hooks[0].event, HookEvent::PostToolUse);
        assert_eq!(parsed.hooks[2].event, HookEvent::Stop);
        assert_eq!(parsed.skipped.len(), 2, "{:?}", parsed.skipped);
        assert!(parsed.skipped.iter().any(|s| s.starts_with("SessionStart")));
        assert!(parsed.skipped.iter().any(|s| s.contains("`prompt`")));
        assert!(parse_claude_hooks("[1]", "x").is_err());
    }

    #[test]
    fn matchers_take_claude_and_cortex_names() {
        let m = Matcher::new(Some("Bash|Edit"));
        assert!(m.takes("bash") && m.takes("edit_file"));
        assert!(!m.takes("read_file") && !m.takes("write_file"));
        assert!(Matcher::new(Some("bash")).takes("bash"));
        assert!(!Matcher::new(Some("bash")).takes("bash_more"));
        assert!(Matcher::new(Some("mcp__.*")).takes("mcp__docs__search"));
        assert!(Matcher::new(None).takes("glob"));
        assert!(Matcher::new(Some("*")).takes("glob"));
        // Not an expression: names.
        assert!(Matcher::new(Some("grep|(")).takes("grep"));
    }

    #[test]
    fn answers_by_json() {
        let a = parse_answer(r#"{"decision":"deny","reason":"no"}"#, false).expect("answer");
        assert_eq!(a.decision, Decision::Deny);
        assert_eq!(a.reason.as_deref(), Some("no"));
        let a = parse_answer(
            r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"why"}}"#,
            false,
        )
        .expect("answer");
        assert_eq!(a.decision, Decision::Ask);
        assert_eq!(a.reason.as_deref(), Some("why"));
        let a = parse_answer(
            r#"{"hookSpecificOutput":{"additionalContext":"ctx"}}"#,
            false,
        )
        .expect("answer");
        assert_eq!(
            (a.decision, a.context.as_deref()),
            (Decision::Continue, Some("ctx"))
        );
        assert!(parse_answer(r#"{"decision":"maybe"}"#, false).is_err());
        assert!(parse_answer("{not json", false).is_err());
        assert_eq!(parse_answer("", true).expect("empty").context, None);
        // Plain text is context for a prompt hook only.
        let plain = |is_context| parse_answer("formatted 3 files\n", is_context);
        assert_eq!(plain(false).expect("plain").context, None);
        assert_eq!(
            plain(true).expect("plain").context.as_deref(),
            Some("formatted 3 files")
        );
    }

    #[test]
    fn cleaning_drops_escape_sequences() {
        assert_eq!(clean("a\x1b[31mb\x07\nc\td"), "a[31mb\nc\td");
    }
}

//! Hooks: commands that run at points of a session and may refuse a call,
//! add context, or send the model back.
//!
//! Where a hook comes from decides where it may run. The user's own hooks
//! (the CLI's `[hooks]` table and `$XDG_CONFIG_HOME/cortex/hooks.json`, in
//! Claude Code's format) run on the host as the user (`host.rs`), since they
//! are the user's scripts. A repository's hooks (`.cortex/hooks.json`,
//! `.claude/settings.json`, `repository.rs`) never run on the host: only
//! once the user has trusted that exact file (`trust.rs`), and then in the
//! session's guest under the mode's lock (`guest.rs`).
//!
//! Events: `SessionStart` (a session's first turn in this process: context
//! for it), `UserPromptSubmit` (context for the turn, or a block that fails
//! it), `PreToolUse` (after the mode gate and the stop rule, before
//! approvals: it can refuse a call approvals would allow, or make the user
//! decide it, never allow one a gate refused; `tool.rs`), `PostToolUse` (its context is added to the result the
//! model reads), `PreCompact` (before a compaction; what it answers is only
//! recorded) and `Stop` (an answer a hook blocks goes back to the model once
//! per turn).
//!
//! A hook gets the event as JSON on stdin and answers by exit code (0 goes
//! on, 2 blocks with stderr as the reason) or a JSON object on stdout.
//! Every run is on the timeline (`hook.ran`, `hook.failed`); Stop kills a
//! running hook.

mod claude;
mod guest;
mod host;
pub mod repository;
mod tool;
pub mod trust;

pub use claude::{ParsedHooks, parse_claude_hooks};
pub use host::OUTPUT_CAP;
pub(crate) use host::clean;
pub(crate) use tool::PreTool;

use crate::{CoreError, Session};
use cortex_protocol::{EventKind, TurnId};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a hook may run when its spec names no timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// The points of a session a hook can run at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HookEvent {
    /// A session's first turn in this process.
    SessionStart,
    /// Before a call that passed the mode gate and the stop rule.
    PreToolUse,
    /// After a call succeeded.
    PostToolUse,
    /// When the model answers without a call.
    Stop,
    /// When a turn starts, with the user's message.
    UserPromptSubmit,
    /// Before the history is compacted.
    PreCompact,
}

impl HookEvent {
    /// Every event, in the order they happen.
    pub const ALL: [HookEvent; 6] = [
        HookEvent::SessionStart,
        HookEvent::UserPromptSubmit,
        HookEvent::PreCompact,
        HookEvent::PreToolUse,
        HookEvent::PostToolUse,
        HookEvent::Stop,
    ];

    /// The event's name, as in Claude Code's files.
    pub fn as_str(self) -> &'static str {
        match self {
            HookEvent::SessionStart => "SessionStart",
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::Stop => "Stop",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    /// The event named `name`, if it is one Cortex runs.
    pub fn parse(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.as_str() == name)
    }

    /// Whether a matcher on the tool name applies to it.
    pub fn has_tool(self) -> bool {
        matches!(self, HookEvent::PreToolUse | HookEvent::PostToolUse)
    }

    /// Whether plain text on stdout is context for the model (as Claude
    /// Code takes it for these two).
    fn plain_is_context(self) -> bool {
        matches!(self, HookEvent::UserPromptSubmit | HookEvent::SessionStart)
    }
}

impl std::fmt::Display for HookEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whose a hook is, which decides where it runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HookOrigin {
    /// The user's own configuration: runs on the host.
    #[default]
    User,
    /// A file of the repository, at this content: runs in the guest, once
    /// trusted.
    Repository {
        /// Relative to the repository.
        file: String,
        /// The sha256 of the file's content.
        sha256: String,
    },
}

/// One hook as a file configured it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookSpec {
    /// Whose it is.
    pub origin: HookOrigin,
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
        match &self.origin {
            HookOrigin::User => host::cut(&line, 120),
            HookOrigin::Repository { file, .. } => {
                host::cut(&format!("{}: {line}", clean(file)), 120)
            }
        }
    }

    fn timeout(&self) -> Duration {
        self.timeout_ms
            .map(Duration::from_millis)
            .unwrap_or(DEFAULT_TIMEOUT)
    }
}

/// Claude Code's tool names and Cortex's for the same tools.
const CLAUDE_NAMES: [(&str, &str); 7] = [
    ("Bash", "bash"),
    ("Edit", "edit_file"),
    ("Write", "write_file"),
    ("Read", "read_file"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("WebFetch", "web_fetch"),
];

/// Claude Code's name for one of Cortex's tools, when it has one.
pub fn claude_tool_name(tool: &str) -> Option<&'static str> {
    CLAUDE_NAMES
        .iter()
        .find(|(_, ours)| *ours == tool)
        .map(|(claude, _)| *claude)
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

/// The session's hooks, their matchers compiled: the user's, fixed for the
/// session, and the repository's trusted ones, read again at every turn's
/// start. Also what the session has said about them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Hooks {
    user: Vec<(HookSpec, Matcher)>,
    repository: Vec<(HookSpec, Matcher)>,
    /// Where the user's trusts are kept; `None`: no repository hook runs.
    trust_file: Option<PathBuf>,
    /// (file, sha256) of untrusted files already recorded.
    announced: HashSet<(String, String)>,
    /// Whether `SessionStart` has run in this process.
    started: bool,
    /// What Stop cancels for the turn (or compaction) that runs hooks now.
    stop: CancellationToken,
}

fn compiled(specs: Vec<HookSpec>) -> Vec<(HookSpec, Matcher)> {
    specs
        .into_iter()
        .map(|spec| {
            let matcher = Matcher::new(spec.matcher.as_deref());
            (spec, matcher)
        })
        .collect()
}

impl Hooks {
    pub(crate) fn new(user: Vec<HookSpec>, trust_file: Option<PathBuf>) -> Hooks {
        Hooks {
            user: compiled(user),
            trust_file,
            ..Hooks::default()
        }
    }

    /// Whether any hook runs for `event`: without one, nothing is built
    /// for it.
    pub(crate) fn any(&self, event: HookEvent) -> bool {
        self.all().any(|(spec, _)| spec.event == event)
    }

    fn all(&self) -> impl Iterator<Item = &(HookSpec, Matcher)> {
        self.user.iter().chain(&self.repository)
    }

    /// The hooks for `event` (and `tool`, for the tool events): the user's
    /// first, in order.
    fn matching(&self, event: HookEvent, tool: Option<&str>) -> Vec<HookSpec> {
        self.all()
            .filter(|(spec, matcher)| {
                spec.event == event && (!event.has_tool() || tool.is_some_and(|t| matcher.takes(t)))
            })
            .map(|(spec, _)| spec.clone())
            .collect()
    }

    pub(crate) fn trust_file(&self) -> Option<&Path> {
        self.trust_file.as_deref()
    }

    /// The repository's hooks that run from now on.
    pub(crate) fn set_repository(&mut self, specs: Vec<HookSpec>) {
        self.repository = compiled(specs);
    }

    /// Whether `file` at `sha256` is seen for the first time (and so is to
    /// be recorded as untrusted).
    pub(crate) fn first_seen(&mut self, file: &str, sha256: &str) -> bool {
        self.announced.insert((file.to_owned(), sha256.to_owned()))
    }

    /// Hooks run from now on stop with `stop` (a turn's or a compaction's
    /// Stop).
    pub(crate) fn stop_with(&mut self, stop: &CancellationToken) {
        self.stop = stop.clone();
    }

    /// Whether this is the first time asked (`SessionStart` runs once).
    pub(crate) fn start(&mut self) -> bool {
        !std::mem::replace(&mut self.started, true)
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
    /// `ask`: the user decides, asked whatever the approval policy and
    /// rules would have done (a hook can make a call stricter, never
    /// looser).
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
    /// The first hook that answered `ask`: its name and its reason.
    pub asked: Option<(String, Option<String>)>,
    /// Every hook's context, in order.
    pub context: Vec<String>,
}

impl Session {
    /// Run every hook of `event` (for `tool`, if a tool event) with
    /// `fields` added to the common input, each on the timeline (under
    /// `turn`, or the session's for none). Stops at the first refusal; a
    /// failure is recorded and, for `PreToolUse`, refuses too. Stop kills
    /// the running hook ([`Hooks::stop_with`]), a failure like any other.
    pub(crate) async fn run_hooks(
        &self,
        turn: Option<&TurnId>,
        event: HookEvent,
        tool: Option<&str>,
        fields: serde_json::Value,
    ) -> Result<HooksOutcome, CoreError> {
        let cancel = &self.hooks.stop;
        let mut outcome = HooksOutcome::default();
        let hooks = self.hooks.matching(event, tool);
        if hooks.is_empty() {
            return Ok(outcome);
        }
        for spec in hooks {
            let input = self.hook_input(event, &spec, tool, &fields);
            let started = Instant::now();
            let name = spec.name();
            let answered = match spec.origin {
                HookOrigin::User => host::run_hook(&spec, &input, &self.repository, cancel).await,
                HookOrigin::Repository { .. } => self.run_guest_hook(&spec, &input, cancel).await,
            };
            match answered {
                Ok(answer) => {
                    let ran = EventKind::HookRan {
                        event: event.as_str().to_owned(),
                        hook: name.clone(),
                        ms: started.elapsed().as_secs_f64() * 1000.0,
                        decision: answer.decision.as_str().to_owned(),
                    };
                    self.timeline.emit(turn, ran).await?;
                    outcome.context.extend(answer.context);
                    if answer.decision == Decision::Ask && outcome.asked.is_none() {
                        outcome.asked = Some((name.clone(), answer.reason.clone()));
                    }
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
                    self.timeline.emit(turn, failed).await?;
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
    fn an_untrusted_file_is_announced_once_per_content() {
        let mut hooks = Hooks::new(Vec::new(), None);
        assert!(hooks.first_seen(".cortex/hooks.json", "aa"));
        assert!(!hooks.first_seen(".cortex/hooks.json", "aa"));
        assert!(hooks.first_seen(".cortex/hooks.json", "bb"));
        assert!(hooks.first_seen(".claude/settings.json", "aa"));
    }
}

//! Hook files in Claude Code's format: a `hooks.json`, or the `hooks` key of
//! a `.claude/settings.json`, read unchanged. What Cortex does not run (an
//! event it does not have, a hook that is not a command) is listed, never
//! dropped silently.

use super::{HookEvent, HookOrigin, HookSpec};
use serde::Deserialize;

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
    parse_with_origin(text, source, &HookOrigin::User)
}

/// [`parse_claude_hooks`] for hooks from `origin`. A Claude Code
/// `settings.json` has the same `hooks` key beside others, which are
/// ignored.
pub(crate) fn parse_with_origin(
    text: &str,
    source: &str,
    origin: &HookOrigin,
) -> Result<ParsedHooks, String> {
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
                    origin: origin.clone(),
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
            "Notification": [{"hooks": [{"type": "command", "command": "hello.sh"}]}],
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
        assert_eq!(pre.origin, HookOrigin::User);
        assert_eq!(parsed.hooks[0].event, HookEvent::PostToolUse);
        assert_eq!(parsed.hooks[2].event, HookEvent::Stop);
        assert_eq!(parsed.skipped.len(), 2, "{:?}", parsed.skipped);
        assert!(parsed.skipped.iter().any(|s| s.starts_with("Notification")));
        assert!(parsed.skipped.iter().any(|s| s.contains("`prompt`")));
        assert!(parse_claude_hooks("[1]", "x").is_err());
    }

    #[test]
    fn a_settings_file_gives_its_hooks_and_nothing_else() {
        let text = r#"{"permissions": {"allow": ["Bash(*)"]}, "model": "x",
            "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "hi"}]}]}}"#;
        let origin = HookOrigin::Repository {
            file: ".claude/settings.json".into(),
            sha256: "00".into(),
        };
        let parsed = parse_with_origin(text, "s", &origin).expect("parse");
        assert_eq!(parsed.hooks.len(), 1);
        assert_eq!(parsed.hooks[0].event, HookEvent::SessionStart);
        assert_eq!(parsed.hooks[0].origin, origin);
        let none = parse_with_origin(r#"{"model": "x"}"#, "s", &origin).expect("parse");
        assert!(none.hooks.is_empty() && none.skipped.is_empty());
    }
}

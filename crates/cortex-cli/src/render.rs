//! Rendering timeline events: one JSON line each (`--json`), or human output
//! (streamed text and one row per tool call on stdout; session notes on
//! stderr).
//!
//! Human output treats every string of an event as hostile: the model's text,
//! tool names and arguments, command output, error messages, the guest's own
//! reports. Each goes through `cortex_term::sanitize` (or `sanitize_line` for
//! a one-line field) before it is written; only this file's own glyphs reach
//! the terminal as they are. `--json` output is exact (see [`crate::json_out`]).

use crate::render_goal::GoalLines;
use cortex_model::meter::MeterTotals;
use cortex_protocol::{CallSummary, Event, EventKind, ToolStatus};
use cortex_term::{sanitize, sanitize_line};
use std::collections::HashMap;
use std::io::Write;

pub trait Render: Send {
    fn event(&mut self, event: &Event);
}

pub struct JsonLines;

impl Render for JsonLines {
    fn event(&mut self, event: &Event) {
        let mut out = std::io::stdout().lock();
        if let Ok(line) = crate::json_out::to_line(event) {
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

#[derive(Default)]
pub struct Human {
    calls: HashMap<String, String>,
    at_line_start: bool,
    in_text: bool,
    /// Inside a stretch of thinking (its marker is printed).
    thinking: bool,
    /// Summed from the `usage` events (which carry cached tokens and the
    /// estimated cost), so the summary is the same through any server.
    totals: MeterTotals,
    /// The goal's chip and lines.
    goal: GoalLines,
}

impl Human {
    pub fn new() -> Self {
        Human {
            at_line_start: true,
            ..Default::default()
        }
    }

    /// Human output for a session that may already have a goal.
    pub fn with_goal(goal: GoalLines) -> Self {
        Human {
            goal,
            ..Human::new()
        }
    }

    /// `N tokens in (C cached), M out · ~$X`.
    fn usage_summary(&self) -> String {
        summary(&self.totals)
    }

    fn end_text(&mut self, out: &mut impl Write) {
        if self.in_text && !self.at_line_start {
            let _ = writeln!(out);
        }
        self.in_text = false;
        self.at_line_start = true;
    }
}

impl Render for Human {
    fn event(&mut self, event: &Event) {
        let mut out = std::io::stdout().lock();
        if let Some(line) = self.goal.line(&event.kind) {
            self.end_text(&mut out);
            let _ = out.flush();
            eprintln!("{line}");
        }
        let kind = &event.kind;
        // Each family says whether the event was one of its own.
        let _ = self.notes(event, &mut out)
            || self.text(kind, &mut out)
            || self.tools(kind, &mut out)
            || self.proposals(kind, &mut out)
            || self.usage(kind)
            || self.compaction(kind, &mut out)
            || self.turn_end(kind, &mut out);
        let _ = out.flush();
    }
}

/// `instructions: AGENTS.md, src/AGENTS.md (3.2 KB)`: which project
/// instructions the model is given. The paths come from the repository
/// (folder names are the model's), so they are sanitised.
fn instructions_line(files: &[String], bytes: u64, cut: bool) -> String {
    if files.is_empty() {
        return "instructions: none".to_owned();
    }
    let size = if bytes < 1024 {
        format!("{bytes} B")
    } else {
        format!("{:.1} KB", bytes as f64 / 1024.0)
    };
    let cut = if cut { ", cut at the cap" } else { "" };
    format!(
        "instructions: {} ({size}{cut})",
        sanitize_line(&files.join(", "))
    )
}

/// One method per family of events; each returns whether `kind` was one of
/// its family (and so was rendered).
impl Human {
    /// Session, guest and model notes, on stderr.
    fn notes(&mut self, event: &Event, out: &mut impl Write) -> bool {
        match &event.kind {
            EventKind::SessionCreated {
                repository,
                mode,
                model,
                sandbox,
                ..
            } => eprintln!(
                "session {} · {mode} · {} · {} · sandbox {}, network {}",
                sanitize_line(event.session_id.as_str()),
                sanitize_line(model),
                sanitize_line(repository),
                sandbox.policy,
                sandbox.network
            ),
            EventKind::RuntimeAttached {
                provider,
                ms,
                isolation,
            } => eprintln!(
                "guest attached ({}, {ms:.1} ms; isolation: {})",
                sanitize_line(provider),
                sanitize_line(isolation)
            ),
            EventKind::RuntimeWarning { message } => {
                eprintln!("guest warning: {}", sanitize(message))
            }
            EventKind::EnvOutput { text, .. } => eprint!("{}", sanitize(text)),
            EventKind::EnvSetupSkipped { reason } => {
                eprintln!("setup skipped: {}", sanitize(reason))
            }
            EventKind::McpServerFailed { name, reason } => eprintln!(
                "MCP server `{}` failed: {}",
                sanitize_line(name),
                sanitize(reason)
            ),
            EventKind::RuntimeFailed { error } | EventKind::EnvFailed { error } => {
                eprintln!("guest: {}", sanitize(error))
            }
            EventKind::ModelRetry {
                attempt,
                of,
                delay_ms,
                reason,
                ..
            } => {
                self.end_text(out);
                eprintln!(
                    "{}: {}",
                    cortex_protocol::retry_status(*attempt, *of, *delay_ms),
                    sanitize_line(reason)
                );
            }
            EventKind::Error { message } => eprintln!("error: {}", sanitize(message)),
            EventKind::HookFailed { event, hook, error } => {
                eprintln!("{}", hook_failed_line(event, hook, error))
            }
            EventKind::TurnImages { images } => {
                eprintln!(
                    "{}",
                    sanitize_line(&cortex_protocol::ImageRef::line(images))
                )
            }
            untrusted @ EventKind::HooksUntrusted { .. } => {
                if let Some(notice) = untrusted.untrusted_hooks_notice() {
                    self.end_text(out);
                    eprintln!("{}", sanitize_line(&notice));
                }
            }
            process @ (EventKind::ProcessStarted { .. } | EventKind::ProcessEnded { .. }) => {
                // The model wrote the command: one sanitised line.
                if let Some(line) = process.process_line() {
                    self.end_text(out);
                    eprintln!("{}", sanitize_line(&line));
                }
            }
            EventKind::SubagentStarted {
                kind, description, ..
            } => {
                self.end_text(out);
                eprintln!(
                    "  ↳ subagent ({}): {}",
                    sanitize_line(kind),
                    sanitize_line(description)
                );
            }
            // The child's work, one line a call; its answer is the result.
            EventKind::SubagentStep { name, summary, .. } => {
                self.end_text(out);
                eprintln!("  ↳   {} {}", sanitize_line(name), sanitize_line(summary));
            }
            EventKind::InstructionsLoaded {
                files, bytes, cut, ..
            } => {
                // A nested folder's file arrives mid-turn, after a call.
                self.end_text(out);
                eprintln!("{}", instructions_line(files, *bytes, *cut));
            }
            // Said so the user knows a rewind will not bring them back.
            EventKind::CheckpointTaken { excluded, .. } if !excluded.is_empty() => eprintln!(
                "checkpoint leaves out (regenerable, not rewound): {}",
                sanitize_line(&excluded.join(", "))
            ),
            EventKind::CheckpointFailed { reason } => {
                eprintln!("no checkpoint before this turn: {}", sanitize(reason))
            }
            EventKind::CheckpointPruned {
                checkpoints,
                used,
                scope,
                ..
            } => eprintln!(
                "pruned {} old checkpoint(s); {} use {} bytes",
                checkpoints.len(),
                match scope {
                    cortex_protocol::PruneScope::Session => "this session's checkpoints",
                    cortex_protocol::PruneScope::Total => "all sessions' checkpoints",
                },
                used
            ),
            EventKind::SessionRewound {
                turn_id,
                scope,
                paths,
                ..
            } => eprintln!(
                "rewound to before {} ({scope:?}; {paths} path(s) restored)",
                sanitize_line(turn_id)
            ),
            _ => return false,
        }
        true
    }

    /// The model's answer, streamed; thinking as one marker per stretch.
    fn text(&mut self, kind: &EventKind, out: &mut impl Write) -> bool {
        match kind {
            EventKind::MessageDelta { text } => {
                self.thinking = false;
                let _ = write!(out, "{}", sanitize(text));
                self.in_text = true;
                self.at_line_start = text.ends_with('\n');
            }
            EventKind::MessageDone { .. } => self.end_text(out),
            // Collapsed: one marker per stretch of thinking (the text is in
            // the timeline and in --json).
            EventKind::ThinkingDelta { .. } if !self.thinking => {
                self.end_text(out);
                eprintln!("· thinking…");
                self.thinking = true;
            }
            _ => return false,
        }
        true
    }

    /// A tool call's row, its streamed output, and its approval.
    fn tools(&mut self, kind: &EventKind, out: &mut impl Write) -> bool {
        match kind {
            EventKind::ToolCall {
                call_id,
                name,
                arguments,
            } => {
                self.calls
                    .insert(call_id.0.clone(), short_arguments(name, arguments));
            }
            EventKind::ToolOutputDelta { text, .. } => {
                for piece in text.split_inclusive('\n') {
                    if self.at_line_start {
                        let _ = write!(out, "  │ ");
                    }
                    let _ = write!(out, "{}", sanitize(piece));
                    self.at_line_start = piece.ends_with('\n');
                }
                self.in_text = true;
            }
            EventKind::ToolResult {
                call_id,
                name,
                status,
                output,
                ms,
                ..
            } => {
                self.end_text(out);
                let args = self.calls.remove(call_id.as_str()).unwrap_or_default();
                let mark = match status {
                    ToolStatus::Ok => "✓",
                    ToolStatus::Error => "✗",
                    ToolStatus::Refused | ToolStatus::Denied => "⊘",
                    ToolStatus::Stopped => "■",
                };
                let status_word = serde_json::to_value(status)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_owned))
                    .unwrap_or_default();
                let mut row = format!(
                    "{mark} {} {args} · {status_word} · {ms:.0} ms",
                    sanitize_line(&truncate(name, 60))
                );
                if *status != ToolStatus::Ok
                    && let Some(first) = output.lines().next()
                {
                    row.push_str(" · ");
                    row.push_str(&sanitize_line(&truncate(first, 120)));
                }
                let _ = writeln!(out, "{row}");
            }
            EventKind::ApprovalRequested {
                summary, reason, ..
            } => {
                self.end_text(out);
                let _ = writeln!(
                    out,
                    "? approval needed: {} · {}",
                    sanitize_line(&truncate(summary, 200)),
                    sanitize_line(&truncate(reason, 200))
                );
            }
            EventKind::ApprovalResolved { decision, .. } => {
                let _ = writeln!(out, "  approval: {}", decision.as_str());
            }

            _ => return false,
        }
        true
    }

    /// Plans, spec phases and the todo list, in full.
    fn proposals(&mut self, kind: &EventKind, out: &mut impl Write) -> bool {
        match kind {
            EventKind::PlanProposed {
                version,
                title,
                markdown,
            } => {
                self.end_text(out);
                let _ = writeln!(
                    out,
                    "── plan v{version}: {} ──\n{}\n──",
                    sanitize_line(title),
                    sanitize(markdown)
                );
            }
            EventKind::SpecProposed {
                phase,
                version,
                markdown,
            } => {
                self.end_text(out);
                let _ = writeln!(
                    out,
                    "── spec {phase} v{version} ──\n{}\n──",
                    sanitize(markdown)
                );
            }
            EventKind::SpecWritten { paths } => {
                self.end_text(out);
                let _ = writeln!(out, "spec written: {}", sanitize_line(&paths.join(", ")));
            }
            EventKind::TodoUpdated { todos } => {
                self.end_text(out);
                let _ = writeln!(out, "{}", sanitize(&cortex_tools::render_todos(todos)));
            }
            _ => return false,
        }
        true
    }

    /// Compaction's start, result or failure, on stderr.
    fn compaction(&mut self, kind: &EventKind, out: &mut impl Write) -> bool {
        match kind {
            EventKind::CompactionStarted {
                trigger,
                tokens_before,
                ..
            } => {
                self.end_text(out);
                eprintln!(
                    "· compacting the history ({}, ~{tokens_before} tokens)…",
                    trigger.as_str()
                );
            }
            EventKind::CompactionDone {
                tokens_before,
                tokens_after,
                summarised,
                kept,
                ..
            } => eprintln!(
                "· compacted: ~{tokens_before} → ~{tokens_after} tokens, {summarised} messages \
                 summarised, {} kept, {} open files",
                kept.recent_messages,
                kept.open_files.len()
            ),
            EventKind::CompactionFailed { error, .. } => {
                self.end_text(out);
                eprintln!("compaction failed (history unchanged): {}", sanitize(error));
            }
            _ => return false,
        }
        true
    }

    /// A turn's reminder and its end, with the usage summary.
    fn turn_end(&mut self, kind: &EventKind, out: &mut impl Write) -> bool {
        match kind {
            // Between the harness and the model: the user has nothing to
            // act on (the text is in the timeline and in --json). The
            // answer it asks for starts on a line of its own.
            EventKind::TurnReminder { .. } => self.end_text(out),
            EventKind::TurnCompleted {
                rounds,
                finish,
                unverified,
            } => {
                self.end_text(out);
                if *finish == Some(cortex_protocol::TurnFinish::MaxTokens) {
                    eprintln!("· the answer was cut at the provider's output token limit");
                }
                // A check still doubts the answer: the user should not
                // take it as checked.
                if let Some(line) = cortex_protocol::unverified_line(unverified) {
                    eprintln!("· {}", sanitize(&line));
                }
                eprintln!(
                    "turn completed · {rounds} rounds · {}",
                    self.usage_summary()
                );
            }
            EventKind::TurnStopped { reason } => {
                self.end_text(out);
                eprintln!(
                    "turn stopped: {} · {}",
                    sanitize(reason),
                    self.usage_summary()
                );
            }
            EventKind::TurnFailed { error, .. } => {
                self.end_text(out);
                eprintln!(
                    "turn failed: {} · {}",
                    sanitize(error),
                    self.usage_summary()
                );
            }
            _ => return false,
        }
        true
    }

    /// The `usage` events' totals, for the summary at the turn's end.
    fn usage(&mut self, kind: &EventKind) -> bool {
        match kind {
            EventKind::Usage {
                input_tokens,
                output_tokens,
                cache_read_tokens,
                cache_write_tokens,
                cost_usd,
            } => {
                let totals = &mut self.totals;
                let first = totals.requests == 0;
                totals.requests += 1;
                totals.tokens.input += input_tokens;
                totals.tokens.output += output_tokens;
                totals.tokens.cache_read += cache_read_tokens;
                totals.tokens.cache_write += cache_write_tokens;
                // A cost only when every request of the turn was priced.
                totals.cost_usd = match (first, totals.cost_usd, cost_usd) {
                    (true, _, cost) => *cost,
                    (false, Some(sum), Some(cost)) => Some(sum + cost),
                    _ => None,
                };
            }
            // A subagent's requests are the turn's too.
            EventKind::SubagentEnded { used, .. } => {
                let totals = &mut self.totals;
                totals.tokens.input += used.input_tokens;
                totals.tokens.output += used.output_tokens;
                totals.cost_usd = match (totals.cost_usd, used.cost_usd) {
                    (Some(sum), Some(cost)) => Some(sum + cost),
                    _ => None,
                };
            }
            _ => return false,
        }
        true
    }
}

fn truncate(text: &str, max_chars: usize) -> String {
    if text.chars().count() <= max_chars {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max_chars).collect();
    format!("{cut}…")
}

/// The one argument that identifies a call, for its row, sanitised as one
/// line (the model wrote it).
fn short_arguments(name: &str, arguments: &str) -> String {
    let text = CallSummary::of(name, arguments).text;
    sanitize_line(&truncate(&text, 60)).into_owned()
}

/// `PreToolUse hook `…` failed: …`: every part from the hook's side
/// sanitised (a hook's output may carry escape sequences).
fn hook_failed_line(event: &str, hook: &str, error: &str) -> String {
    format!(
        "{} hook `{}` failed: {}",
        sanitize_line(event),
        sanitize_line(hook),
        sanitize_line(error)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_hook_is_one_sanitised_line() {
        let line = hook_failed_line(
            "PreToolUse",
            "/home/me/guard\x1b]0;title\x07",
            "it exited with status 1: \x1b[31mred\x1b[0m\nsecond",
        );
        assert!(!line.contains('\x1b') && !line.contains('\x07') && !line.contains('\n'));
        assert!(
            line.starts_with("PreToolUse hook `/home/me/guard"),
            "{line}"
        );
        assert!(line.contains("red"), "{line}");
    }

    #[test]
    fn short_arguments_pick_the_identifying_field() {
        assert_eq!(
            short_arguments("read_file", r#"{"path":"src/a.rs"}"#),
            "src/a.rs"
        );
        assert_eq!(
            short_arguments("bash", r#"{"command":"cargo test\nmore"}"#),
            "cargo test"
        );
        assert_eq!(
            short_arguments("grep", r#"{"pattern":"fn","path":"src"}"#),
            "fn in src"
        );
        assert_eq!(short_arguments("bash", "{not json"), "{not json");
    }
}

/// `12000 tokens in (9000 cached), 300 out · ~$0.0123`: the cost only when
/// the model's prices are known.
fn summary(totals: &MeterTotals) -> String {
    let t = &totals.tokens;
    let mut line = format!("{} tokens in", t.input);
    if t.cache_read > 0 {
        line.push_str(&format!(" ({} cached)", t.cache_read));
    }
    line.push_str(&format!(", {} out", t.output));
    if let Some(cost) = totals.cost_usd {
        line.push_str(&format!(" · ~${cost:.4}"));
    }
    line
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use cortex_model::TokenCounts;

    #[test]
    fn summary_shows_cache_and_cost_when_known() {
        let mut totals = MeterTotals {
            requests: 2,
            tokens: TokenCounts {
                input: 12_000,
                output: 300,
                cache_read: 9_000,
                cache_write: 0,
            },
            cost_usd: Some(0.012_34),
        };
        assert_eq!(
            summary(&totals),
            "12000 tokens in (9000 cached), 300 out · ~$0.0123"
        );
        totals.cost_usd = None;
        totals.tokens.cache_read = 0;
        assert_eq!(summary(&totals), "12000 tokens in, 300 out");
    }
}

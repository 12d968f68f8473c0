//! The status line above the composer: what the turn is waiting for (the
//! guest attaching, the setup script, the model processing its prompt,
//! with elapsed time and progress), the plan or spec phase that waits for
//! a verdict and its keys, the context window's fill, the model,
//! and the sandbox policy. Segments that do not fit are dropped, least
//! important first.

use crate::state::{GuestPhase, Phase, SessionState};
use crate::text;
use crate::time::{Millis, elapsed};
use crate::view::context::SPINNER;
use crate::view::theme::Theme;
use cortex_protocol::{NetworkPolicy, SandboxPolicy};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// The status line: the turn's phase and time, the guest, tokens and cost.
pub struct Status<'a> {
    /// The session.
    pub state: &'a SessionState,
    /// The clock.
    pub now: Millis,
    /// The spinner's frame.
    pub spinner: usize,
    /// Colours.
    pub theme: Theme,
    /// The context window when no event told it.
    pub context_hint: Option<u64>,
    /// A passing message (an unknown command, an API error) shown instead.
    pub flash: Option<&'a str>,
    /// The composer holds the feedback of a rejection (Ctrl+R).
    pub rejecting: bool,
}

impl Status<'_> {
    /// Draw it in `area`.
    pub fn render(&self, area: Rect, buf: &mut Buffer) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        let width = usize::from(area.width);
        let line = match self.flash {
            Some(flash) => Line::from(Span::styled(
                text::truncate(flash, width).into_owned(),
                self.theme.warning(),
            )),
            None => fit(self.segments(), width, self.theme),
        };
        buf.set_line(area.x, area.y, &line, area.width);
    }

    /// `(text, style)` in order of importance.
    fn segments(&self) -> Vec<(String, Style)> {
        let theme = self.theme;
        let state = self.state;
        let mut out = Vec::new();
        // The approval panel above shows the command whole, and its keys.
        if state.approval.is_some() {
            out.push(("approval needed ↑".into(), theme.warning()));
        }
        if let Some(review) = state.review.as_ref().filter(|_| !state.running()) {
            let text = if self.rejecting {
                format!("feedback rejects {} · Esc cancels", review.label)
            } else {
                format!("{} · ^Y accept · ^R reject", review.label)
            };
            out.push((text, theme.accent()));
        }
        if let Some(activity) = self.activity() {
            let spinner = SPINNER[self.spinner % SPINNER.len()];
            out.push((format!("{spinner} {activity}"), theme.accent()));
        } else if state.guest == GuestPhase::Failed {
            out.push(("guest failed".into(), theme.error()));
        }
        let used = state.usage.context;
        match state.context_window.or(self.context_hint) {
            Some(window) if window > 0 => {
                let percent = used.saturating_mul(100) / window;
                let style = if percent >= 80 {
                    theme.warning()
                } else {
                    theme.dim()
                };
                out.push((
                    format!("{}/{} {percent}%", text::count(used), text::count(window)),
                    style,
                ));
            }
            _ if used > 0 => out.push((format!("{} tokens", text::count(used)), theme.dim())),
            _ => {}
        }
        if !state.model.is_empty() {
            out.push((state.model.clone(), theme.dim()));
        }
        let policy = match state.sandbox.policy {
            SandboxPolicy::ReadOnly => "read-only",
            SandboxPolicy::WorkspaceWrite => "workspace-write",
            SandboxPolicy::FullAccess => "full-access",
        };
        let network = match state.sandbox.network {
            NetworkPolicy::Off => "net off",
            NetworkPolicy::On => "net on",
        };
        let sandbox_style = if state.sandbox.policy == SandboxPolicy::FullAccess {
            theme.warning()
        } else {
            theme.dim()
        };
        out.push((format!("{policy} · {network}"), sandbox_style));
        out
    }

    /// What the running turn is doing, with how long it has been at it.
    fn activity(&self) -> Option<String> {
        let turn = self.state.turn.as_ref()?;
        let since = |at: Option<Millis>| {
            at.map(|t| format!(" {}", elapsed((self.now - t).max(0) as f64)))
                .unwrap_or_default()
        };
        Some(match (&self.state.guest, turn.phase) {
            (_, Phase::Compacting { since: at }) => format!("compacting{}", since(at)),
            (GuestPhase::Attaching { since: at }, _) => format!("attaching guest{}", since(*at)),
            (GuestPhase::Preparing { since: at }, _) => format!("running setup{}", since(*at)),
            (_, Phase::Waiting { since: at, .. }) => match turn.progress {
                Some((done, total)) => format!(
                    "prompt {}/{} tokens{}",
                    text::count(done),
                    text::count(total),
                    since(at)
                ),
                None => format!("waiting for the model{}", since(at)),
            },
            (_, Phase::Responding) => "responding".into(),
            (_, Phase::Tools) => "running tools".into(),
            (_, Phase::Starting) => format!("starting{}", since(turn.started)),
        })
    }
}

/// The segments that fit in `width`, joined by ` · `; the last one kept is
/// cut to fit.
fn fit(mut segments: Vec<(String, Style)>, width: usize, theme: Theme) -> Line<'static> {
    let sep = " · ";
    let total = |s: &[(String, Style)]| -> usize {
        s.iter().map(|(t, _)| text::width(t)).sum::<usize>() + 3 * s.len().saturating_sub(1)
    };
    while segments.len() > 1 && total(&segments) > width {
        segments.pop();
    }
    let mut spans = Vec::new();
    let mut used = 0;
    for (i, (text, style)) in segments.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(sep, theme.dim()));
            used += 3;
        }
        let shown = text::truncate(&text, width.saturating_sub(used)).into_owned();
        used += text::width(&shown);
        spans.push(Span::styled(shown, style));
    }
    Line::from(spans)
}

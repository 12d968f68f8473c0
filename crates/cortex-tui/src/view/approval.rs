//! The approval panel: while a call waits for the user's answer, the whole
//! of what it would run, over the bottom of the transcript.
//!
//! "Show before asking": the command is wrapped to the width and never
//! truncated (a multi-line command keeps its lines, each sanitised by the
//! state), followed by why it asks (what no rule covers) as a warning, and
//! the keys on the bottom border. When all that is taller than the panel
//! it scrolls, a row says where it is (`lines 1–5 of 14 · ↓ for more`),
//! and the panel remembers whether its last row has been on screen: until
//! then `y` and `a` are refused (`app/approval.rs`), `n` never is. Only a
//! drawn frame sets that mark, so it records what the user could see.

use crate::state::PendingApproval;
use crate::view::theme::Theme;
use crate::view::wrap::{Para, wrap_all};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Widget};

/// What a refused `y` or `a` says.
pub const SCROLL_FIRST: &str = "scroll to the end first: the command is longer than the screen";

/// The panel's scroll state and the rows of the last frame.
#[derive(Debug, Default)]
pub struct ApprovalPanel {
    /// The call this state belongs to; another call starts afresh.
    call_id: String,
    /// The first content row shown.
    top: usize,
    /// Content rows in total, and in view, at the last frame.
    total: usize,
    view: usize,
    /// The last content row has been on screen.
    seen_end: bool,
    /// The wrapped content rows and the inner width they were wrapped to.
    rows: Vec<Line<'static>>,
    width: usize,
}

impl ApprovalPanel {
    /// Rows the panel wants for `pending` at `width` (borders included),
    /// at most `max`.
    pub fn height(&mut self, pending: &PendingApproval, width: u16, max: u16, theme: Theme) -> u16 {
        let inner = usize::from(width.saturating_sub(2));
        let rows = self.rows(pending, inner, theme).len();
        u16::try_from(rows + 2).unwrap_or(u16::MAX).min(max)
    }

    /// Whether the last row of `call_id`'s content has been on screen.
    pub fn seen_end(&self, call_id: &str) -> bool {
        self.call_id == call_id && self.seen_end
    }

    /// Whether `call_id`'s content was taller than the panel at the last
    /// frame (only then do the scroll keys belong to the panel).
    pub fn scrollable(&self, call_id: &str) -> bool {
        self.call_id == call_id && self.total > self.view
    }

    /// `(first, last, total)` content rows in view at the last frame, from 1.
    pub fn position(&self) -> (usize, usize, usize) {
        let last = (self.top + self.view).min(self.total);
        (self.top + 1, last, self.total)
    }

    /// Rows of a page (PageUp/PageDown).
    pub fn page(&self) -> usize {
        self.view.saturating_sub(1).max(1)
    }

    /// Scroll `call_id`'s content `rows` down (no further than its end).
    pub fn scroll_down(&mut self, call_id: &str, rows: usize) {
        self.sync(call_id);
        let bottom = self.total.saturating_sub(self.view);
        self.top = self.top.saturating_add(rows).min(bottom);
    }

    /// Scroll `call_id`'s content `rows` up.
    pub fn scroll_up(&mut self, call_id: &str, rows: usize) {
        self.sync(call_id);
        self.top = self.top.saturating_sub(rows);
    }

    /// Draw `pending` into `area`; marks the end seen when it is in view
    /// and `uncovered` (nothing else is drawn over the panel this frame: a
    /// modal or the completion list would hide rows the mark vouches for).
    pub fn render(
        &mut self,
        pending: &PendingApproval,
        theme: Theme,
        area: Rect,
        buf: &mut Buffer,
        uncovered: bool,
    ) {
        if area.width == 0 || area.height == 0 {
            return;
        }
        Clear.render(area, buf);
        // Below three rows a border would leave no room for the command.
        let bordered = area.height >= 3 && area.width >= 3;
        let inner = if bordered {
            Rect {
                x: area.x + 1,
                y: area.y + 1,
                width: area.width - 2,
                height: area.height - 2,
            }
        } else {
            area
        };
        let total = self.rows(pending, usize::from(inner.width), theme).len();
        let height = usize::from(inner.height);
        // The position row takes one of the panel's rows, when it has two.
        let indicator = total > height && height >= 2;
        let view = if indicator { height - 1 } else { height };
        self.total = total;
        self.view = view;
        self.top = self.top.min(total.saturating_sub(view));
        if uncovered && view > 0 && self.top + view >= total {
            self.seen_end = true;
        }
        for (i, row) in self.rows.iter().skip(self.top).take(view).enumerate() {
            buf.set_line(inner.x, inner.y + i as u16, row, inner.width);
        }
        if indicator {
            let line = Line::from(Span::styled(self.indicator(), theme.accent()));
            buf.set_line(inner.x, inner.bottom() - 1, &line, inner.width);
        }
        if bordered {
            self.border(pending, theme).render(area, buf);
        }
    }

    /// `lines 1–5 of 14 · ↓ for more`, or `… · end` once at the end.
    fn indicator(&self) -> String {
        let (first, last, total) = self.position();
        let more = if last >= total {
            "end · ↑ back"
        } else {
            "↓ for more"
        };
        format!("lines {first}–{last} of {total} · {more}")
    }

    /// The box: the tool on top, the keys that work now at the bottom.
    fn border(&self, pending: &PendingApproval, theme: Theme) -> Block<'static> {
        let keys = if self.seen_end {
            " y allow · n deny · a always "
        } else {
            " n deny · ↓ to the end for y/a "
        };
        Block::default()
            .borders(Borders::ALL)
            .border_type(BorderType::Rounded)
            .border_style(theme.warning())
            .title(Line::from(Span::styled(
                format!(" approve {}? ", pending.name),
                theme.warning().patch(theme.bold()),
            )))
            .title_bottom(Line::from(Span::styled(keys, theme.bold())))
    }

    /// Another call than the last one starts at its top, unseen.
    fn sync(&mut self, call_id: &str) {
        if self.call_id != call_id {
            *self = ApprovalPanel {
                call_id: call_id.to_owned(),
                ..ApprovalPanel::default()
            };
        }
    }

    /// The content rows at `width`: the command, wrapped hard (every space
    /// kept, a continuation row marked `↳`), then the reasons as warnings.
    fn rows(&mut self, pending: &PendingApproval, width: usize, theme: Theme) -> &[Line<'static>] {
        self.sync(&pending.call_id);
        if self.width != width || self.rows.is_empty() {
            let mut paras: Vec<Para> = pending
                .lines
                .iter()
                .map(|line| {
                    Para::hard(
                        Line::from(Span::styled(line.clone(), theme.bold())),
                        vec![Span::styled("↳ ", theme.dim())],
                    )
                })
                .collect();
            paras.push(Para::blank());
            for (i, reason) in pending.reason_lines.iter().enumerate() {
                let mark = if i == 0 { "!" } else { " " };
                paras.push(Para::hanging(
                    Line::from(Span::styled(format!("{mark} {reason}"), theme.warning())),
                    vec![Span::raw("  ")],
                ));
            }
            self.rows.clear();
            wrap_all(&paras, width, &mut self.rows);
            self.width = width;
        }
        &self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending(summary: &str) -> PendingApproval {
        PendingApproval::new("c1", "bash", summary, "no rule covers `x`")
    }

    fn text(buf: &Buffer) -> String {
        let area = buf.area;
        let mut out = String::new();
        for y in area.top()..area.bottom() {
            for x in area.left()..area.right() {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    #[test]
    fn a_short_command_fits_and_counts_as_seen() {
        let mut panel = ApprovalPanel::default();
        let p = pending("ls");
        assert_eq!(panel.height(&p, 40, 8, Theme::no_color()), 5);
        let area = Rect::new(0, 0, 40, 5);
        let mut buf = Buffer::empty(area);
        panel.render(&p, Theme::no_color(), area, &mut buf, false);
        assert!(!panel.seen_end("c1"), "drawn under a modal: not seen");
        panel.render(&p, Theme::no_color(), area, &mut buf, true);
        assert!(panel.seen_end("c1") && !panel.seen_end("c2"));
        assert!(!panel.scrollable("c1"));
        assert!(text(&buf).contains("y allow"), "{}", text(&buf));
    }

    #[test]
    fn a_tall_command_scrolls_to_its_end_and_no_further() {
        let mut panel = ApprovalPanel::default();
        let lines: Vec<String> = (1..=12).map(|i| format!("echo {i}")).collect();
        let p = pending(&lines.join("\n"));
        let area = Rect::new(0, 0, 40, 8);
        let mut buf = Buffer::empty(area);
        panel.render(&p, Theme::no_color(), area, &mut buf, true);
        assert!(!panel.seen_end("c1") && panel.scrollable("c1"));
        assert_eq!(panel.position(), (1, 5, 14));
        assert!(text(&buf).contains("lines 1–5 of 14 · ↓ for more"));
        panel.scroll_down("c1", 100);
        panel.render(&p, Theme::no_color(), area, &mut buf, true);
        assert_eq!(panel.position(), (10, 14, 14));
        assert!(panel.seen_end("c1"));
        panel.scroll_up("c1", 3);
        panel.render(&p, Theme::no_color(), area, &mut buf, true);
        assert!(panel.seen_end("c1"), "seen once is enough");
    }
}

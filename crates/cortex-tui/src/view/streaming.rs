//! An answer that is still streaming, drawn per frame from its last complete
//! block on: the blocks before it (split at a blank line outside a code
//! fence, before a line that cannot continue a list or a quote) keep the
//! rows they were wrapped to, so a frame costs the tail, not the answer.
//!
//! Once the answer is done it is rendered whole, once, like any other cell;
//! the split only ever affects the frames while it streams.

use crate::view::context::Ctx;
use crate::view::markdown;
use crate::view::wrap::wrap_all;
use ratatui::text::Line;

/// A streaming answer's rendered rows: finished blocks kept, the last one
/// rendered again as text arrives.
#[derive(Debug, Default)]
pub struct Streaming {
    width: usize,
    /// Bytes of the text whose rows are settled.
    stable: usize,
    /// Rows (at the front of the cell's rows) of `text[..stable]`.
    stable_rows: usize,
    /// Scanned up to here (always a line start).
    scanned: usize,
    in_fence: bool,
    prev_blank: bool,
    /// The last block boundary found so far.
    boundary: usize,
}

impl Streaming {
    /// Make `rows` the rows of `text` at `ctx.width`, keeping the settled
    /// front of the last call's rows when `text` only grew.
    pub fn update(&mut self, text: &str, ctx: &Ctx, rows: &mut Vec<Line<'static>>) {
        if self.width != ctx.width || text.len() < self.scanned || rows.len() < self.stable_rows {
            *self = Streaming {
                width: ctx.width,
                ..Streaming::default()
            };
            rows.clear();
        }
        self.scan(text);
        rows.truncate(self.stable_rows);
        if self.boundary > self.stable {
            push_block(&text[self.stable..self.boundary], ctx, rows);
            self.stable = self.boundary;
            self.stable_rows = rows.len();
        }
        push_block(&text[self.stable..], ctx, rows);
    }

    /// Find block boundaries in the complete lines not scanned yet.
    fn scan(&mut self, text: &str) {
        let Some(last_newline) = text.rfind('\n') else {
            return;
        };
        let complete = last_newline + 1;
        while self.scanned < complete {
            let start = self.scanned;
            let end = text[start..complete]
                .find('\n')
                .map_or(complete, |i| start + i + 1);
            let line = &text[start..end];
            let trimmed = line.trim_start();
            if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
                if !self.in_fence && self.prev_blank {
                    self.boundary = start;
                }
                self.in_fence = !self.in_fence;
            } else if !self.in_fence && self.prev_blank && starts_a_block(line) {
                self.boundary = start;
            }
            self.prev_blank = !self.in_fence && line.trim().is_empty();
            self.scanned = end;
        }
    }
}

/// Whether a line after a blank one starts a new top-level block: not
/// indented (a list item's continuation or an indented code block), not a
/// list item or quote (which may continue a loose list or a quote).
fn starts_a_block(line: &str) -> bool {
    match line.chars().next() {
        None | Some(' ' | '\t' | '\n' | '\r') => false,
        Some('-' | '*' | '+' | '>' | '|') => false,
        Some(c) => !c.is_ascii_digit(),
    }
}

fn push_block(markdown: &str, ctx: &Ctx, rows: &mut Vec<Line<'static>>) {
    let paras = markdown::render(markdown, ctx.theme);
    if paras.is_empty() {
        return;
    }
    if !rows.is_empty() {
        rows.push(Line::default());
    }
    wrap_all(&paras, ctx.width, rows);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::theme::Theme;

    fn whole(text: &str, ctx: &Ctx) -> Vec<Line<'static>> {
        let mut rows = Vec::new();
        wrap_all(&markdown::render(text, ctx.theme), ctx.width, &mut rows);
        rows
    }

    #[test]
    fn streaming_in_pieces_draws_what_one_pass_draws() {
        let ctx = Ctx::new(Theme::colored(), 30, 20, 0, false);
        let text = "# Title\n\nFirst paragraph that is long enough to wrap twice over.\n\n\
                    ```rust\nfn a() {}\n\nfn b() {}\n```\n\nSecond *one*.\n\n- item\n\n- loose item\n\nEnd.\n";
        let mut stream = Streaming::default();
        let mut rows = Vec::new();
        for end in 1..=text.len() {
            if text.is_char_boundary(end) {
                stream.update(&text[..end], &ctx, &mut rows);
            }
        }
        assert!(stream.stable > 0, "blocks were settled");
        let text_of = |rows: &[Line<'_>]| -> Vec<String> {
            rows.iter()
                .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
                .collect()
        };
        assert_eq!(text_of(&rows), text_of(&whole(text, &ctx)));
    }

    #[test]
    fn a_new_width_starts_over() {
        let mut stream = Streaming::default();
        let mut rows = Vec::new();
        let narrow = Ctx::new(Theme::colored(), 10, 20, 0, false);
        stream.update(
            "one two three\n\nfour five six\n\nseven",
            &narrow,
            &mut rows,
        );
        let wide = Ctx::new(Theme::colored(), 40, 20, 0, false);
        stream.update("one two three\n\nfour five six\n\nseven", &wide, &mut rows);
        assert_eq!(rows.len(), 5);
    }
}

//! Wrapping styled lines to a width, once per cell and width (the
//! transcript caches the result, so a frame only copies rows).
//!
//! Prose wraps at spaces, with a hanging indent for continuation rows (list
//! items, quotes, tool output); a word longer than the row is split.
//! Code and diffs wrap hard, at the last cell that fits, keeping every
//! space.

use crate::text::char_width;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// A logical line before wrapping.
#[derive(Debug, Clone)]
pub struct Para {
    /// The line's text and styles.
    pub line: Line<'static>,
    /// Continuation rows start with this (styled) prefix.
    pub hang: Vec<Span<'static>>,
    /// Never joined with the next line (code, tables).
    pub hard: bool,
}

impl Para {
    /// Prose: wrapped at word boundaries, no prefix.
    pub fn prose(line: Line<'static>) -> Para {
        Para {
            line,
            hang: Vec::new(),
            hard: false,
        }
    }

    /// Wrapped, with `hang` before every continuation row.
    pub fn hanging(line: Line<'static>, hang: Vec<Span<'static>>) -> Para {
        Para {
            line,
            hang,
            hard: false,
        }
    }

    /// Wrapped like [`Para::hanging`], and never joined with the next line.
    pub fn hard(line: Line<'static>, hang: Vec<Span<'static>>) -> Para {
        Para {
            line,
            hang,
            hard: true,
        }
    }

    /// An empty line.
    pub fn blank() -> Para {
        Para::prose(Line::default())
    }
}

/// Wrap every paragraph to `width` cells and append the rows to `out`.
pub fn wrap_all(paras: &[Para], width: usize, out: &mut Vec<Line<'static>>) {
    for para in paras {
        wrap(para, width, out);
    }
}

/// Rows of one paragraph at `width` cells (at least one row, even for an
/// empty line).
pub fn wrap(para: &Para, width: usize, out: &mut Vec<Line<'static>>) {
    let width = width.max(1);
    let hang_width: usize = para.hang.iter().map(|s| span_width(s)).sum();
    // A hang that leaves no room is dropped rather than looping forever.
    let hang: &[Span<'static>] = if hang_width + 1 >= width {
        &[]
    } else {
        &para.hang
    };
    let mut rows = Rows::new(width, hang, para.line.style);
    if para.hard {
        for span in &para.line.spans {
            for c in span.content.chars() {
                rows.push_char(c, span.style);
            }
        }
    } else {
        for (word, spaces) in words(&para.line) {
            rows.push_word(&word, &spaces);
        }
    }
    rows.finish(out);
}

fn span_width(span: &Span<'_>) -> usize {
    span.content.chars().map(char_width).sum()
}

/// Pieces of a word (or of its trailing spaces): `(text, style)`.
type Pieces = Vec<(String, Style)>;

/// The line as words, each with the spaces that follow it. Leading spaces
/// come as a word of no text, so indentation is kept.
fn words(line: &Line<'_>) -> Vec<(Pieces, Pieces)> {
    let mut words: Vec<(Pieces, Pieces)> = vec![(Vec::new(), Vec::new())];
    for span in &line.spans {
        for c in span.content.chars() {
            let Some(last) = words.last_mut() else {
                continue;
            };
            let target = if c == ' ' {
                &mut last.1
            } else {
                if !last.1.is_empty() {
                    words.push((Vec::new(), Vec::new()));
                }
                match words.last_mut() {
                    Some(w) => &mut w.0,
                    None => continue,
                }
            };
            match target.last_mut() {
                Some((text, style)) if *style == span.style => text.push(c),
                _ => target.push((c.to_string(), span.style)),
            }
        }
    }
    words
}

fn pieces_width(pieces: &Pieces) -> usize {
    pieces
        .iter()
        .map(|(t, _)| t.chars().map(char_width).sum::<usize>())
        .sum()
}

/// The rows being filled.
struct Rows<'h> {
    width: usize,
    hang: &'h [Span<'static>],
    line_style: Style,
    done: Vec<Line<'static>>,
    current: Vec<Span<'static>>,
    used: usize,
    /// Whether `current` holds anything but its prefix.
    has_content: bool,
}

impl<'h> Rows<'h> {
    fn new(width: usize, hang: &'h [Span<'static>], line_style: Style) -> Rows<'h> {
        Rows {
            width,
            hang,
            line_style,
            done: Vec::new(),
            current: Vec::new(),
            used: 0,
            has_content: false,
        }
    }

    fn push_text(&mut self, text: &str, style: Style) {
        match self.current.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(text),
            _ => self.current.push(Span::styled(text.to_owned(), style)),
        }
    }

    fn new_row(&mut self) {
        let row = std::mem::take(&mut self.current);
        self.done.push(Line::from(row).style(self.line_style));
        self.current.extend(self.hang.iter().cloned());
        self.used = self.hang.iter().map(|s| span_width(s)).sum();
        self.has_content = false;
    }

    fn push_char(&mut self, c: char, style: Style) {
        let w = char_width(c);
        if self.used + w > self.width && self.has_content {
            self.new_row();
        }
        let mut buf = [0u8; 4];
        self.push_text(c.encode_utf8(&mut buf), style);
        self.used += w;
        self.has_content = true;
    }

    fn push_word(&mut self, word: &Pieces, spaces: &Pieces) {
        let w = pieces_width(word);
        if self.used + w > self.width && self.has_content {
            self.new_row();
        }
        if self.used + w > self.width {
            // Longer than a whole row: split it.
            for (text, style) in word {
                for c in text.chars() {
                    self.push_char(c, *style);
                }
            }
        } else {
            for (text, style) in word {
                self.push_text(text, *style);
            }
            self.used += w;
            if w > 0 {
                self.has_content = true;
            }
        }
        // Spaces that fit are kept (they separate words, or indent);
        // those past the edge would only trail.
        for (text, style) in spaces {
            for c in text.chars() {
                if self.used < self.width {
                    let mut buf = [0u8; 4];
                    self.push_text(c.encode_utf8(&mut buf), *style);
                    self.used += 1;
                }
            }
        }
    }

    fn finish(mut self, out: &mut Vec<Line<'static>>) {
        let row = std::mem::take(&mut self.current);
        self.done.push(Line::from(row).style(self.line_style));
        out.append(&mut self.done);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(para: &Para, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        wrap(para, width, &mut out);
        out.iter()
            .map(|l| {
                l.spans
                    .iter()
                    .map(|s| s.content.as_ref())
                    .collect::<String>()
            })
            .collect()
    }

    #[test]
    fn prose_wraps_at_spaces() {
        let para = Para::prose(Line::from("the quick brown fox jumps"));
        assert_eq!(rows(&para, 10), ["the quick ", "brown fox ", "jumps"]);
        assert_eq!(rows(&Para::blank(), 10), [""]);
    }

    #[test]
    fn long_words_split_and_hangs_indent() {
        let para = Para::hanging(Line::from("• abcdefghijkl mn"), vec![Span::raw("  ")]);
        assert_eq!(rows(&para, 6), ["• ", "  abcd", "  efgh", "  ijkl", "  mn"]);
    }

    #[test]
    fn hard_wrap_keeps_spaces_and_wide_chars() {
        let para = Para::hard(Line::from("  let x = 日本;"), vec![]);
        assert_eq!(rows(&para, 8), ["  let x ", "= 日本;"]);
        let para = Para::hard(Line::from("日本語"), vec![]);
        assert_eq!(rows(&para, 3), ["日", "本", "語"]);
    }

    #[test]
    fn styles_survive_wrapping() {
        let para = Para::prose(Line::from(vec![
            Span::raw("plain "),
            Span::styled("bold words", Style::new().bold()),
        ]));
        let mut out = Vec::new();
        wrap(&para, 8, &mut out);
        assert_eq!(out.len(), 3);
        assert_eq!(out[1].spans[0].content, "bold ");
        assert_eq!(out[1].spans[0].style, Style::new().bold());
    }
}

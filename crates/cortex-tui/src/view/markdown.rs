//! Markdown (CommonMark with tables, strikethrough and task lists) to
//! logical lines: headings, emphasis, lists with hanging indents, quotes,
//! highlighted code blocks, tables, links with their target shown.
//!
//! The input has been sanitised already (the fold cleans every string);
//! this only decides styles and layout.

use crate::text;
use crate::view::highlight::highlight;
use crate::view::theme::Theme;
use crate::view::wrap::Para;
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Code blocks are indented this much, so they stand apart without colour.
const CODE_INDENT: &str = "  ";

/// Logical lines of `markdown`.
pub fn render(markdown: &str, theme: Theme) -> Vec<Para> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut writer = Writer::new(theme);
    for event in Parser::new_ext(markdown, options) {
        writer.event(event);
    }
    writer.finish()
}

enum Container {
    Quote,
    Item { marker: String, first: bool },
}

#[derive(Default)]
struct Table {
    rows: Vec<Vec<Vec<Span<'static>>>>,
    header_rows: usize,
    in_head: bool,
}

struct Writer {
    theme: Theme,
    out: Vec<Para>,
    spans: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    /// Next number of each open list (`None`: bulleted).
    lists: Vec<Option<u64>>,
    links: Vec<String>,
    code: Option<(String, String)>,
    table: Option<Table>,
    blank_pending: bool,
}

impl Writer {
    fn new(theme: Theme) -> Writer {
        Writer {
            theme,
            out: Vec::new(),
            spans: Vec::new(),
            styles: vec![Style::new()],
            containers: Vec::new(),
            lists: Vec::new(),
            links: Vec::new(),
            code: None,
            table: None,
            blank_pending: false,
        }
    }

    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or_default()
    }

    fn push_style(&mut self, style: Style) {
        let merged = self.style().patch(style);
        self.styles.push(merged);
    }

    fn pop_style(&mut self) {
        if self.styles.len() > 1 {
            self.styles.pop();
        }
    }

    fn text(&mut self, text: &str) {
        let style = self.style();
        if let Some((_, code)) = &mut self.code {
            code.push_str(text);
            return;
        }
        self.spans.push(Span::styled(text.to_owned(), style));
    }

    /// The prefix of the next row: quote bars and list markers (the first
    /// row of an item gets its marker, later ones the marker's width).
    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let (mut first, mut rest) = (Vec::new(), Vec::new());
        let dim = self.theme.dim();
        for container in &mut self.containers {
            match container {
                Container::Quote => {
                    first.push(Span::styled("│ ", dim));
                    rest.push(Span::styled("│ ", dim));
                }
                Container::Item {
                    marker,
                    first: is_first,
                } => {
                    let pad = " ".repeat(text::width(marker));
                    if *is_first {
                        first.push(Span::styled(marker.clone(), self.theme.accent()));
                        *is_first = false;
                    } else {
                        first.push(Span::raw(pad.clone()));
                    }
                    rest.push(Span::raw(pad));
                }
            }
        }
        (first, rest)
    }

    fn in_list(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    /// Before a block: a blank line between blocks (not inside lists).
    fn open_block(&mut self) {
        self.flush();
        if self.blank_pending && !self.out.is_empty() && !self.in_list() {
            let (_, rest) = self.prefixes();
            self.out.push(Para::prose(Line::from(rest)));
        }
        self.blank_pending = false;
    }

    fn close_block(&mut self) {
        self.flush();
        self.blank_pending = true;
    }

    /// The spans so far as one logical line.
    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let (mut line, hang) = self.prefixes();
        line.append(&mut self.spans);
        self.out.push(Para::hanging(Line::from(line), hang));
    }

    fn event(&mut self, event: Event<'_>) {
        if let Some(table) = &mut self.table
            && table_event(
                table,
                &event,
                self.styles.last().copied().unwrap_or_default(),
            )
        {
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => self.text(&t),
            Event::Code(code) => {
                let shown = if self.theme.has_color() {
                    code.to_string()
                } else {
                    format!("`{code}`")
                };
                let style = self.style().patch(self.theme.inline_code());
                self.spans.push(Span::styled(shown, style));
            }
            Event::Html(html) | Event::InlineHtml(html) => {
                let style = self.style().patch(self.theme.dim());
                for (i, line) in html.split('\n').enumerate() {
                    if i > 0 {
                        self.flush();
                    }
                    if !line.is_empty() {
                        self.spans.push(Span::styled(line.to_owned(), style));
                    }
                }
            }
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => self.flush(),
            Event::Rule => {
                self.open_block();
                self.spans.push(Span::styled("———", self.theme.dim()));
                self.close_block();
            }
            Event::TaskListMarker(done) => {
                let mark = if done { "[x] " } else { "[ ] " };
                self.spans.push(Span::styled(mark, self.theme.accent()));
            }
            Event::InlineMath(m) | Event::DisplayMath(m) => self.text(&m),
            Event::FootnoteReference(name) => self.text(&format!("[^{name}]")),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.open_block(),
            Tag::Heading { level, .. } => {
                self.open_block();
                let mut style = self.theme.heading();
                if level == HeadingLevel::H1 {
                    style = style.add_modifier(Modifier::UNDERLINED);
                }
                self.push_style(style);
            }
            Tag::BlockQuote(_) => {
                self.open_block();
                self.containers.push(Container::Quote);
                self.push_style(self.theme.italic());
            }
            Tag::CodeBlock(kind) => {
                self.open_block();
                let language = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((language, String::new()));
            }
            Tag::List(start) => {
                if !self.in_list() {
                    self.open_block();
                }
                self.flush();
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let depth = self.lists.len().saturating_sub(1);
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => ["• ", "◦ ", "▪ "][depth % 3].to_owned(),
                };
                self.containers.push(Container::Item {
                    marker,
                    first: true,
                });
            }
            Tag::Emphasis => self.push_style(self.theme.italic()),
            Tag::Strong => self.push_style(self.theme.bold()),
            Tag::Strikethrough => self.push_style(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.push_style(self.theme.link());
            }
            Tag::Image { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.text("[image: ");
            }
            Tag::Table(_) => {
                self.open_block();
                self.table = Some(Table::default());
            }
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.close_block(),
            TagEnd::Heading(_) => {
                self.pop_style();
                self.close_block();
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.pop_style();
                self.containers.pop();
                self.blank_pending = true;
            }
            TagEnd::CodeBlock => self.code_block(),
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.blank_pending = true;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.pop_style(),
            TagEnd::Link => {
                self.pop_style();
                let url = self.links.pop().unwrap_or_default();
                let shown: String = self
                    .spans
                    .iter()
                    .rev()
                    .take(1)
                    .map(|s| s.content.to_string())
                    .collect();
                if !url.is_empty() && shown != url && !url.starts_with('#') {
                    let style = self.theme.dim();
                    self.spans.push(Span::styled(format!(" ({url})"), style));
                }
            }
            TagEnd::Image => {
                self.links.pop();
                self.text("]");
            }
            _ => {}
        }
    }

    fn code_block(&mut self) {
        let Some((language, code)) = self.code.take() else {
            return;
        };
        for line in highlight(&language, &code, self.theme) {
            let (mut prefix, mut hang) = self.prefixes();
            prefix.push(Span::raw(CODE_INDENT));
            hang.push(Span::raw(CODE_INDENT));
            prefix.extend(line.spans);
            self.out.push(Para::hard(Line::from(prefix), hang));
        }
        self.blank_pending = true;
    }

    fn finish(mut self) -> Vec<Para> {
        if let Some(table) = self.table.take() {
            self.emit_table(table);
        }
        // An unclosed fence while the text still streams.
        if self.code.is_some() {
            self.code_block();
        }
        self.flush();
        self.out
    }

    fn emit_table(&mut self, table: Table) {
        let columns = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0usize; columns];
        for row in &table.rows {
            for (i, cell) in row.iter().enumerate() {
                let w: usize = cell.iter().map(|s| text::width(&s.content)).sum();
                widths[i] = widths[i].max(w.min(30));
            }
        }
        let dim = self.theme.dim();
        for (r, row) in table.rows.into_iter().enumerate() {
            let mut spans = Vec::new();
            for (i, cell) in row.into_iter().enumerate() {
                if i > 0 {
                    spans.push(Span::styled(" │ ", dim));
                }
                let w: usize = cell.iter().map(|s| text::width(&s.content)).sum();
                spans.extend(cell);
                if i + 1 < columns {
                    spans.push(Span::raw(" ".repeat(widths[i].saturating_sub(w))));
                }
            }
            let (mut line, hang) = self.prefixes();
            line.extend(spans);
            self.out.push(Para::hard(Line::from(line), hang));
            if r + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let (mut line, hang) = self.prefixes();
                line.push(Span::styled(rule.join("─┼─"), dim));
                self.out.push(Para::hard(Line::from(line), hang));
            }
        }
        self.blank_pending = true;
    }
}

/// Table events; returns whether the event was the table's.
fn table_event(table: &mut Table, event: &Event<'_>, style: Style) -> bool {
    match event {
        Event::Start(Tag::TableHead) => {
            table.in_head = true;
            table.rows.push(Vec::new());
        }
        Event::End(TagEnd::TableHead) => {
            table.in_head = false;
            table.header_rows = table.rows.len();
        }
        Event::Start(Tag::TableRow) => table.rows.push(Vec::new()),
        Event::Start(Tag::TableCell) => {
            if let Some(row) = table.rows.last_mut() {
                row.push(Vec::new());
            }
        }
        Event::Text(t) | Event::Code(t) => {
            let style = if table.in_head {
                style.add_modifier(Modifier::BOLD)
            } else {
                style
            };
            if let Some(cell) = table.rows.last_mut().and_then(|r| r.last_mut()) {
                cell.push(Span::styled(t.to_string(), style));
            }
        }
        Event::End(TagEnd::Table) => return false,
        Event::End(TagEnd::TableRow | TagEnd::TableCell) | Event::SoftBreak => {}
        _ => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::wrap::wrap_all;

    fn rows(markdown: &str, width: usize) -> Vec<String> {
        let mut out = Vec::new();
        wrap_all(&render(markdown, Theme::colored()), width, &mut out);
        out.iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn blocks_lists_and_code() {
        let md =
            "# Title\n\nSome *text* here.\n\n- one\n- two\n  1. sub\n\n```rust\nfn x() {}\n```\n";
        assert_eq!(
            rows(md, 40),
            [
                "Title",
                "",
                "Some text here.",
                "",
                "• one",
                "• two",
                "  1. sub",
                "",
                "  fn x() {}"
            ]
        );
    }

    #[test]
    fn list_items_hang_and_quotes_keep_their_bar() {
        assert_eq!(
            rows("- a long item that wraps", 12),
            ["• a long ", "  item that ", "  wraps"]
        );
        assert_eq!(
            rows("> quoted words here", 10),
            ["│ quoted ", "│ words ", "│ here"]
        );
    }

    #[test]
    fn links_show_their_target_and_tables_align() {
        assert_eq!(
            rows("see [docs](https://x.dev)", 40),
            ["see docs (https://x.dev)"]
        );
        let table = rows("| a | bb |\n|---|---|\n| ccc | d |", 40);
        assert_eq!(table, ["a   │ bb", "────┼───", "ccc │ d"]);
    }

    #[test]
    fn an_open_fence_renders_while_streaming() {
        assert_eq!(rows("```\nlet x", 40), ["  let x"]);
    }
}

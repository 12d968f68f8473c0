//! A tool call as a first-class row: a status glyph (a spinner while it
//! runs), the tool's name, the argument that identifies it and its elapsed
//! time; below it the output folded to a few lines (expanded with Ctrl+O),
//! the diff of a write or edit, or why it was refused.

use crate::state::{ToolCell, ToolState};
use crate::view::context::{Ctx, SPINNER};
use crate::view::diff;
use crate::view::wrap::Para;
use cortex_protocol::ToolStatus;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

/// Diff rows shown under a folded row.
pub const FOLDED_DIFF: usize = 8;
/// Rows of output an expanded row shows at most (its tail).
const EXPANDED_OUTPUT: usize = 2_000;

/// The rows of `tool`.
pub fn render(tool: &ToolCell, ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    let (glyph, glyph_style) = glyph(tool, ctx);
    let mut header = vec![
        Span::styled(format!("{glyph} "), glyph_style),
        Span::styled(tool.name.clone(), theme.bold()),
    ];
    if !tool.summary.is_empty() {
        header.push(Span::raw(" "));
        header.push(Span::raw(tool.summary.clone()));
    }
    let mut meta = Vec::new();
    if let Some(diff) = &tool.diff {
        let (added, removed) = diff::stat(diff);
        meta.push(format!("+{added} -{removed}"));
    }
    if let ToolState::Done(status) = tool.state
        && status != ToolStatus::Ok
    {
        meta.push(status_word(status).to_owned());
    }
    let elapsed = match (tool.state, tool.ms, tool.started) {
        (ToolState::Running, _, Some(start)) => Some((ctx.now - start).max(0) as f64),
        (ToolState::Done(_), Some(ms), _) => Some(ms),
        _ => None,
    };
    if let Some(ms) = elapsed {
        meta.push(crate::time::elapsed(ms));
    }
    for m in meta {
        header.push(Span::styled(format!(" · {m}"), theme.dim()));
    }
    let hang = vec![Span::raw("  ")];
    let mut out = vec![Para::hanging(Line::from(header), hang)];
    body(tool, ctx, &mut out);
    out
}

fn glyph(tool: &ToolCell, ctx: &Ctx) -> (&'static str, Style) {
    let theme = ctx.theme;
    match tool.state {
        ToolState::Running => (SPINNER[ctx.spinner % SPINNER.len()], theme.accent()),
        ToolState::Done(ToolStatus::Ok) => ("✓", theme.ok()),
        ToolState::Done(ToolStatus::Error) => ("✗", theme.error()),
        ToolState::Done(ToolStatus::Refused | ToolStatus::Denied) => ("⊘", theme.warning()),
        ToolState::Done(ToolStatus::Stopped) => ("■", theme.warning()),
    }
}

fn status_word(status: ToolStatus) -> &'static str {
    match status {
        ToolStatus::Ok => "ok",
        ToolStatus::Error => "error",
        ToolStatus::Refused => "refused",
        ToolStatus::Denied => "denied",
        ToolStatus::Stopped => "stopped",
    }
}

fn body(tool: &ToolCell, ctx: &Ctx, out: &mut Vec<Para>) {
    let theme = ctx.theme;
    if let Some(reason) = &tool.reason {
        let first = reason.lines().next().unwrap_or_default();
        out.push(Para::hanging(
            Line::from(vec![
                Span::raw("  └ "),
                Span::styled(first.to_owned(), theme.warning()),
            ]),
            vec![Span::raw("    ")],
        ));
        return;
    }
    let folded = ctx.output_rows();
    if let Some(diff) = &tool.diff {
        let max = (!ctx.expanded).then_some(folded.max(FOLDED_DIFF.min(ctx.height / 2)));
        for mut para in diff::render(diff, theme, max) {
            para.line.spans.insert(0, Span::raw("  "));
            para.hang.insert(0, Span::raw("  "));
            out.push(para);
        }
        return;
    }
    steps(tool, ctx, out);
    let failed = matches!(tool.state, ToolState::Done(s) if s != ToolStatus::Ok);
    let style = if failed { theme.error() } else { theme.dim() };
    match (tool.name.as_str(), tool.state) {
        // A file's text is the model's business; its size is the user's.
        ("read_file", ToolState::Done(ToolStatus::Ok)) if !ctx.expanded => {
            let lines = tool.output.lines().count();
            out.push(indented(&format!("{lines} lines"), theme.dim()));
        }
        ("todo_write" | "todo_read" | "plan", ToolState::Done(ToolStatus::Ok)) => {}
        _ => output(tool, ctx, style, folded, out),
    }
}

/// A subagent's calls, folded to their count and the newest (Ctrl+O shows
/// each), above its answer.
fn steps(tool: &ToolCell, ctx: &Ctx, out: &mut Vec<Para>) {
    let Some(last) = tool.steps.last() else {
        return;
    };
    let dim = ctx.theme.dim();
    if !ctx.expanded {
        let count = match tool.steps.len() {
            1 => "1 step".to_owned(),
            n => format!("{n} steps"),
        };
        out.push(indented(&format!("↳ {count} · {last}"), dim));
        return;
    }
    let hidden = tool.steps.len().saturating_sub(EXPANDED_OUTPUT);
    if hidden > 0 {
        out.push(indented(&format!("↳ … {hidden} earlier steps"), dim));
    }
    for step in &tool.steps[hidden..] {
        out.push(indented(&format!("↳ {step}"), dim));
    }
}

/// The output, folded: the tail for commands (where errors and results
/// land), the head for everything else.
fn output(tool: &ToolCell, ctx: &Ctx, style: Style, folded: usize, out: &mut Vec<Para>) {
    let lines: Vec<&str> = tool.output.trim_end_matches('\n').lines().collect();
    if lines.is_empty() {
        return;
    }
    let max = if ctx.expanded {
        EXPANDED_OUTPUT
    } else {
        folded
    };
    let tail = matches!(tool.name.as_str(), "bash" | "setup");
    let hidden = lines.len().saturating_sub(max);
    let more = |n: usize| indented(&crate::text::more_lines(n), ctx.theme.dim());
    if tail {
        if hidden > 0 {
            let earlier = if hidden == 1 {
                "… 1 earlier line".to_owned()
            } else {
                format!("… {hidden} earlier lines")
            };
            out.push(indented(&earlier, ctx.theme.dim()));
        }
        for line in &lines[hidden..] {
            out.push(indented(line, style));
        }
    } else {
        for line in lines.iter().take(max) {
            out.push(indented(line, style));
        }
        if hidden > 0 {
            out.push(more(hidden));
        }
    }
}

fn indented(text: &str, style: Style) -> Para {
    Para::hard(
        Line::from(vec![
            Span::raw("  │ "),
            Span::styled(text.to_owned(), style),
        ]),
        vec![Span::raw("  │ ")],
    )
}

//! One transcript cell as logical lines (the transcript wraps and caches
//! them).

use crate::state::{CellKind, Level, TurnEnd, TurnOutcome, title};
use crate::text;
use crate::view::context::Ctx;
use crate::view::wrap::Para;
use crate::view::{flowchart, markdown, tool_row};
use cortex_protocol::{Mode, Todo, TodoStatus};
use ratatui::text::{Line, Span};

/// Plan rows shown before `… N more lines` (Ctrl+O shows all): room for
/// a small flowchart beside the steps.
const FOLDED_PLAN: usize = 30;

/// The logical lines of a cell.
pub fn render(kind: &CellKind, ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    match kind {
        CellKind::Header { repository, model } => {
            let name = repository
                .rsplit('/')
                .find(|s| !s.is_empty())
                .unwrap_or(repository);
            vec![Para::prose(Line::from(vec![
                Span::styled("cortex", theme.accent().patch(theme.bold())),
                Span::styled(format!(" · {name} · {model}"), theme.dim()),
            ]))]
        }
        CellKind::User { text } => {
            let mut out = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let mark = if i == 0 { "› " } else { "  " };
                out.push(Para::hanging(
                    Line::from(vec![
                        Span::styled(mark, theme.user()),
                        Span::styled(line.to_owned(), theme.bold()),
                    ]),
                    vec![Span::raw("  ")],
                ));
            }
            out
        }
        CellKind::Assistant { text, .. } => markdown::render(text, theme),
        CellKind::Thinking { text, done } => thinking(text, *done, ctx),
        CellKind::Tool(tool) => tool_row::render(tool, ctx),
        CellKind::Notice { level, text } => {
            let (mark, style) = match level {
                Level::Info => ("·", theme.dim()),
                Level::Warning => ("!", theme.warning()),
                Level::Error => ("✗", theme.error()),
            };
            text.lines()
                .enumerate()
                .map(|(i, line)| {
                    let mark = if i == 0 { mark } else { " " };
                    Para::hanging(
                        Line::from(Span::styled(format!("{mark} {line}"), style)),
                        vec![Span::raw("  ")],
                    )
                })
                .collect()
        }
        CellKind::TurnEnd(end) => vec![turn_end(end, ctx)],
        CellKind::Plan {
            version,
            title,
            markdown,
        } => proposal(format!("plan v{version}: "), title, markdown, ctx),
        CellKind::Spec {
            phase,
            version,
            markdown,
        } => proposal(format!("spec {phase} v{version}"), "", markdown, ctx),
        CellKind::Todos(todos) => checklist("todo", todos, ctx),
        CellKind::GoalSteps(steps) => checklist("goal", steps, ctx),
    }
}

/// A todo list or a goal's steps: `LABEL done/total`, then one row each.
fn checklist(label: &str, todos: &[Todo], ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    let done = todos
        .iter()
        .filter(|t| t.status == TodoStatus::Completed)
        .count();
    let mut out = vec![Para::prose(Line::from(Span::styled(
        format!("{label} {done}/{}", todos.len()),
        theme.bold(),
    )))];
    for todo in todos {
        let (mark, style) = match todo.status {
            TodoStatus::Completed => ("☑ ", theme.dim()),
            TodoStatus::InProgress => ("▸ ", theme.accent()),
            TodoStatus::Pending => ("☐ ", theme.plain()),
        };
        out.push(Para::hanging(
            Line::from(vec![
                Span::styled(format!("  {mark}"), style),
                Span::styled(todo.content.clone(), style),
            ]),
            vec![Span::raw("    ")],
        ));
    }
    out
}

fn thinking(text: &str, done: bool, ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    let words = text.split_whitespace().count();
    let label = if done { "thought" } else { "thinking…" };
    let mut out = vec![Para::prose(Line::from(Span::styled(
        format!("· {label} ({words} words)"),
        theme.dim().patch(theme.italic()),
    )))];
    if ctx.expanded {
        for line in text.lines() {
            out.push(Para::hanging(
                Line::from(Span::styled(format!("  {line}"), theme.dim())),
                vec![Span::raw("  ")],
            ));
        }
    }
    out
}

fn turn_end(end: &TurnEnd, ctx: &Ctx) -> Para {
    let theme = ctx.theme;
    let mut figures = Vec::new();
    if let Some(ms) = end.ms {
        figures.push(crate::time::elapsed(ms));
    }
    let tokens = end.tokens_in + end.tokens_out;
    if tokens > 0 {
        figures.push(format!("{} tokens", text::count(tokens)));
    }
    let figures = if figures.is_empty() {
        String::new()
    } else {
        format!(" · {}", figures.join(" · "))
    };
    let (line, style) = match &end.outcome {
        TurnOutcome::Completed { rounds } => {
            let rounds = if *rounds == 1 {
                "1 round".to_owned()
            } else {
                format!("{rounds} rounds")
            };
            (format!("─ done · {rounds}{figures}"), theme.dim())
        }
        TurnOutcome::Stopped { reason } => {
            (format!("■ stopped: {reason}{figures}"), theme.warning())
        }
        TurnOutcome::Failed { error } => (format!("✗ failed: {error}{figures}"), theme.error()),
    };
    // Completed, but a check still doubts the answer: said on the same
    // line, so a narrow screen wraps it rather than hides it.
    let mut spans = vec![Span::styled(line, style)];
    if let Some(unverified) = &end.unverified {
        spans.push(Span::styled(format!(" · ⚠ {unverified}"), theme.warning()));
    }
    Para::hanging(Line::from(spans), vec![Span::raw("  ")])
}

/// A proposed plan or spec phase: `label` (`plan v2: `), its title, then
/// its Markdown folded to [`FOLDED_PLAN`] rows.
fn proposal(label: String, name: &str, markdown: &str, ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    let mut out = vec![Para::prose(Line::from(vec![
        Span::styled(label, theme.mode(Mode::Plan)),
        Span::styled(name.to_owned(), theme.bold()),
    ]))];
    let body = proposal_body(markdown, ctx);
    let shown = if ctx.expanded {
        body.len()
    } else {
        FOLDED_PLAN
    };
    let hidden = body.len().saturating_sub(shown);
    out.extend(body.into_iter().take(shown));
    if hidden > 0 {
        out.push(Para::prose(Line::from(Span::styled(
            format!("{} (Ctrl+O)", text::more_lines(hidden)),
            theme.dim(),
        ))));
    }
    out
}

/// A proposal's Markdown as the transcript renders it, except that each
/// ```` ```mermaid ```` block is folded to one line under its flowchart
/// (drawn where it fits). Ctrl+O shows the sources instead.
fn proposal_body(markdown: &str, ctx: &Ctx) -> Vec<Para> {
    if ctx.expanded {
        return markdown::render(markdown, ctx.theme);
    }
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim_start().starts_with("```mermaid") {
            let source: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.trim_start().starts_with("```"))
                .collect();
            out.extend(markdown::render(&std::mem::take(&mut prose), ctx.theme));
            out.extend(diagram(&source.join("\n"), ctx));
        } else {
            prose.push_str(line);
            prose.push('\n');
        }
    }
    out.extend(markdown::render(&prose, ctx.theme));
    out
}

/// A mermaid block: the flowchart when it can be drawn in the width, then
/// the source folded to one line.
fn diagram(source: &str, ctx: &Ctx) -> Vec<Para> {
    let theme = ctx.theme;
    let mut out: Vec<Para> = flowchart::draw(source, ctx.width.saturating_sub(2))
        .unwrap_or_default()
        .into_iter()
        .map(|row| {
            Para::hard(
                Line::from(Span::styled(format!("  {row}"), theme.accent())),
                Vec::new(),
            )
        })
        .collect();
    let kind = source
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("empty");
    let lines = source.lines().count();
    let folded = format!(
        "▸ mermaid {} · {} (Ctrl+O)",
        text::truncate(kind, 24),
        if lines == 1 {
            "1 line".to_owned()
        } else {
            format!("{lines} lines")
        }
    );
    out.push(Para::hanging(
        Line::from(Span::styled(folded, theme.dim())),
        vec![Span::raw("  ")],
    ));
    out
}

/// Whether a blank row separates a cell from the one before it: not
/// between consecutive tool rows and notices, which read as one block.
pub fn gap_before(prev: Option<&CellKind>, cell: &CellKind) -> bool {
    let compact = |k: &CellKind| matches!(k, CellKind::Tool(_) | CellKind::Notice { .. });
    match prev {
        None => false,
        Some(prev) => !(compact(prev) && compact(cell)),
    }
}

/// `Agent`, `Plan`, …
pub fn mode_title(mode: Mode) -> &'static str {
    title(mode)
}

//! The whole screen: the transcript on top, the status line, the composer
//! at the bottom; a waiting approval's panel at the transcript's bottom,
//! the completion list just above the status line, the overlay over
//! everything; before the first turn, a row naming the project
//! instructions found, above the status line.
//!
//! At any size the composer (with its border) keeps its rows first, then
//! the status line, and the transcript takes what is left, following its
//! end so the latest row stays in view.

use crate::app::App;
use crate::app::complete::MAX_ITEMS;
use crate::text;
use crate::view::composer::{Chrome, Composer};
use crate::view::context::Ctx;
use crate::view::status::Status;
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Widget};

const PLACEHOLDER: &str = "Ask anything · / commands · @ files · ? help";

/// The rows each part gets in `area`.
pub struct Areas {
    /// The transcript, on top.
    pub transcript: Rect,
    /// The status line.
    pub status: Rect,
    /// The composer, at the bottom.
    pub composer: Rect,
}

/// Split `area` between the transcript, the status line and a composer
/// `composer_height` rows high.
pub fn areas(area: Rect, composer_height: u16) -> Areas {
    let composer_h = composer_height.min(area.height);
    let status_h = u16::from(area.height > composer_h);
    let transcript_h = area.height - composer_h - status_h;
    Areas {
        transcript: Rect {
            height: transcript_h,
            ..area
        },
        status: Rect {
            y: area.y + transcript_h,
            height: status_h,
            ..area
        },
        composer: Rect {
            y: area.y + transcript_h + status_h,
            height: composer_h,
            ..area
        },
    }
}

/// Draw the app into `frame`.
pub fn draw(app: &mut App, frame: &mut Frame<'_>) {
    let area = frame.area();
    let cursor = render(app, area, frame.buffer_mut());
    if let Some((x, y)) = cursor {
        frame.set_cursor_position(Position { x, y });
    }
}

/// Draw the app into `buf`; returns where the cursor goes (none while an
/// overlay is open).
pub fn render(app: &mut App, area: Rect, buf: &mut Buffer) -> Option<(u16, u16)> {
    let theme = app.theme;
    let chrome = Chrome {
        mode: app.mode(),
        chips: app.chips_shown(),
        hint: hint(app).to_owned(),
    };
    let composer = Composer {
        editor: &app.editor,
        chrome: &chrome,
        placeholder: PLACEHOLDER,
        theme,
    };
    let areas = areas(area, composer.height(area.width, (area.height / 2).max(3)));
    let cursor = composer.render(areas.composer, buf);
    let (transcript_area, panel_area) = approval_split(app, areas.transcript);
    let (transcript_area, hint_area) = instructions_split(app, transcript_area);
    let ctx = Ctx::new(
        theme,
        usize::from(transcript_area.width),
        usize::from(transcript_area.height),
        app.now,
        app.expanded,
    );
    app.transcript
        .render(&app.state.cells, &ctx, transcript_area, buf);
    if let (Some(line), Some(row)) = (app.instructions_hint(), hint_area) {
        let line = text::truncate(&line, usize::from(row.width));
        buf.set_line(
            row.x,
            row.y,
            &Line::from(Span::styled(line, theme.dim())),
            row.width,
        );
    }
    if let (Some(pending), Some(panel)) = (&app.state.approval, panel_area) {
        let uncovered = app.overlay.is_none() && app.completion_shown().is_none();
        app.approval_panel
            .render(pending, theme, panel, buf, uncovered);
    }
    let queued = app.queued();
    let queued_note = (queued > 0).then(|| format!("{queued} queued · sent when this turn ends"));
    Status {
        state: &app.state,
        now: app.now,
        spinner: ctx.spinner,
        theme,
        context_hint: app.context_hint,
        flash: app.flash_text().or(queued_note.as_deref()),
        rejecting: app.rejecting().is_some(),
    }
    .render(areas.status, buf);
    completion(app, areas.transcript, buf);
    match &app.overlay {
        Some(modal) => {
            modal.render(area, buf, theme);
            None
        }
        None => cursor,
    }
}

/// The transcript's rows and, while a call waits for approval, the panel
/// that shows it, over the transcript's bottom rows (all of them if it
/// needs them: the command comes before the conversation).
fn approval_split(app: &mut App, area: Rect) -> (Rect, Option<Rect>) {
    let Some(pending) = &app.state.approval else {
        return (area, None);
    };
    let height = app
        .approval_panel
        .height(pending, area.width, area.height, app.theme);
    let above = area.height - height;
    let panel = Rect {
        y: area.y + above,
        height,
        ..area
    };
    (
        Rect {
            height: above,
            ..area
        },
        Some(panel),
    )
}

/// Before the first turn, the transcript's last row names the project
/// instructions found (`App::instructions_hint`): the first screen says
/// what the model will be given.
fn instructions_split(app: &App, area: Rect) -> (Rect, Option<Rect>) {
    if area.height < 2 || app.instructions_hint().is_none() {
        return (area, None);
    }
    let row = Rect {
        y: area.bottom() - 1,
        height: 1,
        ..area
    };
    (
        Rect {
            height: area.height - 1,
            ..area
        },
        Some(row),
    )
}

fn hint(app: &App) -> &'static str {
    if app.state.running() {
        "Esc stop"
    } else {
        "? help"
    }
}

/// The completion list, over the bottom rows of the transcript.
fn completion(app: &App, above: Rect, buf: &mut Buffer) {
    let Some(completion) = app.completion_shown() else {
        return;
    };
    let rows = completion
        .items
        .len()
        .min(MAX_ITEMS)
        .min(usize::from(above.height)) as u16;
    if rows == 0 {
        return;
    }
    let area = Rect {
        y: above.bottom() - rows,
        height: rows,
        ..above
    };
    Clear.render(area, buf);
    let first = (completion.selected + 1).saturating_sub(usize::from(rows));
    let width = usize::from(area.width);
    for (i, item) in completion
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(usize::from(rows))
    {
        let mut row = format!(" {}", item.label);
        if !item.detail.is_empty() {
            row.push_str("  ");
            row.push_str(&item.detail);
        }
        let row = format!("{:<width$}", text::truncate(&row, width));
        let style = if i == completion.selected {
            app.theme.selected()
        } else {
            app.theme.dim()
        };
        let y = area.y + (i - first) as u16;
        buf.set_line(area.x, y, &Line::from(Span::styled(row, style)), area.width);
    }
}

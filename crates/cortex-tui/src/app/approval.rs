//! The keys of a waiting approval, with an empty composer (so typing is
//! never taken for an answer): `y` allows the call once, `n` denies it, `a`
//! allows it always; Up/Down and PgUp/PgDn scroll the approval panel while
//! its content is taller than its space.
//!
//! "Show before asking": `y` and `a` are refused, with a passing message,
//! until the panel has drawn the last row of what the call would run, so a
//! part no rule covers cannot be approved unseen below the panel's edge.
//! `n` is always accepted: refusing needs no reading.

use crate::app::{App, Command};
use crate::view::approval::SCROLL_FIRST;
use cortex_protocol::ApprovalDecision;
use crossterm::event::KeyCode;

impl App {
    /// The answer or scroll a key means while a call waits for approval;
    /// `None` when the key is not the approval's (the composer gets it).
    pub(super) fn approval_key(&mut self, code: KeyCode, modified: bool) -> Option<Vec<Command>> {
        let call_id = self.state.approval.as_ref()?.call_id.clone();
        if modified || !self.editor.is_empty() {
            return None;
        }
        let decision = match code {
            KeyCode::Char('y') => ApprovalDecision::Allow,
            KeyCode::Char('n') => ApprovalDecision::Deny,
            KeyCode::Char('a') => ApprovalDecision::Always,
            // A panel that fits leaves these keys to history and the
            // transcript, as when no approval waits.
            KeyCode::Up | KeyCode::Down | KeyCode::PageUp | KeyCode::PageDown
                if self.approval_panel.scrollable(&call_id) =>
            {
                self.scroll_approval(code, &call_id);
                return Some(Vec::new());
            }
            _ => return None,
        };
        if decision != ApprovalDecision::Deny && !self.approval_panel.seen_end(&call_id) {
            self.flash(SCROLL_FIRST);
            return Some(Vec::new());
        }
        Some(vec![Command::AnswerApproval { call_id, decision }])
    }

    fn scroll_approval(&mut self, code: KeyCode, call_id: &str) {
        let panel = &mut self.approval_panel;
        let page = panel.page();
        match code {
            KeyCode::Up => panel.scroll_up(call_id, 1),
            KeyCode::Down => panel.scroll_down(call_id, 1),
            KeyCode::PageUp => panel.scroll_up(call_id, page),
            KeyCode::PageDown => panel.scroll_down(call_id, page),
            _ => {}
        }
    }
}

//! `/hooks`: the repository's hook files and whether they run; `/hooks
//! trust` trusts them as the last `/hooks` showed them. The trust names
//! each file's content as shown, and the server refuses a file that changed
//! since, so nothing is trusted unseen. Trusted hooks run in the guest from
//! the next turn on (the user's own hooks are not listed here: they are
//! the user's config, shown by `cortex hooks list`).
//!
//! When the session reports a hook file it does not run (`hooks.untrusted`),
//! the app lists the hook files and asks, naming each untrusted file and its
//! hooks (`view/trust.rs`); `y` trusts them as listed, the same call as
//! `/hooks trust`. Each content is asked about once; a prompt is not opened
//! over another modal (the event's notice stays in the transcript).

use crate::app::App;
use crate::app::command::{Command, HookFileView};
use crate::state::Level;
use crate::view::trust::TrustPrompt;
use cortex_protocol::EventKind;

/// Run `/hooks` with `args`.
pub fn run(app: &mut App, args: &str) -> Vec<Command> {
    match args {
        "" => {
            app.flash("hooks: reading…");
            vec![Command::ListHooks]
        }
        "trust" => {
            let Some(files) = &app.hooks_shown else {
                app.flash("/hooks first: trust what you have read");
                return Vec::new();
            };
            let untrusted: Vec<(String, String)> = files
                .iter()
                .filter(|f| !f.trusted)
                .map(|f| (f.file.clone(), f.sha256.clone()))
                .collect();
            if untrusted.is_empty() {
                app.flash("every hook file shown is trusted already");
                return Vec::new();
            }
            app.flash("hooks: trusting…");
            vec![Command::TrustHooks(untrusted)]
        }
        other => {
            let other = crate::text::clean_line(other);
            app.flash(&format!("/hooks takes nothing or `trust`, not `{other}`"));
            Vec::new()
        }
    }
}

impl App {
    /// The API's listing of the repository's hook files, as notices (every
    /// field is cleaned by the notice).
    pub(crate) fn hooks_listed(&mut self, files: Vec<HookFileView>) {
        self.flash = None;
        if files.is_empty() {
            self.state
                .local_notice(Level::Info, "the repository has no hook files");
        }
        for file in &files {
            let (level, state) = if file.trusted {
                (Level::Info, "trusted: its hooks run in the guest")
            } else {
                (
                    Level::Warning,
                    "not trusted: its hooks do not run (/hooks trust)",
                )
            };
            self.state
                .local_notice(level, &format!("{}: {state}", file.file));
            for hook in &file.hooks {
                self.state.local_notice(Level::Info, &format!("  {hook}"));
            }
        }
        self.hooks_shown = Some(files);
        self.transcript.to_bottom();
    }

    /// A `hooks.untrusted` event not asked about yet: the listing the trust
    /// prompt shows, unless one is on its way.
    pub(crate) fn untrusted_hooks(&mut self, kind: &EventKind) -> Option<Command> {
        let EventKind::HooksUntrusted { file, sha256, .. } = kind else {
            return None;
        };
        if self.trust_asked.contains(&(file.clone(), sha256.clone()))
            || self.trust_wanted.contains(file)
        {
            return None;
        }
        self.trust_wanted.push(file.clone());
        if std::mem::replace(&mut self.trust_listing, true) {
            return None;
        }
        Some(Command::ListHooks)
    }

    /// The listing the trust prompt waited for: the prompt, for the wanted
    /// files still untrusted and not asked about at this content.
    pub(crate) fn ask_trust(&mut self, files: Vec<HookFileView>) {
        self.trust_listing = false;
        let wanted = std::mem::take(&mut self.trust_wanted);
        let ask: Vec<HookFileView> = files
            .iter()
            .filter(|f| {
                !f.trusted
                    && wanted.contains(&f.file)
                    && !self
                        .trust_asked
                        .contains(&(f.file.clone(), f.sha256.clone()))
            })
            .cloned()
            .collect();
        self.hooks_shown = Some(files);
        if ask.is_empty() || self.overlay.is_some() {
            return;
        }
        for f in &ask {
            self.trust_asked.insert((f.file.clone(), f.sha256.clone()));
        }
        self.overlay = Some(Box::new(TrustPrompt::new(ask)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::command::Outcome;

    fn file(trusted: bool) -> HookFileView {
        HookFileView {
            file: ".cortex/hooks.json\u{1b}[31m".into(),
            sha256: "ab".repeat(32),
            trusted,
            hooks: vec!["PreToolUse [Bash] ./guard.sh\u{7}".into()],
        }
    }

    #[test]
    fn trust_needs_a_listing_and_trusts_what_it_showed() {
        let mut app = App::new(crate::view::theme::Theme::no_color());
        assert!(run(&mut app, "trust").is_empty());
        assert!(app.flash_text().is_some_and(|f| f.contains("/hooks first")));
        assert_eq!(run(&mut app, ""), vec![Command::ListHooks]);
        app.on_outcome(Outcome::Hooks(vec![file(false)]));
        assert_eq!(
            run(&mut app, "trust"),
            vec![Command::TrustHooks(vec![(
                ".cortex/hooks.json\u{1b}[31m".into(),
                "ab".repeat(32)
            )])]
        );
        app.on_outcome(Outcome::Hooks(vec![file(true)]));
        assert!(run(&mut app, "trust").is_empty());
        assert!(run(&mut app, "maybe").is_empty());
    }

    fn screen(app: &mut App) -> String {
        let area = ratatui::layout::Rect::new(0, 0, 80, 24);
        let mut buf = ratatui::buffer::Buffer::empty(area);
        crate::view::screen::render(app, area, &mut buf);
        let mut out = String::new();
        for y in 0..area.height {
            for x in 0..area.width {
                out.push_str(buf[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }

    /// A `hooks.untrusted` event, the next of `script`'s timeline.
    fn untrusted(
        script: &mut crate::script::Script,
        file: &str,
        sha256: &str,
    ) -> cortex_protocol::Event {
        script.push(EventKind::HooksUntrusted {
            file: file.into(),
            sha256: sha256.into(),
            hooks: 1,
        });
        script.events.last().cloned().expect("the event")
    }

    #[test]
    fn an_untrusted_hook_file_is_asked_about_once_and_y_trusts_that_content() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let key = |c| KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE);
        let mut app = App::new(crate::view::theme::Theme::no_color());
        let sha = "ab".repeat(32);
        let mut script = crate::script::Script::new("m");
        let event = untrusted(&mut script, ".cortex/hooks.json\u{1b}[31m", &sha);
        // The event asks for the listing that names the file's hooks.
        assert_eq!(app.on_event(&event), vec![Command::ListHooks]);
        app.on_outcome(Outcome::Hooks(vec![file(false)]));
        let shown = screen(&mut app);
        assert!(shown.contains("Trust the repository's hooks?"), "{shown}");
        // Named with its hooks, escapes cleaned.
        assert!(
            shown.contains(".cortex/hooks.json^[[31m has 1 hook that does not run"),
            "{shown}"
        );
        assert!(
            !shown.contains('\u{1b}') && !shown.contains('\u{7}'),
            "{shown}"
        );
        assert!(shown.contains("  PreToolUse [Bash] ./guard.sh"), "{shown}");
        assert!(
            shown.contains("y trust this exact content · n not now"),
            "{shown}"
        );
        // Other keys keep it open; `y` trusts exactly the content listed.
        assert!(app.on_key(key('x')).is_empty());
        assert!(app.overlay.is_some());
        assert_eq!(
            app.on_key(key('y')),
            vec![Command::TrustHooks(vec![(
                ".cortex/hooks.json\u{1b}[31m".into(),
                sha.clone()
            )])]
        );
        assert!(app.overlay.is_none());
        // The trust's answer is shown as `/hooks` shows a listing.
        app.on_outcome(Outcome::Hooks(vec![file(true)]));
        assert!(app.overlay.is_none());
        // The same content is not asked about again, next turn; a changed
        // one is.
        let again = untrusted(&mut script, ".cortex/hooks.json\u{1b}[31m", &sha);
        assert!(app.on_event(&again).is_empty());
        let changed = untrusted(
            &mut script,
            ".cortex/hooks.json\u{1b}[31m",
            &"ef".repeat(32),
        );
        assert_eq!(app.on_event(&changed), vec![Command::ListHooks]);
    }

    #[test]
    fn n_leaves_it_untrusted_and_a_trusted_file_is_not_asked_about() {
        use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
        let mut app = App::new(crate::view::theme::Theme::no_color());
        let mut script = crate::script::Script::new("m");
        let event = untrusted(
            &mut script,
            ".cortex/hooks.json\u{1b}[31m",
            &"ab".repeat(32),
        );
        assert_eq!(app.on_event(&event), vec![Command::ListHooks]);
        app.on_outcome(Outcome::Hooks(vec![file(false)]));
        assert!(
            app.on_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::NONE))
                .is_empty()
        );
        assert!(app.overlay.is_none());
        // Trusted by the time the listing came (`cortex hooks trust`): no
        // prompt, and no listing shown unasked.
        let other = untrusted(&mut script, ".claude/settings.json", &"cd".repeat(32));
        assert_eq!(app.on_event(&other), vec![Command::ListHooks]);
        let mut trusted = file(true);
        trusted.file = ".claude/settings.json".into();
        trusted.sha256 = "cd".repeat(32);
        app.on_outcome(Outcome::Hooks(vec![trusted]));
        assert!(app.overlay.is_none());
        // `/hooks` still shows its listing as notices.
        assert_eq!(run(&mut app, ""), vec![Command::ListHooks]);
        app.on_outcome(Outcome::Hooks(vec![file(false)]));
        assert!(app.overlay.is_none());
    }
}

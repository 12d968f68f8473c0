//! `/hooks`: the repository's hook files and whether they run; `/hooks
//! trust` trusts them as the last `/hooks` showed them. The trust names
//! each file's content as shown, and the server refuses a file that changed
//! since, so nothing is trusted unseen. Trusted hooks run in the guest from
//! the next turn on (the user's own hooks are not listed here: they are
//! the user's config, shown by `cortex hooks list`).

use crate::app::App;
use crate::app::command::{Command, HookFileView};
use crate::state::Level;

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
}

//! The application: the session state (a fold of the timeline) and what
//! belongs to this screen alone (the composer, scrolling, the overlay, a
//! passing message), and how keys, timeline events and the answers of
//! API calls change them.
//!
//! The app does no I/O. What needs the API comes back as [`Command`]s for
//! the runtime to carry out, whose answers return as [`Outcome`]s; so a
//! test drives the app with keys and events and looks at the screen.

mod approval;
pub mod command;
pub mod complete;
pub mod editor;
pub mod goal;
pub mod hooks;
pub mod init;
mod keys;
pub mod overlay;
pub mod ps;
mod rewind;
pub mod slash;
pub mod status;

use crate::state::SessionState;
use crate::time::Millis;
use crate::view::approval::ApprovalPanel;
use crate::view::help::Help;
use crate::view::picker::Picker;
use crate::view::theme::Theme;
use crate::view::transcript::Transcript;
pub use command::{Command, GoalCommand, Outcome};
use complete::Completion;
use cortex_protocol::{Event, Mode};
use editor::Editor;
use overlay::Modal;
use std::collections::VecDeque;

/// The application: the session state plus this screen's own. Keys,
/// timeline events and API answers change it; what needs the API comes back
/// as [`Command`]s. It does no I/O.
pub struct App {
    /// The session, as the fold of its timeline.
    pub state: SessionState,
    /// The transcript's rows and scroll position.
    pub transcript: Transcript,
    /// The waiting approval's rows and scroll position.
    pub approval_panel: ApprovalPanel,
    /// The composer.
    pub editor: Editor,
    /// The completion list under the composer.
    pub completion: Completion,
    /// The open modal, which gets every key.
    pub overlay: Option<Box<dyn Modal>>,
    /// Colours, or none (`NO_COLOR`).
    pub theme: Theme,
    /// Ctrl+O.
    pub expanded: bool,
    /// Chips after the mode on the composer border (`Goal · 2/8`).
    pub chips: Vec<String>,
    /// The model's context window as the client knows it (built-in
    /// metadata), until an event reports the server's figure.
    pub context_hint: Option<u64>,
    /// The clock drawing uses (the runtime sets it before each frame).
    pub now: Millis,
    /// The user asked to quit; the runtime ends after this frame.
    pub quit: bool,
    /// Ctrl+L: the next frame repaints every cell.
    pub repaint: bool,
    /// The instructions files found at the repository's root and the
    /// user's own, before any was read (the runtime looks them up).
    pub found_instructions: Option<status::FoundInstructions>,
    /// The user's mode choice that the timeline has not confirmed yet.
    mode_choice: Option<Mode>,
    /// The last key was a Ctrl+C.
    ctrl_c: bool,
    /// The last key was an Esc that did nothing else: a second opens
    /// `/rewind`.
    esc: bool,
    flash: Option<String>,
    /// Esc closed the completion list; it stays closed until the next edit.
    completion_closed: bool,
    history_pos: Option<usize>,
    draft: String,
    files: Option<Vec<String>>,
    files_requested: bool,
    /// The session's custom commands once listed (the first `/` asks).
    custom: Option<Vec<slash::CustomCommand>>,
    /// The repository's hook files as `/hooks` last showed them: what
    /// `/hooks trust` trusts.
    hooks_shown: Option<Vec<command::HookFileView>>,
    /// Hook files a `hooks.untrusted` event named, waiting for the listing
    /// that shows their hooks in the trust prompt (`hooks.rs`).
    trust_wanted: Vec<String>,
    /// The listing the trust prompt waits for was asked.
    trust_listing: bool,
    /// Each `(file, sha256)` the trust prompt asked about: asked once.
    trust_asked: std::collections::HashSet<(String, String)>,
    custom_requested: bool,
    /// Messages sent while a turn ran, sent when it ends.
    queued: VecDeque<String>,
    /// Ctrl+R: the composer's next message is the feedback rejecting this.
    rejecting: Option<crate::state::Subject>,
}

impl App {
    /// An empty app: no session applied yet.
    pub fn new(theme: Theme) -> App {
        App {
            state: SessionState::default(),
            transcript: Transcript::default(),
            approval_panel: ApprovalPanel::default(),
            editor: Editor::default(),
            completion: Completion::default(),
            overlay: None,
            theme,
            expanded: false,
            chips: Vec::new(),
            context_hint: None,
            now: 0,
            quit: false,
            repaint: false,
            found_instructions: None,
            mode_choice: None,
            ctrl_c: false,
            esc: false,
            flash: None,
            completion_closed: false,
            history_pos: None,
            draft: String::new(),
            files: None,
            files_requested: false,
            custom: None,
            hooks_shown: None,
            trust_wanted: Vec::new(),
            trust_listing: false,
            trust_asked: Default::default(),
            custom_requested: false,
            queued: VecDeque::new(),
            rejecting: None,
        }
    }

    /// The mode the composer's border shows: the user's choice at once,
    /// else the session's.
    pub fn mode(&self) -> Mode {
        self.mode_choice.unwrap_or(self.state.mode)
    }

    /// The passing message, while there is one.
    pub fn flash_text(&self) -> Option<&str> {
        self.flash.as_deref()
    }

    /// Show `text` as the passing message.
    pub fn flash(&mut self, text: &str) {
        self.flash = Some(text.to_owned());
    }

    /// Open the help (keys and slash commands) as a modal.
    pub fn open_help(&mut self) {
        self.overlay = Some(Box::new(Help::default()));
    }

    /// Whether something on screen moves with the clock alone (a spinner,
    /// an elapsed time): only then does the runtime tick.
    pub fn animating(&self) -> bool {
        self.state.running()
    }

    /// Another session is shown: forget the old one's state and rows.
    pub fn reset_session(&mut self) {
        self.state = SessionState::default();
        self.transcript.reset();
        self.approval_panel = ApprovalPanel::default();
        self.mode_choice = None;
        self.queued.clear();
        self.history_pos = None;
        self.files = None;
        self.files_requested = false;
        self.custom = None;
        self.custom_requested = false;
        self.rejecting = None;
        self.trust_wanted.clear();
        self.trust_listing = false;
    }

    /// A timeline event; returns what to do next (a queued message when a
    /// turn ended).
    pub fn on_event(&mut self, event: &Event) -> Vec<Command> {
        let was_running = self.state.running();
        if !self.state.apply(event) {
            return Vec::new();
        }
        if self.mode_choice == Some(self.state.mode) {
            self.mode_choice = None;
        }
        let mut commands: Vec<Command> = self.untrusted_hooks(&event.kind).into_iter().collect();
        if was_running && !self.state.running() {
            match self.queued.pop_front() {
                Some(message) => commands.push(self.start_turn(message)),
                None => {
                    if let Some(mode) = self.mode_choice {
                        commands.push(Command::SetMode(mode));
                    }
                }
            }
        }
        commands
    }

    /// The answer of a command.
    pub fn on_outcome(&mut self, outcome: Outcome) -> Vec<Command> {
        match outcome {
            Outcome::TurnRejected { message, error } => {
                if self.editor.is_empty() {
                    self.editor.set(&message);
                }
                self.flash(&error);
            }
            Outcome::Sessions(entries) => {
                self.flash = None;
                self.overlay = Some(Box::new(Picker::new(entries)));
            }
            Outcome::Switched => {
                self.reset_session();
                self.flash = None;
            }
            Outcome::Files(files) => {
                self.files = Some(files);
                let _ = self.refresh_completion();
            }
            Outcome::Commands(commands) => {
                self.custom = Some(
                    commands
                        .iter()
                        .map(slash::CustomCommand::from_info)
                        .collect(),
                );
                let _ = self.refresh_completion();
            }
            Outcome::Failed(error) => self.flash(&error),
            Outcome::Note(note) => self.flash(&note),
            Outcome::RewindPreview(preview) => self.rewind_previewed(preview),
            Outcome::Hooks(files) if self.trust_listing => self.ask_trust(files),
            Outcome::Hooks(files) => self.hooks_listed(files),
            Outcome::Doctor(lines) => {
                self.flash = None;
                for line in lines {
                    self.state.local_notice(line.level, &line.text);
                }
                self.transcript.to_bottom();
            }
        }
        Vec::new()
    }

    /// A pasted text goes into the composer (a large one as a placeholder).
    pub fn on_paste(&mut self, text: &str) -> Vec<Command> {
        self.ctrl_c = false;
        if self.overlay.is_some() {
            return Vec::new();
        }
        self.editor.paste(&crate::text::clean(text));
        self.edited()
    }

    /// Switch to `mode`: at once between turns, from the next turn during
    /// one (the border shows the choice at once either way).
    pub fn choose_mode(&mut self, mode: Mode) -> Vec<Command> {
        self.mode_choice = (mode != self.state.mode).then_some(mode);
        if self.state.running() {
            if self.mode_choice.is_some() {
                self.flash(&format!("{} from the next turn", crate::state::title(mode)));
            }
            return Vec::new();
        }
        match self.mode_choice {
            Some(mode) => vec![Command::SetMode(mode)],
            None => Vec::new(),
        }
    }

    /// `command`, unless a turn runs (then say so).
    pub fn command_between_turns(&mut self, name: &str, command: Command) -> Vec<Command> {
        if self.state.running() {
            self.flash(&format!("{name} waits until the turn ends (Esc stops it)"));
            return Vec::new();
        }
        vec![command]
    }

    fn start_turn(&mut self, message: String) -> Command {
        let mode = self.mode_choice.filter(|m| *m != self.state.mode);
        Command::StartTurn { message, mode }
    }

    /// Send what the composer holds: a slash command, a message, or a
    /// message queued behind the running turn.
    fn submit(&mut self) -> Vec<Command> {
        let message = self.editor.take();
        self.history_pos = None;
        self.completion = Completion::default();
        if message.trim().is_empty() {
            return Vec::new();
        }
        if message.starts_with('/') {
            return slash::run(self, &message);
        }
        self.transcript.to_bottom();
        // A verdict another client gave meanwhile makes it a plain message.
        if let Some(subject) = self
            .rejecting
            .take()
            .filter(|_| self.state.review.is_some())
        {
            return vec![Command::Verdict {
                subject,
                feedback: Some(message),
            }];
        }
        if self.state.running() {
            self.queued.push_back(message);
            self.flash(&format!(
                "queued ({}) · sent when this turn ends",
                self.queued.len()
            ));
            return Vec::new();
        }
        vec![self.start_turn(message)]
    }

    /// After any change to the composer's text.
    fn edited(&mut self) -> Vec<Command> {
        self.completion_closed = false;
        self.history_pos = None;
        self.refresh_completion()
    }

    fn refresh_completion(&mut self) -> Vec<Command> {
        let wants_files = self.editor.current_word().1.starts_with('@');
        let wants_commands = self.editor.text().starts_with('/');
        let custom = self.custom.as_deref().unwrap_or_default();
        let items = complete::candidates(&self.editor, self.files.as_deref(), custom);
        let selected = self.completion.selected.min(items.len().saturating_sub(1));
        self.completion = Completion { items, selected };
        let mut commands = Vec::new();
        if wants_files && !self.files_requested {
            self.files_requested = true;
            commands.push(Command::ListFiles);
        }
        if wants_commands && !self.custom_requested {
            self.custom_requested = true;
            commands.push(Command::ListCommands);
        }
        commands
    }

    /// Whether the session's custom commands have been listed.
    pub fn custom_listed(&self) -> bool {
        self.custom.is_some()
    }

    /// Whether the session has a custom command `name` (as last listed).
    pub fn has_custom_command(&self, name: &str) -> bool {
        self.custom
            .as_deref()
            .is_some_and(|c| c.iter().any(|c| c.name == name))
    }

    /// The completion list, unless closed with Esc.
    pub fn completion_shown(&self) -> Option<&Completion> {
        (!self.completion_closed && !self.completion.items.is_empty()).then_some(&self.completion)
    }

    /// Messages waiting for the running turn to end.
    pub fn queued(&self) -> usize {
        self.queued.len()
    }

    /// What the composer's next message rejects, after Ctrl+R.
    pub fn rejecting(&self) -> Option<&crate::state::Review> {
        self.rejecting.and(self.state.review.as_ref())
    }

    /// Accept (`feedback` `None`) or start rejecting the proposal that
    /// waits: Ctrl+Y / Ctrl+R and `/accept`, `/reject [FEEDBACK]`.
    pub fn decide(&mut self, feedback: Option<&str>, reject: bool) -> Vec<Command> {
        let Some(review) = self.state.review.clone() else {
            self.flash("no plan or spec phase waits for a verdict");
            return Vec::new();
        };
        if self.state.running() {
            self.flash("the verdict waits until the turn ends (Esc stops it)");
            return Vec::new();
        }
        let subject = review.subject;
        match (reject, feedback.filter(|f| !f.trim().is_empty())) {
            (false, _) => vec![Command::Verdict {
                subject,
                feedback: None,
            }],
            (true, Some(feedback)) => vec![Command::Verdict {
                subject,
                feedback: Some(feedback.to_owned()),
            }],
            (true, None) => {
                self.rejecting = Some(subject);
                self.flash(&format!(
                    "why reject {}? Enter sends · Esc cancels",
                    review.label
                ));
                Vec::new()
            }
        }
    }

    /// Esc while writing a rejection's feedback: back to a plain composer.
    fn cancel_reject(&mut self) -> bool {
        self.rejecting.take().is_some()
    }
}

#[cfg(test)]
mod tests;

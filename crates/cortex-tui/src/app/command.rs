//! What the app asks of the runtime ([`Command`]) and what comes back
//! ([`Outcome`]), with the data those carry. The app, its modals (which
//! emit commands) and the runtime (which carries them out) all meet here,
//! below the app itself.

use cortex_protocol::{Mode, SessionId};

/// What the app asks the runtime to do through the API.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Start a turn; first switch to `mode` when the session is in another.
    StartTurn {
        /// The user's message.
        message: String,
        /// The mode to switch to first.
        mode: Option<Mode>,
    },
    /// [`Command::StartTurn`] once the runtime read the image files its
    /// message names (`@shot.png`, a pasted path); the app never emits it.
    StartTurnWithImages {
        /// The user's message.
        message: String,
        /// The mode to switch to first.
        mode: Option<Mode>,
        /// Each named image's bytes.
        images: Vec<Vec<u8>>,
    },
    /// Stop the running turn.
    Stop,
    /// Switch the session's mode.
    SetMode(Mode),
    /// Compact the history now.
    Compact,
    /// Rewind to before a turn (`/rewind`).
    Rewind {
        /// The turn; `None`: the last one.
        turn_id: Option<String>,
        /// Files, conversation or both.
        scope: cortex_protocol::RewindScope,
        /// Overwrite files changed outside the session.
        force: bool,
    },
    /// What a files rewind to before `turn_id` would change (a dry run),
    /// answered with [`Outcome::RewindPreview`].
    PreviewRewind {
        /// The turn chosen in the list.
        turn_id: String,
    },
    /// List the user's sessions for the picker.
    ListSessions,
    /// Show another session (its whole timeline).
    OpenSession(SessionId),
    /// A new session on the same repository and settings; `model` when it
    /// should use another one.
    NewSession {
        /// The other model's `PROVIDER:NAME`.
        model: Option<String>,
    },
    /// List the repository's files for `@path` completion.
    ListFiles,
    /// List the session's custom commands for `/` completion.
    ListCommands,
    /// Run the session's custom command `name` as a turn (the server
    /// substitutes the arguments and includes `@path` files).
    RunCommand {
        /// Its name, without the slash.
        name: String,
        /// The text after the name.
        arguments: String,
    },
    /// `/goal …` against the API.
    Goal(GoalCommand),
    /// The user's verdict on the proposed plan or spec phase: accept, or
    /// reject with the feedback.
    Verdict {
        /// A plan or a spec phase.
        subject: crate::state::Subject,
        /// `None` accepts; `Some` rejects with this feedback.
        feedback: Option<String>,
    },
    /// `/hooks`: list the repository's hook files, answered with
    /// [`Outcome::Hooks`].
    ListHooks,
    /// `/hooks trust`: trust these (file, sha256) as they were shown,
    /// answered with [`Outcome::Hooks`].
    TrustHooks(Vec<(String, String)>),
    /// `/ps kill ID`: kill the session's background command `ID`, answered
    /// with an [`Outcome::Note`] or [`Outcome::Failed`].
    KillProcess(String),
    /// `/doctor`: run the checks of `cortex doctor` (the embedding program's
    /// [`crate::Doctor`]) and show them in the transcript.
    Doctor,
    /// Answer the approval request of `call_id`.
    AnswerApproval {
        /// The call waiting for the answer.
        call_id: String,
        /// Allow, always or deny.
        decision: cortex_protocol::ApprovalDecision,
    },
    /// End the UI.
    Quit,
}

/// The answer to a [`Command`].
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The turn was not started (a 409, the server gone): the message goes
    /// back into the composer.
    TurnRejected {
        /// The message, back into the composer.
        message: String,
        /// Why, as the API said it.
        error: String,
    },
    /// The user's sessions, for the picker.
    Sessions(Vec<Entry>),
    /// Another session is shown from now on: start over from its timeline.
    Switched,
    /// The repository's files, for `@path` completion.
    Files(Vec<String>),
    /// The session's custom commands, as the API listed them (the app
    /// cleans every field before showing it).
    Commands(Vec<cortex_protocol::CommandInfo>),
    /// A command failed; say so.
    Failed(String),
    /// A command's result worth a passing mention.
    Note(String),
    /// `/doctor`'s report, a notice per line.
    Doctor(Vec<ReportLine>),
    /// What rewinding to before a turn would change.
    RewindPreview(RewindPreview),
    /// The repository's hook files, as the API listed them.
    Hooks(Vec<HookFileView>),
}

/// One of the repository's hook files, as the API listed it (the app
/// cleans every field before showing it).
#[derive(Debug, Clone, PartialEq)]
pub struct HookFileView {
    /// Relative to the repository.
    pub file: String,
    /// The content's sha256, which trusting names.
    pub sha256: String,
    /// Whether its hooks run.
    pub trusted: bool,
    /// One line per hook: event, matcher, command.
    pub hooks: Vec<String>,
}

/// The answer to [`Command::PreviewRewind`], as the API gave it (the app
/// cleans every path before showing it).
#[derive(Debug, Clone, PartialEq)]
pub struct RewindPreview {
    /// The turn.
    pub turn_id: String,
    /// The files rewind's diff and the paths changed outside the session,
    /// or why the files cannot be rewound (no checkpoint, pruned, a remote
    /// guest): then only the conversation can be.
    pub files: Result<FilesPreview, String>,
}

/// What a files rewind would change.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FilesPreview {
    /// Paths brought back, restored and removed.
    pub diff: cortex_protocol::RewindDiff,
    /// Of those, the paths changed outside the session.
    pub changed_outside: Vec<String>,
}

/// One line of a report the embedding program makes (`/doctor`), shown as
/// a notice of its level; the app cleans the text.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportLine {
    /// Ok (info), warning or failure.
    pub level: crate::state::Level,
    /// The line.
    pub text: String,
}

/// One session as the picker lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The session's id.
    pub id: SessionId,
    /// `2026-11-30 20:13`.
    pub when: String,
    /// Its mode.
    pub mode: String,
    /// The first message, or the repository.
    pub title: String,
    /// Whether it is the session shown now.
    pub current: bool,
}

/// What `/goal` asks of the API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoalCommand {
    /// Set (or replace) the goal; its first turn starts when none runs.
    Set(String),
    /// Pause it.
    Pause,
    /// Continue it.
    Resume,
    /// Clear it.
    Clear,
}

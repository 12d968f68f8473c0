//! Carrying out the app's commands against the session API.
//!
//! Commands that change the session (a mode, a turn, a compaction, a switch
//! to another session) run one after another, in the order given, so
//! Shift+Tab pressed three times ends in the third mode. Stop and the
//! session list run at once beside them (Stop must not wait for a
//! compaction to end).

use crate::app::command::Entry;
use crate::app::{Command, Outcome};
use crate::runtime::Input;
use crate::state::Subject;
use cortex_client::{Client, ClientError, SessionView};
use cortex_protocol::{Mode, SessionId};
use tokio::sync::{mpsc, watch};

/// How sessions are created for `/new` and `/model`.
#[derive(Debug, Clone)]
pub struct NewSessions {
    /// The `POST /v1/sessions` body of the session the UI started with (its
    /// `model` is replaced for `/model NAME`); `None` when it was attached
    /// to, so `/new` copies the shown session's repository and mode.
    pub body: Option<serde_json::Value>,
    /// Close a session when the UI moves away from it (the in-process
    /// server: its guest would otherwise stay up until exit).
    pub close_left: bool,
}

pub struct Effects {
    ordered: mpsc::UnboundedSender<Command>,
    client: Client,
    session: watch::Receiver<SessionId>,
    tx: mpsc::Sender<Input>,
}

impl Effects {
    pub fn spawn(
        client: Client,
        session: SessionId,
        sessions: NewSessions,
        tx: mpsc::Sender<Input>,
    ) -> Effects {
        let (ordered, mut queue) = mpsc::unbounded_channel::<Command>();
        let (current, watched) = watch::channel(session);
        let worker = Worker {
            client: client.clone(),
            current,
            sessions,
            tx: tx.clone(),
        };
        tokio::spawn(async move {
            while let Some(command) = queue.recv().await {
                worker.run(command).await;
            }
        });
        Effects {
            ordered,
            client,
            session: watched,
            tx,
        }
    }

    /// The session shown now.
    pub fn session(&self) -> SessionId {
        self.session.borrow().clone()
    }

    pub fn send(&self, command: Command) {
        match command {
            Command::Stop => {
                let (client, id, tx) = (self.client.clone(), self.session(), self.tx.clone());
                tokio::spawn(async move {
                    match client.stop(&id).await {
                        Ok(_) => {}
                        Err(e) if e.status() == Some(409) => {}
                        Err(e) => {
                            report(&tx, Outcome::Failed(format!("stop: {}", message(&e)))).await
                        }
                    }
                });
            }
            Command::ListSessions => {
                let (client, id, tx) = (self.client.clone(), self.session(), self.tx.clone());
                tokio::spawn(async move {
                    let outcome = match client.all_sessions().await {
                        Ok(list) => Outcome::Sessions(list.iter().map(|s| entry(s, &id)).collect()),
                        Err(e) => Outcome::Failed(format!("sessions: {}", message(&e))),
                    };
                    report(&tx, outcome).await;
                });
            }
            other => {
                let _ = self.ordered.send(other);
            }
        }
    }
}

struct Worker {
    client: Client,
    current: watch::Sender<SessionId>,
    sessions: NewSessions,
    tx: mpsc::Sender<Input>,
}

impl Worker {
    fn id(&self) -> SessionId {
        self.current.borrow().clone()
    }

    async fn run(&self, command: Command) {
        let id = self.id();
        let outcome = match command {
            Command::StartTurn { message, mode } => {
                self.start_turn(&id, message, mode, Vec::new()).await
            }
            Command::StartTurnWithImages {
                message,
                mode,
                images,
            } => self.start_turn(&id, message, mode, images).await,
            Command::SetMode(mode) => match self.client.set_mode(&id, mode).await {
                Ok(_) => None,
                // A turn began meanwhile: the choice applies to the next.
                Err(e) if e.status() == Some(409) => None,
                Err(e) => Some(Outcome::Failed(format!("mode: {}", message(&e)))),
            },
            Command::Compact => match self.client.compact(&id).await {
                Ok(_) => None,
                Err(e) => Some(Outcome::Failed(format!("compact: {}", message(&e)))),
            },
            Command::Rewind {
                turn_id,
                scope,
                force,
            } => {
                let body = cortex_client::Rewind {
                    turn_id,
                    scope,
                    force,
                    dry_run: false,
                };
                match self.client.rewind(&id, &body).await {
                    // `session.rewound` arrives with the timeline.
                    Ok(_) => None,
                    Err(e) => Some(Outcome::Failed(format!("rewind: {}", message(&e)))),
                }
            }
            Command::PreviewRewind { turn_id } => Some(self.preview_rewind(&id, turn_id).await),
            Command::ListHooks => Some(match self.client.hooks(&id).await {
                Ok(list) => Outcome::Hooks(hook_views(list)),
                Err(e) => Outcome::Failed(format!("hooks: {}", message(&e))),
            }),
            Command::TrustHooks(files) => Some(self.trust_hooks(&id, files).await),
            Command::KillProcess(process) => {
                Some(match self.client.kill_process(&id, &process).await {
                    // The model chose the id: cleaned before the flash shows it.
                    Ok(info) => Outcome::Note(format!(
                        "{}: {}",
                        crate::text::clean_line(&info.id),
                        crate::text::clean_line(info.ended.as_deref().unwrap_or("still running"))
                    )),
                    Err(e) => Outcome::Failed(format!("/ps kill: {}", message(&e))),
                })
            }
            Command::ListCommands => match self.client.commands(&id).await {
                Ok(list) => Some(Outcome::Commands(list.commands)),
                Err(e) => Some(Outcome::Failed(format!("commands: {}", message(&e)))),
            },
            Command::RunCommand { name, arguments } => {
                match self.client.run_command(&id, &name, &arguments).await {
                    // The turn arrives on the event stream.
                    Ok(_) => None,
                    Err(e) => Some(Outcome::TurnRejected {
                        message: format!("/{name} {arguments}").trim_end().to_owned(),
                        error: message(&e),
                    }),
                }
            }
            Command::OpenSession(next) => match self.client.session(&next).await {
                Ok(view) => {
                    self.switch(&id, view.id).await;
                    None
                }
                Err(e) => Some(Outcome::Failed(message(&e))),
            },
            Command::NewSession { model } => self.new_session(&id, model).await,
            Command::Goal(command) => super::goal::run(&self.client, &id, command)
                .await
                .unwrap_or_else(|e| Some(Outcome::Failed(format!("goal: {}", message(&e))))),
            Command::Verdict { subject, feedback } => self.verdict(&id, subject, feedback).await,
            Command::AnswerApproval { call_id, decision } => {
                match self.client.answer_approval(&id, &call_id, decision).await {
                    Ok(_) => None,
                    Err(e) => Some(Outcome::Failed(format!("approval: {}", message(&e)))),
                }
            }
            Command::Stop
            | Command::ListSessions
            | Command::ListFiles
            | Command::Doctor
            | Command::Quit => None,
        };
        if let Some(outcome) = outcome {
            report(&self.tx, outcome).await;
        }
    }

    /// Trust each file as it was shown; the listing after the last, or the
    /// first refusal (a file changed since it was shown is one).
    async fn trust_hooks(&self, id: &SessionId, files: Vec<(String, String)>) -> Outcome {
        let mut listed = None;
        for (file, sha256) in files {
            let body = cortex_client::TrustHooks { file, sha256 };
            match self.client.trust_hooks(id, &body).await {
                Ok(list) => listed = Some(list),
                Err(e) => return Outcome::Failed(format!("hooks: {}", message(&e))),
            }
        }
        match listed {
            Some(list) => Outcome::Hooks(hook_views(list)),
            None => Outcome::Note("nothing to trust".to_owned()),
        }
    }

    async fn start_turn(
        &self,
        id: &SessionId,
        message: String,
        mode: Option<Mode>,
        images: Vec<Vec<u8>>,
    ) -> Option<Outcome> {
        if let Some(mode) = mode
            && let Err(e) = self.client.set_mode(id, mode).await
        {
            return Some(Outcome::TurnRejected {
                message,
                error: format!("mode: {}", self::message(&e)),
            });
        }
        let body = cortex_client::CreateTurn {
            message: message.clone(),
            attachments: images
                .iter()
                .map(|b| cortex_client::TurnAttachment::of_bytes(b))
                .collect(),
        };
        match self.client.start_turn_with(id, &body).await {
            Ok(_) => None,
            Err(e) => Some(Outcome::TurnRejected {
                message,
                error: self::message(&e),
            }),
        }
    }

    /// A dry run of a files rewind to before `turn_id`; its failure (no
    /// checkpoint, a remote guest) leaves the conversation to rewind.
    async fn preview_rewind(&self, id: &SessionId, turn_id: String) -> Outcome {
        let body = cortex_client::Rewind {
            turn_id: Some(turn_id.clone()),
            scope: cortex_protocol::RewindScope::Files,
            force: false,
            dry_run: true,
        };
        let files = match self.client.rewind(id, &body).await {
            Ok(answer) => Ok(crate::app::command::FilesPreview {
                diff: cortex_protocol::RewindDiff {
                    created: answer.created,
                    changed: answer.changed,
                    deleted: answer.deleted,
                },
                changed_outside: answer.changed_outside,
            }),
            Err(e) => Err(message(&e)),
        };
        Outcome::RewindPreview(crate::app::command::RewindPreview { turn_id, files })
    }

    /// Accept or reject the proposal that waits; the turn it starts
    /// arrives on the event stream. A refused rejection gives its feedback
    /// back to the composer.
    async fn verdict(
        &self,
        id: &SessionId,
        subject: Subject,
        feedback: Option<String>,
    ) -> Option<Outcome> {
        let c = &self.client;
        let answer = match (subject, &feedback) {
            (Subject::Plan, None) => c.accept_plan(id).await,
            (Subject::Plan, Some(f)) => c.reject_plan(id, f).await,
            (Subject::Spec, None) => c.accept_spec(id).await,
            (Subject::Spec, Some(f)) => c.reject_spec(id, f).await,
        };
        answer.err().map(|e| Outcome::TurnRejected {
            message: feedback.unwrap_or_default(),
            error: self::message(&e),
        })
    }

    async fn new_session(&self, id: &SessionId, model: Option<String>) -> Option<Outcome> {
        let mut body = match &self.sessions.body {
            Some(body) => body.clone(),
            None => match self.client.session(id).await {
                Ok(view) => serde_json::json!({
                    "repository": view.repository,
                    "mode": view.mode,
                    "model": view.model,
                    "stop_rule": view.stop_rule,
                }),
                Err(e) => return Some(Outcome::Failed(message(&e))),
            },
        };
        if let (Some(model), Some(fields)) = (model, body.as_object_mut()) {
            fields.insert("model".into(), serde_json::Value::String(model));
        }
        match self.client.create_session(body).await {
            Ok(view) => {
                self.switch(id, view.id).await;
                None
            }
            Err(e) => Some(Outcome::Failed(format!("new session: {}", message(&e)))),
        }
    }

    async fn switch(&self, from: &SessionId, to: SessionId) {
        if *from == to {
            return;
        }
        if self.sessions.close_left
            && let Err(e) = self.client.close(from).await
        {
            tracing::debug!("closing {from}: {e}");
        }
        self.current.send_replace(to.clone());
        let _ = self.tx.send(Input::Switch(to)).await;
    }
}

async fn report(tx: &mpsc::Sender<Input>, outcome: Outcome) {
    let _ = tx.send(Input::Outcome(outcome)).await;
}

/// The API's own message where it gave one.
fn message(e: &ClientError) -> String {
    match e {
        ClientError::Api { message, .. } => crate::text::clean_line(message),
        other => crate::text::clean_line(&other.to_string()),
    }
}

fn entry(view: &SessionView, current: &SessionId) -> Entry {
    let when = view
        .created_at
        .get(..16)
        .map(|s| s.replace('T', " "))
        .unwrap_or_default();
    let title = view
        .title
        .as_deref()
        .map(|t| t.lines().next().unwrap_or_default().to_owned())
        .unwrap_or_else(|| view.repository.clone());
    Entry {
        id: view.id.clone(),
        when,
        mode: view.mode.to_string(),
        title: crate::text::clean_line(&title),
        current: view.id == *current,
    }
}

/// The API's hook listing as the app shows it.
fn hook_views(list: cortex_client::HookList) -> Vec<crate::app::command::HookFileView> {
    list.files
        .into_iter()
        .map(|f| crate::app::command::HookFileView {
            hooks: f
                .hooks
                .iter()
                .map(|h| match &h.matcher {
                    Some(m) => format!("{} [{m}] {}", h.event, h.command),
                    None => format!("{} {}", h.event, h.command),
                })
                .collect(),
            file: f.file,
            sha256: f.sha256,
            trusted: f.trusted,
        })
        .collect()
}

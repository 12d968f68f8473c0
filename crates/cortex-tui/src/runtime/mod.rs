//! The event loop, apart from drawing: it waits for a key, a timeline
//! event, a command's answer or (only while something on screen moves) a
//! spinner tick; hands it to the app; carries out the commands the app
//! returns; and draws at most once per frame interval, only when something
//! changed. With nothing happening it sleeps: no timer runs.

mod effects;
mod goal;
mod hangup;
mod images;
mod stream;
pub mod terminal;

pub use effects::NewSessions;

use crate::app::{App, Command, Outcome};
use crate::view::screen;
use crate::view::theme::Theme;
use crate::{Launch, TuiError};
use cortex_protocol::{Event, SessionId};
use crossterm::event::{Event as TermEvent, EventStream};
use effects::Effects;
use futures::StreamExt;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// Shortest time between two frames (a burst of deltas is one frame).
const FRAME: Duration = Duration::from_millis(16);
/// Spinner and elapsed-time ticks while a turn runs.
const TICK: Duration = Duration::from_millis(100);
/// Inputs handled before the next frame is considered.
const BATCH: usize = 512;

/// What wakes the loop besides the terminal.
pub enum Input {
    /// A timeline event of the session shown.
    Event {
        /// Which event stream it came from; events of an older one (before a
        /// switch of session) are dropped.
        generation: u64,
        /// The event.
        event: Box<Event>,
    },
    /// The answer to a command.
    Outcome(Outcome),
    /// The effects moved to another session.
    Switch(SessionId),
    /// Something about the connection worth a passing mention.
    Note(String),
}

/// How the UI ended.
#[derive(Debug, Clone)]
pub struct Exit {
    /// The session shown last.
    pub session: SessionId,
    /// Whether a turn was still running when the UI quit.
    pub turn_running: bool,
}

/// Run the UI until the user quits; the terminal is restored on every exit
/// (error and panic included).
pub async fn run(launch: Launch) -> Result<Exit, TuiError> {
    let (mut terminal, guard) = terminal::enter().map_err(TuiError::Terminal)?;
    let result = event_loop(&mut terminal, launch).await;
    drop(guard);
    result
}

struct Loop {
    app: App,
    effects: Effects,
    launch: Launch,
    tx: mpsc::Sender<Input>,
    generation: u64,
    stream: tokio::task::JoinHandle<()>,
    model_seen: String,
}

async fn event_loop(terminal: &mut terminal::Term, launch: Launch) -> Result<Exit, TuiError> {
    let (tx, mut rx) = mpsc::channel::<Input>(1024);
    let effects = Effects::spawn(
        launch.client.clone(),
        launch.session.clone(),
        launch.new_sessions.clone(),
        tx.clone(),
    );
    let stream = stream::spawn(
        launch.client.clone(),
        launch.session.clone(),
        0,
        0,
        tx.clone(),
    );
    let mut state = Loop {
        app: App::new(Theme::from_env()),
        effects,
        launch,
        tx,
        generation: 0,
        stream,
        model_seen: String::new(),
    };
    let mut keys = EventStream::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut signals = Signals::new()?;
    let mut hangup = hangup::watch();
    let mut dirty = true;
    let mut last_frame = Instant::now() - FRAME;
    while !state.app.quit {
        if dirty && last_frame.elapsed() >= FRAME {
            state.draw(terminal)?;
            dirty = false;
            last_frame = Instant::now();
        }
        let due = tokio::time::Instant::from_std(last_frame + FRAME);
        let animating = state.app.animating();
        tokio::select! {
            key = keys.next() => match key {
                Some(Ok(event)) => dirty |= state.terminal_event(event),
                Some(Err(e)) => return Err(TuiError::Terminal(e)),
                None => break,
            },
            input = rx.recv() => {
                let Some(input) = input else { break };
                state.input(input);
                // Everything already waiting goes into the same frame.
                for _ in 0..BATCH {
                    match rx.try_recv() {
                        Ok(input) => state.input(input),
                        Err(_) => break,
                    }
                }
                dirty = true;
            },
            _ = tick.tick(), if animating => dirty = true,
            _ = tokio::time::sleep_until(due), if dirty => {},
            _ = signals.next() => break,
            _ = &mut hangup => break,
        }
    }
    state.stream.abort();
    Ok(Exit {
        session: state.effects.session(),
        turn_running: state.app.state.running(),
    })
}

impl Loop {
    fn draw(&mut self, terminal: &mut terminal::Term) -> Result<(), TuiError> {
        if std::mem::take(&mut self.app.repaint) {
            terminal.clear().map_err(TuiError::Terminal)?;
        }
        if self.app.state.model != self.model_seen {
            self.model_seen = self.app.state.model.clone();
            self.app.context_hint = (self.launch.context_window)(&self.model_seen);
        }
        let looked_at = self.app.found_instructions.as_ref().map(|f| &f.repository);
        if !self.app.state.repository.is_empty() && looked_at != Some(&self.app.state.repository) {
            // A few lstat calls, once per repository shown.
            let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
            self.app.found_instructions = Some(crate::app::status::found_instructions(
                &self.app.state.repository,
                self.launch.user_instructions.as_deref(),
                home.as_deref(),
            ));
        }
        self.app.now = crate::time::now_ms();
        terminal
            .draw(|frame| screen::draw(&mut self.app, frame))
            .map_err(TuiError::Terminal)?;
        Ok(())
    }

    /// Returns whether the screen may have changed.
    fn terminal_event(&mut self, event: TermEvent) -> bool {
        let commands = match event {
            TermEvent::Key(key) => self.app.on_key(key),
            TermEvent::Paste(text) => self.app.on_paste(&text),
            TermEvent::Mouse(mouse) => self.app.on_mouse(mouse),
            TermEvent::Resize(..) => Vec::new(),
            TermEvent::FocusGained | TermEvent::FocusLost => return false,
        };
        self.run(commands);
        true
    }

    fn input(&mut self, input: Input) {
        let commands = match input {
            Input::Event { generation, event } if generation == self.generation => {
                self.app.on_event(&event)
            }
            Input::Event { .. } => Vec::new(),
            Input::Outcome(outcome) => self.app.on_outcome(outcome),
            Input::Note(note) => self.app.on_outcome(Outcome::Note(note)),
            Input::Switch(id) => {
                self.stream.abort();
                self.generation += 1;
                self.app.on_outcome(Outcome::Switched);
                self.stream = stream::spawn(
                    self.launch.client.clone(),
                    id,
                    0,
                    self.generation,
                    self.tx.clone(),
                );
                Vec::new()
            }
        };
        self.run(commands);
    }

    fn run(&mut self, commands: Vec<Command>) {
        for command in commands {
            match command {
                Command::Quit => self.app.quit = true,
                Command::Doctor => {
                    let report = (self.launch.doctor)(self.app.state.repository.clone());
                    let tx = self.tx.clone();
                    tokio::spawn(async move {
                        let lines = report.await;
                        let _ = tx.send(Input::Outcome(Outcome::Doctor(lines))).await;
                    });
                }
                Command::ListFiles => {
                    let root = std::path::PathBuf::from(&self.app.state.repository);
                    let tx = self.tx.clone();
                    tokio::task::spawn_blocking(move || {
                        let files = crate::app::complete::list_files(&root);
                        let _ = tx.blocking_send(Input::Outcome(Outcome::Files(files)));
                    });
                }
                Command::StartTurn { message, mode } => {
                    let root = std::path::Path::new(&self.app.state.repository);
                    let named = images::named_images(&message, root);
                    if named.is_empty() {
                        self.effects.send(Command::StartTurn { message, mode });
                        continue;
                    }
                    // Read here, in order with the commands around it (a
                    // few local files; the server checks them).
                    let read: Result<Vec<Vec<u8>>, String> = named
                        .iter()
                        .map(|p| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display())))
                        .collect();
                    match read {
                        Ok(images) => self.effects.send(Command::StartTurnWithImages {
                            message,
                            mode,
                            images,
                        }),
                        Err(error) => {
                            let outcome = Outcome::TurnRejected {
                                message,
                                error: format!("image: {error}"),
                            };
                            let more = self.app.on_outcome(outcome);
                            self.run(more);
                        }
                    }
                }
                other => self.effects.send(other),
            }
        }
    }
}

/// SIGTERM and SIGHUP end the UI like a quit (the terminal is restored).
struct Signals {
    term: tokio::signal::unix::Signal,
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> Result<Signals, TuiError> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(Signals {
            term: signal(SignalKind::terminate()).map_err(TuiError::Terminal)?,
            hangup: signal(SignalKind::hangup()).map_err(TuiError::Terminal)?,
        })
    }

    async fn next(&mut self) {
        tokio::select! {
            _ = self.term.recv() => {},
            _ = self.hangup.recv() => {},
        }
    }
}

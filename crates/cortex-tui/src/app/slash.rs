//! Slash commands: one registry, which the composer completes from, `/help`
//! lists and Enter runs. A feature adds its command with one entry here
//! (`/goal`; `/accept` and `/reject` for the plan or spec phase that waits;
//! `/doctor`, whose checks the embedding program runs).

use crate::app::{App, Command};
use cortex_protocol::{Mode, RewindScope};

/// One slash command of the registry.
pub struct SlashCommand {
    /// Without the slash.
    pub name: &'static str,
    /// How its argument reads in help (`NAME`, `[MODEL]`), or empty.
    pub args: &'static str,
    /// One line for completion and `/help`.
    pub help: &'static str,
    /// Run it with the text after the name (trimmed).
    pub run: fn(&mut App, &str) -> Vec<Command>,
}

/// Every slash command, in the order `/help` lists them.
pub const COMMANDS: &[SlashCommand] = &[
    SlashCommand {
        name: "mode",
        args: "ask|plan|spec|agent",
        help: "switch mode (Shift+Tab cycles)",
        run: mode,
    },
    SlashCommand {
        name: "compact",
        args: "",
        help: "summarise the history now",
        run: |app, _| app.command_between_turns("/compact", Command::Compact),
    },
    SlashCommand {
        name: "goal",
        args: "[OBJECTIVE|pause|resume|clear]",
        help: "work toward a goal across turns; alone, show it",
        run: crate::app::goal::run,
    },
    SlashCommand {
        name: "accept",
        args: "",
        help: "accept the proposed plan or spec phase (Ctrl+Y)",
        run: |app, _| app.decide(None, false),
    },
    SlashCommand {
        name: "reject",
        args: "[FEEDBACK]",
        help: "reject it with feedback (Ctrl+R)",
        run: |app, feedback| app.decide(Some(feedback), true),
    },
    SlashCommand {
        name: "rewind",
        args: "[files|conversation|both] [force]",
        help: "go back to before the last turn (files and conversation by default)",
        run: rewind,
    },
    SlashCommand {
        name: "sessions",
        args: "",
        help: "pick a session to resume",
        run: |app, _| {
            app.flash("loading sessions…");
            vec![Command::ListSessions]
        },
    },
    SlashCommand {
        name: "new",
        args: "",
        help: "start a new session here",
        run: |app, _| app.command_between_turns("/new", Command::NewSession { model: None }),
    },
    SlashCommand {
        name: "model",
        args: "[PROVIDER:NAME]",
        help: "show the model, or start a new session with another",
        run: model,
    },
    SlashCommand {
        name: "doctor",
        args: "",
        help: "check isolation, model, keys, store, MCP servers (as `cortex doctor`)",
        run: |app, _| {
            app.flash("doctor: checking…");
            vec![Command::Doctor]
        },
    },
    SlashCommand {
        name: "help",
        args: "",
        help: "keys and commands",
        run: |app, _| {
            app.open_help();
            Vec::new()
        },
    },
    SlashCommand {
        name: "quit",
        args: "",
        help: "leave (Ctrl+C twice does too)",
        run: |_, _| vec![Command::Quit],
    },
];

/// The command named `name` (without the slash).
pub fn find(name: &str) -> Option<&'static SlashCommand> {
    COMMANDS.iter().find(|c| c.name == name)
}

/// Commands whose name starts with `prefix`.
pub fn matching(prefix: &str) -> impl Iterator<Item = &'static SlashCommand> + '_ {
    COMMANDS.iter().filter(move |c| c.name.starts_with(prefix))
}

/// Run the composer's `/name args` line.
pub fn run(app: &mut App, line: &str) -> Vec<Command> {
    let line = line.trim();
    let body = line.strip_prefix('/').unwrap_or(line);
    let (name, args) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    match find(name) {
        Some(command) => (command.run)(app, args.trim()),
        None => {
            app.flash(&format!("unknown command /{name} · /help lists them"));
            Vec::new()
        }
    }
}

fn mode(app: &mut App, args: &str) -> Vec<Command> {
    match args.parse::<Mode>() {
        Ok(mode) => app.choose_mode(mode),
        Err(_) if args.is_empty() => {
            app.flash("usage: /mode ask|plan|spec|agent");
            Vec::new()
        }
        Err(e) => {
            app.flash(&e.to_string());
            Vec::new()
        }
    }
}

/// `/rewind [files|conversation|both] [force]`: the last turn, between turns.
fn rewind(app: &mut App, args: &str) -> Vec<Command> {
    let mut scope = RewindScope::Both;
    let mut force = false;
    for word in args.split_whitespace() {
        match word {
            "files" => scope = RewindScope::Files,
            "conversation" => scope = RewindScope::Conversation,
            "both" => scope = RewindScope::Both,
            "force" | "--force" => force = true,
            _ => {
                app.flash("usage: /rewind [files|conversation|both] [force]");
                return Vec::new();
            }
        }
    }
    app.command_between_turns("/rewind", Command::Rewind { scope, force })
}

fn model(app: &mut App, args: &str) -> Vec<Command> {
    if args.is_empty() {
        let model = app.state.model.clone();
        app.flash(&format!(
            "model: {model} · /model PROVIDER:NAME starts a new session with another"
        ));
        return Vec::new();
    }
    app.command_between_turns(
        "/model",
        Command::NewSession {
            model: Some(args.to_owned()),
        },
    )
}

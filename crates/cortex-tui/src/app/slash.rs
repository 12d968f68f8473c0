//! Slash commands: one registry, which the composer completes from, `/help`
//! lists and Enter runs. A feature adds its command with one entry here
//! (`/goal`; `/accept` and `/reject` for the plan or spec phase that waits;
//! `/doctor`, whose checks the embedding program runs). The session's custom
//! commands (`.cortex/commands/…`, listed by the API) follow the built-in
//! ones; a built-in name wins.

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
        name: "status",
        args: "",
        help: "the session, the project instructions the model is given, what checkpoints leave out",
        run: crate::app::status::run,
    },
    SlashCommand {
        name: "init",
        args: "",
        help: "write or update AGENTS.md for this repository (an Agent turn, as `cortex init`)",
        run: crate::app::init::run,
    },
    SlashCommand {
        name: "rewind",
        args: "[files|conversation|both] [force]",
        help: "pick a turn to go back to before (Esc Esc); with a scope, the last turn",
        run: rewind,
    },
    SlashCommand {
        name: "hooks",
        args: "[trust]",
        help: "the repository's hook files and whether they run; `trust` runs the ones shown",
        run: crate::app::hooks::run,
    },
    SlashCommand {
        name: "ps",
        args: "[kill ID]",
        help: "the session's background commands; `kill ID` ends one",
        run: crate::app::ps::run,
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

/// One of the session's custom commands, every field cleaned for the
/// screen (they come from repository files).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CustomCommand {
    /// Without the slash (`git:commit`).
    pub name: String,
    /// Its description, with its argument hint.
    pub help: String,
}

impl CustomCommand {
    /// From the API's listing.
    pub fn from_info(info: &cortex_protocol::CommandInfo) -> CustomCommand {
        let clean = crate::text::clean_line;
        let help = match &info.argument_hint {
            Some(hint) => format!("{} · {}", clean(hint), clean(&info.description)),
            None => clean(&info.description),
        };
        CustomCommand {
            name: clean(&info.name),
            help,
        }
    }
}

/// Custom commands whose name starts with `prefix`, but for those a
/// built-in command's name hides.
pub fn matching_custom<'a>(
    prefix: &'a str,
    custom: &'a [CustomCommand],
) -> impl Iterator<Item = &'a CustomCommand> + 'a {
    custom
        .iter()
        .filter(move |c| c.name.starts_with(prefix) && find(&c.name).is_none())
}

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
        // The server reads the command's file: a prompt, run in the
        // session's mode like any message. Before the session's commands
        // are listed (a line typed or pasted faster than the list
        // arrives), the server says whether it knows the name.
        None if app.has_custom_command(name) || !app.custom_listed() => app.command_between_turns(
            &format!("/{name}"),
            Command::RunCommand {
                name: name.to_owned(),
                arguments: args.trim().to_owned(),
            },
        ),
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

/// `/rewind`: the list of turns; `/rewind files|conversation|both
/// [force]`: the last turn at once. Between turns.
fn rewind(app: &mut App, args: &str) -> Vec<Command> {
    if args.is_empty() {
        return app.open_rewind();
    }
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
    app.command_between_turns(
        "/rewind",
        Command::Rewind {
            turn_id: None,
            scope,
            force,
        },
    )
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

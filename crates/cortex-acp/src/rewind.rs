//! `/rewind` in ACP. The protocol has no rewind method, so rewind is a
//! command, as editors already show them: advertised with the session's
//! custom commands (`commands.rs`), and a prompt
//! `/rewind [TURN] [--files|--conversation|--both] [--force] [--dry-run]`
//! goes to the session API's rewind (`POST /v1/sessions/{id}/rewind`)
//! instead of starting a turn. The answer is agent text: the paths the
//! rewind created, changed and deleted, and how to undo it. Without a turn
//! it lists the conversation's turns (numbered: `/rewind 2` goes back to
//! before the second) and changes nothing.
//!
//! A rewind that would overwrite files changed outside the session (the
//! API's 409) is said in the answer with what `--force` would overwrite;
//! any other failure of the API is the prompt's JSON-RPC error, as for a
//! turn. Paths and prompts come from the workspace and the model: every
//! control character in them is shown escaped.

use crate::{AcpAgent, api_error, invalid_params};
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use cortex_api::{Rewind, RewindAnswer};
use cortex_protocol::{EventKind, RewindScope, SessionId};

/// The command's name.
pub(crate) const NAME: &str = "rewind";

/// Longest prompt line a listed turn shows.
const PROMPT_CHARS: usize = 100;

/// The command as advertised.
pub(crate) fn available() -> AvailableCommand {
    AvailableCommand::new(
        NAME,
        "Go back to before a turn: its files, its conversation or both (no turn: list the turns)",
    )
    .input(AvailableCommandInput::Unstructured(
        UnstructuredCommandInput::new(
            "[TURN] [--files|--conversation|--both] [--force] [--dry-run]",
        ),
    ))
}

/// `/rewind`'s arguments.
#[derive(Debug, Default, PartialEq, Eq)]
struct Args {
    /// A turn's id, its number in the list, or an `undo-…` checkpoint.
    turn: Option<String>,
    scope: RewindScope,
    force: bool,
    dry_run: bool,
}

fn parse(arguments: &str) -> Result<Args, String> {
    let mut args = Args::default();
    let mut scopes = 0;
    for word in arguments.split_whitespace() {
        match word {
            "--files" => (args.scope, scopes) = (RewindScope::Files, scopes + 1),
            "--conversation" => (args.scope, scopes) = (RewindScope::Conversation, scopes + 1),
            "--both" => (args.scope, scopes) = (RewindScope::Both, scopes + 1),
            "--force" => args.force = true,
            "--dry-run" => args.dry_run = true,
            flag if flag.starts_with("--") => {
                return Err(format!("unknown option `{}`", plain(flag)));
            }
            turn if args.turn.is_none() => args.turn = Some(turn.to_owned()),
            _ => return Err("one turn at most".to_owned()),
        }
    }
    if scopes > 1 {
        return Err("one of --files, --conversation and --both".to_owned());
    }
    Ok(args)
}

/// `text` on one line with every control character shown escaped (C0 in
/// caret notation, C1 and bidirectional controls as `\u{…}`): what the
/// model or the workspace wrote cannot restyle or reorder the answer.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                out.push('^');
                out.push(char::from(b'@' + c as u8));
            }
            '\u{7f}' => out.push_str("^?"),
            '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

/// One conversation turn: its id and its message's first line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Turn {
    pub(crate) id: String,
    pub(crate) prompt: String,
}

/// Fold one event into the conversation's turns (a conversation rewind
/// drops the turns it went back over, as the session's history does).
pub(crate) fn fold(turns: &mut Vec<Turn>, kind: &EventKind, turn: Option<&str>) {
    match kind {
        EventKind::TurnStarted { message, .. } => {
            if let Some(id) = turn {
                let first = message.lines().next().unwrap_or_default();
                let mut prompt: String = first.chars().take(PROMPT_CHARS).collect();
                if first.chars().count() > PROMPT_CHARS {
                    prompt.push('…');
                }
                turns.push(Turn {
                    id: id.to_owned(),
                    prompt,
                });
            }
        }
        EventKind::SessionRewound { turn_id, scope, .. } if *scope != RewindScope::Files => {
            if let Some(at) = turns.iter().position(|t| t.id == *turn_id) {
                turns.truncate(at);
            }
        }
        _ => {}
    }
}

/// The list `/rewind` without a turn answers.
fn listing(turns: &[Turn]) -> String {
    if turns.is_empty() {
        return "This session has no turn to rewind.".to_owned();
    }
    let mut text = String::from(
        "Turns of this conversation, oldest first. `/rewind N` goes back to before turn N \
         (its files and its conversation; `--files` or `--conversation` for one of them, \
         `--dry-run` to see what would change first):\n",
    );
    for (n, turn) in turns.iter().enumerate() {
        text.push_str(&format!(
            "\n{}. {} ({})",
            n + 1,
            plain(&turn.prompt),
            plain(&turn.id)
        ));
    }
    text
}

/// What a rewind (or its dry run) did, as agent text.
fn answer_text(done: &RewindAnswer, shown: &str) -> String {
    let scope = match done.scope {
        RewindScope::Files => "files",
        RewindScope::Conversation => "conversation",
        RewindScope::Both => "files and conversation",
    };
    let verb = if done.dry_run {
        "Would rewind"
    } else {
        "Rewound"
    };
    let mut text = format!("{verb} to before {shown} ({scope})");
    if done.scope != RewindScope::Conversation {
        text.push_str(&format!(
            ": {} created, {} changed, {} deleted",
            done.created.len(),
            done.changed.len(),
            done.deleted.len()
        ));
    }
    text.push('.');
    for (mark, paths) in [
        ('+', &done.created),
        ('~', &done.changed),
        ('-', &done.deleted),
    ] {
        for path in paths {
            text.push_str(&format!("\n{mark} {}", plain(path)));
        }
    }
    for path in &done.forced {
        text.push_str(&format!(
            "\nOverwritten (changed outside the session): {}",
            plain(path)
        ));
    }
    for path in &done.changed_outside {
        text.push_str(&format!(
            "\nChanged outside the session (only `--force` overwrites it): {}",
            plain(path)
        ));
    }
    if !done.dry_run && done.scope != RewindScope::Files {
        text.push_str(
            "\n\nThe model no longer sees that turn and the later ones; this editor still shows \
             them.",
        );
    }
    if let Some(undo) = &done.undo {
        text.push_str(&format!(
            "\n\nUndo the files with `/rewind {} --files`.",
            plain(undo)
        ));
    }
    text
}

impl AcpAgent {
    /// The conversation's turns, folded from the session's stored events.
    async fn turns(&self, id: &SessionId) -> Result<Vec<Turn>, agent_client_protocol::Error> {
        let view = self.api.session(id).await.map_err(api_error)?;
        let mut turns = Vec::new();
        if view.last_seq == 0 {
            return Ok(turns);
        }
        let mut events = self.api.events(id, 0).await.map_err(api_error)?;
        let mut seen = 0;
        while seen < view.last_seq {
            let event = match events.next().await {
                Some(Ok(event)) => event,
                Some(Err(e)) => return Err(api_error(e)),
                None => return Err(crate::internal("the server closed the event stream")),
            };
            seen = event.seq;
            fold(
                &mut turns,
                &event.kind,
                event.turn_id.as_ref().map(|t| t.0.as_str()),
            );
        }
        Ok(turns)
    }

    /// Run `/rewind ARGUMENTS` for session `id`; the agent text to answer.
    pub(crate) async fn rewind(
        &self,
        id: &SessionId,
        arguments: &str,
    ) -> Result<String, agent_client_protocol::Error> {
        let args = parse(arguments).map_err(|why| {
            invalid_params(format!(
                "/rewind: {why} (usage: /rewind [TURN] [--files|--conversation|--both] \
                 [--force] [--dry-run])"
            ))
        })?;
        let Some(turn) = args.turn else {
            return Ok(listing(&self.turns(id).await?));
        };
        // A number is the turn's place in the list; anything else is an id.
        let (turn_id, shown) = match turn.parse::<usize>() {
            Ok(n) => {
                let turns = self.turns(id).await?;
                let Some(found) = n.checked_sub(1).and_then(|i| turns.get(i)) else {
                    return Err(invalid_params(format!(
                        "/rewind: no turn {n} (the conversation has {}; `/rewind` lists them)",
                        turns.len()
                    )));
                };
                let shown = format!("turn {n}, {} ({})", plain(&found.prompt), plain(&found.id));
                (found.id.clone(), shown)
            }
            Err(_) => {
                let shown = plain(&turn);
                (turn, shown)
            }
        };
        let body = Rewind {
            turn_id: Some(turn_id),
            scope: args.scope,
            force: args.force,
            dry_run: args.dry_run,
        };
        match self.api.rewind(id, &body).await {
            Ok(done) => Ok(answer_text(&done, &shown)),
            // Files changed outside the session, or a turn running: said,
            // nothing changed.
            Err(cortex_client::ClientError::Api {
                status: 409,
                message,
                ..
            }) => Ok(format!(
                "Not rewound: {}.\nNothing was changed. `--dry-run` shows what the rewind \
                 would change; `--force` overwrites files changed outside the session.",
                plain(&message)
            )),
            Err(e) => Err(api_error(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_name_a_turn_a_scope_and_the_options() {
        assert_eq!(parse("").expect("empty"), Args::default());
        assert_eq!(
            parse(" 2 --files --force ").expect("args"),
            Args {
                turn: Some("2".into()),
                scope: RewindScope::Files,
                force: true,
                dry_run: false,
            }
        );
        assert_eq!(
            parse("--dry-run t1 --conversation").expect("args"),
            Args {
                turn: Some("t1".into()),
                scope: RewindScope::Conversation,
                force: false,
                dry_run: true,
            }
        );
        assert!(parse("--files --both").is_err());
        assert!(parse("t1 t2").is_err());
        assert!(parse("--hard").is_err());
    }

    #[test]
    fn controls_from_the_workspace_are_shown_escaped() {
        assert_eq!(
            plain("a\u{1b}]52;c;x\u{7}\r\nb\u{202e}c\u{9b}"),
            "a^[]52;c;x^G^M\\nb\\u{202e}c\\u{9b}"
        );
        let done = RewindAnswer {
            turn_id: "t1".into(),
            scope: RewindScope::Files,
            created: vec!["new\u{1b}[2J.txt".into()],
            changed: vec![],
            deleted: vec!["gone".into()],
            undo: Some("undo-1".into()),
            forced: vec![],
            dry_run: false,
            changed_outside: vec![],
        };
        let text = answer_text(&done, "t1");
        assert_eq!(
            text,
            "Rewound to before t1 (files): 1 created, 0 changed, 1 deleted.\n\
             + new^[[2J.txt\n- gone\n\nUndo the files with `/rewind undo-1 --files`."
        );
    }

    #[test]
    fn a_conversation_rewind_drops_its_turns_from_the_list() {
        let mut turns = Vec::new();
        let started = |message: &str| EventKind::TurnStarted {
            message: message.into(),
            mode: cortex_protocol::Mode::Agent,
        };
        fold(&mut turns, &started("fix it\nmore"), Some("t1"));
        fold(&mut turns, &started("test it"), Some("t2"));
        fold(&mut turns, &started("ship it"), Some("t3"));
        let rewound = |scope| EventKind::SessionRewound {
            turn_id: "t2".into(),
            scope,
            diff: Default::default(),
            paths: 0,
            undo: None,
            forced: vec![],
        };
        fold(&mut turns, &rewound(RewindScope::Files), None);
        assert_eq!(turns.len(), 3, "a files rewind keeps the conversation");
        fold(&mut turns, &rewound(RewindScope::Both), None);
        assert_eq!(
            turns,
            [Turn {
                id: "t1".into(),
                prompt: "fix it".into()
            }]
        );
        assert!(listing(&turns).ends_with("\n\n1. fix it (t1)"));
    }
}

//! The session's custom commands in ACP: advertised with an
//! `available_commands_update` once `session/new` or `session/load` has
//! answered, and a prompt that starts with `/NAME` of one of them runs it
//! (`POST /v1/sessions/{id}/commands`: the server substitutes the arguments
//! and includes `@path` files) instead of sending the text as it is. The
//! built-in `rewind` (`rewind.rs`) is advertised with them.

use crate::sessions::acp_id;
use crate::{AcpAgent, rewind};
use agent_client_protocol::Client as Editor;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionNotification,
    SessionUpdate, UnstructuredCommandInput,
};
use cortex_protocol::{CommandInfo, SessionId};

/// The protocol's form of a listed command.
fn available(info: &CommandInfo) -> AvailableCommand {
    let command = AvailableCommand::new(info.name.clone(), info.description.clone());
    match &info.argument_hint {
        Some(hint) => command.input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new(hint.clone()),
        )),
        None => command,
    }
}

/// `/NAME ARGS` split into its name and argument text; `None` for a prompt
/// that does not start with a slash and a name.
pub(crate) fn slash_command(message: &str) -> Option<(&str, &str)> {
    let body = message.trim_start().strip_prefix('/')?;
    let (name, arguments) = body.split_once(char::is_whitespace).unwrap_or((body, ""));
    (!name.is_empty()).then(|| (name, arguments.trim()))
}

impl AcpAgent {
    /// Tell the editor which commands the session has: its custom ones and
    /// `rewind` (built in: a custom command of that name is not listed).
    /// A failure to list the custom ones is logged: `rewind` is still
    /// advertised.
    pub(crate) async fn advertise_commands(
        &self,
        session: &agent_client_protocol::v1::schema::SessionId,
        cx: &ConnectionTo<Editor>,
    ) {
        let custom = match self.api.commands(&acp_id(session)).await {
            Ok(list) => list.commands,
            Err(e) => {
                tracing::warn!("the session's commands could not be listed: {e}");
                Vec::new()
            }
        };
        let mut commands: Vec<AvailableCommand> = custom
            .iter()
            .filter(|c| c.name != rewind::NAME)
            .map(available)
            .collect();
        commands.push(rewind::available());
        let update = AvailableCommandsUpdate::new(commands);
        let note = SessionNotification::new(
            session.clone(),
            SessionUpdate::AvailableCommandsUpdate(update),
        );
        if let Err(e) = cx.send_notification(note) {
            tracing::warn!("available_commands_update: {}", e.message);
        }
    }

    /// The command a prompt runs: its name and arguments when the prompt is
    /// `/NAME …` and the session has a command of that name.
    pub(crate) async fn command_of(
        &self,
        id: &SessionId,
        message: &str,
    ) -> Option<(String, String)> {
        let (name, arguments) = slash_command(message)?;
        let list = self.api.commands(id).await.ok()?;
        list.commands
            .iter()
            .any(|c| c.name == name)
            .then(|| (name.to_owned(), arguments.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slash_prompt_names_a_command_and_its_arguments() {
        assert_eq!(
            slash_command("/review a.py  the style "),
            Some(("review", "a.py  the style"))
        );
        assert_eq!(slash_command("  /git:commit"), Some(("git:commit", "")));
        assert_eq!(slash_command("fix /review"), None);
        assert_eq!(slash_command("/ x"), None);
        let info = CommandInfo {
            name: "review".into(),
            description: "Review a file".into(),
            argument_hint: Some("<file>".into()),
            mode: None,
            model: None,
            scope: cortex_protocol::ExtensionScope::Repository,
            path: ".cortex/commands/review.md".into(),
        };
        let json = serde_json::to_value(available(&info)).expect("json");
        assert_eq!(
            json,
            serde_json::json!({"name": "review", "description": "Review a file",
                               "input": {"hint": "<file>"}})
        );
    }
}

//! `/rewind` in `cortex acp`: the real binary on stdio driven by the
//! `agent-client-protocol` crate's client side, a scripted turn that
//! changes files through `bash`, then the rewind command an editor sends
//! as a prompt: advertised, listing the turns, a dry run, refused over a
//! file the user changed, forced, and undone.

mod acp_support;
mod common;

use acp_support::{Updates, next_of, with_agent};
use agent_client_protocol::Agent;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, NewSessionRequest, PromptRequest, SessionId, StopReason,
};
use common::Env;
use serde_json::json;

/// Send `prompt`; the agent's text in answer (every chunk received by the
/// time it answered `end_turn`).
async fn ask(
    cx: &ConnectionTo<Agent>,
    updates: &mut Updates,
    session: &SessionId,
    prompt: &str,
) -> agent_client_protocol::Result<String> {
    let answer = cx
        .send_request(PromptRequest::new(
            session.clone(),
            vec![ContentBlock::from(prompt)],
        ))
        .block_task()
        .await?;
    assert_eq!(answer.stop_reason, StopReason::EndTurn, "{prompt}");
    let mut text = String::new();
    while let Ok(update) = updates.try_recv() {
        if update["sessionUpdate"] == "agent_message_chunk" {
            text.push_str(update["content"]["text"].as_str().unwrap_or_default());
        }
    }
    Ok(text)
}

#[tokio::test]
async fn rewind_is_a_command_that_lists_previews_refuses_forces_and_undoes() {
    let env = Env::new(&[("notes.txt", "alpha\n")]);
    let repo = env.repo.path().canonicalize().expect("repo");
    let script = json!({"responses": [
        {"tool_calls": [{"name": "bash", "arguments":
            {"command": "echo beta > notes.txt && mkdir -p out && echo x > out/made.txt"}}]},
        {"text": "Changed."}
    ]});
    with_agent(&env, script, async move |cx, mut updates| {
        let notes = repo.join("notes.txt");
        let read = |path: &std::path::Path| std::fs::read_to_string(path).expect("read");
        let session = cx
            .send_request(NewSessionRequest::new(repo.clone()))
            .block_task()
            .await?
            .session_id;
        let advertised = next_of(&mut updates, "available_commands_update").await;
        let names: Vec<&str> = advertised["availableCommands"]
            .as_array()
            .expect("commands")
            .iter()
            .filter_map(|c| c["name"].as_str())
            .collect();
        assert_eq!(names, ["rewind"]);

        assert_eq!(
            ask(&cx, &mut updates, &session, "change notes").await?,
            "Changed."
        );
        assert_eq!(read(&notes), "beta\n");

        // No turn: the list, numbered.
        let list = ask(&cx, &mut updates, &session, "/rewind").await?;
        assert!(list.contains("\n1. change notes ("), "{list}");

        // A dry run says what would change and changes nothing.
        let preview = ask(&cx, &mut updates, &session, "/rewind 1 --dry-run").await?;
        assert!(
            preview.starts_with("Would rewind to before turn 1, change notes"),
            "{preview}"
        );
        assert!(preview.contains("\n~ notes.txt"), "{preview}");
        assert!(preview.contains("\n- out/made.txt"), "{preview}");
        assert_eq!(read(&notes), "beta\n");

        // The user changes the file: refused, said, nothing changed.
        std::fs::write(&notes, "mine\n").expect("user edit");
        let refused = ask(&cx, &mut updates, &session, "/rewind 1").await?;
        assert!(refused.starts_with("Not rewound: "), "{refused}");
        assert!(refused.contains("notes.txt"), "{refused}");
        assert_eq!(read(&notes), "mine\n");
        assert!(repo.join("out/made.txt").exists());

        // Forced: the files and the conversation go back.
        let done = ask(&cx, &mut updates, &session, "/rewind 1 --force").await?;
        assert!(done.starts_with("Rewound to before turn 1"), "{done}");
        assert!(
            done.contains("\nOverwritten (changed outside the session): notes.txt"),
            "{done}"
        );
        assert_eq!(read(&notes), "alpha\n");
        assert!(!repo.join("out").exists());
        let undo = done
            .split("`/rewind ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .expect("the undo checkpoint")
            .to_owned();
        assert!(undo.starts_with("undo-"), "{done}");
        let list = ask(&cx, &mut updates, &session, "/rewind").await?;
        assert_eq!(list, "This session has no turn to rewind.");

        // And undone: the files as they were before the rewind.
        let undone = ask(
            &cx,
            &mut updates,
            &session,
            &format!("/rewind {undo} --files"),
        )
        .await?;
        assert!(undone.starts_with("Rewound to before undo-"), "{undone}");
        assert_eq!(read(&notes), "mine\n");
        assert_eq!(read(&repo.join("out/made.txt")), "x\n");

        // A bad argument is the prompt's error.
        let bad = cx
            .send_request(PromptRequest::new(
                session.clone(),
                vec![ContentBlock::from("/rewind --hard")],
            ))
            .block_task()
            .await;
        let error = bad.expect_err("an unknown option");
        assert!(
            error.message.contains("unknown option `--hard`"),
            "{error:?}"
        );
        Ok(())
    })
    .await;
}

//! `cortex sessions list|show|compact`: stored timelines, through the session API
//! (in-process unless `--server`).

use crate::flags::{ReopenFlags, ServerFlag};
use crate::json_out;
use crate::render::{Human, JsonLines, Render};
use anyhow::bail;
use clap::Subcommand;
use cortex_client::{Client, ClientError};
use cortex_protocol::SessionId;
use cortex_term::sanitize_line;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// Stored sessions, newest first.
    #[command(
        after_help = "Examples:\n  cortex sessions list\n  cortex sessions list --json | jq -r .id"
    )]
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlag,
    },
    /// Render a session's timeline.
    #[command(
        after_help = "Examples:\n  cortex sessions show 0193…\n  cortex sessions show 0193… --json | jq .type"
    )]
    Show {
        id: String,
        /// Every event as one JSON line.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        server: ServerFlag,
    },
    /// Compact a session's history now (its model writes the summary).
    #[command(after_help = "Example:\n  cortex sessions compact 0193…")]
    Compact {
        id: String,
        /// The figures as one JSON object.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        reopen: ReopenFlags,
    },
}

pub async fn run(command: SessionsCommand) -> anyhow::Result<ExitCode> {
    let (server, model) = match &command {
        SessionsCommand::List { server, .. } | SessionsCommand::Show { server, .. } => {
            (server, None)
        }
        SessionsCommand::Compact { reopen, .. } => (&reopen.server, reopen.model.clone()),
    };
    let (client, local) = server
        .connect(model, &crate::guests::GuestChoice::Local)
        .await?;
    let result = match command {
        SessionsCommand::List { json, .. } => list(&client, json).await,
        SessionsCommand::Show { id, json, .. } => show(&client, SessionId(id), json).await,
        SessionsCommand::Compact { id, json, .. } => compact(&client, SessionId(id), json).await,
    };
    if let Some(local) = local {
        local.stop().await;
    }
    result.map(|()| ExitCode::SUCCESS)
}

/// `sessions list`: one line (or JSON object) per stored session.
async fn list(client: &Client, json: bool) -> anyhow::Result<()> {
    for s in client.all_sessions().await? {
        if json {
            let line = serde_json::json!({
                "id": s.id, "repository": s.repository, "mode": s.mode,
                "model": s.model, "created_at": s.created_at,
                "title": s.title, "events": s.last_seq,
            });
            println!("{}", json_out::to_line(&line)?);
        } else {
            // Titles are the first message, repositories any
            // path: one line each, whatever they hold.
            println!(
                "{}  {}  {:<5}  {}  {}",
                sanitize_line(s.id.as_str()),
                sanitize_line(&s.created_at),
                s.mode,
                sanitize_line(&s.repository),
                sanitize_line(s.title.as_deref().unwrap_or_default())
            );
        }
    }
    Ok(())
}

/// `sessions show`: the stored events up to the session's newest, rendered.
async fn show(client: &Client, id: SessionId, json: bool) -> anyhow::Result<()> {
    let view = or_no_session(client.session(&id).await, &id)?;
    if !json && let Some(bytes) = view.checkpoint_bytes {
        // What the session's rewind points cost on this machine.
        eprintln!(
            "checkpoints: {:.1} MiB stored",
            bytes as f64 / (1024.0 * 1024.0)
        );
    }
    let mut renderer: Box<dyn Render> = if json {
        Box::new(JsonLines)
    } else {
        Box::new(Human::new())
    };
    if view.last_seq > 0 {
        // The stream goes on live; stop at what was stored.
        let mut events = client.events(&id, 0).await?;
        while let Some(event) = events.next().await {
            let event = event?;
            renderer.event(&event);
            if event.seq >= view.last_seq {
                break;
            }
        }
    }
    Ok(())
}

/// `sessions compact`: compact now and print the figures.
async fn compact(client: &Client, id: SessionId, json: bool) -> anyhow::Result<()> {
    let done = or_no_session(client.compact(&id).await, &id)?;
    if json {
        println!("{}", json_out::to_line(&done)?);
    } else {
        println!(
            "compacted {}: ~{} → ~{} tokens, {} → {} messages ({} summarised, {} kept)",
            sanitize_line(id.as_str()),
            done.tokens_before,
            done.tokens_after,
            done.messages_before,
            done.messages_after,
            done.summarised,
            done.kept.recent_messages
        );
    }
    Ok(())
}

/// A 404 as "no session `ID`"; any other answer as it is.
fn or_no_session<T>(answer: Result<T, ClientError>, id: &SessionId) -> anyhow::Result<T> {
    match answer {
        Err(e) if e.status() == Some(404) => {
            bail!("no session `{}`", sanitize_line(id.as_str()))
        }
        other => Ok(other?),
    }
}

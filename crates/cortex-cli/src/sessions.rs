//! `cortex sessions list|show`: stored timelines.

use crate::config;
use crate::render::{Human, JsonLines, Render};
use anyhow::Context;
use clap::Subcommand;
use cortex_protocol::SessionId;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum SessionsCommand {
    /// Stored sessions, newest first.
    List {
        /// One JSON object per line.
        #[arg(long)]
        json: bool,
    },
    /// Render a session's timeline.
    Show {
        id: String,
        /// Every event as one JSON line.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(command: SessionsCommand) -> anyhow::Result<ExitCode> {
    let store = config::open_store().await?;
    match command {
        SessionsCommand::List { json } => {
            for s in store.list_sessions().await? {
                if json {
                    let line = serde_json::json!({
                        "id": s.id, "repository": s.repository, "mode": s.mode,
                        "model": s.model, "created_at": s.created_at,
                        "title": s.title, "events": s.last_seq,
                    });
                    println!("{line}");
                } else {
                    println!(
                        "{}  {}  {:<5}  {}  {}",
                        s.id,
                        s.created_at,
                        s.mode,
                        s.repository,
                        s.title.unwrap_or_default()
                    );
                }
            }
        }
        SessionsCommand::Show { id, json } => {
            let id = SessionId(id);
            store
                .get_session(&id)
                .await?
                .with_context(|| format!("no session `{id}`"))?;
            let mut renderer: Box<dyn Render> = if json {
                Box::new(JsonLines)
            } else {
                Box::new(Human::new())
            };
            for event in store.events(&id, 0).await? {
                renderer.event(&event);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

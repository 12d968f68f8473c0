//! `cortex rewind SESSION [TURN]`: go back to before a turn (the last by
//! default), its files, its conversation or both, through the session API
//! (in-process unless `--server`).

use crate::flags::ReopenFlags;
use crate::json_out;
use crate::session_args::api_error;
use clap::Args;
use cortex_api::Rewind;
use cortex_protocol::{RewindScope, SessionId};
use cortex_term::sanitize_line;
use std::process::ExitCode;

#[derive(Args)]
pub struct RewindArgs {
    /// The session to rewind.
    session_id: String,
    /// The turn to go back to before (its id, as `sessions show --json`
    /// gives it), or an `undo-…` checkpoint a rewind printed (files
    /// only). Default: the session's last turn.
    turn_id: Option<String>,
    /// Restore the workspace's files only.
    #[arg(long, conflicts_with_all = ["conversation", "both"])]
    files: bool,
    /// Rewind the conversation only (later requests are built without the
    /// rewound turns); the files stay as they are.
    #[arg(long, conflicts_with = "both")]
    conversation: bool,
    /// Both the files and the conversation (the default).
    #[arg(long)]
    both: bool,
    /// Overwrite files changed outside the session since it last ran
    /// (without it, they are listed and nothing is changed).
    #[arg(long)]
    force: bool,
    /// Only say what the rewind would change (and which files were changed
    /// outside the session); change nothing.
    #[arg(long)]
    dry_run: bool,
    /// The answer as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    reopen: ReopenFlags,
}

impl RewindArgs {
    fn scope(&self) -> RewindScope {
        if self.files {
            RewindScope::Files
        } else if self.conversation {
            RewindScope::Conversation
        } else {
            RewindScope::Both
        }
    }
}

/// Exit 0 when rewound; an error (exit 1) names what stopped it, such as
/// the files changed outside the session.
pub async fn run(args: RewindArgs) -> anyhow::Result<ExitCode> {
    let (client, local) = args
        .reopen
        .connect(&crate::guests::GuestChoice::Local)
        .await?;
    let id = SessionId(args.session_id.clone());
    let body = Rewind {
        turn_id: args.turn_id.clone(),
        scope: args.scope(),
        force: args.force,
        dry_run: args.dry_run,
    };
    let answer = client.rewind(&id, &body).await;
    if let Some(local) = local {
        let _ = client.close(&id).await;
        local.stop().await;
    }
    let done = answer.map_err(api_error)?;
    if args.json {
        println!("{}", json_out::to_line(&done)?);
        return Ok(ExitCode::SUCCESS);
    }
    let scope = match done.scope {
        RewindScope::Files => "files",
        RewindScope::Conversation => "conversation",
        RewindScope::Both => "files and conversation",
    };
    let verb = if done.dry_run {
        "would rewind"
    } else {
        "rewound"
    };
    println!(
        "{verb} {} to before {} ({scope}): {} created, {} changed, {} deleted",
        sanitize_line(id.as_str()),
        sanitize_line(&done.turn_id),
        done.created.len(),
        done.changed.len(),
        done.deleted.len()
    );
    for (mark, paths) in [
        ('+', &done.created),
        ('~', &done.changed),
        ('-', &done.deleted),
    ] {
        for path in paths {
            println!("  {mark} {}", sanitize_line(path));
        }
    }
    for path in &done.forced {
        println!(
            "  overwritten (changed outside the session): {}",
            sanitize_line(path)
        );
    }
    for path in &done.changed_outside {
        println!(
            "  changed outside the session (--force overwrites): {}",
            sanitize_line(path)
        );
    }
    if let Some(undo) = &done.undo {
        println!(
            "undo with: cortex rewind {} {} --files",
            sanitize_line(id.as_str()),
            sanitize_line(undo)
        );
    }
    Ok(ExitCode::SUCCESS)
}

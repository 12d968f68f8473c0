//! `cortex rules list|rm ID`: the approval rules of the caller's principal
//! (added by answering an approval with Always), through the session API.

use crate::flags::ServerFlag;
use crate::guests::GuestChoice;
use crate::session_args::api_error;
use clap::{Args, Subcommand};
use cortex_client::Client;
use cortex_term::sanitize_line;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum RulesCommand {
    /// List the rules, oldest first.
    #[command(after_help = "Example:\n  cortex rules list --json")]
    List {
        #[command(flatten)]
        target: RulesTarget,
        /// The rules as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Remove a rule: the next matching call asks again.
    #[command(after_help = "Example:\n  cortex rules rm 0193…")]
    Rm {
        #[command(flatten)]
        target: RulesTarget,
        /// The rule's id (see `cortex rules list`).
        id: String,
    },
}

#[derive(Args)]
pub struct RulesTarget {
    #[command(flatten)]
    server: ServerFlag,
}

pub async fn run(command: RulesCommand) -> anyhow::Result<ExitCode> {
    let target = match &command {
        RulesCommand::List { target, .. } | RulesCommand::Rm { target, .. } => target,
    };
    let (client, local) = target.server.connect(None, &GuestChoice::Local).await?;
    let result = act(&client, &command).await;
    if let Some(local) = local {
        local.stop().await;
    }
    result
}

async fn act(client: &Client, command: &RulesCommand) -> anyhow::Result<ExitCode> {
    match command {
        RulesCommand::List { json, .. } => {
            let rules = client.rules().await.map_err(api_error)?;
            if *json {
                // A rule quotes a command the model wrote: exact, but terminal-safe.
                println!("{}", crate::json_out::to_line(&rules)?);
            } else if rules.is_empty() {
                println!("no rules");
            } else {
                for rule in rules {
                    let scope = rule.repository.as_deref().unwrap_or("every repository");
                    println!(
                        "{}  {}  ({})",
                        sanitize_line(&rule.id),
                        sanitize_line(&rule.matches.to_string()),
                        sanitize_line(scope)
                    );
                }
            }
        }
        RulesCommand::Rm { id, .. } => {
            client.delete_rule(id).await.map_err(api_error)?;
            println!("removed rule {}", sanitize_line(id));
        }
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use cortex_protocol::{Rule, RuleMatch};

    /// A rule's words come from a command the model wrote: a C1 control or
    /// a bidi override in them reaches `--json` escaped, and parses back
    /// to the same words.
    #[test]
    fn json_rules_are_exact_and_terminal_safe() {
        let words = vec!["git\u{9b}31m".to_owned(), "st\u{202e}atus".to_owned()];
        let rules = vec![Rule {
            id: "r1".into(),
            repository: None,
            matches: RuleMatch::Bash {
                prefix: words.clone(),
            },
            created_at: "2026-12-07T00:00:00Z".into(),
        }];
        let line = crate::json_out::to_line(&rules).expect("json");
        let raw = |c: char| matches!(c, '\u{80}'..='\u{9f}' | '\u{202e}');
        assert!(!line.chars().any(raw), "{line}");
        assert!(
            line.contains("\\u009b") && line.contains("\\u202e"),
            "{line}"
        );
        let back: Vec<Rule> = serde_json::from_str(&line).expect("parses");
        assert_eq!(back[0].matches, RuleMatch::Bash { prefix: words });
    }
}

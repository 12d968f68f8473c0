//! `cortex hooks list|trust|untrust`: the hooks a session on a repository
//! would run, and the user's trust in the repository's hook files.
//!
//! The user's own hooks (`[hooks]` of `config.toml`, `hooks.json` beside it)
//! run on the host as the user. A repository's hook files
//! (`.cortex/hooks.json`, `.claude/settings.json`,
//! `.claude/settings.local.json`) run in the session's guest, and only once
//! trusted here at their exact content (`cortex_core::hooks::trust`): a
//! changed file is untrusted again. Trusting shows every hook first, and
//! asks on a terminal unless `--yes`. Everything read from a file passes
//! through the terminal sanitiser; `--json` is exact.

use crate::extensions_cmd::repository;
use clap::{Args, Subcommand};
use cortex_core::HookSpec;
use cortex_core::hooks::repository::{FoundHooks, RepositoryHookFile, find};
use cortex_core::hooks::trust::{TRUST_FILE, TrustedHooks};
use cortex_term::sanitize_line;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum HooksCommand {
    /// The user's hooks and the repository's hook files, whether each file
    /// is trusted, and the entries that are not run, with why.
    #[command(after_help = "Examples:\n  cortex hooks list\n  \
        cortex hooks list --repo ~/src/app --json")]
    List(HooksArgs),
    /// Trust the repository's hook files at their current content: their
    /// hooks then run in the session's guest (never on this machine).
    #[command(after_help = "Examples:\n  cortex hooks trust\n  \
        cortex hooks trust --repo ~/src/app --yes")]
    Trust(TrustArgs),
    /// Forget every trust in the repository's hook files.
    #[command(after_help = "Examples:\n  cortex hooks untrust --repo ~/src/app")]
    Untrust(HooksArgs),
}

#[derive(Args)]
pub struct HooksArgs {
    /// The repository (default: the current folder).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// One JSON object instead of the listing.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct TrustArgs {
    #[command(flatten)]
    common: HooksArgs,
    /// Do not ask (needed when the input is not a terminal).
    #[arg(long)]
    yes: bool,
}

fn trust_path() -> anyhow::Result<PathBuf> {
    Ok(crate::config::data_dir()?.join(TRUST_FILE))
}

pub fn run_hooks(command: HooksCommand) -> anyhow::Result<ExitCode> {
    match command {
        HooksCommand::List(args) => list(args),
        HooksCommand::Trust(args) => trust(args),
        HooksCommand::Untrust(args) => {
            let repo = repository(args.repo)?;
            let removed = TrustedHooks::revoke(&trust_path()?, &repo)?;
            if args.json {
                let value = serde_json::json!({ "untrusted": removed });
                println!("{}", crate::json_out::to_line(&value)?);
            } else {
                println!("{removed} trusted hook file(s) of this repository forgotten");
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn list(args: HooksArgs) -> anyhow::Result<ExitCode> {
    let repo = repository(args.repo)?;
    let config = crate::config::Config::load()?;
    let user = config.user_hooks()?;
    let found = find(&repo);
    let trusted = TrustedHooks::load(&trust_path()?)?;
    let is_trusted = |f: &RepositoryHookFile| trusted.is_trusted(&repo, &f.file, &f.sha256);
    if args.json {
        let files: Vec<_> = found
            .files
            .iter()
            .map(|f| serde_json::json!({ "file": f, "trusted": is_trusted(f) }))
            .collect();
        let value = serde_json::json!({
            "hooks": user.hooks,
            "skipped": user.skipped,
            "repository": {
                "files": files,
                "rejected": found.rejected,
            },
        });
        println!("{}", crate::json_out::to_line(&value)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", human_user(&user));
    print!("{}", human_repository(&found, is_trusted));
    Ok(ExitCode::SUCCESS)
}

fn trust(args: TrustArgs) -> anyhow::Result<ExitCode> {
    let repo = repository(args.common.repo)?;
    let found = find(&repo);
    if found.files.is_empty() {
        println!("this repository has no hook files to trust");
        return Ok(ExitCode::SUCCESS);
    }
    if !args.common.json {
        print!("{}", human_repository(&found, |_| false));
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            anyhow::bail!("the input is not a terminal: read the hooks above and pass --yes");
        }
        eprint!("Run these hooks in this repository's sessions (in the guest)? [y/N] ");
        let mut answer = String::new();
        std::io::stdin().read_line(&mut answer)?;
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            println!("nothing trusted");
            return Ok(ExitCode::FAILURE);
        }
    }
    let path = trust_path()?;
    for file in &found.files {
        TrustedHooks::trust(&path, &repo, &file.file, &file.sha256)?;
    }
    if args.common.json {
        let files: Vec<_> = found
            .files
            .iter()
            .map(|f| serde_json::json!({ "file": f.file, "sha256": f.sha256 }))
            .collect();
        let value = serde_json::json!({ "trusted": files });
        println!("{}", crate::json_out::to_line(&value)?);
    } else {
        println!(
            "trusted {} file(s); a change to one makes it untrusted again",
            found.files.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// One hook's lines: event, matcher, command, then where it is from and
/// where it runs.
fn hook_lines(hook: &HookSpec, whose: &str, runs: &str) -> String {
    let matcher = match (&hook.matcher, hook.event.has_tool()) {
        (Some(m), _) if !m.trim().is_empty() => format!(" [{}]", sanitize_line(m)),
        (_, true) => " [every tool]".to_owned(),
        _ => String::new(),
    };
    let timeout = hook
        .timeout_ms
        .unwrap_or(cortex_core::hooks::DEFAULT_TIMEOUT.as_millis() as u64);
    format!(
        "{}{matcher}  {}\n    {whose} {}; timeout {timeout} ms; {runs}\n",
        hook.event,
        sanitize_line(&hook.command),
        sanitize_line(&hook.source),
    )
}

/// The human listing of the user's hooks.
fn human_user(found: &crate::config::UserHooks) -> String {
    let mut out = String::new();
    if found.hooks.is_empty() {
        out.push_str("no hooks of your own\n");
    }
    for hook in &found.hooks {
        out.push_str(&hook_lines(hook, "user", "runs on this machine"));
    }
    not_run(&mut out, &found.skipped);
    out
}

/// The human listing of the repository's hook files, each trusted or not.
fn human_repository(found: &FoundHooks, trusted: impl Fn(&RepositoryHookFile) -> bool) -> String {
    let mut out = String::new();
    if found.files.is_empty() && found.rejected.is_empty() {
        out.push_str("no hook files in the repository\n");
    }
    for file in &found.files {
        let state = if trusted(file) {
            "trusted: its hooks run in the guest"
        } else {
            "not trusted: its hooks do not run (`cortex hooks trust`)"
        };
        out.push_str(&format!(
            "{} (sha256 {}): {state}\n",
            sanitize_line(&file.file),
            &file.sha256[..file.sha256.len().min(12)]
        ));
        let runs = if trusted(file) {
            "runs in the guest"
        } else {
            "does not run"
        };
        for hook in &file.hooks {
            out.push_str(&indent(&hook_lines(hook, "repository", runs)));
        }
        not_run(&mut out, &file.skipped);
    }
    for (file, reason) in &found.rejected {
        out.push_str(&format!(
            "{}: not read: {}\n",
            sanitize_line(file),
            sanitize_line(reason)
        ));
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

fn not_run(out: &mut String, skipped: &[String]) {
    if !skipped.is_empty() {
        out.push_str(&format!("not run ({}):\n", skipped.len()));
        for line in skipped {
            out.push_str(&format!("  {}\n", sanitize_line(line)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listings_are_sanitised_and_say_where_hooks_run() {
        let hook = HookSpec {
            origin: cortex_core::HookOrigin::User,
            event: cortex_core::HookEvent::PreToolUse,
            matcher: Some("Bash\x1b[2J".into()),
            command: "/home/me/guard\x1b]0;pwned\x07".into(),
            timeout_ms: Some(500),
            source: "/home/me/.config/cortex/hooks.json".into(),
            claude: true,
        };
        let user = crate::config::UserHooks {
            hooks: vec![hook.clone()],
            skipped: vec!["Notification: an event Cortex does not run yet\x1b[31m".into()],
        };
        let out = human_user(&user);
        assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
        assert!(out.starts_with("PreToolUse [Bash"), "{out}");
        assert!(
            out.contains("timeout 500 ms; runs on this machine"),
            "{out}"
        );
        assert!(out.contains("not run (1):\n  Notification"), "{out}");
        let found = FoundHooks {
            files: vec![RepositoryHookFile {
                file: ".cortex/hooks.json\x1b[1m".into(),
                sha256: "ab".repeat(32),
                hooks: vec![hook],
                skipped: Vec::new(),
            }],
            rejected: vec![(".claude/settings.json".into(), "a symbolic link\x07".into())],
        };
        let untrusted = human_repository(&found, |_| false);
        assert!(!untrusted.contains('\x1b') && !untrusted.contains('\x07'));
        assert!(untrusted.contains("not trusted"), "{untrusted}");
        assert!(untrusted.contains("does not run"), "{untrusted}");
        assert!(untrusted.contains("settings.json: not read: a symbolic link"));
        let trusted = human_repository(&found, |_| true);
        assert!(trusted.contains("runs in the guest"), "{trusted}");
    }
}

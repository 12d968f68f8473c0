//! `cortex doctor` (and the TUI's `/doctor`): one screen that says whether
//! this machine can run a session, and what to do where it cannot.
//!
//! Each check is data (a [`Check`] with a [`Status`]), so the CLI's human
//! lines, its `--json` document and the TUI's notices all render the same
//! list. The checks act rather than guess where acting is cheap and leaves
//! nothing behind: the local guest is really started (in a scratch folder,
//! with guest homes of its own) and asked what isolation it runs in; the
//! store is opened as `cortex sessions list` opens it; the configured MCP
//! servers are started as `cortex mcp list` starts them (in the scratch
//! folder unless `--repo` names the repository). The model file is
//! checked by its size and GGUF header, not hashed: hashing a 1 GB file on
//! every run would make the doctor slow to call.
//!
//! The exit code is 1 when a check a session needs fails ([`Check::required`]);
//! warnings, and failures a session survives (an MCP server), leave it 0.
//!
//! Files: `isolation.rs` (the trial guest and its layers), `mcp.rs` (the
//! MCP servers), `model.rs` (the model and the providers' keys), `host.rs`
//! (store, terminal, versions).

mod host;
mod isolation;
mod mcp;
mod model;

use crate::config::{Config, config_path};
use clap::Args;
use cortex_term::sanitize_line;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct DoctorArgs {
    /// The repository the configured MCP servers start in, as `cortex mcp
    /// list --repo` (default: an empty scratch folder, so that the check
    /// leaves nothing in the current one).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// One JSON document: `{"checks": [...], "ok": bool}`.
    #[arg(long)]
    json: bool,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn mark(self) -> &'static str {
        match self {
            Status::Ok => "✓",
            Status::Warn => "!",
            Status::Fail => "✗",
        }
    }
}

/// One line of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// Short and stable (`isolation`, `model`, `mcp NAME`): scripts key on it.
    pub name: String,
    pub status: Status,
    /// What was found (never a secret's value).
    pub detail: String,
    /// What to do about a warning or a failure.
    pub fix: Option<String>,
    /// A session cannot run while this fails: the exit code is 1.
    pub required: bool,
}

impl Check {
    pub fn ok(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            status: Status::Ok,
            detail: detail.into(),
            fix: None,
            required: false,
        }
    }

    pub fn warn(name: impl Into<String>, detail: impl Into<String>, fix: Option<String>) -> Check {
        Check {
            status: Status::Warn,
            fix,
            ..Check::ok(name, detail)
        }
    }

    pub fn fail(
        name: impl Into<String>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            status: Status::Fail,
            fix: Some(fix.into()),
            ..Check::ok(name, detail)
        }
    }

    /// A session needs this check to pass.
    pub fn required(self) -> Check {
        Check {
            required: true,
            ..self
        }
    }

    /// One line for a terminal: everything that came from outside (paths,
    /// errors, server names) through the sanitiser, line breaks folded.
    fn human(&self, width: usize) -> String {
        let fold = |text: &str| {
            let joined = text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" · ");
            sanitize_line(&joined).into_owned()
        };
        let mut line = format!(
            "{} {:<width$}  {}",
            self.status.mark(),
            fold(&self.name),
            fold(&self.detail)
        );
        if let Some(fix) = &self.fix {
            line.push_str(" — fix: ");
            line.push_str(&fold(fix));
        }
        line
    }
}

/// Every check, in the order the screen lists them.
#[derive(Debug, Serialize)]
pub struct Report {
    pub checks: Vec<Check>,
    /// No required check failed.
    pub ok: bool,
}

impl Report {
    fn new(checks: Vec<Check>) -> Report {
        let ok = !checks
            .iter()
            .any(|c| c.required && c.status == Status::Fail);
        Report { checks, ok }
    }

    /// The human screen, one line per check and a verdict.
    pub fn human(&self) -> Vec<String> {
        let width = self
            .checks
            .iter()
            .map(|c| c.name.chars().count())
            .max()
            .unwrap_or(0);
        let mut lines: Vec<String> = self.checks.iter().map(|c| c.human(width)).collect();
        lines.push(self.verdict());
        lines
    }

    fn verdict(&self) -> String {
        let count = |status| self.checks.iter().filter(|c| c.status == status).count();
        let (warnings, failures) = (count(Status::Warn), count(Status::Fail));
        if !self.ok {
            let blocking: Vec<&str> = self
                .checks
                .iter()
                .filter(|c| c.required && c.status == Status::Fail)
                .map(|c| c.name.as_str())
                .collect();
            return format!(
                "not ready: a session needs {} fixed first",
                sanitize_line(&blocking.join(", "))
            );
        }
        match (failures, warnings) {
            (0, 0) => "ready: everything a session needs is here".to_owned(),
            _ => format!(
                "ready: nothing a session needs is missing ({failures} failure(s) a session \
                 survives, {warnings} warning(s))"
            ),
        }
    }
}

/// Run every check. `repo`: where the MCP servers start.
pub async fn report(repo: Option<PathBuf>) -> Report {
    let mut checks = Vec::new();
    let config = match Config::load() {
        Ok(config) => {
            let shown = config_path().map_or_else(|_| "?".to_owned(), |p| p.display().to_string());
            let state = if std::path::Path::new(&shown).is_file() {
                "read"
            } else {
                "none (defaults)"
            };
            checks.push(Check::ok("config", format!("{shown}: {state}")));
            config
        }
        Err(e) => {
            checks.push(
                Check::fail(
                    "config",
                    format!("{e:#}"),
                    "fix or move the file; every command refuses it",
                )
                .required(),
            );
            Config::default()
        }
    };
    let trial = isolation::trial(&config).await;
    checks.extend(trial.checks);
    checks.extend(model::model(&config));
    checks.extend(model::providers(&config));
    checks.push(host::store(&config).await);
    checks.extend(mcp::check(&config, trial.guests, repo).await);
    checks.push(host::terminal());
    checks.push(host::versions());
    Report::new(checks)
}

/// `cortex doctor [--json]`.
pub async fn run(args: DoctorArgs) -> anyhow::Result<ExitCode> {
    let report = report(args.repo).await;
    if args.json {
        // Details quote what servers and the guest printed: exact, but
        // terminal-safe.
        println!("{}", crate::json_out::to_line(&report)?);
    } else {
        for line in report.human() {
            println!("{line}");
        }
    }
    Ok(if report.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// `/doctor` in the TUI: the report as notices, for the shown session's
/// repository (its MCP servers start there). The TUI cleans the text.
pub async fn tui_lines(repository: String) -> Vec<cortex_tui::app::command::ReportLine> {
    use cortex_tui::app::command::ReportLine;
    use cortex_tui::state::Level;
    let repo = Some(PathBuf::from(repository)).filter(|p| p.is_dir());
    let report = report(repo).await;
    let mut lines: Vec<ReportLine> = report
        .checks
        .iter()
        .map(|check| {
            let mut text = format!("{}  {}", check.name, check.detail);
            if let Some(fix) = &check.fix {
                text.push_str(" — fix: ");
                text.push_str(fix);
            }
            let level = match check.status {
                Status::Ok => Level::Info,
                Status::Warn => Level::Warning,
                Status::Fail => Level::Error,
            };
            ReportLine { level, text }
        })
        .collect();
    let level = if report.ok { Level::Info } else { Level::Error };
    lines.push(ReportLine {
        level,
        text: format!("doctor: {}", report.verdict()),
    });
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_required_failure_makes_the_report_fail() {
        let survivable = Report::new(vec![
            Check::ok("a", "fine"),
            Check::warn("b", "meh", None),
            Check::fail("mcp x", "no such command", "fix the command"),
        ]);
        assert!(survivable.ok);
        let blocking = Report::new(vec![Check::fail("model", "missing", "fetch it").required()]);
        assert!(!blocking.ok);
        assert_eq!(
            blocking.verdict(),
            "not ready: a session needs model fixed first"
        );
    }

    #[test]
    fn human_lines_are_sanitised_and_carry_the_fix() {
        let check = Check::fail("mcp \u{1b}[31mx", "line one\nline two", "do\u{7}this");
        let line = check.human(4);
        assert!(line.starts_with("✗ mcp ^[[31mx"), "{line}");
        assert!(line.contains("line one · line two"), "{line}");
        assert!(line.ends_with("— fix: do^Gthis"), "{line}");
        assert!(!line.contains('\u{1b}'));
    }

    #[test]
    fn json_has_the_documented_shape() {
        let report = Report::new(vec![Check::warn("terminal", "not a terminal", None)]);
        let value = serde_json::to_value(&report).expect("serialises");
        assert_eq!(value["ok"], true);
        let check = &value["checks"][0];
        assert_eq!(check["name"], "terminal");
        assert_eq!(check["status"], "warn");
        assert_eq!(check["detail"], "not a terminal");
        assert!(check["fix"].is_null());
    }
}

//! `cortex completions SHELL` and `cortex man`: shell completion scripts and
//! the man page, generated from the same clap definitions that parse the
//! command line, so they cannot drift from it.

use clap::{Command, CommandFactory};
use clap_complete::Shell;
use std::io::Write;
use std::process::ExitCode;

/// Write the completion script for `shell` to stdout.
pub fn completions<C: CommandFactory>(shell: Shell) -> anyhow::Result<ExitCode> {
    let mut command = C::command();
    let name = command.get_name().to_owned();
    let mut out = std::io::stdout().lock();
    clap_complete::generate(shell, &mut command, name, &mut out);
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// Write the man page (roff) to stdout: `cortex(1)` with one section per
/// subcommand, each with its own options and examples.
pub fn man<C: CommandFactory>() -> anyhow::Result<ExitCode> {
    let command = C::command();
    let mut out = std::io::stdout().lock();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;
    for sub in visible_subcommands(&command) {
        render_subcommand(&command, sub, &mut out)?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn visible_subcommands(command: &Command) -> impl Iterator<Item = &Command> {
    command.get_subcommands().filter(|sub| !sub.is_hide_set())
}

/// A subcommand's page, appended to the main one under its own heading
/// (`cortex-exec`, `cortex-sessions-show`, …).
fn render_subcommand(parent: &Command, sub: &Command, out: &mut impl Write) -> anyhow::Result<()> {
    let name = format!("{}-{}", parent.get_name(), sub.get_name());
    let page = sub.clone().name(name);
    clap_mangen::Man::new(page.clone())
        .title(page.get_name().to_uppercase())
        .render(out)?;
    for nested in visible_subcommands(sub) {
        render_subcommand(&page, nested, out)?;
    }
    Ok(())
}

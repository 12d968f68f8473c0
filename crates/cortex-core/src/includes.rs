//! A custom command's `@path` includes, read in the guest.
//!
//! `commands::expand` leaves the `@path` words in the message and names the
//! files; once the guest is attached the session reads each with the
//! guest's `read_file`, like any workspace file: a remote guest's workspace
//! (or an isolated copy) is the one read, and the guest's confinement
//! applies (a link that leads out of the workspace is refused, nothing is
//! read on the host). The files are recorded as `turn.context`, which the
//! history puts before the message, so clients show the command's text as
//! written and the model gets both. A file that cannot be included is named
//! with the reason.

use crate::commands::{MAX_INCLUDE_BYTES, MAX_INCLUDES};
use crate::instructions::{shown_up_to, unnumbered};
use crate::{CoreError, Session};
use cortex_protocol::{EventKind, ReadFileArgs, ToolArgs, TurnId};
use std::path::Path;
use tokio_util::sync::CancellationToken;

/// Lines asked for per read: a page stays below `read_file`'s output cap.
const PAGE_LINES: u64 = 400;
/// Reads of one file, at most (the byte cap ends it first for text).
const MAX_PAGES: usize = 16;
/// What the included files' block starts with.
const TITLE: &str = "The files the command includes (`@path`), read from the workspace:";

impl Session {
    /// Reads the turn's `@path` includes in the guest and records them as
    /// `turn.context`; nothing when the turn has none. Stop skips them.
    pub(crate) async fn add_includes(
        &mut self,
        turn: &TurnId,
        cancel: &CancellationToken,
    ) -> Result<(), CoreError> {
        let paths = std::mem::take(&mut self.turn_includes);
        if paths.is_empty() {
            return Ok(());
        }
        let mut parts = Vec::with_capacity(paths.len());
        for (i, path) in paths.iter().enumerate() {
            if cancel.is_cancelled() {
                return Ok(());
            }
            let part = if i >= MAX_INCLUDES {
                format!("@{path} [not included: a command includes at most {MAX_INCLUDES} files]")
            } else {
                render(path, self.read_include(path, cancel).await)
            };
            parts.push(part);
        }
        let text = format!("{TITLE}\n\n{}", parts.join("\n\n"));
        self.record(Some(turn), EventKind::TurnContext { text })
            .await?;
        Ok(())
    }

    /// An included file's text, at most [`MAX_INCLUDE_BYTES`], and whether
    /// it was cut; or why it cannot be included.
    async fn read_include(
        &self,
        path: &str,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), String> {
        if crate::copy::plain_components(Path::new(path)).is_none() {
            return Err("only a path inside the workspace, without `..`, can be included".into());
        }
        let mut text = String::new();
        let mut offset = 1;
        for _ in 0..MAX_PAGES {
            let args = ToolArgs::ReadFile(ReadFileArgs {
                path: path.to_owned(),
                offset: Some(offset),
                limit: Some(PAGE_LINES),
            });
            let outcome = self
                .harness_outcome(args, cancel)
                .await
                .ok_or("the guest could not read it")?;
            if !outcome.is_ok() {
                let reason = outcome.output.lines().next().unwrap_or("unreadable");
                return Err(reason.to_owned());
            }
            text.push_str(&unnumbered(&outcome.output));
            if text.len() > MAX_INCLUDE_BYTES as usize {
                let keep = (0..=MAX_INCLUDE_BYTES as usize)
                    .rev()
                    .find(|&i| text.is_char_boundary(i))
                    .unwrap_or(0);
                text.truncate(keep);
                return Ok((text, true));
            }
            match shown_up_to(&outcome.output) {
                Some((last, total)) if last < total => offset = last + 1,
                _ => return Ok((text, false)),
            }
        }
        Ok((text, true))
    }
}

/// One included file as the model is given it: fenced under its path, or
/// the `@path` word with why it was not included.
fn render(path: &str, read: Result<(String, bool), String>) -> String {
    match read {
        Ok((text, cut)) => {
            let fence = if text.contains("```") { "````" } else { "```" };
            let cut = if cut {
                format!(
                    "\n[cut: the first {} bytes shown; read the rest with read_file]",
                    text.len()
                )
            } else {
                String::new()
            };
            format!(
                "`{path}`:\n{fence}\n{}\n{fence}{cut}",
                text.trim_end_matches('\n')
            )
        }
        Err(reason) => format!("@{path} [not included: {reason}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_fenced_under_its_path_and_a_refusal_says_why() {
        assert_eq!(
            render("a.py", Ok(("print(1)\n".into(), false))),
            "`a.py`:\n```\nprint(1)\n```"
        );
        assert_eq!(
            render("a.md", Ok(("```x```".into(), true))),
            "`a.md`:\n````\n```x```\n````\n[cut: the first 7 bytes shown; read the rest with read_file]"
        );
        assert_eq!(
            render("pw.txt", Err("outside".into())),
            "@pw.txt [not included: outside]"
        );
    }
}

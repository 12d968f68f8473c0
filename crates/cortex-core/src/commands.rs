//! Custom commands: Markdown prompts the user runs by name (`/review src/a.py`
//! in the TUI, `cortex exec --command review src/a.py`, the API's
//! `POST /v1/sessions/{id}/commands`, an ACP `/review`).
//!
//! Found in the user's `$XDG_CONFIG_HOME/cortex/commands/`, then the
//! repository's `.cortex/commands/` and `.claude/commands/` (Claude Code's,
//! read as they are, never written); the first of a name wins and the others
//! are listed as rejected, so a repository cannot replace a command the user
//! wrote. A file's name without `.md` is the command's name, sub-folders
//! giving `ns:name`. Its optional front matter holds `description`,
//! `argument-hint`, `mode` and `model`.
//!
//! A command is a prompt and nothing more: it becomes the text of a user
//! message and runs with the session's mode, sandbox, approvals and model.
//! `mode` and `model` are listed but never applied, not even a stricter
//! mode: changing the mode is the user's act (`/mode`), and a mode a command
//! switched to would outlive it. `$ARGUMENTS` is the whole argument text,
//! `$1`, `$2`… its words (quotes group them); a body that uses neither gets
//! the arguments after it. `@path` (a word with a `.` or `/` after an `@`
//! at a word's start) includes that workspace file: the message keeps the
//! word, and the session reads the file in its guest once attached, like
//! any workspace file, and gives it with the message (`includes.rs`).
//!
//! Repository files are untrusted: sizes and counts are capped, names are
//! validated, and every file that cannot be used is listed as rejected with
//! the reason. Nothing here sanitises text: clients do, before a terminal.

use crate::UserTurn;
use crate::extensions::{self, Kind, Roots, front_matter, one_line};
use cortex_protocol::{CommandInfo, ExtensionScope, RejectedFile};
use rustix::fd::{AsFd, BorrowedFd};

/// A command file's largest size.
pub const MAX_COMMAND_BYTES: u64 = 64 * 1024;
/// Commands kept from one folder tree, at most.
const MAX_COMMANDS: usize = 256;
/// Sub-folder levels read (`a:b:c:name`).
const MAX_DEPTH: usize = 3;
/// A name component's longest length.
const MAX_NAME: usize = 64;
/// A description's or hint's longest length, in bytes.
const MAX_FIELD: usize = 1024;
/// An included file's bytes shown, at most; its cut is stated.
pub const MAX_INCLUDE_BYTES: u64 = 64 * 1024;
/// Files one command includes, at most.
pub const MAX_INCLUDES: usize = 16;
/// The prompt's largest size before its includes: a body that repeats
/// `$ARGUMENTS` thousands of times must not multiply a long argument text
/// into gigabytes.
pub const MAX_PROMPT_BYTES: usize = 256 * 1024;

/// One command: what listings show and the prompt it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// Name, description, where it was found.
    pub info: CommandInfo,
    /// The prompt, front matter removed.
    pub body: String,
}

/// What was found: the usable commands in name order and the rejected files.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandCatalog {
    /// The commands, sorted by name.
    pub commands: Vec<Command>,
    /// Files that were found and not used, with why.
    pub rejected: Vec<RejectedFile>,
}

impl CommandCatalog {
    /// The command named `name` (without a leading `/`).
    pub fn find(&self, name: &str) -> Option<&Command> {
        let name = name.strip_prefix('/').unwrap_or(name);
        self.commands.iter().find(|c| c.info.name == name)
    }

    /// What listings show of each command.
    pub fn infos(&self) -> Vec<CommandInfo> {
        self.commands.iter().map(|c| c.info.clone()).collect()
    }
}

/// Why a command cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CommandError {
    /// No command has this name; a rejected file of this name says why.
    #[error("no command named `{name}`{}", .rejected.as_deref().map(|r| format!(" ({r})")).unwrap_or_default())]
    Unknown {
        /// The name asked for.
        name: String,
        /// Why a file of that name was rejected, when one was.
        rejected: Option<String>,
    },
}

/// Every command under `roots`, read on the host (blocking; see
/// `extensions.rs` for how repository files are read).
pub fn discover_commands(roots: &Roots) -> CommandCatalog {
    let mut catalog = CommandCatalog::default();
    let repository = [[".cortex", "commands"], [".claude", "commands"]];
    extensions::each_folder(roots, "commands", &repository, |dir, scope, shown| {
        scan(dir, scope, shown, &mut catalog)
    });
    catalog
        .commands
        .sort_by(|a, b| a.info.name.cmp(&b.info.name));
    catalog
}

/// [`discover_commands`] off the async threads.
pub async fn discover_commands_async(roots: Roots) -> CommandCatalog {
    tokio::task::spawn_blocking(move || discover_commands(&roots))
        .await
        .unwrap_or_default()
}

/// One folder tree of commands.
fn scan(dir: BorrowedFd<'_>, scope: ExtensionScope, shown: &str, catalog: &mut CommandCatalog) {
    let mut found = 0;
    walk(dir, scope, shown, &[], &mut found, catalog);
}

fn walk(
    dir: BorrowedFd<'_>,
    scope: ExtensionScope,
    shown: &str,
    namespace: &[String],
    found: &mut usize,
    catalog: &mut CommandCatalog,
) {
    let reject = |catalog: &mut CommandCatalog, path: String, reason: &str| {
        catalog.rejected.push(RejectedFile {
            scope,
            path,
            reason: reason.to_owned(),
        });
    };
    let entries = extensions::entries_noting_cut(dir, scope, shown, &mut catalog.rejected);
    for entry in entries {
        let name = match entry.name {
            Ok(name) => name,
            Err(lossy) => {
                reject(catalog, format!("{shown}/{lossy}"), "the name is not UTF-8");
                continue;
            }
        };
        let path = format!("{shown}/{name}");
        match entry.kind {
            Kind::Folder => {
                if namespace.len() >= MAX_DEPTH {
                    reject(
                        catalog,
                        path,
                        "nested too deep: sub-folders are read 3 levels down",
                    );
                } else if let Err(reason) = valid_component(&name) {
                    reject(catalog, path, &reason);
                } else if let Some(sub) = extensions::open_child(dir, &name) {
                    let mut deeper = namespace.to_vec();
                    deeper.push(name);
                    walk(sub.as_fd(), scope, &path, &deeper, found, catalog);
                }
            }
            _ if !name.ends_with(".md") => {}
            Kind::Link => reject(catalog, path, "a symbolic link: not followed"),
            Kind::Special => reject(catalog, path, "not a regular file"),
            Kind::File => {
                if *found >= MAX_COMMANDS {
                    reject(
                        catalog,
                        path,
                        &format!("more than {MAX_COMMANDS} commands here"),
                    );
                    continue;
                }
                match load(dir, &name, namespace, scope, &path) {
                    Ok(command) => {
                        if let Some(first) = catalog.find(&command.info.name) {
                            let reason = format!("shadowed by {}", first.info.path);
                            reject(catalog, path, &reason);
                        } else {
                            *found += 1;
                            catalog.commands.push(command);
                        }
                    }
                    Err(reason) => reject(catalog, path, &reason),
                }
            }
        }
    }
}

/// Whether `part` may be part of a command's name: letters, digits, `_`,
/// `-` and `.`, starting with a letter or digit.
fn valid_component(part: &str) -> Result<(), String> {
    let mut chars = part.chars();
    let starts = chars.next().is_some_and(|c| c.is_ascii_alphanumeric());
    let rest = chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
    if !starts || !rest || part.len() > MAX_NAME {
        return Err(format!(
            "invalid name: use letters, digits, `_`, `-` and `.`, starting with a letter or \
             digit, at most {MAX_NAME} characters"
        ));
    }
    Ok(())
}

/// One command file.
fn load(
    dir: BorrowedFd<'_>,
    file: &str,
    namespace: &[String],
    scope: ExtensionScope,
    path: &str,
) -> Result<Command, String> {
    let stem = file.strip_suffix(".md").unwrap_or(file);
    valid_component(stem)?;
    let text = extensions::read_text(dir, file, MAX_COMMAND_BYTES)?;
    let (fields, body) = front_matter(&text)?;
    let body = body.trim();
    if body.is_empty() {
        return Err("the prompt is empty".to_owned());
    }
    let field = |key: &str| -> Result<Option<String>, String> {
        match fields.get(key).map(one_line) {
            Some(v) if v.len() > MAX_FIELD => Err(format!(
                "`{key}` is {} bytes; the limit is {MAX_FIELD}",
                v.len()
            )),
            v => Ok(v),
        }
    };
    let description = match field("description")? {
        Some(d) => d,
        None => {
            let first = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let first = one_line(first.trim_start_matches('#'));
            first.chars().take(120).collect()
        }
    };
    let mut name = namespace.to_vec();
    name.push(stem.to_owned());
    Ok(Command {
        info: CommandInfo {
            name: name.join(":"),
            description,
            argument_hint: field("argument-hint")?,
            mode: field("mode")?,
            model: field("model")?,
            scope,
            path: path.to_owned(),
        },
        body: body.to_owned(),
    })
}

/// The turn `command` runs with `arguments`: its message with the
/// arguments substituted, and the `@path` words of that message as the
/// files to include. Nothing is read here: the session reads them in its
/// guest once attached (`includes.rs`), so a remote guest's workspace is the
/// one read and the guest's own confinement applies.
pub fn expand(command: &Command, arguments: &str) -> UserTurn {
    let message = substitute(&command.body, arguments);
    let includes = include_paths(&message);
    UserTurn {
        message,
        images: Vec::new(),
        includes,
    }
}

/// [`discover_commands`], [`CommandCatalog::find`] and [`expand`] off the
/// async threads: the turn a command named `name` runs as.
pub async fn prompt_for(
    roots: Roots,
    name: String,
    arguments: String,
) -> Result<UserTurn, CommandError> {
    tokio::task::spawn_blocking(move || {
        let catalog = discover_commands(&roots);
        let name = name.strip_prefix('/').unwrap_or(&name);
        match catalog.find(name) {
            Some(command) => Ok(expand(command, &arguments)),
            None => Err(CommandError::Unknown {
                name: name.to_owned(),
                rejected: rejected_reason(&catalog, name),
            }),
        }
    })
    .await
    .unwrap_or_else(|_| {
        Err(CommandError::Unknown {
            name: String::new(),
            rejected: Some("the listing failed".to_owned()),
        })
    })
}

/// Why a file that would be command `name` was rejected.
fn rejected_reason(catalog: &CommandCatalog, name: &str) -> Option<String> {
    let file = format!("/{}.md", name.replace(':', "/"));
    catalog
        .rejected
        .iter()
        .find(|r| r.path.ends_with(&file))
        .map(|r| format!("{}: {}", r.path, r.reason))
}

/// The argument text's words: split at blanks, `"…"` and `'…'` keeping
/// blanks inside one word.
fn words(arguments: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote: Option<char> = None;
    let mut in_word = false;
    for c in arguments.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => current.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            None => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(current);
    }
    words
}

/// `$ARGUMENTS` and `$1`… replaced (a missing word is empty); a body that
/// uses neither gets the arguments after it.
fn substitute(body: &str, arguments: &str) -> String {
    let arguments = arguments.trim();
    let words = words(arguments);
    let mut out = String::with_capacity(body.len() + arguments.len());
    let mut used = false;
    let mut rest = body;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        if let Some(tail) = after.strip_prefix("ARGUMENTS") {
            out.push_str(arguments);
            used = true;
            rest = tail;
            continue;
        }
        let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        match after[..digits].parse::<usize>() {
            Ok(n) if n >= 1 => {
                out.push_str(words.get(n - 1).map(String::as_str).unwrap_or(""));
                used = true;
                rest = &after[digits..];
            }
            _ => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    if !used && !arguments.is_empty() {
        out.push_str("\n\nARGUMENTS: ");
        out.push_str(arguments);
    }
    if out.len() > MAX_PROMPT_BYTES {
        let keep = (0..=MAX_PROMPT_BYTES)
            .rev()
            .find(|&i| out.is_char_boundary(i))
            .unwrap_or(0);
        let total = out.len();
        out.truncate(keep);
        out.push_str(&format!(
            "\n[cut: the command's text with its arguments is {total} bytes; the limit is {} KiB]",
            MAX_PROMPT_BYTES / 1024
        ));
    }
    out
}

/// The `@path` words of `text`, in order, each once: an `@` at a word's
/// start (or after an opening bracket or quote) followed by a path holding a
/// `.` or `/`; a trailing full stop ends the sentence, not the path.
pub fn include_paths(text: &str) -> Vec<String> {
    let mut paths: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find('@') {
        let starts_word = at == 0
            || rest[..at].ends_with(char::is_whitespace)
            || rest[..at].ends_with(['(', '[', '"', '\'', '`']);
        let after = &rest[at + 1..];
        let len = after
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '"' | '\'' | '`' | ','))
            .unwrap_or(after.len());
        let path = after[..len].trim_end_matches(['.', ':', ';', '!', '?']);
        rest = after;
        if starts_word && path.contains(['.', '/']) && !paths.iter().any(|p| p == path) {
            paths.push(path.to_owned());
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn arguments_are_substituted_or_appended() {
        assert_eq!(
            substitute(
                "Review $1 for $2; all: $ARGUMENTS. Cost $5 is $",
                "a.py 'the tests'"
            ),
            "Review a.py for the tests; all: a.py 'the tests'. Cost  is $"
        );
        assert_eq!(
            substitute("Fix it", "now please"),
            "Fix it\n\nARGUMENTS: now please"
        );
        assert_eq!(substitute("Fix it", "  "), "Fix it");
        assert_eq!(
            substitute("$0 and $ARG", "x"),
            "$0 and $ARG\n\nARGUMENTS: x"
        );
        // A body repeating the arguments cannot blow them up without bound.
        let blown = substitute(&"$ARGUMENTS".repeat(1000), &"x".repeat(1024));
        assert!(blown.len() < MAX_PROMPT_BYTES + 100, "{}", blown.len());
        assert!(
            blown.ends_with("bytes; the limit is 256 KiB]"),
            "{}",
            &blown[blown.len() - 80..]
        );
    }

    #[test]
    fn include_paths_are_the_at_words_with_a_dot_or_slash() {
        assert_eq!(
            include_paths(
                "See @src/a.py. Not me@x.y, not @decorator; (@b.txt) @pw.txt, \
                 @../x.txt @src/a.py @"
            ),
            ["src/a.py", "b.txt", "pw.txt", "../x.txt"]
        );
        let command = Command {
            info: CommandInfo {
                name: "review".into(),
                description: "Review".into(),
                argument_hint: None,
                mode: None,
                model: None,
                scope: ExtensionScope::User,
                path: "review.md".into(),
            },
            body: "Review @$1 for $2.".into(),
        };
        let turn = expand(&command, "a.txt style");
        assert_eq!(turn.message, "Review @a.txt for style.");
        assert_eq!(turn.includes, ["a.txt"]);
    }

    #[test]
    fn discovery_names_ranks_and_rejects() {
        let ws = tempfile::tempdir().expect("tempdir");
        let config = tempfile::tempdir().expect("tempdir");
        let write = |path: &Path, text: &str| {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, text).expect("write");
        };
        let cmds = ws.path().join(".cortex/commands");
        write(
            &cmds.join("review.md"),
            "---\ndescription: Review a file\nargument-hint: <file>\nmode: agent\n---\nReview $1\n",
        );
        write(
            &cmds.join("git/commit.md"),
            "# Commit the work\nWrite a message.\n",
        );
        write(&cmds.join("bad name.md"), "x");
        write(&cmds.join("empty.md"), "---\ndescription: nothing\n---\n");
        write(
            &cmds.join("huge.md"),
            &"x".repeat(MAX_COMMAND_BYTES as usize + 1),
        );
        write(&cmds.join("notes.txt"), "ignored: not Markdown");
        std::os::unix::fs::symlink("/etc/passwd", cmds.join("pw.md")).expect("link");
        write(
            &ws.path().join(".claude/commands/review.md"),
            "Claude's review",
        );
        write(&ws.path().join(".claude/commands/tidy.md"), "Tidy up");
        write(&config.path().join("commands/tidy.md"), "My own tidy");
        let catalog = discover_commands(&Roots {
            workspace: Some(ws.path().to_path_buf()),
            config: Some(config.path().to_path_buf()),
            ..Roots::default()
        });
        let names: Vec<_> = catalog
            .commands
            .iter()
            .map(|c| {
                (
                    c.info.name.as_str(),
                    c.info.description.as_str(),
                    c.info.scope,
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                ("git:commit", "Commit the work", ExtensionScope::Repository),
                ("review", "Review a file", ExtensionScope::Repository),
                ("tidy", "My own tidy", ExtensionScope::User),
            ]
        );
        let review = catalog.find("/review").expect("review");
        assert_eq!(review.info.argument_hint.as_deref(), Some("<file>"));
        assert_eq!(review.info.mode.as_deref(), Some("agent"));
        assert_eq!(review.info.path, ".cortex/commands/review.md");
        let rejected: Vec<_> = catalog
            .rejected
            .iter()
            .map(|r| format!("{}: {}", r.path, r.reason))
            .collect();
        let tidy_shadow = format!(
            "shadowed by {}",
            catalog.find("tidy").expect("tidy").info.path
        );
        assert_eq!(rejected.len(), 6, "{rejected:#?}");
        for expected in [
            ".cortex/commands/bad name.md: invalid name".to_owned(),
            ".cortex/commands/empty.md: the prompt is empty".to_owned(),
            format!(
                ".cortex/commands/huge.md: {} bytes; the limit is 64 KiB",
                MAX_COMMAND_BYTES + 1
            ),
            ".cortex/commands/pw.md: a symbolic link: not followed".to_owned(),
            ".claude/commands/review.md: shadowed by .cortex/commands/review.md".to_owned(),
            format!(".claude/commands/tidy.md: {tidy_shadow}"),
        ] {
            assert!(
                rejected.iter().any(|r| r.starts_with(&expected)),
                "{expected}: {rejected:#?}"
            );
        }
        assert_eq!(expand(review, "src/a.py").message, "Review src/a.py");
    }
}

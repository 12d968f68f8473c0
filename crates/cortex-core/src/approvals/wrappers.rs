//! Commands that run another command: a rule must never be bypassed
//! through them. `env X=1 cmd`, `xargs cmd`, `nohup cmd`, `timeout 5 cmd`,
//! `find … -exec cmd`, … are checked as the command they run; `bash -c
//! '…'` as the script it runs; `sudo` and `doas` as what they run *and*
//! opaque (no rule approves running as another user); `eval`, `source` and
//! a shell reading its script from standard input are opaque.

use super::analysis::{Analysis, Word};

/// What a command runs in its stead.
pub(crate) enum Inner {
    /// Nothing: the command is itself.
    None,
    /// Another command line.
    Command(Vec<Word>),
    /// A script (`bash -c`'s argument).
    Script(String),
}

const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"];

/// The command's name without its folder (`/usr/bin/env` → `env`).
pub(crate) fn program(argv: &[Word]) -> Option<&str> {
    let name = argv.first()?.as_static()?;
    Some(name.rsplit('/').next().unwrap_or(name))
}

/// What `argv` runs, recording in `out` why it is opaque.
pub(crate) fn unwrap(argv: &[Word], out: &mut Analysis) -> Inner {
    let Some(name) = program(argv) else {
        return Inner::None;
    };
    let rest = &argv[1..];
    match name {
        "env" => env(rest, out),
        "sudo" | "doas" | "pkexec" | "su" | "runuser" => {
            out.opaque(format!(
                "`{name}` runs a command as another user; no rule approves it"
            ));
            let inner = skip_options(rest, &["-u", "-g", "-C", "-h", "-p", "-r", "-t", "-U"]);
            command_or_none(inner)
        }
        "xargs" => {
            let inner = skip_options(
                rest,
                &[
                    "-I",
                    "-L",
                    "-n",
                    "-P",
                    "-s",
                    "-d",
                    "-E",
                    "-a",
                    "--arg-file",
                    "--delimiter",
                ],
            );
            if inner.is_empty() {
                // `xargs` alone runs `echo`.
                Inner::None
            } else {
                Inner::Command(inner.to_vec())
            }
        }
        "nohup" | "setsid" | "builtin" | "exec" | "time" | "chronic" | "unbuffer" => {
            command_or_none(skip_options(rest, &["-a"]))
        }
        "command" => {
            if rest
                .iter()
                .any(|w| matches!(w.as_static(), Some("-v" | "-V")))
            {
                Inner::None
            } else {
                command_or_none(skip_options(rest, &[]))
            }
        }
        "nice" | "ionice" | "stdbuf" => {
            command_or_none(skip_options(rest, &["-n", "-c", "-i", "-o", "-e"]))
        }
        "timeout" => {
            let after = skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]);
            // The first operand is the duration.
            command_or_none(after.get(1..).unwrap_or_default())
        }
        "eval" | "source" | "." => {
            out.opaque(format!("`{name}` runs text only known when it runs"));
            Inner::None
        }
        "find" => find_exec(rest),
        shell if SHELLS.contains(&shell) => shell_script(name, rest, out),
        _ => Inner::None,
    }
}

fn command_or_none(argv: &[Word]) -> Inner {
    if argv.is_empty() {
        Inner::None
    } else {
        Inner::Command(argv.to_vec())
    }
}

/// `argv` past its leading options; `with_value` lists the options that
/// take the next word as their value.
fn skip_options<'a>(argv: &'a [Word], with_value: &[&str]) -> &'a [Word] {
    let mut i = 0;
    while let Some(word) = argv.get(i) {
        let Some(text) = word.as_static() else {
            break;
        };
        if text == "--" {
            return &argv[i + 1..];
        }
        if !text.starts_with('-') || text == "-" {
            break;
        }
        i += if with_value.contains(&text) { 2 } else { 1 };
    }
    argv.get(i..).unwrap_or_default()
}

/// `env [-i] [-u NAME] [NAME=VALUE]… [cmd …]`.
fn env(rest: &[Word], out: &mut Analysis) -> Inner {
    let mut i = 0;
    while let Some(word) = rest.get(i) {
        let Some(text) = word.as_static() else {
            break;
        };
        match text {
            "-u" | "--unset" | "-C" | "--chdir" => i += 2,
            "-S" | "--split-string" => {
                out.opaque("`env -S` splits a string into a command line");
                return Inner::None;
            }
            _ if text.starts_with("--split-string") || text.starts_with("-S") => {
                out.opaque("`env -S` splits a string into a command line");
                return Inner::None;
            }
            "--" => {
                i += 1;
                break;
            }
            _ if text.starts_with('-') => i += 1,
            _ if is_assignment(text) => i += 1,
            _ => break,
        }
    }
    command_or_none(rest.get(i..).unwrap_or_default())
}

fn is_assignment(text: &str) -> bool {
    text.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `find … -exec cmd {} ;` runs `cmd` (the first such command; `find`'s
/// own arguments are checked as `find`'s).
fn find_exec(rest: &[Word]) -> Inner {
    let start = rest
        .iter()
        .position(|w| matches!(w.as_static(), Some("-exec" | "-execdir" | "-ok" | "-okdir")));
    let Some(start) = start else {
        return Inner::None;
    };
    let inner: Vec<Word> = rest[start + 1..]
        .iter()
        .take_while(|w| !matches!(w.as_static(), Some(";" | "+")))
        .cloned()
        .collect();
    command_or_none(&inner)
}

/// `bash [-opts] -c SCRIPT [name [args]]` runs SCRIPT; `bash FILE` runs a
/// file (checked as `bash FILE`); `bash` alone reads its script from
/// standard input, which no rule can see.
fn shell_script(name: &str, rest: &[Word], out: &mut Analysis) -> Inner {
    let mut i = 0;
    let mut has_c = false;
    while let Some(word) = rest.get(i) {
        let Some(text) = word.as_static() else {
            break;
        };
        if text == "--" {
            i += 1;
            break;
        }
        if !(text.starts_with('-') || text.starts_with('+')) || text == "-" {
            break;
        }
        if text.starts_with('-') && !text.starts_with("--") && text.contains('c') {
            has_c = true;
        }
        // `-o OPTION` and `+o OPTION` take a value.
        i += if matches!(text, "-o" | "+o" | "-O" | "+O") {
            2
        } else {
            1
        };
    }
    match (has_c, rest.get(i)) {
        (true, Some(Word::Static(script))) => Inner::Script(script.clone()),
        (true, _) => {
            out.opaque(format!("`{name} -c` runs a script only known when it runs"));
            Inner::None
        }
        (false, None) => {
            out.opaque(format!(
                "`{name}` reads the commands it runs from its standard input"
            ));
            Inner::None
        }
        _ => Inner::None,
    }
}

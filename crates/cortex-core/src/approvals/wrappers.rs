//! Commands that run another command: a rule must never be bypassed
//! through them. `env cmd`, `xargs cmd`, `nohup cmd`, `timeout 5 cmd`,
//! `nice cmd` are checked as the command they run; `bash -c '…'` as the
//! script it runs. A wrapper that also changes what the inner command runs
//! with (`env X=1`, `env -i`, `stdbuf`'s `LD_PRELOAD`, `xargs -I`'s
//! replacement, `sudo`), a builtin that bypasses functions or replaces the
//! shell (`exec`, `command`, `builtin`), `find -exec`, another shell (whose
//! reading may differ from bash's), `git` with options before its
//! subcommand (`-c alias.x=!cmd`, `--exec-path`, `-C`), `eval`, `source`
//! and programs that build their own command lines (`watch`, `parallel`)
//! are opaque; the inner command is still recorded where it can be read,
//! for the deny list.

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

/// Programs that run a command line they build or a command in another
/// context, with a syntax not read here.
const OPAQUE_RUNNERS: &[&str] = &[
    "watch",
    "parallel",
    "flock",
    "chroot",
    "unshare",
    "nsenter",
    "systemd-run",
    "script",
    "strace",
    "ltrace",
    "gdb",
    "valgrind",
    "taskset",
    "chrt",
    "prlimit",
    "setpriv",
    "firejail",
    "bwrap",
    "expect",
    "unbuffer",
    "chronic",
    "fakeroot",
];

/// `bash` flags that change nothing about how the script is read or what
/// it reads first (`-l`, `-i`, `--rcfile`, `-o posix` all do).
const PLAIN_BASH_FLAGS: &str = "ceuxv";

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
            // `-I X` replaces X in the command with input: the words a rule
            // sees are not the words that run.
            if rest.iter().any(|w| {
                w.as_static().is_none_or(|t| {
                    t.starts_with("-I")
                        || t.starts_with("-i")
                        || t.starts_with("--replace")
                        || t.starts_with("-J")
                })
            }) {
                out.opaque("`xargs -I` rewrites the command it runs");
            }
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
        "nohup" | "setsid" => command_or_none(skip_options(rest, &[])),
        "time" => {
            // `time -o FILE` writes a file.
            if rest.first().is_some_and(|w| w.text().starts_with('-')) {
                out.opaque("`time` with options may write a file");
            }
            command_or_none(skip_options(rest, &["-o", "-f"]))
        }
        "builtin" | "exec" | "command" => {
            // `command`/`builtin` bypass functions, `exec` replaces the shell
            // (`exec -a NAME` renames, `exec >f` redirects all that follows).
            out.opaque(format!("`{name}` changes how the shell runs what follows"));
            if rest
                .iter()
                .any(|w| matches!(w.as_static(), Some("-v" | "-V")))
            {
                Inner::None
            } else {
                command_or_none(skip_options(rest, &["-a"]))
            }
        }
        "stdbuf" => {
            out.opaque("`stdbuf` runs its command with `LD_PRELOAD` set");
            command_or_none(skip_options(rest, &["-i", "-o", "-e"]))
        }
        "nice" | "ionice" => command_or_none(skip_options(rest, &["-n", "-c"])),
        "timeout" => {
            let after = skip_options(rest, &["-s", "-k", "--signal", "--kill-after"]);
            // The first operand is the duration.
            command_or_none(after.get(1..).unwrap_or_default())
        }
        "eval" | "source" | "." => {
            out.opaque(format!("`{name}` runs text only known when it runs"));
            Inner::None
        }
        "find" => find_exec(rest, out),
        "git" => {
            git(rest, out);
            Inner::None
        }
        runner if OPAQUE_RUNNERS.contains(&runner) => {
            out.opaque(format!("`{name}` runs a command this reader cannot see"));
            Inner::None
        }
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

/// `git [options] SUBCOMMAND`: an option before the subcommand can make
/// git run another program (`-c alias.x=!cmd`, `-c core.pager=…`,
/// `--exec-path`, `--config-env`) or act on another repository (`-C`,
/// `--git-dir`); only options that change neither are read through.
fn git(rest: &[Word], out: &mut Analysis) {
    const PLAIN: &[&str] = &[
        "--no-pager",
        "-P",
        "--no-optional-locks",
        "--literal-pathspecs",
        "--no-replace-objects",
    ];
    for word in rest {
        match word.as_static() {
            Some(text) if PLAIN.contains(&text) => {}
            Some(text) if !text.starts_with('-') => return,
            _ => {
                out.opaque(format!(
                    "`git {}` before the subcommand can make git run other programs",
                    word.text()
                ));
                return;
            }
        }
    }
}

/// `env [-i] [-u NAME] [NAME=VALUE]… [cmd …]`: any option or assignment
/// changes what the command runs with, so only a bare `env cmd` is read
/// through.
fn env(rest: &[Word], out: &mut Analysis) -> Inner {
    if rest.first().is_some_and(|w| {
        w.as_static()
            .is_none_or(|t| t.starts_with('-') || is_assignment(t))
    }) {
        out.opaque("`env` with options or assignments changes the environment of what runs");
    }
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

/// `find … -exec cmd {} ;` runs `cmd` once per file it finds, besides what
/// `find`'s own arguments do (`-delete`): opaque, the first such command
/// recorded for the deny list.
fn find_exec(rest: &[Word], out: &mut Analysis) -> Inner {
    let start = rest
        .iter()
        .position(|w| matches!(w.as_static(), Some("-exec" | "-execdir" | "-ok" | "-okdir")));
    let Some(start) = start else {
        return Inner::None;
    };
    out.opaque("`find -exec` runs a command per file it finds");
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
    let mut plain = name == "bash";
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
        if !(text.starts_with('-') && text[1..].chars().all(|c| PLAIN_BASH_FLAGS.contains(c))) {
            plain = false;
        }
        // `-o OPTION` and `+o OPTION` take a value.
        i += if matches!(text, "-o" | "+o" | "-O" | "+O") {
            2
        } else {
            1
        };
    }
    match (has_c, rest.get(i)) {
        (true, Some(Word::Static(script))) => {
            // Another shell (or bash with `-l`, `-i`, `-o posix`, …) may read
            // the script differently from this bash parser, or read files
            // first: walked for the deny list only.
            if !plain {
                out.opaque(format!(
                    "`{name}` with these options may read its script differently from bash"
                ));
            }
            Inner::Script(script.clone())
        }
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

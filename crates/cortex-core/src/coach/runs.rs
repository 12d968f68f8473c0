//! What a command of the turn ran, and what an answer claims it printed.
//!
//! A change is tested only by a command that runs something: a test, the
//! program, a build. A command made only of programs that show, list or
//! search files (`cat test_calc.py`, `ls`, `grep`) runs none of the
//! workspace's code, so it neither tests a change nor "runs the test" a
//! task names. And an answer that quotes what a command printed is held to
//! what that command did print when it ran in the turn.

use super::TurnWork;
use super::words::same_file;
use crate::steer::Said;

/// Programs that show, list, search, move or compare files, or only
/// print their arguments: a command made of them runs no code of the
/// workspace.
const VIEWERS: &[&str] = &[
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "sed", "awk", "wc",
    "ls", "find", "file", "stat", "echo", "printf", "pwd", "tree", "diff", "cmp", "which", "type",
    "true", "false", "cd", "nl", "sort", "uniq", "cut", "tr", "od", "xxd", "hexdump", "git",
    "touch", "mkdir", "cp", "mv", "rm", "chmod", "readlink", "realpath", "basename", "dirname",
    "test", "[", "sleep", "clear",
];

/// The simple commands of `command` (split at `;`, `&&`, `||`, `|` and
/// line ends; a `bash -c "…"` wrapper taken off), each as its words
/// without leading variable assignments. Quotes are not parsed: a split
/// inside a quoted string only adds a command that starts with no program.
fn simple_commands(command: &str) -> Vec<Vec<String>> {
    // `2>&1` and `&>` redirect; they separate no commands.
    let words = super::words::plain_words(command)
        .join(" ")
        .replace(">&", "> ")
        .replace("&>", " >");
    words
        .split(['\n', ';', '|', '&'])
        .map(|part| {
            part.split_whitespace()
                .skip_while(|w| w.contains('=') && !w.starts_with('='))
                .map(str::to_owned)
                .collect::<Vec<String>>()
        })
        .filter(|words| !words.is_empty())
        .collect()
}

/// Whether a simple command's program runs code (is not a viewer).
fn runs_code(words: &[String]) -> bool {
    let Some(program) = words.first() else {
        return false;
    };
    let name = program.rsplit('/').next().unwrap_or(program);
    !VIEWERS.contains(&name)
}

/// Whether `command` runs something beyond showing files: a test, the
/// program, a build.
pub(super) fn exercises(command: &str) -> bool {
    simple_commands(command).iter().any(|c| runs_code(c))
}

/// Whether `command` runs `key` (the task's test: its file, or the word
/// of a `cargo test`): a simple command of it that runs code and names it.
pub(super) fn runs(command: &str, key: &str) -> bool {
    simple_commands(command).iter().any(|words| {
        runs_code(words)
            && words
                .iter()
                .any(|w| same_file(super::words::normalise(w).as_str(), key))
    })
}

/// A line of output as it is compared: trimmed, and a number with more
/// than two decimals (a time) as `#`.
fn compared(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line.trim();
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let int = tail
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(tail.len());
        let after = &tail[int..];
        let decimals = after
            .strip_prefix('.')
            .map(|d| d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len()))
            .unwrap_or(0);
        if decimals > 2 {
            out.push('#');
            rest = &after[1 + decimals..];
        } else {
            out.push_str(&tail[..int]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// Whether every line `claimed` shows (but elisions, `...`) is a line of
/// `output`, in order.
fn printed(claimed: &str, output: &str) -> bool {
    let mut actual = output
        .lines()
        .filter(|l| !l.starts_with("[exit code"))
        .map(compared);
    claimed
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !matches!(*l, "..." | "…"))
        .all(|line| {
            let line = compared(line);
            actual.any(|a| a == line)
        })
}

/// The first lines of an output quoted back to the model.
const QUOTED_LINES: usize = 12;

impl TurnWork {
    /// An answer that quotes what a command the turn ran printed, with
    /// lines it did not print (the latest run of the command counts).
    pub(super) fn wrong_output(&self, answer: &str) -> Option<Said> {
        let (command, output, claimed) = self.runs.iter().rev().find_map(|(command, output)| {
            super::claims::claimed_output(answer, command).map(|c| (command, output, c))
        })?;
        if printed(&claimed, output) {
            return None;
        }
        let shown: Vec<&str> = output.lines().take(QUOTED_LINES).collect();
        Some(Said::words(format!(
            "Your answer says `{command}` printed:\n{}\nbut when it ran in this turn it \
             printed:\n{}\nAnswer again from what it printed.",
            claimed.trim_end(),
            shown.join("\n")
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn showing_a_file_runs_nothing_and_running_it_does() {
        for viewer in [
            "cat test_calc.py",
            "ls -la && cat test_calc.py | head",
            "grep -n assert test_calc.py",
            "PAGER=cat git diff test_calc.py",
            "bash -c \"cat test_calc.py\"",
        ] {
            assert!(!exercises(viewer), "{viewer}");
            assert!(!runs(viewer, "test_calc.py"), "{viewer}");
        }
        for runner in [
            "python3 test_calc.py",
            "cd src && python3 -B ./test_calc.py",
            "PYTHONPATH=. pytest -q test_calc.py",
            "/usr/bin/python3 test_calc.py 2>&1 | tail -5",
        ] {
            assert!(exercises(runner), "{runner}");
            assert!(runs(runner, "test_calc.py"), "{runner}");
        }
        assert!(runs("cargo test --quiet", "test"));
        assert!(!runs("python3 calc.py", "test_calc.py"));
        assert!(exercises("python3 -c 'import calc'"));
        assert!(exercises("make"));
    }

    #[test]
    fn a_claimed_output_stands_only_if_it_was_printed() {
        let output = "..\n----------------------------------------------------------------------\n\
                      Ran 2 tests in 0.001s\n\nOK\n[exit code 0]";
        assert!(printed("Ran 2 tests in 0.004s\n\nOK", output));
        assert!(printed("...\nOK\n", output));
        assert!(!printed("Ran 3 tests in 0.001s\nOK", output));
        assert!(!printed("FAILED (failures=1)", output));
        assert!(printed("55", "55\n"));
        assert!(!printed("56", "55\n"));
        // In order: the claim cannot reuse a line it already matched.
        assert!(!printed("OK\nRan 2 tests in 0.001s", output));
    }
}

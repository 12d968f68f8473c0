//! An answer that says what a command prints, checked against what the turn
//! knows before the model is sent to run it ([`TurnWork::imagined`]).
//!
//! Two kinds of such claims are true without another round. The command
//! ran in the turn, written another way: the 1.5B ran `python3 -B
//! test_calc.py`, then answered that `python3 test_calc.py` passes, and was
//! sent to run it again (`words::same_command` reads the two as one). And
//! the command only shows files: after writing `hello.txt` the model
//! answers "you can run `cat hello.txt`; this should output: hi" — the
//! harness reads the file in the guest, and when the claimed output is the
//! file's text the claim stands (sent to run it, the model spent two rounds
//! on it).

use super::TurnWork;
use super::words::{SHELLS, imagined_output, plain_words, same_command};
use crate::Session;

/// The files `command` only shows (`cat a.py b.py`); `None` for any other
/// command, or one with flags, globs, pipes or redirections.
fn shown_files(command: &str) -> Option<Vec<String>> {
    let words = plain_words(command);
    let (first, paths) = words.split_first()?;
    let plain = |w: &String| {
        !w.starts_with('-')
            && !w.chars().any(|c| "|&;<>*?$`(){}[]\\\"'~".contains(c))
            && !w.contains("..")
    };
    (first == "cat" && !paths.is_empty() && paths.iter().all(plain)).then(|| paths.to_vec())
}

/// What `answer` says `command` prints: the fenced block after the shell
/// block that holds the command, when it is not another command.
pub(super) fn claimed_output(answer: &str, command: &str) -> Option<String> {
    let blocks: Vec<(&str, &str)> = answer
        .split("```")
        .skip(1)
        .step_by(2)
        .map(|block| block.split_once('\n').unwrap_or((block, "")))
        .collect();
    let at = blocks.iter().position(|(lang, body)| {
        SHELLS.contains(&lang.trim().to_lowercase().as_str())
            && body.lines().any(|l| same_command(l, command))
    })?;
    let (lang, body) = blocks.get(at + 1)?;
    matches!(lang.trim(), "" | "text" | "plaintext" | "output").then(|| (*body).to_owned())
}

/// Whether two texts are the same but for trailing spaces and blank lines.
fn same_text(a: &str, b: &str) -> bool {
    let lines = |t: &str| -> Vec<String> {
        let mut lines: Vec<String> = t.lines().map(|l| l.trim_end().to_owned()).collect();
        while lines.last().is_some_and(String::is_empty) {
            lines.pop();
        }
        lines
    };
    lines(a) == lines(b)
}

impl TurnWork {
    /// The commands an answer may say the output of: those run in the turn
    /// and those whose claimed output the harness found true.
    pub(super) fn known_commands(&self) -> Vec<String> {
        self.commands
            .iter()
            .chain(&self.checked_claims)
            .cloned()
            .collect()
    }

    /// The command `answer` claims the output of without having run it,
    /// when it only shows files: with the files and the claimed output.
    fn claimed_read(&self, answer: &str) -> Option<(String, Vec<String>, String)> {
        let command = imagined_output(answer, &self.known_commands())?;
        let files = shown_files(&command)?;
        let claimed = claimed_output(answer, &command)?;
        Some((command, files, claimed))
    }
}

impl Session {
    /// Checks a claim of `answer` about what a command that only shows
    /// files prints against the files in the guest; a true one is noted,
    /// so that the answer is not sent back for it.
    pub(super) async fn check_claimed_read(&mut self, answer: &str) {
        let Some((command, files, claimed)) = self.turn_work.claimed_read(answer) else {
            return;
        };
        let mut text = String::new();
        for file in &files {
            let Some(shown) = self.read_whole(file).await else {
                return;
            };
            let Some(content) = cortex_tools::shown_file(&shown) else {
                return;
            };
            text.push_str(&content);
        }
        if same_text(&text, &claimed) {
            self.turn_work.checked_claims.push(command);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::words::same_command;
    use super::{claimed_output, same_text, shown_files};

    #[test]
    fn one_command_written_two_ways_is_the_same() {
        assert!(same_command(
            "python3 -B test_calc.py",
            "python3 test_calc.py"
        ));
        assert!(same_command(
            "python test_calc.py",
            "python3 ./test_calc.py"
        ));
        assert!(same_command("bash -c \"cat calc.py\"", "cat calc.py"));
        assert!(!same_command("python3 test_calc.py", "python3 calc.py"));
        assert!(!same_command("python3 -c 1", "python3 1"));
        assert!(!same_command("", ""));
    }

    #[test]
    fn only_a_plain_cat_shows_files() {
        assert_eq!(
            shown_files("cat hello.txt"),
            Some(vec!["hello.txt".to_owned()])
        );
        assert_eq!(
            shown_files("bash -c \"cat a.py ./b.py\""),
            Some(vec!["a.py".to_owned(), "b.py".to_owned()])
        );
        assert_eq!(shown_files("cat -n a.py"), None);
        assert_eq!(shown_files("cat a.py | head"), None);
        assert_eq!(shown_files("cat *.py"), None);
        assert_eq!(shown_files("cat ../secret"), None);
        assert_eq!(shown_files("cat"), None);
        assert_eq!(shown_files("python3 a.py"), None);
    }

    #[test]
    fn the_claimed_output_is_the_plain_block_after_the_command() {
        let answer =
            "You can run:\n\n```sh\ncat hello.txt\n```\n\nThis should output:\n\n```\nhi\n```\n";
        assert_eq!(
            claimed_output(answer, "cat hello.txt").as_deref(),
            Some("hi\n")
        );
        let code_next = "```bash\ncat a.py\n```\nthen\n```python\nx = 1\n```";
        assert_eq!(claimed_output(code_next, "cat a.py"), None);
        assert_eq!(claimed_output("```sh\ncat a.py\n```", "cat a.py"), None);
        assert!(same_text("hi\n\n", "hi"));
        assert!(!same_text("hi", "ho"));
    }
}

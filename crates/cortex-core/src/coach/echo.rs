//! An answer that gives back words the model was sent instead of its own:
//! a tool's output with the chat template's tags, or a reminder's or
//! refusal's own sentence (the 0.5B answered "The same call again cannot
//! show more than it did.", twice, after reading the file that held the
//! answer).

use super::TurnWork;

/// Below this many characters, an answer that occurs in the harness's words
/// may be a real answer they happen to hold (a path, a number, an
/// exception's name).
const MIN_ECHO_CHARS: usize = 24;

/// Longer texts are not kept for the check.
const MAX_KEPT_BYTES: usize = 2048;

impl TurnWork {
    /// Keep `text`, which the harness sent the model this turn (a
    /// reminder, a refusal, a failed call's output), for [`TurnWork::echo`].
    pub(crate) fn note_harness_words(&mut self, text: &str) {
        // A long output (a failed build's) is not what a model recites as
        // its answer; a turn of many keeps none of them.
        if text.len() <= MAX_KEPT_BYTES {
            self.harness_words.push(text.to_owned());
        }
    }

    /// The reminder for an answer that is a tool's output or the harness's
    /// own words.
    pub(super) fn echo(&self, answer: &str) -> Option<crate::steer::Said> {
        let lower = answer.to_lowercase();
        if lower.contains("<tool_response>") || lower.contains("</tool_response>") {
            return Some(crate::steer::Said::words(format!(
                "Your reply repeats a tool's output (the <tool_response> text): that is not an \
                 answer. Answer the task in your own words, from what the tools showed you. The \
                 task: {}",
                self.prompt
            )));
        }
        repeats(answer, &self.harness_words).then(|| {
            crate::steer::Said::words(format!(
                "Your reply repeats what the harness told you: that is not an answer. Answer the \
                 task in your own words, from what the tools showed you. The task: {}",
                self.prompt
            ))
        })
    }
}

/// Whether `answer` is all in one of `said`, word for word (an answer
/// with words of its own besides may hold the answer).
fn repeats(answer: &str, said: &[String]) -> bool {
    let squeeze = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let answer = squeeze(answer);
    answer.len() >= MIN_ECHO_CHARS && said.iter().any(|s| squeeze(s).contains(&answer))
}

#[cfg(test)]
mod tests {
    use super::repeats;

    #[test]
    fn an_answer_that_is_a_sentence_the_harness_sent_repeats_it() {
        let said = [
            "The same call again cannot show more than it did. Answer the question now from \
             what the tools showed you."
                .to_owned(),
            "not made: the task says to run t.py, not to change it.".to_owned(),
        ];
        assert!(repeats(
            "The same call again cannot show more than it did.",
            &said
        ));
        assert!(repeats(
            "the same call  again cannot show more than it did.",
            &said
        ));
        assert!(!repeats(
            "The same call again cannot show more than it did. So: src/a.py",
            &said
        ));
        // Short answers the harness's words happen to hold are answers.
        assert!(!repeats("t.py", &said));
        assert!(!repeats("src/config/loader.py defines it.", &said));
        assert!(!repeats(
            "The same call again cannot show more than it did.",
            &[]
        ));
    }
}

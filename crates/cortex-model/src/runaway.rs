//! A reply that has degenerated: a long run of blank lines, or the same
//! passage again and again. Small models do this until the output limit
//! (docs/BENCHMARKS.md, the task set: 2,048 tokens of newlines, 150 s a
//! round, behind a llama.cpp server; a call's `content` repeating inside the
//! embedded model's grammar). The turn loop watches the streamed text with
//! [`runaway`], the embedded provider its own reply (text it holds back
//! while a call may be starting included); either ends the reply with the
//! finish reason [`RUNAWAY`], which the harness treats as a cut reply.

/// The `FinishReason::Other` of a reply stopped as a runaway.
pub const RUNAWAY: &str = "runaway";

/// Blank characters in a row at the end of a reply that make it a runaway.
const MAX_BLANK_RUN: usize = 160;
/// A reply whose last this many bytes occur [`REPEATS`] times in it is a
/// runaway (a passage repeated).
const REPEAT_PROBE: usize = 120;
const REPEATS: usize = 4;

/// Whether `text`, a reply as generated so far, has degenerated: it ends in
/// a long run of blanks, or its last passage occurs again and again.
pub fn runaway(text: &str) -> bool {
    let blanks = text.len() - text.trim_end().len();
    if blanks >= MAX_BLANK_RUN {
        return true;
    }
    let trimmed = text.trim_end();
    if trimmed.len() < REPEAT_PROBE * REPEATS {
        return false;
    }
    let mut start = trimmed.len() - REPEAT_PROBE;
    while !trimmed.is_char_boundary(start) {
        start -= 1;
    }
    let probe = &trimmed[start..];
    !probe.trim().is_empty() && trimmed.matches(probe).count() >= REPEATS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blank_runs_and_repeated_passages_are_runaways_and_answers_are_not() {
        let answer = "The string returned by greet() in app.py is \"Hello, Cortex\".";
        assert!(!runaway(answer));
        assert!(runaway(&format!(
            "{answer}\n\n```\n{}",
            "\n".repeat(MAX_BLANK_RUN)
        )));
        assert!(!runaway(&format!(
            "{answer}{}",
            "\n".repeat(MAX_BLANK_RUN - 1)
        )));
        let passage = "I apologize for the confusion. I will verify the changes with bash.\n\n\n\
                       To verify the changes with bash, I will run the following command.\n";
        assert!(runaway(&passage.repeat(REPEATS)));
        assert!(!runaway(&passage.repeat(REPEATS - 1)));
        // Code with many similar lines, each different, is an answer.
        let table: String = (0..200)
            .map(|i| format!("| row {i} | {} |\n", i * 7))
            .collect();
        assert!(!runaway(&table));
        // A multi-byte character where the probe would start.
        let wide = "é".repeat(REPEAT_PROBE * REPEATS);
        assert!(runaway(&wide));
    }
}

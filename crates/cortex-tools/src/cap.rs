//! Capping tool output so that no result can flood the model's context.
//!
//! The middle is cut rather than the end: the head usually says what ran and
//! the tail usually says how it ended (errors, summaries, exit codes).

/// Every tool result the model sees is at most this many bytes.
pub const MAX_OUTPUT_BYTES: usize = 30 * 1024;

/// Cut the middle out of `text` so that it fits in `max` bytes, keeping the
/// head and the tail (on char boundaries) and saying how much was cut.
pub fn cap_middle(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    // Size the note for the largest possible cut so the result stays <= max.
    let note_len = cut_note(text.len()).len();
    let budget = max.saturating_sub(note_len);
    let head_end = floor_char_boundary(text, budget / 2);
    let tail_start = ceil_char_boundary(text, text.len() - (budget - budget / 2));
    let cut = tail_start - head_end;
    let mut out = String::with_capacity(max);
    out.push_str(&text[..head_end]);
    out.push_str(&cut_note(cut));
    out.push_str(&text[tail_start..]);
    out
}

/// The note put where bytes were cut.
pub(crate) fn cut_note(cut: usize) -> String {
    format!("\n... [{cut} bytes cut from the middle] ...\n")
}

/// The largest char boundary `<= index` (clamped to the text).
pub(crate) fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest char boundary `>= index` (clamped to the text).
pub(crate) fn ceil_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_unchanged() {
        assert_eq!(cap_middle("hello", 5), "hello");
        assert_eq!(cap_middle("", 0), "");
    }

    #[test]
    fn long_text_keeps_head_and_tail_within_max() {
        let text = format!("HEAD{}TAIL", "x".repeat(10_000));
        let capped = cap_middle(&text, 1000);
        assert!(capped.len() <= 1000, "{}", capped.len());
        assert!(capped.starts_with("HEAD"));
        assert!(capped.ends_with("TAIL"));
        assert!(capped.contains("bytes cut from the middle"));
        let cut: usize = capped
            .split("... [")
            .nth(1)
            .and_then(|s| s.split(' ').next())
            .and_then(|n| n.parse().ok())
            .expect("cut count");
        let note = cut_note(cut);
        assert_eq!(capped.len() - note.len() + cut, text.len());
    }

    #[test]
    fn cuts_on_char_boundaries() {
        let text = "é".repeat(5000) + &"ü".repeat(5000);
        for max in [100, 101, 102, 103, 999] {
            let capped = cap_middle(&text, max);
            assert!(capped.len() <= max);
            assert!(capped.starts_with('é') && capped.ends_with('ü'));
        }
    }

    #[test]
    fn tiny_max_still_says_what_was_cut() {
        let capped = cap_middle(&"a".repeat(100), 3);
        assert!(capped.contains("100 bytes cut"), "{capped}");
    }
}

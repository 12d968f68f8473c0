//! What a Python traceback in a command's output points at without saying.
//!
//! `KeyError: 'mail'` says which key was missing, not which was meant. Told
//! that `python3 test_users.py` fails with it, the 1.5B made the function raise
//! its own KeyError instead of reading the key the test passes
//! (`{"name": "Ann", "email": …}`). Python suggests a near name for a
//! `NameError` or an `AttributeError`, never for a missing key; this does,
//! from the string literals on the traceback's own source lines. It reads
//! the output only: nothing is run.

/// How the note of [`key_error_hint`] starts (the core's answer checks
/// quote it).
pub const KEY_HINT: &str = "Note: the key";

/// The note to add after a command's output whose last traceback ends in
/// a `KeyError` for a string key, when a source line of that traceback
/// holds a string close to it (one inside the other, or one edit apart);
/// `None` otherwise.
pub(crate) fn key_error_hint(output: &str) -> Option<String> {
    let lines: Vec<&str> = output.lines().collect();
    let error_at = lines.iter().rposition(|l| l.starts_with("KeyError: "))?;
    let key = quoted(lines[error_at].strip_prefix("KeyError: ")?)
        .into_iter()
        .next()
        .filter(|k| k.len() >= 3)?;
    let start = lines[..error_at]
        .iter()
        .rposition(|l| l.starts_with("Traceback (most recent call last):"))?;
    let source = lines[start + 1..error_at]
        .iter()
        .filter(|l| !l.trim_start().starts_with("File \""));
    let near = source.flat_map(|l| quoted(l)).find(|s| {
        *s != key
            && s.len() >= 3
            && !s.contains(char::is_whitespace)
            && (s.contains(key) || key.contains(s) || crate::defs::edit_distance(s, key) == 1)
    })?;
    Some(format!(
        "{KEY_HINT} '{key}' is not in the dict; a line of the traceback above has '{near}', \
         close to it: the code may look up the key under the wrong name."
    ))
}

/// The contents of the string literals on `line`, in '…' or "…".
fn quoted(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(open) = rest.find(['\'', '"']) {
        let quote = &rest[open..open + 1];
        let after = &rest[open + 1..];
        let Some(close) = after.find(quote) else {
            break;
        };
        found.push(&after[..close]);
        rest = &after[close + 1..];
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "Traceback (most recent call last):\n  \
        File \"/w/test_users.py\", line 3, in <module>\n    \
        assert contact({\"name\": \"Ann\", \"email\": \"ann@example.com\"}) == \"ann@example.com\"\n           \
        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n  \
        File \"/w/users.py\", line 2, in contact\n    return user[\"mail\"]\n           ~~~~^^^^^^^^\n\
        KeyError: 'mail'\n[exit code 1]";

    #[test]
    fn a_missing_key_close_to_a_key_on_the_traceback_is_named() {
        let hint = key_error_hint(RUN).expect("a hint");
        assert!(
            hint.contains("the key 'mail' is not in the dict")
                && hint.contains("has 'email', close to it"),
            "{hint}"
        );
        // One edit apart counts too.
        let typo = RUN.replace("\"email\"", "\"maik\"");
        assert!(key_error_hint(&typo).is_some_and(|h| h.contains("'maik'")));
    }

    #[test]
    fn nothing_close_or_no_key_error_says_nothing() {
        assert_eq!(key_error_hint(&RUN.replace("\"email\"", "\"phone\"")), None);
        assert_eq!(key_error_hint(&RUN.replace("KeyError", "ValueError")), None);
        assert_eq!(key_error_hint("KeyError: 'mail'\n"), None);
        assert_eq!(key_error_hint("all fine\n[exit code 0]"), None);
    }
}

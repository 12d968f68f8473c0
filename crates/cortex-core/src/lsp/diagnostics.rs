//! What a language server's diagnostics for one file look like in a call's
//! result: `path:line:col: error|warning: message [source]`, errors first,
//! at most [`MAX_LINES`] lines and [`MAX_BYTES`] bytes, the cut stated.
//! Information and hints are counted, not listed: they are rarely what an
//! edit broke.

use super::client::Diagnostic;

/// Diagnostics listed at most.
const MAX_LINES: usize = 20;
/// Bytes of listed diagnostics at most.
const MAX_BYTES: usize = 4 * 1024;
/// One message's bytes at most (a type in full can be long).
const MAX_MESSAGE: usize = 400;

/// The block appended to the result for server `name`'s diagnostics of
/// `path` (workspace-relative, as the call named it).
pub(crate) fn render(name: &str, path: &str, diagnostics: &[Diagnostic]) -> String {
    let mut listed: Vec<&Diagnostic> = diagnostics.iter().filter(|d| d.severity <= 2).collect();
    // Errors first, then by position.
    listed.sort_by_key(|d| (d.severity, d.line, d.character));
    let errors = listed.iter().filter(|d| d.severity == 1).count();
    let warnings = listed.len() - errors;
    let others = diagnostics.len() - listed.len();
    let mut out = format!(
        "[language server `{name}`] {path}: {}",
        counts(errors, warnings)
    );
    if others > 0 {
        out.push_str(&format!(" ({others} information or hint(s) not listed)"));
    }
    let mut bytes = 0;
    let mut shown = 0;
    for d in &listed {
        let kind = if d.severity == 1 { "error" } else { "warning" };
        let message = cortex_tools::cap_middle(&one_line(&d.message), MAX_MESSAGE);
        let source = d
            .source
            .as_deref()
            .map(|s| format!(" [{}]", one_line(s)))
            .unwrap_or_default();
        let line = format!(
            "{path}:{}:{}: {kind}: {message}{source}",
            d.line.saturating_add(1),
            d.character.saturating_add(1)
        );
        if shown == MAX_LINES || bytes + line.len() > MAX_BYTES {
            break;
        }
        bytes += line.len() + 1;
        shown += 1;
        out.push('\n');
        out.push_str(&line);
    }
    if shown < listed.len() {
        out.push_str(&format!(
            "\n… {} more not shown (the first {shown} are listed, errors first)",
            listed.len() - shown
        ));
    }
    out
}

fn counts(errors: usize, warnings: usize) -> String {
    match (errors, warnings) {
        (0, 0) => "no errors or warnings".to_owned(),
        (e, 0) => plural(e, "error"),
        (0, w) => plural(w, "warning"),
        (e, w) => format!("{}, {}", plural(e, "error"), plural(w, "warning")),
    }
}

fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// A server's text on one line, control characters as spaces: a message
/// cannot forge lines of its own in the result.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(line: u64, severity: u8, message: &str) -> Diagnostic {
        Diagnostic {
            line,
            character: 4,
            severity,
            message: message.to_owned(),
            source: Some("fake".to_owned()),
        }
    }

    #[test]
    fn errors_come_first_with_one_based_positions() {
        let text = render(
            "py",
            "a.py",
            &[d(0, 2, "unused"), d(7, 1, "bad\ntype"), d(1, 4, "hint")],
        );
        assert_eq!(
            text,
            "[language server `py`] a.py: 1 error, 1 warning (1 information or hint(s) not listed)\n\
             a.py:8:5: error: bad type [fake]\n\
             a.py:1:5: warning: unused [fake]"
        );
    }

    #[test]
    fn a_long_list_is_cut_and_says_so() {
        let many: Vec<Diagnostic> = (0..30).map(|i| d(i, 1, "wrong")).collect();
        let text = render("rs", "m.rs", &many);
        assert_eq!(text.lines().count(), 1 + MAX_LINES + 1);
        assert!(text.ends_with("… 10 more not shown (the first 20 are listed, errors first)"));
        let none = render("rs", "m.rs", &[]);
        assert_eq!(none, "[language server `rs`] m.rs: no errors or warnings");
    }
}

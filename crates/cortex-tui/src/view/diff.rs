//! A unified diff as coloured rows: added lines green with `+`, removed red
//! with `-`, context dim, each with its line number (the new file's, or the
//! old one's for a removed line); hunk headers become a thin separator.

use crate::view::theme::Theme;
use crate::view::wrap::Para;
use ratatui::text::{Line, Span};

/// Rows of `diff`; at most `max` of its lines (then a `… N more lines`
/// row) unless `max` is `None`.
pub fn render(diff: &str, theme: Theme, max: Option<usize>) -> Vec<Para> {
    let lines: Vec<DiffLine<'_>> = parse(diff);
    let gutter = lines
        .iter()
        .filter_map(|l| l.number)
        .max()
        .unwrap_or(1)
        .to_string()
        .len();
    let shown = max.unwrap_or(usize::MAX);
    let mut out = Vec::new();
    for line in lines.iter().take(shown) {
        let number = match line.number {
            Some(n) => format!("{n:>gutter$} "),
            None => " ".repeat(gutter + 1),
        };
        let (sign, style) = match line.kind {
            Kind::Added => ("+", theme.added()),
            Kind::Removed => ("-", theme.removed()),
            Kind::Context => (" ", theme.dim()),
            Kind::Hunk => ("⋯", theme.hunk()),
        };
        let hang = vec![Span::raw(" ".repeat(gutter + 3))];
        let row = Line::from(vec![
            Span::styled(number, theme.dim()),
            Span::styled(format!("{sign} "), style),
            Span::styled(line.text.to_owned(), style),
        ]);
        out.push(Para::hard(row, hang));
    }
    if lines.len() > shown {
        out.push(Para::prose(Line::from(Span::styled(
            crate::text::more_lines(lines.len() - shown),
            theme.dim(),
        ))));
    }
    out
}

/// `+added -removed` of a diff.
pub fn stat(diff: &str) -> (usize, usize) {
    parse(diff).iter().fold((0, 0), |(a, r), l| match l.kind {
        Kind::Added => (a + 1, r),
        Kind::Removed => (a, r + 1),
        _ => (a, r),
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Added,
    Removed,
    Context,
    Hunk,
}

struct DiffLine<'a> {
    kind: Kind,
    number: Option<u64>,
    text: &'a str,
}

fn parse(diff: &str) -> Vec<DiffLine<'_>> {
    let (mut old, mut new) = (0u64, 0u64);
    let mut out = Vec::new();
    for raw in diff.lines() {
        if raw.starts_with("+++") || raw.starts_with("---") || raw.starts_with("diff ") {
            continue;
        }
        if let Some(header) = raw.strip_prefix("@@") {
            (old, new) = hunk_starts(header);
            // The first hunk needs no separator.
            if !out.is_empty() {
                out.push(DiffLine {
                    kind: Kind::Hunk,
                    number: None,
                    text: "",
                });
            }
            continue;
        }
        let (kind, number, text) = match raw.chars().next() {
            Some('+') => {
                new += 1;
                (Kind::Added, Some(new), &raw[1..])
            }
            Some('-') => {
                old += 1;
                (Kind::Removed, Some(old), &raw[1..])
            }
            Some('\\') => (Kind::Context, None, raw),
            _ => {
                old += 1;
                new += 1;
                (Kind::Context, Some(new), raw.get(1..).unwrap_or_default())
            }
        };
        out.push(DiffLine { kind, number, text });
    }
    out
}

/// `-3,7 +3,8 @@` → the line before each side's first line.
fn hunk_starts(header: &str) -> (u64, u64) {
    let mut old = 0;
    let mut new = 0;
    for part in header.split_whitespace() {
        let start = |p: &str| -> u64 {
            p.split(',')
                .next()
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(1)
                .saturating_sub(1)
        };
        if let Some(p) = part.strip_prefix('-') {
            old = start(p);
        } else if let Some(p) = part.strip_prefix('+') {
            new = start(p);
        }
    }
    (old, new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::view::wrap::wrap_all;

    const DIFF: &str = "--- a/calc.py\n+++ b/calc.py\n@@ -1,3 +1,3 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n \n@@ -10,1 +10,2 @@\n x\n+y\n";

    #[test]
    fn numbers_and_signs() {
        let mut out = Vec::new();
        wrap_all(&render(DIFF, Theme::colored(), None), 40, &mut out);
        let rows: Vec<String> = out
            .iter()
            .map(|l| l.spans.iter().map(|s| s.content.as_ref()).collect())
            .collect();
        assert_eq!(
            rows,
            [
                " 1   def add(a, b):",
                " 2 -     return a - b",
                " 2 +     return a + b",
                " 3   ",
                "   ⋯ ",
                "10   x",
                "11 + y",
            ]
        );
        assert_eq!(stat(DIFF), (2, 1));
    }

    #[test]
    fn folds_to_a_count() {
        let paras = render(DIFF, Theme::colored(), Some(2));
        assert_eq!(paras.len(), 3);
        let last: String = paras[2]
            .line
            .spans
            .iter()
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(last, "… 5 more lines");
    }
}

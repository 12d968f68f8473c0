//! Syntax highlighting for code blocks: a small lexer per language family
//! (comments, strings, numbers, keywords, types, calls), not a grammar.
//!
//! Chosen over syntect deliberately: syntect 5 with its bundled syntaxes and
//! themes (fancy-regex) cost 52 s of CPU to build from scratch on this
//! 2-core machine, and its debug build took 1.8 s to load the syntax set
//! before the first highlighted line, while a code block in a transcript
//! only needs comments, strings and keywords told apart (docs/BENCHMARKS.md,
//! "Terminal UI"). Unknown languages are drawn plain.

use crate::view::theme::{Theme, Token};
use ratatui::text::{Line, Span};

struct Lang {
    line_comments: &'static [&'static str],
    block_comment: Option<(&'static str, &'static str)>,
    /// Quote characters; a tripled quote (Python) spans lines.
    quotes: &'static [char],
    keywords: &'static [&'static str],
    /// Capitalised words are types (Rust, Go, Java, TypeScript).
    capital_types: bool,
}

const RUST: Lang = Lang {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"'],
    keywords: &[
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "Self", "static", "struct", "super", "trait",
        "true", "type", "unsafe", "use", "where", "while",
    ],
    capital_types: true,
};

const PYTHON: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &[
        "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
        "elif", "else", "except", "False", "finally", "for", "from", "global", "if", "import",
        "in", "is", "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True",
        "try", "while", "with", "yield",
    ],
    capital_types: true,
};

const C_LIKE: Lang = Lang {
    line_comments: &["//"],
    block_comment: Some(("/*", "*/")),
    quotes: &['"', '\'', '`'],
    keywords: &[
        "async",
        "await",
        "break",
        "case",
        "catch",
        "chan",
        "class",
        "const",
        "continue",
        "default",
        "defer",
        "delete",
        "do",
        "else",
        "enum",
        "export",
        "extends",
        "false",
        "finally",
        "for",
        "func",
        "function",
        "go",
        "if",
        "implements",
        "import",
        "interface",
        "let",
        "map",
        "new",
        "nil",
        "null",
        "package",
        "private",
        "protected",
        "public",
        "return",
        "static",
        "struct",
        "switch",
        "this",
        "throw",
        "true",
        "try",
        "type",
        "typeof",
        "var",
        "void",
        "while",
        "yield",
        "int",
        "char",
        "bool",
        "float",
        "double",
        "long",
        "unsigned",
        "include",
        "define",
        "undefined",
    ],
    capital_types: true,
};

const SHELL: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &[
        "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case",
        "esac", "function", "return", "export", "local", "set", "cd", "echo", "exit",
    ],
    capital_types: false,
};

const DATA: Lang = Lang {
    line_comments: &["#"],
    block_comment: None,
    quotes: &['"', '\''],
    keywords: &["true", "false", "null", "yes", "no"],
    capital_types: false,
};

fn lang(name: &str) -> Option<&'static Lang> {
    let name = name.split([',', ' ']).next().unwrap_or_default();
    Some(match name.to_ascii_lowercase().as_str() {
        "rust" | "rs" => &RUST,
        "python" | "py" | "python3" => &PYTHON,
        "c" | "h" | "cpp" | "c++" | "cc" | "hpp" | "java" | "js" | "javascript" | "jsx" | "ts"
        | "typescript" | "tsx" | "go" | "golang" | "kotlin" | "swift" | "cs" | "csharp" => &C_LIKE,
        "sh" | "bash" | "shell" | "zsh" | "console" | "dockerfile" | "make" | "makefile" => &SHELL,
        "json" | "toml" | "yaml" | "yml" | "ini" => &DATA,
        _ => return None,
    })
}

/// The lines of `code`, highlighted for `language` (a fence's info string);
/// plain when the language is unknown.
pub fn highlight(language: &str, code: &str, theme: Theme) -> Vec<Line<'static>> {
    let Some(lang) = lang(language) else {
        return code
            .lines()
            .map(|l| Line::from(Span::raw(l.to_owned())))
            .collect();
    };
    let mut state = State::Code;
    code.lines()
        .map(|line| {
            let (spans, next) = line_tokens(lang, line, state);
            state = next;
            Line::from(
                spans
                    .into_iter()
                    .map(|(text, token)| Span::styled(text, theme.token(token)))
                    .collect::<Vec<_>>(),
            )
        })
        .collect()
}

/// What a line starts inside of.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Code,
    BlockComment,
    /// A tripled quote of this character.
    LongString(char),
}

fn line_tokens(lang: &Lang, line: &str, mut state: State) -> (Vec<(String, Token)>, State) {
    let mut out: Vec<(String, Token)> = Vec::new();
    let mut push = |text: &str, token: Token| match out.last_mut() {
        Some((last, t)) if *t == token => last.push_str(text),
        _ => out.push((text.to_owned(), token)),
    };
    let mut rest = line;
    while !rest.is_empty() {
        match state {
            State::BlockComment => {
                let close = lang.block_comment.map_or("*/", |(_, close)| close);
                match rest.find(close) {
                    Some(i) => {
                        push(&rest[..i + close.len()], Token::Comment);
                        rest = &rest[i + close.len()..];
                        state = State::Code;
                    }
                    None => {
                        push(rest, Token::Comment);
                        rest = "";
                    }
                }
            }
            State::LongString(q) => {
                let close: String = [q; 3].iter().collect();
                match rest.find(&close) {
                    Some(i) => {
                        push(&rest[..i + 3], Token::String);
                        rest = &rest[i + 3..];
                        state = State::Code;
                    }
                    None => {
                        push(rest, Token::String);
                        rest = "";
                    }
                }
            }
            State::Code => {
                let (len, token, next) = code_token(lang, rest);
                push(&rest[..len], token);
                rest = &rest[len..];
                state = next;
            }
        }
    }
    (out, state)
}

/// The token at the start of `rest`: its length in bytes, its class and
/// the state after it.
fn code_token(lang: &Lang, rest: &str) -> (usize, Token, State) {
    if lang.line_comments.iter().any(|c| rest.starts_with(c)) {
        return (rest.len(), Token::Comment, State::Code);
    }
    if let Some((open, _)) = lang.block_comment
        && rest.starts_with(open)
    {
        return (open.len(), Token::Comment, State::BlockComment);
    }
    let Some(first) = rest.chars().next() else {
        return (0, Token::Plain, State::Code);
    };
    if lang.quotes.contains(&first) {
        let triple: String = [first; 3].iter().collect();
        if lang.quotes.contains(&'\'') && first != '`' && rest.starts_with(&triple) {
            return (3, Token::String, State::LongString(first));
        }
        return (string_len(rest, first), Token::String, State::Code);
    }
    if first.is_ascii_digit() {
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .unwrap_or(rest.len());
        return (len, Token::Number, State::Code);
    }
    if first.is_alphabetic() || first == '_' {
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..len];
        let token = if lang.keywords.contains(&word) {
            Token::Keyword
        } else if rest[len..].starts_with('(') || rest[len..].starts_with("!(") {
            Token::Function
        } else if lang.capital_types && first.is_uppercase() {
            Token::Type
        } else {
            Token::Plain
        };
        return (len, token, State::Code);
    }
    let len = first.len_utf8();
    let token = if first.is_ascii_punctuation() {
        Token::Punctuation
    } else {
        Token::Plain
    };
    (len, token, State::Code)
}

/// Length of a quoted string starting at `rest` (to the closing quote, a
/// backslash escaping the next character; the rest of the line when open).
fn string_len(rest: &str, quote: char) -> usize {
    let mut escaped = false;
    for (i, c) in rest.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            c if c == quote => return i + c.len_utf8(),
            _ => {}
        }
    }
    rest.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classes(language: &str, code: &str) -> Vec<Vec<(String, Token)>> {
        let lang = lang(language).expect("known");
        let mut state = State::Code;
        code.lines()
            .map(|l| {
                let (tokens, next) = line_tokens(lang, l, state);
                state = next;
                tokens
                    .into_iter()
                    .filter(|(t, _)| !t.trim().is_empty())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn rust_tokens() {
        let lines = classes("rust", "fn add(a: u32) -> Vec<u8> { \"x\\\"y\" } // done");
        let tokens = &lines[0];
        assert_eq!(tokens[0], ("fn".into(), Token::Keyword));
        assert!(tokens.contains(&("add".into(), Token::Function)));
        assert!(tokens.contains(&("Vec".into(), Token::Type)));
        assert!(tokens.contains(&("\"x\\\"y\"".into(), Token::String)));
        assert_eq!(
            tokens.last().expect("comment"),
            &("// done".into(), Token::Comment)
        );
    }

    #[test]
    fn comments_and_long_strings_span_lines() {
        let lines = classes("c", "a /* one\ntwo */ b");
        assert_eq!(lines[1][0], ("two */".into(), Token::Comment));
        let lines = classes("python", "x = '''doc\nstill doc'''\ny = 1");
        assert_eq!(lines[1][0], ("still doc'''".into(), Token::String));
        assert!(lines[2].contains(&("1".into(), Token::Number)));
    }

    #[test]
    fn unknown_languages_are_plain() {
        let lines = highlight("brainfuck", "+[->+<]\nx", Theme::colored());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].spans[0].style, ratatui::style::Style::new());
    }
}

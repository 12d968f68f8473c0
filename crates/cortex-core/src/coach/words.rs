//! What the task's words and the model's answers say, read without a
//! model: the files a prompt names or says to run, whether it asks for a
//! change, a rename it asks for, the test command it implies, and how a
//! reminder names the tool the next reply must call.

use cortex_protocol::ToolName;

/// Files the task says to run, not to change: `run test_x.py`, `python3
/// x.py`, `test_x.py fails`.
pub(crate) fn files_to_run(prompt: &str) -> Vec<String> {
    run_targets(prompt)
        .into_iter()
        .map(|(file, _)| file)
        .collect()
}

/// Files the task says fail when run: `test_x.py fails`.
pub(crate) fn failing_files(prompt: &str) -> Vec<String> {
    run_targets(prompt)
        .into_iter()
        .filter_map(|(file, fails)| fails.then_some(file))
        .collect()
}

/// The files the task says to run, each with whether it says it fails.
fn run_targets(prompt: &str) -> Vec<(String, bool)> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let bare = |w: &str| {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .to_lowercase()
    };
    let mut out: Vec<(String, bool)> = Vec::new();
    for (i, word) in words.iter().enumerate() {
        let verb = bare(word);
        let (target, fails) = match verb.as_str() {
            "run" | "execute" => {
                let next = words.get(i + 1).map(|w| bare(w)).unwrap_or_default();
                let skip = matches!(next.as_str(), "python3" | "python" | "bash" | "sh");
                (words.get(i + 1 + usize::from(skip)), false)
            }
            "python3" | "python" | "bash" | "sh" => (words.get(i + 1), false),
            "fails" | "failed" | "failing" if i > 0 => (words.get(i - 1), true),
            _ => (None, false),
        };
        for file in target.map(|w| named_files(w)).unwrap_or_default() {
            match out.iter_mut().find(|(f, _)| *f == file) {
                Some(seen) => seen.1 |= fails,
                None => out.push((file, fails)),
            }
        }
    }
    out
}

/// What a question asks for that `answer` does not give ("the file's
/// path", "the number", "the exception's name", "the name"), or `None`: a
/// question asking for a file or a count answered "I found the file that
/// defines it".
pub(super) fn missing_from_answer(
    prompt: &str,
    answer: &str,
    files: &[String],
) -> Option<&'static str> {
    let lower = prompt.to_lowercase();
    let wants_file = [
        "which file",
        "what file",
        "which files",
        "where is",
        "where are",
    ]
    .iter()
    .any(|p| lower.contains(p))
        || lower.contains("answer with its path")
        || lower.contains("answer with the path");
    let wants_count = lower.contains("how many");
    let names_file =
        !named_files(answer).is_empty() || answer.split_whitespace().any(|w| w.contains('/'));
    let answer_lower = answer.to_lowercase();
    let has_number = answer.chars().any(|c| c.is_ascii_digit())
        || answer_lower
            .split(|c: char| !c.is_alphabetic())
            .any(|x| NUMBER_WORDS.contains(&x));
    // "Which exception does parse_age raise…?" answered "I found the
    // exception at line 4".
    let wants_exception = (lower.contains("which exception") || lower.contains("what exception"))
        && !answer.split(|c: char| !c.is_alphanumeric()).any(|w| {
            w.starts_with(|c: char| c.is_ascii_uppercase())
                && [
                    "Error",
                    "Exception",
                    "Warning",
                    "Exit",
                    "Interrupt",
                    "Iteration",
                ]
                .iter()
                .any(|end| w.ends_with(end))
        });
    let wants_code_name = [
        "which function",
        "what function",
        "which method",
        "which class",
        "what calls",
        "who calls",
    ]
    .iter()
    .any(|p| lower.contains(p));
    Some(if wants_file && !names_file {
        "the file's path"
    } else if wants_count && !has_number {
        "the number"
    } else if wants_exception {
        "the exception's name"
    } else if wants_code_name && !names_code(answer, prompt, files) {
        "the name"
    } else {
        return None;
    })
}

/// Whether `answer` names something in code that `prompt` does not: a word
/// written as code (in backticks, before `(`, with `_` or a capital inside
/// it) other than the prompt's own words, the tools' names and the names
/// of the workspace's folders and files (`files`). Asked "Which function
/// calls vat()?", the 1.5B answered with what its `grep` call did, in
/// `billing`.
fn names_code(answer: &str, prompt: &str, files: &[String]) -> bool {
    let a_path = |word: &str| {
        files.iter().any(|f| {
            f.split('/')
                .any(|part| part == word || part.split('.').next() == Some(word))
        })
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut at = 0;
    while let Some(start) = answer[at..].find(ident).map(|i| at + i) {
        let len = answer[start..]
            .find(|c| !ident(c))
            .unwrap_or(answer.len() - start);
        let word = &answer[start..start + len];
        at = start + len;
        let before = answer[..start].chars().next_back();
        let after = answer[at..].chars().next();
        // A path's extension or folder (`billing/tax.py`: "py")
        // names no code; a method (`.total(`) does.
        let in_path = matches!(before, Some('.' | '/')) && after != Some('(');
        let as_code = !in_path
            && (before == Some('`')
                || matches!(after, Some('`' | '('))
                || word.contains('_')
                || word.chars().skip(1).any(|c| c.is_ascii_uppercase()));
        if as_code
            && !word.starts_with(|c: char| c.is_ascii_digit())
            && !mentions_word(prompt, word)
            && word.parse::<ToolName>().is_err()
            && !a_path(word)
        {
            return true;
        }
    }
    false
}

/// How a reminder names the one tool the next reply must call (the
/// decision itself is the reminder's `NextReply`).
pub(super) fn call_now(tool: ToolName) -> String {
    format!("Call {tool} now")
}

/// The glob pattern of the files a question counts ("How many .py files
/// are in the src folder?" → `src/**/*.py`): the paths it lists are the
/// count. The 0.5B answered such a question from the listing in its
/// context, wrongly, and asked to check, read a file.
pub(crate) fn counted_files_pattern(prompt: &str) -> Option<String> {
    let lower = prompt.to_lowercase();
    let words: Vec<&str> = lower
        .split_whitespace()
        .map(|w| w.trim_matches(|c: char| matches!(c, '?' | ',' | '`' | '"' | '\'')))
        .collect();
    // "how many .py files": what is counted is files of a kind.
    let extension = words.windows(4).find_map(|w| {
        let counts_files = w[0] == "how" && w[1] == "many" && w[3] == "files";
        let ext = w[2].strip_prefix('*').unwrap_or(w[2]).strip_prefix('.')?;
        let plain = (1..=6).contains(&ext.len()) && ext.chars().all(|c| c.is_ascii_alphanumeric());
        (counts_files && plain).then(|| format!("*.{ext}"))
    })?;
    // "in the src folder", "in src/", "under lib/".
    let folder = words.windows(4).find_map(|w| {
        let named = matches!(w[0], "in" | "under")
            && w[1] == "the"
            && matches!(w[3], "folder" | "directory" | "dir");
        named.then(|| w[2].trim_end_matches('/').to_owned())
    });
    let folder = folder.or_else(|| {
        words.windows(2).find_map(|w| {
            let named = matches!(w[0], "in" | "under") && w[1].len() > 1 && w[1].ends_with('/');
            named.then(|| w[1].trim_end_matches('/').to_owned())
        })
    });
    Some(match folder {
        Some(folder)
            if !folder.is_empty() && !folder.starts_with('/') && !folder.contains("..") =>
        {
            format!("{folder}/**/{extension}")
        }
        _ => extension,
    })
}

/// Number words a count may be given in.
pub(super) const NUMBER_WORDS: &[&str] = &[
    "zero", "no", "none", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
    "ten", "eleven", "twelve",
];

/// Whether `word` occurs in `text` as a whole word.
pub(super) fn mentions_word(text: &str, word: &str) -> bool {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// `rename X to Y` in the prompt (backticks, quotes, `()` and a kind word
/// such as "function" allowed), as (X, Y) pairs: more than one when they
/// follow each other ("rename the parameter c to celsius and the variable f
/// to fahrenheit").
pub(super) fn rename_pairs(prompt: &str) -> Vec<(String, String)> {
    const KINDS: &[&str] = &[
        "the",
        "function",
        "method",
        "variable",
        "class",
        "constant",
        "field",
        "type",
        "parameter",
        "argument",
        "attribute",
        "property",
    ];
    let clean = |w: &str| -> String {
        w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .trim_end_matches("()")
            .trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'))
            .to_owned()
    };
    let identifier = |s: &str| {
        !s.is_empty() && s.chars().all(|c| c.is_alphanumeric() || c == '_') && !s.contains('.')
    };
    let words: Vec<&str> = prompt.split_whitespace().collect();
    let Some(start) = words
        .iter()
        .position(|w| w.to_lowercase().trim_matches(|c: char| !c.is_alphabetic()) == "rename")
    else {
        return Vec::new();
    };
    let mut rest = words[start + 1..].iter().peekable();
    let mut pairs = Vec::new();
    loop {
        while rest
            .peek()
            .is_some_and(|w| KINDS.contains(&w.to_lowercase().as_str()))
        {
            rest.next();
        }
        let (Some(old), Some(to), Some(new)) = (rest.next(), rest.next(), rest.next()) else {
            break;
        };
        let (old, new) = (clean(old), clean(new));
        if to.to_lowercase() != "to" || !identifier(&old) || !identifier(&new) || old == new {
            break;
        }
        pairs.push((old, new));
        if rest.next_if(|w| w.eq_ignore_ascii_case("and")).is_none() {
            break;
        }
    }
    pairs
}

/// Whether the prompt asks for a change rather than an answer: one of the
/// usual verbs of a coding task appears as a word.
pub(super) fn asks_for_work(prompt: &str) -> bool {
    const VERBS: &[&str] = &[
        "fix",
        "add",
        "change",
        "rename",
        "create",
        "write",
        "remove",
        "delete",
        "update",
        "make",
        "implement",
        "bump",
        "turn",
        "replace",
        "move",
        "refactor",
        "set",
    ];
    asks_with(prompt, VERBS)
}

/// Whether one of `verbs` (lower case) is used as a verb in `prompt`. A
/// word written as code (`add()`, `make.py`) names something, and one after
/// an article is a noun ("the add function" named a function, and the
/// test the task said to run was taken for one it asked to write: the
/// setup's own turn); neither asks for anything.
pub(super) fn asks_with(prompt: &str, verbs: &[&str]) -> bool {
    let mut after_article = false;
    prompt.split_whitespace().any(|w| {
        let code = w.contains(['(', '`', '_'])
            || w.trim_end_matches(['.', ',', '?', '!', ':', ';'])
                .contains('.');
        let lower = w.to_lowercase();
        let noun = std::mem::replace(
            &mut after_article,
            matches!(lower.as_str(), "the" | "a" | "an"),
        );
        !code
            && !noun
            && lower
                .split(|c: char| !c.is_ascii_alphabetic())
                .any(|part| verbs.contains(&part))
    })
}

/// The languages of a fenced block of shell commands.
pub(super) const SHELLS: &[&str] = &["sh", "bash", "shell", "console", "zsh"];

/// The first command of `answer`'s shell blocks that is not one of `ran`
/// (written any way: `claims::same_command`), when the answer also says
/// what a command prints: an output made up, not read ("The output will
/// be: 3" for a `grep -c` that never ran, after a grep that had shown 4
/// lines). A line starting with the name of a tool that is no command
/// (`read_file cli.py`) is the model's own call narrated.
pub(super) fn imagined_output(answer: &str, ran: &[String]) -> Option<String> {
    const CLAIMS: &[&str] = &[
        "output will be",
        "output is",
        "will output",
        "should output",
        "would output",
        "will print",
        "would print",
        "should print",
        "prints:",
        "output:",
        "result will be",
    ];
    let lower = answer.to_lowercase();
    if !CLAIMS.iter().any(|claim| lower.contains(claim)) {
        return None;
    }
    answer.split("```").skip(1).step_by(2).find_map(|block| {
        let (lang, body) = block.split_once('\n')?;
        if !SHELLS.contains(&lang.trim().to_lowercase().as_str()) {
            return None;
        }
        let command = body
            .lines()
            .map(|line| line.trim().trim_start_matches("$ ").trim())
            .find(|line| !line.is_empty() && !line.starts_with('#'))?;
        let first = command.split_whitespace().next()?;
        // `grep` is a command as well as a tool.
        let narrated = first
            .parse::<ToolName>()
            .is_ok_and(|tool| !matches!(tool, ToolName::Grep | ToolName::Bash));
        (!narrated && !ran.iter().any(|r| same_command(r, command))).then(|| command.to_owned())
    })
}

/// `command` as words, written one way: a `bash -c "…"` or `sh -c '…'`
/// wrapper taken off, `python` as `python3` without its `-B` and `-u`
/// flags, and `./` taken off paths.
pub(super) fn plain_words(command: &str) -> Vec<String> {
    let command = command.trim();
    let inner = ["bash -c ", "sh -c "]
        .iter()
        .find_map(|wrapper| command.strip_prefix(wrapper))
        .map(|rest| rest.trim().trim_matches(|c| c == '"' || c == '\''))
        .unwrap_or(command);
    let mut words: Vec<String> = Vec::new();
    for word in inner.split_whitespace() {
        let python = words.first().is_some_and(|w| w == "python3");
        if python && words.len() == 1 && matches!(word, "-B" | "-u") {
            continue;
        }
        let word = match word {
            "python" => "python3",
            w => w.strip_prefix("./").unwrap_or(w),
        };
        words.push(word.to_owned());
    }
    words
}

/// Whether `a` and `b` are one command written two ways ([`plain_words`]).
pub(super) fn same_command(a: &str, b: &str) -> bool {
    let a = plain_words(a);
    !a.is_empty() && a == plain_words(b)
}

/// A fenced block in one of `langs` (the text is lower-cased).
pub(super) fn has_fence(lower: &str, langs: &[&str]) -> bool {
    lower.split("```").skip(1).step_by(2).any(|block| {
        let lang = block.lines().next().unwrap_or("").trim();
        langs.contains(&lang)
    })
}

/// `./a.py` and `a.py` are one file.
pub(crate) fn normalise(path: &str) -> String {
    path.trim().trim_start_matches("./").to_owned()
}

pub(crate) fn same_file(changed: &str, named: &str) -> bool {
    changed == named || changed.ends_with(&format!("/{named}"))
}

/// Whether `answer` shows code in a fenced block of a language files are
/// written in (not a shell session): a file's new text, for the user to
/// paste.
pub(super) fn shows_code(answer: &str) -> bool {
    has_fence(
        &answer.to_lowercase(),
        &[
            "python", "py", "json", "toml", "yaml", "js", "rust", "markdown", "md",
        ],
    )
}

/// How a file the task says to run is run: its interpreter by extension
/// (told only "run check.py", the 1.5B ran `bash check.py`).
pub(crate) fn run_command(file: &str) -> String {
    match file.rsplit_once('.').map(|(_, ext)| ext) {
        Some("py") => format!("python3 {file}"),
        Some("sh") => format!("sh {file}"),
        Some("js" | "mjs") => format!("node {file}"),
        _ if file.contains('/') => file.to_owned(),
        _ => format!("./{file}"),
    }
}

/// Whether two of the `named` files follow each other in `prompt` joined
/// only by "and", "or" or a comma ("client.py and worker.py", "a.py, b.py").
pub(super) fn lists_files(prompt: &str, named: &[String]) -> bool {
    let mut places: Vec<(usize, usize)> = named
        .iter()
        .filter_map(|n| prompt.find(n.as_str()).map(|at| (at, at + n.len())))
        .collect();
    places.sort();
    places.windows(2).any(|pair| {
        let between = prompt[pair[0].1..pair[1].0]
            .trim_matches(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"'));
        matches!(between, "and" | "or" | "," | ", and" | "&")
    })
}

/// Words of the prompt that look like file names (`name.ext`), in order,
/// without repeats; trailing punctuation dropped.
pub(crate) fn named_files(prompt: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in
        prompt.split(|c: char| c.is_whitespace() || matches!(c, ',' | '`' | '\'' | '"' | '(' | ')'))
    {
        let word = normalise(word.trim_end_matches(['.', ':', ';', '?', '!']));
        let Some((stem, ext)) = word.rsplit_once('.') else {
            continue;
        };
        // `e.g` and `i.e` are not files; `main.c` is; `1..n` is a range.
        let plausible = !stem.is_empty()
            && !stem.ends_with('.')
            && (ext.len() >= 2 || stem.len() >= 2)
            && (1..=5).contains(&ext.len())
            && ext.chars().all(|c| c.is_ascii_alphanumeric())
            && ext.chars().any(|c| c.is_ascii_alphabetic())
            && !word.contains("://");
        if plausible && !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// Whether the task asks what some code returns, prints or raises for
/// given inputs ("What does Square.describe() return for a square of side
/// 2?"), or as a value: a question running the code answers better than
/// reading it. "What does add() return?" asks what it does, not a value.
pub(super) fn asks_what_code_does(prompt: &str) -> bool {
    const ASKS: &[&str] = &[
        "what does",
        "what will",
        "what would",
        "which exception",
        "what exception",
    ];
    const DOES: &[&str] = &["return", "print", "output", "raise", "evaluate"];
    let lower = prompt.to_lowercase();
    let concrete = lower.chars().any(|c| c.is_ascii_digit()) || lower.contains("value");
    concrete && ASKS.iter().any(|a| lower.contains(a)) && DOES.iter().any(|d| lower.contains(d))
}

/// The test command the prompt names, else one the workspace implies.
pub(super) fn test_command(prompt: &str, files: &[String]) -> Option<String> {
    let words: Vec<&str> = prompt.split_whitespace().collect();
    for (i, word) in words.iter().enumerate() {
        let word = word.trim_matches(|c: char| matches!(c, '`' | '\'' | '"'));
        let next = words
            .get(i + 1)
            .map(|w| w.trim_matches(|c: char| matches!(c, '`' | '\'' | '"' | '.' | ',')));
        match (word, next) {
            ("python3" | "python", Some(script)) if script.ends_with(".py") => {
                return Some(format!("python3 {script}"));
            }
            ("cargo" | "npm" | "go" | "make", Some("test")) => return Some(format!("{word} test")),
            ("pytest", _) => return Some("pytest".to_owned()),
            _ => {}
        }
    }
    let name = |f: &String| f.rsplit('/').next().unwrap_or(f).to_owned();
    let is_test =
        |n: &str| n.ends_with(".py") && (n.starts_with("test_") || n.ends_with("_test.py"));
    // A test the task asks to write and run ("Write test_slug.py … and run
    // it with python3") is run as it names it.
    if let Some(test) = named_files(prompt).iter().find(|f| is_test(&name(f))) {
        return Some(format!("python3 {test}"));
    }
    // "Fix build.sh and run it": the one file it names, run as a script is.
    let named = named_files(prompt);
    if prompt.to_lowercase().contains("run it")
        && let [file] = named.as_slice()
        && [".py", ".sh", ".js", ".mjs"]
            .iter()
            .any(|ext| file.ends_with(ext))
    {
        return Some(run_command(file));
    }
    if let Some(test) = files.iter().find(|f| is_test(&name(f))) {
        return Some(format!("python3 {test}"));
    }
    let has = |n: &str| files.iter().any(|f| f == n);
    if has("Cargo.toml") {
        Some("cargo test".to_owned())
    } else if has("go.mod") {
        Some("go test ./...".to_owned())
    } else {
        None
    }
}

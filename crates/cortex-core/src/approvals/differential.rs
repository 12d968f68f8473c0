//! The matcher against bash itself (issue 38): every candidate the rules
//! are said to cover is run by a real `bash -c` under `strace` (every
//! `execve`, with its environment) and `set -x` (every builtin, function
//! and assignment, nested `bash -c` included through an exported
//! `SHELLOPTS`), in a fresh temporary git repository with a minimal
//! environment. A covered candidate passes only if every program bash
//! executed and every command it traced starts with a rule's words (or is a
//! wrapper whose own inner command is traced separately), and no `execve`
//! carried an environment other than the one bash started with.
//!
//! Run with `cargo test --workspace --locked --lib approvals::differential`.

use super::corpus::{HAND_WRITTEN, generated};
use super::matcher::bash_uncovered;
use super::shell::analyse;
use cortex_protocol::RuleMatch;
use std::path::Path;
use std::process::{Command, Stdio};

/// The rules every candidate is judged under.
const RULES: &[&[&str]] = &[&["echo"], &["ls"], &["git", "status"], &["true"]];

/// Programs that run the command after them unchanged: their own `execve`
/// is accepted (the environment check still applies) because the command
/// they run is an `execve` or a traced line of its own, checked in turn.
const WRAPPERS: &[&str] = &["bash", "env", "timeout", "nice", "nohup", "setsid", "xargs"];

/// Environment entries bash itself sets for every child: not a change the
/// command made. `SHELLOPTS` is exported only by this harness (to trace
/// nested shells), so a nested `bash -e` re-exports it changed; an
/// assignment to it is still caught, as a traced line.
const BASH_OWN: &[&str] = &["_", "SHLVL", "PWD", "OLDPWD", "SHELLOPTS"];

/// `SHELLOPTS` exactly as bash re-exports it, so a child's copy is equal.
const SHELLOPTS: &str = "braceexpand:hashall:interactive-comments:xtrace";

fn rules() -> Vec<RuleMatch> {
    RULES
        .iter()
        .map(|r| RuleMatch::Bash {
            prefix: r.iter().map(|w| (*w).to_owned()).collect(),
        })
        .collect()
}

fn base(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

fn rule_allows(words: &[String]) -> bool {
    let Some((first, rest)) = words.split_first() else {
        return true;
    };
    RULES.iter().any(|rule| {
        rule[0] == base(first)
            && rule.len() <= words.len()
            && rule[1..].iter().zip(rest).all(|(want, got)| want == got)
    })
}

struct Exec {
    path: String,
    argv: Vec<String>,
    env: Vec<String>,
}

/// What bash did: its `execve`s (the first is bash itself) and its trace.
struct Run {
    execs: Vec<Exec>,
    traced: Vec<Vec<String>>,
}

/// Run `script` the way the `bash` tool would, traced, in a fresh folder.
fn run(script: &str) -> Result<Run, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let ws = dir.path();
    let home = ws.join(".home");
    std::fs::create_dir(&home).map_err(|e| e.to_string())?;
    let git = Command::new("git")
        .args(["init", "-q", "."])
        .current_dir(ws)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .env("HOME", &home)
        .status()
        .map_err(|e| e.to_string())?;
    if !git.success() {
        return Err("git init failed".into());
    }
    let log_dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let log = log_dir.path().join("exec");
    let trace = log_dir.path().join("trace");
    // `sh` opens the trace descriptor and is gone (exec) before `strace`
    // starts; `timeout` bounds a candidate that would hang.
    let status = Command::new("/bin/sh")
        .arg("-c")
        .arg(r#"exec 9>"$0"; exec "$@""#)
        .arg(&trace)
        .args([
            "timeout",
            "-k",
            "2",
            "20",
            "env",
            "-i",
            "PATH=/usr/bin:/bin",
        ])
        .arg(format!("HOME={}", home.display()))
        .arg(format!("SHELLOPTS={SHELLOPTS}"))
        .args([
            "PS4=+ ",
            "BASH_XTRACEFD=9",
            "strace",
            "-f",
            "-ff",
            "-qq",
            "-v",
        ])
        .args([
            "-s",
            "65536",
            "-e",
            "trace=execve",
            "-e",
            "signal=none",
            "-o",
        ])
        .arg(&log)
        .args(["bash", "-c", script])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if status.code() == Some(124) {
        return Err(format!("{script:?} timed out"));
    }
    let mut logs: Vec<_> = std::fs::read_dir(log_dir.path())
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("exec"))
        })
        .collect();
    // Process ids grow: the first log is bash's.
    logs.sort_by_key(|p| {
        p.extension()
            .and_then(|e| e.to_str()?.parse::<u64>().ok())
            .unwrap_or(0)
    });
    let mut execs = Vec::new();
    for path in logs {
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        execs.extend(text.lines().filter_map(parse_execve));
    }
    let text = std::fs::read_to_string(&trace).unwrap_or_default();
    Ok(Run {
        execs,
        traced: trace_lines(&text),
    })
}

/// `execve("/usr/bin/ls", ["ls"], ["A=b"]) = 0`, failed ones included.
fn parse_execve(line: &str) -> Option<Exec> {
    let rest = line.split_once("execve(")?.1;
    let mut chars = rest.chars().peekable();
    let mut strings: Vec<Vec<String>> = vec![Vec::new()];
    let mut depth = 0;
    while let Some(c) = chars.next() {
        match c {
            '"' => {
                let mut s = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next()? {
                            'n' => s.push('\n'),
                            't' => s.push('\t'),
                            'x' => {
                                let hex: String = chars.by_ref().take(2).collect();
                                s.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
                            }
                            other => s.push(other),
                        },
                        other => s.push(other),
                    }
                }
                strings.last_mut()?.push(s);
            }
            '[' => {
                depth += 1;
                strings.push(Vec::new());
            }
            ']' => depth -= 1,
            ')' if depth == 0 => break,
            _ => {}
        }
    }
    let mut parts = strings.into_iter();
    let path = parts.next()?.into_iter().next()?;
    Some(Exec {
        path,
        argv: parts.next()?,
        env: parts.next()?,
    })
}

/// `set -x` lines as words (continuation lines joined; `+` levels and
/// bash's single quoting removed).
fn trace_lines(text: &str) -> Vec<Vec<String>> {
    let mut lines: Vec<String> = Vec::new();
    for line in text.lines() {
        match lines.last_mut() {
            Some(last) if !line.starts_with('+') => {
                last.push('\n');
                last.push_str(line);
            }
            _ => lines.push(line.to_owned()),
        }
    }
    lines
        .iter()
        .map(|line| {
            let line = line.trim_start_matches('+').strip_prefix(' ').unwrap_or("");
            let mut words = Vec::new();
            let mut word = String::new();
            let mut quoted = false;
            let mut started = false;
            let mut escaped = false;
            for c in line.chars() {
                if escaped {
                    word.push(c);
                    escaped = false;
                    continue;
                }
                match c {
                    '\'' => {
                        quoted = !quoted;
                        started = true;
                    }
                    ' ' if !quoted => {
                        if started {
                            words.push(std::mem::take(&mut word));
                        }
                        started = false;
                    }
                    '\\' if !quoted => {
                        escaped = true;
                        started = true;
                    }
                    c => {
                        word.push(c);
                        started = true;
                    }
                }
            }
            if started {
                words.push(word);
            }
            words
        })
        .collect()
}

/// What bash did that the rules do not cover (empty: agreement).
fn violations(run: &Run) -> Vec<String> {
    let mut found = Vec::new();
    let Some(first) = run.execs.first() else {
        return vec!["strace recorded no execve".into()];
    };
    let clean = |env: &[String]| {
        let mut env: Vec<&String> = env
            .iter()
            .filter(|e| !BASH_OWN.contains(&e.split('=').next().unwrap_or("")))
            .collect();
        env.sort();
        env.into_iter().cloned().collect::<Vec<_>>()
    };
    let start = clean(&first.env);
    for exec in &run.execs[1..] {
        let from_path = ["/usr/bin/", "/bin/"]
            .iter()
            .any(|d| exec.path.strip_prefix(d).is_some_and(|n| !n.contains('/')));
        let name = base(&exec.path);
        let wrapper = WRAPPERS.contains(&name);
        if !from_path || !(wrapper || rule_allows(&exec.argv)) {
            found.push(format!("bash executed {} {:?}", exec.path, exec.argv));
        }
        if clean(&exec.env) != start {
            found.push(format!(
                "{} {:?} ran with a changed environment",
                exec.path, exec.argv
            ));
        }
    }
    for words in &run.traced {
        let first = words.first().map(String::as_str).unwrap_or("");
        // `[[ … ]]` and `case WORD in` are traced but run nothing: the
        // reader judged their words.
        let keyword = first == "[[" || (first == "case" && words.last().is_some_and(|w| w == "in"));
        if !(keyword || WRAPPERS.contains(&first) || rule_allows(words)) {
            found.push(format!("bash ran {words:?}"));
        }
    }
    found
}

fn covered(script: &str, ws: &Path) -> bool {
    bash_uncovered(&analyse(script), &rules(), ws).is_empty()
}

/// Whether strace can trace here (ptrace may be refused in a container).
fn strace_works() -> Result<(), String> {
    let out = Command::new("strace")
        .args(["-f", "-qq", "-e", "trace=execve", "-o", "/dev/null", "true"])
        .output()
        .map_err(|e| format!("strace cannot start: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_owned())
    }
}

#[test]
fn the_matcher_agrees_with_bash() {
    if let Err(reason) = strace_works() {
        println!("SKIP approvals::differential: {reason}");
        return;
    }
    // Self-check: the comparison must catch a wrong judgement.
    for wrong in [
        "PATH=/tmp ls",
        "x=1; ls",
        "command ls",
        "env -i ls",
        "cat /dev/null",
    ] {
        let run = run(wrong).expect("run");
        assert!(
            !violations(&run).is_empty(),
            "the trace comparison missed a wrong verdict for {wrong:?}"
        );
    }
    for right in ["ls", "echo hi | ls", "git status"] {
        let run = run(right).expect("run");
        assert_eq!(violations(&run), Vec::<String>::new(), "{right:?}");
    }
    // Where the matcher judges (no links in this folder).
    let judge = tempfile::tempdir().expect("tempdir");
    let corpus: Vec<String> = HAND_WRITTEN
        .iter()
        .map(|s| (*s).to_owned())
        .chain(generated())
        .collect();
    let (mut ran, mut wrong) = (0, Vec::new());
    for script in &corpus {
        if !covered(script, judge.path()) {
            continue;
        }
        ran += 1;
        match run(script) {
            Ok(run) => {
                let v = violations(&run);
                if !v.is_empty() {
                    wrong.push(format!("{script:?}: {}", v.join("; ")));
                }
            }
            Err(e) => wrong.push(format!("{script:?}: {e}")),
        }
    }
    println!(
        "approvals::differential: {} candidates ({} hand-written), {ran} judged covered and run \
         under bash, {} disagreements",
        corpus.len(),
        HAND_WRITTEN.len(),
        wrong.len()
    );
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    // The corpus is not vacuous: plenty is covered, and plenty is not.
    assert!(ran >= 100, "only {ran} covered candidates");
    assert!(
        corpus.len() - ran >= 200,
        "only {} refused",
        corpus.len() - ran
    );
}

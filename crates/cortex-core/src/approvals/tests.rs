//! The rule matcher and the deny list over a table of tricky commands.

use super::analysis::Word;
use super::deny::{DenyContext, check_bash, check_write};
use super::matcher::{Subject, mcp_name};
use super::shell::analyse;
use cortex_protocol::{BashArgs, RuleMatch, ToolArgs};
use std::path::Path;

const WS: &str = "/work/repo";

fn bash(prefixes: &[&str]) -> Vec<RuleMatch> {
    prefixes
        .iter()
        .map(|p| RuleMatch::Bash {
            prefix: p.split(' ').map(str::to_owned).collect(),
        })
        .collect()
}

fn subject(command: &str) -> Subject {
    let args = ToolArgs::Bash(BashArgs {
        command: command.to_owned(),
        timeout_ms: None,
        background: None,
    });
    Subject::of("bash", Some(&args)).expect("bash needs approval")
}

fn covered(command: &str, rules: &[&str]) -> bool {
    subject(command)
        .uncovered(&bash(rules), Path::new(WS))
        .is_empty()
}

#[test]
fn argv_is_read_with_quotes_and_escapes_removed() {
    let a = analyse(r#"git "status" --sh'o'rt \-v"#);
    assert!(a.opaque.is_empty(), "{:?}", a.opaque);
    let argv: Vec<_> = a.commands[0].argv.iter().map(Word::text).collect();
    assert_eq!(argv, ["git", "status", "--short", "-v"]);
}

/// (command, rules, covered): every part of a compound command needs a rule.
const TABLE: &[(&str, &[&str], bool)] = &[
    ("git status", &["git status"], true),
    ("git status --short", &["git status"], true),
    ("git  'status'  --short", &["git status"], true),
    ("git stat", &["git status"], false),
    ("git", &["git status"], false),
    ("git status && rm -rf x", &["git status"], false),
    ("git status && touch x", &["git status"], false),
    ("git status; rm x", &["git status"], false),
    ("git status || rm x", &["git status"], false),
    ("git status | sh", &["git status"], false),
    ("git status | grep M", &["git status", "grep"], true),
    ("(git status; rm x)", &["git status"], false),
    ("{ git status; rm x; }", &["git status"], false),
    ("git status $(rm -rf x)", &["git status"], false),
    ("git status `rm -rf x`", &["git status"], false),
    ("git status \"$(rm x)\"", &["git status"], false),
    ("git status <(rm x)", &["git status"], false),
    ("echo $(git status)", &["echo", "git status"], true),
    ("git status > out.txt", &["git status"], true),
    ("git status > /etc/passwd", &["git status"], false),
    ("git status > \"$F\"", &["git status"], false),
    ("git status 2>/dev/null", &["git status"], true),
    ("cat <<EOF\n$(rm -rf x)\nEOF", &["cat"], false),
    ("cat <<'EOF'\n$(rm -rf x)\nEOF", &["cat"], true),
    ("cat <<EOF\nplain $HOME text\nEOF", &["cat"], true),
    // Issue 38: an environment change is never covered (was `true`).
    ("env X=1 git status", &["git status"], false),
    ("env X=1 rm -rf x", &["env"], false),
    ("X=1 git status", &["git status"], false),
    ("X=$(rm x) git status", &["git status"], false),
    ("bash -c 'git status'", &["git status"], true),
    ("bash -c 'git status; rm -rf x'", &["git status"], false),
    // Issue 38: `sh` is not bash; its reading may differ (was `true`).
    ("sh -ec \"git status\"", &["git status"], false),
    ("bash -ec \"git status\"", &["git status"], true),
    ("bash -c \"$CMD\"", &["bash"], false),
    ("bash", &["bash"], false),
    ("sudo git status", &["git status", "sudo"], false),
    (
        "sudo -u root git status",
        &["sudo -u root git status"],
        false,
    ),
    ("ls | xargs rm", &["ls", "xargs"], false),
    ("ls | xargs rm", &["ls", "rm"], true),
    ("ls | xargs -n 1 git status", &["ls", "git status"], true),
    ("find . -name x -exec rm {} ;", &["find"], false),
    ("timeout 5 git status", &["git status"], true),
    ("nohup rm x", &["nohup"], false),
    ("eval git status", &["eval", "git status"], false),
    ("$GIT status", &["git status"], false),
    ("g$'\\x69't status", &["git status"], false),
    (
        "if true; then git status; fi",
        &["true", "git status"],
        true,
    ),
    ("for f in a b; do rm $f; done", &["git status"], false),
    ("f() { rm -rf x; }; f", &["f"], false),
    ("git status &", &["git status"], true),
];

/// Issue 38: what a parser sees but bash runs differently. Each line was a
/// hole (or is a guard next to one): covered must be as given.
const HOLES: &[(&str, &[&str], bool)] = &[
    // Assignments, prefix and standalone, and builtins that assign.
    ("PATH=/tmp ls", &["ls"], false),
    ("PATH=/tmp; ls", &["ls"], false),
    ("x=1 true", &["true"], false),
    ("BASH_ENV=/tmp/x bash -c ls", &["ls"], false),
    ("GIT_DIR=/tmp/x git status", &["git status"], false),
    ("LD_PRELOAD=/tmp/x.so ls", &["ls"], false),
    ("export PATH=/tmp; ls", &["export", "ls"], false),
    ("read PATH <<< /tmp; ls", &["read", "ls"], false),
    ("printf -v PATH /tmp; ls", &["printf", "ls"], false),
    ("for PATH in /tmp; do ls; done", &["ls"], false),
    ("echo ${PATH:=/tmp}; ls", &["echo", "ls"], false),
    // No command at all.
    ("x=1", &["true"], false),
    ("> f", &["true"], false),
    ("# only a comment", &["true"], false),
    ("true; > f", &["true"], false),
    // Code evaluated inside data.
    ("echo $(( x ))", &["echo"], false),
    ("echo $[x]", &["echo"], false),
    ("(( x )) && ls", &["ls"], false),
    ("[[ $x -eq 1 ]] && ls", &["ls"], false),
    ("[[ -v x ]] && ls", &["ls"], false),
    ("echo ${a[$i]}", &["echo"], false),
    ("echo ${x@P}", &["echo"], false),
    ("echo ${x@E}", &["echo"], false),
    ("echo ${!x}", &["echo"], false),
    ("echo ${x:$y}", &["echo"], false),
    ("echo $x ${x:-y} ${#x} ${x%.rs}", &["echo"], true),
    ("[[ $x == y ]] && ls", &["ls"], true),
    // Builtins that change what later names run.
    ("exec ls", &["ls"], false),
    ("command ls", &["ls"], false),
    ("builtin echo hi", &["echo"], false),
    ("trap ls EXIT; ls", &["trap", "ls"], false),
    ("alias ls=true; ls", &["alias", "ls"], false),
    ("enable -n echo; echo hi", &["enable", "echo"], false),
    ("echo() { ls; }; echo hi", &["echo", "ls"], false),
    ("coproc ls", &["ls"], false),
    // Wrappers.
    ("env ls", &["ls"], true),
    ("env -i ls", &["ls"], false),
    ("env -u HOME ls", &["ls"], false),
    ("nice ls", &["ls"], true),
    ("timeout 5 ls", &["ls"], true),
    ("stdbuf -o0 ls", &["ls"], false),
    ("find . -delete -exec ls {} ;", &["ls"], false),
    (
        "echo status | xargs -I status git status",
        &["echo", "git status"],
        false,
    ),
    ("sh -c 'echo hi'", &["echo"], false),
    ("bash -c 'echo hi'", &["echo"], true),
    ("git -c alias.x='!ls' x", &["git"], false),
    ("git --exec-path=/tmp status", &["git"], false),
    ("git -C /tmp status", &["git"], false),
    // Words the shell expands: never equal to a rule word.
    ("git sta*", &["git sta*"], false),
    ("{echo,hi}", &["{echo,hi}"], false),
    ("ls *.rs", &["ls"], true),
    ("find . -name x -exec ls {} ;", &["find", "ls"], false),
    // A changed folder: relative targets are no longer the workspace's.
    ("cd / && echo x > etc/passwd", &["cd", "echo"], false),
];

#[test]
fn issue_38_holes_are_closed() {
    let mut wrong = Vec::new();
    for (command, rules, expected) in HOLES {
        let got = covered(command, rules);
        if got != *expected {
            let reasons = subject(command).uncovered(&bash(rules), Path::new(WS));
            wrong.push(format!(
                "{command:?} under {rules:?}: covered={got}, expected {expected} ({reasons:?})"
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

#[test]
fn always_never_stores_a_rule_wider_than_the_command() {
    let ws = Path::new(WS);
    let stored = |command: &str| subject(command).rules_for_always(&[], ws);
    // A static command: exactly its argv.
    assert_eq!(stored("ls -la src"), bash(&["ls -la src"]));
    // A dynamic word, a wrapper, an assignment: nothing (a prefix of the
    // static words would cover commands the user never saw).
    for command in [
        "git status $(date)",
        "echo $HOME",
        "rm *.o",
        "timeout 5 ls -la",
        "env ls",
        "X=1 ls",
        "bash -c 'ls -la'",
    ] {
        assert_eq!(stored(command), Vec::new(), "{command:?}");
    }
}

#[test]
fn a_redirect_through_a_link_out_of_the_workspace_is_not_covered() {
    let ws = tempfile::tempdir().expect("tempdir");
    let out = tempfile::tempdir().expect("tempdir");
    let ws_path = ws.path();
    std::os::unix::fs::symlink(out.path(), ws_path.join("link")).expect("symlink");
    std::os::unix::fs::symlink(out.path().join("f"), ws_path.join("flink")).expect("symlink");
    std::os::unix::fs::symlink("/nonexistent/x", ws_path.join("dangling")).expect("symlink");
    std::fs::create_dir(ws_path.join("sub")).expect("mkdir");
    let rules = bash(&["echo"]);
    let covered = |command: &str| subject(command).uncovered(&rules, ws_path).is_empty();
    assert!(covered("echo x > sub/f"));
    assert!(covered("echo x > new/f"));
    assert!(!covered("echo x > link/f"));
    assert!(!covered("echo x > flink"));
    assert!(!covered("echo x > dangling"));
    assert!(!covered("echo x > link/../f"));
    assert!(!covered("echo x > $F"));
}

#[test]
fn a_rule_covers_a_command_only_when_it_covers_every_part() {
    let mut wrong = Vec::new();
    for (command, rules, expected) in TABLE {
        let got = covered(command, rules);
        if got != *expected {
            let reasons = subject(command).uncovered(&bash(rules), Path::new(WS));
            wrong.push(format!(
                "{command:?} under {rules:?}: covered={got}, expected {expected} ({reasons:?})"
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn always_adds_the_argv_of_each_uncovered_part() {
    let s = subject("git status && cargo test -p x");
    let added = s.rules_for_always(&bash(&["git status"]), Path::new(WS));
    assert_eq!(added, bash(&["cargo test -p x"]));
    // What it added covers the same command next time.
    let mut all = bash(&["git status"]);
    all.extend(added);
    assert!(s.uncovered(&all, Path::new(WS)).is_empty());
    // Nothing for a command no rule can cover.
    assert!(
        subject("sudo rm x")
            .rules_for_always(&[], Path::new(WS))
            .is_empty()
    );
}

#[test]
fn write_rules_are_globs_over_the_workspace_path() {
    let write = |path: &str| Subject::Write {
        path: path.to_owned(),
    };
    let rules = vec![RuleMatch::Write {
        glob: "src/**/*.rs".into(),
    }];
    let ws = Path::new(WS);
    assert!(write("src/a/b.rs").uncovered(&rules, ws).is_empty());
    assert!(
        write("/work/repo/src/c.rs")
            .uncovered(&rules, ws)
            .is_empty()
    );
    assert!(!write("Cargo.toml").uncovered(&rules, ws).is_empty());
    assert!(!write("../repo2/src/a.rs").uncovered(&rules, ws).is_empty());
    let always = write("docs/[draft].md").rules_for_always(&[], ws);
    assert!(write("docs/[draft].md").uncovered(&always, ws).is_empty());
    assert!(write("docs/d.md").uncovered(&always, ws).len() == 1);
}

#[test]
fn mcp_calls_are_matched_by_server_and_tool() {
    assert_eq!(
        mcp_name("mcp__github__create_issue"),
        Some(("github", "create_issue"))
    );
    assert_eq!(mcp_name("mcp__x"), None);
    let s = Subject::of("mcp__github__create_issue", None).expect("mcp needs approval");
    let ws = Path::new(WS);
    let rule = s.rules_for_always(&[], ws);
    assert!(s.uncovered(&rule, ws).is_empty());
    let other = Subject::of("mcp__github__delete_repo", None).expect("mcp");
    assert!(!other.uncovered(&rule, ws).is_empty());
}

fn denied(command: &str) -> Option<String> {
    let ctx = DenyContext {
        workspace: Path::new(WS),
        default_branches: vec!["main".into(), "master".into()],
    };
    check_bash(&analyse(command), &ctx)
}

#[test]
fn the_deny_list_refuses_with_a_reason() {
    for (command, reason) in [
        ("rm -rf /", "outside the workspace"),
        ("rm -rf ~", "home folder"),
        ("rm -rf $HOME/x", "home folder"),
        ("cd x && rm -rf ../../etc", "outside the workspace"),
        ("sudo rm -rf /usr", "outside the workspace"),
        ("bash -c 'rm -fr /'", "outside the workspace"),
        ("echo x | xargs rm -rf /", "outside the workspace"),
        ("env A=1 rm -r /home", "outside the workspace"),
        ("dd if=/dev/zero of=/dev/sda", "`dd` writing to"),
        ("echo x > /etc/hosts", "overwrites outside"),
        ("cat x > /dev/sda", "overwrites outside"),
        ("git push --force origin main", "default branch"),
        ("git push -f", "default branch"),
        ("git push origin +main", "default branch"),
        (
            "git push --force-with-lease origin HEAD:refs/heads/master",
            "default branch",
        ),
        ("git config core.hooksPath /tmp/h", "hookspath"),
        ("git config --local core.fsmonitor ./x", "fsmonitor"),
        ("git -c core.hooksPath=/tmp/h commit -m x", "hookspath"),
        ("echo x > .git/hooks/pre-commit", ".git/hooks"),
        ("cp evil .git/hooks/post-checkout", ".git/hooks"),
        ("mkfs.ext4 /dev/sdb", "rewrites a disk"),
    ] {
        let got = denied(command).unwrap_or_else(|| panic!("{command:?} was not denied"));
        assert!(
            got.to_lowercase().contains(reason),
            "{command:?}: {got:?} does not say {reason:?}"
        );
    }
    for command in [
        "rm -rf target",
        "rm -rf ./build /tmp/scratch",
        "echo x > /dev/null",
        "exec 3<>/dev/tcp/127.0.0.1/7433 && echo connected",
        "echo ping > /dev/udp/127.0.0.1/53",
        "git push origin feature",
        "git push --force origin feature",
        "git config --get core.hooksPath",
        "git config user.name x",
        "dd if=a of=b",
        "cat .git/hooks/pre-commit.sample",
    ] {
        assert_eq!(denied(command), None, "{command:?}");
    }
    let ctx = DenyContext {
        workspace: Path::new(WS),
        default_branches: vec!["main".into()],
    };
    assert!(check_write(".git/hooks/pre-push", &ctx).is_some());
    assert!(check_write("./x/../.git/hooks/a", &ctx).is_some());
    assert!(check_write("src/hooks/a", &ctx).is_none());
}

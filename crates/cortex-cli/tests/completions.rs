//! `cortex completions` and `cortex man`: the generated scripts load in the
//! shells that are installed, and the man page names every subcommand.

use std::process::Command;

fn cortex(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_cortex"))
        .args(args)
        .output()
        .expect("cortex runs")
}

#[test]
fn the_bash_script_loads_and_completes_subcommands() {
    let script = cortex(&["completions", "bash"]);
    assert!(script.status.success(), "{script:?}");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("cortex.bash");
    std::fs::write(&path, &script.stdout).expect("write script");
    // Source it with errors fatal, then ask the completion function what
    // follows `cortex ` and `cortex sessions `.
    let probe = format!(
        r#"set -euo pipefail
source {path}
complete -p cortex
COMP_WORDS=(cortex "") COMP_CWORD=1 COMP_LINE="cortex " COMP_POINT=7
_cortex cortex "" cortex
printf '%s\n' "${{COMPREPLY[@]}}"
echo ---
COMP_WORDS=(cortex sessions "") COMP_CWORD=2 COMP_LINE="cortex sessions " COMP_POINT=16
_cortex cortex "" sessions
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        path = path.display()
    );
    let out = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &probe])
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (top, sessions) = stdout.split_once("---").expect("two answers");
    for word in ["exec", "sessions", "serve", "completions", "man"] {
        assert!(top.lines().any(|l| l == word), "`{word}` missing: {top}");
    }
    assert!(
        !top.lines().any(|l| l == "guest"),
        "hidden subcommand offered"
    );
    for word in ["list", "show", "compact"] {
        assert!(sessions.lines().any(|l| l == word), "`{word}`: {sessions}");
    }
}

#[test]
fn every_shell_gets_a_script() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = cortex(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {out:?}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("exec"), "{shell}: no subcommands in\n{text}");
    }
    let bad = cortex(&["completions", "tcsh"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("tcsh"));
}

#[test]
fn shells_that_are_installed_load_their_script() {
    for (shell, args) in [("zsh", ["-f", "-c"]), ("fish", ["--no-config", "-c"])] {
        if Command::new(shell).arg("--version").output().is_err() {
            cortex_testkit::skip_current(shell, &format!("{shell} is not installed"));
            continue;
        }
        let script = cortex(&["completions", shell]);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cortex.completion");
        std::fs::write(&path, &script.stdout).expect("write");
        let load = match shell {
            "zsh" => format!(
                "autoload -U compinit; compinit -u; source {}",
                path.display()
            ),
            _ => format!("source {}", path.display()),
        };
        let out = Command::new(shell)
            .args(args)
            .arg(&load)
            .output()
            .expect("shell runs");
        assert!(out.status.success(), "{shell}: {out:?}");
    }
}

#[test]
fn the_man_page_covers_every_subcommand_with_examples() {
    let out = cortex(&["man"]);
    assert!(out.status.success(), "{out:?}");
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(
        page.starts_with(".ie") || page.contains(".TH cortex"),
        "{page}"
    );
    for name in [
        "cortex\\-exec",
        "cortex\\-sessions\\-show",
        "cortex\\-serve",
    ] {
        assert!(page.contains(name), "`{name}` missing");
    }
    assert!(page.contains("Examples:"), "no examples");
    assert!(
        !page.contains("cortex\\-guest"),
        "hidden subcommand documented"
    );
}

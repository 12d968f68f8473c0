//! The escape suite's laboratory: a hostile scripted model driving the real
//! `cortex exec` (in-process server, local sandbox, Agent mode,
//! `workspace-write`, network off) against a prepared repository, then the
//! host-side actions an attack relies on (plant, then trigger).
//!
//! Every attempt runs as the user running the tests and, when that is root,
//! again as `nobody` (the whole `cortex` process under `setpriv`), each in a
//! fresh laboratory. For each run it checks:
//! - the timeline shows the refusal: each hostile call's `tool.result` is an
//!   error from the guest or a refusal at the harness's gate (the deny list),
//!   or the attempt's own expectation, such as `env.setup_skipped`;
//! - the host is unchanged: the repository's metadata (`.git`, `.cortex`) and
//!   a host folder outside the repository are byte for byte what they were;
//! - nothing ran afterwards: the triggers (the user's `git status` and
//!   `git commit`, a `--workspace copy` session, the next session with its
//!   setup script) did not run a planted program (no marker file).
//!
//! Machines without user namespaces record a skip (`cortex_testkit`).
#![allow(dead_code)]

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Where a planted program would leave its mark (a path on the host).
pub const MARKER: &str = "{MARKER}";
/// A host folder outside the repository (its contents are watched).
pub const OUTSIDE: &str = "{OUTSIDE}";

/// One hostile tool call and whether it must end in an error.
pub struct Call {
    pub name: &'static str,
    pub arguments: Value,
    pub must_fail: bool,
}

/// A call that must be refused or fail.
pub fn hostile(name: &'static str, arguments: Value) -> Call {
    Call {
        name,
        arguments,
        must_fail: true,
    }
}

/// `bash` with a command that must fail.
pub fn bash(command: &str) -> Call {
    hostile("bash", json!({ "command": command }))
}

/// A preparatory call that may succeed (it only sets the attack up).
pub fn step(name: &'static str, arguments: Value) -> Call {
    Call {
        name,
        arguments,
        must_fail: false,
    }
}

/// What the host does after the session, which a planted program would
/// ride on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trigger {
    /// The user's `git status`, then `git commit` (hooks on, as git runs).
    UserGit,
    /// A session on an isolated copy (`--workspace copy`): Cortex's own
    /// host-side git and copy materialisation.
    CopySession,
    /// The next session on the repository (its setup script, if trusted).
    NextSession,
}

/// What the timeline (or the command) must show besides the checks above.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// Each `must_fail` call's result is an error; the turn completes.
    CallsFail,
    /// The setup script was skipped (`env.setup_skipped`) and no call failed
    /// that was not marked hostile.
    SetupSkipped,
    /// `cortex exec` refused to start, naming this text.
    Refused(&'static str),
}

pub struct Attempt {
    /// The repository before the session (beyond the default: a git
    /// repository with one commit of `a.txt` and `.cortex/README`).
    pub prepare: fn(&Lab),
    /// The model's rounds of calls; a last round answers "done".
    pub rounds: Vec<Vec<Call>>,
    /// Text the model writes before its first call.
    pub text: &'static str,
    /// `cortex exec` flags besides `--json` and the model.
    pub flags: &'static [&'static str],
    pub expect: Expect,
    pub triggers: &'static [Trigger],
    /// Run on a pseudo-terminal with human output (the terminal attempts):
    /// nothing may reach the terminal's input queue, and no control
    /// sequence but Cortex's own colours may reach its screen.
    pub terminal: bool,
    /// `--repo` is this (given the laboratory) instead of the repository.
    pub repo: Option<fn(&Lab) -> PathBuf>,
    /// Paths in the repository that must not exist after the session.
    pub absent: &'static [&'static str],
    /// Paths in the repository the harness must have renamed what the
    /// attack made to (`…cortex-quarantined-N`): each must exist after the
    /// session, and is left out of the host comparison.
    pub quarantined: &'static [&'static str],
}

impl Default for Attempt {
    fn default() -> Self {
        Attempt {
            prepare: |_| {},
            rounds: Vec::new(),
            text: "",
            flags: &[],
            expect: Expect::CallsFail,
            triggers: &[],
            terminal: false,
            repo: None,
            absent: &[],
            quarantined: &[],
        }
    }
}

/// The folders of one run.
pub struct Lab {
    pub home: tempfile::TempDir,
    pub repo: tempfile::TempDir,
    pub outside: tempfile::TempDir,
    pub nobody: bool,
}

impl Lab {
    pub fn new(nobody: bool) -> Lab {
        let lab = Lab {
            home: tempfile::tempdir().expect("home"),
            repo: tempfile::tempdir().expect("repo"),
            outside: tempfile::tempdir().expect("outside"),
            nobody,
        };
        std::fs::write(lab.outside.path().join("secret.txt"), "host secret\n").expect("secret");
        std::fs::create_dir(lab.outside.path().join("dir")).expect("dir");
        git(lab.repo.path(), &["init", "-q"]);
        write(lab.repo.path(), "a.txt", "alpha\n");
        write(lab.repo.path(), ".cortex/README", "project notes\n");
        git(lab.repo.path(), &["add", "-A"]);
        git(lab.repo.path(), &["commit", "-qm", "first"]);
        lab
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.repo.path().join(relative)
    }

    pub fn marker(&self) -> PathBuf {
        self.outside.path().join("pwned")
    }

    /// `text` with the placeholders filled in.
    pub fn fill(&self, text: &str) -> String {
        text.replace(MARKER, &self.marker().display().to_string())
            .replace(OUTSIDE, &self.outside.path().display().to_string())
    }

    /// `cortex …` as this run's user, with private folders.
    pub fn cortex(&self) -> Command {
        let mut cmd = as_user(self.nobody, env!("CARGO_BIN_EXE_cortex"));
        cmd.env("XDG_DATA_HOME", self.home.path().join("data"))
            .env("XDG_CONFIG_HOME", self.home.path().join("config"))
            .env("HOME", self.home.path())
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("CORTEX_TOKEN")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::null());
        cmd
    }

    pub fn script(&self, name: &str, script: &Value) -> PathBuf {
        let path = self.home.path().join(name);
        std::fs::write(&path, self.fill(&script.to_string())).expect("script");
        if self.nobody {
            chown_nobody(&path);
        }
        path
    }

    pub fn exec(&self, script: &Path, repo: &Path, flags: &[&str]) -> Command {
        self.exec_in(script, repo, flags, "go")
    }

    /// `cortex exec` on the laboratory's repository with `prompt`.
    pub fn exec_prompt(&self, script: &Path, flags: &[&str], prompt: &str) -> Command {
        self.exec_in(script, self.repo.path(), flags, prompt)
    }

    fn exec_in(&self, script: &Path, repo: &Path, flags: &[&str], prompt: &str) -> Command {
        let mut cmd = self.cortex();
        cmd.arg("exec")
            .arg("--repo")
            .arg(repo)
            .arg("--model")
            .arg(format!("scripted:{}", script.display()))
            .args(flags)
            .arg(prompt);
        cmd
    }

    /// The events of every stored session, oldest first.
    pub fn stored_events(&self) -> Vec<Value> {
        let list = output(self.cortex().args(["sessions", "list", "--json"]));
        let mut ids: Vec<String> = String::from_utf8_lossy(&list.stdout)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .flat_map(|v| match v.get("sessions") {
                Some(Value::Array(items)) => items.clone(),
                _ => vec![v],
            })
            .filter_map(|s| s["id"].as_str().map(str::to_owned))
            .collect();
        ids.sort();
        ids.iter()
            .flat_map(|id| {
                let shown = output(self.cortex().args(["sessions", "show", id, "--json"]));
                json_lines(&shown.stdout)
            })
            .collect()
    }
}

pub fn write(dir: &Path, relative: &str, content: &str) {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, content).expect("write");
}

/// Host git with a fixed identity (a test's own set-up, not a trigger).
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(["-c", "init.defaultBranch=main"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

pub fn as_user(nobody: bool, program: &str) -> Command {
    if !nobody {
        return Command::new(program);
    }
    let mut cmd = Command::new("setpriv");
    cmd.args(["--reuid=65534", "--regid=65534", "--clear-groups", program]);
    cmd
}

pub fn chown_nobody(path: &Path) {
    let status = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(path)
        .status()
        .expect("chown");
    assert!(status.success());
}

pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("run")
}

pub fn json_lines(bytes: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(bytes)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Every file under `dir` with its contents (links as their target).
fn snapshot(dir: &Path, into: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let Ok(meta) = std::fs::symlink_metadata(dir) else {
        return;
    };
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(dir).expect("link");
        into.insert(
            dir.to_path_buf(),
            target.into_os_string().into_encoded_bytes(),
        );
    } else if meta.is_dir() {
        into.insert(
            dir.to_path_buf(),
            format!("<dir {:o}>", meta_mode(&meta)).into_bytes(),
        );
        for entry in std::fs::read_dir(dir).expect("read_dir") {
            snapshot(&entry.expect("entry").path(), into);
        }
    } else {
        let mut bytes = std::fs::read(dir).unwrap_or_default();
        bytes.extend(format!("<{:o}>", meta_mode(&meta)).into_bytes());
        into.insert(dir.to_path_buf(), bytes);
    }
}

fn meta_mode(meta: &std::fs::Metadata) -> u32 {
    std::os::unix::fs::PermissionsExt::mode(&meta.permissions())
}

/// What the attack must not change: the repository's metadata and the
/// host folder outside it.
pub fn watched(lab: &Lab) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for dir in [
        lab.path(".git"),
        lab.path(".cortex"),
        lab.outside.path().to_path_buf(),
    ] {
        snapshot(&dir, &mut files);
    }
    files
}

/// The sandbox makes the mount point of a missing protected path on the
/// host (an empty folder or file, which git ignores): those are not the
/// attack's doing and are left out of the comparison.
pub fn without_new_placeholders(
    lab: &Lab,
    before: &BTreeMap<PathBuf, Vec<u8>>,
    mut after: BTreeMap<PathBuf, Vec<u8>>,
) -> BTreeMap<PathBuf, Vec<u8>> {
    for relative in [
        ".git",
        ".git/hooks",
        ".git/config",
        ".cortex",
        // With `git_write`, the redirecting files and folders.
        ".git/config.worktree",
        ".git/objects/info/alternates",
        ".git/worktrees",
        ".git/modules",
        // The missing include and hooks folder attempts' configs name.
        ".git/missing.inc",
        ".git/team-hooks",
    ] {
        let path = lab.path(relative);
        let empty = std::fs::read_dir(&path).is_ok_and(|mut d| d.next().is_none())
            || std::fs::metadata(&path).is_ok_and(|m| m.is_file() && m.len() == 0);
        if !before.contains_key(&path) && empty {
            after.remove(&path);
        }
    }
    after
}

/// The id the script gives call `j` of round `i`.
pub fn call_id(round: usize, index: usize) -> String {
    format!("attack-{round}-{index}")
}

/// The rounds as a scripted model's responses.
pub fn script_of(attempt: &Attempt) -> Value {
    rounds_script(&attempt.rounds, attempt.text)
}

/// `rounds` of calls as a scripted model's responses, `text` before the
/// first call; a last response answers "done" (or `text` with no rounds).
pub fn rounds_script(rounds: &[Vec<Call>], text: &str) -> Value {
    let mut responses: Vec<Value> = rounds
        .iter()
        .enumerate()
        .map(|(i, calls)| {
            let tool_calls: Vec<Value> = calls
                .iter()
                .enumerate()
                .map(
                    |(j, c)| json!({"id": call_id(i, j), "name": c.name, "arguments": c.arguments}),
                )
                .collect();
            let text = if i == 0 { text } else { "" };
            json!({"text": text, "tool_calls": tool_calls})
        })
        .collect();
    let last = if rounds.is_empty() { text } else { "done" };
    responses.push(json!({ "text": last }));
    json!({ "responses": responses })
}

/// Run `attempt` as the current user and, under root, as nobody.
pub fn check(attempt: Attempt) {
    let mut users = vec![false];
    if is_root() {
        users.push(true);
    }
    for nobody in users {
        if !run_once(&attempt, nobody) {
            return;
        }
    }
}

/// One run; `false` when this machine cannot run a sandbox (skipped).
fn run_once(attempt: &Attempt, nobody: bool) -> bool {
    let lab = prepared(nobody, attempt.prepare);
    let repo = attempt
        .repo
        .map(|pick| pick(&lab))
        .unwrap_or_else(|| lab.repo.path().to_path_buf());
    if nobody && attempt.repo.is_some() {
        // The pick may have made folders in the home (a repository inside
        // the data folder): they belong to the run's user too.
        chown_nobody(lab.home.path());
    }
    let who = if nobody {
        "as nobody"
    } else {
        "as the test's user"
    };
    let before = watched(&lab);
    let script = lab.script("attack.json", &script_of(attempt));
    let mut cmd = lab.exec(&script, &repo, attempt.flags);
    let (out, screen) = if attempt.terminal {
        on_terminal(cmd)
    } else {
        (output(cmd.arg("--json")), Vec::new())
    };
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("cannot create the guest's namespaces") {
        cortex_testkit::skip_current(
            "userns",
            &format!("user namespaces are not available here: {stderr}"),
        );
        return false;
    }
    if let Expect::Refused(text) = attempt.expect {
        assert!(!out.status.success(), "{who}: not refused");
        assert!(stderr.contains(text), "{who}: {stderr}");
    } else {
        let events = if attempt.terminal {
            lab.stored_events()
        } else {
            json_lines(&out.stdout)
        };
        check_timeline(attempt, &events, who, &stderr);
    }
    if attempt.terminal {
        check_screen(&screen, who);
    }
    let mut after = without_new_placeholders(&lab, &before, watched(&lab));
    for path in attempt.quarantined {
        assert!(
            after.remove(&lab.path(path)).is_some(),
            "{who}: `{path}` was not quarantined"
        );
    }
    let changed: Vec<&PathBuf> = before
        .keys()
        .chain(after.keys())
        .filter(|path| before.get(*path) != after.get(*path))
        .collect();
    assert!(changed.is_empty(), "{who}: the host changed: {changed:?}");
    for path in attempt.absent {
        assert!(!lab.path(path).exists(), "{who}: `{path}` exists");
    }
    let set_id = with_set_id_bits(lab.repo.path());
    assert!(
        set_id.is_empty(),
        "{who}: set-id bits on the host: {set_id:?}"
    );
    for trigger in attempt.triggers {
        run_trigger(&lab, *trigger);
        assert!(
            !lab.marker().exists() && !lab.path(PLANTED_RAN).exists(),
            "{who}: a planted program ran after {trigger:?}"
        );
    }
    assert!(!lab.marker().exists(), "{who}: a planted program ran");
    true
}

/// Files and folders under `dir` (links not followed) with a set-user-ID
/// or set-group-ID bit: none of the laboratory's own has one, so any is
/// the guest's.
pub fn with_set_id_bits(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.permissions().mode() & 0o6000 != 0 {
            found.push(path.clone());
        }
        if meta.is_dir() {
            found.extend(with_set_id_bits(&path));
        }
    }
    found
}

/// A fresh laboratory prepared by `prepare`, owned by the run's user.
pub fn prepared(nobody: bool, prepare: fn(&Lab)) -> Lab {
    let lab = Lab::new(nobody);
    prepare(&lab);
    if nobody {
        for dir in [lab.home.path(), lab.repo.path(), lab.outside.path()] {
            chown_nobody(dir);
        }
    }
    lab
}

/// What a planted program leaves in the folder it runs in.
pub const PLANTED_RAN: &str = "planted-ran";

/// The check that makes the suite's triggers worth something: with
/// `prepare` planting a program the way only the user (not the model)
/// could, `trigger` does run it.
pub fn control(prepare: fn(&Lab), trigger: Trigger) {
    let lab = Lab::new(false);
    prepare(&lab);
    run_trigger(&lab, trigger);
    if trigger == Trigger::NextSession && !lab.path(PLANTED_RAN).exists() {
        let out = output(lab.cortex().args(["sessions", "list"]));
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("namespaces"),
            "skipped"
        );
    }
    assert!(
        lab.path(PLANTED_RAN).exists(),
        "{trigger:?} did not run what the user planted"
    );
}

fn check_timeline(attempt: &Attempt, events: &[Value], who: &str, stderr: &str) {
    let kinds: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert!(
        kinds.contains(&"turn.completed"),
        "{who}: {kinds:?}\n{stderr}"
    );
    let results: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool.result")
        .collect();
    let calls = attempt.rounds.iter().enumerate().flat_map(|(i, round)| {
        round
            .iter()
            .enumerate()
            .map(move |(j, call)| (call_id(i, j), call))
    });
    assert_eq!(
        results.len(),
        attempt.rounds.iter().flatten().count(),
        "{who}: {kinds:?}"
    );
    for (id, call) in calls {
        let result = results
            .iter()
            .find(|r| r["payload"]["call_id"] == id.as_str())
            .unwrap_or_else(|| panic!("{who}: no result for {id}: {kinds:?}"));
        // Refused at the gate (the deny list) or failed in the guest.
        if call.must_fail {
            let status = &result["payload"]["status"];
            assert!(
                status == "error" || status == "refused",
                "{who}: `{}` was not refused ({status}): {}",
                call.arguments,
                result["payload"]["output"]
            );
        }
    }
    if attempt.expect == Expect::SetupSkipped {
        assert!(kinds.contains(&"env.setup_skipped"), "{who}: {kinds:?}");
    }
}

fn run_trigger(lab: &Lab, trigger: Trigger) {
    match trigger {
        Trigger::UserGit => {
            // The user's own git, hooks and config as git reads them.
            for args in [
                vec!["status"],
                vec![
                    "-c",
                    "user.name=u",
                    "-c",
                    "user.email=u@u",
                    "commit",
                    "-qam",
                    "user",
                ],
            ] {
                let _ = output(
                    as_user(lab.nobody, "git")
                        .args(&args)
                        .current_dir(lab.repo.path())
                        .env("HOME", lab.home.path()),
                );
            }
        }
        Trigger::CopySession | Trigger::NextSession => {
            let script = lab.script("benign.json", &json!({"responses": [{"text": "ok"}]}));
            let flags: &[&str] = if trigger == Trigger::CopySession {
                &["--workspace", "copy"]
            } else {
                &[]
            };
            let _ = output(&mut lab.exec(&script, lab.repo.path(), flags));
        }
    }
}

/// Run `cmd` with a new pseudo-terminal as its controlling terminal and
/// standard streams, as `cortex` started from a shell has. Returns its
/// output (stdout empty: it went to the terminal) and what reached the
/// screen; panics if anything reached the terminal's input queue, which
/// the user's shell would read next.
fn on_terminal(mut cmd: Command) -> (Output, Vec<u8>) {
    let (master, slave) = open_pty();
    for set in [Command::stdin, Command::stdout, Command::stderr] {
        let fd = slave.try_clone().expect("dup");
        set(&mut cmd, Stdio::from(fd));
    }
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            libc::ioctl(0, libc::TIOCSCTTY, 0);
            Ok(())
        });
    }
    let mut reader = std::fs::File::from(master.try_clone().expect("dup"));
    let screen = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut buffer = [0u8; 4096];
        // EIO once every slave descriptor is closed.
        while let Ok(n) = reader.read(&mut buffer) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buffer[..n]);
        }
        bytes
    });
    let status = cmd.status().expect("run on a terminal");
    // The command holds copies of the slave until dropped.
    drop(cmd);
    let mut pending: libc::c_int = 0;
    // SAFETY: FIONREAD writes one int.
    unsafe { libc::ioctl(slave.as_raw_fd(), libc::FIONREAD, &mut pending) };
    assert_eq!(pending, 0, "input was typed into the user's terminal");
    drop(slave);
    let screen = screen.join().expect("screen");
    drop(master);
    (
        Output {
            status,
            stdout: Vec::new(),
            stderr: screen.clone(),
        },
        screen,
    )
}

fn open_pty() -> (OwnedFd, OwnedFd) {
    let (mut master, mut slave) = (0, 0);
    // SAFETY: openpty fills two descriptors; null name, termios and size.
    let rc = unsafe {
        libc::openpty(
            &mut master,
            &mut slave,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(rc, 0, "openpty");
    // SAFETY: both are fresh descriptors this function owns.
    unsafe { (OwnedFd::from_raw_fd(master), OwnedFd::from_raw_fd(slave)) }
}

/// Only Cortex's own colours (SGR, `ESC [ … m`) may reach the screen: no
/// other escape sequence, no C1 control.
pub fn check_screen(screen: &[u8], who: &str) {
    let text = String::from_utf8_lossy(screen);
    assert!(!text.is_empty(), "{who}: nothing reached the terminal");
    let mut rest = text.as_ref();
    while let Some(at) = rest.find('\u{1b}') {
        let sequence = &rest[at + 1..];
        let sgr = sequence.strip_prefix('[').is_some_and(|s| {
            let end = s.find(|c: char| !(c.is_ascii_digit() || c == ';'));
            end.is_some_and(|e| s[e..].starts_with('m'))
        });
        assert!(
            sgr,
            "{who}: a control sequence reached the terminal: {:?}",
            &rest[at..(at + 12).min(rest.len())]
        );
        rest = &rest[at + 1..];
    }
    assert!(
        !text
            .chars()
            .any(|c| ('\u{80}'..='\u{9f}').contains(&c) || c == '\u{7}'),
        "{who}: a C1 control or BEL reached the terminal: {text:?}"
    );
}

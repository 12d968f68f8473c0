//! `/status` and the first screen's line about project instructions.
//!
//! `/status` lists, as notices, the session, its mode and model, the
//! project instructions the model was last given (`instructions.loaded`)
//! and the folders checkpoints leave out. Before the first turn no
//! instructions were read yet (they are read in the guest at each turn's
//! start), so the first screen and `/status` name the ones found at the
//! repository's root and the user's own: [`found_instructions`] looks at
//! their names only (no content is read here, and a link is not counted:
//! the guest would not follow one out of the workspace).

use crate::app::App;
use crate::state::Level;
use crate::text::clean_line;
use std::path::{Path, PathBuf};

/// The instructions files found before any was read, for one repository.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoundInstructions {
    /// The repository they were looked for in (as the session names it).
    pub repository: String,
    /// The user's own (shown with `~`) and the root's, in the order the
    /// model reads them.
    pub files: Vec<String>,
}

/// The names a folder's instructions file has, the first one found wins
/// (as the harness reads them).
const FILE_NAMES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// Whether `path` is a regular file, no link followed.
fn regular(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_file())
}

/// `path` under the home folder written with `~`.
fn shown(path: &Path, home: Option<&Path>) -> String {
    match home.and_then(|h| path.strip_prefix(h).ok()) {
        Some(rest) if !rest.as_os_str().is_empty() => format!("~/{}", rest.display()),
        _ => path.display().to_string(),
    }
}

/// The instructions files the first turn will read, as far as names tell:
/// `user_file` (Cortex's config folder's `AGENTS.md`) when it is a file,
/// then the root's `AGENTS.md`, else its `CLAUDE.md`. Folders' own files
/// come when a turn reaches them, so they are not looked for here.
pub fn found_instructions(
    repository: &str,
    user_file: Option<&Path>,
    home: Option<&Path>,
) -> FoundInstructions {
    let mut files = Vec::new();
    if let Some(user) = user_file.filter(|p| regular(p)) {
        files.push(shown(user, home));
    }
    let root = PathBuf::from(repository);
    if let Some(name) = FILE_NAMES.iter().find(|n| regular(&root.join(n))) {
        files.push((*name).to_owned());
    }
    FoundInstructions {
        repository: repository.to_owned(),
        files,
    }
}

impl App {
    /// The files found for the session's repository, once looked for.
    fn found_here(&self) -> Option<&FoundInstructions> {
        self.found_instructions
            .as_ref()
            .filter(|f| f.repository == self.state.repository)
    }

    /// The first screen's line (no instructions read yet): what the first
    /// turn will give the model, or how to write some. `None` once
    /// instructions were read, or before the repository was looked at.
    pub fn instructions_hint(&self) -> Option<String> {
        if self.state.instructions.is_some() || !self.state.messages.is_empty() {
            return None;
        }
        let found = self.found_here()?;
        Some(if found.files.is_empty() {
            "instructions: none found (AGENTS.md or CLAUDE.md; /init writes one)".to_owned()
        } else {
            format!(
                "instructions: {} · given to the model from the first turn",
                clean_line(&found.files.join(", "))
            )
        })
    }
}

/// `/status`: the session, its project instructions and what checkpoints
/// leave out, as notices.
pub fn run(app: &mut App, args: &str) -> Vec<crate::app::Command> {
    if !args.is_empty() {
        app.flash("usage: /status");
        return Vec::new();
    }
    let mut lines = Vec::new();
    let id = app.state.id.as_ref().map_or("-", |id| id.0.as_str());
    lines.push(format!(
        "status: session {} · {} · {}",
        clean_line(id),
        app.state.mode,
        clean_line(&app.state.model)
    ));
    if !app.state.repository.is_empty() {
        lines.push(format!("repository: {}", clean_line(&app.state.repository)));
    }
    let instructions = match (&app.state.instructions, app.found_here()) {
        (Some(seen), _) => format!("instructions: {}", seen.line()),
        (None, Some(found)) if !found.files.is_empty() => format!(
            "instructions: none read yet; found {}, given to the model from the next turn",
            clean_line(&found.files.join(", "))
        ),
        (None, _) => {
            "instructions: none read yet (AGENTS.md or CLAUDE.md; /init writes one)".to_owned()
        }
    };
    lines.push(instructions);
    if !app.state.checkpoint_excluded.is_empty() {
        lines.push(format!(
            "checkpoints leave out (regenerable, not rewound): {}",
            app.state.checkpoint_excluded.join(", ")
        ));
    }
    for line in lines {
        app.state.local_notice(Level::Info, &line);
    }
    app.transcript.to_bottom();
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Script;
    use crate::state::CellKind;
    use crate::view::theme::Theme;
    use cortex_protocol::EventKind;

    fn app_of(script: &Script) -> App {
        let mut app = App::new(Theme::no_color());
        for event in &script.events {
            app.on_event(event);
        }
        app
    }

    /// The notices `/status` added.
    fn status(app: &mut App) -> Vec<String> {
        let before = app.state.cells.len();
        assert!(run(app, "").is_empty());
        app.state.cells[before..]
            .iter()
            .map(|c| match &c.kind {
                CellKind::Notice { text, .. } => text.clone(),
                other => panic!("not a notice: {other:?}"),
            })
            .collect()
    }

    /// A fresh folder under the system's temporary one, removed on drop
    /// (the crate has no tempfile dependency).
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir().join(format!(
                "cortex-tui-status-{name}-{}-{}",
                std::process::id(),
                crate::time::now_ms()
            ));
            std::fs::create_dir_all(&dir).expect("mkdir");
            Scratch(dir)
        }

        fn path(&self) -> &Path {
            &self.0
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn found_instructions_are_files_at_the_root_and_the_users_own_not_links() {
        let repo = Scratch::new("repo");
        let home = Scratch::new("home");
        let user = home.path().join(".config/cortex/AGENTS.md");
        std::fs::create_dir_all(user.parent().expect("parent")).expect("mkdir");
        std::fs::write(&user, "mine\n").expect("write");
        let repository = repo.path().display().to_string();

        // CLAUDE.md where there is no AGENTS.md.
        std::fs::write(repo.path().join("CLAUDE.md"), "x\n").expect("write");
        let found = found_instructions(&repository, Some(&user), Some(home.path()));
        assert_eq!(found.files, ["~/.config/cortex/AGENTS.md", "CLAUDE.md"]);

        // AGENTS.md wins; a link is not a file the guest would read.
        std::fs::write(repo.path().join("AGENTS.md"), "x\n").expect("write");
        let found = found_instructions(&repository, None, None);
        assert_eq!(found.files, ["AGENTS.md"]);
        std::fs::remove_file(repo.path().join("AGENTS.md")).expect("rm");
        std::fs::remove_file(repo.path().join("CLAUDE.md")).expect("rm");
        std::os::unix::fs::symlink(&user, repo.path().join("AGENTS.md")).expect("symlink");
        let missing = home.path().join("nothing/AGENTS.md");
        let found = found_instructions(&repository, Some(&missing), None);
        assert!(found.files.is_empty(), "{found:?}");
    }

    #[test]
    fn the_first_screen_names_the_files_found_until_some_are_read() {
        let mut script = Script::new("openai:gpt-4o");
        let mut app = app_of(&script);
        assert_eq!(app.instructions_hint(), None, "not looked for yet");
        app.found_instructions = Some(FoundInstructions {
            repository: app.state.repository.clone(),
            files: vec!["AGENTS.md".into()],
        });
        assert_eq!(
            app.instructions_hint().as_deref(),
            Some("instructions: AGENTS.md · given to the model from the first turn")
        );
        // Found for another repository: not this session's.
        app.found_instructions = Some(FoundInstructions {
            repository: "/elsewhere".into(),
            files: vec!["AGENTS.md".into()],
        });
        assert_eq!(app.instructions_hint(), None);
        app.found_instructions = Some(FoundInstructions {
            repository: app.state.repository.clone(),
            files: Vec::new(),
        });
        assert!(
            app.instructions_hint()
                .is_some_and(|h| h.contains("none found") && h.contains("/init"))
        );

        // Once read, the timeline's notice says it instead.
        script.turn("hi");
        script.push(EventKind::InstructionsLoaded {
            files: vec!["AGENTS.md".into()],
            bytes: 12,
            cut: false,
            text: "Project instructions\n--- AGENTS.md\nRun make.".into(),
        });
        let mut read = app_of(&script);
        read.found_instructions = app.found_instructions.clone();
        assert_eq!(read.instructions_hint(), None);
    }

    #[test]
    fn the_first_screen_draws_the_row_above_the_status_line() {
        use ratatui::buffer::Buffer;
        use ratatui::layout::Rect;
        let rows = |app: &mut App| {
            let area = Rect::new(0, 0, 40, 12);
            let mut buf = Buffer::empty(area);
            crate::view::screen::render(app, area, &mut buf);
            (0..area.height)
                .map(|y| {
                    (0..area.width)
                        .map(|x| buf[(x, y)].symbol().to_owned())
                        .collect::<String>()
                })
                .collect::<Vec<String>>()
        };
        let mut app = app_of(&Script::new("openai:gpt-4o"));
        app.found_instructions = Some(FoundInstructions {
            repository: app.state.repository.clone(),
            files: vec!["AGENTS.md".into()],
        });
        let screen = rows(&mut app);
        let at = screen
            .iter()
            .position(|r| r.starts_with("instructions: AGENTS.md · given"))
            .unwrap_or_else(|| panic!("{screen:#?}"));
        // The transcript's last row: the status line and the composer's
        // three rows follow.
        assert_eq!(at, 7, "{screen:#?}");
        app.found_instructions = None;
        assert!(
            !rows(&mut app).iter().any(|r| r.contains("instructions")),
            "nothing looked up, nothing drawn"
        );
    }

    #[test]
    fn a_checkpoints_excluded_folders_are_said_once_and_again_when_they_change() {
        let taken = |excluded: &[&str]| EventKind::CheckpointTaken {
            checkpoint: "t".into(),
            files: 1,
            bytes_new: 0,
            ms: 0.1,
            excluded: excluded.iter().map(|e| (*e).to_owned()).collect(),
            skipped: Vec::new(),
        };
        let mut script = Script::new("openai:gpt-4o");
        script.push(taken(&["node_modules"]));
        script.push(taken(&["node_modules"]));
        script.push(taken(&["node_modules", "tar\u{1b}[2Jget"]));
        script.push(taken(&[]));
        let app = app_of(&script);
        let said: Vec<&str> = app
            .state
            .cells
            .iter()
            .filter_map(|c| match &c.kind {
                CellKind::Notice { text, .. } if text.starts_with("checkpoints leave out") => {
                    Some(text.as_str())
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            said,
            [
                "checkpoints leave out (regenerable, not rewound): node_modules",
                "checkpoints leave out (regenerable, not rewound): node_modules, tar^[[2Jget",
            ]
        );
        assert!(app.state.checkpoint_excluded.is_empty());
    }

    #[test]
    fn status_lists_the_instructions_read_cleaned_and_what_checkpoints_leave_out() {
        let mut script = Script::new("openai:gpt-4o");
        script.turn("hi");
        script.push(EventKind::InstructionsLoaded {
            files: vec!["AGENTS.md".into(), "ev\u{1b}[31mil/AGENTS.md".into()],
            bytes: 2048,
            cut: true,
            text: "\u{1b}[2J hostile text for the model".into(),
        });
        script.push(EventKind::CheckpointTaken {
            checkpoint: "t1".into(),
            files: 3,
            bytes_new: 0,
            ms: 0.2,
            excluded: vec!["node_modules".into(), "crates/x/target".into()],
            skipped: Vec::new(),
        });
        let mut app = app_of(&script);
        let shown = status(&mut app);
        assert!(shown[0].starts_with("status: session "), "{shown:?}");
        assert!(shown[0].ends_with(" · agent · openai:gpt-4o"), "{shown:?}");
        assert!(
            shown.contains(
                &"instructions: AGENTS.md, ev^[[31mil/AGENTS.md (2.0 KB, cut at the cap)".into()
            ),
            "{shown:?}"
        );
        assert!(
            shown.contains(
                &"checkpoints leave out (regenerable, not rewound): node_modules, crates/x/target"
                    .into()
            ),
            "{shown:?}"
        );
        assert!(!shown.iter().any(|l| l.contains("hostile")), "{shown:?}");
        assert!(!shown.iter().any(|l| l.contains('\u{1b}')), "{shown:?}");
    }

    #[test]
    fn status_before_any_turn_names_what_was_found() {
        let mut app = app_of(&Script::new("openai:gpt-4o"));
        app.found_instructions = Some(FoundInstructions {
            repository: app.state.repository.clone(),
            files: vec!["~/.config/cortex/AGENTS.md".into(), "CLAUDE.md".into()],
        });
        let shown = status(&mut app);
        assert!(
            shown.contains(
                &"instructions: none read yet; found ~/.config/cortex/AGENTS.md, CLAUDE.md, \
                  given to the model from the next turn"
                    .into()
            ),
            "{shown:?}"
        );
        app.found_instructions = None;
        let shown = status(&mut app);
        assert!(
            shown
                .iter()
                .any(|l| l.starts_with("instructions: none read yet (")),
            "{shown:?}"
        );
    }
}

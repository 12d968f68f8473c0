//! What users add to Cortex without forking it: custom commands (Markdown
//! prompts a user runs as `/name`) and skills (`SKILL.md` folders the model
//! loads on demand), as listings report them.
//!
//! The files come from the repository (untrusted) or from the user's own
//! config folder. A file that cannot be used is never dropped silently: it
//! is listed as [`RejectedFile`] with the reason. Every text here is as the
//! file wrote it; a client sanitises it before any terminal.

use serde::{Deserialize, Serialize};

/// Where a command or skill was found.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExtensionScope {
    /// The user's own config folder (`$XDG_CONFIG_HOME/cortex/…`).
    User,
    /// The session's repository (`.cortex/`, `.agents/`, `.claude/`).
    Repository,
}

impl ExtensionScope {
    /// `user` or `repository`.
    pub fn as_str(self) -> &'static str {
        match self {
            ExtensionScope::User => "user",
            ExtensionScope::Repository => "repository",
        }
    }
}

/// A custom command: a Markdown prompt the user runs by name.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// The name it runs by, without the slash: the file name without `.md`,
    /// sub-folders joined with `:` (`git:commit`).
    pub name: String,
    /// The front matter's `description`, or the body's first line.
    pub description: String,
    /// The front matter's `argument-hint` (`<file> [focus]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// The front matter's `mode`, shown only: a command runs in the
    /// session's mode, whatever its file asks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The front matter's `model`, shown only: a command runs with the
    /// session's model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where it was found.
    pub scope: ExtensionScope,
    /// Its file: relative to the repository, or `~/…` for the user's.
    pub path: String,
}

/// A skill: a folder with a `SKILL.md`, loaded by the `skill` tool.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillInfo {
    /// The front matter's `name` (its folder's name too).
    pub name: String,
    /// The front matter's `description`: all the model is shown before it
    /// loads the skill.
    pub description: String,
    /// Where it was found.
    pub scope: ExtensionScope,
    /// Its folder: relative to the repository, or `~/…` for the user's.
    pub path: String,
}

/// A command or skill file that was found and not used.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RejectedFile {
    /// Where it was found.
    pub scope: ExtensionScope,
    /// The file or folder, as [`CommandInfo::path`] names them.
    pub path: String,
    /// Why it is not used.
    pub reason: String,
}

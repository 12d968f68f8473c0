//! What a script would run, as the shell reader (`shell.rs`) reports it and
//! the wrappers (`wrappers.rs`), the deny list and the matcher read it:
//! words after quote removal, simple commands, and the reasons no rule can
//! cover a script.

/// One word of a command line after quote removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Word {
    /// Known before it runs.
    Static(String),
    /// Only known when it runs; the source text, for messages.
    Dynamic(String),
}

impl Word {
    pub(crate) fn text(&self) -> &str {
        match self {
            Word::Static(s) | Word::Dynamic(s) => s,
        }
    }

    pub(crate) fn as_static(&self) -> Option<&str> {
        match self {
            Word::Static(s) => Some(s),
            Word::Dynamic(_) => None,
        }
    }
}

/// One simple command.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct SimpleCommand {
    pub argv: Vec<Word>,
    /// Files its output is redirected to (`>`, `>>`, `&>`, `<>`, `>|`).
    pub writes: Vec<Word>,
    /// Run by a wrapper (`timeout 5 ls`, `bash -c ls`): an "Always" answer
    /// stores no rule for it, since the rule would not name the wrapper.
    pub wrapped: bool,
}

/// Everything a script would run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Analysis {
    pub commands: Vec<SimpleCommand>,
    /// Why no rule can cover the script (empty: rules may).
    pub opaque: Vec<String>,
    /// A command changes the working folder (`cd`, `pushd`, `popd`): a
    /// relative path no longer says where a write lands.
    pub cwd_changes: bool,
}

impl Analysis {
    pub(crate) fn opaque(&mut self, reason: impl Into<String>) {
        let reason = reason.into();
        if !self.opaque.contains(&reason) {
            self.opaque.push(reason);
        }
    }
}

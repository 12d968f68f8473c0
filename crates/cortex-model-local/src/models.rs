//! The models `scripts/fetch-default-model` knows, and where they live.

use crate::error::LocalError;
use std::path::{Path, PathBuf};

/// The model used when none is configured.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

/// Short names and the files they are stored as.
pub const KNOWN_MODELS: &[(&str, &str)] = &[
    (
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    ),
    (
        "qwen2.5-coder-0.5b",
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    ),
    ("smollm2-135m", "smollm2-135m-instruct-q4_1.gguf"),
];

/// `${XDG_DATA_HOME:-$HOME/.local/share}/cortex/models`.
pub fn models_dir() -> PathBuf {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."));
    data.join("cortex").join("models")
}

/// The GGUF file for `name`: a known short name (in [`models_dir`]), a file
/// name in that folder, or a path. Errors when the file is not there, with
/// the command that fetches it.
pub fn resolve_model(name: &str) -> Result<PathBuf, LocalError> {
    let dir = models_dir();
    let path = if let Some((_, file)) = KNOWN_MODELS.iter().find(|(n, _)| *n == name) {
        dir.join(file)
    } else if name.contains('/') || Path::new(name).is_file() {
        PathBuf::from(name)
    } else if name.ends_with(".gguf") {
        dir.join(name)
    } else {
        dir.join(format!("{name}.gguf"))
    };
    if path.is_file() {
        Ok(path)
    } else {
        Err(LocalError::Missing { path })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_model_names_the_path() {
        let err = resolve_model("no-such-model-xyz").expect_err("missing");
        let msg = err.to_string();
        assert!(msg.contains("no-such-model-xyz.gguf"), "{msg}");
        assert!(msg.contains("fetch-default-model"), "{msg}");
    }
}

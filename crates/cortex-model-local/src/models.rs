//! The models Cortex knows by short name, where they come from, and where
//! they live.

use crate::error::LocalError;
use std::path::{Path, PathBuf};

/// The model used when none is configured.
pub const DEFAULT_MODEL: &str = "qwen2.5-coder-1.5b";

/// A model known by short name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KnownModel {
    /// Short name (`--model local:NAME`, `cortex models fetch NAME`).
    pub name: &'static str,
    /// File name in [`models_dir`].
    pub file: &'static str,
    /// Where `cortex models fetch` downloads it: a Hugging Face repository
    /// and file. `None`: no Hugging Face file is known to hold these bytes;
    /// only `scripts/fetch-default-model` gets it.
    pub hf: Option<HfFile>,
    /// Size in bytes of the file `scripts/fetch-default-model` assembles.
    pub size: u64,
    /// sha256 of the file `scripts/fetch-default-model` assembles (the same
    /// hash the script checks).
    pub sha256: &'static str,
}

/// A file in a Hugging Face model repository (`main` revision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HfFile {
    /// `owner/name` of the repository.
    pub repo: &'static str,
    /// The file's path in the repository.
    pub file: &'static str,
}

/// The known models.
///
/// The Qwen files on PyPI (see `scripts/fetch-default-model`) are the
/// official `Qwen/Qwen2.5-Coder-*-Instruct-GGUF` Q4_K_M files, but this
/// could not be confirmed byte for byte from the development machine, which
/// has no route to huggingface.co. So `cortex models fetch` checks a Hugging
/// Face download by its size and GGUF header, and reports whether its sha256
/// equals [`KnownModel::sha256`], rather than refusing a file that may be a
/// legitimate re-upload; `--sha256` makes the hash check strict.
pub const KNOWN_MODELS: &[KnownModel] = &[
    KnownModel {
        name: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        hf: Some(HfFile {
            repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
            file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        }),
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    },
    KnownModel {
        name: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        hf: Some(HfFile {
            repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
            file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        }),
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    },
    // The PyPI file's metadata names an intermediate SmolLM2 checkpoint
    // ("8k-lc100k-mix1-ep2") quantised to Q4_1, which no known Hugging Face
    // repository publishes under a stable name.
    KnownModel {
        name: "smollm2-135m",
        file: "smollm2-135m-instruct-q4_1.gguf",
        hf: None,
        size: 98_362_432,
        sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    },
];

/// The known model called `name`.
pub fn known_model(name: &str) -> Option<&'static KnownModel> {
    KNOWN_MODELS.iter().find(|m| m.name == name)
}

/// `${XDG_DATA_HOME:-$HOME/.local/share}/cortex`.
pub fn data_dir() -> PathBuf {
    std::env::var_os("XDG_DATA_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))
        .unwrap_or_else(|| PathBuf::from("."))
        .join("cortex")
}

/// `${XDG_DATA_HOME:-$HOME/.local/share}/cortex/models`.
pub fn models_dir() -> PathBuf {
    data_dir().join("models")
}

/// The GGUF file for `name`: a known short name (in [`models_dir`]), a file
/// name in that folder, or a path. Errors when the file is not there, with
/// the command that fetches it.
pub fn resolve_model(name: &str) -> Result<PathBuf, LocalError> {
    let dir = models_dir();
    let path = if let Some(known) = known_model(name) {
        dir.join(known.file)
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

    #[test]
    fn known_models_are_consistent() {
        assert!(known_model(DEFAULT_MODEL).is_some());
        for m in KNOWN_MODELS {
            assert_eq!(m.sha256.len(), 64, "{}", m.name);
            assert!(
                m.sha256.chars().all(|c| c.is_ascii_hexdigit()),
                "{}",
                m.name
            );
            assert!(m.file.ends_with(".gguf"), "{}", m.name);
            if let Some(hf) = m.hf {
                assert_eq!(hf.repo.split('/').count(), 2, "{}", m.name);
            }
        }
    }
}

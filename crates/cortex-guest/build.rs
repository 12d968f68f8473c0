//! The guest's build identity: a hash of every source the agent is made of
//! (this crate, the sandbox, the tools, the protocol) and of the lock file.
//! Two binaries with the same identity run the same agent, so the harness
//! may start the small `cortex-guest` binary next to `cortex` instead of
//! `cortex guest` only when their identities match (see `BUILD_ID`).

use std::fs;
use std::path::{Path, PathBuf};

/// The crates whose sources make the agent, relative to this crate.
const SOURCES: &[&str] = &[
    "src",
    "../cortex-sandbox/src",
    "../cortex-tools/src",
    "../cortex-protocol/src",
];

fn main() {
    let here = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for dir in SOURCES {
        let dir = here.join(dir);
        println!("cargo:rerun-if-changed={}", dir.display());
        collect(&dir, &mut files);
    }
    for manifest in ["Cargo.toml", "../../Cargo.lock"] {
        let path = here.join(manifest);
        println!("cargo:rerun-if-changed={}", path.display());
        files.push(path);
    }
    files.sort();
    let mut hash = Fnv::new();
    for file in &files {
        if let Ok(bytes) = fs::read(file) {
            let name = file.strip_prefix(&here).unwrap_or(file);
            hash.write(name.to_string_lossy().as_bytes());
            hash.write(&[0]);
            hash.write(&bytes);
            hash.write(&[0]);
        }
    }
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    println!(
        "cargo:rustc-env=CORTEX_GUEST_BUILD={version}-{:016x}",
        hash.0
    );
}

/// Every file under `dir` (none when it does not exist, as in a package
/// built outside this workspace).
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => collect(&path, out),
            Ok(kind) if kind.is_file() => out.push(path),
            _ => {}
        }
    }
}

/// FNV-1a, 64 bits: enough to tell builds apart, no dependency.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

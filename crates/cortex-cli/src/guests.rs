//! `--guest`: which provider runs the session's tools, built from the flag
//! and the `[guest]` section of the config.

use crate::config::{Config, private_data_dir};
use anyhow::Context;
use cortex_runtime::{
    DockerProvider, GuestProvider, Limits, ProcessProvider, Quota, Quotas, RemoteProvider,
    SandboxProvider,
};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

/// The variable that holds a remote guest's token on this side.
pub const REMOTE_TOKEN_ENV: &str = "CORTEX_GUEST_TOKEN";
/// A PEM CA file: when set, the remote guest is reached over TLS.
pub const REMOTE_CA_ENV: &str = "CORTEX_GUEST_CA";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuestChoice {
    /// The local sandbox (default).
    Local,
    /// An ordinary child process: no isolation (tests, debugging).
    Process,
    /// `remote:HOST:PORT`, an agent started with `cortex guest --listen`.
    Remote(String),
    /// `docker:IMAGE`.
    Docker(String),
}

impl FromStr for GuestChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.split_once(':') {
            None if s == "local" => Ok(GuestChoice::Local),
            None if s == "process" => Ok(GuestChoice::Process),
            Some(("remote", addr)) if !addr.is_empty() => Ok(GuestChoice::Remote(addr.to_owned())),
            Some(("docker", image)) if !image.is_empty() => {
                Ok(GuestChoice::Docker(image.to_owned()))
            }
            _ => Err(format!(
                "unknown guest `{s}`; expected local, process, remote:HOST:PORT or docker:IMAGE"
            )),
        }
    }
}

/// The guest agent's program and arguments: the `cortex-guest` binary next
/// to this one when it is the same build (it starts in about two thirds of
/// the time: it is a fraction of the size, see docs/BENCHMARKS.md), else this
/// very binary as `cortex guest`.
pub fn agent_program() -> anyhow::Result<(PathBuf, Vec<String>)> {
    let cortex = std::env::current_exe().context("cannot locate the cortex binary")?;
    let sibling = cortex.with_file_name(format!("cortex-guest{}", std::env::consts::EXE_SUFFIX));
    if same_build(&sibling) {
        return Ok((sibling, Vec::new()));
    }
    Ok((cortex, vec!["guest".to_owned()]))
}

/// Whether `program` prints this build's guest identity. A stale or foreign
/// binary of that name (an older build, another checkout) is never started.
fn same_build(program: &std::path::Path) -> bool {
    if !program.is_file() {
        return false;
    }
    let output = std::process::Command::new(program)
        .arg("--build-id")
        .env_clear()
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output();
    match output {
        Ok(out) if out.status.success() => {
            String::from_utf8_lossy(&out.stdout).trim() == cortex_guest::BUILD_ID
        }
        _ => false,
    }
}

/// Build the provider for `choice`; the agent is [`agent_program`].
pub fn provider(choice: &GuestChoice, config: &Config) -> anyhow::Result<Arc<dyn GuestProvider>> {
    let (program, args) = agent_program()?;
    Ok(match choice {
        GuestChoice::Local => Arc::new(local(
            program,
            args,
            config,
            private_data_dir()?.join("homes"),
        )?),
        GuestChoice::Process => Arc::new(ProcessProvider { program, args }),
        GuestChoice::Remote(address) => {
            let token = crate::secrets::secret(REMOTE_TOKEN_ENV)
                .with_context(|| format!("a remote guest needs its token in {REMOTE_TOKEN_ENV}"))?;
            Arc::new(RemoteProvider {
                address: address.clone(),
                token,
                tls_ca: std::env::var_os(REMOTE_CA_ENV).map(PathBuf::from),
            })
        }
        GuestChoice::Docker(image) => Arc::new(DockerProvider {
            image: image.clone(),
            program,
            args,
            limits: limits(config),
        }),
    })
}

/// The `local` provider as a session gets it, with the guests' homes in
/// `homes`: `cortex doctor` starts its trial guest with homes of its own,
/// so the check leaves nothing in the data folder.
pub fn local_provider(config: &Config, homes: PathBuf) -> anyhow::Result<SandboxProvider> {
    let (program, args) = agent_program()?;
    local(program, args, config, homes)
}

fn local(
    program: PathBuf,
    args: Vec<String>,
    config: &Config,
    homes: PathBuf,
) -> anyhow::Result<SandboxProvider> {
    let mut provider = SandboxProvider::new(program, args, homes);
    provider.read_only = config
        .guest
        .read_only
        .iter()
        .map(|p| expand_home(p))
        .collect();
    provider.read_write = config
        .guest
        .read_write
        .iter()
        .map(|p| expand_home(p))
        .collect();
    provider.limits = limits(config);
    provider.quotas = quotas(config);
    provider.git_write = config.sandbox.git_write;
    provider.copies = Some(private_data_dir()?.join("workspaces"));
    Ok(provider)
}

fn limits(config: &Config) -> Limits {
    let defaults = Limits::default();
    Limits {
        memory_bytes: config
            .guest
            .memory_mb
            .map_or(defaults.memory_bytes, |mb| mb.saturating_mul(1 << 20)),
        max_processes: config.guest.max_processes.unwrap_or(defaults.max_processes),
    }
}

/// The `[guest] *_quota_mb` / `*_quota_inodes` keys over the defaults.
fn quotas(config: &Config) -> Quotas {
    let defaults = Quotas::default();
    let guest = &config.guest;
    let quota = |mb: Option<u64>, inodes: Option<u64>, default: Quota| Quota {
        bytes: mb.map_or(default.bytes, |mb| mb.saturating_mul(1 << 20)),
        inodes: inodes.unwrap_or(default.inodes),
    };
    Quotas {
        workspace: quota(
            guest.workspace_quota_mb,
            guest.workspace_quota_inodes,
            defaults.workspace,
        ),
        home: quota(guest.home_quota_mb, guest.home_quota_inodes, defaults.home),
        scratch: quota(guest.tmp_quota_mb, guest.tmp_quota_inodes, defaults.scratch),
    }
}

/// `~/x` as a path under `$HOME`.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_choices_parse() {
        assert_eq!("local".parse(), Ok(GuestChoice::Local));
        assert_eq!("process".parse(), Ok(GuestChoice::Process));
        assert_eq!(
            "remote:10.0.0.2:7000".parse(),
            Ok(GuestChoice::Remote("10.0.0.2:7000".into()))
        );
        assert_eq!(
            "docker:debian:12".parse(),
            Ok(GuestChoice::Docker("debian:12".into()))
        );
        assert!("remote:".parse::<GuestChoice>().is_err());
        assert!("vm".parse::<GuestChoice>().is_err());
    }

    /// A program that prints `id` for `--build-id`.
    fn printing(dir: &std::path::Path, name: &str, id: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join(name);
        std::fs::write(&path, format!("#!/bin/sh\necho '{id}'\n")).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path
    }

    #[test]
    fn only_a_guest_binary_of_the_same_build_is_started() {
        let dir = tempfile::tempdir().expect("tempdir");
        let same = printing(dir.path(), "same", cortex_guest::BUILD_ID);
        assert!(same_build(&same));
        let stale = printing(dir.path(), "stale", "0.1.0-0000000000000000");
        assert!(!same_build(&stale));
        assert!(!same_build(&dir.path().join("missing")));
        assert!(!same_build(dir.path()), "a folder is not a program");
    }
}

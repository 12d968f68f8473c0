//! `docker`: the guest agent in a container, through the Docker Engine API
//! (`bollard`, the local socket). The container runs the configured image
//! with this very binary mounted read-only at `/opt/cortex/cortex` (so the
//! image needs a glibc as new as the host's: a Debian or Ubuntu image), the
//! workspace at `/workspace`, no capabilities, `no-new-privileges`, memory
//! and process limits, and no network unless the policy turns it on. The
//! agent speaks over the container's attached stdin/stdout; when the
//! connection closes it exits, and the container (`init`, `auto_remove`)
//! goes with everything it started.

use crate::{Guest, GuestProvider, GuestSpec, Limits, RuntimeError};
use bollard::Docker;
use bollard::container::LogOutput;
use bollard::models::{ContainerCreateBody, HostConfig};
use bollard::query_parameters::{
    AttachContainerOptions, CreateContainerOptions, StartContainerOptions,
};
use cortex_protocol::{NetworkPolicy, SandboxPolicy};
use futures_util::StreamExt;
use std::path::PathBuf;

const AGENT_PATH: &str = "/opt/cortex/cortex";
const WORKSPACE: &str = "/workspace";

/// The `docker` provider (see the module doc for the container's shape).
pub struct DockerProvider {
    /// The image to run, which must already be pulled (a missing one is a
    /// start error that says `docker pull`).
    pub image: String,
    /// The agent binary on the host, mounted into the container; it must
    /// run there (a glibc as new as the host's).
    pub program: PathBuf,
    /// The agent's arguments before `--root /workspace` (`guest`).
    pub args: Vec<String>,
    /// The container's memory and process limits.
    pub limits: Limits,
}

impl DockerProvider {
    fn error(&self, reason: String) -> RuntimeError {
        RuntimeError::Start {
            program: format!("docker image {}", self.image),
            reason,
        }
    }

    fn container(&self, spec: &GuestSpec, workspace: &str, program: &str) -> ContainerCreateBody {
        let read_only = spec.policy == SandboxPolicy::ReadOnly || !spec.writable;
        let mut cmd = vec![AGENT_PATH.to_owned()];
        cmd.extend(self.args.iter().cloned());
        cmd.extend(["--root".to_owned(), WORKSPACE.to_owned()]);
        // The image's own PATH and HOME make sense inside it; the host's do not.
        let env = spec
            .env
            .iter()
            .filter(|(name, _)| name != "PATH" && name != "HOME")
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        ContainerCreateBody {
            image: Some(self.image.clone()),
            cmd: Some(cmd),
            env: Some(env),
            working_dir: Some(WORKSPACE.to_owned()),
            attach_stdin: Some(true),
            attach_stdout: Some(true),
            attach_stderr: Some(true),
            open_stdin: Some(true),
            stdin_once: Some(true),
            tty: Some(false),
            host_config: Some(HostConfig {
                binds: Some(vec![
                    format!(
                        "{workspace}:{WORKSPACE}{}",
                        if read_only { ":ro" } else { "" }
                    ),
                    format!("{program}:{AGENT_PATH}:ro"),
                ]),
                network_mode: Some(
                    match spec.network {
                        NetworkPolicy::Off => "none",
                        NetworkPolicy::On => "bridge",
                    }
                    .to_owned(),
                ),
                auto_remove: Some(true),
                init: Some(true),
                cap_drop: Some(vec!["ALL".to_owned()]),
                security_opt: Some(vec!["no-new-privileges".to_owned()]),
                memory: i64::try_from(self.limits.memory_bytes).ok(),
                memory_swap: i64::try_from(self.limits.memory_bytes).ok(),
                pids_limit: i64::try_from(self.limits.max_processes).ok(),
                ..HostConfig::default()
            }),
            ..ContainerCreateBody::default()
        }
    }
}

#[async_trait::async_trait]
impl GuestProvider for DockerProvider {
    fn name(&self) -> &'static str {
        "docker"
    }

    fn workspace_in_guest(&self, _spec: &GuestSpec) -> Option<std::path::PathBuf> {
        Some(WORKSPACE.into())
    }

    async fn start(&self, spec: &GuestSpec) -> Result<Guest, RuntimeError> {
        crate::process::check_workspace(&self.image, spec)?;
        let docker = Docker::connect_with_local_defaults()
            .map_err(|e| self.error(format!("no Docker engine: {e}")))?;
        docker
            .ping()
            .await
            .map_err(|e| self.error(format!("no Docker engine answers on its socket: {e}")))?;
        let workspace = spec.workspace.canonicalize()?.display().to_string();
        let program = std::path::absolute(&self.program)?.display().to_string();
        let created = docker
            .create_container(
                None::<CreateContainerOptions>,
                self.container(spec, &workspace, &program),
            )
            .await
            .map_err(|e| {
                let text = e.to_string();
                if text.contains("No such image") {
                    self.error(format!(
                        "no image `{0}` here; run `docker pull {0}`",
                        self.image
                    ))
                } else {
                    self.error(text)
                }
            })?;
        let attached = docker
            .attach_container(
                &created.id,
                Some(AttachContainerOptions {
                    stream: true,
                    stdin: true,
                    stdout: true,
                    stderr: true,
                    ..AttachContainerOptions::default()
                }),
            )
            .await
            .map_err(|e| self.error(e.to_string()))?;
        docker
            .start_container(&created.id, None::<StartContainerOptions>)
            .await
            .map_err(|e| self.error(e.to_string()))?;
        let container = created.id.clone();
        let stdout = attached.output.filter_map(move |item| {
            let container = container.clone();
            async move {
                match item {
                    Ok(LogOutput::StdOut { message }) => Some(Ok(message)),
                    Ok(LogOutput::StdErr { message }) => {
                        tracing::debug!(%container, "guest: {}", String::from_utf8_lossy(&message));
                        None
                    }
                    Ok(_) => None,
                    Err(e) => Some(Err(std::io::Error::other(e))),
                }
            }
        });
        let reader = tokio_util::io::StreamReader::new(Box::pin(stdout));
        let guest = Guest::connect(reader, attached.input, None);
        if let Err(e) = guest.set_capabilities(spec.writable, spec.allow_bash).await {
            guest.close().await;
            return Err(self.error(e.to_string()));
        }
        Ok(guest)
    }
}

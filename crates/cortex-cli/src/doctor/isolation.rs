//! The isolation checks: a trial of the local guest, started the way a
//! session starts it (default sandbox, network off) on an empty scratch
//! folder, asked what it runs in (the `isolation` a `runtime.attached`
//! event carries, and its warnings), then closed. The MCP check (`mcp.rs`)
//! starts its servers with the same provider.
//!
//! The scratch folder holds the trial's workspace and the guests' homes, so
//! nothing lands in the data folder; it is removed when the checks end.

use super::Check;
use crate::config::Config;
use crate::guests;
use cortex_protocol::{NetworkPolicy, SandboxPolicy};
use cortex_runtime::{GuestProvider, GuestSpec, Report, allowed_env};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longer than any sane start (a cold one is well under a second).
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// What the trial found, and the provider the MCP servers start with.
pub struct Trial {
    pub checks: Vec<Check>,
    pub guests: Option<TrialGuests>,
}

/// The local provider with the scratch folder its guests' homes live in.
pub struct TrialGuests {
    pub(super) provider: Arc<dyn GuestProvider>,
    pub(super) scratch: Scratch,
}

/// A private folder under the temp dir, removed on drop.
pub(super) struct Scratch {
    root: PathBuf,
}

impl Scratch {
    fn new() -> std::io::Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let root =
            std::env::temp_dir().join(format!("cortex-doctor-{}-{nanos}", std::process::id()));
        // `create`, not `create_all`: a folder already there (planted) is
        // an error, never reused.
        std::fs::DirBuilder::new().mode(0o700).create(&root)?;
        let scratch = Scratch { root };
        std::fs::create_dir(scratch.workspace())?;
        Ok(scratch)
    }

    pub(super) fn workspace(&self) -> PathBuf {
        self.root.join("workspace")
    }

    fn homes(&self) -> PathBuf {
        self.root.join("homes")
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a session's guest needs: the default sandbox, commands allowed.
pub(super) fn session_spec(config: &Config, workspace: PathBuf) -> GuestSpec {
    GuestSpec {
        workspace,
        writable: true,
        allow_bash: true,
        env: allowed_env(&config.guest.env),
        policy: SandboxPolicy::default(),
        network: NetworkPolicy::default(),
    }
}

/// Start the local guest in a scratch folder and read its isolation.
pub async fn trial(config: &Config) -> Trial {
    let scratch = match Scratch::new() {
        Ok(scratch) => scratch,
        Err(e) => {
            let check = Check::fail(
                "isolation",
                format!("cannot make a scratch folder in {}: {e}", temp_dir()),
                "make the temp folder (TMPDIR) writable",
            );
            return Trial {
                checks: vec![check.required()],
                guests: None,
            };
        }
    };
    let provider: Arc<dyn GuestProvider> = match guests::local_provider(config, scratch.homes()) {
        Ok(provider) => Arc::new(provider),
        Err(e) => {
            let check = Check::fail(
                "isolation",
                format!("cannot set up the local guest: {e:#}"),
                "see the error; the guest agent is this very binary (`cortex guest`)",
            );
            return Trial {
                checks: vec![check.required()],
                guests: None,
            };
        }
    };
    let spec = session_spec(config, scratch.workspace());
    let started = Instant::now();
    let checks = match tokio::time::timeout(START_TIMEOUT, provider.start(&spec)).await {
        Ok(Ok(guest)) => {
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            let described = guest.describe().await;
            guest.close().await;
            match described {
                Ok(Some(report)) => attached(&report, ms),
                Ok(None) => vec![
                    Check::fail(
                        "isolation",
                        "the local guest runs without a sandbox",
                        "report this: the default sandbox should isolate",
                    )
                    .required(),
                ],
                Err(e) => vec![
                    Check::fail(
                        "isolation",
                        format!("the local guest did not describe its isolation: {e}"),
                        "CORTEX_LOG=debug cortex doctor shows more",
                    )
                    .required(),
                ],
            }
        }
        Ok(Err(e)) => {
            let error = e.to_string();
            let fix = if error.contains("namespaces") {
                namespaces_fix()
            } else {
                "run sessions with `--sandbox full-access` (no isolation) until this is fixed; \
                 CORTEX_LOG=debug shows more"
                    .to_owned()
            };
            let detail = format!("the local guest did not start: {error}");
            vec![Check::fail("isolation", detail, fix).required()]
        }
        Err(_) => vec![
            Check::fail(
                "isolation",
                format!("the local guest did not start within {START_TIMEOUT:?}"),
                "CORTEX_LOG=debug cortex doctor shows where it stops",
            )
            .required(),
        ],
    };
    Trial {
        checks,
        guests: Some(TrialGuests { provider, scratch }),
    }
}

fn temp_dir() -> String {
    std::env::temp_dir().display().to_string()
}

/// One check per layer of a started guest's report.
fn attached(report: &Report, ms: f64) -> Vec<Check> {
    let mut checks = vec![Check::ok(
        "isolation",
        format!(
            "the local guest starts ({ms:.0} ms; default sandbox: workspace-write, network \
             off): {}",
            report.layers
        ),
    )];
    checks.extend(layers(report, landlock_abi()));
    checks
}

/// The namespaces, Landlock, seccomp and cgroup layers of `report`, each a
/// check; its warnings go to the layer they are about, the rest follow.
fn layers(report: &Report, abi: Option<i64>) -> Vec<Check> {
    let layers = report.layers.as_str();
    let mut warnings: Vec<String> = report.warnings.clone();
    let mut take = |needle: &str| -> Option<String> {
        let at = warnings.iter().position(|w| w.contains(needle))?;
        Some(warnings.remove(at))
    };
    let mut checks = Vec::new();
    let namespaces = layers.find("namespaces(").and_then(|at| {
        let rest = &layers[at + "namespaces(".len()..];
        rest.find(')').map(|end| rest[..end].to_owned())
    });
    checks.push(match namespaces {
        Some(list) => Check::ok("namespaces", list),
        None => Check::warn("namespaces", "the guest reports none", None),
    });
    let abi_text = abi.map_or_else(
        || "the kernel reports no Landlock ABI".to_owned(),
        |abi| format!("kernel ABI {abi}"),
    );
    checks.push(if layers.contains("landlock(partial)") {
        Check::warn(
            "landlock",
            format!("partly in force ({abi_text}; the rules use ABI 5)"),
            Some("a kernel with Landlock ABI 5 (Linux 6.10+) enforces every rule; the mounts confine files meanwhile".to_owned()),
        )
    } else if layers.contains("landlock") {
        Check::ok("landlock", format!("in force ({abi_text})"))
    } else {
        let why = take("Landlock").unwrap_or_else(|| "not applied".to_owned());
        Check::warn(
            "landlock",
            format!("{why} ({abi_text})"),
            Some(
                "a kernel with Landlock enabled (5.13+, `landlock` in the `lsm=` boot \
                 parameter); the mounts confine files meanwhile"
                    .to_owned(),
            ),
        )
    });
    checks.push(if layers.contains("seccomp") {
        Check::ok(
            "seccomp",
            "filter in force, with no new privileges and no capabilities",
        )
    } else {
        Check::warn("seccomp", "the guest reports no seccomp filter", None)
    });
    checks.push(
        if let Some(kind) = ["cgroup v2", "cgroup v1"]
            .into_iter()
            .find(|k| layers.contains(k))
        {
            Check::ok(
                "cgroup",
                format!("{kind}: memory and processes bounded for the whole guest"),
            )
        } else {
            let mut detail =
                take("memory bounded").unwrap_or_else(|| "rlimits in place of a cgroup".to_owned());
            if let Some(more) = take("process count") {
                detail.push_str("; ");
                detail.push_str(&more);
            }
            Check::warn(
                "cgroup",
                detail,
                Some(
                    "run cortex where a cgroup v2 subtree is delegated to your user (e.g. under \
                 `systemd-run --user --scope -p Delegate=yes`)"
                        .to_owned(),
                ),
            )
        },
    );
    checks.extend(
        warnings
            .into_iter()
            .map(|warning| Check::warn("sandbox", warning, None)),
    );
    checks
}

/// The kernel's Landlock ABI version, `None` without Landlock.
#[cfg(target_os = "linux")]
fn landlock_abi() -> Option<i64> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attribute and size 0 and this flag, the call
    // creates nothing and only returns the ABI version (or an error).
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (abi > 0).then_some(abi)
}

#[cfg(not(target_os = "linux"))]
fn landlock_abi() -> Option<i64> {
    None
}

/// How to get user namespaces back, from this machine's sysctls.
fn namespaces_fix() -> String {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|v| v.trim().to_owned())
    };
    let mut ways = vec!["run sessions with `--sandbox full-access` (no isolation)".to_owned()];
    let mut named = false;
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        ways.push("`sudo sysctl kernel.unprivileged_userns_clone=1`".to_owned());
        named = true;
    }
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        ways.push(
            "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor \
             profile that grants cortex `userns`)"
                .to_owned(),
        );
        named = true;
    }
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        ways.push("`sudo sysctl user.max_user_namespaces=10000` (it is 0 here)".to_owned());
        named = true;
    }
    if !named {
        ways.push(
            "allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, \
             kernel.apparmor_restrict_unprivileged_userns=0, or user.max_user_namespaces > 0; \
             in a container, run it with user namespaces allowed)"
                .to_owned(),
        );
    }
    ways.join(", or ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(layers: &str, warnings: &[&str]) -> Report {
        Report {
            layers: layers.to_owned(),
            warnings: warnings.iter().map(|w| (*w).to_owned()).collect(),
            setup_ms: 1.0,
        }
    }

    fn find<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} in {checks:?}"))
    }

    #[test]
    fn every_layer_of_a_full_report_is_ok() {
        let checks = layers(
            &report(
                "namespaces(user,mnt,pid,ipc,uts,net) mounts cgroup v2 landlock no-new-privs \
                 seccomp own-session",
                &[],
            ),
            Some(6),
        );
        for name in ["namespaces", "landlock", "seccomp", "cgroup"] {
            assert_eq!(
                find(&checks, name).status,
                super::super::Status::Ok,
                "{name}"
            );
        }
        assert_eq!(
            find(&checks, "namespaces").detail,
            "user,mnt,pid,ipc,uts,net"
        );
        assert!(find(&checks, "landlock").detail.contains("ABI 6"));
        assert_eq!(checks.len(), 4);
    }

    #[test]
    fn missing_layers_are_warnings_with_their_reason() {
        let checks = layers(
            &report(
                "namespaces(user,mnt,pid,ipc,uts; host network) mounts rlimits no-new-privs \
                 seccomp own-session",
                &[
                    "memory bounded per process (…): no writable cgroup",
                    "Landlock is not supported by this kernel; mounts alone confine the files",
                    "something else",
                ],
            ),
            None,
        );
        use super::super::Status::Warn;
        let landlock = find(&checks, "landlock");
        assert_eq!(landlock.status, Warn);
        assert!(landlock.detail.contains("not supported"), "{landlock:?}");
        let cgroup = find(&checks, "cgroup");
        assert_eq!(cgroup.status, Warn);
        assert!(cgroup.detail.contains("no writable cgroup"), "{cgroup:?}");
        assert_eq!(find(&checks, "sandbox").detail, "something else");
        assert_eq!(
            find(&checks, "namespaces").detail,
            "user,mnt,pid,ipc,uts; host network"
        );
    }

    #[test]
    fn the_namespaces_fix_names_full_access() {
        assert!(namespaces_fix().contains("--sandbox full-access"));
    }
}

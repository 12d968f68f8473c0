//! The sandbox a session's guest runs in: what it may touch and where its
//! workspace comes from. Chosen per session by the user; the defaults are the
//! safe ones.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// How much of the machine the guest may change.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxPolicy {
    /// Nothing is writable, not even the workspace.
    ReadOnly,
    /// The workspace (minus its protected paths) is the only writable tree.
    #[default]
    WorkspaceWrite,
    /// No isolation beyond an ordinary process: the guest sees and may change
    /// whatever the user may.
    FullAccess,
}

/// Whether the guest can reach the network.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum NetworkPolicy {
    /// Loopback only, inside the guest's own network namespace.
    #[default]
    Off,
    /// The host's network.
    On,
}

/// Where the guest's workspace comes from.
#[cfg_attr(feature = "utoipa", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WorkspaceMode {
    /// The user's checkout itself.
    #[default]
    InPlace,
    /// An isolated copy in the session's data folder.
    Copy,
}

/// A session's sandbox settings, recorded in `session.created`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
pub struct Sandbox {
    /// How much of the machine the guest may change.
    #[serde(default)]
    pub policy: SandboxPolicy,
    /// Whether the guest can reach the network.
    #[serde(default)]
    pub network: NetworkPolicy,
    /// Where the guest's workspace comes from.
    #[serde(default)]
    pub workspace: WorkspaceMode,
}

/// A value that is not one of a setting's names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; expected one of: {expected}")]
pub struct UnknownSetting {
    /// Which setting, e.g. `sandbox policy`.
    pub what: &'static str,
    /// The value as given.
    pub value: String,
    /// The setting's names, space-separated.
    pub expected: &'static str,
}

macro_rules! named_setting {
    ($ty:ty, $what:literal, [$($variant:path => $name:literal),+ $(,)?]) => {
        impl $ty {
            /// The setting's name on the wire, in config and on the command
            /// line.
            pub fn as_str(self) -> &'static str {
                match self { $($variant => $name),+ }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl FromStr for $ty {
            type Err = UnknownSetting;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($name => Ok($variant),)+
                    _ => Err(UnknownSetting {
                        what: $what,
                        value: s.to_owned(),
                        expected: concat!($($name, " "),+).trim_ascii_end(),
                    }),
                }
            }
        }
    };
}
pub(crate) use named_setting;

named_setting!(SandboxPolicy, "sandbox policy", [
    SandboxPolicy::ReadOnly => "read-only",
    SandboxPolicy::WorkspaceWrite => "workspace-write",
    SandboxPolicy::FullAccess => "full-access",
]);
named_setting!(NetworkPolicy, "network policy", [
    NetworkPolicy::Off => "off",
    NetworkPolicy::On => "on",
]);
named_setting!(WorkspaceMode, "workspace mode", [
    WorkspaceMode::InPlace => "in-place",
    WorkspaceMode::Copy => "copy",
]);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_text_and_json() {
        for policy in [
            SandboxPolicy::ReadOnly,
            SandboxPolicy::WorkspaceWrite,
            SandboxPolicy::FullAccess,
        ] {
            assert_eq!(policy.as_str().parse::<SandboxPolicy>(), Ok(policy));
            let json = serde_json::to_string(&policy).expect("serializes");
            assert_eq!(json, format!("\"{}\"", policy.as_str()));
        }
        assert_eq!("on".parse::<NetworkPolicy>(), Ok(NetworkPolicy::On));
        assert_eq!("copy".parse::<WorkspaceMode>(), Ok(WorkspaceMode::Copy));
    }

    #[test]
    fn defaults_are_the_safe_ones() {
        let sandbox = Sandbox::default();
        assert_eq!(sandbox.policy, SandboxPolicy::WorkspaceWrite);
        assert_eq!(sandbox.network, NetworkPolicy::Off);
        assert_eq!(sandbox.workspace, WorkspaceMode::InPlace);
        let parsed: Sandbox = serde_json::from_str("{}").expect("empty object is the default");
        assert_eq!(parsed, sandbox);
    }

    #[test]
    fn an_unknown_name_says_what_is_expected() {
        let err = "open".parse::<SandboxPolicy>().expect_err("not a policy");
        assert_eq!(
            err.to_string(),
            "unknown sandbox policy `open`; expected one of: read-only workspace-write full-access"
        );
    }
}

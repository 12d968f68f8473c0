/// Variables a guest inherits from the harness by default.
pub const BASE_ENV_ALLOWLIST: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// The guest's environment: the allow-listed variables (base + `extra` names
/// from the session's config) that are set in this process, and nothing else,
/// so provider keys and API tokens never reach the guest.
pub fn allowed_env(extra: &[String]) -> Vec<(String, String)> {
    let _ = extra;
    unimplemented!()
}

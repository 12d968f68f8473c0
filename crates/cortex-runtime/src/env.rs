/// Variables a guest inherits from the harness by default.
pub const BASE_ENV_ALLOWLIST: [&str; 4] = ["PATH", "HOME", "LANG", "TERM"];

/// The guest's environment: the allow-listed variables (base + `extra` names
/// from the session's config) that are set in this process, and nothing else,
/// so provider keys and API tokens never reach the guest.
pub fn allowed_env(extra: &[String]) -> Vec<(String, String)> {
    allowed_from(extra, |name| std::env::var(name).ok())
}

/// [`allowed_env`] over any lookup (testable without touching this process's
/// environment).
fn allowed_from(
    extra: &[String],
    lookup: impl Fn(&str) -> Option<String>,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = Vec::new();
    let names = BASE_ENV_ALLOWLIST
        .iter()
        .copied()
        .chain(extra.iter().map(String::as_str));
    for name in names {
        if !is_valid_name(name) || env.iter().any(|(n, _)| n == name) {
            continue;
        }
        if let Some(value) = lookup(name) {
            env.push((name.to_owned(), value));
        }
    }
    env
}

/// A name `std::env` can look up: non-empty, no `=`, no NUL.
fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(['=', '\0'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_allow_listed_names_that_are_set() {
        let fake = |name: &str| match name {
            "PATH" => Some("/bin".to_owned()),
            "HOME" => Some("/home/me".to_owned()),
            "OPENAI_API_KEY" => Some("sk-test-secret".to_owned()),
            "CARGO_HOME" => Some("/cargo".to_owned()),
            _ => None,
        };
        let env = allowed_from(&[], fake);
        assert_eq!(
            env,
            vec![
                ("PATH".to_owned(), "/bin".to_owned()),
                ("HOME".to_owned(), "/home/me".to_owned()),
            ]
        );
        let extra = ["CARGO_HOME", "PATH", "UNSET", "", "A=B"].map(String::from);
        let env = allowed_from(&extra, fake);
        let names: Vec<&str> = env.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["PATH", "HOME", "CARGO_HOME"]);
    }

    #[test]
    fn real_environment_is_filtered() {
        // Whatever this process has set (CARGO_*, RUST_*, keys…), only
        // allow-listed names come through.
        let env = allowed_env(&[]);
        for (name, value) in &env {
            assert!(BASE_ENV_ALLOWLIST.contains(&name.as_str()), "{name}");
            assert_eq!(std::env::var(name).ok().as_ref(), Some(value));
        }
        assert!(env.iter().all(|(n, _)| n != "OPENAI_API_KEY"));
        let cargo = allowed_env(&["CARGO_PKG_NAME".to_owned()]);
        assert!(cargo.contains(&("CARGO_PKG_NAME".to_owned(), "cortex-runtime".to_owned())));
    }
}

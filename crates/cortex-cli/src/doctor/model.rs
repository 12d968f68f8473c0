//! The model check (the configured model, or the embedded default's file)
//! and the providers' keys. A key's value is never shown: only whether the
//! variable that holds it is set.
//!
//! The default model's file is checked by its size (against the size the
//! project records for it) and its GGUF header, which is instant; its
//! sha256 is not recomputed (seconds for a 1 GB file on every run), but the
//! expected one is shown for `sha256sum`.

use super::Check;
use crate::config::{Config, config_path};
use cortex_model::recover::is_loopback_url;

/// The model a session uses when none is given on the command line.
pub fn model(config: &Config) -> Vec<Check> {
    let Some(spec) = config.model.as_deref() else {
        return vec![local_model(None)];
    };
    let check = match spec.split_once(':') {
        None => Check::fail(
            "model",
            format!("`model = \"{spec}\"` is not PROVIDER:NAME"),
            format!("write it as e.g. openai:gpt-4o-mini in {}", shown_config()),
        )
        .required(),
        Some(("local", name)) => local_model(Some(name)),
        Some(("openai" | "openai-responses" | "anthropic", _)) => Check::ok(
            "model",
            format!("{spec} (HTTP provider; its key is checked below)"),
        ),
        Some(("scripted", path)) if std::path::Path::new(path).is_file() => {
            Check::ok("model", format!("{spec} (a scripted replay, for tests)"))
        }
        Some(("scripted", path)) => Check::fail(
            "model",
            format!("the model script {path} does not exist"),
            format!("fix `model` in {}", shown_config()),
        )
        .required(),
        Some((other, _)) => Check::fail(
            "model",
            format!("unknown model provider `{other}`"),
            "use local, openai, openai-responses or anthropic",
        )
        .required(),
    };
    vec![check]
}

fn shown_config() -> String {
    config_path().map_or_else(
        |_| "the config file".to_owned(),
        |p| p.display().to_string(),
    )
}

/// The embedded model's file: `name`, or the default when `None`.
#[cfg(feature = "local")]
fn local_model(name: Option<&str>) -> Check {
    use cortex_model_local::{DEFAULT_MODEL, KNOWN_MODELS, known_model};
    let name = name.unwrap_or(DEFAULT_MODEL);
    let path = match cortex_model_local::resolve_model(name) {
        Ok(path) => path,
        Err(e) => {
            let fix = match known_model(name) {
                Some(model) if model.hf.is_some() => format!("cortex models fetch {name}"),
                Some(_) => format!("scripts/fetch-default-model {name}"),
                None => format!(
                    "put the file there, or name another model (`model = \"local:NAME\"` or \
                     \"openai:NAME\") in {}",
                    shown_config()
                ),
            };
            return Check::fail("model", format!("local:{name}: {e}"), fix).required();
        }
    };
    let shown = path.display();
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    if let Err(e) = gguf_header(&path) {
        let fix = format!("fetch it again: cortex models fetch {name}");
        return Check::fail("model", format!("{shown}: {e}"), fix).required();
    }
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let detail = format!("local:{name}: {shown}, {}, GGUF header", megabytes(size));
    match KNOWN_MODELS.iter().find(|m| m.file == file_name) {
        Some(known) if known.size != size => Check::warn(
            "model",
            format!(
                "{detail}; {size} bytes where the known build has {}",
                known.size
            ),
            Some(format!(
                "fetch it again (checked): cortex models fetch {}",
                known.name
            )),
        ),
        Some(known) => Check::ok(
            "model",
            format!(
                "{detail}; size as the known build (sha256 not recomputed; `sha256sum` should \
                 print {})",
                known.sha256
            ),
        ),
        None => Check::ok("model", detail),
    }
}

#[cfg(not(feature = "local"))]
fn local_model(name: Option<&str>) -> Check {
    let detail = match name {
        Some(name) => format!("local:{name}: this build has no embedded model"),
        None => "no model configured, and this build has no embedded model".to_owned(),
    };
    Check::fail(
        "model",
        detail,
        format!(
            "set `model = \"openai:NAME\"` (or anthropic:NAME) in {}, or use a build with the \
             `local` feature",
            shown_config()
        ),
    )
    .required()
}

/// The file opens and starts with the GGUF magic.
#[cfg(feature = "local")]
fn gguf_header(path: &std::path::Path) -> Result<(), String> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .map_err(|e| format!("cannot read it: {e}"))?;
    if &magic == b"GGUF" {
        Ok(())
    } else {
        Err("not a GGUF file (no GGUF header)".to_owned())
    }
}

#[cfg(feature = "local")]
fn megabytes(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// One HTTP provider as the config and the environment set it up.
struct Provider {
    name: &'static str,
    /// The config's `model` uses it.
    used: bool,
    /// Its section is in the config file.
    configured: bool,
    key_env: String,
    base_url: String,
}

/// Whether each HTTP provider is configured and its key present.
pub fn providers(config: &Config) -> Vec<Check> {
    let used = config
        .model
        .as_deref()
        .and_then(|m| m.split_once(':'))
        .map(|(p, _)| p);
    let openai_env = cortex_model::openai::OpenAiConfig::from_env();
    let anthropic_env = cortex_model::anthropic::AnthropicConfig::from_env();
    let openai = Provider {
        name: "openai",
        used: matches!(used, Some("openai" | "openai-responses")),
        configured: config.openai.base_url.is_some() || config.openai.api_key_env.is_some(),
        key_env: config
            .openai
            .api_key_env
            .clone()
            .unwrap_or(openai_env.key_env),
        base_url: crate::models::openai_base_url(config),
    };
    let anthropic = Provider {
        name: "anthropic",
        used: used == Some("anthropic"),
        configured: config.anthropic.base_url.is_some() || config.anthropic.api_key_env.is_some(),
        key_env: config
            .anthropic
            .api_key_env
            .clone()
            .unwrap_or(anthropic_env.key_env),
        base_url: crate::models::anthropic_base_url(config),
    };
    [openai, anthropic]
        .iter()
        .map(|p| provider(p, crate::secrets::secret(&p.key_env).is_some()))
        .collect()
}

/// The check of one provider whose key is (or is not) `set`.
fn provider(p: &Provider, set: bool) -> Check {
    let name = format!("provider {}", p.name);
    let url = shown_url(&p.base_url);
    let key = if set { "set" } else { "not set" };
    let detail = format!("{url}, key {} {key}", p.key_env);
    let loopback = is_loopback_url(&p.base_url);
    match (set, p.used, p.configured) {
        (true, _, _) => Check::ok(name, detail),
        (false, _, _) if loopback => Check::ok(
            name,
            format!("{detail} (a server on this machine needs none)"),
        ),
        (false, true, _) => Check::fail(
            name,
            format!("{detail}; the config's model uses it"),
            format!("export {}=… before starting cortex", p.key_env),
        )
        .required(),
        (false, false, true) => Check::warn(
            name,
            format!("{detail}; configured but no model uses it yet"),
            Some(format!("export {}=… to use it", p.key_env)),
        ),
        (false, false, false) => Check::ok(name, format!("not used ({detail})")),
    }
}

/// `url` without any user or password it carries.
fn shown_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    let host = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if scheme.is_empty() {
        format!("{host}{path}")
    } else {
        format!("{scheme}://{host}{path}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::doctor::Status;

    fn openai(used: bool, configured: bool, base_url: &str) -> Provider {
        Provider {
            name: "openai",
            used,
            configured,
            key_env: "OPENAI_API_KEY".to_owned(),
            base_url: base_url.to_owned(),
        }
    }

    #[test]
    fn a_used_provider_without_its_key_fails_unless_on_loopback() {
        let remote = provider(&openai(true, true, "https://api.openai.com/v1"), false);
        assert_eq!(remote.status, Status::Fail);
        assert!(remote.required);
        assert!(
            remote
                .fix
                .as_deref()
                .is_some_and(|f| f.contains("OPENAI_API_KEY"))
        );
        let local = provider(&openai(true, true, "http://127.0.0.1:8080/v1"), false);
        assert_eq!(local.status, Status::Ok);
        let set = provider(&openai(true, true, "https://api.openai.com/v1"), true);
        assert_eq!(set.status, Status::Ok);
        assert!(set.detail.contains("OPENAI_API_KEY set"), "{}", set.detail);
        let unused = provider(&openai(false, false, "https://api.openai.com/v1"), false);
        assert_eq!(unused.status, Status::Ok);
        let idle = provider(&openai(false, true, "https://api.openai.com/v1"), false);
        assert_eq!(idle.status, Status::Warn);
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(
            shown_url("https://user:pw@example.com/v1?x=1"),
            "https://example.com/v1?x=1"
        );
        assert_eq!(
            shown_url("http://127.0.0.1:8080/v1"),
            "http://127.0.0.1:8080/v1"
        );
    }
}

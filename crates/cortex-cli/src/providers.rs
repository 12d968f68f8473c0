//! The server's [`ProviderFactory`] for the CLI: models from `--model`
//! specs (as `exec` chooses them), guests from `--guest` (the local sandbox
//! by default).

use crate::config::Config;
use crate::guests::GuestChoice;
use cortex_runtime::{GuestProvider, allowed_env};
use cortex_server::{ModelChoice, ProviderError, ProviderFactory, Providers};
use std::sync::Arc;

pub struct CliProviders {
    config: Config,
    /// For sessions created without a model, and for reopened sessions whose
    /// recorded model cannot be rebuilt from its description (`scripted`).
    default_model: Option<String>,
    guests: Arc<dyn GuestProvider>,
}

impl CliProviders {
    pub fn new(
        config: Config,
        default_model: Option<String>,
        guest: &GuestChoice,
    ) -> anyhow::Result<Self> {
        let guests = crate::guests::provider(guest, &config)?;
        Ok(CliProviders {
            config,
            default_model,
            guests,
        })
    }
}

impl ProviderFactory for CliProviders {
    fn providers(&self, model: ModelChoice<'_>) -> Result<Providers, ProviderError> {
        let spec = match model {
            ModelChoice::New(spec) => spec.or(self.default_model.as_deref()),
            // `provider:name` descriptions rebuild; others use the default.
            ModelChoice::Resume(described) if described.contains(':') => Some(described),
            ModelChoice::Resume(_) => self.default_model.as_deref(),
        };
        let model = crate::models::select(spec, &self.config)
            .map_err(|e| ProviderError::with_source(format!("{e:#}"), e))?;
        Ok(Providers {
            model,
            guests: self.guests.clone(),
            guest_env: allowed_env(&self.config.guest.env),
        })
    }
}

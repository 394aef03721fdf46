//! Registry access for a run: the client the runner asks registries with, and the
//! credentials it may use (`--registry-config` and the manifests' dockerconfigjson Secrets).

use super::error::RunError;
use super::lookups::Lookups;
use crate::cli::Preflight;
use crate::cluster::Connection;
use crate::manifest::Manifest;
use crate::registry::{Credentials, Registry, RegistryOptions};
use std::sync::Arc;

pub struct RegistryAccess {
    pub registry: Arc<Registry>,
    pub credentials: Option<Credentials>,
}

impl RegistryAccess {
    /// Credentials from `--registry-config` (read by the caller) merged with
    /// dockerconfigjson Secrets found in the manifests.
    pub fn new(
        config_credentials: Option<Credentials>,
        manifests: &[Manifest],
    ) -> Result<Self, RunError> {
        let registry = Registry::new(&RegistryOptions::default())?;
        let mut credentials = config_credentials;
        if let Some(found) = credentials_in(manifests) {
            match &mut credentials {
                Some(c) => c.merge(found),
                None => credentials = Some(found),
            }
        }
        Ok(RegistryAccess {
            registry: Arc::new(registry),
            credentials,
        })
    }

    /// The registry lookups the judging loop makes while it watches (none with `off`).
    pub fn lookups(&self, conn: &Connection, mode: Preflight) -> Option<Lookups> {
        (mode != Preflight::Off).then(|| {
            Lookups::new(
                self.registry.clone(),
                conn.client.clone(),
                self.credentials.clone(),
            )
        })
    }
}

/// Registry credentials found in the manifests themselves (dockerconfigjson Secrets).
pub fn credentials_in(manifests: &[Manifest]) -> Option<Credentials> {
    let mut found: Option<Credentials> = None;
    for m in manifests
        .iter()
        .filter(|m| m.kind == "Secret" && m.group().is_empty())
    {
        if let Ok(c) = Credentials::from_secret(&m.object) {
            match &mut found {
                Some(f) => f.merge(c),
                None => found = Some(c),
            }
        }
    }
    found
}

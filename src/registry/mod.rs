//! Asks container registries whether images exist for given credentials (OCI distribution
//! API); what an answer means for a deployment is decided by the caller.

mod client;
mod credentials;
mod helper;
mod lookup;
mod pattern;
mod reference;
mod response;
mod token;
mod transport;

#[cfg(test)]
mod distribution_tests;
#[cfg(test)]
mod fake_registry_tests;
#[cfg(test)]
mod testing;

pub use client::{Registry, RegistryOptions};
pub use credentials::{Auth, Credentials, CredentialsError};
pub use helper::{CredentialHelpers, HelperError};
pub use lookup::Lookup;
pub use reference::{DOCKER_HUB, ImageRef, ReferenceError};
pub use transport::RegistryError;
pub(crate) use transport::platform_tls;

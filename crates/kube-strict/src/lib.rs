//! The API server's own rules for a built-in kind's body, as pure functions over
//! `serde_json::Value`: strict decoding into the Go type (wrong JSON types, undeclared
//! fields), defaulting, and validation (enum values, required fields, names, ...).
//! kube-sim's API server and deploy-action's offline `check` both use this crate, so the
//! simulated cluster and `check` cannot disagree about a manifest.

pub mod cel;
pub mod crd_schema;
pub mod decode;
pub mod defaults;
pub mod near;
pub mod path;
pub mod refusal;
pub mod schema;
pub mod validation;

pub use refusal::{Refusal, refusals};

//! Loads Kubernetes manifests from files, directories and stdin into objects that know
//! their source lines, and validates them statically and against the cluster's kinds.

pub mod builtin;
mod cluster;
mod containers;
mod custom;
mod document;
mod error;
mod json;
pub mod limits;
mod load;
mod near;
pub mod offline;
mod origin;
mod refusals;
mod scalar;
pub mod secrets;
mod shape;
mod source;
mod validate;
mod yaml;

pub use cluster::{Scope, resolve_namespace, resolve_namespaces, validate_against};
pub use containers::ImageLine;
pub use document::Manifest;
pub use error::{LoadError, Problem, count, render_problems};
pub use load::{load, load_str};
pub use source::STDIN_NAME;
pub use validate::validate;
pub use yaml::{Document, PointerLines, Stream, YamlError, escape_pointer, parse_stream};

#[cfg(test)]
pub(crate) mod tests;

//! Server-side apply, field ownership (`managedFields`) and the PATCH formats, as the
//! Kubernetes API server implements them; pure functions over `serde_json::Value`.

mod compare;
mod conflict;
pub mod fieldset;
mod managed;
mod merge;
mod patch;
use kube_strict::path;
pub use kube_strict::schema;
mod ssa;

#[cfg(test)]
mod list_tests;
#[cfg(test)]
mod patch_tests;
#[cfg(test)]
mod ssa_tests;
#[cfg(test)]
mod test_fixtures;

pub use conflict::{ApplyError, Conflict, conflict_message};
pub use fieldset::{FieldSet, PathElement, path_string};
pub use patch::{PatchError, json_patch, merge_patch, strategic_merge_patch};
pub use schema::{ListKind, is_atomic_map, list_kind};
pub use ssa::{ApplyOptions, apply, owned_by, record_update};

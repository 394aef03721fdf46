//! The pure verdict rules: objects seen so far plus a deadline in, verdict out.
//!
//! The top level holds what every rule shares (the snapshot they read, the target they
//! judge, the assessment they return); each folder holds the rules of one concern.

pub mod affected;
pub mod annotations;
pub mod assess;
pub mod assessment;
pub(crate) mod borrowed;
pub mod custom;
pub mod error;
pub(crate) mod event_store;
pub mod exists;
pub mod head;
pub mod health;
pub mod images;
pub mod kept;
pub mod kinds;
pub mod live;
pub mod network_storage;
pub mod object_key;
pub(crate) mod packed;
pub mod pods;
pub mod settle;
pub mod snapshot;
pub mod target;
pub(crate) mod template_labels;
pub mod touched;
pub mod workloads;

#[cfg(test)]
pub(crate) mod fixtures;

pub use affected::Affected;
pub use annotations::timeout::deadline_for;
pub use annotations::validate::validate;
pub use assess::{assess, assess_seen};
pub use assessment::{Assessment, judge};
pub use error::RulesError;
pub use images::pull_error::{PullErrorClass, classify};
pub use images::pull_state::{PullDecision, PullTrouble, image_pull_state};
pub use images::registry_view::{RegistryView, RegistryViews};
pub use live::Live;
pub use snapshot::{ObjectKey, Prepared, Snapshot};
pub use target::Target;
pub use touched::Touched;

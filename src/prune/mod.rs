//! `deploy --prune`: deleting what left the manifests, with the ApplySet convention
//! (KEP-3659) so that kubectl sees the same set. `applyset` and `members` decide (pure);
//! `requests` asks the API server; `pipeline/pruning.rs` runs pruning within a deploy.

pub mod applyset;
pub mod members;
pub mod requests;

pub use applyset::{GroupKind, Members, Parent, ParentConflict, ParentKind};
use std::collections::BTreeSet;

/// What the command line asked of pruning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PruneConfig {
    /// `--applyset`: the parent's kind and name; its namespace is the deploy's (`-n`, else
    /// the context's).
    pub parent_kind: ParentKind,
    pub parent_name: String,
    /// `--prune-allow-namespace`: guarded namespaces pruning may touch.
    pub allow_namespaces: BTreeSet<String>,
    /// `--applyset-adopt`: take over a set another tool (kubectl) manages.
    pub adopt: bool,
}

impl PruneConfig {
    pub fn parent(&self, namespace: &str) -> Parent {
        Parent {
            kind: self.parent_kind,
            name: self.parent_name.clone(),
            namespace: namespace.to_owned(),
        }
    }
}

/// Why a deploy with `--prune` does not start. Nothing was applied (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PruneRefusal {
    #[error(
        "--prune would prune in namespace{} {}\n  hint: pruning deletes objects; name each namespace it may touch with --prune-allow-namespace (e.g. --prune-allow-namespace {}), or deploy to another namespace with -n",
        if .0.len() == 1 { "" } else { "s" },
        .0.join(", "),
        .0[0]
    )]
    GuardedNamespace(Vec<String>),
    #[error("--applyset: {0}\n  hint: {hint}", hint = .0.hint())]
    Parent(ParentConflict),
    #[error("--prune: could not read the ApplySet parent {parent}: {message}")]
    Unreadable { parent: String, message: String },
}

//! Apply conflicts and their wording, which kubectl and client libraries show to users verbatim
//! (k8s.io/apiserver's `NewConflictError` / `printManager`).

use std::collections::BTreeMap;

use super::managed::{UPDATE, identity};

/// A field another manager owns with a different value than the apply would set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub manager: String,
    /// `Apply` or `Update`: appliers are named without their API version.
    pub operation: String,
    pub api_version: String,
    pub subresource: Option<String>,
    /// Structured-merge-diff's path, e.g. `.spec.template.spec.containers[name="web"].image`.
    pub path: String,
}

impl Conflict {
    /// `"kubectl-edit" using apps/v1`, `"kubectl"`, `"kcm" with subresource "status" using v1`.
    pub fn manager_description(&self) -> String {
        let mut out = quote(&self.manager);
        if let Some(sub) = &self.subresource {
            out.push_str(&format!(" with subresource {}", quote(sub)));
        }
        if self.operation == UPDATE {
            out.push_str(&format!(" using {}", self.api_version));
        }
        out
    }

    /// The message of this conflict's `FieldManagerConflict` status cause (its field is `path`).
    pub fn cause_message(&self) -> String {
        format!("conflict with {}", self.manager_description())
    }

    pub(super) fn identity(&self) -> String {
        identity(
            &self.manager,
            &self.operation,
            &self.api_version,
            self.subresource.as_deref(),
        )
    }
}

// Go's %q, which matches JSON string quoting for the names managers use.
fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

/// The 409 message: one line for a single conflict, otherwise grouped by manager (sorted by
/// the manager identifier) with one `- path` line per field.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            only.manager_description(),
            only.path
        );
    }
    let mut groups: BTreeMap<String, (String, Vec<&str>)> = BTreeMap::new();
    for c in conflicts {
        groups
            .entry(c.identity())
            .or_insert_with(|| (c.manager_description(), Vec::new()))
            .1
            .push(&c.path);
    }
    let mut lines = Vec::new();
    for (description, paths) in groups.into_values() {
        lines.push(format!("conflicts with {description}:"));
        lines.extend(paths.into_iter().map(|p| format!("- {p}")));
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// Why an apply was refused.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// HTTP 409; the message is Kubernetes' own, capital letter included.
    #[error("{}", conflict_message(.0))]
    Conflict(Vec<Conflict>),
    /// HTTP 422/400: the configuration cannot be typed (missing list keys, duplicates, not an object).
    #[error("invalid apply configuration: {0}")]
    Invalid(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conflict(manager: &str, operation: &str, subresource: Option<&str>, path: &str) -> Conflict {
        Conflict {
            manager: manager.into(),
            operation: operation.into(),
            api_version: "apps/v1".into(),
            subresource: subresource.map(Into::into),
            path: path.into(),
        }
    }

    #[test]
    fn single_conflict_reads_like_kubectl_shows_it() {
        let c = conflict(
            "kubectl-client-side-apply",
            "Update",
            None,
            ".spec.replicas",
        );
        assert_eq!(
            ApplyError::Conflict(vec![c]).to_string(),
            r#"Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas"#
        );
    }

    #[test]
    fn several_conflicts_group_by_sorted_manager() {
        let conflicts = [
            conflict("kubectl-edit", "Update", None, ".spec.replicas"),
            conflict("helm", "Apply", None, ".metadata.labels.app"),
            conflict(
                "kubectl-edit",
                "Update",
                None,
                r#".spec.template.spec.containers[name="web"].image"#,
            ),
            conflict("kcm", "Update", Some("status"), ".status.replicas"),
        ];
        assert_eq!(
            conflict_message(&conflicts),
            "Apply failed with 4 conflicts: conflicts with \"helm\":\n- .metadata.labels.app\n\
             conflicts with \"kcm\" with subresource \"status\" using apps/v1:\n- .status.replicas\n\
             conflicts with \"kubectl-edit\" using apps/v1:\n- .spec.replicas\n\
             - .spec.template.spec.containers[name=\"web\"].image"
        );
        assert_eq!(
            conflicts[0].cause_message(),
            r#"conflict with "kubectl-edit" using apps/v1"#
        );
    }
}

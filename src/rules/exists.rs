//! Kinds with nothing to wait for: once the API server stored them they are in effect
//! (config, RBAC, policy objects; `rules::kinds` lists them). A Namespace must also be
//! Active, not Terminating.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use serde_json::Value;

/// A kind done once stored: nothing in its object is read.
pub fn assess() -> Assessment {
    Assessment::succeeded("exists")
}

pub fn namespace(obj: &Value) -> Assessment {
    match obj.at("/status/phase").and_then(Value::as_str) {
        Some("Terminating") => Assessment::not_ready("namespace is terminating"),
        Some(phase) => Assessment::succeeded(phase.to_lowercase()),
        None => Assessment::succeeded("exists"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn namespaces_must_not_be_terminating() {
        let ns = |phase: &str| {
            json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": "shop", "uid": "1e1e1e1e-0000-4000-8000-000000000001", "resourceVersion": "10",
                    "labels": {"kubernetes.io/metadata.name": "shop"}},
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": phase}})
        };
        assert_eq!(namespace(&ns("Active")), Assessment::succeeded("active"));
        assert_eq!(
            namespace(&ns("Terminating")),
            Assessment::not_ready("namespace is terminating")
        );
    }
}

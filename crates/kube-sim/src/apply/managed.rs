//! `metadata.managedFields` entries: reading them from objects, identifying managers the way the
//! API server does, and writing them back in the API server's order.

use serde_json::{Map, Value, json};

use super::fieldset::{FieldSet, PathElement};
use super::merge::{remove_metadata, set_metadata};

pub const APPLY: &str = "Apply";
pub const UPDATE: &str = "Update";

/// Server-maintained metadata: never taken from a request body, never owned.
pub const SERVER_METADATA: [&str; 8] = [
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
];

/// Paths no manager owns (the API server's stripMetaManager set plus deletion metadata).
pub fn unowned_paths() -> &'static FieldSet {
    // Built once: every write subtracts it, and it never changes.
    static PATHS: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(|| {
        let f = |s: &str| PathElement::Field(s.to_owned());
        let mut set = FieldSet::new();
        for top in ["apiVersion", "kind", "metadata"] {
            set.insert(&[f(top)]);
        }
        for field in SERVER_METADATA.iter().chain(&["name", "namespace"]) {
            set.insert(&[f("metadata"), f(field)]);
        }
        set
    });
    &PATHS
}

/// One manager's ownership record.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub manager: String,
    pub operation: String,
    pub api_version: String,
    pub time: Option<String>,
    pub subresource: Option<String>,
    pub set: FieldSet,
}

impl Entry {
    /// The API server's manager identifier: the entry minus fields and time, and minus the
    /// API version for appliers (so re-applying at another version is the same manager).
    pub fn identity(&self) -> String {
        identity(
            &self.manager,
            &self.operation,
            &self.api_version,
            self.subresource.as_deref(),
        )
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("manager".into(), json!(self.manager));
        out.insert("operation".into(), json!(self.operation));
        out.insert("apiVersion".into(), json!(self.api_version));
        if let Some(time) = &self.time {
            out.insert("time".into(), json!(time));
        }
        out.insert("fieldsType".into(), json!("FieldsV1"));
        out.insert("fieldsV1".into(), self.set.to_fields_v1());
        if let Some(sub) = &self.subresource {
            out.insert("subresource".into(), json!(sub));
        }
        Value::Object(out)
    }

    fn from_json(value: &Value) -> Option<Self> {
        let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_owned);
        if value
            .get("fieldsType")
            .and_then(Value::as_str)
            .is_some_and(|t| t != "FieldsV1")
        {
            return None;
        }
        Some(Self {
            manager: text("manager").unwrap_or_default(),
            operation: text("operation")?,
            api_version: text("apiVersion").unwrap_or_default(),
            time: text("time"),
            subresource: text("subresource").filter(|s| !s.is_empty()),
            set: FieldSet::from_fields_v1(value.get("fieldsV1").unwrap_or(&Value::Null)),
        })
    }
}

pub fn identity(
    manager: &str,
    operation: &str,
    api_version: &str,
    subresource: Option<&str>,
) -> String {
    let mut id = Map::new();
    if !manager.is_empty() {
        id.insert("manager".into(), json!(manager));
    }
    id.insert("operation".into(), json!(operation));
    if operation != APPLY && !api_version.is_empty() {
        id.insert("apiVersion".into(), json!(api_version));
    }
    if let Some(sub) = subresource {
        id.insert("subresource".into(), json!(sub));
    }
    Value::Object(id).to_string()
}

pub fn decode(object: &Value) -> Vec<Entry> {
    let entries = object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array);
    entries
        .into_iter()
        .flatten()
        .filter_map(Entry::from_json)
        .collect()
}

/// For non-apply writes: the request's own `managedFields` win when it sends some, `[]` (or
/// `[{}]`) resets them, and otherwise the live object's carry over. Subresource writes always
/// use the live object's.
pub fn decode_live_or_new(live: Option<&Value>, new: &Value, from_live_only: bool) -> Vec<Entry> {
    if !from_live_only && let Some(Value::Array(sent)) = new.pointer("/metadata/managedFields") {
        let reset = sent.is_empty() || (sent.len() == 1 && sent[0] == json!({}));
        if reset {
            return Vec::new();
        }
        let decoded = decode(new);
        if !decoded.is_empty() {
            return decoded;
        }
    }
    live.map(decode).unwrap_or_default()
}

/// Writes entries back, dropping the ones that own nothing, in the API server's order:
/// `Apply` before `Update`, then by time, manager, API version and subresource.
pub fn store(object: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.set.is_empty());
    entries.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    // Re-inserted rather than replaced so it stays last, where the API server prints it.
    remove_metadata(object, &["managedFields"]);
    if !entries.is_empty() {
        set_metadata(
            object,
            "managedFields",
            entries.iter().map(Entry::to_json).collect(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_leaves_out_the_api_version_of_appliers_only() {
        assert_eq!(
            identity("kubectl", APPLY, "apps/v1", None),
            r#"{"manager":"kubectl","operation":"Apply"}"#
        );
        assert_eq!(
            identity("kube-controller-manager", UPDATE, "apps/v1", Some("status")),
            r#"{"manager":"kube-controller-manager","operation":"Update","apiVersion":"apps/v1","subresource":"status"}"#
        );
    }

    #[test]
    fn entries_are_stored_apply_first_then_by_time() {
        let live = json!({"metadata": {"name": "web", "managedFields": [
            {"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2025-01-01T00:00:02Z", "fieldsType": "FieldsV1",
             "fieldsV1": {"f:status": {"f:replicas": {}}}, "subresource": "status"},
            {"manager": "kubectl-edit", "operation": "Update", "apiVersion": "apps/v1",
             "time": "2025-01-01T00:00:01Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "kubectl", "operation": "Apply", "apiVersion": "apps/v1",
             "time": "2025-01-01T00:00:03Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:paused": {}}}},
            {"manager": "gone", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {}}
        ]}});
        let mut out = json!({"metadata": {"name": "web"}});
        store(&mut out, decode(&live));
        let managers: Vec<&str> = out["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(
            managers,
            ["kubectl", "kubectl-edit", "kube-controller-manager"]
        );
        assert_eq!(
            out["metadata"]["managedFields"][2],
            live["metadata"]["managedFields"][0]
        );
    }

    #[test]
    fn an_empty_list_in_the_request_resets_ownership() {
        let live = json!({"metadata": {"managedFields": [{"manager": "a", "operation": "Update",
            "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:k": {}}}}]}});
        assert!(
            decode_live_or_new(
                Some(&live),
                &json!({"metadata": {"managedFields": []}}),
                false
            )
            .is_empty()
        );
        assert_eq!(
            decode_live_or_new(Some(&live), &json!({"metadata": {}}), false).len(),
            1
        );
        assert_eq!(
            decode_live_or_new(
                Some(&live),
                &json!({"metadata": {"managedFields": []}}),
                true
            )
            .len(),
            1
        );
    }
}

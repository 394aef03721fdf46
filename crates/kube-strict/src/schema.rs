//! The slice of the Kubernetes OpenAPI schema that merging needs: which lists merge by key
//! (`x-kubernetes-list-type`), which objects are atomic, and how list items are identified.
//! Paths are field names from the object root with list items left out, e.g.
//! `["spec", "template", "spec", "containers", "ports"]`.

use serde_json::Value;

use crate::path::PathElement;

/// How a list merges and how its items are owned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ListKind {
    /// Replaced whole and owned as one field.
    Atomic,
    /// Items merge by these key fields (`listType=map`).
    Map(&'static [&'static str]),
    /// Scalar items are owned one by one (`listType=set`).
    Set,
}

const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

pub fn list_kind<S: AsRef<str>>(path: &[S]) -> ListKind {
    let names: Vec<&str> = path.iter().map(AsRef::as_ref).collect();
    let (last, parent) = match names.as_slice() {
        [.., parent, last] => (*last, Some(*parent)),
        [last] => (*last, None),
        [] => return ListKind::Atomic,
    };
    let in_container = parent.is_some_and(|p| CONTAINER_LISTS.contains(&p));
    match last {
        l if CONTAINER_LISTS.contains(&l) => ListKind::Map(&["name"]),
        "env" if in_container => ListKind::Map(&["name"]),
        "volumeMounts" if in_container => ListKind::Map(&["mountPath"]),
        "volumeDevices" if in_container => ListKind::Map(&["devicePath"]),
        "ports" if in_container => ListKind::Map(&["containerPort", "protocol"]),
        // Service ports; EndpointSlice and NetworkPolicy ports live elsewhere and stay atomic.
        "ports" if names == ["spec", "ports"] => ListKind::Map(&["port", "protocol"]),
        "volumes" if parent == Some("spec") => ListKind::Map(&["name"]),
        "imagePullSecrets" => ListKind::Map(&["name"]),
        "hostAliases" => ListKind::Map(&["ip"]),
        "topologySpreadConstraints" => ListKind::Map(&["topologyKey", "whenUnsatisfiable"]),
        "conditions" => ListKind::Map(&["type"]),
        "ownerReferences" if names == ["metadata", "ownerReferences"] => ListKind::Map(&["uid"]),
        "finalizers" if names == ["metadata", "finalizers"] => ListKind::Set,
        _ => ListKind::Atomic,
    }
}

/// Objects replaced whole (`x-kubernetes-map-type: atomic` / `+structType=atomic`):
/// label selectors, key/field references, owner references.
pub fn is_atomic_map<S: AsRef<str>>(path: &[S]) -> bool {
    let names: Vec<&str> = path.iter().map(AsRef::as_ref).collect();
    match names.as_slice() {
        ["metadata", "ownerReferences"] => true,
        [.., last] => matches!(
            *last,
            "selector"
                | "labelSelector"
                | "namespaceSelector"
                | "podSelector"
                | "nodeSelector"
                | "configMapKeyRef"
                | "secretKeyRef"
                | "fieldRef"
                | "resourceFieldRef"
                | "involvedObject"
                | "claimRef"
        ),
        [] => false,
    }
}

/// Key fields the schema defaults, so an omitted `protocol` still identifies the item.
pub fn key_default(key: &str) -> Option<Value> {
    (key == "protocol").then(|| Value::String("TCP".to_owned()))
}

/// How an item of a keyed or set list is addressed; the error text is structured-merge-diff's.
pub fn item_element(kind: &ListKind, item: &Value) -> Result<PathElement, String> {
    match (kind, item) {
        (ListKind::Map(keys), Value::Object(fields)) => {
            let mut key = Vec::with_capacity(keys.len());
            for name in *keys {
                let value = fields.get(*name).cloned().or_else(|| key_default(name)).ok_or_else(|| {
                    format!("associative list with keys has an element that omits key field {name:?} (and doesn't have default value)")
                })?;
                key.push(((*name).to_owned(), value));
            }
            key.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(key))
        }
        (ListKind::Map(_), _) => {
            Err("associative list with keys may only have map elements".to_owned())
        }
        (ListKind::Set, Value::Array(_) | Value::Object(_)) => {
            Err("associative list without keys may only have scalar elements".to_owned())
        }
        (ListKind::Set, scalar) => Ok(PathElement::Value(scalar.clone())),
        (ListKind::Atomic, _) => Err("atomic list items have no identity".to_owned()),
    }
}

/// A value as the schema sees it at a path.
pub enum Shape<'a> {
    Map(&'a serde_json::Map<String, Value>),
    List(&'a [Value], ListKind),
    /// Scalars, nulls, atomic lists and atomic objects.
    Leaf,
}

pub fn shape<'a, S: AsRef<str>>(value: &'a Value, path: &[S]) -> Shape<'a> {
    match value {
        Value::Object(map) if !is_atomic_map(path) => Shape::Map(map),
        Value::Array(items) => match list_kind(path) {
            ListKind::Atomic => Shape::Leaf,
            kind => Shape::List(items, kind),
        },
        _ => Shape::Leaf,
    }
}

/// Items with their path elements, first occurrence winning; items without a usable key
/// fall back to their index so stored objects never fail to load.
pub fn index_items<'a>(items: &'a [Value], kind: &ListKind) -> Vec<(PathElement, &'a Value)> {
    let mut out: Vec<(PathElement, &Value)> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let pe = item_element(kind, item).unwrap_or(PathElement::Index(i));
        if !out.iter().any(|(seen, _)| *seen == pe) {
            out.push((pe, item));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(path: &[&str], want: &ListKind) {
        assert_eq!(&list_kind(path), want, "{path:?}");
    }

    #[test]
    fn lists_merge_like_the_kubernetes_schema() {
        let tmpl = ["spec", "template", "spec"];
        let at = |rest: &[&'static str]| [tmpl.as_slice(), rest].concat();
        case(&at(&["containers"]), &ListKind::Map(&["name"]));
        case(&at(&["initContainers", "env"]), &ListKind::Map(&["name"]));
        case(
            &at(&["containers", "volumeMounts"]),
            &ListKind::Map(&["mountPath"]),
        );
        case(
            &at(&["containers", "ports"]),
            &ListKind::Map(&["containerPort", "protocol"]),
        );
        case(&at(&["volumes"]), &ListKind::Map(&["name"]));
        case(
            &at(&["topologySpreadConstraints"]),
            &ListKind::Map(&["topologyKey", "whenUnsatisfiable"]),
        );
        case(&at(&["containers", "args"]), &ListKind::Atomic);
        case(&at(&["tolerations"]), &ListKind::Atomic);
        case(&["spec", "ports"], &ListKind::Map(&["port", "protocol"]));
        case(&["ports"], &ListKind::Atomic); // EndpointSlice
        case(&["endpoints"], &ListKind::Atomic);
        case(&["status", "conditions"], &ListKind::Map(&["type"]));
        case(&["metadata", "finalizers"], &ListKind::Set);
        case(&["spec", "finalizers"], &ListKind::Atomic); // Namespace
        case(&["metadata", "ownerReferences"], &ListKind::Map(&["uid"]));
    }

    #[test]
    fn omitted_protocol_keys_as_tcp_but_omitted_name_is_an_error() {
        let ports = ListKind::Map(&["containerPort", "protocol"]);
        let pe = item_element(&ports, &json!({"containerPort": 80, "name": "http"})).unwrap();
        assert_eq!(pe.to_key(), r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        let err = item_element(&ListKind::Map(&["name"]), &json!({"image": "nginx"})).unwrap_err();
        assert!(err.contains(r#"omits key field "name""#), "{err}");
    }

    #[test]
    fn selectors_and_owner_references_are_atomic_but_labels_are_not() {
        assert!(is_atomic_map(&["spec", "selector"]));
        assert!(is_atomic_map(&["metadata", "ownerReferences"]));
        assert!(is_atomic_map(&[
            "spec",
            "template",
            "spec",
            "containers",
            "env",
            "valueFrom",
            "secretKeyRef"
        ]));
        assert!(!is_atomic_map(&["metadata", "labels"]));
        assert!(!is_atomic_map(&["spec", "template", "spec"]));
    }
}

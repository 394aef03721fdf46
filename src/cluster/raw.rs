//! The object type the watchers read: the API server's JSON parsed once, straight into the
//! `serde_json::Value` the snapshot keeps, without `metadata.managedFields` (no rule reads
//! it, and it is often the larger part of an object). kube's `DynamicObject` would parse
//! into typed metadata and a flattened rest, only to be serialized back into a `Value`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{ApiResource, DynamicResourceScope, Resource};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt;

/// One object as the API server sent it (less managedFields), with just the metadata the
/// watcher itself reads (name, namespace, resourceVersion).
#[derive(Debug, Clone, Default)]
pub struct RawObject {
    meta: ObjectMeta,
    pub value: Value,
}

impl RawObject {
    /// The object, stamped with the apiVersion and kind it was watched as (list items
    /// may come without them).
    pub fn into_value(self, resource: &ApiResource) -> Value {
        let mut v = self.value;
        if let Some(map) = v.as_object_mut() {
            map.insert(
                "apiVersion".to_owned(),
                Value::String(resource.api_version.clone()),
            );
            map.insert("kind".to_owned(), Value::String(resource.kind.clone()));
        }
        v
    }
}

impl Resource for RawObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.meta
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.meta
    }
}

impl<'de> serde::Deserialize<'de> for RawObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = d.deserialize_map(ObjectVisitor { metadata: false })?;
        let text = |key: &str| {
            value
                .get("metadata")
                .and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let meta = ObjectMeta {
            name: text("name"),
            namespace: text("namespace"),
            resource_version: text("resourceVersion"),
            ..ObjectMeta::default()
        };
        Ok(RawObject { meta, value })
    }
}

/// Reads a JSON object into a `Value`; in `metadata` it skips managedFields unparsed.
struct ObjectVisitor {
    metadata: bool,
}

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            if self.metadata && key == "managedFields" {
                access.next_value::<IgnoredAny>()?;
                continue;
            }
            let value = if !self.metadata && key == "metadata" {
                access.next_value_seed(Metadata)?
            } else {
                access.next_value()?
            };
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

/// The `metadata` field, read by [`ObjectVisitor`] in its metadata mode (or as any value
/// when it is not an object).
struct Metadata;

impl<'de> de::DeserializeSeed<'de> for Metadata {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_map(ObjectVisitor { metadata: true })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_keeps_everything_but_managed_fields_and_gets_its_kind() {
        let text = r#"{"metadata": {"name": "web-1", "namespace": "shop",
            "resourceVersion": "42", "uid": "u1",
            "managedFields": [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}],
            "labels": {"app": "web"}},
            "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "web:1"}]},
            "status": {"phase": "Running"}}"#;
        let raw: RawObject = serde_json::from_str(text).unwrap();
        assert_eq!(raw.meta().resource_version.as_deref(), Some("42"));
        assert_eq!(raw.meta().name.as_deref(), Some("web-1"));
        let resource = ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "Pod".into(),
            plural: "pods".into(),
        };
        assert_eq!(
            raw.into_value(&resource),
            json!({"metadata": {"name": "web-1", "namespace": "shop",
                "resourceVersion": "42", "uid": "u1", "labels": {"app": "web"}},
                "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "web:1"}]},
                "status": {"phase": "Running"}, "apiVersion": "v1", "kind": "Pod"})
        );
    }

    #[test]
    fn a_list_of_raw_objects_reads_like_the_api_servers() {
        let list: kube::core::ObjectList<RawObject> = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
            "items": [{"metadata": {"name": "a", "resourceVersion": "5",
                "managedFields": []}}]
        }))
        .unwrap();
        assert_eq!(list.items.len(), 1);
        assert_eq!(
            list.items[0].value,
            json!({"metadata": {"name": "a", "resourceVersion": "5"}})
        );
    }
}

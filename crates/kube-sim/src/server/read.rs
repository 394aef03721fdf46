//! get and list, with selectors, pagination (every page at the first page's version,
//! `pages`), and the events.k8s.io view of Events.

use super::handler::Call;
use super::pages::Continue;
use super::selectors::{FieldSelector, LabelSelector};
use super::state::ServerState;
use super::status::ApiError;
use crate::events::to_events_v1;
use crate::resources::ResourceType;
use crate::store::ObjectKey;
use serde_json::{Value, json};
use std::sync::Arc;

/// Where a resource's objects live in the store (events.k8s.io Events are core Events).
pub fn storage_of(rt: &ResourceType) -> (&str, &str) {
    if rt.group == "events.k8s.io" {
        ("", "events")
    } else {
        (rt.group.as_str(), rt.plural.as_str())
    }
}

/// The object as this resource's version presents it.
pub fn present(rt: &ResourceType, object: &Value) -> Value {
    if rt.group == "events.k8s.io" {
        return to_events_v1(object);
    }
    let mut v = object.clone();
    if let Some(o) = v.as_object_mut() {
        o.insert("apiVersion".into(), json!(rt.api_version()));
        o.insert("kind".into(), json!(rt.kind));
    }
    v
}

pub fn key(rt: &ResourceType, namespace: Option<&str>, name: &str) -> ObjectKey {
    let (group, plural) = storage_of(rt);
    ObjectKey::new(
        group,
        plural,
        if rt.namespaced {
            namespace.unwrap_or("default")
        } else {
            ""
        },
        name,
    )
}

pub fn get(state: &Arc<ServerState>, call: &Call) -> Result<Value, ApiError> {
    let name = call.path.name.as_deref().unwrap_or_default();
    let k = key(&call.rt, call.path.namespace.as_deref(), name);
    let obj = state
        .store
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&call.rt.group_resource(), name))?;
    Ok(present(&call.rt, &obj))
}

/// Parsed selectors of a list or watch.
pub struct Selectors {
    label: LabelSelector,
    field: FieldSelector,
}

impl Selectors {
    pub fn from_call(call: &Call) -> Result<Self, ApiError> {
        let label = LabelSelector::parse(call.params.get("labelSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?;
        let field = FieldSelector::parse(call.params.get("fieldSelector").unwrap_or_default())
            .map_err(ApiError::bad_request)?;
        field
            .check_supported(&call.rt.group, &call.rt.kind)
            .map_err(ApiError::bad_request)?;
        Ok(Selectors { label, field })
    }

    /// Whether the presented object matches.
    pub fn matches(&self, presented: &Value) -> bool {
        self.label.matches(presented) && self.field.matches(presented)
    }
}

pub fn list(state: &Arc<ServerState>, call: &Call) -> Result<Value, ApiError> {
    let selectors = Selectors::from_call(call)?;
    let (group, plural) = storage_of(&call.rt);
    let namespace = call.path.namespace.as_deref();
    let limit = call
        .params
        .get("limit")
        .and_then(|l| l.parse::<usize>().ok())
        .filter(|l| *l > 0);
    let collection = ObjectKey::new(group, plural, namespace.unwrap_or_default(), "");
    let now = state.store.clock().elapsed();
    // A continued list reads the collection as its first page did, not as it is now.
    let (items, rv, after) = if let Some(token) = call.params.get("continue") {
        let token = Continue::decode(token)?;
        let items = state.pages.at(&collection, token.rv, now)?;
        (items, token.rv, Some(token.after))
    } else {
        let (items, rv) = state.store.list(group, plural, namespace);
        (Arc::from(items), rv, None)
    };
    let mut matching = items
        .iter()
        .filter(|o| after.as_ref().is_none_or(|a| sort_key(o) > *a))
        .map(|o| present(&call.rt, o))
        .filter(|o| selectors.matches(o));
    let mut page: Vec<Value> = match limit {
        Some(l) => matching.by_ref().take(l).collect(),
        None => matching.by_ref().collect(),
    };
    let remaining = matching.count();
    let mut metadata = json!({"resourceVersion": rv.to_string()});
    if remaining > 0
        && let Some(last) = page.last()
    {
        if after.is_none() {
            state.pages.keep(collection, rv, items.clone(), now);
        }
        let token = Continue {
            rv,
            after: sort_key(last),
        };
        metadata["continue"] = json!(token.encode());
        metadata["remainingItemCount"] = json!(remaining);
    }
    if !call.rt.custom {
        // Typed lists omit each item's apiVersion and kind, as the real server does.
        for item in &mut page {
            if let Some(o) = item.as_object_mut() {
                o.remove("apiVersion");
                o.remove("kind");
            }
        }
    }
    Ok(json!({
        "kind": call.rt.list_kind(),
        "apiVersion": call.rt.api_version(),
        "metadata": metadata,
        "items": page,
    }))
}

fn sort_key(o: &Value) -> String {
    let s = |p: &str| o.pointer(p).and_then(Value::as_str).unwrap_or_default();
    format!("{}/{}", s("/metadata/namespace"), s("/metadata/name"))
}

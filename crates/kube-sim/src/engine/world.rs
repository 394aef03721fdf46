//! What a controller sees and may do during a reconcile: read the store, write through
//! it (as its own field manager), record events, and ask to be called again later.

use super::queue::Queue;
use crate::events::{EventRecorder, EventSpec};
use crate::logs::LogStore;
use crate::resources::Registry;
use crate::scenario::Scenario;
use crate::store::{DeleteOptions, ObjectKey, Store, StoreError};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// A failed write from a controller; controllers usually requeue and retry.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("unknown kind {0}")]
    UnknownKind(String),
}

/// The world as one reconcile sees it.
pub struct World<'a> {
    pub store: &'a Store,
    pub registry: &'a Registry,
    pub scenario: &'a Scenario,
    pub logs: &'a LogStore,
    pub(crate) recorder: &'a mut EventRecorder,
    pub(crate) queue: &'a mut Queue,
    /// Index of the controller being run, for requeues.
    pub(crate) current: usize,
    /// Field manager of the controller being run.
    pub(crate) manager: &'static str,
}

impl World<'_> {
    pub fn now(&self) -> Instant {
        Instant::now()
    }

    /// Time since the cluster started.
    pub fn elapsed(&self) -> Duration {
        self.store.clock().elapsed()
    }

    /// `metav1.Time` for now.
    pub fn timestamp(&self) -> String {
        self.store.clock().now_rfc3339()
    }

    /// Reconcile `key` again (with the current controller) after `after`.
    pub fn requeue_after(&mut self, key: ObjectKey, after: Duration) {
        self.queue.add(self.current, key, Instant::now() + after);
    }

    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.store.get(key)
    }

    pub fn list(&self, group: &str, plural: &str, namespace: Option<&str>) -> Vec<Arc<Value>> {
        self.store.list(group, plural, namespace).0
    }

    /// Objects of a resource in `namespace` with an owner reference to `uid`, by name.
    pub fn list_owned(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        uid: &str,
    ) -> Vec<Arc<Value>> {
        self.store.list_owned(group, plural, namespace, uid)
    }

    /// Objects of a resource in `namespace` that `selector` (matchLabels-style, non-empty)
    /// may select: those carrying its first label, by name. Callers still match the whole
    /// selector.
    pub fn list_labeled(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        selector: &serde_json::Map<String, Value>,
    ) -> Vec<Arc<Value>> {
        match selector.iter().find_map(|(k, v)| Some((k, v.as_str()?))) {
            Some((label, value)) => self
                .store
                .list_labeled(group, plural, namespace, label, value),
            None => self.list(group, plural, Some(namespace)),
        }
    }

    /// Objects of a resource in `namespace` whose flat `spec.selector` may match an
    /// object labelled `labels`, by name. Callers still match the whole selector.
    pub fn list_selecting(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        labels: &serde_json::Map<String, Value>,
    ) -> Vec<Arc<Value>> {
        self.store.list_selecting(group, plural, namespace, labels)
    }

    /// Keys of the objects, in any collection, with an owner reference to `uid`.
    pub fn dependents(&self, uid: &str) -> Vec<ObjectKey> {
        self.store.dependents(uid)
    }

    /// The store key of an object, from its apiVersion, kind, namespace and name.
    pub fn key_of(&self, object: &Value) -> Option<ObjectKey> {
        key_of(self.registry, object)
    }

    pub fn create(&mut self, key: &ObjectKey, mut object: Value) -> Result<Arc<Value>, WriteError> {
        let (api_version, now) = (api_version(&object), self.timestamp());
        crate::apply::record_update(None, &mut object, self.manager, &api_version, &now, None);
        Ok(self.store.create(key, object)?)
    }

    /// Replace the object (spec and metadata changes).
    pub fn update(&mut self, key: &ObjectKey, object: Value) -> Result<Arc<Value>, WriteError> {
        self.write(key, object, None)
    }

    /// Replace the object where only its status changed (the status subresource).
    pub fn update_status(
        &mut self,
        key: &ObjectKey,
        object: Value,
    ) -> Result<Arc<Value>, WriteError> {
        self.write(key, object, Some("status"))
    }

    /// Replace the object where only its replica count changed (the scale subresource, as
    /// the HPA controller writes it: its managedFields entry says `subresource: scale`).
    pub fn update_scale(
        &mut self,
        key: &ObjectKey,
        object: Value,
    ) -> Result<Arc<Value>, WriteError> {
        self.write(key, object, Some("scale"))
    }

    fn write(
        &mut self,
        key: &ObjectKey,
        mut object: Value,
        sub: Option<&str>,
    ) -> Result<Arc<Value>, WriteError> {
        let old = self.store.get(key);
        if old.as_deref() == Some(&object) {
            return Ok(old.expect("checked"));
        }
        let (api_version, now) = (api_version(&object), self.timestamp());
        crate::apply::record_update(
            old.as_deref(),
            &mut object,
            self.manager,
            &api_version,
            &now,
            sub,
        );
        Ok(self.store.update(key, object, None)?)
    }

    pub fn delete(
        &mut self,
        key: &ObjectKey,
        opts: DeleteOptions,
    ) -> Result<Arc<Value>, WriteError> {
        Ok(self.store.delete(key, opts)?)
    }

    /// Record an event as the current controller (merged with an identical earlier one).
    pub fn event(&mut self, spec: EventSpec<'_>) {
        let component = spec.component.unwrap_or(self.manager);
        self.recorder.record(
            self.store,
            &EventSpec {
                component: Some(component),
                ..spec
            },
        );
    }
}

fn api_version(object: &Value) -> String {
    object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1")
        .to_owned()
}

/// The store key of an object, from its apiVersion, kind, namespace and name.
pub fn key_of(registry: &Registry, object: &Value) -> Option<ObjectKey> {
    let api_version = object.get("apiVersion")?.as_str()?;
    let kind = object.get("kind")?.as_str()?;
    let t = registry.by_kind(api_version, kind)?;
    let name = object.pointer("/metadata/name")?.as_str()?;
    let namespace = if t.namespaced {
        object
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("default")
    } else {
        ""
    };
    Some(ObjectKey::new(&t.group, &t.plural, namespace, name))
}

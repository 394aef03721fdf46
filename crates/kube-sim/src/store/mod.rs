//! The object store: every object of the cluster as JSON, one global resourceVersion
//! counter, a bounded history of changes for watch resumption, and a broadcast of every
//! change to watchers and controllers. All writes go through here.

mod index;

use crate::clock::Clock;
use index::Index;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use tokio::sync::broadcast;

/// Where an object lives: its resource (group + plural), namespace and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    pub group: String,
    pub plural: String,
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub fn new(group: &str, plural: &str, namespace: &str, name: &str) -> Self {
        ObjectKey {
            group: group.to_owned(),
            plural: plural.to_owned(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
        }
    }

    /// Whether `self` belongs to the given resource (and namespace, when one is given).
    pub fn in_collection(&self, group: &str, plural: &str, namespace: Option<&str>) -> bool {
        self.group == group
            && self.plural == plural
            && namespace.is_none_or(|ns| ns.is_empty() || self.namespace == ns)
    }
}

/// A live feed of every change committed to the store.
pub type Subscription = broadcast::Receiver<Arc<Change>>;

/// What kind of change a watch event reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One committed change.
#[derive(Debug, Clone)]
pub struct Change {
    pub rv: u64,
    pub kind: ChangeType,
    pub key: ObjectKey,
    /// The object after the change (for deletes: the last state, with a new resourceVersion).
    pub object: Arc<Value>,
    pub previous: Option<Arc<Value>>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum StoreError {
    #[error("{0} already exists")]
    AlreadyExists(String),
    #[error("{0} not found")]
    NotFound(String),
    #[error(
        "the object has been modified; please apply your changes to the latest version and try again"
    )]
    Conflict,
    #[error("too old resource version: {requested} ({oldest})")]
    Expired { requested: u64, oldest: u64 },
}

/// How a delete is carried out.
#[derive(Debug, Clone, Copy, Default)]
pub struct DeleteOptions {
    /// Seconds a pod may take to terminate; pods with a grace period are only marked.
    pub grace_period_seconds: Option<i64>,
}

struct Inner {
    rv: u64,
    objects: BTreeMap<ObjectKey, Arc<Value>>,
    history: VecDeque<Arc<Change>>,
    /// The resourceVersion before the oldest change kept in `history`.
    horizon: u64,
    uids: u64,
    frozen: HashSet<ObjectKey>,
    index: Index,
}

/// A function told of every change as it is committed (see [`Store::observe_commits`]).
type Observer = Box<dyn Fn(&Change) + Send + Sync>;

/// The in-memory store shared by the API server, controllers and kubelet.
pub struct Store {
    inner: Mutex<Inner>,
    tx: broadcast::Sender<Arc<Change>>,
    observer: OnceLock<Observer>,
    clock: Clock,
    history_limit: usize,
}

impl Store {
    pub fn new(clock: Clock, history_limit: usize) -> Self {
        let (tx, _) = broadcast::channel(1 << 16);
        Store {
            inner: Mutex::new(Inner {
                rv: 1000,
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                horizon: 1000,
                uids: 0,
                frozen: HashSet::new(),
                index: Index::default(),
            }),
            tx,
            observer: OnceLock::new(),
            clock,
            history_limit,
        }
    }

    /// Calls `observer` with every change from now on, as it is committed: under the
    /// store's lock, before any subscriber (a watch) can receive it, and never skipped, as
    /// a subscriber that falls behind skips. For what must be timed against what a client
    /// sees, such as a benchmark's milestones. One observer per store; `false` if one was
    /// set already.
    pub fn observe_commits(&self, observer: impl Fn(&Change) + Send + Sync + 'static) -> bool {
        self.observer.set(Box::new(observer)).is_ok()
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().expect("store lock poisoned")
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    pub fn get(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        self.lock().objects.get(key).cloned()
    }

    /// All objects of a resource (in one namespace, or all when `None`), with the list's RV.
    pub fn list(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> (Vec<Arc<Value>>, u64) {
        let inner = self.lock();
        let items = collection(&inner.objects, group, plural, namespace);
        (items, inner.rv)
    }

    /// Objects of a resource in `namespace` with an owner reference to `uid`, by name.
    pub fn list_owned(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        uid: &str,
    ) -> Vec<Arc<Value>> {
        let inner = self.lock();
        let names = inner.index.owned(group, plural, namespace, uid);
        lookup(&inner, group, plural, namespace, names)
    }

    /// Objects of a resource in `namespace` labelled `label=value`, by name.
    pub fn list_labeled(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Vec<Arc<Value>> {
        let inner = self.lock();
        let names = inner.index.labeled(group, plural, namespace, label, value);
        lookup(&inner, group, plural, namespace, names)
    }

    /// Objects of a resource in `namespace` whose flat `spec.selector` (a Service's) may
    /// match an object labelled `labels`, by name. Callers still match the whole selector.
    pub fn list_selecting(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        labels: &Map<String, Value>,
    ) -> Vec<Arc<Value>> {
        let inner = self.lock();
        let pairs = labels
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
        let names = inner.index.selecting(group, plural, namespace, pairs);
        lookup(&inner, group, plural, namespace, names)
    }

    /// Keys of the objects, in any collection, with an owner reference to `uid`.
    pub fn dependents(&self, uid: &str) -> Vec<ObjectKey> {
        self.lock().index.dependents(uid)
    }

    /// Subscribe to every change from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Change>> {
        self.tx.subscribe()
    }

    /// A list of a collection and a subscription from exactly that point, taken atomically.
    pub fn list_and_subscribe(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> (Vec<Arc<Value>>, u64, broadcast::Receiver<Arc<Change>>) {
        let inner = self.lock();
        let items = collection(&inner.objects, group, plural, namespace);
        (items, inner.rv, self.tx.subscribe())
    }

    /// A fresh uid, for servers that must know it before the object is stored.
    pub fn new_uid(&self) -> String {
        let mut inner = self.lock();
        inner.uids += 1;
        format!("5e1f0000-0000-4000-8000-{:012x}", inner.uids)
    }

    /// Changes after `rv` still in history plus a live subscription, taken atomically.
    pub fn watch_from(&self, rv: u64) -> Result<(Vec<Arc<Change>>, Subscription), StoreError> {
        let inner = self.lock();
        if rv < inner.horizon {
            return Err(StoreError::Expired {
                requested: rv,
                oldest: inner.horizon,
            });
        }
        let past = inner
            .history
            .iter()
            .filter(|c| c.rv > rv)
            .cloned()
            .collect();
        Ok((past, self.tx.subscribe()))
    }

    /// Forget history older than `rv`, as compaction does (for expired-watch tests).
    pub fn compact(&self) {
        let mut inner = self.lock();
        inner.history.clear();
        inner.horizon = inner.rv;
    }

    /// Mark an object as replayed from a timeline: controllers and the kubelet leave it alone.
    pub fn freeze(&self, key: &ObjectKey) {
        self.lock().frozen.insert(key.clone());
    }

    pub fn is_frozen(&self, key: &ObjectKey) -> bool {
        self.lock().frozen.contains(key)
    }

    /// Create an object; the store sets uid, resourceVersion, generation and timestamp.
    pub fn create(&self, key: &ObjectKey, mut object: Value) -> Result<Arc<Value>, StoreError> {
        let mut inner = self.lock();
        if inner.objects.contains_key(key) {
            return Err(StoreError::AlreadyExists(describe(key)));
        }
        let now = self.clock.now_rfc3339();
        let has_spec = object.get("spec").is_some();
        let has_uid = object
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .is_some_and(|u| !u.is_empty());
        if !has_uid {
            inner.uids += 1;
            let uid = format!("5e1f0000-0000-4000-8000-{:012x}", inner.uids);
            metadata_mut(&mut object).insert("uid".into(), json!(uid));
        }
        let meta = metadata_mut(&mut object);
        meta.entry("creationTimestamp").or_insert(json!(now));
        if meta.get("creationTimestamp").is_some_and(Value::is_null) {
            meta.insert("creationTimestamp".into(), json!(now));
        }
        // Kinds with a spec track generation; ConfigMaps, Secrets, Events and the like do not.
        if has_spec {
            meta.insert("generation".into(), json!(1));
        } else {
            meta.remove("generation");
        }
        meta.remove("deletionTimestamp");
        if !key.namespace.is_empty() {
            meta.insert("namespace".into(), json!(key.namespace));
        }
        meta.insert("name".into(), json!(key.name));
        Ok(self.commit(&mut inner, ChangeType::Added, key, object, None))
    }

    /// Store an object replayed from a timeline exactly as recorded: generation,
    /// deletionTimestamp, deletionGracePeriodSeconds and finalizers as given (uid and
    /// creationTimestamp kept, or assigned when absent; resourceVersion is the store's).
    /// A replayed object that was terminating and no longer has finalizers goes, as on a
    /// real API server.
    pub fn replay(&self, key: &ObjectKey, mut object: Value) -> Arc<Value> {
        let mut inner = self.lock();
        let old = inner.objects.get(key).cloned();
        let old_meta = old
            .as_ref()
            .and_then(|o| o.get("metadata").cloned())
            .unwrap_or_default();
        let has_spec = object.get("spec").is_some();
        let fresh_uid = if old.is_none() && object.pointer("/metadata/uid").is_none() {
            inner.uids += 1;
            Some(format!("5e1f0000-0000-4000-8000-{:012x}", inner.uids))
        } else {
            None
        };
        let now = self.clock.now_rfc3339();
        let meta = metadata_mut(&mut object);
        if let Some(uid) = fresh_uid {
            meta.insert("uid".into(), json!(uid));
        }
        for (field, fallback) in [
            ("uid", Value::Null),
            ("creationTimestamp", json!(now)),
            ("generation", if has_spec { json!(1) } else { Value::Null }),
        ] {
            if meta.get(field).is_none_or(Value::is_null) {
                match old_meta.get(field).cloned().unwrap_or(fallback) {
                    Value::Null => meta.remove(field),
                    v => meta.insert(field.into(), v),
                };
            }
        }
        if !key.namespace.is_empty() {
            meta.insert("namespace".into(), json!(key.namespace));
        }
        meta.insert("name".into(), json!(key.name));
        let was_terminating = old_meta.get("deletionTimestamp").is_some();
        if was_terminating && meta.contains_key("deletionTimestamp") && !held(key, &object) {
            return self.remove(&mut inner, key, object);
        }
        let kind = if old.is_some() {
            ChangeType::Modified
        } else {
            ChangeType::Added
        };
        self.commit(&mut inner, kind, key, object, old)
    }

    /// Replace an object. `expected_rv` is the optimistic-concurrency precondition.
    /// Generation rises when anything outside metadata and status changed.
    pub fn update(
        &self,
        key: &ObjectKey,
        mut object: Value,
        expected_rv: Option<&str>,
    ) -> Result<Arc<Value>, StoreError> {
        let mut inner = self.lock();
        let old = inner
            .objects
            .get(key)
            .cloned()
            .ok_or_else(|| StoreError::NotFound(describe(key)))?;
        if let Some(expected) = expected_rv.filter(|e| !e.is_empty())
            && old
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                != Some(expected)
        {
            return Err(StoreError::Conflict);
        }
        let old_meta = old.get("metadata").cloned().unwrap_or_default();
        let mut generation = old_meta.get("generation").and_then(Value::as_i64);
        if spec_changed(&old, &object) {
            generation = Some(generation.unwrap_or(0) + 1);
        }
        let meta = metadata_mut(&mut object);
        for immutable in [
            "uid",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
        ] {
            match old_meta.get(immutable) {
                Some(v) => meta.insert(immutable.into(), v.clone()),
                None => meta.remove(immutable),
            };
        }
        match generation {
            Some(g) => meta.insert("generation".into(), json!(g)),
            None => meta.remove("generation"),
        };
        let terminating = meta.contains_key("deletionTimestamp");
        if terminating && !held(key, &object) {
            return Ok(self.remove(&mut inner, key, object));
        }
        Ok(self.commit(&mut inner, ChangeType::Modified, key, object, Some(old)))
    }

    /// Delete an object: removed at once, or marked with deletionTimestamp while finalizers
    /// remain or a pod's grace period runs. Returns the object as it stands afterwards.
    pub fn delete(&self, key: &ObjectKey, opts: DeleteOptions) -> Result<Arc<Value>, StoreError> {
        let mut inner = self.lock();
        let old = inner
            .objects
            .get(key)
            .cloned()
            .ok_or_else(|| StoreError::NotFound(describe(key)))?;
        let has_finalizers = has_finalizers(key, &old);
        // A pod on a node is stopped by its kubelet, which removes it; one never scheduled
        // (or replayed from a timeline) goes at once.
        let graceful = is_pod(key)
            && opts.grace_period_seconds.unwrap_or(30) > 0
            && old
                .pointer("/spec/nodeName")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty())
            && !inner.frozen.contains(key);
        if !has_finalizers && !graceful {
            let object = (*old).clone();
            return Ok(self.remove(&mut inner, key, object));
        }
        if old.pointer("/metadata/deletionTimestamp").is_some() {
            return Ok(old);
        }
        let mut object = (*old).clone();
        let meta = metadata_mut(&mut object);
        meta.insert("deletionTimestamp".into(), json!(self.clock.now_rfc3339()));
        let grace = if graceful {
            opts.grace_period_seconds.unwrap_or(30)
        } else {
            0
        };
        meta.insert("deletionGracePeriodSeconds".into(), json!(grace));
        if key.plural == "namespaces" && key.group.is_empty() {
            object["status"]["phase"] = json!("Terminating");
        }
        Ok(self.commit(&mut inner, ChangeType::Modified, key, object, Some(old)))
    }

    /// The kubelet has stopped a deleted pod: its grace period is over (the kubelet's final
    /// delete with grace 0). Removed now unless finalizers still hold it.
    pub fn end_grace_period(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        let mut inner = self.lock();
        let old = inner.objects.get(key).cloned()?;
        let mut object = (*old).clone();
        metadata_mut(&mut object).insert("deletionGracePeriodSeconds".into(), json!(0));
        if held(key, &object) {
            Some(self.commit(&mut inner, ChangeType::Modified, key, object, Some(old)))
        } else {
            Some(self.remove(&mut inner, key, object))
        }
    }

    /// Remove an object now, whatever its finalizers (the kubelet ending a terminated pod).
    pub fn remove_now(&self, key: &ObjectKey) -> Option<Arc<Value>> {
        let mut inner = self.lock();
        let old = inner.objects.get(key).cloned()?;
        Some(self.remove(&mut inner, key, (*old).clone()))
    }

    fn remove(&self, inner: &mut Inner, key: &ObjectKey, object: Value) -> Arc<Value> {
        let old = inner.objects.remove(key);
        inner.index.replace(key, old.as_deref(), None);
        inner.frozen.remove(key);
        self.commit_change(inner, ChangeType::Deleted, key, object, old)
    }

    fn commit(
        &self,
        inner: &mut Inner,
        kind: ChangeType,
        key: &ObjectKey,
        object: Value,
        previous: Option<Arc<Value>>,
    ) -> Arc<Value> {
        let object = self.commit_change(inner, kind, key, object, previous);
        let old = inner.objects.insert(key.clone(), object.clone());
        inner.index.replace(key, old.as_deref(), Some(&object));
        object
    }

    fn commit_change(
        &self,
        inner: &mut Inner,
        kind: ChangeType,
        key: &ObjectKey,
        mut object: Value,
        previous: Option<Arc<Value>>,
    ) -> Arc<Value> {
        inner.rv += 1;
        let rv = inner.rv;
        metadata_mut(&mut object).insert("resourceVersion".into(), json!(rv.to_string()));
        let object = Arc::new(object);
        let change = Arc::new(Change {
            rv,
            kind,
            key: key.clone(),
            object: object.clone(),
            previous,
        });
        inner.history.push_back(change.clone());
        while inner.history.len() > self.history_limit {
            if let Some(dropped) = inner.history.pop_front() {
                inner.horizon = dropped.rv;
            }
        }
        if let Some(observer) = self.observer.get() {
            observer(&change);
        }
        // Sent under the lock so every receiver sees changes in resourceVersion order.
        let _ = self.tx.send(change);
        object
    }
}

/// The objects of one resource (in one namespace, or all), found by a range over the
/// ordered keys rather than a scan of the whole cluster: keys sort by group, plural,
/// namespace, name, so a collection is one contiguous run.
fn collection(
    objects: &BTreeMap<ObjectKey, Arc<Value>>,
    group: &str,
    plural: &str,
    namespace: Option<&str>,
) -> Vec<Arc<Value>> {
    let namespace = namespace.filter(|ns| !ns.is_empty());
    let start = ObjectKey::new(group, plural, namespace.unwrap_or_default(), "");
    objects
        .range(start..)
        .take_while(|(k, _)| {
            k.group == group && k.plural == plural && namespace.is_none_or(|ns| k.namespace == ns)
        })
        .map(|(_, v)| v.clone())
        .collect()
}

/// The stored objects of names found in an index, in the index's (name) order.
fn lookup(
    inner: &Inner,
    group: &str,
    plural: &str,
    namespace: &str,
    names: Vec<String>,
) -> Vec<Arc<Value>> {
    let mut key = ObjectKey::new(group, plural, namespace, "");
    names
        .into_iter()
        .filter_map(|name| {
            key.name = name;
            inner.objects.get(&key).cloned()
        })
        .collect()
}

fn is_pod(key: &ObjectKey) -> bool {
    key.plural == "pods" && key.group.is_empty()
}

/// Finalizers that hold a delete: `metadata.finalizers`, and for Namespaces the
/// `spec.finalizers` the namespace controller clears once the namespace is empty.
fn has_finalizers(key: &ObjectKey, object: &Value) -> bool {
    let nonempty = |p: &str| {
        object
            .pointer(p)
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty())
    };
    nonempty("/metadata/finalizers")
        || (key.plural == "namespaces" && key.group.is_empty() && nonempty("/spec/finalizers"))
}

/// Whether a terminating object must stay: finalizers remain, or it is a pod whose kubelet
/// has not finished stopping it (the kubelet removes it with `remove_now`).
fn held(key: &ObjectKey, object: &Value) -> bool {
    let grace = object
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    has_finalizers(key, object) || (is_pod(key) && grace > 0)
}

fn describe(key: &ObjectKey) -> String {
    if key.group.is_empty() {
        format!("{} \"{}\"", key.plural, key.name)
    } else {
        format!("{}.{} \"{}\"", key.plural, key.group, key.name)
    }
}

/// The object's metadata map, created if missing.
pub fn metadata_mut(object: &mut Value) -> &mut Map<String, Value> {
    if !object.is_object() {
        *object = json!({});
    }
    let obj = object.as_object_mut().expect("object");
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    meta.as_object_mut().expect("metadata object")
}

/// Whether anything but metadata and status differs (what bumps metadata.generation),
/// compared in place rather than on stripped copies.
fn spec_changed(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return old != new;
    };
    let rest = |m: &Map<String, Value>| {
        m.iter()
            .filter(|(k, _)| *k != "metadata" && *k != "status")
            .count()
    };
    rest(old) != rest(new)
        || old
            .iter()
            .filter(|(k, _)| *k != "metadata" && *k != "status")
            .any(|(k, v)| new.get(k) != Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store() -> Store {
        Store::new(Clock::fixed(), 4)
    }

    fn deploy_key() -> ObjectKey {
        ObjectKey::new("apps", "deployments", "shop", "web")
    }

    #[tokio::test]
    async fn create_sets_server_fields_and_update_bumps_generation_only_for_spec() {
        let s = store();
        let created = s
            .create(
                &deploy_key(),
                json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web"}, "spec": {"replicas": 1}}),
            )
            .unwrap();
        assert_eq!(created["metadata"]["generation"], 1);
        assert_eq!(created["metadata"]["namespace"], "shop");
        assert_eq!(created["metadata"]["resourceVersion"], "1001");
        assert_eq!(
            created["metadata"]["creationTimestamp"],
            "2026-01-01T00:00:00Z"
        );

        let mut status_only = (*created).clone();
        status_only["status"] = json!({"replicas": 1});
        let after = s.update(&deploy_key(), status_only, Some("1001")).unwrap();
        assert_eq!(after["metadata"]["generation"], 1);

        let mut scaled = (*after).clone();
        scaled["spec"]["replicas"] = json!(3);
        assert_eq!(
            s.update(&deploy_key(), scaled.clone(), Some("1001")),
            Err(StoreError::Conflict)
        );
        let after = s.update(&deploy_key(), scaled, None).unwrap();
        assert_eq!(after["metadata"]["generation"], 2);
        assert_eq!(after["metadata"]["uid"], created["metadata"]["uid"]);
    }

    #[tokio::test]
    async fn the_commit_observer_sees_every_change_before_any_subscriber() {
        let s = store();
        // The observer drains a subscription of its own each time it is called: a change
        // broadcast before it was observed would already be in there.
        let early = Mutex::new(s.subscribe());
        let seen: Arc<Mutex<Vec<(u64, ChangeType, bool)>>> = Arc::default();
        let log = seen.clone();
        assert!(s.observe_commits(move |c| {
            let mut rx = early.lock().unwrap();
            let mut broadcast_first = false;
            while let Ok(sent) = rx.try_recv() {
                broadcast_first |= sent.rv == c.rv;
            }
            log.lock().unwrap().push((c.rv, c.kind, broadcast_first));
        }));
        assert!(!s.observe_commits(|_| {}), "one observer per store");
        let mut rx = s.subscribe();
        let key = ObjectKey::new("", "configmaps", "shop", "cfg");
        s.create(&key, json!({"metadata": {"name": "cfg"}}))
            .unwrap();
        s.update(
            &key,
            json!({"metadata": {"name": "cfg"}, "data": {"a": "1"}}),
            None,
        )
        .unwrap();
        s.delete(&key, DeleteOptions::default()).unwrap();
        let expected = [
            (1001, ChangeType::Added, false),
            (1002, ChangeType::Modified, false),
            (1003, ChangeType::Deleted, false),
        ];
        assert_eq!(*seen.lock().unwrap(), expected);
        for (rv, kind, _) in expected {
            let change = rx.recv().await.unwrap();
            assert_eq!((change.rv, change.kind), (rv, kind));
        }
    }

    #[tokio::test]
    async fn finalizers_hold_a_delete_until_removed() {
        let s = store();
        let key = ObjectKey::new("", "configmaps", "shop", "cfg");
        s.create(
            &key,
            json!({"metadata": {"name": "cfg", "finalizers": ["x/y"]}}),
        )
        .unwrap();
        let marked = s.delete(&key, DeleteOptions::default()).unwrap();
        assert!(marked["metadata"]["deletionTimestamp"].is_string());
        let mut cleared = (*marked).clone();
        cleared["metadata"]["finalizers"] = json!([]);
        s.update(&key, cleared, None).unwrap();
        assert!(s.get(&key).is_none());
    }

    #[tokio::test]
    async fn a_namespace_terminates_until_its_spec_finalizers_are_cleared() {
        let s = store();
        let key = ObjectKey::new("", "namespaces", "", "shop");
        s.create(
            &key,
            json!({"metadata": {"name": "shop"}, "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"}}),
        )
        .unwrap();
        let marked = s.delete(&key, DeleteOptions::default()).unwrap();
        assert_eq!(marked["status"]["phase"], "Terminating");
        let mut emptied = (*marked).clone();
        emptied["spec"]["finalizers"] = json!([]);
        s.update(&key, emptied, None).unwrap();
        assert!(s.get(&key).is_none());
    }

    #[tokio::test]
    async fn a_scheduled_pod_waits_for_its_kubelet_an_unscheduled_one_goes_at_once() {
        let s = store();
        let bound = ObjectKey::new("", "pods", "shop", "bound");
        let pending = ObjectKey::new("", "pods", "shop", "pending");
        s.create(&bound, json!({"metadata": {"name": "bound", "finalizers": ["batch.kubernetes.io/job-tracking"]},
            "spec": {"nodeName": "sim-node-1"}}))
            .unwrap();
        s.create(
            &pending,
            json!({"metadata": {"name": "pending"}, "spec": {}}),
        )
        .unwrap();
        s.delete(&pending, DeleteOptions::default()).unwrap();
        assert!(s.get(&pending).is_none());
        let marked = s.delete(&bound, DeleteOptions::default()).unwrap();
        assert_eq!(marked["metadata"]["deletionGracePeriodSeconds"], 30);
        // A controller drops its finalizer while the kubelet is still stopping the pod.
        let mut released = (*marked).clone();
        released["metadata"]["finalizers"] = json!([]);
        s.update(&bound, released, None).unwrap();
        assert!(s.get(&bound).is_some(), "the kubelet has not finished");
        s.end_grace_period(&bound);
        assert!(s.get(&bound).is_none());
    }

    #[tokio::test]
    async fn watch_from_replays_history_and_expires_beyond_it() {
        let s = store();
        let key = ObjectKey::new("", "configmaps", "shop", "cfg");
        s.create(&key, json!({"metadata": {"name": "cfg"}}))
            .unwrap();
        for i in 0..5 {
            s.update(
                &key,
                json!({"metadata": {"name": "cfg"}, "data": {"i": i.to_string()}}),
                None,
            )
            .unwrap();
        }
        // history keeps 4 changes: rv 1003..=1006
        let (past, _rx) = s.watch_from(1004).unwrap();
        assert_eq!(past.iter().map(|c| c.rv).collect::<Vec<_>>(), [1005, 1006]);
        assert!(matches!(
            s.watch_from(1001),
            Err(StoreError::Expired { .. })
        ));
        let deleted = s.delete(&key, DeleteOptions::default()).unwrap();
        assert_eq!(deleted["metadata"]["resourceVersion"], "1007");
    }

    #[tokio::test]
    async fn replay_stores_recorded_metadata_and_fills_in_only_what_is_absent() {
        let s = store();
        let stored = s.replay(
            &deploy_key(),
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "generation": 12, "uid": "recorded-uid",
                                "resourceVersion": "77", "deletionTimestamp": "2025-12-31T23:59:00Z",
                                "deletionGracePeriodSeconds": 0, "finalizers": ["foregroundDeletion"]},
                   "spec": {"replicas": 1}}),
        );
        let meta = &stored["metadata"];
        assert_eq!(meta["generation"], 12);
        assert_eq!(meta["uid"], "recorded-uid");
        assert_eq!(meta["deletionTimestamp"], "2025-12-31T23:59:00Z");
        assert_eq!(meta["deletionGracePeriodSeconds"], 0);
        assert_eq!(meta["finalizers"], json!(["foregroundDeletion"]));
        assert_eq!(meta["namespace"], "shop");
        assert_eq!(
            meta["resourceVersion"], "1001",
            "the store's, not the recording's"
        );
        assert_eq!(meta["creationTimestamp"], "2026-01-01T00:00:00Z");

        // Replayed again without generation or uid: the stored ones stay.
        let again = s.replay(
            &deploy_key(),
            json!({"metadata": {"name": "web", "deletionTimestamp": "2025-12-31T23:59:00Z",
                                "finalizers": ["foregroundDeletion"]},
                   "spec": {"replicas": 2}}),
        );
        assert_eq!(again["metadata"]["generation"], 12);
        assert_eq!(again["metadata"]["uid"], "recorded-uid");
        // The finalizers clear: a terminating object goes.
        s.replay(
            &deploy_key(),
            json!({"metadata": {"name": "web", "deletionTimestamp": "2025-12-31T23:59:00Z"},
                   "spec": {"replicas": 2}}),
        );
        assert!(s.get(&deploy_key()).is_none());

        let cm = ObjectKey::new("", "configmaps", "shop", "cfg");
        let stored = s.replay(
            &cm,
            json!({"metadata": {"name": "cfg"}, "data": {"k": "v"}}),
        );
        assert!(
            stored["metadata"].get("generation").is_none(),
            "no spec, no generation"
        );
        assert!(
            stored["metadata"]["uid"]
                .as_str()
                .is_some_and(|u| !u.is_empty())
        );
    }
}

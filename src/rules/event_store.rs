//! The core/v1 Events about objects with a uid, kept apart from every other object: a
//! deploy of 2,000 pods brings ten thousand of them, and each cost more as an indexed
//! object (its own key, map entries, links) than its text. Here an Event is its name and
//! text in a list under the uid it is about, which is how every rule reads them.

use super::object_key::{ObjectKey, StrMap, intern};
use super::packed::{Packed, Strings};
use k8s_openapi::api::core::v1::Event;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::sync::Arc;

/// Events kept per involved object: the latest by arrival. A merged Event (the same one
/// again, its count raised) arrives anew, so a repeating cause stays; what is dropped is
/// an object's oldest distinct Events beyond this many, which bounds memory over a long
/// wait on a noisy object. Rules read the image-pull and volume Events, a handful each;
/// evidence shows 10.
pub const EVENTS_PER_OBJECT: usize = 50;

/// One Event as kept: what its text leaves out ([`super::kept::EVENT_METADATA`],
/// [`super::kept::involved_object`]) is here or in the uid it is filed under.
#[derive(Debug, Clone)]
pub(crate) struct KeptEvent {
    name: Box<str>,
    /// Interned: a deploy's Events are in a handful of namespaces.
    namespace: Option<Arc<str>>,
    /// The object it is about, as a key the snapshot shares (`None` when its
    /// involvedObject does not name one, and is then kept whole in the text).
    about: Option<ObjectKey>,
    text: Packed,
}

impl KeptEvent {
    pub(crate) fn new(key: &ObjectKey, about: Option<ObjectKey>, text: Packed) -> Self {
        KeptEvent {
            name: key.name().into(),
            namespace: key.namespace().map(intern),
            about,
            text,
        }
    }

    fn is(&self, namespace: Option<&str>, name: &str) -> bool {
        *self.name == *name && self.namespace.as_deref() == namespace
    }

    /// Its own key (made anew: the store keeps none).
    pub(crate) fn key(&self) -> ObjectKey {
        ObjectKey::in_group("", "Event", self.namespace.as_deref(), &self.name)
    }

    pub(crate) fn about(&self) -> Option<&ObjectKey> {
        self.about.as_ref()
    }

    /// Read as `T` (its type, or a `Value`), with what the text leaves out put back by
    /// `put_back` ([`restore`] or [`restore_value`]).
    fn read<T: DeserializeOwned>(
        &self,
        strings: &Strings,
        uid: &str,
        put_back: fn(&mut T, Named<'_>, Option<&ObjectKey>, Option<&str>),
    ) -> Option<T> {
        let mut event: T = serde_json::from_str(&strings.unpack(&self.text)?).ok()?;
        let named = (self.namespace.as_deref(), &*self.name);
        put_back(&mut event, named, self.about(), Some(uid));
        Some(event)
    }

    fn value(&self, strings: &Strings, uid: &str) -> Option<Value> {
        self.read(strings, uid, restore_value)
    }
}

/// An Event's own namespace and name.
type Named<'a> = (Option<&'a str>, &'a str);

/// Puts back into a typed Event what its kept text leaves to its key, the object it is
/// about and that object's uid.
pub(crate) fn restore(
    event: &mut Event,
    (namespace, name): Named<'_>,
    about: Option<&ObjectKey>,
    uid: Option<&str>,
) {
    let owned = |s: Option<&str>| s.map(str::to_owned);
    event.metadata.name = Some(name.to_owned());
    event.metadata.namespace = owned(namespace);
    let involved = &mut event.involved_object;
    if let Some(about) = about {
        involved.kind = Some(about.kind().to_owned());
        involved.name = Some(about.name().to_owned());
        involved.namespace = owned(about.namespace());
    }
    if let Some(uid) = uid {
        involved.uid = Some(uid.to_owned());
    }
}

/// [`restore`] on the Event as a `Value`; adds no involvedObject it did not have.
pub(crate) fn restore_value(
    event: &mut Value,
    (namespace, name): Named<'_>,
    about: Option<&ObjectKey>,
    uid: Option<&str>,
) {
    let Some(map) = event.as_object_mut() else {
        return;
    };
    let text = |s: &str| Value::String(s.to_owned());
    let mut put = |at: &str, field: &str, value: Option<&str>| {
        let Some(value) = value else { return };
        let inner = map
            .entry(at)
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if let Some(inner) = inner.as_object_mut() {
            inner.insert(field.to_owned(), text(value));
        }
    };
    put("metadata", "name", Some(name));
    put("metadata", "namespace", namespace);
    if let Some(about) = about {
        put("involvedObject", "kind", Some(about.kind()));
        put("involvedObject", "name", Some(about.name()));
        put("involvedObject", "namespace", about.namespace());
    }
    put("involvedObject", "uid", uid);
}

/// The Events about each uid, oldest arrival first.
#[derive(Debug, Clone, Default)]
pub(crate) struct EventStore {
    /// By the uid of the object they are about, held once with the snapshot's other uid
    /// indexes (`Snapshot::insert` passes the copy they hold).
    about: StrMap<Arc<str>, Vec<KeptEvent>>,
    len: usize,
}

impl EventStore {
    /// Keeps `event` as the latest about `uid`, replacing an earlier version of it (a
    /// merged Event, its count raised); drops that object's oldest beyond
    /// [`EVENTS_PER_OBJECT`]. An Event's involvedObject does not change in practice (no
    /// event recorder moves one), so only `uid`'s list is searched for an earlier version.
    pub(crate) fn upsert(&mut self, uid: Arc<str>, event: KeptEvent) {
        let list = self.about.entry(uid).or_default();
        if let Some(at) = list
            .iter()
            .position(|e| e.is(event.namespace.as_deref(), &event.name))
        {
            list.remove(at);
            self.len -= 1;
        }
        // Grown one at a time: an object has a handful of Events, and doubling left a
        // pod's list (five Events) with room for eight.
        list.reserve_exact(1);
        list.push(event);
        self.len += 1;
        if list.len() > EVENTS_PER_OBJECT {
            // Not a deletion: the Event may still exist, it is only no longer kept.
            list.remove(0);
            self.len -= 1;
        }
    }

    /// Forgets the Event `namespace`/`name` wherever it is filed (in every list, should
    /// it have moved from one object to another); what it was last about, and the uids
    /// whose Events changed.
    pub(crate) fn remove(
        &mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<(KeptEvent, Vec<Arc<str>>)> {
        let mut found = None;
        let mut from = Vec::new();
        self.about.retain(|uid, list| {
            if let Some(at) = list.iter().position(|e| e.is(namespace, name)) {
                found = Some(list.remove(at));
                from.push(uid.clone());
            }
            !list.is_empty()
        });
        self.len -= from.len();
        found.map(|event| (event, from))
    }

    /// The Event `namespace`/`name` as a `Value`, wherever it is filed.
    pub(crate) fn get_raw(
        &self,
        strings: &Strings,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        self.about.iter().find_map(|(uid, list)| {
            let event = list.iter().find(|e| e.is(namespace, name))?;
            event.value(strings, uid)
        })
    }

    /// Every Event in `namespace` (or everywhere), as `Value`s ordered by key.
    pub(crate) fn list_raw(
        &self,
        strings: &Strings,
        namespace: Option<&str>,
    ) -> Vec<(ObjectKey, Value)> {
        let mut all: Vec<(ObjectKey, Value)> = self
            .about
            .iter()
            .flat_map(|(uid, list)| list.iter().map(move |e| (uid, e)))
            .filter(|(_, e)| namespace.is_none_or(|ns| e.namespace.as_deref() == Some(ns)))
            .filter_map(|(uid, e)| Some((e.key(), e.value(strings, uid)?)))
            .collect();
        all.sort_by(|a, b| a.0.cmp(&b.0));
        all
    }

    /// The Events about `uid`, ordered by namespace and name.
    pub(crate) fn about(&self, strings: &Strings, uid: &str) -> Vec<Event> {
        let Some(list) = self.about.get(uid) else {
            return Vec::new();
        };
        let mut events: Vec<(Named<'_>, Event)> = list
            .iter()
            .filter_map(|e| {
                Some((
                    (e.namespace.as_deref(), &*e.name),
                    e.read(strings, uid, restore)?,
                ))
            })
            .collect();
        events.sort_by(|a, b| a.0.cmp(&b.0));
        events.into_iter().map(|(_, e)| e).collect()
    }

    /// The copy of `uid` Events are filed under, if any are.
    pub(crate) fn uid(&self, uid: &str) -> Option<&Arc<str>> {
        self.about.get_key_value(uid).map(|(k, _)| k)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::fixtures;
    use crate::rules::snapshot::{ObjectKey, Prepared, Snapshot};
    use crate::rules::target::Target;
    use k8s_openapi::api::core::v1::Event;
    use serde_json::{Value, json};

    fn pulling(pod: &str, uid: &str, tag: &str) -> Value {
        let message = format!("Pulling image \"ghcr.io/acme/web:{tag}\"");
        fixtures::event(pod, uid, "Normal", "Pulling", &message, 1)
    }

    fn key_of(event: &Value) -> ObjectKey {
        ObjectKey::of(event).unwrap()
    }

    #[test]
    fn a_deleted_event_leaves_its_object_touches_it_and_counts_as_deleted() {
        let mut snap = Snapshot::new();
        let pod = fixtures::rs_pod("web-1", "rs-uid", "7d4b9c", &fixtures::ready_status());
        let pod_uid = pod["metadata"]["uid"].as_str().unwrap().to_owned();
        snap.upsert(pod).unwrap();
        let (one, two) = (
            pulling("web-1", &pod_uid, "v1"),
            pulling("web-1", &pod_uid, "v2"),
        );
        snap.upsert(one.clone()).unwrap();
        snap.upsert(two.clone()).unwrap();
        assert_eq!(snap.len(), 3);
        snap.take_touched();

        snap.remove_key(key_of(&one));
        assert_eq!(snap.events_for(&pod_uid).len(), 1);
        assert!(snap.was_deleted(&key_of(&one)));
        assert!(!snap.was_deleted(&key_of(&two)));
        assert_eq!(snap.get_raw(&key_of(&one)), None);
        let pod_target = Target::new("v1", "Pod", Some(fixtures::NS), "web-1");
        assert!(snap.take_touched().affects(&pod_target, None));
        assert_eq!(snap.len(), 2);

        // Seen again, it is no longer deleted.
        snap.upsert(one.clone()).unwrap();
        assert!(!snap.was_deleted(&key_of(&one)));
        assert_eq!(snap.events_for(&pod_uid).len(), 2);
        // Removing what is not kept changes nothing.
        snap.remove("v1", "Event", Some(fixtures::NS), "nothing.1");
        assert_eq!(snap.len(), 3);
    }

    /// An Event as a controller files it about `kind`/`name` (`apps/v1` for ReplicaSets
    /// and Deployments).
    fn about(kind: &str, name: &str, uid: &str, reason: &str) -> Value {
        let mut event =
            fixtures::event(name, uid, "Normal", reason, &format!("{reason} {name}"), 1);
        let api_version = if kind == "PersistentVolumeClaim" {
            "v1"
        } else {
            "apps/v1"
        };
        event["involvedObject"]["kind"] = json!(kind);
        event["involvedObject"]["apiVersion"] = json!(api_version);
        event
    }

    #[test]
    fn only_events_a_rule_or_an_outcome_reads_are_kept_once_the_targets_are_known() {
        let events = [
            pulling("web-1", "pod-uid", "v1"),
            about("ReplicaSet", "web-7d4b9c", "rs-uid", "SuccessfulCreate"),
            about("ReplicaSet", "api-5f6c7d", "api-rs-uid", "SuccessfulCreate"),
            about("Deployment", "web", "deploy-uid", "ScalingReplicaSet"),
            about(
                "PersistentVolumeClaim",
                "data-db-0",
                "pvc-uid",
                "ProvisioningFailed",
            ),
        ];
        // Without targets (tests, callers that read every Event) all are kept.
        let mut all = Snapshot::new();
        for e in &events {
            all.upsert(e.clone()).unwrap();
        }
        for uid in ["pod-uid", "rs-uid", "api-rs-uid", "deploy-uid", "pvc-uid"] {
            assert_eq!(all.events_for(uid).len(), 1, "{uid}");
        }

        // Targets: the Deployment web and a bare ReplicaSet api-5f6c7d.
        let mut snap = Snapshot::new();
        let key =
            |kind: &str, name: &str| ObjectKey::new("apps/v1", kind, Some(fixtures::NS), name);
        snap.keep_events_about([key("Deployment", "web"), key("ReplicaSet", "api-5f6c7d")]);
        for e in &events {
            snap.upsert(e.clone()).unwrap();
        }
        // A pod's and a claim's Events are read by rules, a target's by its outcome.
        for uid in ["pod-uid", "api-rs-uid", "deploy-uid", "pvc-uid"] {
            assert_eq!(snap.events_for(uid).len(), 1, "{uid}");
        }
        // The Deployment's ReplicaSet is no target and no rule reads its Events: dropped,
        // and its arrival touches nothing (no Deployment is asked again for it).
        assert!(snap.events_for("rs-uid").is_empty());
        assert_eq!(snap.len(), 4);
        snap.take_touched();
        snap.upsert(events[1].clone()).unwrap();
        assert!(snap.take_touched().is_empty());
        assert_eq!(snap.get_raw(&key_of(&events[1])), None);

        // A cluster-scoped target's Events name it with no namespace, or an empty one.
        let issuer = ObjectKey::new("cert-manager.io/v1", "ClusterIssuer", None, "letsencrypt");
        let mut snap = Snapshot::new();
        snap.keep_events_about([issuer]);
        for (namespace, uid) in [(None, "issuer-uid-1"), (Some(""), "issuer-uid-2")] {
            let mut event = about("ClusterIssuer", "letsencrypt", uid, "ErrInitIssuer");
            event["involvedObject"]["apiVersion"] = json!("cert-manager.io/v1");
            event["involvedObject"]["namespace"] = json!(namespace);
            if namespace.is_none() {
                event["involvedObject"]
                    .as_object_mut()
                    .unwrap()
                    .remove("namespace");
            }
            event["metadata"]["name"] = json!(format!("letsencrypt.{uid}"));
            snap.upsert(event).unwrap();
            assert_eq!(snap.events_for(uid).len(), 1, "{namespace:?}");
        }
    }

    #[test]
    fn an_event_moved_to_another_object_is_forgotten_everywhere_it_was_filed() {
        let mut snap = Snapshot::new();
        let first = pulling("web-1", "uid-1", "v1");
        let mut moved = first.clone();
        moved["involvedObject"]["uid"] = json!("uid-2");
        snap.upsert(first.clone()).unwrap();
        snap.upsert(moved).unwrap();
        // Only the new object's list is searched on arrival: the old copy stays.
        assert_eq!(snap.events_for("uid-1").len(), 1);
        assert_eq!(snap.events_for("uid-2").len(), 1);
        assert_eq!(snap.len(), 2);
        snap.remove_key(key_of(&first));
        assert!(snap.events_for("uid-1").is_empty() && snap.events_for("uid-2").is_empty());
        assert_eq!(snap.len(), 0);
        assert!(snap.is_empty());
    }

    #[test]
    fn events_read_alike_one_by_one_listed_and_by_what_they_are_about() {
        let mut snap = Snapshot::new();
        let events = [
            pulling("web-2", "uid-2", "v1"),
            pulling("web-1", "uid-1", "v1"),
            pulling("web-1", "uid-1", "v2"),
        ];
        for e in &events {
            snap.insert(Prepared::of(e.clone()).unwrap());
        }
        let kept = |e: &Value| {
            let mut e = e.clone();
            let meta = e["metadata"].as_object_mut().unwrap();
            meta.retain(|k, _| k == "name" || k == "namespace");
            let obj = e.as_object_mut().unwrap();
            obj.retain(|k, _| crate::rules::kept::EVENT_FIELDS.contains(&k.as_str()));
            e["involvedObject"]
                .as_object_mut()
                .unwrap()
                .remove("resourceVersion");
            e
        };
        for e in &events {
            assert_eq!(snap.get_raw(&key_of(e)), Some(kept(e)));
        }
        let listed: Vec<Value> = snap.list_raw("", "Event", Some(fixtures::NS)).collect();
        let mut expected: Vec<Value> = events.iter().map(kept).collect();
        expected.sort_by_key(|e| e["metadata"]["name"].as_str().unwrap().to_owned());
        assert_eq!(listed, expected);
        assert_eq!(snap.list_raw("", "Event", Some("elsewhere")).count(), 0);
        let typed = |v: &Value| serde_json::from_value::<Event>(v.clone()).unwrap();
        let about_one: Vec<Event> = expected[..2].iter().map(typed).collect();
        assert_eq!(snap.events_for("uid-1"), about_one);
    }

    #[test]
    fn an_event_that_comes_to_name_its_object_or_stops_naming_it_is_kept_once() {
        let mut snap = Snapshot::new();
        let named = pulling("web-1", "uid-1", "v1");
        let mut bare = named.clone();
        bare["involvedObject"]
            .as_object_mut()
            .unwrap()
            .remove("uid");
        snap.upsert(bare.clone()).unwrap();
        assert_eq!(snap.len(), 1);
        assert!(snap.events_for("uid-1").is_empty());
        assert_eq!(
            snap.get_raw(&key_of(&bare)).unwrap()["involvedObject"]["name"],
            json!("web-1")
        );
        snap.upsert(named.clone()).unwrap();
        assert_eq!(snap.len(), 1);
        assert_eq!(snap.events_for("uid-1").len(), 1);
        let uid = snap.get_raw(&key_of(&named)).unwrap()["involvedObject"]["uid"].clone();
        assert_eq!(uid, json!("uid-1"));
        // And back: kept once, under its key.
        snap.upsert(bare.clone()).unwrap();
        assert_eq!(snap.len(), 1);
        assert!(snap.events_for("uid-1").is_empty());
        assert_eq!(
            snap.get_raw(&key_of(&bare)).unwrap()["involvedObject"].get("uid"),
            None
        );
    }
}

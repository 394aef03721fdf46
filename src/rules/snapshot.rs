//! What the watchers have seen so far, kept as the API server sent it, so the rules can be
//! pure functions of it: the I/O layer feeds every watch event in, the rules only read.

use super::event_store::{self, EventStore, KeptEvent};
use super::kept::Keep;
use super::live::Live;
use super::packed::{Packed, Strings};
use crate::rules::error::RulesError;
use crate::rules::health::rule::HealthRules;
use crate::rules::images::registry_view::{RegistryView, RegistryViews};
use crate::rules::network_storage::endpoints::SERVICE_NAME_LABEL;
use crate::rules::network_storage::service::WORKLOAD_KINDS;
use crate::rules::pods::pod_set::PodReading;
use crate::rules::template_labels::TemplateLabels;
use crate::rules::touched::Touched;
use k8s_openapi::api::core::v1::{Event, Pod};
use k8s_openapi::{Resource, serde::de::DeserializeOwned};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::{BTreeSet, VecDeque};
use std::sync::{Arc, OnceLock};

pub use super::event_store::EVENTS_PER_OBJECT;
use super::head::Head;
use super::object_key::{KeyMap, KeySet, StrMap};
pub use super::object_key::{ObjectKey, group_of};

/// Kinds whose objects are indexed by the uid of their owners, because workload rules
/// walk from a parent to its children (Deployment -> ReplicaSet -> Pod, Job -> Pod, ...).
const OWNED_KINDS: [(&str, &str); 4] = [
    ("", "Pod"),
    ("apps", "ReplicaSet"),
    ("apps", "ControllerRevision"),
    ("batch", "Job"),
];

/// Whether objects of `group`/`kind` are indexed under their owners, so that a change to
/// one reaches the rules reading its owner's tree.
pub(crate) fn is_owned(group: &str, kind: &str) -> bool {
    OWNED_KINDS.contains(&(group, kind))
}

/// A typed object's optional part (its spec, its status), borrowed, or the empty one when
/// absent: a rule reads it without copying it on every re-assessment.
pub fn or_default<T: Clone + Default>(part: &Option<T>) -> std::borrow::Cow<'_, T> {
    part.as_ref()
        .map_or_else(Default::default, std::borrow::Cow::Borrowed)
}

/// Reads a raw object as its k8s-openapi type.
pub fn typed<K: DeserializeOwned>(obj: &Value) -> Result<K, serde_json::Error> {
    K::deserialize(obj)
}

/// One object as kept: compact JSON text, about a tenth of the memory of its parsed
/// `Value` (a pod: 2.4 KB against 21 KB), packed against the snapshot's [`Strings`] once
/// it has held ([`Body`]) and read again when a rule asks for it; with what it put in the
/// indexes, so replacing or removing it needs no parse.
#[derive(Debug, Clone)]
struct Stored {
    body: Body,
    /// Boxed: the map holding every object keeps its entries inline and doubles its
    /// table as it grows; inline links (then 200 bytes) made that table the largest
    /// allocation of a run at 2,000 pods.
    links: Box<Links>,
    /// A pod's [`PodReading`], made when a rule first asks and forgotten when the pod
    /// changes (a new version is a new `Stored`), and, unless it is `Ready` (read from
    /// the pod alone), when its Events or the registry views change.
    reading: OnceLock<PodReading>,
}

/// An object's text: as the watcher made it while the object is still changing, packed
/// once it has held (see [`Snapshot::pack_settled`]). A rollout's pod changes about
/// four times as it starts (8,000 pod events for 2,000 pods at 500 Deployments), and its
/// rules read it right after each change: packing
/// every version and unpacking it for the reads that follow was about 14% of a deploy's
/// CPU at 2,000 pods.
#[derive(Debug, Clone)]
enum Body {
    /// The watcher's text, and the judging pass it arrived in.
    Fresh(Box<str>, u32),
    Packed(Packed),
}

/// Judging passes an object's text is kept as it came before it is packed: a pass is
/// one batch of watch events and the assessments it calls for.
const PASSES_BEFORE_PACKING: u32 = 8;

/// The most text kept unpacked at the end of a pass, oldest packed first beyond it: a
/// relist of thousands of pods arrives in a few passes, and unpacked each pod holds about
/// 1.7 times what it holds packed (`cargo bench --bench snapshot_memory`: 2,073 bytes held
/// per pod before packing, 1,217 after).
const FRESH_BYTES: usize = 4 << 20;

impl Stored {
    /// Its pod's Events or the registry views changed: its reading goes if it read them
    /// ([`PodReading::reads_evidence`]; a ready pod's is read from the pod alone, and the
    /// kubelet's `Pulled` arrives about when the pod becomes ready).
    fn evidence_changed(&mut self) {
        if self.reading.get().is_some_and(PodReading::reads_evidence) {
            self.reading.take();
        }
    }
}

impl Body {
    /// The bytes of text held unpacked.
    fn fresh_len(&self) -> usize {
        match self {
            Body::Fresh(text, _) => text.len(),
            Body::Packed(_) => 0,
        }
    }
}

/// An object made ready for [`Snapshot::insert`]: key, compact text (less
/// `metadata.managedFields`) and index links. Made where the object arrives, in its
/// watcher's task, so the judging loop neither parses nor waits on a parsed `Value`.
#[derive(Debug, Clone)]
pub struct Prepared {
    key: ObjectKey,
    text: String,
    links: Box<Links>,
}

impl Prepared {
    /// An object from a `Value` (tests, and callers holding one): its compact text, less
    /// `metadata.managedFields` and, for Pods and Events, less what is not [`Keep`]t, as
    /// the watchers keep them; key and index links read from the whole object.
    pub fn of(mut obj: Value) -> Result<Self, RulesError> {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
        let field = |f: &str| obj.get(f).and_then(Value::as_str).unwrap_or_default();
        let keep = Keep::of_kind(group_of(field("apiVersion")), field("kind"));
        // Read before the trim: an Event's text leaves its name to its key.
        let head: Head = serde::Deserialize::deserialize(&obj).unwrap_or_default();
        keep.trim(&mut obj);
        Self::from_parts(obj.to_string(), head)
    }

    /// Its key and index links, as text: what the snapshot files it by, for tests that
    /// hold two ways of reading an object to the same result.
    #[cfg(test)]
    pub(crate) fn index_links(&self) -> String {
        format!("{:?} {:?}", self.key, self.links)
    }

    /// An object from its compact text and the [`Head`] the watcher gathered while it
    /// copied the text (`cluster::raw`): nothing is read twice.
    pub fn from_parts(text: String, mut head: Head) -> Result<Self, RulesError> {
        let key = head.key().ok_or(RulesError::ObjectWithoutIdentity)?;
        let links = Box::new(Links::from_head(&key, &mut head));
        Ok(Prepared { key, text, links })
    }
}

/// What an object puts in the indexes and where a change of it reaches, read once when it
/// arrives. Every object has one (thousands of Events and Pods), so it is kept small: the
/// fields of workloads alone are boxed apart.
#[derive(Debug, Clone, Default)]
pub(crate) struct Links {
    /// Shared with the uid indexes ([`Snapshot::insert`]): a uid is held once however many
    /// indexes and owned objects name it.
    uid: Option<Arc<str>>,
    /// The uids its ownerReferences name; the owner's own, once the snapshot knows it.
    owners: Box<[Arc<str>]>,
    /// An Event's involvedObject, and that object's uid.
    about: Option<ObjectKey>,
    about_uid: Option<Box<str>>,
    /// The Service an EndpointSlice is labelled for.
    pub(crate) slice_for: Option<Box<str>>,
    /// What a selectable workload (`service::WORKLOAD_KINDS`) shows Services.
    workload: Option<Box<WorkloadLinks>>,
}

/// What a Service's rule reads of a selectable workload.
#[derive(Debug, Clone, PartialEq)]
struct WorkloadLinks {
    /// Its pod template labels.
    template: TemplateLabels,
    /// Template labels, replicas, owners and deletion, as text (see
    /// `service::scaled_to_zero`): when this is unchanged, no Service needs asking again.
    service_view: String,
}

impl Links {
    #[cfg(test)]
    pub(crate) fn of(key: &ObjectKey, obj: &Value) -> Self {
        let mut head = serde::Deserialize::deserialize(obj).unwrap_or_default();
        Links::from_head(key, &mut head)
    }

    /// Takes the owners' uids from `head`; the rest is read.
    fn from_head(key: &ObjectKey, head: &mut Head) -> Self {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).map(Box::from);
        let kind = (key.group(), key.kind());
        let workload = WORKLOAD_KINDS.contains(&kind);
        let event = kind == ("", "Event");
        let uids = (head.metadata.0.as_mut())
            .and_then(|m| m.owner_references.as_mut())
            .map(|o| std::mem::take(&mut o.uids));
        let meta = head.meta();
        let involved = head.involved_object.as_ref().filter(|_| event);
        let about = |f: &str| involved.and_then(|i| i.get(f)).and_then(Value::as_str);
        let owner_refs = meta.and_then(|m| m.owner_references.as_ref());
        Links {
            // Only owners are looked up by uid, and an Event owns nothing.
            uid: (meta.and_then(|m| m.uid.as_ref()))
                .and_then(Value::as_str)
                .filter(|_| !event)
                .map(Arc::from),
            owners: uids.unwrap_or_default().into(),
            about: match (about("apiVersion"), about("kind"), about("name")) {
                (Some(av), Some(kind), Some(name)) => {
                    Some(ObjectKey::new(av, kind, about("namespace"), name))
                }
                _ => None,
            },
            about_uid: about("uid").map(Box::from),
            slice_for: (kind == ("discovery.k8s.io", "EndpointSlice"))
                .then(|| {
                    text(
                        meta.and_then(|m| m.labels.as_ref())
                            .and_then(|l| l.get(SERVICE_NAME_LABEL)),
                    )
                })
                .flatten(),
            workload: workload.then(|| {
                // What `service::scaled_to_zero` reads of the owners: whether one controls it.
                let controlled = Value::Bool(owner_refs.is_some_and(|o| o.controlled));
                let view = [
                    head.template_labels(),
                    head.spec.0.as_ref().and_then(|s| s.replicas.as_ref()),
                    Some(&controlled),
                    meta.and_then(|m| m.deletion_timestamp.as_ref()),
                ];
                Box::new(WorkloadLinks {
                    template: TemplateLabels::of(head.template_labels()),
                    service_view: serde_json::to_string(&view).unwrap_or_default(),
                })
            }),
        }
    }

    /// A selectable workload's pod template labels.
    pub(crate) fn template(&self) -> Option<&TemplateLabels> {
        self.workload.as_ref().map(|w| &w.template)
    }

    fn service_view(&self) -> Option<&str> {
        self.workload.as_ref().map(|w| w.service_view.as_str())
    }

    /// (namespace, label, value) of a selectable workload's pod template labels.
    pub(crate) fn template_labels(&self, key: &ObjectKey) -> Vec<(String, String, String)> {
        let (Some(ns), Some(labels)) = (key.namespace(), self.template()) else {
            return Vec::new();
        };
        labels
            .pairs()
            .map(|(k, v)| (ns.to_owned(), k.to_owned(), v.to_owned()))
            .collect()
    }

    /// The owner uids it is indexed under as a child (kinds in `OWNED_KINDS` only).
    fn indexed_owners(&self, key: &ObjectKey) -> &[Arc<str>] {
        if OWNED_KINDS.contains(&(key.group(), key.kind())) {
            &self.owners
        } else {
            &[]
        }
    }
}

/// Everything seen so far, with the indexes the rules need.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    objects: KeyMap<Stored>,
    /// Every object's key, in key order: a kind's objects (in a namespace) are one range.
    ordered: BTreeSet<ObjectKey>,
    /// owner uid -> owned objects of the kinds in `OWNED_KINDS`.
    children: StrMap<Arc<str>, BTreeSet<ObjectKey>>,
    /// core/v1 Events about an object with a uid, filed under that uid. Not in `objects`
    /// (nor `ordered`): an Event there costs twice what it does here.
    events: EventStore,
    /// The keys and repeated values every kept object's text refers to.
    strings: Strings,
    /// (namespace, pod template label, value) -> the workloads a Service may select
    /// (`service::WORKLOAD_KINDS`) whose pod template carries that label.
    templates: StrMap<(String, String, String), BTreeSet<ObjectKey>>,
    /// (namespace, Service name label) -> the EndpointSlices labelled for it.
    slices: StrMap<(Option<String>, String), BTreeSet<ObjectKey>>,
    /// The runner's registry lookups, by image reference; fed in like watch events.
    registry: RegistryViews,
    /// Objects seen and then deleted (and not seen again since).
    deleted: KeySet,
    /// uid -> object, to walk from a changed object to its owners.
    uids: StrMap<Arc<str>, ObjectKey>,
    /// What changed since the last [`Snapshot::take_touched`].
    touched: Touched,
    /// The run's own health rules (`--rules`), ahead of CRD annotations and the bundled
    /// library.
    health: Arc<HealthRules>,
    /// The deployer may not list CustomResourceDefinitions (403): custom resources are
    /// judged without them, saying what that leaves unchecked.
    crds_unreadable: bool,
    /// The objects, besides those of [`EVENTS_READ_OF`], whose Events are kept; `None`:
    /// every object's. See [`Snapshot::keep_events_about`].
    events_about: Option<KeySet>,
    /// The judging pass under way (see [`Snapshot::pack_settled`]).
    pass: u32,
    /// Objects whose text is kept as it came, with the pass it came in, oldest first.
    fresh: VecDeque<(u32, ObjectKey)>,
    /// The bytes of those texts.
    fresh_bytes: usize,
}

/// The kinds whose Events a rule reads: a Pod's (image pulls, probes, scheduling) and a
/// PersistentVolumeClaim's (binding).
const EVENTS_READ_OF: [(&str, &str); 2] = [("", "Pod"), ("", "PersistentVolumeClaim")];

impl Snapshot {
    pub fn new() -> Self {
        Snapshot::default()
    }

    /// A snapshot whose custom resources are judged by `rules` first.
    pub fn with_health_rules(rules: Arc<HealthRules>) -> Self {
        Snapshot {
            health: rules,
            ..Snapshot::default()
        }
    }

    pub fn health_rules(&self) -> &HealthRules {
        &self.health
    }

    /// Keeps from now on only the Events about `targets` (each resource's outcome tells
    /// its own Events) and about the kinds rules read Events of ([`EVENTS_READ_OF`]).
    /// The rest are never read: a deploy of 2,500 Deployments brings 10,000 about their
    /// ReplicaSets (`SuccessfulCreate`), a sixth of its Events, and each would re-assess
    /// the Deployment above.
    pub fn keep_events_about(&mut self, targets: impl IntoIterator<Item = ObjectKey>) {
        self.events_about = Some(targets.into_iter().collect());
    }

    /// Whether an Event about `about` is kept (an Event naming no object is).
    fn keeps_events_about(&self, about: Option<&ObjectKey>) -> bool {
        let (Some(targets), Some(about)) = (&self.events_about, about) else {
            return true;
        };
        EVENTS_READ_OF.contains(&(about.group(), about.kind())) || targets.contains(about)
    }

    /// The CRD list was refused (403): no CRD will come into view.
    pub fn set_crds_unreadable(&mut self) {
        self.crds_unreadable = true;
        // Every custom resource's rule reads it.
        self.touched.everything();
    }

    pub fn crds_unreadable(&self) -> bool {
        self.crds_unreadable
    }

    /// Records an object from an ADDED or MODIFIED watch event (or a list), replacing what
    /// was known about it. Merged Events arrive again with a higher `count` and replace too.
    /// `metadata.managedFields`, often the larger part of an object, is dropped: no rule
    /// reads it.
    pub fn upsert(&mut self, obj: Value) -> Result<(), RulesError> {
        self.insert(Prepared::of(obj)?);
        Ok(())
    }

    /// [`Snapshot::upsert`] of an object already [`Prepared`]; returns the key the
    /// snapshot keeps it under (shared, so holding it costs a reference count).
    pub fn insert(&mut self, prepared: Prepared) -> ObjectKey {
        let Prepared {
            key,
            text,
            mut links,
        } = prepared;
        if is_event(&key) && !self.keeps_events_about(links.about.as_ref()) {
            return key;
        }
        // One shared key per object: a new version reuses the stored one (the map keeps
        // its old key anyway), and an Event names the object it is about by that object's
        // key when it is known.
        let key = self.shared(key);
        if let Some(about) = links.about.take() {
            links.about = Some(self.shared(about));
        }
        if is_event(&key)
            && let Some(uid) = links.about_uid.take()
        {
            // Kept before under its key (when it named no uid), it is now filed here.
            if self.objects.contains_key(&key) {
                self.forget(&key);
            }
            self.deleted.remove(&key);
            let event = KeptEvent::new(&key, links.about.take(), self.strings.pack(&text));
            self.touch_event(&key, event.about().cloned());
            let uid = self.known_uid(&uid).unwrap_or_else(|| Arc::from(uid));
            self.forget_reading(&uid);
            self.events.upsert(uid, event);
            return key;
        }
        if is_event(&key) && !self.events.is_empty() {
            // Filed before, it no longer names a uid (which no event recorder does): kept
            // under its key from now on. A search of every list, paid only by such Events.
            if let Some((_, from)) = self.events.remove(key.namespace(), key.name()) {
                for uid in &from {
                    self.forget_reading(uid);
                }
            }
        }
        // A workload's status changes often; a Service reads none of it.
        let read_by_services = links.service_view().is_none()
            || self
                .objects
                .get(&key)
                .is_none_or(|old| old.links.service_view() != links.service_view());
        self.touch(&key, read_by_services);
        self.share_uids(&mut links);
        self.unindex(&key);
        self.deleted.remove(&key);
        for uid in links.indexed_owners(&key) {
            self.children
                .entry(uid.clone())
                .or_default()
                .insert(key.clone());
        }
        if let Some(service) = &links.slice_for {
            let at = (key.namespace().map(str::to_owned), service.to_string());
            self.slices.entry(at).or_default().insert(key.clone());
        }
        for label in links.template_labels(&key) {
            self.templates.entry(label).or_default().insert(key.clone());
        }
        if let Some(uid) = &links.uid {
            self.uids.insert(uid.clone(), key.clone());
        }
        self.fresh.push_back((self.pass, key.clone()));
        self.fresh_bytes += text.len();
        let body = Body::Fresh(text.into_boxed_str(), self.pass);
        let stored = Stored {
            body,
            links,
            reading: OnceLock::new(),
        };
        match self.objects.insert(key.clone(), stored) {
            Some(old) => self.fresh_bytes -= old.body.fresh_len(),
            None => {
                self.ordered.insert(key.clone());
            }
        }
        // Owners or the involved object may differ from the old version's.
        self.touch(&key, read_by_services);
        key
    }

    /// The stored object's own key when it is known, else `key`.
    fn shared(&self, key: ObjectKey) -> ObjectKey {
        self.objects
            .get_key_value(&key)
            .map_or(key, |(stored, _)| stored.clone())
    }

    /// Forgets an object after a DELETED watch event.
    pub fn remove(&mut self, api_version: &str, kind: &str, namespace: Option<&str>, name: &str) {
        self.remove_key(ObjectKey::new(api_version, kind, namespace, name));
    }

    /// [`Snapshot::remove`] by key.
    pub fn remove_key(&mut self, key: ObjectKey) {
        let key = self.shared(key);
        if is_event(&key)
            && !self.objects.contains_key(&key)
            && let Some((event, from)) = self.events.remove(key.namespace(), key.name())
        {
            for uid in &from {
                self.forget_reading(uid);
            }
            self.touch_event(&key, event.about().cloned());
            self.deleted.insert(key);
            return;
        }
        self.touch(&key, true);
        if self.forget(&key) {
            self.deleted.insert(key);
        }
    }

    /// Drops an object and its index entries; whether it was there.
    fn forget(&mut self, key: &ObjectKey) -> bool {
        self.unindex(key);
        self.ordered.remove(key);
        let old = self.objects.remove(key);
        self.fresh_bytes -= old.as_ref().map_or(0, |o| o.body.fresh_len());
        old.is_some()
    }

    /// Marks `key` touched, with the object an Event of it is about and the owners up the
    /// chain as far as they have been seen (an owner seen later touches itself then).
    /// `contents`: whether what a Service's rule reads of the object may have changed.
    fn touch(&mut self, key: &ObjectKey, contents: bool) {
        self.touch_from(vec![(key.clone(), true)], contents);
    }

    /// Marks a filed Event (`events`) touched, with the object it is about and that
    /// object's owners.
    fn touch_event(&mut self, key: &ObjectKey, about: Option<ObjectKey>) {
        self.touched.key(key);
        self.touch_from(about.into_iter().map(|a| (a, false)).collect(), false);
    }

    /// [`Snapshot::touch`] from each of `next`, a root when its flag is set.
    fn touch_from(&mut self, mut next: Vec<(ObjectKey, bool)>, contents: bool) {
        while let Some((key, root)) = next.pop() {
            // The root's chain is walked every time: its owners may have just changed.
            let new = if root {
                self.touched.root(&key)
            } else {
                self.touched.key(&key)
            };
            if !root && !new {
                continue;
            }
            let Some(links) = self.objects.get(&key).map(|o| &o.links) else {
                continue;
            };
            // Only the changed object's own fields changed: an owner reached from it (a
            // Deployment from its pod) keeps its template labels, which Services read.
            if root && contents {
                self.touched.contents(&key, links);
            }
            if let Some(about) = &links.about {
                next.push((about.clone(), false));
            }
            for uid in &links.owners {
                if let Some(owner) = self.uids.get(&**uid) {
                    next.push((owner.clone(), false));
                }
            }
        }
    }

    /// What changed since the last call, and forgets it.
    pub fn take_touched(&mut self) -> Touched {
        std::mem::take(&mut self.touched)
    }

    /// Whether `key` is kept as an object of its own (an Event filed under the object it
    /// is about is not: it leaves with that object, by its own deletion, or as older
    /// Events are dropped).
    pub fn holds(&self, key: &ObjectKey) -> bool {
        self.objects.contains_key(key)
    }

    /// Whether the object was seen and then deleted, and has not come back since.
    pub fn was_deleted(&self, key: &ObjectKey) -> bool {
        self.deleted.contains(key)
    }

    /// Points `links`' uids at the copies the indexes already hold: 10,000 pods name 2,500
    /// ReplicaSets, and every new version of an object brings its uid again.
    fn share_uids(&self, links: &mut Links) {
        if let Some(shared) = links.uid.as_deref().and_then(|u| self.known_uid(u)) {
            links.uid = Some(shared);
        }
        for owner in &mut links.owners {
            if let Some(shared) = self.known_uid(owner) {
                *owner = shared;
            }
        }
    }

    /// The copy of `uid` an index holds: as an object's, as an owner's, or as the object
    /// Events are about (a pod's first Events may come before the pod).
    fn known_uid(&self, uid: &str) -> Option<Arc<str>> {
        (self.uids.get_key_value(uid).map(|(k, _)| k))
            .or_else(|| self.children.get_key_value(uid).map(|(k, _)| k))
            .or_else(|| self.events.uid(uid))
            .cloned()
    }

    fn unindex(&mut self, key: &ObjectKey) {
        let Some(old) = self.objects.get(key).map(|o| &o.links) else {
            return;
        };
        if let Some(service) = &old.slice_for {
            let at = (key.namespace().map(str::to_owned), service.to_string());
            if let Some(set) = self.slices.get_mut(&at) {
                set.remove(key);
                if set.is_empty() {
                    self.slices.remove(&at);
                }
            }
        }
        for label in old.template_labels(key) {
            if let Some(set) = self.templates.get_mut(&label) {
                set.remove(key);
                if set.is_empty() {
                    self.templates.remove(&label);
                }
            }
        }
        if let Some(uid) = &old.uid
            && self.uids.get(&**uid) == Some(key)
        {
            self.uids.remove(&**uid);
        }
        for uid in old.indexed_owners(key) {
            remove_from(&mut self.children, uid, key);
        }
    }

    pub fn len(&self) -> usize {
        self.objects.len() + self.events.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A stored object read as `T` (a `Value` or its k8s-openapi type); `None` when it
    /// does not read as one. An Event gets back what its text leaves to its key.
    fn read<T: DeserializeOwned>(&self, key: &ObjectKey, stored: &Stored) -> Option<T> {
        let text = self.text_of(stored)?;
        if is_event(key) {
            // Through text again, not `T::deserialize(Value)`: that would be another
            // deserializer for every type read here, megabytes of code (Events are read
            // this way seldom; `events_for` reads them typed).
            let mut event: Value = serde_json::from_str(&text).ok()?;
            let links = &stored.links;
            let named = (key.namespace(), key.name());
            let (about, uid) = (links.about.as_ref(), links.about_uid.as_deref());
            event_store::restore_value(&mut event, named, about, uid);
            return reread(&event);
        }
        serde_json::from_str(&text).ok()
    }

    /// One object as the API server sent it (less what `upsert` drops).
    pub fn get_raw(&self, key: &ObjectKey) -> Option<Value> {
        match self.objects.get(key) {
            Some(stored) => self.read(key, stored),
            None if is_event(key) => {
                (self.events).get_raw(&self.strings, key.namespace(), key.name())
            }
            None => None,
        }
    }

    /// One object as [`Live`], its text left unparsed until a rule reads it (an Event,
    /// whose text leaves out what its key holds, as a `Value`).
    pub fn live(&self, key: &ObjectKey) -> Option<Live<'_>> {
        if is_event(key) {
            return self.get_raw(key).map(Live::value_of);
        }
        let stored = self.objects.get(key)?;
        Some(Live::text(self.text_of(stored)?))
    }

    /// A stored object's text: borrowed while fresh, unpacked once packed; `None` if it
    /// does not unpack (never for text this snapshot packed).
    fn text_of<'a>(&self, stored: &'a Stored) -> Option<Cow<'a, str>> {
        match &stored.body {
            Body::Fresh(text, _) => Some(Cow::Borrowed(text)),
            Body::Packed(packed) => self.strings.unpack(packed).map(Cow::Owned),
        }
    }

    /// Whether the stored object's text has been packed.
    #[cfg(test)]
    fn is_packed(&self, key: &ObjectKey) -> bool {
        matches!(
            self.objects.get(key),
            Some(Stored {
                body: Body::Packed(_),
                ..
            })
        )
    }

    /// Packs every object's text now, as [`PASSES_BEFORE_PACKING`] passes would: for
    /// measuring what a snapshot holds once its objects have settled.
    pub fn pack_all(&mut self) {
        for _ in 0..PASSES_BEFORE_PACKING {
            self.pack_settled();
        }
    }

    /// Ends a judging pass: the objects whose text has held for
    /// [`PASSES_BEFORE_PACKING`] passes are packed, and the oldest beyond [`FRESH_BYTES`]
    /// of unpacked text. The judging loop calls it after each pass; a snapshot never told
    /// keeps every text as it came.
    pub fn pack_settled(&mut self) {
        self.pass = self.pass.wrapping_add(1);
        while let Some((since, key)) = self.fresh.pop_front() {
            let held = self.pass.wrapping_sub(since) >= PASSES_BEFORE_PACKING;
            if !held && self.fresh_bytes <= FRESH_BYTES {
                self.fresh.push_front((since, key));
                break;
            }
            // A newer version, or a deletion, since: the newer one has its own place.
            if let Some(stored) = self.objects.get_mut(&key)
                && let Body::Fresh(text, pass) = &stored.body
                && *pass == since
            {
                self.fresh_bytes -= text.len();
                stored.body = Body::Packed(self.strings.pack(text));
            }
        }
    }

    /// An object's `metadata.uid` (of any kind but Event), without reading the object.
    pub fn uid_of(&self, key: &ObjectKey) -> Option<&str> {
        self.objects.get(key)?.links.uid.as_deref()
    }

    /// One object as its k8s-openapi type; `None` when unseen or unreadable.
    pub fn get<K: Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<K> {
        let key = ObjectKey::new(K::API_VERSION, K::KIND, namespace, name);
        match self.objects.get(&key) {
            Some(stored) => self.read(&key, stored),
            None if is_event(&key) => {
                reread(&self.events.get_raw(&self.strings, namespace, name)?)
            }
            None => None,
        }
    }

    /// Objects of one group and kind, in a namespace or (with `None`) everywhere, as `T`.
    fn list_as<'a, T: DeserializeOwned + 'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = T> + 'a {
        // Keys sort by group, kind, namespace (`None` first), name: one range, no scan.
        let start = ObjectKey::in_group(group, kind, namespace, "");
        let filed = if (group, kind) == ("", "Event") {
            self.events.list_raw(&self.strings, namespace)
        } else {
            Vec::new()
        };
        self.ordered
            .range(start..)
            .take_while(move |k| {
                k.group() == group
                    && k.kind() == kind
                    && namespace.is_none_or(|ns| k.namespace() == Some(ns))
            })
            .filter_map(|k| self.read(k, self.objects.get(k)?))
            .chain(filed.into_iter().filter_map(|(_, v)| reread(&v)))
    }

    /// Raw objects of one group and kind, in a namespace or (with `None`) everywhere.
    pub fn list_raw<'a>(
        &'a self,
        group: &'a str,
        kind: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = Value> + 'a {
        self.list_as(group, kind, namespace)
    }

    /// Typed objects of one kind, in a namespace or (with `None`) everywhere.
    pub fn list<K: Resource + DeserializeOwned>(&self, namespace: Option<&str>) -> Vec<K> {
        self.list_as(K::GROUP, K::KIND, namespace).collect()
    }

    /// Objects of kind `K` that name `owner_uid` in their ownerReferences, ordered by name.
    pub fn children<K: Resource + DeserializeOwned>(&self, owner_uid: &str) -> Vec<K> {
        self.stored_children::<K>(owner_uid)
            .filter_map(|(k, stored)| self.read(k, stored))
            .collect()
    }

    /// The stored objects of kind `K` that name `owner_uid` in their ownerReferences,
    /// ordered by name.
    fn stored_children<K: Resource>(
        &self,
        owner_uid: &str,
    ) -> impl Iterator<Item = (&ObjectKey, &Stored)> {
        self.children
            .get(owner_uid)
            .into_iter()
            .flatten()
            .filter(|k| k.group() == K::GROUP && k.kind() == K::KIND)
            .filter_map(|k| Some((k, self.objects.get(k)?)))
    }

    /// The EndpointSlices (discovery.k8s.io) labelled for Service `service`, ordered by
    /// name, read as `T`; in `namespace`, or (with `None`) in every namespace.
    pub fn slices_of<'a, T: DeserializeOwned + 'a>(
        &'a self,
        service: &str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = T> + 'a {
        let keys: Vec<&ObjectKey> = if let Some(ns) = namespace {
            self.slices
                .get(&(Some(ns.to_owned()), service.to_owned()))
                .into_iter()
                .flatten()
                .collect()
        } else {
            let mut all: Vec<&ObjectKey> = self
                .slices
                .iter()
                .filter(|((_, s), _)| s == service)
                .flat_map(|(_, keys)| keys)
                .collect();
            all.sort();
            all
        };
        keys.into_iter()
            .filter_map(|k| self.read(k, self.objects.get(k)?))
    }

    /// Objects of one group and kind in `namespace` whose pod template carries the label
    /// `label: value`, ordered by name; for the kinds a Service may select.
    pub fn with_template_label<'a>(
        &'a self,
        (group, kind): (&'a str, &'a str),
        namespace: &str,
        (label, value): (&str, &str),
    ) -> impl Iterator<Item = Value> + 'a {
        let at = (namespace.to_owned(), label.to_owned(), value.to_owned());
        self.templates
            .get(&at)
            .into_iter()
            .flatten()
            .filter(move |k| k.group() == group && k.kind() == kind)
            .filter_map(|k| self.read(k, self.objects.get(k)?))
    }

    /// Records the runner's registry lookup for `image` (as the manifest writes it).
    pub fn set_registry_view(&mut self, image: &str, view: RegistryView) {
        self.set_registry_views([(image.to_owned(), view)]);
    }

    /// Records registry lookups that arrived together: every resource is asked again, and
    /// every pod's reading but a ready one forgotten, once for all of them.
    pub fn set_registry_views(&mut self, views: impl IntoIterator<Item = (String, RegistryView)>) {
        for (image, view) in views {
            self.registry.set(&image, view);
        }
        self.touched.everything();
        for stored in self.objects.values_mut() {
            stored.evidence_changed();
        }
    }

    /// The object with `uid` has had its Events changed (see [`Stored::evidence_changed`]).
    fn forget_reading(&mut self, uid: &str) {
        if let Some(key) = self.uids.get(uid)
            && let Some(stored) = self.objects.get_mut(key)
        {
            stored.evidence_changed();
        }
    }

    /// What the workload rules read of the pods that name `owner_uid` in their
    /// ownerReferences, ordered by name: each pod read once per change of the pod, its
    /// Events or the registry views, however often its owner is assessed.
    pub fn pod_readings(&self, owner_uid: &str) -> Vec<PodReading> {
        self.stored_children::<Pod>(owner_uid)
            .filter_map(|(k, stored)| {
                if let Some(reading) = stored.reading.get() {
                    return Some(reading.clone());
                }
                let pod: Pod = self.read(k, stored)?;
                let reading = PodReading::of(&pod, self);
                Some(stored.reading.get_or_init(|| reading).clone())
            })
            .collect()
    }

    pub fn registry_view(&self, image: &str) -> Option<&RegistryView> {
        self.registry.get(image)
    }

    pub fn registry_views(&self) -> &RegistryViews {
        &self.registry
    }

    /// core/v1 Events whose involvedObject is `uid` (the latest [`EVENTS_PER_OBJECT`]),
    /// ordered by event name.
    pub fn events_for(&self, uid: &str) -> Vec<Event> {
        self.events.about(&self.strings, uid)
    }
}

/// A `Value` read as `T` through its text: one deserializer per type (see
/// [`Snapshot::read`]); for the seldom read Events.
fn reread<T: DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_str(&value.to_string()).ok()
}

fn is_event(key: &ObjectKey) -> bool {
    (key.group(), key.kind()) == ("", "Event")
}

fn remove_from(index: &mut StrMap<Arc<str>, BTreeSet<ObjectKey>>, uid: &str, key: &ObjectKey) {
    if let Some(set) = index.get_mut(uid) {
        set.remove(key);
        if set.is_empty() {
            index.remove(uid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::fixtures;
    use crate::rules::target::Target;
    use k8s_openapi::api::apps::v1::ReplicaSet;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    /// A running pod of ReplicaSet `rs-uid-1`.
    fn web_pod(name: &str) -> Value {
        fixtures::rs_pod(name, "rs-uid-1", "5f6a7b", &fixtures::ready_status())
    }

    #[test]
    fn a_uid_is_held_once_by_its_object_its_children_and_the_indexes() {
        let mut snap = Snapshot::new();
        // A pod may come before its ReplicaSet, or after it.
        snap.upsert(web_pod("web-5f6a7b-aaaaa")).unwrap();
        let mut rs = fixtures::replica_set("5f6a7b", "1", "d-uid", 2, 2, "2025-03-04T10:15:00Z");
        rs["metadata"]["uid"] = json!("rs-uid-1");
        snap.upsert(rs.clone()).unwrap();
        snap.upsert(web_pod("web-5f6a7b-bbbbb")).unwrap();
        // A new version of the ReplicaSet brings its uid again.
        rs["metadata"]["resourceVersion"] = json!("48191");
        snap.upsert(rs).unwrap();

        let links = |kind: &str, name: &str| {
            let av = if kind == "Pod" { "v1" } else { "apps/v1" };
            let key = ObjectKey::new(av, kind, Some("shop"), name);
            &snap.objects[&key].links
        };
        let held = links("ReplicaSet", "web-5f6a7b").uid.clone().unwrap();
        let (indexed, _) = snap.uids.get_key_value("rs-uid-1").unwrap();
        let (parent, _) = snap.children.get_key_value("rs-uid-1").unwrap();
        for shared in [indexed, parent]
            .into_iter()
            .chain(&links("Pod", "web-5f6a7b-aaaaa").owners[..])
            .chain(&links("Pod", "web-5f6a7b-bbbbb").owners[..])
        {
            assert!(Arc::ptr_eq(shared, &held), "{shared} is a copy");
        }
        assert_eq!(snap.children::<Pod>("rs-uid-1").len(), 2);
    }

    /// The readings of `rs-uid-1`'s pods, kept and read fresh from the pods.
    fn readings(snap: &Snapshot) -> (Vec<PodReading>, Vec<PodReading>) {
        let kept = snap.pod_readings("rs-uid-1");
        let fresh = snap.children::<Pod>("rs-uid-1");
        (
            kept,
            fresh.iter().map(|p| PodReading::of(p, snap)).collect(),
        )
    }

    #[test]
    fn the_slot_for_a_pods_reading_is_the_16_bytes_the_readme_states() {
        // A ready pod's reading lives in the slot alone (no allocation), and every kept
        // object has one.
        assert_eq!(std::mem::size_of::<OnceLock<PodReading>>(), 16);
    }

    #[test]
    fn a_pods_kept_reading_follows_its_events_and_the_registry() {
        use crate::rules::images::registry_view::RegistryView;
        use crate::rules::pods::pod_state::PodState;
        let name = "web-5f6a7b-ddddd";
        let uid = fixtures::uid(name);
        let mut snap = Snapshot::new();
        let backoff = format!("Back-off pulling image \"{}\"", fixtures::IMAGE);
        let waiting = fixtures::waiting_status("ImagePullBackOff", &backoff);
        snap.upsert(fixtures::rs_pod(name, "rs-uid-1", "5f6a7b", &waiting))
            .unwrap();
        let state = |snap: &Snapshot| snap.pod_readings("rs-uid-1")[0].state().cloned().unwrap();
        assert!(
            matches!(state(&snap), PodState::Pulling(_)),
            "{:?}",
            state(&snap)
        );

        // The kubelet's Event names the cause: the kept reading is read again.
        let not_found = format!(
            "Failed to pull image \"{}\": rpc error: code = NotFound desc = failed to resolve reference \"{}\": {}: not found",
            fixtures::IMAGE,
            fixtures::IMAGE,
            fixtures::IMAGE
        );
        snap.upsert(fixtures::event(
            name, &uid, "Warning", "Failed", &not_found, 2,
        ))
        .unwrap();
        assert!(
            matches!(state(&snap), PodState::Doomed(_)),
            "{:?}",
            state(&snap)
        );
        let (kept, fresh) = readings(&snap);
        assert_eq!(kept, fresh);

        // And when a registry answer comes.
        snap.set_registry_view(fixtures::IMAGE, RegistryView::Exists);
        let (kept, fresh) = readings(&snap);
        assert_eq!(kept, fresh);
        assert!(
            !matches!(state(&snap), PodState::Doomed(_)),
            "{:?}",
            state(&snap)
        );

        // The Event deleted: as before it came.
        let event = fixtures::event(name, &uid, "Warning", "Failed", &not_found, 2);
        let event_name = event["metadata"]["name"].as_str().unwrap().to_owned();
        snap.remove("v1", "Event", Some(fixtures::NS), &event_name);
        let (kept, fresh) = readings(&snap);
        assert_eq!(kept, fresh);
        assert_eq!(snap.events_for(&uid).len(), 0);

        // Once ready it is kept as one word.
        snap.upsert(fixtures::rs_pod(
            name,
            "rs-uid-1",
            "5f6a7b",
            &fixtures::ready_status(),
        ))
        .unwrap();
        assert_eq!(snap.pod_readings("rs-uid-1"), [PodReading::Ready]);

        // A ready reading is read from the pod alone: an Event about the pod (`Pulled`,
        // `Started` arrive about when it becomes ready) and a registry answer keep it.
        let key = ObjectKey::new("v1", "Pod", Some(fixtures::NS), name);
        let slot = |snap: &Snapshot| snap.objects[&key].reading.get().cloned();
        assert_eq!(slot(&snap), Some(PodReading::Ready));
        snap.upsert(fixtures::event(
            name,
            &uid,
            "Normal",
            "Pulled",
            "Successfully pulled image",
            1,
        ))
        .unwrap();
        snap.set_registry_view(fixtures::IMAGE, RegistryView::Exists);
        assert_eq!(slot(&snap), Some(PodReading::Ready));
        let (kept, fresh) = readings(&snap);
        assert_eq!(kept, fresh);
    }

    /// One change a watch or the registry lookups may bring, by index into the lists
    /// of [`apply_change`].
    #[derive(Debug, Clone)]
    enum Change {
        Pod {
            pod: usize,
            status: usize,
            deleting: bool,
        },
        Event {
            pod: usize,
            event: usize,
            count: i32,
        },
        EventDeleted {
            pod: usize,
            event: usize,
        },
        Registry {
            view: usize,
        },
        PodDeleted {
            pod: usize,
        },
    }

    fn change() -> impl proptest::strategy::Strategy<Value = Change> {
        use proptest::prelude::*;
        prop_oneof![
            (0..3usize, 0..6usize, proptest::bool::weighted(0.25)).prop_map(
                |(pod, status, deleting)| Change::Pod {
                    pod,
                    status,
                    deleting
                }
            ),
            (0..3usize, 0..5usize, 1..6i32).prop_map(|(pod, event, count)| Change::Event {
                pod,
                event,
                count
            }),
            (0..3usize, 0..5usize).prop_map(|(pod, event)| Change::EventDeleted { pod, event }),
            (0..4usize).prop_map(|view| Change::Registry { view }),
            (0..3usize).prop_map(|pod| Change::PodDeleted { pod }),
        ]
    }

    fn apply_change(snap: &mut Snapshot, change: &Change) {
        use crate::rules::images::registry_view::RegistryView;
        let image = fixtures::IMAGE;
        let pods = ["web-5f6a7b-aaaaa", "web-5f6a7b-bbbbb", "web-5f6a7b-ccccc"];
        let statuses = || {
            [
                fixtures::ready_status(),
                fixtures::running_not_ready_status(),
                fixtures::crash_loop_status(1, "Error", 3),
                fixtures::waiting_status("ErrImagePull", "rpc error: code = NotFound"),
                fixtures::waiting_status(
                    "ImagePullBackOff",
                    &format!("Back-off pulling image \"{image}\""),
                ),
                fixtures::unschedulable_status(),
            ]
        };
        let events = [
            (
                "Warning",
                "Failed",
                format!(
                    "Failed to pull image \"{image}\": rpc error: code = NotFound desc = failed to resolve reference \"{image}\": {image}: not found"
                ),
            ),
            (
                "Warning",
                "Failed",
                format!(
                    "Failed to pull image \"{image}\": rpc error: code = Unknown desc = failed to pull and unpack image \"{image}\": failed to resolve reference \"{image}\": unexpected status from HEAD request: 403 Forbidden"
                ),
            ),
            ("Normal", "Pulling", format!("Pulling image \"{image}\"")),
            (
                "Normal",
                "BackOff",
                format!("Back-off pulling image \"{image}\""),
            ),
            (
                "Warning",
                "Unhealthy",
                "Readiness probe failed: HTTP probe failed with statuscode: 503".to_owned(),
            ),
        ];
        let views = [
            RegistryView::Exists,
            RegistryView::Missing,
            RegistryView::Denied,
            RegistryView::Unknown("timed out".to_owned()),
        ];
        let event_about = |pod: usize, event: usize, count: i32| {
            let (type_, reason, message) = &events[event];
            let name = pods[pod];
            fixtures::event(name, &fixtures::uid(name), type_, reason, message, count)
        };
        match *change {
            Change::Pod {
                pod,
                status,
                deleting,
            } => {
                let mut obj =
                    fixtures::rs_pod(pods[pod], "rs-uid-1", "5f6a7b", &statuses()[status]);
                if deleting {
                    obj["metadata"]["deletionTimestamp"] = json!("2025-03-04T10:20:00Z");
                }
                snap.upsert(obj).unwrap();
            }
            Change::Event { pod, event, count } => {
                snap.upsert(event_about(pod, event, count)).unwrap();
            }
            Change::EventDeleted { pod, event } => {
                let event = event_about(pod, event, 1);
                let name = event["metadata"]["name"].as_str().unwrap();
                snap.remove("v1", "Event", Some(fixtures::NS), name);
            }
            Change::Registry { view } => snap.set_registry_view(image, views[view].clone()),
            Change::PodDeleted { pod } => snap.remove("v1", "Pod", Some(fixtures::NS), pods[pod]),
        }
    }

    proptest::proptest! {
        // 64 sequences of up to 60 changes: some 1,900 changes, each checked.
        #![proptest_config(proptest::test_runner::Config::with_cases(64))]
        #[test]
        fn kept_pod_readings_equal_fresh_ones_through_any_sequence_of_changes(
            changes in proptest::collection::vec(change(), 0..60),
        ) {
            let mut snap = Snapshot::new();
            for (step, change) in changes.iter().enumerate() {
                apply_change(&mut snap, change);
                let (kept, fresh) = readings(&snap);
                proptest::prop_assert_eq!(kept, fresh, "step {}, {:?}", step, change);
            }
        }
    }

    #[test]
    fn a_pod_and_its_events_share_its_uid() {
        // A pod's first Event may come before the pod: the pod then shares the copy its
        // Events are filed under, and its next Event the pod's.
        let mut snap = Snapshot::new();
        let pod_uid = fixtures::uid("web-5f6a7b-ccccc");
        let pulling = |n| fixtures::event("web-5f6a7b-ccccc", &pod_uid, "Normal", "Pulling", "", n);
        snap.upsert(pulling(1)).unwrap();
        snap.upsert(web_pod("web-5f6a7b-ccccc")).unwrap();
        snap.upsert(pulling(2)).unwrap();
        let key = ObjectKey::new("v1", "Pod", Some("shop"), "web-5f6a7b-ccccc");
        let pod = snap.objects[&key].links.uid.clone().unwrap();
        let filed = snap.events.uid(&pod_uid).unwrap();
        assert!(Arc::ptr_eq(filed, &pod));
        assert_eq!(
            snap.events.len(),
            1,
            "the second version replaced the first"
        );
        assert_eq!(snap.events_for(&pod_uid).len(), 1);
    }

    #[test]
    fn children_follow_owner_uid_and_forget_removed_objects() {
        let mut snap = Snapshot::new();
        snap.upsert(fixtures::rs_pod(
            "web-7d4b9c-x2x9q",
            "rs-uid-2",
            "7d4b9c",
            &fixtures::ready_status(),
        ))
        .unwrap();
        snap.upsert(fixtures::rs_pod(
            "web-5f6a7b-aaaaa",
            "rs-uid-1",
            "5f6a7b",
            &fixtures::ready_status(),
        ))
        .unwrap();
        let names = |snap: &Snapshot, uid| {
            snap.children::<Pod>(uid)
                .into_iter()
                .map(|p| p.metadata.name.unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&snap, "rs-uid-2"), ["web-7d4b9c-x2x9q"]);
        assert!(snap.children::<ReplicaSet>("rs-uid-2").is_empty());

        let gone = ObjectKey::new("v1", "Pod", Some("shop"), "web-7d4b9c-x2x9q");
        assert!(!snap.was_deleted(&gone));
        snap.remove("v1", "Pod", Some("shop"), "web-7d4b9c-x2x9q");
        assert!(names(&snap, "rs-uid-2").is_empty());
        assert!(snap.was_deleted(&gone));
        assert_eq!(names(&snap, "rs-uid-1"), ["web-5f6a7b-aaaaa"]);
    }

    #[test]
    fn a_text_is_packed_once_it_has_held_and_reads_the_same_either_way() {
        let mut snap = Snapshot::new();
        let name = "web-7d4b9c-x2x9q";
        let key = ObjectKey::new("v1", "Pod", Some("shop"), name);
        let pod = |status: &Value| fixtures::rs_pod(name, "rs-uid-2", "7d4b9c", status);
        snap.upsert(pod(&json!({"phase": "Pending"}))).unwrap();
        for _ in 1..PASSES_BEFORE_PACKING {
            snap.pack_settled();
        }
        // A new version a pass before the first would be packed waits its own passes.
        snap.upsert(pod(&fixtures::ready_status())).unwrap();
        let fresh = snap.get::<Pod>(Some("shop"), name).expect("readable");
        snap.pack_settled();
        assert!(!snap.is_packed(&key));
        for _ in 2..PASSES_BEFORE_PACKING {
            snap.pack_settled();
        }
        assert!(!snap.is_packed(&key), "packed a pass early");
        snap.pack_settled();
        assert!(snap.is_packed(&key));
        let packed = snap.get::<Pod>(Some("shop"), name).expect("readable");
        assert_eq!(packed, fresh);
        assert_eq!(
            fresh.status.and_then(|s| s.phase).as_deref(),
            Some("Running")
        );
        assert_eq!(snap.children::<Pod>("rs-uid-2"), [packed]);

        // Deleted before its turn, an object leaves nothing to pack.
        snap.upsert(pod(&json!({"phase": "Pending"}))).unwrap();
        snap.remove("v1", "Pod", Some("shop"), name);
        snap.pack_all();
        assert!(snap.get_raw(&key).is_none() && snap.was_deleted(&key));
    }

    #[test]
    fn unpacked_text_beyond_its_budget_is_packed_oldest_first_at_the_passs_end() {
        let mut snap = Snapshot::new();
        // Four ConfigMaps of 1.5 MiB each: 6 MiB of text in one pass.
        let data = "x".repeat(3 << 19);
        let key = |i: usize| ObjectKey::new("v1", "ConfigMap", Some("shop"), &format!("c{i}"));
        for i in 0..4 {
            snap.upsert(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("c{i}"), "namespace": "shop"},
                "data": {"blob": data}}))
                .unwrap();
        }
        let fresh: Vec<Option<Value>> = (0..4).map(|i| snap.get_raw(&key(i))).collect();
        snap.pack_settled();
        let packed: Vec<bool> = (0..4).map(|i| snap.is_packed(&key(i))).collect();
        assert_eq!(packed, [true, true, false, false]);
        assert!(snap.fresh_bytes <= FRESH_BYTES);
        let read: Vec<Option<Value>> = (0..4).map(|i| snap.get_raw(&key(i))).collect();
        assert_eq!(read, fresh);
        assert_eq!(read[0].as_ref().unwrap()["data"]["blob"], data.as_str());

        // Replaced and removed texts leave the count.
        snap.upsert(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c3", "namespace": "shop"}, "data": {"blob": "small"}}))
            .unwrap();
        snap.remove("v1", "ConfigMap", Some("shop"), "c2");
        // What is left unpacked is the small c3 alone.
        assert!(
            snap.fresh_bytes > 0 && snap.fresh_bytes < 200,
            "{}",
            snap.fresh_bytes
        );
    }

    #[test]
    fn an_orphaned_pod_leaves_its_old_owners_index() {
        let mut snap = Snapshot::new();
        let mut pod = fixtures::rs_pod(
            "web-7d4b9c-x2x9q",
            "rs-uid-2",
            "7d4b9c",
            &fixtures::ready_status(),
        );
        snap.upsert(pod.clone()).unwrap();
        pod["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("ownerReferences");
        snap.upsert(pod).unwrap();
        assert!(snap.children::<Pod>("rs-uid-2").is_empty());
        assert_eq!(snap.len(), 1);
    }

    #[test]
    fn merged_events_replace_the_earlier_count() {
        let mut snap = Snapshot::new();
        let event = |count: i32| {
            fixtures::event(
                "web-7d4b9c-x2x9q",
                "pod-uid-web",
                "Warning",
                "BackOff",
                "Back-off pulling image \"ghcr.io/acme/web:v2\"",
                count,
            )
        };
        snap.upsert(event(1)).unwrap();
        snap.upsert(event(4)).unwrap();
        let events = snap.events_for("pod-uid-web");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].count, Some(4));
    }

    #[test]
    fn an_object_keeps_its_latest_events_and_a_repeated_one_counts_as_new() {
        let mut snap = Snapshot::new();
        let event = |i: usize, count: i32| {
            fixtures::event(
                "web-7d4b9c-x2x9q",
                "pod-uid-web",
                "Normal",
                "Pulling",
                &format!("Pulling image \"ghcr.io/acme/web:v{i}\""),
                count,
            )
        };
        for i in 0..EVENTS_PER_OBJECT {
            snap.upsert(event(i, 1)).unwrap();
        }
        // The first Event repeats (merged: same name, higher count), then one more comes.
        snap.upsert(event(0, 2)).unwrap();
        snap.upsert(event(EVENTS_PER_OBJECT, 1)).unwrap();
        let messages: Vec<String> = snap
            .events_for("pod-uid-web")
            .into_iter()
            .map(|e| e.message.unwrap())
            .collect();
        assert_eq!(messages.len(), EVENTS_PER_OBJECT);
        let has = |i: usize| messages.contains(&format!("Pulling image \"ghcr.io/acme/web:v{i}\""));
        assert!(has(0), "the repeated Event is kept");
        assert!(!has(1), "the oldest of the others is dropped");
        assert!(has(2) && has(EVENTS_PER_OBJECT));
        assert_eq!(snap.len(), EVENTS_PER_OBJECT);
        let dropped = ObjectKey::of(&event(1, 1)).unwrap();
        assert!(!snap.was_deleted(&dropped), "dropping is not a deletion");
    }

    #[test]
    fn an_object_with_oddly_typed_fields_is_kept_and_indexed_by_what_reads() {
        // A custom resource may say anything in its spec; a field of another type than
        // the indexes expect reads as absent, never as an unreadable object.
        let odd = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "namespace": "shop", "uid": "w-1",
                "ownerReferences": "not a list", "labels": 7},
            "spec": "just text", "status": {"phase": "Ready"}});
        let mut snap = Snapshot::new();
        snap.upsert(odd.clone()).unwrap();
        let key = ObjectKey::of(&odd).unwrap();
        assert_eq!(snap.get_raw(&key), Some(odd));

        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"},
            "spec": {"replicas": 2, "template": {"metadata": "none"}}});
        let prepared = Prepared::of(deployment).unwrap();
        assert_eq!(prepared.links.template(), Some(&TemplateLabels::of(None)));
        assert_eq!(prepared.links.uid.as_deref(), Some("d-1"));

        for unnamed in [
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}),
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": "x"}),
            json!([1]),
        ] {
            assert!(Prepared::of(unnamed.clone()).is_err(), "{unnamed}");
        }
    }

    #[test]
    fn versions_do_not_split_an_object_and_unidentified_objects_are_refused() {
        let mut snap = Snapshot::new();
        snap.upsert(json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "uid": "h1"}
        }))
        .unwrap();
        let key = ObjectKey::new(
            "autoscaling/v1",
            "HorizontalPodAutoscaler",
            Some("shop"),
            "web",
        );
        assert!(snap.get_raw(&key).is_some());
        assert!(matches!(
            snap.upsert(json!({"kind": "Pod", "metadata": {}})),
            Err(RulesError::ObjectWithoutIdentity)
        ));
    }

    #[test]
    fn a_pod_event_touches_the_pod_its_replicaset_and_deployment_and_nothing_else() {
        let mut snap = Snapshot::new();
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "dep-web"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}});
        let other = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "shop", "uid": "dep-api"}});
        let rs = fixtures::replica_set("7d4b9c", "2", "dep-web", 1, 0, "2025-03-04T10:15:00Z");
        let rs_uid = rs["metadata"]["uid"].as_str().unwrap().to_owned();
        let pod = fixtures::rs_pod(
            "web-7d4b9c-x2x9q",
            &rs_uid,
            "7d4b9c",
            &fixtures::ready_status(),
        );
        let pod_uid = pod["metadata"]["uid"].as_str().unwrap().to_owned();
        for obj in [deployment, other, rs, pod] {
            snap.upsert(obj).unwrap();
        }
        assert!(!snap.take_touched().is_empty());
        assert!(snap.take_touched().is_empty(), "taking forgets");

        snap.upsert(fixtures::event(
            "web-7d4b9c-x2x9q",
            &pod_uid,
            "Warning",
            "BackOff",
            "Back-off restarting failed container web",
            3,
        ))
        .unwrap();
        let touched = snap.take_touched();
        let affects = |kind: &str, name: &str| {
            let av = if kind == "Pod" { "v1" } else { "apps/v1" };
            touched.affects(&Target::new(av, kind, Some("shop"), name), None)
        };
        assert!(affects("Pod", "web-7d4b9c-x2x9q"));
        assert!(affects("ReplicaSet", "web-7d4b9c"));
        assert!(affects("Deployment", "web"));
        assert!(!affects("Deployment", "api"));
        let web = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        // A Service selecting web reads its template labels, which a pod's change leaves
        // as they were.
        let service = Target::new("v1", "Service", Some("shop"), "web");
        let live = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "shop"}, "spec": {"selector": {"app": "web"}}});
        assert!(!touched.affects(&service, Some(&live)));
        let mut changed = snap
            .get_raw(&ObjectKey::new(
                "apps/v1",
                "Deployment",
                Some("shop"),
                "web",
            ))
            .unwrap()
            .clone();
        changed["status"] = json!({"replicas": 1, "updatedReplicas": 1});
        snap.upsert(changed.clone()).unwrap();
        let status_only = snap.take_touched();
        assert!(
            status_only.affects(&web, None),
            "its own rule reads its status"
        );
        assert!(
            !status_only.affects(&service, Some(&live)),
            "a Service reads no status of the workloads it selects"
        );
        changed["spec"]["replicas"] = json!(0);
        snap.upsert(changed).unwrap();
        assert!(
            snap.take_touched().affects(&service, Some(&live)),
            "its own change is read"
        );

        // A deleted pod still touches the chain it had.
        snap.remove("v1", "Pod", Some("shop"), "web-7d4b9c-x2x9q");
        let touched = snap.take_touched();
        assert!(touched.affects(&web, None));
    }

    #[test]
    fn a_service_reached_from_its_slice_is_touched_but_not_changed() {
        let mut snap = Snapshot::new();
        let service = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "shop", "uid": "svc-1"},
            "spec": {"selector": {"app": "web"}}});
        let key = ObjectKey::new("v1", "Service", Some("shop"), "web");
        snap.upsert(service.clone()).unwrap();
        let arrived = snap.take_touched();
        assert!(arrived.keys.contains(&key) && arrived.services.contains(&key));
        // The EndpointSlice controller's slice names the Service as its owner.
        snap.upsert(
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web-abcde", "namespace": "shop", "uid": "es-1",
                "labels": {"kubernetes.io/service-name": "web"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": "web",
                    "uid": "svc-1", "controller": true}]}}),
        )
        .unwrap();
        let slice = snap.take_touched();
        assert!(slice.keys.contains(&key), "its owner is touched");
        assert!(slice.services.is_empty(), "but it did not change");
        // Updated, or removed, it changed.
        snap.upsert(service).unwrap();
        assert!(snap.take_touched().services.contains(&key));
        snap.remove_key(key.clone());
        assert!(snap.take_touched().services.contains(&key));
    }

    #[test]
    fn slices_and_template_labels_follow_the_objects_last_version() {
        let mut snap = Snapshot::new();
        let slice = |name: &str, service: &str| {
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": name, "namespace": "shop",
                    "labels": {"kubernetes.io/service-name": service}}})
        };
        let deployment = |name: &str, app: &str| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": "shop"},
                "spec": {"template": {"metadata": {"labels": {"app": app, "tier": "web"}}}}})
        };
        for obj in [
            slice("web-b", "web"),
            slice("web-a", "web"),
            slice("api-a", "api"),
            deployment("web", "web"),
            deployment("web-canary", "web"),
            deployment("api", "api"),
        ] {
            snap.upsert(obj).unwrap();
        }
        let names = |objs: Vec<Value>| {
            objs.iter()
                .map(|v| v["metadata"]["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        let dep = ("apps", "Deployment");
        assert_eq!(
            names(snap.slices_of("web", Some("shop")).collect()),
            ["web-a", "web-b"]
        );
        assert_eq!(
            names(snap.slices_of("web", None).collect()),
            ["web-a", "web-b"]
        );
        assert!(
            snap.slices_of::<Value>("web", Some("blog"))
                .next()
                .is_none()
        );
        let web = |snap: &Snapshot| {
            let found = snap.with_template_label(dep, "shop", ("app", "web"));
            names(found.collect())
        };
        assert_eq!(web(&snap), ["web", "web-canary"]);
        assert!(
            snap.with_template_label(("apps", "ReplicaSet"), "shop", ("app", "web"))
                .next()
                .is_none()
        );

        // A new version moves the object in the indexes; a deleted one leaves them.
        snap.upsert(slice("web-b", "api")).unwrap();
        snap.upsert(deployment("web-canary", "api")).unwrap();
        snap.remove(
            "discovery.k8s.io/v1",
            "EndpointSlice",
            Some("shop"),
            "web-a",
        );
        assert!(
            snap.slices_of::<Value>("web", Some("shop"))
                .next()
                .is_none()
        );
        assert_eq!(
            names(snap.slices_of("api", Some("shop")).collect()),
            ["api-a", "web-b"]
        );
        assert_eq!(web(&snap), ["web"]);
        snap.remove("apps/v1", "Deployment", Some("shop"), "web");
        assert!(web(&snap).is_empty());
    }

    #[test]
    fn listing_a_kind_returns_exactly_its_objects_in_one_or_every_namespace() {
        let mut snap = Snapshot::new();
        let obj = |av: &str, kind: &str, ns: Option<&str>, name: &str| {
            let mut meta = json!({"name": name});
            if let Some(ns) = ns {
                meta["namespace"] = json!(ns);
            }
            json!({"apiVersion": av, "kind": kind, "metadata": meta})
        };
        for (av, kind, ns, name) in [
            ("v1", "Pod", Some("a"), "p1"),
            ("v1", "Pod", Some("b"), "p2"),
            ("v1", "Pod", Some("b"), "p3"),
            ("v1", "PersistentVolume", None, "pv"),
            ("v1", "Service", Some("a"), "s1"),
            ("apps/v1", "Deployment", Some("b"), "d1"),
            ("v1", "Namespace", None, "b"),
        ] {
            snap.upsert(obj(av, kind, ns, name)).unwrap();
        }
        let names = |kind: &str, ns: Option<&str>| {
            snap.list_raw("", kind, ns)
                .map(|v| v["metadata"]["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("Pod", None), ["p1", "p2", "p3"]);
        assert_eq!(names("Pod", Some("b")), ["p2", "p3"]);
        assert_eq!(names("Pod", Some("c")), Vec::<String>::new());
        assert_eq!(names("Service", Some("b")), Vec::<String>::new());
        assert_eq!(names("PersistentVolume", None), ["pv"]);
        assert_eq!(
            names("Deployment", None),
            Vec::<String>::new(),
            "other group"
        );
    }
}

//! The object type the watchers read: the API server's JSON copied once, as it is read,
//! into the compact text the snapshot keeps, without `metadata.managedFields` and
//! kubectl's last-applied-configuration annotation (no rule reads them, and they are often
//! the larger part of an object). No `serde_json::Value` is built on the way: at 2,000
//! pods that tree (a map per object, a string per key) cost more than the rules did, and a
//! page of 500 listed pods held it ten times over.

use crate::rules::borrowed::Borrowed;
use crate::rules::head::{
    Head, HeadMeta, HeadSpec, HeadTemplate, HeadTemplateMeta, Lenient, Owners,
};
use crate::rules::kept::{self, CONTAINER_LISTS, CONTAINER_STATUS_LISTS, Keep, Kept, Place, Whole};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::{ApiResource, DynamicResourceScope, Resource};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt::{self, Write as _};
use std::marker::PhantomData;

/// The annotation `kubectl apply` (client-side) keeps the whole applied manifest in.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// One object as the API server sent it (less what is dropped), as compact JSON text
/// without `apiVersion` and `kind` (list items may come without them; see
/// [`RawObject::into_text`]), with the metadata the watcher itself reads and the
/// [`Head`] the snapshot files it by, gathered on the way. `K` says which fields are kept
/// (see `kept`): for Pods and Events, only those a rule or the report reads.
#[derive(Debug, Clone, Default)]
pub struct RawObject<K: Kept = Whole> {
    /// Boxed: an object is moved by value through kube-runtime's watcher stream several
    /// times on its way out; with the metadata and [`Head`] inline (1.1 KB) those
    /// copies were a noticeable share of the watch tasks' CPU.
    found: Box<Found>,
    /// The object's members after `apiVersion` and `kind`: `"metadata":{..},...}`, or `}`.
    rest: String,
    keep: PhantomData<K>,
}

/// What is gathered while an object is copied.
#[derive(Debug, Clone, Default)]
struct Found {
    meta: ObjectMeta,
    head: Head,
}

impl Found {
    /// Whether the value of `key` in the map at `at` is kept in the [`Head`] (read whole:
    /// these are small), for an object kept as `keep`. The snapshot's links read labels
    /// and deletion only of workloads and EndpointSlices, and no uid of an Event: for the
    /// Pods and Events that arrive by the thousand they are not read (each would be
    /// parsed into a `Value` and thrown away). ownerReferences are read apart, without a
    /// `Value` ([`Found::owners`]).
    fn captures(at: At, key: &str, keep: Keep) -> bool {
        match at {
            At::Top => key == "involvedObject",
            At::Metadata => match key {
                "name" | "namespace" | "resourceVersion" => true,
                "uid" => keep != Keep::Event,
                "labels" | "deletionTimestamp" => keep == Keep::Whole,
                _ => false,
            },
            At::Spec => key == "replicas",
            At::TemplateMeta => key == "labels",
            _ => false,
        }
    }

    /// A map at `at` begins: as serde reads the [`Head`], an object there is present.
    fn entered(&mut self, at: At) {
        let head = &mut self.head;
        match at {
            At::Metadata => head.metadata = Lenient(Some(HeadMeta::default())),
            At::Spec => head.spec = Lenient(Some(HeadSpec::default())),
            At::Template => {
                if let Some(spec) = head.spec.0.as_mut() {
                    spec.template = Lenient(Some(HeadTemplate::default()));
                }
            }
            At::TemplateMeta => {
                if let Some(template) = head.spec.0.as_mut().and_then(|s| s.template.0.as_mut()) {
                    template.metadata = Lenient(Some(HeadTemplateMeta::default()));
                }
            }
            _ => {}
        }
    }

    /// Keeps the ownerReferences read (`null` reads as absent, as in serde).
    fn owners(&mut self, owners: Option<Owners>) {
        if let Some(meta) = self.head.metadata.0.as_mut() {
            meta.owner_references = owners;
        }
    }

    /// Keeps a value [`Found::captures`] asked for (`null` reads as absent, as in serde).
    fn capture(&mut self, at: At, key: &str, value: Value) {
        let text = || value.as_str().map(str::to_owned);
        let (name, namespace, version) = match (at, key) {
            (At::Metadata, "name") => (text(), None, None),
            (At::Metadata, "namespace") => (None, text(), None),
            (At::Metadata, "resourceVersion") => (None, None, text()),
            _ => (None, None, None),
        };
        let value = Some(value).filter(|v| !v.is_null());
        let head = &mut self.head;
        match at {
            At::Top => head.involved_object = value,
            At::Metadata => {
                let Some(meta) = head.metadata.0.as_mut() else {
                    return;
                };
                match key {
                    "name" => (meta.name, self.meta.name) = (value, name),
                    "namespace" => (meta.namespace, self.meta.namespace) = (value, namespace),
                    "resourceVersion" => self.meta.resource_version = version,
                    "uid" => meta.uid = value,
                    "labels" => meta.labels = value,
                    _ => meta.deletion_timestamp = value,
                }
            }
            At::Spec => {
                if let Some(spec) = head.spec.0.as_mut() {
                    spec.replicas = value;
                }
            }
            At::TemplateMeta => {
                if let Some(meta) = head
                    .spec
                    .0
                    .as_mut()
                    .and_then(|s| s.template.0.as_mut())
                    .and_then(|t| t.metadata.0.as_mut())
                {
                    meta.labels = value;
                }
            }
            _ => {}
        }
    }
}

impl<K: Kept> RawObject<K> {
    /// The object as JSON text, stamped with the apiVersion and kind it was watched as,
    /// and the [`Head`] gathered from it.
    pub fn into_parts(mut self, resource: &ApiResource) -> (String, Head) {
        let mut head = std::mem::take(&mut self.found.head);
        head.api_version = Some(Value::String(resource.api_version.clone()));
        head.kind = Some(Value::String(resource.kind.clone()));
        (self.into_text(resource), head)
    }

    /// The object as a `Value` with its name and namespace, which an Event's text leaves
    /// to its key (`Null` if the text does not read; for deletions, which are few).
    pub fn into_value(mut self, resource: &ApiResource) -> Value {
        let fields = [
            ("name", self.found.meta.name.take()),
            ("namespace", self.found.meta.namespace.take()),
        ];
        let mut value: Value =
            serde_json::from_str(&self.into_text(resource)).unwrap_or(Value::Null);
        if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
            for (field, known) in fields {
                if let Some(known) = known {
                    metadata
                        .entry(field)
                        .or_insert_with(|| Value::String(known));
                }
            }
        }
        value
    }

    /// The object as JSON text, stamped with the apiVersion and kind it was watched as.
    pub fn into_text(self, resource: &ApiResource) -> String {
        // Sized to fit (an apiVersion or kind has nothing to escape): the snapshot keeps it
        // as a boxed str, which would shrink it again.
        let len = r#"{"apiVersion":"","kind":"","#.len()
            + resource.api_version.len()
            + resource.kind.len()
            + self.rest.len();
        let mut text = String::with_capacity(len);
        text.push_str("{\"apiVersion\":");
        push_json_str(&mut text, &resource.api_version);
        text.push_str(",\"kind\":");
        push_json_str(&mut text, &resource.kind);
        if self.rest != "}" {
            text.push(',');
        }
        text.push_str(&self.rest);
        text
    }
}

impl<K: Kept> Resource for RawObject<K> {
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
        &self.found.meta
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.found.meta
    }
}

impl<'de, K: Kept> serde::Deserialize<'de> for RawObject<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut raw = RawObject::<K>::default();
        // Room for most objects of the kind at once: grown from nothing, the copy of a
        // pod would be reallocated nine times on its way to 2 KB. It lives only until
        // `into_text` copies it.
        raw.rest.reserve(match K::KEEP {
            Keep::Event => 512,
            Keep::Pod | Keep::Whole => 2048,
        });
        d.deserialize_map(Copy {
            out: &mut raw.rest,
            at: At::Top,
            keep: K::KEEP,
            found: Some(&mut *raw.found),
        })?;
        Ok(raw)
    }
}

/// Where in the object a value being copied sits: what is dropped depends on it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum At {
    /// The object itself (its `apiVersion` and `kind` are left for `into_text`).
    Top,
    /// `metadata` (its `managedFields` is dropped).
    Metadata,
    /// `metadata.annotations` (kubectl's last-applied configuration is dropped).
    Annotations,
    /// `spec`, `spec.template` and `spec.template.metadata`: read for the [`Head`].
    Spec,
    Template,
    TemplateMeta,
    /// `status`, and `spec.containers` (or `initContainers`, `ephemeralContainers`) and
    /// one of its items: where a Pod's unread fields are (see `kept`).
    Status,
    Containers,
    Container,
    /// `status.conditions` and one of its items; a status's container lists and an item.
    Conditions,
    Condition,
    ContainerStatuses,
    ContainerStatus,
    Elsewhere,
}

impl At {
    fn child(self, key: &str) -> At {
        match (self, key) {
            (At::Top, "metadata") => At::Metadata,
            (At::Metadata, "annotations") => At::Annotations,
            (At::Top, "spec") => At::Spec,
            (At::Spec, "template") => At::Template,
            (At::Template, "metadata") => At::TemplateMeta,
            (At::Top, "status") => At::Status,
            (At::Spec, list) if CONTAINER_LISTS.contains(&list) => At::Containers,
            (At::Status, "conditions") => At::Conditions,
            (At::Status, list) if CONTAINER_STATUS_LISTS.contains(&list) => At::ContainerStatuses,
            _ => At::Elsewhere,
        }
    }

    /// Where an item of the list here sits.
    fn item(self) -> At {
        match self {
            At::Containers => At::Container,
            At::Conditions => At::Condition,
            At::ContainerStatuses => At::ContainerStatus,
            _ => At::Elsewhere,
        }
    }

    /// Whether the [`Head`] reads anything inside the map here.
    fn gathers(self) -> bool {
        matches!(
            self,
            At::Metadata | At::Spec | At::Template | At::TemplateMeta
        )
    }

    /// Whether nothing inside the value here is left out or gathered for an object kept
    /// as `keep`, so that it can be copied as the API server wrote it ([`Verbatim`]).
    fn verbatim(self, keep: Keep) -> bool {
        // What `keep` leaves out below here: the places of this map and the maps under it.
        let below: &[Place] = match self {
            At::Elsewhere => &[],
            At::Status => &[Place::Status, Place::Condition, Place::ContainerStatus],
            At::Containers | At::Container => &[Place::Container],
            At::Conditions | At::Condition => &[Place::Condition],
            At::ContainerStatuses | At::ContainerStatus => &[Place::ContainerStatus],
            // Something is always left out below (managedFields, the last-applied
            // annotation, apiVersion and kind) or read for the Head.
            At::Top
            | At::Metadata
            | At::Annotations
            | At::Spec
            | At::Template
            | At::TemplateMeta => return false,
        };
        !below.iter().any(|&place| keep.drops_any(place))
    }

    /// Whether `key` in the map here is left out of the copy of an object kept as `keep`.
    fn drops(self, key: &str, keep: Keep) -> bool {
        let always = match self {
            At::Top => key == "apiVersion" || key == "kind",
            At::Metadata => key == "managedFields",
            At::Annotations => key == LAST_APPLIED,
            _ => false,
        };
        always || self.place().is_some_and(|place| keep.drops(place, key))
    }

    /// Where the kept fields of a kind ([`Keep`]) are told apart.
    fn place(self) -> Option<Place> {
        match self {
            At::Top => Some(Place::Top),
            At::Metadata => Some(Place::Metadata),
            At::Spec => Some(Place::Spec),
            At::Container => Some(Place::Container),
            At::Status => Some(Place::Status),
            At::Condition => Some(Place::Condition),
            At::ContainerStatus => Some(Place::ContainerStatus),
            _ => None,
        }
    }
}

/// Copies one JSON value into `out` as compact text, dropping what [`At`] says; at the
/// top of an object the opening `{` is left out (see [`RawObject::rest`]). On the paths
/// the [`Head`] reads it gathers into `found`.
struct Copy<'a> {
    out: &'a mut String,
    at: At,
    keep: Keep,
    found: Option<&'a mut Found>,
}

impl Copy<'_> {
    fn nested(&mut self, at: At) -> Copy<'_> {
        Copy {
            out: self.out,
            at,
            keep: self.keep,
            found: None,
        }
    }
}

impl<'de> DeserializeSeed<'de> for Copy<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

fn push_json_str(out: &mut String, s: &str) {
    // Most strings need no escaping; the rest get serde_json's own (writing into a String
    // cannot fail).
    if s.bytes().any(needs_escape) {
        let _ = serde_json::to_writer(StringWriter(out), s);
    } else {
        out.reserve(s.len() + 2);
        out.push('"');
        out.push_str(s);
        out.push('"');
    }
}

/// Whether JSON text must escape this byte of a string (at most as `\u00XX`).
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

/// `io::Write` over a `String`, for serde_json's writers (which write UTF-8 only).
struct StringWriter<'a>(&'a mut String);

impl std::io::Write for StringWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let s = std::str::from_utf8(buf)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
        self.0.push_str(s);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'de> Visitor<'de> for Copy<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Kubernetes object")
    }

    fn visit_bool<E>(self, v: bool) -> Result<(), E> {
        self.out.push_str(if v { "true" } else { "false" });
        Ok(())
    }

    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        let _ = write!(self.out, "{v}");
        Ok(())
    }

    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        let _ = write!(self.out, "{v}");
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<(), E> {
        let _ = serde_json::to_writer(StringWriter(self.out), &v);
        Ok(())
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        push_json_str(self.out, v);
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        self.out.push_str("null");
        Ok(())
    }

    fn visit_none<E>(self) -> Result<(), E> {
        self.out.push_str("null");
        Ok(())
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        self.out.push('[');
        let mut first = true;
        loop {
            let mark = self.out.len();
            if !first {
                self.out.push(',');
            }
            if seq
                .next_element_seed(self.nested(self.at.item()))?
                .is_none()
            {
                self.out.truncate(mark);
                break;
            }
            first = false;
        }
        self.out.push(']');
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        if self.at != At::Top {
            self.out.push('{');
        }
        if let Some(found) = self.found.as_deref_mut() {
            found.entered(self.at);
        }
        let mut first = true;
        while let Some(key) = map.next_key_seed(Borrowed)? {
            let owners = self.at == At::Metadata && key == "ownerReferences";
            if self.at.drops(&key, self.keep) {
                match self.found.as_deref_mut() {
                    Some(found) if owners => found.owners(map.next_value()?),
                    // Gathered even when the copy leaves it out: the watcher resumes from
                    // the resourceVersion, and an Event's name is its key.
                    Some(found) if Found::captures(self.at, &key, self.keep) => {
                        let value: Value = map.next_value()?;
                        found.capture(self.at, &key, value);
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                continue;
            }
            if !first {
                self.out.push(',');
            }
            first = false;
            push_json_str(self.out, &key);
            self.out.push(':');
            let at = self.at.child(&key);
            match self.found.as_deref_mut() {
                // Copied as sent, then read from the copy: no `Value` on the way.
                Some(found) if owners => {
                    let mark = self.out.len();
                    map.next_value_seed(Verbatim {
                        out: self.out,
                        keep: self.keep,
                    })?;
                    found.owners(serde_json::from_str(&self.out[mark..]).unwrap_or_default());
                }
                Some(found) if Found::captures(self.at, &key, self.keep) => {
                    let value: Value = map.next_value()?;
                    let kept = match (self.keep, self.at) {
                        (Keep::Event, At::Top) => Cow::Owned(kept::involved_object(&value)),
                        _ => Cow::Borrowed(&value),
                    };
                    match &*kept {
                        // Most captured values (names, uids, versions) are strings.
                        Value::String(s) => push_json_str(self.out, s),
                        // Writing a Value into a String cannot fail.
                        other => {
                            let _ = serde_json::to_writer(StringWriter(self.out), other);
                        }
                    }
                    found.capture(self.at, &key, value);
                }
                _ if at.verbatim(self.keep) => map.next_value_seed(Verbatim {
                    out: self.out,
                    keep: self.keep,
                })?,
                found => map.next_value_seed(Copy {
                    out: self.out,
                    at,
                    keep: self.keep,
                    found: found.filter(|_| at.gathers()),
                })?,
            }
        }
        self.out.push('}');
        Ok(())
    }
}

/// serde_json's name for a request of a value's text as it was read (what
/// `serde_json::value::RawValue` asks for). Any other deserializer takes it for an ordinary
/// newtype name; serde_json answers it only with its `raw_value` feature (asked for in
/// Cargo.toml), and a serde_json that no longer did would make every value take
/// [`Copy`]'s way: slower, never wrong.
const RAW_VALUE_TOKEN: &str = "$serde_json::private::RawValue";

/// Copies a value in which nothing is dropped (a pod's labels, a Deployment's pod template
/// spec and status) as the text the API server sent, in one piece: serde_json skips over
/// it and hands over the slice, where [`Copy`] would read and write it token by token,
/// every string checked for escapes twice and every number formatted again. The API
/// server writes compact JSON, so the copy is as compact as [`Copy`]'s (a server that
/// indented its JSON would leave its spaces in these values).
///
/// serde_json's own deserializer reading text (watch events) answers with the text;
/// any other (a list's items, which kube's `ObjectList` buffers before reading them, or
/// a `Value`) reads the value as a newtype, and it is copied by [`Copy`].
struct Verbatim<'a> {
    out: &'a mut String,
    keep: Keep,
}

impl<'de> DeserializeSeed<'de> for Verbatim<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_newtype_struct(RAW_VALUE_TOKEN, self)
    }
}

impl<'de> Visitor<'de> for Verbatim<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    /// serde_json's answer: a map of one entry, its private key and the value's text.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        if map.next_key::<IgnoredAny>()?.is_none() {
            return Err(de::Error::invalid_length(0, &self));
        }
        map.next_value_seed(Text(self.out))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(Copy {
            out: self.out,
            at: At::Elsewhere,
            keep: self.keep,
            found: None,
        })
    }
}

/// A value's JSON text, appended as it is.
struct Text<'a>(&'a mut String);

impl<'de> DeserializeSeed<'de> for Text<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Text<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value's text")
    }

    fn visit_str<E>(self, v: &str) -> Result<(), E> {
        self.0.push_str(v);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Prepared;
    use crate::rules::kept::{EventFields, PodFields};
    use serde_json::{Value, json};

    #[test]
    fn an_object_moves_through_the_watcher_as_a_few_words() {
        // What it gathers is boxed (1,112 bytes when this was written).
        let (found, raw) = (size_of::<Found>(), size_of::<RawObject<PodFields>>());
        assert!(found > 512 && raw <= 64, "{found} {raw}");
    }

    fn pod_resource() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "Pod".into(),
            plural: "pods".into(),
        }
    }

    fn read(text: &str) -> Value {
        let raw: RawObject = serde_json::from_str(text).unwrap();
        let out = raw.into_text(&pod_resource());
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
    }

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
        assert_eq!(raw.meta().namespace.as_deref(), Some("shop"));
        let out = raw.into_text(&pod_resource());
        assert!(
            out.starts_with(r#"{"apiVersion":"v1","kind":"Pod","metadata":"#),
            "{out}"
        );
        // Allocated at its size: boxing it for the snapshot copies nothing.
        assert_eq!(out.capacity(), out.len());
        assert_eq!(
            serde_json::from_str::<Value>(&out).unwrap(),
            json!({"metadata": {"name": "web-1", "namespace": "shop",
                "resourceVersion": "42", "uid": "u1", "labels": {"app": "web"}},
                "spec": {"nodeName": "node-1", "containers": [{"name": "web", "image": "web:1"}]},
                "status": {"phase": "Running"}, "apiVersion": "v1", "kind": "Pod"})
        );
    }

    #[test]
    fn every_kind_of_value_is_copied_as_json_reads_it() {
        let object = json!({"metadata": {"name": "w", "annotations": {"a": "1",
                LAST_APPLIED: "{\"kind\":\"Pod\"}"}},
            "spec": {"n": -3, "big": u64::MAX, "f": 0.25, "e": 1.5e300,
                "t": true, "no": false, "null": null, "empty": {}, "none": [],
                "nested": [[1, [2]], {"x": [{}]}],
                "escaped \"key\"\n": "tab\there \"quoted\" \\ \u{1} é 🚀"},
            "apiVersion": "v9", "kind": "Wrong"});
        let got = read(&object.to_string());
        let mut want = object.clone();
        want["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(LAST_APPLIED);
        want["apiVersion"] = json!("v1");
        want["kind"] = json!("Pod");
        assert_eq!(got, want);
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for s in [
            "plain",
            "",
            "é 🚀",
            "a\"b",
            "back\\slash",
            "line\nfeed",
            "\u{1f}",
            "\u{7f}",
        ] {
            let mut out = String::new();
            push_json_str(&mut out, s);
            assert_eq!(out, serde_json::to_string(s).unwrap(), "{s:?}");
        }
    }

    #[test]
    fn only_the_top_level_kind_and_metadata_are_special() {
        // An owner reference's kind and a template's managedFields-like key stay.
        let object = json!({"metadata": {"ownerReferences": [{"kind": "ReplicaSet",
                "apiVersion": "apps/v1", "name": "web-1", "uid": "u"}]},
            "spec": {"template": {"metadata": {"managedFields": [1],
                "annotations": {LAST_APPLIED: "kept"}}}}});
        let got = read(&object.to_string());
        assert_eq!(got["metadata"], object["metadata"]);
        assert_eq!(got["spec"], object["spec"]);
    }

    #[test]
    fn the_head_gathered_while_copying_is_the_one_serde_reads_from_the_copy() {
        let objects = [
            json!({"metadata": {"name": "web-1", "namespace": "shop", "uid": "p1",
                "labels": {"app": "web"}, "managedFields": [{"manager": "x"}],
                "ownerReferences": [{"kind": "ReplicaSet", "name": "web", "uid": "rs1"}],
                "deletionTimestamp": "2026-12-05T10:00:00Z"},
                "spec": {"nodeName": "n1", "containers": [{"name": "web"}]}}),
            json!({"spec": {"replicas": 3, "template": {"metadata": {"labels": {"app": "web"},
                "annotations": {"a": "b"}}, "spec": {}}},
                "metadata": {"name": "web", "namespace": "shop", "uid": "d1"}}),
            json!({"involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web-1",
                "namespace": "shop", "uid": "p1"}, "reason": "Pulling",
                "metadata": {"name": "web-1.1", "namespace": "shop", "uid": "e1"}}),
            json!({"metadata": {"name": "w", "labels": 7, "ownerReferences": "no",
                "uid": null}, "spec": "just text", "involvedObject": null}),
            json!({"metadata": {"name": "w", "ownerReferences": [7, null, [],
                {"uid": 3, "controller": "yes"}, {"uid": "rs1", "controller": true},
                {"kind": "Job", "uid": "j1", "controller": false}]}}),
            json!({"metadata": {"name": "w", "ownerReferences": {"uid": "x"}}}),
            json!({"metadata": {"name": "w", "ownerReferences": null}}),
            json!({"metadata": {"name": "w"}, "spec": {"replicas": null,
                "template": "none"}}),
            json!({"metadata": {"name": "w"}, "spec": {"template": {"metadata": [1, 2]}}}),
            json!({"metadata": "x", "spec": []}),
            json!({}),
        ];
        for object in objects {
            let raw: RawObject = serde_json::from_str(&object.to_string()).unwrap();
            let (text, gathered) = raw.into_parts(&pod_resource());
            let read: Head = serde_json::from_str(&text).unwrap();
            assert_eq!(format!("{gathered:?}"), format!("{read:?}"), "{object}");
        }
    }

    /// A pod as a real cluster sends it: service-account volume, env, probes, resources.
    fn busy_pod() -> Value {
        json!({"metadata": {"name": "web-1", "namespace": "shop", "uid": "p1",
                "resourceVersion": "77", "labels": {"app": "web"},
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                    "name": "web-5d8f", "uid": "rs1", "controller": true}],
                "annotations": {"sidecar.istio.io/status": "{\"initContainers\":[\"istio-init\"]}"},
                "managedFields": [{"manager": "kubelet"}]},
            "spec": {
                "volumes": [{"name": "kube-api-access", "projected": {"sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}]}}],
                "initContainers": [{"name": "istio-init", "image": "proxyv2:1.22",
                    "args": ["istio-iptables", "-p", "15001"], "restartPolicy": "Always",
                    "securityContext": {"privileged": true}}],
                "containers": [{"name": "web", "image": "web:1", "imagePullPolicy": "Always",
                    "ports": [{"name": "http", "containerPort": 8080}],
                    "env": [{"name": "PASSWORD", "value": "hunter2"}],
                    "resources": {"limits": {"memory": "128Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}},
                    "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run"}],
                    "terminationMessagePath": "/dev/termination-log"}],
                "imagePullSecrets": [{"name": "registry"}], "nodeName": "node-1",
                "restartPolicy": "Always", "readinessGates": [{"conditionType": "x/ready"}],
                "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists"}],
                "dnsPolicy": "ClusterFirst", "serviceAccountName": "web", "priority": 0},
            "status": {"phase": "Running", "hostIP": "10.0.0.7", "podIPs": [{"ip": "10.1.0.9"}],
                "qosClass": "Burstable",
                "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                    "lastProbeTime": null, "lastTransitionTime": "2026-12-05T10:00:00Z"}],
                "containerStatuses": [{"name": "web", "image": "web:1", "ready": false,
                    "imageID": "web@sha256:aa", "containerID": "containerd://9c1e",
                    "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run"}],
                    "user": {"linux": {"uid": 0, "gid": 0}},
                    "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})
    }

    fn busy_event() -> Value {
        json!({"metadata": {"name": "web-1.17f", "namespace": "shop", "uid": "e1",
                "resourceVersion": "78", "creationTimestamp": "2026-12-05T10:00:00Z",
                "managedFields": [{"manager": "kubelet"}]},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web-1",
                "namespace": "shop", "uid": "p1", "fieldPath": "spec.containers{web}"},
            "reason": "Failed", "message": "Failed to pull image \"web:1\": not found",
            "type": "Warning", "count": 3, "eventTime": null,
            "firstTimestamp": "2026-12-05T10:00:00Z", "lastTimestamp": "2026-12-05T10:01:00Z",
            "source": {"component": "kubelet", "host": "node-1"},
            "reportingComponent": "kubelet", "reportingInstance": "node-1", "action": "Pulling"})
    }

    fn resource(kind: &str, plural: &str) -> ApiResource {
        ApiResource {
            kind: kind.into(),
            plural: plural.into(),
            ..pod_resource()
        }
    }

    /// What a watcher keeping `K` makes of `object`, read back, and its watch metadata.
    /// The key and index links it gathers are those the snapshot reads from the whole
    /// object (an Event's copy leaves its name and what it is about to them).
    fn kept<K: Kept>(object: &Value, kind: &str, plural: &str) -> (Value, ObjectMeta) {
        let raw: RawObject<K> = serde_json::from_str(&object.to_string()).unwrap();
        let meta = raw.meta().clone();
        let (text, gathered) = raw.into_parts(&resource(kind, plural));
        let mut whole = object.clone();
        whole["apiVersion"] = json!("v1");
        whole["kind"] = json!(kind);
        // What the snapshot files it by is the same as if it had read the whole object.
        let gathered = Prepared::from_parts(text.clone(), gathered).unwrap();
        let read = Prepared::of(whole).unwrap();
        assert_eq!(gathered.index_links(), read.index_links(), "{text}");
        (serde_json::from_str(&text).unwrap(), meta)
    }

    #[test]
    fn a_watched_pod_keeps_what_the_rules_read_and_nothing_it_does_not() {
        let (pod, meta) = kept::<PodFields>(&busy_pod(), "Pod", "pods");
        assert_eq!(meta.resource_version.as_deref(), Some("77"));
        assert_eq!(
            pod["metadata"]["annotations"],
            busy_pod()["metadata"]["annotations"]
        );
        assert_eq!(
            pod["status"]["conditions"],
            json!([{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                "lastTransitionTime": "2026-12-05T10:00:00Z"}])
        );
        assert_eq!(
            pod["status"]["containerStatuses"],
            json!([{"name": "web", "image": "web:1", "ready": false, "imageID": "web@sha256:aa",
                "restartCount": 3, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}])
        );
        assert_eq!(
            pod["spec"]["containers"],
            json!([{"name": "web", "image": "web:1", "imagePullPolicy": "Always",
                "ports": [{"name": "http", "containerPort": 8080}]}])
        );
        assert_eq!(
            pod["spec"]["initContainers"],
            json!([{"name": "istio-init", "image": "proxyv2:1.22", "restartPolicy": "Always"}])
        );
        for kept in [
            "imagePullSecrets",
            "nodeName",
            "restartPolicy",
            "readinessGates",
        ] {
            assert_eq!(pod["spec"][kept], busy_pod()["spec"][kept], "{kept}");
        }
        for gone in [
            "volumes",
            "tolerations",
            "dnsPolicy",
            "serviceAccountName",
            "priority",
        ] {
            assert!(pod["spec"].get(gone).is_none(), "{gone}");
        }
        assert!(!pod.to_string().contains("hunter2"), "env is dropped");
        assert_eq!(
            pod["status"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["phase", "conditions", "containerStatuses"]
        );
        // The same pod kept whole (another kind's watcher) loses only managedFields.
        let (whole, _) = kept::<Whole>(&busy_pod(), "Pod", "pods");
        assert_eq!(whole["spec"], busy_pod()["spec"]);
    }

    #[test]
    fn a_watched_event_keeps_what_it_tells_and_its_name() {
        let (event, meta) = kept::<EventFields>(&busy_event(), "Event", "events");
        assert_eq!(
            meta.resource_version.as_deref(),
            Some("78"),
            "the watch resumes from it"
        );
        assert_eq!(meta.name.as_deref(), Some("web-1.17f"));
        let mut want = busy_event();
        let top = want.as_object_mut().unwrap();
        for gone in [
            "source",
            "reportingComponent",
            "reportingInstance",
            "action",
        ] {
            top.remove(gone);
        }
        // Its name and what it is about are its key's (put back when it is read).
        top["metadata"] = json!({});
        top["involvedObject"] = json!({"apiVersion": "v1", "fieldPath": "spec.containers{web}"});
        top.insert("apiVersion".into(), json!("v1"));
        top.insert("kind".into(), json!("Event"));
        assert_eq!(event, want);
        let typed: k8s_openapi::api::core::v1::Event = serde_json::from_value(event).unwrap();
        assert_eq!(typed.count, Some(3));
    }

    #[test]
    fn a_deleted_event_keeps_its_name() {
        let raw: RawObject<EventFields> = serde_json::from_str(&busy_event().to_string()).unwrap();
        let deleted = raw.into_value(&resource("Event", "events"));
        assert_eq!(
            deleted["metadata"],
            json!({"name": "web-1.17f", "namespace": "shop"})
        );
    }

    #[test]
    fn the_watchers_and_a_trimmed_value_keep_the_same_fields() {
        for (object, kind, plural) in [
            (busy_pod(), "Pod", "pods"),
            (busy_event(), "Event", "events"),
            (
                json!({"metadata": {"name": "x"}, "spec": "odd", "status": [1]}),
                "Pod",
                "pods",
            ),
            (
                json!({"metadata": {"name": "x"}, "spec": {"containers": {"a": 1}}}),
                "Pod",
                "pods",
            ),
        ] {
            let watched = match Keep::of_kind("", kind) {
                Keep::Pod => kept::<PodFields>(&object, kind, plural).0,
                Keep::Event => kept::<EventFields>(&object, kind, plural).0,
                Keep::Whole => unreachable!("only Pods and Events are trimmed"),
            };
            let mut trimmed = object.clone();
            trimmed["metadata"]
                .as_object_mut()
                .unwrap()
                .remove("managedFields");
            trimmed["apiVersion"] = json!("v1");
            trimmed["kind"] = json!(kind);
            Keep::of_kind("", kind).trim(&mut trimmed);
            assert_eq!(watched, trimmed, "{kind}: {object}");
        }
    }

    #[test]
    fn an_empty_object_reads_as_its_kind_alone() {
        assert_eq!(read("{}"), json!({"apiVersion": "v1", "kind": "Pod"}));
    }

    #[test]
    fn a_list_of_raw_objects_reads_like_the_api_servers() {
        let list = json!({
            "apiVersion": "v1", "kind": "PodList", "metadata": {"resourceVersion": "7"},
            "items": [{"metadata": {"name": "a", "resourceVersion": "5",
                "managedFields": [], "labels": {"app": "a<b"}},
                "spec": {"nodeName": "n1", "priority": 7, "ports": [{"port": 80}]},
                "status": {"phase": "Running", "hostIP": "10.0.0.1"}}]
        });
        let want = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "resourceVersion": "5", "labels": {"app": "a<b"}},
            "spec": {"nodeName": "n1", "priority": 7, "ports": [{"port": 80}]},
            "status": {"phase": "Running", "hostIP": "10.0.0.1"}});
        // kube's ObjectList buffers the items before reading them (serde's `flatten`), so
        // the verbatim copy is not on offer there, and from a `Value` neither.
        let from_text: kube::core::ObjectList<RawObject> =
            serde_json::from_str(&list.to_string()).unwrap();
        let from_value: kube::core::ObjectList<RawObject> = serde_json::from_value(list).unwrap();
        for list in [from_text, from_value] {
            assert_eq!(list.items.len(), 1);
            let text = list.items[0].clone().into_text(&pod_resource());
            assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), want);
        }
    }

    #[test]
    fn values_with_nothing_left_out_are_copied_as_the_server_wrote_them() {
        // Go's encoder writes `<` as `\u003c`; a token-by-token copy would write `<`.
        let line = r#"{"type":"MODIFIED","object":{"metadata":{"name":"a",
            "labels":{"app":"a\u003cb"},"annotations":{"note":"x\u003cy"}},
            "spec":{"template":{"spec":{"nodeSelector":{"k":"v\u003cw"}}}},
            "status":{"replicas":1.50,"conditions":[{"message":"m\u003cn"}]}}}"#;
        let kube::core::WatchEvent::Modified(raw) =
            serde_json::from_str::<kube::core::WatchEvent<RawObject>>(line).unwrap()
        else {
            panic!("not a modification")
        };
        let text = raw.into_text(&pod_resource());
        // Kept whole, a Deployment-like object's plain values come through verbatim...
        for verbatim in [
            r#""annotations":{"note":"x\u003cy"}"#,
            r#""spec":{"nodeSelector":{"k":"v\u003cw"}}"#,
            r#""status":{"replicas":1.50,"conditions":[{"message":"m\u003cn"}]}"#,
        ] {
            assert!(text.contains(verbatim), "{verbatim} not in {text}");
        }
        // ...and what the watcher reads on the way (labels) is written as it read it, as
        // are the maps something is dropped from.
        assert!(text.contains(r#""labels":{"app":"a<b"}"#), "{text}");
        let pod: RawObject<PodFields> = serde_json::from_str(
            r#"{"status":{"hostIP":"1","conditions":[{"lastProbeTime":null,"message":"m\u003cn"}]}}"#,
        )
        .unwrap();
        // A Pod's condition loses its unread field; what is left of it comes through as sent.
        let text = pod.into_text(&pod_resource());
        assert!(
            text.contains(r#""status":{"conditions":[{"message":"m\u003cn"}]}"#),
            "{text}"
        );
    }

    #[test]
    fn a_watch_event_line_reads_with_its_object() {
        let line = r#"{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod",
            "metadata":{"name":"a","resourceVersion":"9"}}}"#;
        let event: kube::core::WatchEvent<RawObject> = serde_json::from_str(line).unwrap();
        let kube::core::WatchEvent::Modified(raw) = event else {
            panic!("not a modification")
        };
        assert_eq!(raw.meta().resource_version.as_deref(), Some("9"));
    }
}

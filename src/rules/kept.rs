//! What is kept of the kinds a deploy watches by the thousand (Pods, and the Events about
//! them): only the fields a rule or the report reads, so that a pod costs what it tells.
//! Every other kind is kept whole: a custom resource's health rule may read any field.
//! The watchers drop the rest as they copy (`cluster::raw`); [`Keep::trim`] does the same
//! to a `Value`, so every rule test judges objects as the watchers keep them.
//!
//! The lists name what is dropped where a kind's schema leaves room for the unknown (a
//! Pod's spec, its containers, its status: a field added by a later Kubernetes is kept),
//! and what is kept where the schema is small and settled (an Event).

use kube::core::ApiResource;
use serde_json::Value;

/// Which fields of an object are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Keep {
    /// Everything but `metadata.managedFields` and kubectl's last-applied annotation.
    #[default]
    Whole,
    /// A core/v1 Pod without what no rule reads (see [`POD_SPEC_DROPPED`] and the lists
    /// after it).
    Pod,
    /// A core/v1 Event's [`EVENT_FIELDS`] only.
    Event,
}

/// The maps of an object where fields may be dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// The object itself.
    Top,
    /// `metadata`.
    Metadata,
    /// `spec`.
    Spec,
    /// An item of `spec.containers`, `spec.initContainers` or `spec.ephemeralContainers`.
    Container,
    /// `status`.
    Status,
    /// An item of `status.conditions`.
    Condition,
    /// An item of `status.containerStatuses`, `initContainerStatuses` or
    /// `ephemeralContainerStatuses`.
    ContainerStatus,
}

/// The keys of a map that a [`Keep`] leaves out.
enum Dropped {
    Nothing,
    These(&'static [&'static str]),
    AllBut(&'static [&'static str]),
}

/// The lists in a Pod's spec whose items are containers.
pub const CONTAINER_LISTS: [&str; 3] = ["containers", "initContainers", "ephemeralContainers"];

/// The lists in a Pod's status whose items are container statuses.
pub const CONTAINER_STATUS_LISTS: [&str; 3] = [
    "containerStatuses",
    "initContainerStatuses",
    "ephemeralContainerStatuses",
];

impl Keep {
    /// What is kept of the objects of `resource`'s kind.
    pub fn of(resource: &ApiResource) -> Keep {
        Keep::of_kind(&resource.group, &resource.kind)
    }

    /// What is kept of the objects of a kind in an API group (`""` for core).
    pub fn of_kind(group: &str, kind: &str) -> Keep {
        match (group, kind) {
            ("", "Pod") => Keep::Pod,
            ("", "Event") => Keep::Event,
            _ => Keep::Whole,
        }
    }

    /// Which keys of the map at `place` are left out.
    fn dropped(self, place: Place) -> Dropped {
        match (self, place) {
            (Keep::Pod, Place::Spec) => Dropped::These(POD_SPEC_DROPPED),
            (Keep::Pod, Place::Container) => Dropped::These(CONTAINER_DROPPED),
            (Keep::Pod, Place::Status) => Dropped::These(POD_STATUS_DROPPED),
            (Keep::Pod, Place::Condition) => Dropped::These(&["lastProbeTime"]),
            (Keep::Pod, Place::ContainerStatus) => Dropped::These(CONTAINER_STATUS_DROPPED),
            (Keep::Event, Place::Top) => Dropped::AllBut(EVENT_FIELDS),
            (Keep::Event, Place::Metadata) => Dropped::AllBut(EVENT_METADATA),
            _ => Dropped::Nothing,
        }
    }

    /// Whether `key`, in the map at `place`, is left out.
    pub fn drops(self, place: Place, key: &str) -> bool {
        match self.dropped(place) {
            Dropped::Nothing => false,
            Dropped::These(keys) => keys.contains(&key),
            Dropped::AllBut(keys) => !keys.contains(&key),
        }
    }

    /// Whether any key of the map at `place` may be left out (the watchers copy a map
    /// where none is, with everything below it, as the API server wrote it).
    pub fn drops_any(self, place: Place) -> bool {
        !matches!(self.dropped(place), Dropped::Nothing)
    }

    /// Drops from `obj` what [`Keep::drops`] says, as the watchers do while they copy.
    pub fn trim(self, obj: &mut Value) {
        if self == Keep::Whole {
            return;
        }
        let drop_in = |map: Option<&mut Value>, place: Place| {
            if let Some(map) = map.and_then(Value::as_object_mut) {
                map.retain(|key, _| !self.drops(place, key));
            }
        };
        drop_in(obj.get_mut("spec"), Place::Spec);
        drop_in(obj.get_mut("status"), Place::Status);
        drop_in(obj.get_mut("metadata"), Place::Metadata);
        let lists = CONTAINER_LISTS
            .map(|l| (format!("/spec/{l}"), Place::Container))
            .into_iter()
            .chain(CONTAINER_STATUS_LISTS.map(|l| (format!("/status/{l}"), Place::ContainerStatus)))
            .chain([("/status/conditions".to_owned(), Place::Condition)]);
        for (list, place) in lists {
            let items = obj.pointer_mut(&list);
            for item in items.and_then(Value::as_array_mut).into_iter().flatten() {
                drop_in(Some(item), place);
            }
        }
        drop_in(Some(obj), Place::Top);
        if self == Keep::Event
            && let Some(involved) = obj.get_mut("involvedObject")
        {
            *involved = involved_object(involved);
        }
    }
}

/// A Pod's spec fields no rule reads. Kept, among others: `containers`, `initContainers`
/// (the image a container runs, a sidecar's `restartPolicy`), `restartPolicy` (whether a
/// completed pod is done), `nodeName` (a DaemonSet pod's node), `imagePullSecrets` (the
/// registry lookup's credentials), `readinessGates` and `schedulingGates`.
pub const POD_SPEC_DROPPED: &[&str] = &[
    "volumes",
    "tolerations",
    "affinity",
    "topologySpreadConstraints",
    "securityContext",
    "dnsPolicy",
    "dnsConfig",
    "hostAliases",
    "schedulerName",
    "priority",
    "priorityClassName",
    "preemptionPolicy",
    "enableServiceLinks",
    "serviceAccount",
    "serviceAccountName",
    "automountServiceAccountToken",
    "terminationGracePeriodSeconds",
    "overhead",
];

/// A container's fields no rule reads (in `containers`, `initContainers` and
/// `ephemeralContainers`). Kept: `name`, `image`, `imagePullPolicy`, `ports` and
/// `restartPolicy`, and whatever a later Kubernetes adds.
pub const CONTAINER_DROPPED: &[&str] = &[
    "command",
    "args",
    "env",
    "envFrom",
    "workingDir",
    "volumeMounts",
    "volumeDevices",
    "resources",
    "resizePolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "securityContext",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "stdin",
    "stdinOnce",
    "tty",
];

/// A Pod's status fields no rule reads (its addresses and QoS class). Conditions (less
/// their `lastProbeTime`, always null in practice), phase, reason, message and every
/// container status are kept.
pub const POD_STATUS_DROPPED: &[&str] = &["hostIP", "hostIPs", "podIP", "podIPs", "qosClass"];

/// A container status's fields no rule reads. Kept: `name`, `image`, `imageID` (whether
/// the image reached the node), `ready`, `started`, `restartCount`, `state` and
/// `lastState`, and whatever a later Kubernetes adds.
pub const CONTAINER_STATUS_DROPPED: &[&str] = &[
    "containerID",
    "resources",
    "allocatedResources",
    "allocatedResourcesStatus",
    "volumeMounts",
    "user",
    "stopSignal",
];

/// What is kept of an Event: what the image-pull and volume rules and the report's event
/// lines read (its type, reason and message, how often and when it was seen, what it is
/// about). Dropped: `source`, `reportingComponent`, `reportingInstance`, `action`,
/// `related`, and the Event's own uid, creation time and resourceVersion.
/// (`apiVersion` and `kind` too: a watcher stamps those itself.)
pub const EVENT_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "involvedObject",
    "reason",
    "message",
    "type",
    "count",
    "series",
    "firstTimestamp",
    "lastTimestamp",
    "eventTime",
];

/// The reasons of the Events not watched at all: each repeats what its object's own
/// status says (`Scheduled`: the pod's PodScheduled condition; `Created`, `Started`: its
/// container states; `SuccessfulCreate`: the pods a ReplicaSet or Job counts), no rule
/// reads them, and every healthy pod brings one of each. Left out by the API server (see
/// [`event_field_selector`]): at 10,000 pods, 40,000 of a deploy's 52,800 Events are
/// never sent, read or kept. The Events the rules read (`Pulling`, `Pulled`, `Failed`,
/// `BackOff`, `Unhealthy`, `FailedScheduling`, ...) still come, as does every Warning
/// Kubernetes' own components record (none of them uses these four reasons). Only the
/// watch leaves them out: an Event given to the snapshot another way (a test) is kept.
pub const UNWATCHED_EVENT_REASONS: &[&str] =
    &["Scheduled", "Created", "Started", "SuccessfulCreate"];

/// The field selector the Event watches ask with, leaving out the
/// [`UNWATCHED_EVENT_REASONS`] (`reason` is one of the fields the API server selects
/// Events by, and selector terms are ANDed).
pub fn event_field_selector() -> String {
    UNWATCHED_EVENT_REASONS
        .iter()
        .map(|r| format!("reason!={r}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// An Event's metadata that is kept in its text: nothing. Its name and namespace, which
/// identify it (a merged Event comes again under the same name with a higher count), are
/// its key in the snapshot, which puts them back when the Event is read.
pub const EVENT_METADATA: &[&str] = &[];

/// The fields of an Event's involvedObject that the snapshot holds already (the key of the
/// object it is about, and that object's uid, which it files the Event under), and its
/// resourceVersion, which no rule reads. Left out of the text only when they can be put
/// back.
pub const INVOLVED_IDENTITY: &[&str] = &["kind", "name", "namespace", "uid", "resourceVersion"];

/// An Event's involvedObject as kept: without [`INVOLVED_IDENTITY`] when it names the
/// object fully (apiVersion, kind, name and uid, so the snapshot files the Event under it
/// and can put them back, `rules::event_store`), else whole. `apiVersion` and `fieldPath`
/// (which container an image-pull Event is about) stay.
pub fn involved_object(involved: &Value) -> Value {
    let text = |f: &str| involved.get(f).and_then(Value::as_str).is_some();
    let named = ["apiVersion", "kind", "name", "uid"].into_iter().all(text)
        && involved
            .get("namespace")
            .is_none_or(|ns| ns.is_string() || ns.is_null());
    match involved.as_object() {
        Some(map) if named => Value::Object(
            map.iter()
                .filter(|(k, _)| !INVOLVED_IDENTITY.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        _ => involved.clone(),
    }
}

/// The compile-time choice of a [`Keep`], for `RawObject`'s type parameter (a watcher
/// reads one kind, so one type).
pub trait Kept: std::fmt::Debug + Clone + Default + Send + Sync + 'static {
    const KEEP: Keep;
}

/// [`Keep::Whole`].
#[derive(Debug, Clone, Default)]
pub struct Whole;

/// [`Keep::Pod`].
#[derive(Debug, Clone, Default)]
pub struct PodFields;

/// [`Keep::Event`].
#[derive(Debug, Clone, Default)]
pub struct EventFields;

impl Kept for Whole {
    const KEEP: Keep = Keep::Whole;
}

impl Kept for PodFields {
    const KEEP: Keep = Keep::Pod;
}

impl Kept for EventFields {
    const KEEP: Keep = Keep::Event;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::Prepared;
    use serde_json::json;

    #[test]
    fn only_core_pods_and_events_are_trimmed() {
        assert_eq!(Keep::of_kind("", "Pod"), Keep::Pod);
        assert_eq!(Keep::of_kind("", "Event"), Keep::Event);
        // events.k8s.io Events have another schema; a custom `Pod` is anyone's.
        assert_eq!(Keep::of_kind("events.k8s.io", "Event"), Keep::Whole);
        assert_eq!(Keep::of_kind("example.com", "Pod"), Keep::Whole);
        assert_eq!(Keep::of_kind("apps", "Deployment"), Keep::Whole);
    }

    #[test]
    fn other_kinds_keep_fields_of_the_same_names() {
        let cr = json!({"apiVersion": "example.com/v1", "kind": "Pod",
            "metadata": {"name": "x", "uid": "u"},
            "spec": {"volumes": [1], "tolerations": [2], "containers": [{"env": []}]},
            "status": {"podIP": "10.0.0.1", "conditions": [{"lastProbeTime": null}],
                "containerStatuses": [{"containerID": "c"}]}, "source": "git"});
        let mut trimmed = cr.clone();
        Keep::Whole.trim(&mut trimmed);
        assert_eq!(trimmed, cr);
        // And a snapshot given that object keeps it whole.
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"template": {"spec": {"tolerations": [1],
                "containers": [{"name": "web", "env": [{"name": "A"}]}]}}}});
        let mut snap = crate::rules::Snapshot::new();
        snap.insert(Prepared::of(deployment.clone()).unwrap());
        let key = crate::rules::ObjectKey::new("apps/v1", "Deployment", Some("shop"), "web");
        assert_eq!(snap.get_raw(&key).unwrap(), deployment);
    }

    #[test]
    fn a_trimmed_event_still_reads_as_an_event() {
        let mut event = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web-1.1", "namespace": "shop", "uid": "e1"},
            "involvedObject": {"kind": "Pod", "name": "web-1", "uid": "p1"},
            "reason": "BackOff", "message": "Back-off pulling image \"web:1\"",
            "type": "Warning",
            "series": {"count": 4, "lastObservedTime": "2026-12-05T10:00:00.000000Z"},
            "source": {"component": "kubelet"}, "related": {"kind": "Node"}});
        let whole = event.clone();
        Keep::Event.trim(&mut event);
        // Without an apiVersion the involved object's key cannot be made: kept whole.
        assert_eq!(event["involvedObject"], whole["involvedObject"]);
        assert_eq!(event["metadata"], json!({}));
        assert!(event.get("source").is_none() && event.get("related").is_none());
        let typed: k8s_openapi::api::core::v1::Event = serde_json::from_value(event).unwrap();
        assert_eq!(typed.series.and_then(|s| s.count), Some(4));
        assert_eq!(typed.reason.as_deref(), Some("BackOff"));
    }

    #[test]
    fn an_event_in_a_snapshot_reads_as_the_api_server_sent_it() {
        let event = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "web-1.1", "namespace": "shop"},
            "involvedObject": {"apiVersion": "v1", "kind": "Pod", "name": "web-1",
                "namespace": "shop", "uid": "p1", "fieldPath": "spec.containers{web}"},
            "reason": "Pulling", "message": "Pulling image \"web:1\"", "type": "Normal",
            "count": 1, "firstTimestamp": "2026-12-05T10:00:00Z"});
        let mut trimmed = event.clone();
        Keep::Event.trim(&mut trimmed);
        assert_eq!(
            trimmed["involvedObject"],
            json!({"apiVersion": "v1", "fieldPath": "spec.containers{web}"})
        );
        let mut snap = crate::rules::Snapshot::new();
        snap.insert(Prepared::of(event.clone()).unwrap());
        let key = crate::rules::ObjectKey::new("v1", "Event", Some("shop"), "web-1.1");
        assert_eq!(snap.get_raw(&key).unwrap(), event);
        let typed: Vec<k8s_openapi::api::core::v1::Event> = snap.events_for("p1");
        assert_eq!(typed, [serde_json::from_value(event).unwrap()]);
        // About a cluster-scoped object: no namespace comes back.
        let node = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "node-1.1", "namespace": "default"},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": "node-1",
                "uid": "n1"},
            "reason": "NodeNotReady", "type": "Normal"});
        snap.insert(Prepared::of(node.clone()).unwrap());
        let key = crate::rules::ObjectKey::new("v1", "Event", Some("default"), "node-1.1");
        assert_eq!(snap.get_raw(&key).unwrap(), node);
        // About nothing it names: nothing is made up for it.
        let bare = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "bare.1", "namespace": "default"}, "reason": "Odd"});
        snap.insert(Prepared::of(bare.clone()).unwrap());
        let key = crate::rules::ObjectKey::new("v1", "Event", Some("default"), "bare.1");
        assert_eq!(snap.get_raw(&key).unwrap(), bare);
    }
}

//! Kubernetes Events as the kubelet and controllers record them: identical events (same
//! object, type, reason and message) are merged into one object whose `count` rises, so
//! watchers see MODIFIED rather than ADDED, as on a real cluster.

use crate::store::{ObjectKey, Store};
use serde_json::{Value, json};
use std::collections::HashMap;

/// One event to record.
#[derive(Debug, Clone)]
pub struct EventSpec<'a> {
    /// The object the event is about.
    pub involved: &'a Value,
    /// e.g. `spec.containers{web}` for container events.
    pub field_path: Option<String>,
    /// `Normal` or `Warning`.
    pub type_: &'a str,
    pub reason: &'a str,
    pub message: String,
    /// Reporting component; the current controller's name when `None`.
    pub component: Option<&'a str>,
    /// Node name for kubelet events.
    pub host: Option<&'a str>,
}

/// Remembers which Event object holds each distinct event, to merge repeats.
#[derive(Debug, Default)]
pub struct EventRecorder {
    seen: HashMap<(String, String, String, String, String), ObjectKey>,
    counter: u64,
}

impl EventRecorder {
    pub fn record(&mut self, store: &Store, spec: &EventSpec<'_>) {
        let meta = spec.involved.get("metadata").cloned().unwrap_or_default();
        let s = |v: &Value, k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let uid = s(&meta, "uid");
        let namespace = {
            let ns = s(&meta, "namespace");
            if ns.is_empty() {
                "default".to_owned()
            } else {
                ns
            }
        };
        let now = store.clock().now_rfc3339();
        let identity = (
            uid.clone(),
            spec.field_path.clone().unwrap_or_default(),
            spec.type_.to_owned(),
            spec.reason.to_owned(),
            spec.message.clone(),
        );
        if let Some(key) = self.seen.get(&identity)
            && let Some(existing) = store.get(key)
        {
            let mut ev = (*existing).clone();
            let count = ev.get("count").and_then(Value::as_i64).unwrap_or(1) + 1;
            ev["count"] = json!(count);
            ev["lastTimestamp"] = json!(now);
            ev["series"] = json!({"count": count, "lastObservedTime": store.clock().now_micro()});
            if store.update(key, ev, None).is_ok() {
                return;
            }
        }
        self.counter += 1;
        let name = format!(
            "{}.{:016x}",
            s(&meta, "name"),
            0x1880_0000_0000_0000_u64 + self.counter
        );
        let component = spec.component.unwrap_or("kube-controller-manager");
        let mut involved = json!({
            "apiVersion": s(spec.involved, "apiVersion"),
            "kind": s(spec.involved, "kind"),
            "name": s(&meta, "name"),
            "uid": uid,
            "resourceVersion": s(&meta, "resourceVersion"),
        });
        if !s(&meta, "namespace").is_empty() {
            involved["namespace"] = json!(namespace);
        }
        if let Some(fp) = &spec.field_path {
            involved["fieldPath"] = json!(fp);
        }
        let mut source = json!({"component": component});
        if let Some(host) = spec.host {
            source["host"] = json!(host);
        }
        let event = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": spec.reason,
            "message": spec.message,
            "source": source,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": spec.type_,
            "eventTime": null,
            "reportingComponent": component,
            "reportingInstance": spec.host.unwrap_or_default(),
        });
        let key = ObjectKey::new("", "events", &namespace, &name);
        if store.create(&key, event).is_ok() {
            self.seen.insert(identity, key);
        }
    }
}

/// The events.k8s.io/v1 view of a core/v1 Event (same object, other field names).
pub fn to_events_v1(core: &Value) -> Value {
    let mut meta = core.get("metadata").cloned().unwrap_or_default();
    if let Some(m) = meta.as_object_mut() {
        m.remove("managedFields");
    }
    let count = core.get("count").and_then(Value::as_i64).unwrap_or(1);
    let mut v = json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": meta,
        "eventTime": core.get("eventTime").cloned().unwrap_or(Value::Null),
        "reportingController": core.get("reportingComponent").cloned().unwrap_or_default(),
        "reportingInstance": core.get("reportingInstance").cloned().unwrap_or_default(),
        "action": core.get("reason").cloned().unwrap_or_default(),
        "reason": core.get("reason").cloned().unwrap_or_default(),
        "regarding": core.get("involvedObject").cloned().unwrap_or_default(),
        "note": core.get("message").cloned().unwrap_or_default(),
        "type": core.get("type").cloned().unwrap_or_default(),
        "deprecatedSource": core.get("source").cloned().unwrap_or_default(),
        "deprecatedFirstTimestamp": core.get("firstTimestamp").cloned().unwrap_or_default(),
        "deprecatedLastTimestamp": core.get("lastTimestamp").cloned().unwrap_or_default(),
        "deprecatedCount": count,
    });
    if let Some(series) = core.get("series") {
        v["series"] = series.clone();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::Clock;
    use crate::store::ChangeType;

    #[tokio::test(start_paused = true)]
    async fn identical_events_merge_with_rising_count() {
        let store = Store::new(Clock::fixed(), 100);
        let mut rx = store.subscribe();
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1", "resourceVersion": "7"}});
        let mut rec = EventRecorder::default();
        let failed = |msg: &str| EventSpec {
            involved: &pod,
            field_path: Some("spec.containers{web}".into()),
            type_: "Warning",
            reason: "Failed",
            message: msg.to_owned(),
            component: Some("kubelet"),
            host: Some("sim-node-1"),
        };
        rec.record(&store, &failed("Failed to pull image \"x\": not found"));
        tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        rec.record(&store, &failed("Failed to pull image \"x\": not found"));
        rec.record(&store, &failed("Error: ErrImagePull"));

        let kinds: Vec<_> = std::iter::from_fn(|| rx.try_recv().ok())
            .map(|c| c.kind)
            .collect();
        assert_eq!(
            kinds,
            [ChangeType::Added, ChangeType::Modified, ChangeType::Added]
        );
        let (events, _) = store.list("", "events", Some("shop"));
        let merged = events
            .iter()
            .find(|e| e["count"] == 2)
            .expect("merged event");
        assert_eq!(merged["firstTimestamp"], "2026-01-01T00:00:00Z");
        assert_eq!(merged["lastTimestamp"], "2026-01-01T00:00:10Z");
        assert_eq!(
            merged["involvedObject"]["fieldPath"],
            "spec.containers{web}"
        );
        assert_eq!(
            merged["source"],
            json!({"component": "kubelet", "host": "sim-node-1"})
        );
        let v1 = to_events_v1(merged);
        assert_eq!(v1["note"], "Failed to pull image \"x\": not found");
        assert_eq!(v1["regarding"]["name"], "web-1");
        assert_eq!(v1["series"]["count"], 2);
    }
}

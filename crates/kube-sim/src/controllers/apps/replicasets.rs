//! A Deployment's ReplicaSets as its controller sees them: spec and status counts, the
//! revision annotations (`deploymentutil`), template comparison without the hash label,
//! and the orderings the controller sorts by.

use super::meta::{annotation, int_at, is_deleting, name, str_at, uid};
use crate::store::ObjectKey;
use serde_json::Value;
use std::cmp::Ordering;

pub(super) const HASH_LABEL: &str = "pod-template-hash";
pub(super) const REVISION: &str = "deployment.kubernetes.io/revision";
pub(super) const REVISION_HISTORY: &str = "deployment.kubernetes.io/revision-history";
pub(super) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";
pub(super) const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

/// One ReplicaSet.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Rs {
    pub key: ObjectKey,
    pub obj: Value,
}

impl Rs {
    pub fn new(obj: &Value) -> Self {
        Rs {
            key: ObjectKey::new(
                "apps",
                "replicasets",
                super::meta::namespace(obj),
                name(obj),
            ),
            obj: obj.clone(),
        }
    }

    pub fn name(&self) -> &str {
        name(&self.obj)
    }

    pub fn uid(&self) -> &str {
        uid(&self.obj)
    }

    /// `spec.replicas` (defaulted to 1).
    pub fn replicas(&self) -> i32 {
        int_at(&self.obj, "/spec/replicas").unwrap_or(1) as i32
    }

    fn status(&self, field: &str) -> i32 {
        int_at(&self.obj, &format!("/status/{field}")).unwrap_or(0) as i32
    }

    pub fn status_replicas(&self) -> i32 {
        self.status("replicas")
    }

    pub fn ready(&self) -> i32 {
        self.status("readyReplicas")
    }

    pub fn available(&self) -> i32 {
        self.status("availableReplicas")
    }

    pub fn generation(&self) -> i64 {
        int_at(&self.obj, "/metadata/generation").unwrap_or(0)
    }

    pub fn observed_generation(&self) -> i64 {
        int_at(&self.obj, "/status/observedGeneration").unwrap_or(0)
    }

    pub fn deleting(&self) -> bool {
        is_deleting(&self.obj)
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        annotation(&self.obj, key)
    }

    /// `deploymentutil.Revision`: 0 when unset or unparsable.
    pub fn revision(&self) -> i64 {
        self.annotation(REVISION)
            .and_then(|r| r.parse().ok())
            .unwrap_or(0)
    }

    pub fn desired_annotation(&self) -> Option<i32> {
        self.annotation(DESIRED_REPLICAS)?.parse().ok()
    }

    pub fn template(&self) -> &Value {
        self.obj.pointer("/spec/template").unwrap_or(&Value::Null)
    }

    fn created(&self) -> &str {
        str_at(&self.obj, "/metadata/creationTimestamp")
    }
}

/// `controller.ReplicaSetsByCreationTimestamp`: oldest first, then by name.
pub(super) fn by_creation(a: &Rs, b: &Rs) -> Ordering {
    a.created()
        .cmp(b.created())
        .then_with(|| a.name().cmp(b.name()))
}

/// `deploymentutil.ReplicaSetsByRevision`.
pub(super) fn by_revision(a: &Rs, b: &Rs) -> Ordering {
    match (a.revision(), b.revision()) {
        (ra, rb) if ra == rb => by_creation(a, b),
        (ra, rb) => ra.cmp(&rb),
    }
}

/// Bigger first; equal sizes newest first (`ReplicaSetsBySizeNewer`, scaling up).
pub(super) fn by_size_newer(a: &Rs, b: &Rs) -> Ordering {
    b.replicas()
        .cmp(&a.replicas())
        .then_with(|| by_creation(b, a))
}

/// Bigger first; equal sizes oldest first (`ReplicaSetsBySizeOlder`, scaling down).
pub(super) fn by_size_older(a: &Rs, b: &Rs) -> Ordering {
    b.replicas()
        .cmp(&a.replicas())
        .then_with(|| by_creation(a, b))
}

pub(super) fn sum<'a>(rss: impl IntoIterator<Item = &'a Rs>, f: impl Fn(&Rs) -> i32) -> i32 {
    rss.into_iter().map(f).sum()
}

/// `deploymentutil.EqualIgnoreHash`: templates equal once the hash label is dropped.
pub(super) fn equal_ignore_hash(a: &Value, b: &Value) -> bool {
    fn strip(t: &Value) -> Value {
        let mut t = t.clone();
        if let Some(meta) = t.get_mut("metadata").and_then(Value::as_object_mut)
            && let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut)
        {
            labels.remove(HASH_LABEL);
            if labels.is_empty() {
                meta.remove("labels");
            }
        }
        t
    }
    strip(a) == strip(b)
}

/// `deploymentutil.FindNewReplicaSet`: the oldest ReplicaSet running the template.
pub(super) fn find_new(template: &Value, rss: &[Rs]) -> Option<usize> {
    let mut order: Vec<usize> = (0..rss.len()).collect();
    order.sort_by(|&a, &b| by_creation(&rss[a], &rss[b]));
    order
        .into_iter()
        .find(|&i| equal_ignore_hash(rss[i].template(), template))
}

pub(super) fn max_revision(rss: &[Rs]) -> i64 {
    rss.iter().map(Rs::revision).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rs(name: &str, created: &str, replicas: i32, revision: &str) -> Rs {
        Rs::new(
            &json!({"metadata": {"name": name, "namespace": "shop", "creationTimestamp": created,
            "annotations": {REVISION: revision}}, "spec": {"replicas": replicas}}),
        )
    }

    #[test]
    fn orders_replica_sets_like_the_controller() {
        let a = rs("web-a", "2026-01-01T00:00:00Z", 2, "3");
        let b = rs("web-b", "2026-01-01T00:01:00Z", 2, "1");
        let c = rs("web-c", "2026-01-01T00:02:00Z", 5, "x");
        let names = |mut v: Vec<Rs>, f: fn(&Rs, &Rs) -> Ordering| {
            v.sort_by(f);
            v.iter().map(|r| r.name().to_owned()).collect::<Vec<_>>()
        };
        let all = vec![c.clone(), a.clone(), b.clone()];
        assert_eq!(names(all.clone(), by_creation), ["web-a", "web-b", "web-c"]);
        assert_eq!(names(all.clone(), by_revision), ["web-c", "web-b", "web-a"]);
        assert_eq!(
            names(all.clone(), by_size_newer),
            ["web-c", "web-b", "web-a"]
        );
        assert_eq!(
            names(all.clone(), by_size_older),
            ["web-c", "web-a", "web-b"]
        );
        assert_eq!(max_revision(&all), 3);
    }

    #[test]
    fn finds_the_new_replica_set_ignoring_the_hash_label() {
        let tpl = json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "web:2"}]}});
        let mut old = rs("web-old", "2026-01-01T00:00:00Z", 3, "1");
        old.obj["spec"]["template"] = json!({"metadata": {"labels": {"app": "web", HASH_LABEL: "5f6b7c8d9e"}},
            "spec": {"containers": [{"name": "web", "image": "web:1"}]}});
        let mut new = rs("web-new", "2026-01-01T00:05:00Z", 1, "2");
        new.obj["spec"]["template"] = json!({"metadata": {"labels": {"app": "web", HASH_LABEL: "7d4b9c8f5d"}},
            "spec": {"containers": [{"name": "web", "image": "web:2"}]}});
        assert_eq!(find_new(&tpl, &[old.clone(), new]), Some(1));
        assert_eq!(find_new(&tpl, &[old]), None);
    }
}

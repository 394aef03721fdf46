//! The annotations a Deployment keeps on its ReplicaSets (`deploymentutil`): the
//! revision (with its history when a template comes back), the desired and maximum
//! replica counts a scaling event is detected by, and the Deployment's own annotations.

use super::meta::{annotation, sorted};
use super::replicasets::{DESIRED_REPLICAS, MAX_REPLICAS, REVISION, REVISION_HISTORY};
use super::spec::DeploymentSpec;
use serde_json::{Map, Value, json};

/// `maxRevHistoryLengthInChars` of the deployment controller.
const MAX_REVISION_HISTORY_CHARS: usize = 2000;
/// Deployment annotations never copied to its ReplicaSets (`annotationsToSkip`).
const NOT_COPIED: [&str; 6] = [
    "kubectl.kubernetes.io/last-applied-configuration",
    REVISION,
    REVISION_HISTORY,
    DESIRED_REPLICAS,
    MAX_REPLICAS,
    "deprecated.deployment.rollback.to",
];

fn annotations_mut(obj: &mut Value) -> &mut Map<String, Value> {
    let meta = crate::store::metadata_mut(obj);
    let a = meta.entry("annotations").or_insert_with(|| json!({}));
    if !a.is_object() {
        *a = json!({});
    }
    a.as_object_mut().expect("annotations object")
}

fn sort_annotations(obj: &mut Value) {
    let a = std::mem::take(annotations_mut(obj));
    *annotations_mut(obj) = sorted(a);
}

/// `deploymentutil.SetReplicasAnnotations`.
pub(super) fn set_replicas_annotations(rs: &mut Value, desired: i32, max: i32) -> bool {
    let a = annotations_mut(rs);
    let mut updated = false;
    for (k, v) in [(DESIRED_REPLICAS, desired), (MAX_REPLICAS, max)] {
        if a.get(k).and_then(Value::as_str) != Some(v.to_string().as_str()) {
            a.insert(k.into(), json!(v.to_string()));
            updated = true;
        }
    }
    sort_annotations(rs);
    updated
}

/// `deploymentutil.ReplicasAnnotationsNeedUpdate`.
pub(super) fn replicas_annotations_need_update(rs: &Value, desired: i32, max: i32) -> bool {
    annotation(rs, DESIRED_REPLICAS) != Some(desired.to_string().as_str())
        || annotation(rs, MAX_REPLICAS) != Some(max.to_string().as_str())
}

/// `deploymentutil.SetNewReplicaSetAnnotations`: copy the Deployment's own annotations,
/// raise the revision (keeping the one it replaces in the revision history), and for a
/// ReplicaSet about to be created set the replica annotations.
pub(super) fn set_new_rs_annotations(
    d: &Value,
    spec: &DeploymentSpec,
    rs: &mut Value,
    new_revision: i64,
    exists: bool,
) -> bool {
    let mut changed = false;
    let own = d
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let a = annotations_mut(rs);
    for (k, v) in own {
        if NOT_COPIED.contains(&k.as_str()) || a.get(&k) == Some(&v) {
            continue;
        }
        a.insert(k, v);
        changed = true;
    }
    let old_revision = a.get(REVISION).and_then(Value::as_str).map(str::to_owned);
    let old_number = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(r) => match r.parse::<i64>() {
            Ok(n) => n,
            Err(_) => return false,
        },
    };
    if old_number < new_revision {
        a.insert(REVISION.into(), json!(new_revision.to_string()));
        changed = true;
        if let Some(old) = old_revision {
            let history = a
                .get(REVISION_HISTORY)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            let joined = if history.is_empty() {
                old
            } else {
                trim_history(&history, &old)
            };
            a.insert(REVISION_HISTORY.into(), json!(joined));
        }
    }
    if !exists {
        changed |= set_replicas_annotations(rs, spec.replicas, spec.replicas + spec.max_surge());
    }
    sort_annotations(rs);
    changed
}

/// Append `old` to the history, dropping the oldest entries to stay under the limit.
fn trim_history(history: &str, old: &str) -> String {
    let mut entries: Vec<&str> = history.split(',').collect();
    let mut total = history.len() + old.len() + 1;
    let mut start = 0;
    while total > MAX_REVISION_HISTORY_CHARS && start < entries.len() {
        total -= entries[start].len() + 1;
        start += 1;
    }
    if total > MAX_REVISION_HISTORY_CHARS {
        return history.to_owned();
    }
    entries.drain(..start);
    entries.push(old);
    entries.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_replica_set_annotations_copy_the_deployment_and_keep_history() {
        let d = json!({"metadata": {"annotations": {
            "kubectl.kubernetes.io/last-applied-configuration": "{}", REVISION: "1", "team": "payments"}},
            "spec": {"replicas": 3}});
        let spec = DeploymentSpec::from_object(&d);
        let mut fresh = json!({"metadata": {"name": "web-7d4b9c8f5d"}});
        assert!(set_new_rs_annotations(&d, &spec, &mut fresh, 2, false));
        assert_eq!(
            fresh["metadata"]["annotations"],
            json!({DESIRED_REPLICAS: "3", MAX_REPLICAS: "4",
            REVISION: "2", "team": "payments"})
        );
        let keys: Vec<_> = fresh["metadata"]["annotations"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(keys, [DESIRED_REPLICAS, MAX_REPLICAS, REVISION, "team"]);
        assert!(!set_new_rs_annotations(&d, &spec, &mut fresh, 2, true));

        let mut rolled_back =
            json!({"metadata": {"annotations": {REVISION: "1", REVISION_HISTORY: "0"}}});
        assert!(set_new_rs_annotations(&d, &spec, &mut rolled_back, 3, true));
        assert_eq!(annotation(&rolled_back, REVISION), Some("3"));
        assert_eq!(annotation(&rolled_back, REVISION_HISTORY), Some("0,1"));
    }
}

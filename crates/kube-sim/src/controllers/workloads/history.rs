//! ControllerRevisions (`pkg/controller/history`): the template snapshots StatefulSets and
//! DaemonSets keep, named `<owner>-<hash>`, numbered, and reused when a template returns.

use super::objects::{
    controller_ref, fnv32, fnv32a, int_at, is_controlled_by, name, namespace, safe_encode, str_at,
};
use crate::engine::{World, WriteError};
use crate::store::{DeleteOptions, ObjectKey, StoreError};
use serde_json::{Value, json};
use std::sync::Arc;

/// The label both kinds put on revisions and pods.
pub(crate) const REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// How a kind derives the hash of a revision from its data and the collision count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HashStyle {
    /// `history.HashControllerRevision`: FNV-1 over the stored patch.
    StatefulSet,
    /// `controller.ComputeHash`: FNV-1a over the pod template.
    DaemonSet,
}

impl HashStyle {
    fn hash(self, owner: &Value, data: &Value, collision_count: i64) -> String {
        let probe = if collision_count > 0 {
            collision_count.to_string()
        } else {
            String::new()
        };
        let hashed = match self {
            HashStyle::StatefulSet => fnv32(format!("{data}{probe}").as_bytes()),
            HashStyle::DaemonSet => {
                let template = owner.pointer("/spec/template").cloned().unwrap_or_default();
                fnv32a(format!("{template}{probe}").as_bytes())
            }
        };
        safe_encode(&hashed.to_string())
    }
}

fn revision_key(namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new("apps", "controllerrevisions", namespace, name)
}

/// What a revision stores: a strategic-merge patch replacing the whole pod template.
pub(crate) fn revision_data(owner: &Value) -> Value {
    let mut template = serde_json::Map::new();
    template.insert("$patch".into(), json!("replace"));
    if let Some(t) = owner.pointer("/spec/template").and_then(Value::as_object) {
        template.extend(t.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    json!({"spec": {"template": template}})
}

/// The pod template a revision holds (to build pods of an older revision).
pub(crate) fn revision_template(revision: &Value) -> Value {
    let mut template = revision
        .pointer("/data/spec/template")
        .cloned()
        .unwrap_or_else(|| json!({}));
    if let Some(t) = template.as_object_mut() {
        t.remove("$patch");
    }
    template
}

pub(crate) fn revision_number(revision: &Value) -> i64 {
    int_at(revision, "/revision").unwrap_or(0)
}

/// Revisions `owner` controls, oldest first (`history.SortControllerRevisions`).
pub(crate) fn owned_revisions(world: &World<'_>, owner: &Value) -> Vec<Arc<Value>> {
    let mut revisions: Vec<_> = world
        .list("apps", "controllerrevisions", Some(namespace(owner)))
        .into_iter()
        .filter(|r| is_controlled_by(r, owner))
        .collect();
    revisions.sort_by(|a, b| {
        revision_number(a)
            .cmp(&revision_number(b))
            .then_with(|| name(a).cmp(name(b)))
    });
    revisions
}

/// Find or create the revision of `owner`'s current template. Returns it with the
/// collision count to record in status.
pub(crate) fn sync_update_revision(
    world: &mut World<'_>,
    owner: &Value,
    revisions: &[Arc<Value>],
    style: HashStyle,
) -> Result<(Arc<Value>, i64), WriteError> {
    let data = revision_data(owner);
    let mut collision_count = int_at(owner, "/status/collisionCount").unwrap_or(0);
    let next = revisions.last().map_or(0, |r| revision_number(r)) + 1;
    if let Some(equal) = revisions
        .iter()
        .rev()
        .find(|r| r.get("data") == Some(&data))
    {
        if revisions
            .last()
            .is_some_and(|last| name(last) == name(equal))
        {
            return Ok((equal.clone(), collision_count));
        }
        // A rollback to an earlier template: that revision becomes the newest.
        let mut bumped = (**equal).clone();
        bumped["revision"] = json!(next);
        let updated = world.update(&revision_key(namespace(owner), name(equal)), bumped)?;
        return Ok((updated, collision_count));
    }
    loop {
        let hash = style.hash(owner, &data, collision_count);
        let rev_name = format!("{}-{hash}", name(owner));
        let mut labels = owner
            .pointer("/spec/template/metadata/labels")
            .cloned()
            .unwrap_or_else(|| json!({}));
        labels[REVISION_HASH_LABEL] = json!(hash);
        let mut metadata = json!({"name": rev_name, "namespace": namespace(owner), "labels": labels,
                                  "ownerReferences": [controller_ref(owner)]});
        if let Some(annotations) = owner
            .pointer("/metadata/annotations")
            .filter(|a| a.as_object().is_some_and(|m| !m.is_empty()))
        {
            metadata["annotations"] = annotations.clone();
        }
        let revision = json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata,
                              "data": data, "revision": next});
        let key = revision_key(namespace(owner), &rev_name);
        match world.create(&key, revision) {
            Ok(created) => return Ok((created, collision_count)),
            Err(WriteError::Store(StoreError::AlreadyExists(_))) => {
                if let Some(existing) = world.get(&key).filter(|e| e.get("data") == Some(&data)) {
                    return Ok((existing, collision_count));
                }
                collision_count += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Delete revisions beyond `limit` that no pod, current or update revision still uses.
pub(crate) fn truncate_history(
    world: &mut World<'_>,
    revisions: &[Arc<Value>],
    live: &[&str],
    limit: i64,
) {
    let history: Vec<_> = revisions
        .iter()
        .filter(|r| !live.contains(&name(r)))
        .collect();
    let excess = history
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(0));
    for old in history.into_iter().take(excess) {
        let _ = world.delete(
            &revision_key(namespace(old), name(old)),
            DeleteOptions::default(),
        );
    }
}

/// The hash label of a revision.
pub(crate) fn revision_hash(revision: &Value) -> &str {
    str_at(revision, &format!("/metadata/labels/{REVISION_HASH_LABEL}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revision_data_replaces_the_whole_template() {
        let sts = json!({"spec": {"template": {"metadata": {"labels": {"app": "db"}},
            "spec": {"containers": [{"name": "db", "image": "postgres:16"}]}}}});
        let data = revision_data(&sts);
        assert_eq!(data["spec"]["template"]["$patch"], "replace");
        assert_eq!(
            revision_template(&json!({"data": data})),
            sts["spec"]["template"]
        );
        let a = HashStyle::StatefulSet.hash(&sts, &data, 0);
        assert_ne!(a, HashStyle::StatefulSet.hash(&sts, &data, 1));
        assert_ne!(a, HashStyle::DaemonSet.hash(&sts, &data, 0));
        assert!(a.len() >= 8 && a.chars().all(|c| c.is_ascii_alphanumeric()));
    }
}

//! Secondary indexes of the store, so a controller finds an owner's pods or the pods a
//! selector names without scanning its namespace: names by owner uid and by label, per
//! collection (group, plural, namespace), kept in name order like the collection itself.

use super::ObjectKey;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// What an entry is found by within a collection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum By {
    Owner(String),
    Label(String, String),
}

/// (group, plural, namespace, by) → names of the objects.
type Entry = (String, String, String, By);

#[derive(Debug, Default)]
pub(super) struct Index {
    names: HashMap<Entry, BTreeSet<String>>,
}

fn entries(key: &ObjectKey, object: &Value) -> Vec<Entry> {
    let entry = |by| {
        (
            key.group.clone(),
            key.plural.clone(),
            key.namespace.clone(),
            by,
        )
    };
    let meta = &object["metadata"];
    let owners = meta["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str())
        .map(|uid| entry(By::Owner(uid.to_owned())));
    let labels = meta["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some(entry(By::Label(k.clone(), v.as_str()?.to_owned()))));
    owners.chain(labels).collect()
}

impl Index {
    /// Index `object` stored at `key`, in place of `old`.
    pub(super) fn replace(&mut self, key: &ObjectKey, old: Option<&Value>, object: Option<&Value>) {
        let old = old.map(|o| entries(key, o)).unwrap_or_default();
        let new = object.map(|o| entries(key, o)).unwrap_or_default();
        for e in old.iter().filter(|e| !new.contains(e)) {
            if let Some(set) = self.names.get_mut(e) {
                set.remove(&key.name);
                if set.is_empty() {
                    self.names.remove(e);
                }
            }
        }
        for e in new.into_iter().filter(|e| !old.contains(e)) {
            self.names.entry(e).or_default().insert(key.name.clone());
        }
    }

    fn find(&self, group: &str, plural: &str, namespace: &str, by: By) -> Vec<String> {
        let entry = (
            group.to_owned(),
            plural.to_owned(),
            namespace.to_owned(),
            by,
        );
        self.names
            .get(&entry)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Names of the objects in one namespace with an owner reference to `uid`.
    pub(super) fn owned(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        uid: &str,
    ) -> Vec<String> {
        self.find(group, plural, namespace, By::Owner(uid.to_owned()))
    }

    /// Names of the objects in one namespace labelled `label=value`.
    pub(super) fn labeled(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        label: &str,
        value: &str,
    ) -> Vec<String> {
        self.find(
            group,
            plural,
            namespace,
            By::Label(label.to_owned(), value.to_owned()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(owner: &str, app: &str) -> Value {
        json!({"metadata": {"labels": {"app": app},
                            "ownerReferences": [{"uid": owner, "controller": true}]}})
    }

    #[test]
    fn finds_by_owner_and_label_and_forgets_what_changed() {
        let mut index = Index::default();
        let b = ObjectKey::new("", "pods", "ns", "b");
        let a = ObjectKey::new("", "pods", "ns", "a");
        index.replace(&b, None, Some(&pod("u1", "web")));
        index.replace(&a, None, Some(&pod("u1", "web")));
        assert_eq!(index.owned("", "pods", "ns", "u1"), ["a", "b"]);
        assert_eq!(index.labeled("", "pods", "ns", "app", "web"), ["a", "b"]);
        assert!(index.owned("", "pods", "other", "u1").is_empty());
        index.replace(&a, Some(&pod("u1", "web")), Some(&pod("u2", "api")));
        assert_eq!(index.owned("", "pods", "ns", "u1"), ["b"]);
        assert_eq!(index.labeled("", "pods", "ns", "app", "api"), ["a"]);
        index.replace(&b, Some(&pod("u1", "web")), None);
        assert!(index.owned("", "pods", "ns", "u1").is_empty());
        assert!(index.labeled("", "pods", "ns", "app", "web").is_empty());
    }
}

//! Secondary indexes of the store, so a controller finds an owner's pods, the pods a
//! selector names or the Services that may select a pod without scanning its namespace:
//! names by owner uid, by label and by selector pair, per collection (group, plural,
//! namespace), kept in name order like the collection itself; and the dependents of an
//! owner uid across every collection, for the garbage collector.

use super::ObjectKey;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// What an entry is found by within a collection.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum By {
    Owner(String),
    Label(String, String),
    /// The first pair of a flat `spec.selector` map (a Service's): every object that
    /// selector matches carries this label, so a pod's labels find all candidates.
    Selects(String, String),
}

/// (group, plural, namespace, by) → names of the objects.
type Entry = (String, String, String, By);

#[derive(Debug, Default)]
pub(super) struct Index {
    names: HashMap<Entry, BTreeSet<String>>,
    /// Owner uid → keys of the objects with an owner reference to it, in any collection.
    dependents: HashMap<String, BTreeSet<ObjectKey>>,
}

fn owner_uids(object: &Value) -> impl Iterator<Item = &str> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str())
}

/// The first pair of `spec.selector` when it is a non-empty map of strings.
fn selector_pair(object: &Value) -> Option<(&str, &str)> {
    let sel = object["spec"]["selector"].as_object()?;
    if !sel.values().all(Value::is_string) {
        return None;
    }
    let (k, v) = sel.iter().next()?;
    Some((k, v.as_str()?))
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
    let owners = owner_uids(object).map(|uid| entry(By::Owner(uid.to_owned())));
    let labels = object["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some(entry(By::Label(k.clone(), v.as_str()?.to_owned()))));
    let selects =
        selector_pair(object).map(|(k, v)| entry(By::Selects(k.to_owned(), v.to_owned())));
    owners.chain(labels).chain(selects).collect()
}

impl Index {
    /// Index `object` stored at `key`, in place of `old`.
    pub(super) fn replace(&mut self, key: &ObjectKey, old: Option<&Value>, object: Option<&Value>) {
        let gone = old.map(|o| entries(key, o)).unwrap_or_default();
        let new = object.map(|o| entries(key, o)).unwrap_or_default();
        for e in gone.iter().filter(|e| !new.contains(e)) {
            if let Some(set) = self.names.get_mut(e) {
                set.remove(&key.name);
                if set.is_empty() {
                    self.names.remove(e);
                }
            }
        }
        for e in new.into_iter().filter(|e| !gone.contains(e)) {
            self.names.entry(e).or_default().insert(key.name.clone());
        }
        let old_uids: BTreeSet<&str> = old.into_iter().flat_map(owner_uids).collect();
        let new_uids: BTreeSet<&str> = object.into_iter().flat_map(owner_uids).collect();
        for uid in old_uids.difference(&new_uids) {
            if let Some(set) = self.dependents.get_mut(*uid) {
                set.remove(key);
                if set.is_empty() {
                    self.dependents.remove(*uid);
                }
            }
        }
        for uid in new_uids.difference(&old_uids) {
            self.dependents
                .entry((*uid).to_owned())
                .or_default()
                .insert(key.clone());
        }
    }

    /// Keys of the objects, in any collection, with an owner reference to `uid`.
    pub(super) fn dependents(&self, uid: &str) -> Vec<ObjectKey> {
        self.dependents
            .get(uid)
            .map(|s| s.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Names of the objects in one namespace whose flat selector may match an object
    /// with these labels (each found once); callers still match the whole selector.
    pub(super) fn selecting<'a>(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Vec<String> {
        let mut names = BTreeSet::new();
        for (k, v) in labels {
            let by = By::Selects(k.to_owned(), v.to_owned());
            names.extend(self.find(group, plural, namespace, by));
        }
        names.into_iter().collect()
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

    #[test]
    fn finds_dependents_across_collections_and_services_by_selector_pair() {
        let mut index = Index::default();
        let rs = ObjectKey::new("apps", "replicasets", "ns", "web-1");
        let web_pod = ObjectKey::new("", "pods", "ns", "web-1-a");
        index.replace(&rs, None, Some(&pod("dep", "web")));
        index.replace(&web_pod, None, Some(&pod("dep", "web")));
        assert_eq!(index.dependents("dep"), [web_pod.clone(), rs.clone()]);
        index.replace(&rs, Some(&pod("dep", "web")), None);
        assert_eq!(index.dependents("dep"), [web_pod]);

        let svc = |sel: Value| json!({"spec": {"selector": sel}});
        let web = ObjectKey::new("", "services", "ns", "web");
        let both = ObjectKey::new("", "services", "ns", "both");
        let rc = ObjectKey::new("apps", "deployments", "ns", "d");
        index.replace(&web, None, Some(&svc(json!({"app": "web"}))));
        index.replace(&both, None, Some(&svc(json!({"tier": "fe", "app": "web"}))));
        // A labelSelector (matchLabels) is not a flat selector: not indexed.
        index.replace(
            &rc,
            None,
            Some(&svc(json!({"matchLabels": {"app": "web"}}))),
        );
        let labels = [("app", "web"), ("tier", "fe")];
        assert_eq!(
            index.selecting("", "services", "ns", labels),
            ["both", "web"]
        );
        assert_eq!(
            index.selecting("", "services", "ns", [("app", "web")]),
            ["web"]
        );
        assert!(
            index
                .selecting("apps", "deployments", "ns", labels)
                .is_empty()
        );
        index.replace(
            &web,
            Some(&svc(json!({"app": "web"}))),
            Some(&svc(json!({}))),
        );
        assert_eq!(index.selecting("", "services", "ns", labels), ["both"]);
    }
}

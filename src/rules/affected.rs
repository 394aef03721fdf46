//! Which undecided resources a batch of changes can affect, found from the changes through
//! indexes instead of by asking every resource: at 1,000 resources the judging loop would
//! otherwise spend most of its time asking resources that nothing changed for.
//!
//! It answers what [`Touched::affects`] answers for each resource (that stays the rule of
//! record, and the tests hold the two equal), in time proportional to the changes.

use crate::pointer::Pointer;
use crate::rules::kinds::{self, Reads};
use crate::rules::object_key::{KeyMap, StrMap};
use crate::rules::snapshot::ObjectKey;
use crate::rules::target::Target;
use crate::rules::template_labels::selector_pairs;
use crate::rules::touched::Touched;
use crate::shrink::shrink_as_emptied;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap, HashSet};

#[derive(Debug, Clone)]
struct Entry {
    key: ObjectKey,
    namespace: String,
    reads: Reads,
    /// A Service's selector as last seen, when it has a string pair to index it by;
    /// `None` while the Service is unseen or its selector has none.
    indexed_by: Option<(String, String)>,
    selector: Option<Value>,
    seen: bool,
}

/// The undecided resources, by what can affect them. Ids are the caller's.
#[derive(Debug, Clone, Default)]
pub struct Affected {
    /// Every touched key of every batch is looked up in these maps: SipHash, their hasher
    /// before, was about 1% of a 2,500-Deployment run's samples.
    entries: StrMap<usize, Entry>,
    /// Keys hash by the hash they carry.
    by_key: KeyMap<BTreeSet<usize>>,
    /// (namespace, name) -> Services.
    services: StrMap<(String, String), BTreeSet<usize>>,
    /// (namespace, label, value) -> Services whose selector's first pair it is.
    by_first_pair: StrMap<(String, String, String), BTreeSet<usize>>,
    /// namespace -> Services not seen yet: any touched workload of the namespace may be
    /// theirs, so they are asked once per batch that touches one (not once per workload:
    /// 2,500 Deployments listed before their 2,500 Services made 6 million look-ups).
    unseen: StrMap<String, BTreeSet<usize>>,
    /// namespace -> Services seen with no string pair in their selector: each touched
    /// workload of the namespace is checked against them.
    unpaired: StrMap<String, BTreeSet<usize>>,
    /// Rules that read cluster-scoped objects.
    cluster: BTreeSet<usize>,
    /// namespace -> rules that read their namespace.
    namespaces: StrMap<String, BTreeSet<usize>>,
}

fn reads(target: &Target) -> Reads {
    kinds::of(target.group(), target.kind()).reads
}

/// The first pair of a selector with a string value, as [`Touched`] looks it up.
fn first_pair(selector: Option<&Value>) -> Option<(String, String)> {
    selector_pairs(selector)
        .next()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
}

impl Affected {
    pub fn new() -> Self {
        Affected::default()
    }

    /// Registers resource `id`; `live` is its object as last seen, if it has been.
    pub fn add(&mut self, id: usize, target: &Target, live: Option<&Value>) {
        let key = target.key();
        let namespace = target.id.namespace.clone().unwrap_or_default();
        let reads = reads(target);
        self.by_key.entry(key.clone()).or_default().insert(id);
        match reads {
            Reads::OwnTree => {}
            Reads::Service => {
                self.services
                    .entry((namespace.clone(), target.id.name.clone()))
                    .or_default()
                    .insert(id);
            }
            Reads::Cluster => {
                self.cluster.insert(id);
            }
            Reads::Namespace => {
                self.cluster.insert(id);
                self.namespaces
                    .entry(namespace.clone())
                    .or_default()
                    .insert(id);
            }
        }
        let service = reads == Reads::Service;
        self.entries.insert(
            id,
            Entry {
                key,
                namespace,
                reads,
                indexed_by: None,
                selector: None,
                seen: false,
            },
        );
        if service {
            self.index_service(id, live);
        }
    }

    /// Forgets resource `id` (it has its verdict).
    pub fn remove(&mut self, id: usize) {
        let Some(entry) = self.entries.remove(&id) else {
            return;
        };
        let ns = entry.namespace.clone();
        drop_from(&mut self.by_key, &entry.key, id);
        if entry.reads == Reads::Service {
            drop_from(
                &mut self.services,
                &(ns.clone(), entry.key.name().to_owned()),
                id,
            );
            self.unindex_service(id, &entry);
        }
        self.cluster.remove(&id);
        drop_from(&mut self.namespaces, &ns, id);
        shrink_as_emptied(&mut self.entries);
        shrink_as_emptied(&mut self.by_key);
        shrink_as_emptied(&mut self.services);
        shrink_as_emptied(&mut self.by_first_pair);
    }

    fn unindex_service(&mut self, id: usize, entry: &Entry) {
        let ns = &entry.namespace;
        match &entry.indexed_by {
            Some((k, v)) => drop_from(
                &mut self.by_first_pair,
                &(ns.clone(), k.clone(), v.clone()),
                id,
            ),
            None if entry.seen => drop_from(&mut self.unpaired, ns, id),
            None => drop_from(&mut self.unseen, ns, id),
        }
    }

    /// Indexes Service `id` by its selector as `live` has it (a Service's selector may
    /// change with any update of it).
    fn index_service(&mut self, id: usize, live: Option<&Value>) {
        let Some(entry) = self.entries.get(&id).cloned() else {
            return;
        };
        self.unindex_service(id, &entry);
        let selector = live.and_then(|svc| svc.at("/spec/selector"));
        let indexed_by = live.and_then(|_| first_pair(selector));
        let ns = entry.namespace.clone();
        match &indexed_by {
            Some((k, v)) => {
                self.by_first_pair
                    .entry((ns, k.clone(), v.clone()))
                    .or_default()
                    .insert(id);
            }
            None if live.is_some() => {
                self.unpaired.entry(ns).or_default().insert(id);
            }
            None => {
                self.unseen.entry(ns).or_default().insert(id);
            }
        }
        if let Some(e) = self.entries.get_mut(&id) {
            e.indexed_by = indexed_by;
            e.selector = selector.cloned();
            e.seen = live.is_some();
        }
    }

    /// The registered resources whose rule may read anything in `touched`, in id order.
    /// `live` gives an object as last seen: a touched Service is re-indexed from it first.
    pub fn of(
        &mut self,
        touched: &Touched,
        live: impl Fn(&ObjectKey) -> Option<Value>,
    ) -> BTreeSet<usize> {
        let mut out = BTreeSet::new();
        // Changed Services are re-indexed even when everything is asked: one left indexed
        // as unseen would be asked again on every workload change in its namespace. One
        // reached only from its EndpointSlices (their owner) or an Event has the selector
        // it had: reading it again on each of those was about 1.5% of the samples in a
        // profile of a deploy of 2,500 Services.
        for key in &touched.keys {
            let Some(ids) = self.by_key.get(key) else {
                continue;
            };
            out.extend(ids.iter().copied());
            if !touched.services.contains(key) {
                continue;
            }
            let services: Vec<usize> = ids
                .iter()
                .copied()
                .filter(|id| self.entries[id].reads == Reads::Service)
                .collect();
            for id in services {
                self.index_service(id, live(key).as_ref());
            }
        }
        if touched.everything {
            return self.entries.keys().copied().collect();
        }
        if touched.cluster {
            out.extend(self.cluster.iter().copied());
        }
        for ns in &touched.namespaces {
            out.extend(self.namespaces.get(ns).into_iter().flatten().copied());
        }
        for slice in &touched.slices {
            out.extend(self.services.get(slice).into_iter().flatten().copied());
        }
        let mut unseen_asked = HashSet::new();
        for (ns, labels) in &touched.templates {
            if let Some(unseen) = self.unseen.get(ns)
                && unseen_asked.insert(ns)
            {
                out.extend(unseen.iter().copied());
            }
            let indexed = labels.pairs().filter_map(|(k, v)| {
                self.by_first_pair
                    .get(&(ns.clone(), k.to_owned(), v.to_owned()))
            });
            for &id in indexed.chain(self.unpaired.get(ns)).flatten() {
                if labels.selected_by(self.entries[&id].selector.as_ref()) {
                    out.insert(id);
                }
            }
        }
        out
    }
}

fn drop_from<K: std::hash::Hash + Eq, S: std::hash::BuildHasher>(
    index: &mut HashMap<K, BTreeSet<usize>, S>,
    at: &K,
    id: usize,
) {
    if let Some(set) = index.get_mut(at) {
        set.remove(&id);
        if set.is_empty() {
            index.remove(at);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn the_tables_give_back_their_room_as_resources_are_decided() {
        let mut affected = Affected::new();
        let selector = json!({"app": "web"});
        for i in 0..2_000 {
            let name = format!("web-{i}");
            let svc = service("shop", &name, &selector);
            affected.add(
                i,
                &Target::new("v1", "Service", Some("shop"), &name),
                Some(&svc),
            );
        }
        let full = affected.entries.capacity();
        assert!(full >= 2_000);
        for i in 0..1_990 {
            affected.remove(i);
            assert!(affected.entries.capacity() >= affected.entries.len());
        }
        assert_eq!(affected.entries.len(), 10);
        for table in [
            affected.entries.capacity(),
            affected.by_key.capacity(),
            affected.services.capacity(),
        ] {
            assert!(
                table < 64,
                "{table} slots kept for 10 resources ({full} at most)"
            );
        }
        // What is left still answers: a change to a workload the last Services select.
        let mut touched = Touched::default();
        touched.changed(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "uid": "d-1"},
            "spec": {"template": {"metadata": {"labels": {"app": "web"}}}}}));
        assert_eq!(affected.of(&touched, |_| None).len(), 10);
    }

    fn service(ns: &str, name: &str, selector: &Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": name, "namespace": ns}, "spec": {"selector": selector}})
    }

    /// The resources a run may wait for, each with the object it was last seen as.
    fn targets() -> Vec<(Target, Option<Value>)> {
        let t =
            |av: &str, kind: &str, ns: Option<&str>, name: &str| Target::new(av, kind, ns, name);
        let mut all = vec![
            (t("apps/v1", "Deployment", Some("shop"), "web"), None),
            (t("apps/v1", "Deployment", Some("shop"), "api"), None),
            (t("apps/v1", "DaemonSet", Some("shop"), "agent"), None),
            (t("v1", "PersistentVolumeClaim", Some("shop"), "data"), None),
            (t("v1", "PersistentVolumeClaim", Some("blog"), "data"), None),
            (t("v1", "ConfigMap", Some("shop"), "settings"), None),
            (t("example.com/v1", "Widget", Some("blog"), "w"), None),
            (t("v1", "Service", Some("shop"), "unseen"), None),
        ];
        for (name, selector) in [
            ("web", json!({"app": "web"})),
            ("api", json!({"app": "api"})),
            ("both", json!({"tier": "x", "app": "web"})),
            ("none", json!({})),
            ("odd", json!({"app": 7})),
        ] {
            let live = service("shop", name, &selector);
            all.push((t("v1", "Service", Some("shop"), name), Some(live)));
        }
        all.push((
            t("v1", "Service", Some("blog"), "web"),
            Some(service("blog", "web", &json!({"app": "web"}))),
        ));
        all
    }

    /// Changes a watch batch may bring.
    fn changes() -> Vec<Value> {
        let deployment = |ns: &str, name: &str, labels: Value| {
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"template": {"metadata": {"labels": labels}}}})
        };
        vec![
            deployment("shop", "web", json!({"app": "web", "tier": "x"})),
            deployment("shop", "api", json!({"app": "api"})),
            deployment("blog", "web", json!({"app": "web"})),
            deployment("shop", "other", json!({"tier": "x"})),
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "web-1", "namespace": "shop"}}),
            json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"}}),
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "web-x1", "namespace": "shop",
                    "labels": {"kubernetes.io/service-name": "web"}}}),
            json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"name": "web-x2", "namespace": "blog",
                    "labels": {"kubernetes.io/service-name": "web"}}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": "shop"}}),
            json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "token", "namespace": "blog"}}),
            service("shop", "web", &json!({"app": "web"})),
        ]
    }

    /// What asking every resource gives: the rule of record.
    fn asked_one_by_one(targets: &[(Target, Option<Value>)], touched: &Touched) -> BTreeSet<usize> {
        (0..targets.len())
            .filter(|&i| touched.affects(&targets[i].0, targets[i].1.as_ref()))
            .collect()
    }

    proptest! {
        #[test]
        fn the_index_finds_what_asking_every_resource_finds(
            picked in proptest::collection::vec(0..11usize, 0..6),
            decided in proptest::collection::btree_set(0..14usize, 0..5),
            everything in proptest::bool::weighted(0.05),
        ) {
            let all = targets();
            let catalogue = changes();
            let mut touched = Touched::default();
            for &c in &picked {
                touched.changed(&catalogue[c]);
            }
            if everything {
                touched.everything();
            }
            let mut affected = Affected::new();
            for (i, (target, live)) in all.iter().enumerate() {
                affected.add(i, target, live.as_ref());
            }
            for &i in &decided {
                affected.remove(i);
            }
            let lives: HashMap<ObjectKey, Value> = all
                .iter()
                .filter_map(|(t, live)| Some((t.key(), live.clone()?)))
                .collect();
            let found = affected.of(&touched, |k| lives.get(k).cloned());
            let mut wanted = asked_one_by_one(&all, &touched);
            wanted.retain(|i| !decided.contains(i));
            prop_assert_eq!(found, wanted);
        }
    }

    /// Service shop/web registered as resource 0 before it is seen, and how it is seen:
    /// selecting app=web.
    fn web_service_unseen() -> (Target, Affected, HashMap<ObjectKey, Value>) {
        let target = Target::new("v1", "Service", Some("shop"), "web");
        let mut affected = Affected::new();
        affected.add(0, &target, None);
        let lives = HashMap::from([(target.key(), service("shop", "web", &json!({"app": "web"})))]);
        (target, affected, lives)
    }

    /// A change of Deployment shop/api, whose pod template is labelled app=api.
    fn api_template_changed() -> Touched {
        let mut api = Touched::default();
        api.changed(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "namespace": "shop"},
            "spec": {"template": {"metadata": {"labels": {"app": "api"}}}}}));
        api
    }

    #[test]
    fn a_service_arriving_when_everything_is_asked_is_indexed_all_the_same() {
        // At 1,000 Services, ones left indexed as unseen were asked again on every
        // workload change of their namespace (38 assessments per Service, growing).
        let (target, mut affected, lives) = web_service_unseen();
        let mut arrived = Touched::default();
        arrived.root(&target.key());
        arrived.everything();
        assert_eq!(
            affected.of(&arrived, |k| lives.get(k).cloned()),
            BTreeSet::from([0])
        );
        let api = api_template_changed();
        assert!(affected.of(&api, |k| lives.get(k).cloned()).is_empty());
    }

    #[test]
    fn a_service_only_reached_from_a_change_keeps_its_index_unread() {
        let (target, mut affected, lives) = web_service_unseen();
        let mut arrived = Touched::default();
        arrived.root(&target.key());
        affected.of(&arrived, |k| lives.get(k).cloned());
        // One of its EndpointSlices changed: the snapshot touches it as their owner.
        let reads = std::cell::Cell::new(0);
        let mut slice = Touched::default();
        slice.key(&target.key());
        let asked = affected.of(&slice, |k| {
            reads.set(reads.get() + 1);
            lives.get(k).cloned()
        });
        assert_eq!((asked, reads.get()), (BTreeSet::from([0]), 0));
        // Still indexed by its selector: api's template is not one it selects.
        let api = api_template_changed();
        assert!(affected.of(&api, |_| None).is_empty());
    }

    #[test]
    fn a_service_is_indexed_by_its_selector_as_last_seen() {
        let target = Target::new("v1", "Service", Some("shop"), "web");
        let mut affected = Affected::new();
        affected.add(0, &target, None);
        let api_template = || {
            let mut t = Touched::default();
            t.changed(&json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "api", "namespace": "shop"},
                "spec": {"template": {"metadata": {"labels": {"app": "api"}}}}}));
            t
        };
        let lives = HashMap::from([(target.key(), service("shop", "web", &json!({"app": "web"})))]);
        assert_eq!(
            affected.of(&api_template(), |_| None),
            BTreeSet::from([0]),
            "unseen: any workload of its namespace may be the one it selects"
        );
        // The Service arrives: its key is touched, and it is indexed by what it selects.
        let mut arrived = Touched::default();
        arrived.root(&target.key());
        assert_eq!(
            affected.of(&arrived, |k| lives.get(k).cloned()),
            BTreeSet::from([0])
        );
        assert!(
            affected
                .of(&api_template(), |k| lives.get(k).cloned())
                .is_empty()
        );

        // Its selector is changed to pick api in the same batch that touches api.
        let lives = HashMap::from([(target.key(), service("shop", "web", &json!({"app": "api"})))]);
        let mut both = api_template();
        both.root(&target.key());
        assert_eq!(
            affected.of(&both, |k| lives.get(k).cloned()),
            BTreeSet::from([0])
        );
        assert_eq!(
            affected.of(&api_template(), |k| lives.get(k).cloned()),
            BTreeSet::from([0])
        );

        affected.remove(0);
        assert!(
            affected
                .of(&api_template(), |k| lives.get(k).cloned())
                .is_empty()
        );
        let mut all = Touched::default();
        all.everything();
        assert!(
            affected.of(&all, |_| None).is_empty(),
            "nothing is left to re-assess"
        );
    }
}

//! What changed since the judging loop last looked, so that it re-assesses only the
//! resources a change can affect instead of every undecided one after every watch batch.
//!
//! A change touches the object itself, the object an Event is about, and every owner up the
//! chain (Pod -> ReplicaSet -> Deployment). Rules that read only their own tree are
//! re-assessed when a key of it was touched; a Service when its EndpointSlices or a
//! workload its selector picks changed; other rules (a custom resource's generic reading, a
//! PVC's) whenever their namespace or anything cluster-scoped changed. Which group a kind
//! is in is its row's `reads` (`rules::kinds`); a kind without a row is in the broadest,
//! so a new rule is never starved of a re-assessment, only made slower.

use crate::pointer::Pointer;
use crate::rules::kinds::{self, Reads};
use crate::rules::object_key::KeySet;
use crate::rules::snapshot::{Links, ObjectKey};
use crate::rules::target::Target;
use crate::rules::template_labels::{TemplateLabels, selector_pairs};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Touched {
    pub(crate) keys: KeySet,
    pub(crate) namespaces: BTreeSet<String>,
    /// (namespace, Service) named by the EndpointSlices touched.
    pub(crate) slices: BTreeSet<(String, String)>,
    /// (namespace, pod template labels) of the workloads touched, before and after.
    pub(crate) templates: Vec<(String, TemplateLabels)>,
    /// (namespace, label, value) -> the `templates` that carry that label, so a Service
    /// looks only at the templates its selector could pick.
    labelled: HashMap<(String, String, String), Vec<usize>>,
    /// The Services that themselves changed (arrived, were updated or removed), not only
    /// reached from a change of their EndpointSlices or an Event: only these are indexed
    /// again by their selectors.
    pub(crate) services: KeySet,
    /// The namespaces of `templates`.
    pub(crate) template_namespaces: BTreeSet<String>,
    /// A cluster-scoped object (a Node, a PersistentVolume, a CRD) changed.
    pub(crate) cluster: bool,
    /// Something every rule may read changed (the registry views).
    pub(crate) everything: bool,
}

impl Touched {
    /// Records that `key` changed or was reached from a change.
    pub(crate) fn key(&mut self, key: &ObjectKey) -> bool {
        if !self.keys.insert(key.clone()) {
            return false;
        }
        match key.namespace() {
            Some(ns) => {
                if !self.namespaces.contains(ns) {
                    self.namespaces.insert(ns.to_owned());
                }
            }
            None => self.cluster = true,
        }
        true
    }

    /// Records that the object `key` itself changed (arrived, was updated or removed);
    /// as [`Touched::key`], whether it was not touched before.
    pub(crate) fn root(&mut self, key: &ObjectKey) -> bool {
        if (key.group(), key.kind()) == ("", "Service") {
            self.services.insert(key.clone());
        }
        self.key(key)
    }

    /// Records what a Service's rule may read of a touched object (`links`, as the
    /// snapshot read them): the Service an EndpointSlice is for, or a workload's pod
    /// template labels.
    pub(crate) fn contents(&mut self, key: &ObjectKey, links: &Links) {
        let Some(ns) = key.namespace() else { return };
        if let Some(service) = &links.slice_for {
            self.slices.insert((ns.to_owned(), service.to_string()));
        }
        if let Some(labels) = links.template() {
            let index = self.templates.len();
            for at in links.template_labels(key) {
                self.labelled.entry(at).or_default().push(index);
            }
            if !self.template_namespaces.contains(ns) {
                self.template_namespaces.insert(ns.to_owned());
            }
            self.templates.push((ns.to_owned(), labels.clone()));
        }
    }

    pub(crate) fn everything(&mut self) {
        self.everything = true;
    }

    /// The keys touched: changed objects and what they lead to, in key order.
    pub fn keys(&self) -> impl Iterator<Item = &ObjectKey> {
        let mut keys: Vec<&ObjectKey> = self.keys.iter().collect();
        keys.sort_unstable();
        keys.into_iter()
    }

    pub fn is_empty(&self) -> bool {
        *self == Touched::default()
    }

    /// Whether `target`'s rule may read anything that changed; `live` is the target's
    /// object as last seen.
    pub fn affects(&self, target: &Target, live: Option<&Value>) -> bool {
        self.affects_key(target, &target.key(), || live)
    }

    /// [`Touched::affects`] for a caller that keeps the target's `key` and looks up its
    /// live object only when asked (only a Service's rule needs it here).
    pub fn affects_key<'a>(
        &self,
        target: &Target,
        key: &ObjectKey,
        live: impl FnOnce() -> Option<&'a Value>,
    ) -> bool {
        if self.everything || self.keys.contains(key) {
            return true;
        }
        let ns = target.id.namespace.as_deref().unwrap_or_default();
        match kinds::of(key.group(), key.kind()).reads {
            Reads::Service => {
                self.slices
                    .contains(&(ns.to_owned(), target.id.name.clone()))
                    || (self.template_namespaces.contains(ns) && self.selected_template(ns, live()))
            }
            Reads::OwnTree => false,
            Reads::Cluster => self.cluster,
            Reads::Namespace => self.cluster || self.namespaces.contains(ns),
        }
    }
}

impl Touched {
    /// Whether a touched workload template in `ns` is one Service `live` selects (any,
    /// when the Service is not seen).
    fn selected_template(&self, ns: &str, live: Option<&Value>) -> bool {
        let Some(svc) = live else {
            return self.template_namespaces.contains(ns);
        };
        let selector = svc.at("/spec/selector");
        let in_ns =
            |(n, labels): &(String, TemplateLabels)| n == ns && labels.selected_by(selector);
        match selector_pairs(selector).next() {
            // A template it selects carries its first pair.
            Some((k, v)) => self
                .labelled
                .get(&(ns.to_owned(), k.to_owned(), v.to_owned()))
                .into_iter()
                .flatten()
                .any(|&i| in_ns(&self.templates[i])),
            None => self.templates.iter().any(in_ns),
        }
    }
}

#[cfg(test)]
impl Touched {
    /// Records `obj` as changed, as the snapshot does when it arrives (for tests).
    pub(crate) fn changed(&mut self, obj: &Value) {
        let key = ObjectKey::of(obj).unwrap();
        self.root(&key);
        self.contents(&key, &Links::of(&key, obj));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn touch(touched: &mut Touched, obj: &Value) {
        touched.changed(obj);
    }

    fn deployment(name: &str, app: &str) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": "shop"},
            "spec": {"template": {"metadata": {"labels": {"app": app, "tier": "x"}}}}})
    }

    #[test]
    fn own_tree_rules_wait_for_their_keys_others_for_their_namespace() {
        let mut touched = Touched::default();
        assert!(touched.is_empty());
        touched.key(&ObjectKey::new("v1", "Pod", Some("shop"), "web-1"));
        touch(&mut touched, &deployment("web", "web"));
        let web = Target::new("apps/v1", "Deployment", Some("shop"), "web");
        let api = Target::new("apps/v1", "Deployment", Some("shop"), "api");
        let ds = Target::new("apps/v1", "DaemonSet", Some("shop"), "agent");
        let cm = Target::new("v1", "ConfigMap", Some("shop"), "settings");
        let pvc = Target::new("v1", "PersistentVolumeClaim", Some("shop"), "data");
        assert!(touched.affects(&web, None));
        assert!(!touched.affects(&api, None));
        assert!(touched.affects(&pvc, None), "a PVC may read its namespace");
        assert!(
            !touched.affects(&ds, None),
            "a DaemonSet reads its tree and Nodes"
        );
        assert!(!touched.affects(&cm, None));

        touched.key(&ObjectKey::new("v1", "Node", None, "node-1"));
        assert!(touched.affects(&ds, None));
        let blog_pvc = Target::new("v1", "PersistentVolumeClaim", Some("blog"), "data");
        assert!(
            touched.affects(&blog_pvc, None),
            "a PVC may read PersistentVolumes"
        );
        assert!(!touched.affects(&api, None));

        touched.everything();
        assert!(touched.affects(&api, None));
    }

    #[test]
    fn a_service_waits_for_its_endpointslices_and_the_workloads_it_selects() {
        let service = |name: &str, selector: Value| {
            json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": name, "namespace": "shop"}, "spec": {"selector": selector}})
        };
        let web = Target::new("v1", "Service", Some("shop"), "web");
        let web_live = service("web", json!({"app": "web"}));
        let blog = Target::new("v1", "Service", Some("blog"), "web");

        let mut pods_only = Touched::default();
        pods_only.key(&ObjectKey::new("v1", "Pod", Some("shop"), "web-1"));
        assert!(
            !pods_only.affects(&web, Some(&web_live)),
            "it reads no pods"
        );

        let mut other = Touched::default();
        touch(&mut other, &deployment("api", "api"));
        assert!(
            !other.affects(&web, Some(&web_live)),
            "api's labels do not match"
        );
        assert!(other.affects(&web, None), "unseen: any workload may matter");
        let no_selector = service("web", json!({}));
        assert!(!other.affects(&web, Some(&no_selector)));

        let mut selected = Touched::default();
        touch(&mut selected, &deployment("web", "web"));
        assert!(selected.affects(&web, Some(&web_live)));
        assert!(
            !selected.affects(&blog, Some(&web_live)),
            "another namespace"
        );

        let mut slice = Touched::default();
        touch(
            &mut slice,
            &json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": "web-x1", "namespace": "shop",
                "labels": {"kubernetes.io/service-name": "web"}}}),
        );
        assert!(slice.affects(&web, Some(&web_live)));
        let api = Target::new("v1", "Service", Some("shop"), "api");
        assert!(!slice.affects(&api, Some(&service("api", json!({"app": "api"})))));
    }
}

//! Who is in the set: labelling what is applied, the kinds and namespaces it spans, which
//! live objects are pruned, and the protections no flag lifts (kinds) or one flag lifts
//! (namespaces).

use super::applyset::{GroupKind, Members, PART_OF_LABEL, Parent};
use crate::manifest::{Manifest, Problem, escape_pointer};
use crate::pointer::Pointer;
use crate::vocab::outcome::ResourceId;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Namespaces where pruning must be asked for by name (`--prune-allow-namespace`).
pub const GUARDED_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// Kinds never pruned, whatever their labels: deleting one takes everything in or on it.
pub fn is_protected(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "Namespace" | "Node" | "Event")
            | ("events.k8s.io", "Event")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
    )
}

/// Add `applyset.kubernetes.io/part-of=<id>` to every manifest, as kubectl does. A manifest
/// that already names another set is refused (kubectl refuses any value there).
pub fn label(manifests: &mut [Manifest], id: &str) -> Result<(), Vec<Problem>> {
    let pointer = format!("/metadata/labels/{}", escape_pointer(PART_OF_LABEL));
    let problems: Vec<Problem> = manifests
        .iter()
        .filter_map(|m| {
            let found = m.object.at(&pointer)?;
            (found.as_str() != Some(id)).then(|| {
                Problem::new(
                    &m.file,
                    Some(m.line_of(&pointer).unwrap_or(m.line)),
                    format!(
                        "{} sets the label {PART_OF_LABEL}={}, but --prune makes it a member of {id}",
                        m.display_name(),
                        found.as_str().unwrap_or("(not a string)")
                    ),
                )
                .with_hint("remove the label: deploy-action sets it on every manifest of the set")
            })
        })
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    // Helm hooks are never members (Helm does not track them either): a hook deleted
    // after it succeeded is not "no longer declared", and one left behind is never pruned.
    for m in manifests.iter_mut().filter(|m| !crate::waves::is_hook(m)) {
        let Some(meta) = m.object.get_mut("metadata").and_then(Value::as_object_mut) else {
            continue;
        };
        let labels = meta.entry("labels").or_insert_with(|| json!({}));
        if !labels.is_object() {
            *labels = json!({});
        }
        labels[PART_OF_LABEL] = json!(id);
    }
    Ok(())
}

/// The manifest that declares the parent itself, if one does (it cannot be its own member).
pub fn declares_parent<'a>(manifests: &'a [Manifest], parent: &Parent) -> Option<&'a Manifest> {
    manifests.iter().find(|m| {
        m.group().is_empty()
            && m.kind == parent.kind.kind()
            && m.name == parent.name
            && m.namespace.as_deref() == Some(parent.namespace.as_str())
    })
}

/// The kinds and namespaces the manifests put in the set; `parent_namespace` always counts.
/// Namespaces must be resolved first (cluster-scoped manifests have none).
pub fn of_manifests(manifests: &[Manifest], parent_namespace: &str) -> Members {
    let mut set = Members::default();
    set.namespaces.insert(parent_namespace.to_owned());
    for m in manifests {
        set.kinds.insert(GroupKind::new(m.group(), &m.kind));
        if let Some(ns) = &m.namespace {
            set.namespaces.insert(ns.clone());
        }
    }
    set
}

/// The set's namespaces that pruning may not touch without `--prune-allow-namespace`.
pub fn guarded<'a>(set: &'a Members, allowed: &BTreeSet<String>) -> Vec<&'a str> {
    set.namespaces
        .iter()
        .map(String::as_str)
        .filter(|ns| GUARDED_NAMESPACES.contains(ns) && !allowed.contains(*ns))
        .collect()
}

/// A live object that carries the set's label.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub id: ResourceId,
    pub uid: String,
    /// Its labels' part-of value, as listed (the selector asked for the set's; checked again).
    pub part_of: Option<String>,
    pub annotations: std::collections::BTreeMap<String, String>,
    /// Set when the object is already being deleted.
    pub deleting: bool,
}

impl Listed {
    /// From a listed object (its list's apiVersion and kind given, since list items may
    /// lack them).
    pub fn from_object(api_version: &str, kind: &str, obj: &Value) -> Option<Listed> {
        let meta = obj.get("metadata")?;
        let s = |p: &str| meta.at(p).and_then(Value::as_str).map(str::to_owned);
        let annotations = meta
            .get("annotations")
            .and_then(Value::as_object)
            .map(|a| {
                a.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                    .collect()
            })
            .unwrap_or_default();
        Some(Listed {
            id: ResourceId {
                api_version: api_version.to_owned(),
                kind: kind.to_owned(),
                namespace: s("/namespace"),
                name: s("/name")?,
            },
            uid: s("/uid").unwrap_or_default(),
            part_of: s(&format!("/labels/{}", escape_pointer(PART_OF_LABEL))),
            annotations,
            deleting: meta.get("deletionTimestamp").is_some_and(|t| !t.is_null()),
        })
    }

    fn group(&self) -> &str {
        self.id.api_version.split_once('/').map_or("", |(g, _)| g)
    }
}

/// What pruning decided about the listed objects.
#[derive(Debug, Default, PartialEq)]
pub struct Selection {
    /// To delete: in the set, no longer in the manifests.
    pub prune: Vec<Listed>,
    /// In the set, no longer in the manifests, but of a kind never pruned.
    pub kept: Vec<Listed>,
}

/// Of the objects listed with the set's selector, those to prune: of this set (label
/// checked again), of the set's kinds and namespaces, not declared by the manifests
/// (matched by group, kind, namespace and name: the version may differ), not protected.
pub fn select(listed: Vec<Listed>, id: &str, set: &Members, manifests: &[Manifest]) -> Selection {
    let declared: BTreeSet<(&str, &str, Option<&str>, &str)> = manifests
        .iter()
        .map(|m| {
            (
                m.group(),
                m.kind.as_str(),
                m.namespace.as_deref(),
                m.name.as_str(),
            )
        })
        .collect();
    let mut selection = Selection::default();
    let mut seen = BTreeSet::new();
    for obj in listed {
        let key = (
            obj.group().to_owned(),
            obj.id.kind.clone(),
            obj.id.namespace.clone(),
            obj.id.name.clone(),
        );
        let in_set = obj.part_of.as_deref() == Some(id)
            && set
                .kinds
                .contains(&GroupKind::new(obj.group(), &obj.id.kind))
            && obj
                .id
                .namespace
                .as_ref()
                .is_none_or(|ns| set.namespaces.contains(ns));
        let is_declared = declared.contains(&(
            key.0.as_str(),
            key.1.as_str(),
            key.2.as_deref(),
            key.3.as_str(),
        ));
        if !in_set || is_declared || !seen.insert(key) {
            continue;
        }
        if is_protected(obj.group(), &obj.id.kind) {
            selection.kept.push(obj);
        } else {
            selection.prune.push(obj);
        }
    }
    selection.prune.sort_by(|a, b| a.id.cmp(&b.id));
    selection.kept.sort_by(|a, b| a.id.cmp(&b.id));
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::load_str;

    const ID: &str = "applyset-h3x0xDZARSD6R2U53BlbhZVPT3aDtVmj0EdiujPZkL8-v1";

    fn manifests(yaml: &str) -> Vec<Manifest> {
        let mut m = load_str("k8s/app.yaml", yaml).unwrap();
        crate::manifest::resolve_namespaces(&mut m, "shop", |_, kind| {
            Some(if kind == "ClusterRole" || kind == "Namespace" {
                crate::manifest::Scope::Cluster
            } else {
                crate::manifest::Scope::Namespaced
            })
        });
        m
    }

    const APP: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: registry.local/web:1}]}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: zeta}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules: []
";

    #[test]
    fn every_manifest_is_labelled_and_only_its_metadata_changes() {
        let mut m = manifests(APP);
        label(&mut m, ID).unwrap();
        for doc in &m {
            assert_eq!(doc.object["metadata"]["labels"][PART_OF_LABEL], ID);
        }
        assert_eq!(m[0].object["metadata"]["labels"]["app"], "web");
        // The pod template is not a member: its pods must not carry the label.
        assert!(
            m[0].object
                .at("/spec/template/metadata/labels")
                .unwrap()
                .get(PART_OF_LABEL)
                .is_none()
        );
    }

    #[test]
    fn helm_hooks_are_never_members() {
        let mut m = manifests(
            "apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
  annotations: {helm.sh/hook: pre-upgrade}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web}
",
        );
        label(&mut m, ID).unwrap();
        let labelled = |i: usize| {
            m[i].object
                .at("/metadata/labels")
                .and_then(|l| l.get(PART_OF_LABEL))
                .is_some()
        };
        assert!(!labelled(0) && labelled(1));
    }

    #[test]
    fn a_manifest_that_names_another_set_is_refused_at_its_line() {
        let mut m = manifests(
            "apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels:
    applyset.kubernetes.io/part-of: applyset-other-v1
",
        );
        let problems = label(&mut m, ID).unwrap_err();
        assert_eq!(problems.len(), 1);
        assert_eq!(
            (problems[0].file.as_str(), problems[0].line),
            ("k8s/app.yaml", Some(6))
        );
        assert!(
            problems[0].message.contains("applyset-other-v1"),
            "{}",
            problems[0].message
        );
        // Its own id is fine: a rendered manifest may carry it already.
        let mut same = manifests(&format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  labels: {{{PART_OF_LABEL}: {ID}}}\n"
        ));
        assert!(label(&mut same, ID).is_ok());
    }

    #[test]
    fn the_set_spans_the_manifests_kinds_and_namespaces() {
        let set = of_manifests(&manifests(APP), "shop");
        assert_eq!(
            set.kinds_annotation(),
            "ClusterRole.rbac.authorization.k8s.io,ConfigMap,Deployment.apps"
        );
        assert_eq!(
            set.namespaces,
            ["shop".to_owned(), "zeta".to_owned()].into()
        );
    }

    #[test]
    fn guarded_namespaces_need_naming() {
        let set = of_manifests(&manifests(APP), "default");
        assert_eq!(guarded(&set, &BTreeSet::new()), ["default"]);
        assert!(guarded(&set, &["default".to_owned()].into()).is_empty());
        let mut system = set.clone();
        system.namespaces.insert("kube-system".into());
        assert_eq!(
            guarded(&system, &["default".to_owned()].into()),
            ["kube-system"]
        );
        assert!(guarded(&of_manifests(&manifests(APP), "shop"), &BTreeSet::new()).is_empty());
    }

    fn live(api_version: &str, kind: &str, ns: Option<&str>, name: &str, part_of: &str) -> Listed {
        let mut obj = json!({"metadata": {"name": name, "uid": format!("uid-{name}"),
            "labels": {PART_OF_LABEL: part_of}}});
        if let Some(ns) = ns {
            obj["metadata"]["namespace"] = json!(ns);
        }
        Listed::from_object(api_version, kind, &obj).unwrap()
    }

    #[test]
    fn only_members_no_longer_declared_are_pruned() {
        let m = manifests(APP);
        let mut set = of_manifests(&m, "shop");
        set.kinds.insert(GroupKind::new("", "Namespace"));
        set.kinds.insert(GroupKind::new("", "Secret"));
        let listed = vec![
            // Declared: kept, whatever version it was listed in.
            live("apps/v1", "Deployment", Some("shop"), "web", ID),
            live("v1", "ConfigMap", Some("zeta"), "settings", ID),
            // Removed from the manifests: pruned.
            live("apps/v1", "Deployment", Some("shop"), "old", ID),
            live(
                "rbac.authorization.k8s.io/v1",
                "ClusterRole",
                None,
                "writer",
                ID,
            ),
            // Another set's, or outside this set's namespaces, or of a kind it never had.
            live(
                "v1",
                "ConfigMap",
                Some("shop"),
                "theirs",
                "applyset-other-v1",
            ),
            live("v1", "ConfigMap", Some("elsewhere"), "stray", ID),
            live("v1", "Service", Some("shop"), "svc", ID),
            // Protected kinds are never deleted.
            live("v1", "Namespace", None, "zeta", ID),
        ];
        let s = select(listed, ID, &set, &m);
        let names: Vec<String> = s.prune.iter().map(|o| o.id.display(true)).collect();
        assert_eq!(names, ["Deployment/shop/old", "ClusterRole/writer"]);
        let kept: Vec<String> = s.kept.iter().map(|o| o.id.display(true)).collect();
        assert_eq!(kept, ["Namespace/zeta"]);
    }

    #[test]
    fn the_parent_cannot_be_declared_by_the_manifests() {
        let m = manifests(
            "apiVersion: v1\nkind: Secret\nmetadata: {name: web}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: web, namespace: other}\n",
        );
        let parent = |ns: &str| Parent {
            kind: super::super::ParentKind::Secret,
            name: "web".into(),
            namespace: ns.into(),
        };
        assert_eq!(
            declares_parent(&m, &parent("shop")).map(|m| m.line),
            Some(1)
        );
        assert_eq!(
            declares_parent(&m, &parent("other")).map(|m| m.line),
            Some(5)
        );
        assert!(declares_parent(&m, &parent("zeta")).is_none());
    }

    #[test]
    fn protected_kinds() {
        for (g, k) in [
            ("", "Namespace"),
            ("", "Node"),
            ("", "Event"),
            ("events.k8s.io", "Event"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ] {
            assert!(is_protected(g, k), "{k}");
        }
        assert!(!is_protected("apps", "Deployment"));
        assert!(!is_protected("example.com", "Namespace"));
    }
}

//! The ApplySet convention (KEP-3659) as `kubectl apply --prune --applyset` writes it: the
//! parent's id, its labels and annotations, and the checks a tool makes before it may
//! change a set it finds in the cluster.

use crate::pointer::Pointer;
use base64::Engine;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;

/// On the parent: the set's id.
pub const ID_LABEL: &str = "applyset.kubernetes.io/id";
/// On each member: the id of the set it belongs to.
pub const PART_OF_LABEL: &str = "applyset.kubernetes.io/part-of";
/// On the parent: `<tool>/<version>` of the tool that manages the set.
pub const TOOLING_ANNOTATION: &str = "applyset.kubernetes.io/tooling";
/// On the parent: the members' kinds, `Kind.group` (`Kind` for the core group), sorted.
pub const KINDS_ANNOTATION: &str = "applyset.kubernetes.io/contains-group-kinds";
/// On the parent: the members' namespaces other than the parent's, sorted.
pub const NAMESPACES_ANNOTATION: &str = "applyset.kubernetes.io/additional-namespaces";
/// The parent annotation kubectl 1.27 wrote before `contains-group-kinds`; read, never written.
const OLD_RESOURCES_ANNOTATION: &str = "applyset.kubernetes.io/contains-group-resources";

/// The tool name in the tooling annotation; the version follows it.
pub const TOOL: &str = "deploy-action";
/// The field manager that writes the parent (kubectl's is `kubectl-applyset`).
pub const PARENT_FIELD_MANAGER: &str = "deploy-action-applyset";

/// `deploy-action/v0.1.0`, as the tooling annotation carries it.
pub fn tooling() -> String {
    format!("{TOOL}/v{}", env!("CARGO_PKG_VERSION"))
}

/// The kinds an ApplySet parent may be without a CRD: kubectl's built-in parent types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParentKind {
    Secret,
    ConfigMap,
}

impl ParentKind {
    pub fn kind(self) -> &'static str {
        match self {
            ParentKind::Secret => "Secret",
            ParentKind::ConfigMap => "ConfigMap",
        }
    }

    /// The resource, as kubectl's `--applyset=secrets/NAME` names it.
    pub fn plural(self) -> &'static str {
        match self {
            ParentKind::Secret => "secrets",
            ParentKind::ConfigMap => "configmaps",
        }
    }
}

/// The object that records the set. Always namespaced (Secret or ConfigMap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parent {
    pub kind: ParentKind,
    pub name: String,
    pub namespace: String,
}

/// A `--applyset` value that names no usable parent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentNameError {
    #[error(
        "invalid --applyset {0:?}: use NAME (a Secret), secrets/NAME or configmaps/NAME, as kubectl does"
    )]
    Kind(String),
    #[error(
        "invalid --applyset {0:?}: the name must be a DNS subdomain (lowercase letters, digits, '-' and '.', at most 253 characters)"
    )]
    Name(String),
}

/// The parent kind and name in `--applyset`, in kubectl's `[RESOURCE]/NAME` format.
pub fn parse_parent(value: &str) -> Result<(ParentKind, String), ParentNameError> {
    let (kind, name) = match value.split_once('/') {
        None => (ParentKind::Secret, value),
        Some(("secrets" | "secret", name)) => (ParentKind::Secret, name),
        Some(("configmaps" | "configmap", name)) => (ParentKind::ConfigMap, name),
        Some(_) => return Err(ParentNameError::Kind(value.to_owned())),
    };
    if !is_dns_subdomain(name) {
        return Err(ParentNameError::Name(value.to_owned()));
    }
    Ok((kind, name.to_owned()))
}

fn is_dns_subdomain(name: &str) -> bool {
    let alnum = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.starts_with(alnum)
                && label.ends_with(alnum)
                && label.chars().all(|c| alnum(c) || c == '-')
        })
}

impl Parent {
    /// `applyset-<base64url(sha256(name.namespace.Kind.group))>-v1`, kubectl's `ApplySet.ID`.
    pub fn id(&self) -> String {
        let unencoded = format!("{}.{}.{}.", self.name, self.namespace, self.kind.kind());
        let hashed = Sha256::digest(unencoded.as_bytes());
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(hashed);
        format!("applyset-{b64}-v1")
    }

    /// `Secret shop/web`, for messages.
    pub fn display(&self) -> String {
        format!("{} {}/{}", self.kind.kind(), self.namespace, self.name)
    }

    /// The server-side apply body that records `set` on the parent: only the ApplySet
    /// labels and annotations, as kubectl sends them (`additional-namespaces` always, empty
    /// when every member is in the parent's namespace).
    pub fn patch(&self, set: &Members) -> Value {
        let namespaces: Vec<&str> = set
            .namespaces
            .iter()
            .map(String::as_str)
            .filter(|ns| *ns != self.namespace)
            .collect();
        json!({
            "apiVersion": "v1",
            "kind": self.kind.kind(),
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {ID_LABEL: self.id()},
                "annotations": {
                    TOOLING_ANNOTATION: tooling(),
                    KINDS_ANNOTATION: set.kinds_annotation(),
                    NAMESPACES_ANNOTATION: namespaces.join(","),
                },
            },
        })
    }
}

/// A kind without its version, as `contains-group-kinds` lists it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupKind {
    /// `""` for the core group.
    pub group: String,
    pub kind: String,
}

impl GroupKind {
    pub fn new(group: &str, kind: &str) -> Self {
        GroupKind {
            group: group.to_owned(),
            kind: kind.to_owned(),
        }
    }

    /// kubectl's `schema.ParseGroupKind`: `Deployment.apps`, `ConfigMap`.
    pub fn parse(s: &str) -> Self {
        match s.split_once('.') {
            Some((kind, group)) => GroupKind::new(group, kind),
            None => GroupKind::new("", s),
        }
    }
}

impl std::fmt::Display for GroupKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

/// What a set spans: its members' kinds and namespaces.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Members {
    pub kinds: BTreeSet<GroupKind>,
    /// Namespaces of namespaced members, the parent's included.
    pub namespaces: BTreeSet<String>,
}

impl Members {
    /// Both sets: what the parent records before an apply, so that an interrupted run
    /// leaves no member outside the set (the KEP's "superset" update).
    pub fn union(&self, other: &Members) -> Members {
        Members {
            kinds: self.kinds.union(&other.kinds).cloned().collect(),
            namespaces: self.namespaces.union(&other.namespaces).cloned().collect(),
        }
    }

    /// `ConfigMap,Deployment.apps`: sorted as strings, as kubectl sorts them.
    pub fn kinds_annotation(&self) -> String {
        let mut kinds: Vec<String> = self.kinds.iter().map(ToString::to_string).collect();
        kinds.sort();
        kinds.join(",")
    }
}

/// Why deploy-action will not change a set it found: the KEP's rules, as kubectl applies them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParentConflict {
    #[error(
        "{parent} exists and is not an ApplySet parent (it has no {ID_LABEL} label): --prune will not take over an object it did not create"
    )]
    NotAParent { parent: String },
    #[error("{parent} has {ID_LABEL}={found}, not this set's id {expected}")]
    WrongId {
        parent: String,
        found: String,
        expected: String,
    },
    #[error("{parent} has no {TOOLING_ANNOTATION} annotation: no tool may change it")]
    NoTooling { parent: String },
    #[error("{parent} is managed by tooling {tool:?} ({TOOLING_ANNOTATION}={value}), not {TOOL:?}")]
    OtherTool {
        parent: String,
        tool: String,
        value: String,
    },
}

impl ParentConflict {
    /// What the user can do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            ParentConflict::NotAParent { .. } | ParentConflict::WrongId { .. } => {
                "choose another --applyset name"
            }
            ParentConflict::NoTooling { .. } => {
                "set the annotation to the tool that manages the set, or choose another --applyset name"
            }
            ParentConflict::OtherTool { .. } => {
                "pass --applyset-adopt to make deploy-action the set's tool (that tool will then refuse it), or choose another --applyset name"
            }
        }
    }
}

/// kubectl's `toolingBaseName`: everything before the last `/`.
fn tool_name(value: &str) -> &str {
    value.rsplit_once('/').map_or(value, |(name, _)| name)
}

fn string_at<'a>(obj: &'a Value, pointer: &str) -> Option<&'a str> {
    obj.at(pointer).and_then(Value::as_str)
}

/// The set as the live parent records it, or why deploy-action may not change it. `adopt`
/// accepts a parent another tool manages (its next write names deploy-action). Kinds from
/// kubectl 1.27's `contains-group-resources` are returned as resources, to be resolved by
/// the caller.
pub fn read_parent(parent: &Parent, live: &Value, adopt: bool) -> Result<Recorded, ParentConflict> {
    let display = parent.display();
    let label = |k: &str| string_at(live, &format!("/metadata/labels/{}", escape(k)));
    let annotation = |k: &str| string_at(live, &format!("/metadata/annotations/{}", escape(k)));
    let Some(id) = label(ID_LABEL) else {
        return Err(ParentConflict::NotAParent { parent: display });
    };
    let Some(value) = annotation(TOOLING_ANNOTATION) else {
        return Err(ParentConflict::NoTooling { parent: display });
    };
    if tool_name(value) != TOOL && !adopt {
        return Err(ParentConflict::OtherTool {
            parent: display,
            tool: tool_name(value).to_owned(),
            value: value.to_owned(),
        });
    }
    if id != parent.id() {
        return Err(ParentConflict::WrongId {
            parent: display,
            found: id.to_owned(),
            expected: parent.id(),
        });
    }
    let list = |s: Option<&str>| -> Vec<String> {
        s.unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let mut members = Members {
        kinds: list(annotation(KINDS_ANNOTATION))
            .iter()
            .map(|gk| GroupKind::parse(gk))
            .collect(),
        namespaces: list(annotation(NAMESPACES_ANNOTATION))
            .into_iter()
            .collect(),
    };
    members.namespaces.insert(parent.namespace.clone());
    let resources = if annotation(KINDS_ANNOTATION).is_none() {
        list(annotation(OLD_RESOURCES_ANNOTATION))
    } else {
        Vec::new()
    };
    Ok(Recorded {
        members,
        resources,
        tooling: value.to_owned(),
    })
}

/// What a live parent says of its set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub members: Members,
    /// `resource.group` entries of the deprecated `contains-group-resources` annotation.
    pub resources: Vec<String>,
    /// The tooling annotation as found.
    pub tooling: String,
}

fn escape(key: &str) -> String {
    crate::manifest::escape_pointer(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(name: &str, ns: &str) -> Parent {
        Parent {
            kind: ParentKind::Secret,
            name: name.into(),
            namespace: ns.into(),
        }
    }

    #[test]
    fn the_id_is_the_one_kubectl_computes() {
        // Written by `KUBECTL_APPLYSET=true kubectl.1.33 apply -n shop --server-side
        // --prune --applyset=myset` against kube-sim (kubectl v1.33.1).
        assert_eq!(
            parent("myset", "shop").id(),
            "applyset-h3x0xDZARSD6R2U53BlbhZVPT3aDtVmj0EdiujPZkL8-v1"
        );
        assert_eq!(
            parent("set2", "shop").id(),
            "applyset-atVVTMn4JaxsRo7sb_hUbyergamBNtpfGi8MxomrUOM-v1"
        );
        // `--applyset=configmaps/cmset -n shop`.
        let cm = Parent {
            kind: ParentKind::ConfigMap,
            ..parent("cmset", "shop")
        };
        assert_eq!(
            cm.id(),
            "applyset-HDPuhfNx9uJPXadYUiIiJeL2jaDfKtaot-9Alw15-Y0-v1"
        );
        // Label values are at most 63 characters.
        assert!(parent("a-very-long-name", "a-long-namespace").id().len() <= 63);
    }

    #[test]
    fn applyset_values_are_parsed_as_kubectl_reads_them() {
        assert_eq!(
            parse_parent("web"),
            Ok((ParentKind::Secret, "web".to_owned()))
        );
        assert_eq!(
            parse_parent("configmaps/web"),
            Ok((ParentKind::ConfigMap, "web".to_owned()))
        );
        assert_eq!(
            parse_parent("secrets/web.prod"),
            Ok((ParentKind::Secret, "web.prod".to_owned()))
        );
        assert!(matches!(
            parse_parent("widgets.example.com/web"),
            Err(ParentNameError::Kind(_))
        ));
        for bad in ["", "Web", "web_1", "-web", "secrets/", "a..b"] {
            assert!(
                matches!(parse_parent(bad), Err(ParentNameError::Name(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn the_parent_patch_carries_what_kubectl_writes() {
        let set = Members {
            kinds: [
                GroupKind::new("apps", "Deployment"),
                GroupKind::new("", "ConfigMap"),
                GroupKind::new("rbac.authorization.k8s.io", "ClusterRole"),
            ]
            .into(),
            namespaces: ["shop".to_owned(), "zeta".to_owned(), "other".to_owned()].into(),
        };
        let patch = parent("myset", "shop").patch(&set);
        let annotations = &patch["metadata"]["annotations"];
        assert_eq!(
            annotations[KINDS_ANNOTATION],
            "ClusterRole.rbac.authorization.k8s.io,ConfigMap,Deployment.apps"
        );
        assert_eq!(annotations[NAMESPACES_ANNOTATION], "other,zeta");
        assert!(
            annotations[TOOLING_ANNOTATION]
                .as_str()
                .unwrap()
                .starts_with("deploy-action/v")
        );
        assert_eq!(
            patch["metadata"]["labels"][ID_LABEL],
            "applyset-h3x0xDZARSD6R2U53BlbhZVPT3aDtVmj0EdiujPZkL8-v1"
        );
        assert_eq!(
            (&patch["kind"], &patch["apiVersion"]),
            (&json!("Secret"), &json!("v1"))
        );
        assert!(patch.get("data").is_none(), "the parent's data is not ours");
    }

    /// The parent kubectl 1.33 wrote for `myset` (from `kubectl get secret myset -o yaml`).
    fn kubectl_parent(tooling: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {
                "name": "myset", "namespace": "shop",
                "labels": {ID_LABEL: "applyset-h3x0xDZARSD6R2U53BlbhZVPT3aDtVmj0EdiujPZkL8-v1"},
                "annotations": {
                    NAMESPACES_ANNOTATION: "",
                    KINDS_ANNOTATION: "ConfigMap,Deployment.apps",
                    TOOLING_ANNOTATION: tooling,
                },
            },
        })
    }

    #[test]
    fn a_parent_of_another_tool_is_refused_unless_adopted() {
        let p = parent("myset", "shop");
        let live = kubectl_parent("kubectl/v1.33.1");
        let refused = read_parent(&p, &live, false).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "Secret shop/myset is managed by tooling \"kubectl\" \
             (applyset.kubernetes.io/tooling=kubectl/v1.33.1), not \"deploy-action\""
        );
        assert!(refused.hint().contains("--applyset-adopt"));
        let adopted = read_parent(&p, &live, true).unwrap();
        assert_eq!(
            adopted.members.kinds,
            [
                GroupKind::new("", "ConfigMap"),
                GroupKind::new("apps", "Deployment")
            ]
            .into()
        );
        assert_eq!(adopted.members.namespaces, ["shop".to_owned()].into());
        assert_eq!(adopted.tooling, "kubectl/v1.33.1");
        // Our own parent, from an older release: the version does not matter.
        assert!(read_parent(&p, &kubectl_parent("deploy-action/v0.0.9"), false).is_ok());
    }

    #[test]
    fn objects_that_are_not_this_sets_parent_are_refused_even_when_adopting() {
        let p = parent("myset", "shop");
        let plain = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "myset", "namespace": "shop"}, "data": {"password": "aHVudGVyMg=="}});
        assert!(matches!(
            read_parent(&p, &plain, true),
            Err(ParentConflict::NotAParent { .. })
        ));
        let mut other = kubectl_parent("deploy-action/v0.1.0");
        other["metadata"]["labels"][ID_LABEL] = json!("applyset-other-v1");
        assert!(matches!(
            read_parent(&p, &other, true),
            Err(ParentConflict::WrongId { .. })
        ));
        let mut untooled = kubectl_parent("x");
        untooled["metadata"]["annotations"]
            .as_object_mut()
            .unwrap()
            .remove(TOOLING_ANNOTATION);
        assert!(matches!(
            read_parent(&p, &untooled, true),
            Err(ParentConflict::NoTooling { .. })
        ));
    }

    #[test]
    fn kubectl_1_27_parents_list_resources_instead_of_kinds() {
        let p = parent("myset", "shop");
        let mut live = kubectl_parent("kubectl/v1.27.16");
        let annotations = live["metadata"]["annotations"].as_object_mut().unwrap();
        annotations.remove(KINDS_ANNOTATION);
        annotations.insert(
            OLD_RESOURCES_ANNOTATION.into(),
            json!("configmaps,deployments.apps"),
        );
        annotations.insert(NAMESPACES_ANNOTATION.into(), json!("zeta"));
        let recorded = read_parent(&p, &live, true).unwrap();
        assert_eq!(recorded.resources, ["configmaps", "deployments.apps"]);
        assert!(recorded.members.kinds.is_empty());
        assert_eq!(
            recorded.members.namespaces,
            ["shop".to_owned(), "zeta".to_owned()].into()
        );
    }
}

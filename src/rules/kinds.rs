//! The kind registry: one row per built-in kind with everything the rest of deploy-action
//! needs to know of it (its rule, the watches its rule reads, which changes re-assess it,
//! its default timeout, its apply phase, where its pod template is, its stability window,
//! whether it can be restarted). Adding a kind is one rule file and one row here;
//! [`problems`] refuses a half-declared row, and a test walks every row with it.
//!
//! A kind without a row is judged by the generic reading of its `status` (a custom
//! resource also waits for its CRD): see [`of`].

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::{crd, generic};
use crate::rules::exists;
use crate::rules::live::Live;
use crate::rules::network_storage::{ingress, pvc, service};
use crate::rules::pods::pod;
use crate::rules::settle;
use crate::rules::snapshot::{Snapshot, is_owned};
use crate::rules::target::Target;
use crate::rules::workloads::{
    cronjob, daemonset, deployment, hpa, job, pdb, replicaset, statefulset,
};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;
use std::time::Duration;

/// A kind's rule: its object as last seen, the target, everything seen so far.
pub type Rule = fn(&Live, &Target, &Snapshot) -> Assessment;

/// The live pods whose stability the window watches, found from the workload's object.
pub type PodsOf = fn(&Value, &Snapshot) -> Vec<Pod>;

/// Which changes besides its own (and its descendants' by owner, and their Events) can
/// change what a kind's rule says: the judging loop re-assesses a resource only then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// Only its own tree: the object, its descendants by owner, their Events.
    OwnTree,
    /// Its EndpointSlices and the workloads its selector picks (a Service).
    Service,
    /// Its tree and anything cluster-scoped (a DaemonSet reads Nodes).
    Cluster,
    /// Its tree, its namespace and anything cluster-scoped (a PVC reads StorageClasses, a
    /// custom resource its CRD, the generic reading anything).
    Namespace,
}

/// A kind a rule reads besides its target, watched beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// Watched cluster-wide (cluster-scoped kinds), else in the target's namespace.
    pub cluster: bool,
}

impl Watch {
    /// The API group of the watched kind.
    pub fn kind_group(&self) -> &'static str {
        self.api_version.split_once('/').map_or("", |(g, _)| g)
    }
}

/// A kind in the target's namespace.
const fn near(api_version: &'static str, kind: &'static str) -> Watch {
    Watch {
        api_version,
        kind,
        cluster: false,
    }
}

/// A cluster-scoped kind.
const fn cluster(api_version: &'static str, kind: &'static str) -> Watch {
    Watch {
        api_version,
        kind,
        cluster: true,
    }
}

/// Whether a kind with a pod template waits out the stability window on its pods.
#[derive(Debug, Clone, Copy)]
pub enum Settle {
    /// Its pods are meant to keep running: they must run the window without a restart.
    Window(PodsOf),
    /// Its pods run to completion, or it does not judge them.
    No,
}

/// How `kubectl rollout restart` names a kind it can restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restart {
    /// The version it is patched at.
    pub api_version: &'static str,
    /// The resource name (`deployments`), which kubectl also accepts.
    pub plural: &'static str,
    /// kubectl's short name (`deploy`).
    pub short: &'static str,
}

/// One row of the registry.
#[derive(Debug, Clone, Copy)]
pub struct Kind {
    pub group: &'static str,
    pub kind: &'static str,
    pub rule: Rule,
    /// What the rule reads besides its target (Events of its namespace are always watched).
    pub watches: &'static [Watch],
    pub reads: Reads,
    /// How long it may take unless annotated (krane's per-kind `TIMEOUT`).
    pub timeout: Duration,
    /// Applied with the configuration and policy others depend on, before the workloads.
    pub early: bool,
    /// JSON pointer of its pod template (`metadata` and `spec`), and whether its pods settle.
    pub pods: Option<(&'static str, Settle)>,
    pub restart: Option<Restart>,
}

impl Kind {
    const fn new(
        group: &'static str,
        kind: &'static str,
        rule: Rule,
        reads: Reads,
        timeout_secs: u64,
    ) -> Kind {
        Kind {
            group,
            kind,
            rule,
            watches: &[],
            reads,
            timeout: Duration::from_secs(timeout_secs),
            early: false,
            pods: None,
            restart: None,
        }
    }

    /// A kind with nothing to wait for once stored (config, RBAC, policy objects).
    const fn plain(group: &'static str, kind: &'static str, timeout_secs: u64) -> Kind {
        Kind::new(
            group,
            kind,
            |_, _, _| exists::assess(),
            Reads::OwnTree,
            timeout_secs,
        )
    }

    const fn watching(mut self, watches: &'static [Watch]) -> Kind {
        self.watches = watches;
        self
    }

    const fn early(mut self) -> Kind {
        self.early = true;
        self
    }

    const fn pods(mut self, template: &'static str, settle: Settle) -> Kind {
        self.pods = Some((template, settle));
        self
    }

    const fn restartable(mut self, plural: &'static str, short: &'static str) -> Kind {
        self.restart = Some(Restart {
            api_version: "apps/v1",
            plural,
            short,
        });
        self
    }

    /// JSON pointer of its pod template, when it has one.
    pub fn template(&self) -> Option<&'static str> {
        self.pods.map(|(template, _)| template)
    }

    /// The pods its stability window watches; `None` when it has no window.
    pub fn settles(&self) -> Option<PodsOf> {
        match self.pods {
            Some((_, Settle::Window(pods_of))) => Some(pods_of),
            _ => None,
        }
    }
}

const PODS: &[Watch] = &[near("v1", "Pod")];
const WORKLOAD_TEMPLATE: &str = "/spec/template";

/// Every built-in kind with a row.
pub static KINDS: &[Kind] = &[
    Kind::new(
        "",
        "Pod",
        |obj, _, snap| pod::assess(obj.value(), snap),
        Reads::OwnTree,
        600,
    )
    .pods("", Settle::Window(settle::the_pod)),
    Kind::new(
        "apps",
        "Deployment",
        deployment::assess,
        Reads::OwnTree,
        420,
    )
    .watching(&[near("apps/v1", "ReplicaSet"), near("v1", "Pod")])
    .pods(
        WORKLOAD_TEMPLATE,
        Settle::Window(settle::newest_replica_set_pods),
    )
    .restartable("deployments", "deploy"),
    Kind::new(
        "apps",
        "ReplicaSet",
        |obj, _, snap| replicaset::assess(obj.value(), snap),
        Reads::OwnTree,
        300,
    )
    .watching(PODS)
    .pods(WORKLOAD_TEMPLATE, Settle::Window(settle::owned_pods)),
    Kind::new(
        "apps",
        "StatefulSet",
        |obj, _, snap| statefulset::assess(obj.value(), snap),
        Reads::OwnTree,
        600,
    )
    .watching(PODS)
    .pods(
        WORKLOAD_TEMPLATE,
        Settle::Window(settle::update_revision_pods),
    )
    .restartable("statefulsets", "sts"),
    Kind::new(
        "apps",
        "DaemonSet",
        |obj, _, snap| daemonset::assess(obj.value(), snap),
        Reads::Cluster,
        300,
    )
    // Pods on NotReady or cordoned nodes do not hold a DaemonSet rollout.
    .watching(&[near("v1", "Pod"), cluster("v1", "Node")])
    .pods(WORKLOAD_TEMPLATE, Settle::Window(settle::owned_pods))
    .restartable("daemonsets", "ds"),
    Kind::new(
        "batch",
        "Job",
        |obj, _, snap| job::assess(obj.value(), snap),
        Reads::OwnTree,
        600,
    )
    .watching(PODS)
    .pods(WORKLOAD_TEMPLATE, Settle::No),
    Kind::new(
        "batch",
        "CronJob",
        |obj, _, _| cronjob::assess(obj.value()),
        Reads::OwnTree,
        30,
    )
    .watching(&[near("batch/v1", "Job")])
    .pods("/spec/jobTemplate/spec/template", Settle::No),
    // Judged from the cluster: its EndpointSlices, and the workloads it selects when they
    // are scaled to zero on purpose (`service::WORKLOAD_KINDS`).
    Kind::new(
        "",
        "Service",
        |obj, _, snap| service::assess(obj.value(), snap),
        Reads::Service,
        420,
    )
    .watching(&[
        near("discovery.k8s.io/v1", "EndpointSlice"),
        near("apps/v1", "Deployment"),
        near("apps/v1", "StatefulSet"),
        near("apps/v1", "ReplicaSet"),
    ]),
    Kind::new(
        "networking.k8s.io",
        "Ingress",
        |obj, _, _| ingress::assess(obj.value()),
        Reads::OwnTree,
        30,
    ),
    Kind::new(
        "",
        "PersistentVolumeClaim",
        |obj, _, snap| pvc::assess(obj.value(), snap),
        Reads::Namespace,
        300,
    )
    .watching(&[cluster("storage.k8s.io/v1", "StorageClass")])
    .early(),
    Kind::new(
        "policy",
        "PodDisruptionBudget",
        |obj, _, _| pdb::assess(obj.value()),
        Reads::OwnTree,
        10,
    ),
    Kind::new(
        "autoscaling",
        "HorizontalPodAutoscaler",
        |obj, _, _| hpa::assess(obj.value()),
        Reads::OwnTree,
        180,
    ),
    Kind::new(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        |obj, _, _| crd::assess(obj.value()),
        Reads::OwnTree,
        120,
    ),
    Kind::new(
        "",
        "Namespace",
        |obj, _, _| exists::namespace(obj.value()),
        Reads::OwnTree,
        30,
    ),
    // The ReplicaSet's predecessor, with the same status: judged by the ReplicaSet's rule.
    Kind::new(
        "",
        "ReplicationController",
        |obj, _, snap| replicaset::assess(obj.value(), snap),
        Reads::OwnTree,
        300,
    )
    .watching(PODS)
    .pods(WORKLOAD_TEMPLATE, Settle::Window(settle::owned_pods)),
    // Done once stored, even those with a `status` (ResourceQuota's usage is bookkeeping,
    // not progress).
    Kind::plain("", "ConfigMap", 30).early(),
    Kind::plain("", "Secret", 30).early(),
    Kind::plain("", "ServiceAccount", 30).early(),
    Kind::plain("", "ResourceQuota", 30).early(),
    Kind::plain("", "LimitRange", 30).early(),
    Kind::plain("", "PodTemplate", 30).pods("/template", Settle::No),
    Kind::plain("", "Endpoints", 300),
    Kind::plain("rbac.authorization.k8s.io", "Role", 30).early(),
    Kind::plain("rbac.authorization.k8s.io", "RoleBinding", 30).early(),
    Kind::plain("rbac.authorization.k8s.io", "ClusterRole", 30).early(),
    Kind::plain("rbac.authorization.k8s.io", "ClusterRoleBinding", 30).early(),
    Kind::plain("networking.k8s.io", "NetworkPolicy", 30).early(),
    Kind::plain("networking.k8s.io", "IngressClass", 30),
    Kind::plain("scheduling.k8s.io", "PriorityClass", 30).early(),
    Kind::plain("storage.k8s.io", "StorageClass", 30).early(),
    Kind::plain(
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
        300,
    ),
    Kind::plain(
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
        300,
    ),
    Kind::plain("discovery.k8s.io", "EndpointSlice", 300),
];

/// A custom resource: what its controller reports, read through its CRD (krane's
/// `KubernetesResource` default of 5 minutes).
static CUSTOM: Kind = Kind::new("", "", reported, Reads::Namespace, 300).watching(&[cluster(
    "apiextensions.k8s.io/v1",
    "CustomResourceDefinition",
)]);

/// A kind the API server serves itself that has no row (a Lease, a CSIDriver, ...).
static OTHER_BUILTIN: Kind = Kind::new("", "", reported, Reads::Namespace, 300);

/// The rule of a kind without a row: what the object's own status reports.
fn reported(obj: &Live, target: &Target, snapshot: &Snapshot) -> Assessment {
    generic::assess(obj.value(), target, snapshot)
}

/// The row of a built-in kind, if it has one.
pub fn registered(group: &str, kind: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.kind == kind && k.group == group)
}

/// How `group`/`kind` is judged: its row, else the generic reading (custom resources
/// through their CRD).
pub fn of(group: &str, kind: &str) -> &'static Kind {
    registered(group, kind).unwrap_or(if is_builtin_group(group) {
        &OTHER_BUILTIN
    } else {
        &CUSTOM
    })
}

/// The API groups kube-apiserver serves itself (1.33), and those the aggregation layer
/// serves from an APIService (metrics): their kinds have no CRD. Other `.k8s.io` groups
/// are CRDs like any other (Gateway API, volume snapshots, network policy API).
const BUILTIN_GROUPS: [&str; 27] = [
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "extensions",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
    "metrics.k8s.io",
    "custom.metrics.k8s.io",
    "external.metrics.k8s.io",
];

/// Kinds the Kubernetes API serves itself (by API group), as opposed to CRDs.
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.contains(&group)
}

/// Where `object` keeps its pod template (`metadata` and `spec`): its kind's, else
/// `spec.template` for any kind shaped like a workload (Argo Rollouts and similar CRDs).
pub fn pod_template(group: &str, kind: &str, object: &Value) -> Option<&'static str> {
    registered(group, kind)
        .and_then(Kind::template)
        .or_else(|| {
            object
                .at(&format!("{WORKLOAD_TEMPLATE}/spec"))
                .is_some()
                .then_some(WORKLOAD_TEMPLATE)
        })
}

/// The kind `kubectl rollout restart` spells `word` (`deployment`, `deploy`, `sts`,
/// `daemonsets.apps`, any case).
pub fn restartable(word: &str) -> Option<&'static Kind> {
    let word = word.to_ascii_lowercase();
    let word = word.strip_suffix(".apps").unwrap_or(&word);
    KINDS.iter().find(|k| {
        k.restart.is_some_and(|r| {
            k.kind.eq_ignore_ascii_case(word) || r.plural == word || r.short == word
        })
    })
}

/// What is half-declared in `row`: each entry a sentence naming the row and what it lacks.
/// The tables are only as good as their agreement: a kind that watches Nodes but is not
/// re-assessed when one changes waits for its deadline instead of its verdict.
pub fn problems(row: &Kind) -> Vec<String> {
    let name = format!("{}/{}", row.group, row.kind);
    let mut found = Vec::new();
    let mut lacks = |what: String| found.push(format!("{name}: {what}"));
    let watches = |kind: &str| row.watches.iter().any(|w| w.kind == kind);
    if row.settles().is_some() && row.kind != "Pod" && !watches("Pod") {
        lacks("settles on its pods but watches no Pods".into());
    }
    if row.restart.is_some() && row.pods.is_none() {
        lacks("can be restarted but has no pod template".into());
    }
    for w in row.watches {
        let owned = is_owned(w.kind_group(), w.kind);
        let reaches = match (row.reads, w.cluster) {
            (Reads::Namespace, _) | (Reads::Cluster, true) => true,
            (Reads::OwnTree | Reads::Cluster, false) => owned,
            (Reads::Service, false) => {
                w.kind == "EndpointSlice"
                    || service::WORKLOAD_KINDS.contains(&(w.kind_group(), w.kind))
            }
            (Reads::OwnTree | Reads::Service, true) => false,
        };
        if !reaches {
            lacks(format!(
                "watches {} but a change to one does not re-assess it (reads {:?})",
                w.kind, row.reads
            ));
        }
    }
    if row.reads == Reads::Cluster && !row.watches.iter().any(|w| w.cluster) {
        lacks("is re-assessed on cluster-scoped changes but watches no cluster-scoped kind".into());
    }
    if row.reads == Reads::Service && !watches("EndpointSlice") {
        lacks("reads as a Service but watches no EndpointSlices".into());
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_row_is_whole_and_named_once() {
        let problems: Vec<String> = KINDS.iter().chain([&CUSTOM]).flat_map(problems).collect();
        assert!(problems.is_empty(), "{problems:#?}");
        let names: BTreeSet<(&str, &str)> = KINDS.iter().map(|k| (k.group, k.kind)).collect();
        assert_eq!(names.len(), KINDS.len(), "a kind has two rows");
    }

    #[test]
    fn a_half_declared_row_is_refused() {
        const WORKLOADS: &[Watch] = &[near("apps/v1", "Deployment")];
        const CONFIG: &[Watch] = &[near("v1", "ConfigMap")];
        let deployment = registered("apps", "Deployment").unwrap();
        let unwatched = deployment.watching(&[]);
        assert_eq!(
            problems(&unwatched),
            ["apps/Deployment: settles on its pods but watches no Pods"]
        );
        let mut own_tree = *registered("apps", "DaemonSet").unwrap();
        own_tree.reads = Reads::OwnTree;
        assert_eq!(
            problems(&own_tree),
            [
                "apps/DaemonSet: watches Node but a change to one does not re-assess it (reads OwnTree)"
            ]
        );
        let mut no_template = *deployment;
        no_template.pods = None;
        assert_eq!(
            problems(&no_template),
            ["apps/Deployment: can be restarted but has no pod template"]
        );
        let mut service = *registered("", "Service").unwrap();
        service.watches = WORKLOADS;
        assert_eq!(
            problems(&service),
            ["/Service: reads as a Service but watches no EndpointSlices"]
        );
        let mut stray = *registered("policy", "PodDisruptionBudget").unwrap();
        stray.watches = CONFIG;
        assert_eq!(
            problems(&stray),
            [
                "policy/PodDisruptionBudget: watches ConfigMap but a change to one does not re-assess it (reads OwnTree)"
            ]
        );
    }

    #[test]
    fn a_service_watches_every_workload_it_may_find_scaled_to_zero() {
        let row = registered("", "Service").unwrap();
        for (group, kind) in service::WORKLOAD_KINDS {
            assert!(
                row.watches
                    .iter()
                    .any(|w| w.kind == kind && w.kind_group() == group),
                "{group}/{kind}"
            );
        }
    }

    #[test]
    fn kinds_without_a_row_are_read_generically_custom_ones_through_their_crd() {
        let custom = of("cert-manager.io", "Certificate");
        assert_eq!(custom.reads, Reads::Namespace);
        assert_eq!(custom.watches, CUSTOM.watches);
        assert_eq!(custom.timeout, Duration::from_secs(300));
        let lease = of("coordination.k8s.io", "Lease");
        assert!(lease.watches.is_empty());
        // Gateway API's group ends in .k8s.io, but its kinds are CRDs, waited for as such.
        assert_eq!(
            of("gateway.networking.k8s.io", "Gateway").watches,
            CUSTOM.watches
        );
        assert!(is_builtin_group("networking.k8s.io"));
        assert!(!is_builtin_group("snapshot.storage.k8s.io"));
        // A custom kind spelled like a built-in one is not that kind.
        assert!(registered("serving.knative.dev", "Service").is_none());
        assert_eq!(of("serving.knative.dev", "Service").reads, Reads::Namespace);
    }

    #[test]
    fn kubectl_spellings_name_the_restartable_kinds_only() {
        let kind = |word: &str| restartable(word).map(|k| k.kind);
        assert_eq!(kind("deploy"), Some("Deployment"));
        assert_eq!(kind("StatefulSets.apps"), Some("StatefulSet"));
        assert_eq!(kind("ds"), Some("DaemonSet"));
        assert_eq!(kind("replicaset"), None);
        assert_eq!(kind("cronjob"), None);
    }

    #[test]
    fn pod_templates_are_found_by_kind_or_by_shape() {
        let rollout = serde_json::json!({"spec": {"template": {"spec": {"containers": []}}}});
        assert_eq!(
            pod_template("batch", "CronJob", &rollout),
            Some("/spec/jobTemplate/spec/template")
        );
        assert_eq!(pod_template("", "Pod", &rollout), Some(""));
        assert_eq!(
            pod_template("argoproj.io", "Rollout", &rollout),
            Some("/spec/template")
        );
        assert_eq!(pod_template("", "ConfigMap", &serde_json::json!({})), None);
    }
}

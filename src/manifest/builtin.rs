//! The kinds Kubernetes serves out of the box, for `check`, which has no cluster to ask:
//! every top-level type of k8s-openapi's 1.33 API (alpha and beta ones included, which a
//! cluster serves when enabled), and the API versions removed since, with what replaced
//! them. A kind not here and not defined by a CRD in the manifests is unknown, and a near
//! name is offered.

use k8s_openapi::Resource;

/// The Kubernetes version whose built-in kinds `check` knows.
pub const KUBERNETES_VERSION: &str = "1.33";

macro_rules! kinds {
    ($($ty:path,)*) => {
        /// (apiVersion, kind) of every built-in kind.
        pub const BUILTIN: &[(&str, &str)] = &[$((<$ty as Resource>::API_VERSION, <$ty as Resource>::KIND),)*];
    };
}

kinds! {
    k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
    k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy,
    k8s_openapi::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding,
    k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicy,
    k8s_openapi::api::admissionregistration::v1beta1::ValidatingAdmissionPolicyBinding,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    k8s_openapi::api::apps::v1::ControllerRevision,
    k8s_openapi::api::apps::v1::DaemonSet,
    k8s_openapi::api::apps::v1::Deployment,
    k8s_openapi::api::apps::v1::ReplicaSet,
    k8s_openapi::api::apps::v1::StatefulSet,
    k8s_openapi::api::authentication::v1::SelfSubjectReview,
    k8s_openapi::api::authentication::v1::TokenRequest,
    k8s_openapi::api::authentication::v1::TokenReview,
    k8s_openapi::api::authorization::v1::LocalSubjectAccessReview,
    k8s_openapi::api::authorization::v1::SelfSubjectAccessReview,
    k8s_openapi::api::authorization::v1::SelfSubjectRulesReview,
    k8s_openapi::api::authorization::v1::SubjectAccessReview,
    k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
    k8s_openapi::api::autoscaling::v1::Scale,
    k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
    k8s_openapi::api::batch::v1::CronJob,
    k8s_openapi::api::batch::v1::Job,
    k8s_openapi::api::certificates::v1::CertificateSigningRequest,
    k8s_openapi::api::certificates::v1alpha1::ClusterTrustBundle,
    k8s_openapi::api::certificates::v1beta1::ClusterTrustBundle,
    k8s_openapi::api::coordination::v1::Lease,
    k8s_openapi::api::coordination::v1alpha2::LeaseCandidate,
    k8s_openapi::api::coordination::v1beta1::LeaseCandidate,
    k8s_openapi::api::discovery::v1::EndpointSlice,
    k8s_openapi::api::events::v1::Event,
    k8s_openapi::api::flowcontrol::v1::FlowSchema,
    k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration,
    k8s_openapi::api::apiserverinternal::v1alpha1::StorageVersion,
    k8s_openapi::api::networking::v1::IPAddress,
    k8s_openapi::api::networking::v1::Ingress,
    k8s_openapi::api::networking::v1::IngressClass,
    k8s_openapi::api::networking::v1::NetworkPolicy,
    k8s_openapi::api::networking::v1::ServiceCIDR,
    k8s_openapi::api::networking::v1beta1::IPAddress,
    k8s_openapi::api::networking::v1beta1::ServiceCIDR,
    k8s_openapi::api::node::v1::RuntimeClass,
    k8s_openapi::api::policy::v1::Eviction,
    k8s_openapi::api::policy::v1::PodDisruptionBudget,
    k8s_openapi::api::rbac::v1::ClusterRole,
    k8s_openapi::api::rbac::v1::ClusterRoleBinding,
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::rbac::v1::RoleBinding,
    k8s_openapi::api::resource::v1alpha3::DeviceClass,
    k8s_openapi::api::resource::v1alpha3::DeviceTaintRule,
    k8s_openapi::api::resource::v1alpha3::ResourceClaim,
    k8s_openapi::api::resource::v1alpha3::ResourceClaimTemplate,
    k8s_openapi::api::resource::v1alpha3::ResourceSlice,
    k8s_openapi::api::resource::v1beta1::DeviceClass,
    k8s_openapi::api::resource::v1beta1::ResourceClaim,
    k8s_openapi::api::resource::v1beta1::ResourceClaimTemplate,
    k8s_openapi::api::resource::v1beta1::ResourceSlice,
    k8s_openapi::api::resource::v1beta2::DeviceClass,
    k8s_openapi::api::resource::v1beta2::ResourceClaim,
    k8s_openapi::api::resource::v1beta2::ResourceClaimTemplate,
    k8s_openapi::api::resource::v1beta2::ResourceSlice,
    k8s_openapi::api::scheduling::v1::PriorityClass,
    k8s_openapi::api::storage::v1::CSIDriver,
    k8s_openapi::api::storage::v1::CSINode,
    k8s_openapi::api::storage::v1::CSIStorageCapacity,
    k8s_openapi::api::storage::v1::StorageClass,
    k8s_openapi::api::storage::v1::VolumeAttachment,
    k8s_openapi::api::storage::v1alpha1::VolumeAttributesClass,
    k8s_openapi::api::storage::v1beta1::VolumeAttributesClass,
    k8s_openapi::api::storagemigration::v1alpha1::StorageVersionMigration,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroup,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::APIGroupList,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::APIResourceList,
    k8s_openapi::apimachinery::pkg::apis::meta::v1::APIVersions,
    k8s_openapi::api::core::v1::Binding,
    k8s_openapi::api::core::v1::ComponentStatus,
    k8s_openapi::api::core::v1::ConfigMap,
    k8s_openapi::api::core::v1::Endpoints,
    k8s_openapi::api::core::v1::Event,
    k8s_openapi::api::core::v1::LimitRange,
    k8s_openapi::api::core::v1::Namespace,
    k8s_openapi::api::core::v1::Node,
    k8s_openapi::api::core::v1::PersistentVolume,
    k8s_openapi::api::core::v1::PersistentVolumeClaim,
    k8s_openapi::api::core::v1::Pod,
    k8s_openapi::api::core::v1::PodTemplate,
    k8s_openapi::api::core::v1::ReplicationController,
    k8s_openapi::api::core::v1::ResourceQuota,
    k8s_openapi::api::core::v1::Secret,
    k8s_openapi::api::core::v1::Service,
    k8s_openapi::api::core::v1::ServiceAccount,
}

/// API versions removed from Kubernetes: (apiVersion, kind or `*`, removed in, use instead).
const REMOVED: &[(&str, &str, &str, &str)] = &[
    (
        "extensions/v1beta1",
        "Ingress",
        "1.22",
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "NetworkPolicy",
        "1.16",
        "networking.k8s.io/v1",
    ),
    (
        "extensions/v1beta1",
        "PodSecurityPolicy",
        "1.16",
        "nothing (removed; use Pod Security Admission)",
    ),
    ("extensions/v1beta1", "*", "1.16", "apps/v1"),
    ("apps/v1beta1", "*", "1.16", "apps/v1"),
    ("apps/v1beta2", "*", "1.16", "apps/v1"),
    (
        "networking.k8s.io/v1beta1",
        "Ingress",
        "1.22",
        "networking.k8s.io/v1",
    ),
    (
        "networking.k8s.io/v1beta1",
        "IngressClass",
        "1.22",
        "networking.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "*",
        "1.22",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "rbac.authorization.k8s.io/v1alpha1",
        "*",
        "1.22",
        "rbac.authorization.k8s.io/v1",
    ),
    (
        "apiextensions.k8s.io/v1beta1",
        "*",
        "1.22",
        "apiextensions.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
        "1.22",
        "admissionregistration.k8s.io/v1",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
        "1.22",
        "admissionregistration.k8s.io/v1",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "*",
        "1.22",
        "scheduling.k8s.io/v1",
    ),
    (
        "coordination.k8s.io/v1beta1",
        "Lease",
        "1.22",
        "coordination.k8s.io/v1",
    ),
    (
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest",
        "1.22",
        "certificates.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIDriver",
        "1.22",
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSINode",
        "1.22",
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "StorageClass",
        "1.22",
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "VolumeAttachment",
        "1.22",
        "storage.k8s.io/v1",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIStorageCapacity",
        "1.27",
        "storage.k8s.io/v1",
    ),
    ("batch/v1beta1", "CronJob", "1.25", "batch/v1"),
    ("policy/v1beta1", "PodDisruptionBudget", "1.25", "policy/v1"),
    (
        "policy/v1beta1",
        "PodSecurityPolicy",
        "1.25",
        "nothing (removed; use Pod Security Admission)",
    ),
    (
        "discovery.k8s.io/v1beta1",
        "EndpointSlice",
        "1.25",
        "discovery.k8s.io/v1",
    ),
    ("events.k8s.io/v1beta1", "Event", "1.25", "events.k8s.io/v1"),
    (
        "autoscaling/v2beta1",
        "HorizontalPodAutoscaler",
        "1.25",
        "autoscaling/v2",
    ),
    (
        "autoscaling/v2beta2",
        "HorizontalPodAutoscaler",
        "1.26",
        "autoscaling/v2",
    ),
    (
        "node.k8s.io/v1beta1",
        "RuntimeClass",
        "1.25",
        "node.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "*",
        "1.26",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "*",
        "1.29",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "*",
        "1.32",
        "flowcontrol.apiserver.k8s.io/v1",
    ),
];

/// Served APIs the API server warns about when used (its `Warning` header): (apiVersion,
/// kind, the warning as the server words it).
const DEPRECATED: &[(&str, &str, &str)] = &[(
    "v1",
    "Endpoints",
    "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice",
)];

/// The API server's deprecation warning for a served apiVersion and kind, if it gives one.
pub fn deprecated(api_version: &str, kind: &str) -> Option<&'static str> {
    DEPRECATED
        .iter()
        .find(|(av, k, _)| *av == api_version && *k == kind)
        .map(|(.., warning)| *warning)
}

/// What the built-in API says of an apiVersion and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lookup {
    /// Served.
    Builtin,
    /// Not a built-in group: a custom resource (its CRD decides).
    Custom,
    /// A built-in kind at a version removed in `removed`; `instead` is its replacement.
    Removed {
        removed: &'static str,
        instead: &'static str,
    },
    /// A built-in kind, not at this version: the versions it is served at.
    OtherVersions(Vec<&'static str>),
    /// No such built-in kind; `near` is the closest name, when one is close.
    Unknown { near: Option<&'static str> },
}

fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(g, _)| g)
}

/// Whether `group` is one of Kubernetes' own (core, `*.k8s.io`, the old unsuffixed ones).
pub fn is_builtin_group(group: &str) -> bool {
    group.is_empty()
        || group.ends_with(".k8s.io")
        || BUILTIN.iter().any(|(av, _)| group_of(av) == group)
        || REMOVED.iter().any(|(av, ..)| group_of(av) == group)
}

pub fn lookup(api_version: &str, kind: &str) -> Lookup {
    if BUILTIN.contains(&(api_version, kind)) {
        return Lookup::Builtin;
    }
    if let Some((_, _, removed, instead)) = REMOVED
        .iter()
        .find(|(av, k, ..)| *av == api_version && (*k == kind || *k == "*"))
        .filter(|_| BUILTIN.iter().any(|(_, k)| *k == kind))
    {
        return Lookup::Removed { removed, instead };
    }
    if !is_builtin_group(group_of(api_version)) {
        return Lookup::Custom;
    }
    let versions: Vec<&'static str> = BUILTIN
        .iter()
        .filter(|(_, k)| *k == kind)
        .map(|(av, _)| *av)
        .collect();
    if !versions.is_empty() {
        return Lookup::OtherVersions(versions);
    }
    Lookup::Unknown { near: near(kind) }
}

/// The built-in kind closest to `kind`.
fn near(kind: &str) -> Option<&'static str> {
    super::near::nearest(kind, BUILTIN.iter().map(|(_, k)| *k))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_kinds_removed_versions_and_near_names() {
        assert_eq!(lookup("apps/v1", "Deployment"), Lookup::Builtin);
        assert_eq!(lookup("v1", "ConfigMap"), Lookup::Builtin);
        assert_eq!(
            lookup("apps/v1", "Deploymnet"),
            Lookup::Unknown {
                near: Some("Deployment")
            }
        );
        assert_eq!(
            lookup("v1", "configmap"),
            Lookup::Unknown {
                near: Some("ConfigMap")
            }
        );
        assert_eq!(lookup("v1", "Gizmo"), Lookup::Unknown { near: None });
        assert_eq!(
            lookup("extensions/v1beta1", "Deployment"),
            Lookup::Removed {
                removed: "1.16",
                instead: "apps/v1"
            }
        );
        assert_eq!(
            lookup("batch/v1beta1", "CronJob"),
            Lookup::Removed {
                removed: "1.25",
                instead: "batch/v1"
            }
        );
        assert_eq!(
            lookup("v1", "Deployment"),
            Lookup::OtherVersions(vec!["apps/v1"])
        );
        assert_eq!(lookup("acme.io/v1", "Widget"), Lookup::Custom);
        assert_eq!(lookup("cert-manager.io/v1", "Certificate"), Lookup::Custom);
        // A custom kind that shares a built-in name is still the CRD's to decide.
        assert_eq!(lookup("acme.io/v1", "Deployment"), Lookup::Custom);
    }
}

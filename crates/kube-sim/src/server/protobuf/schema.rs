//! The protobuf messages kube-sim decodes, by field number and JSON name, as Kubernetes'
//! `generated.proto` files define them (k8s.io/api core/v1, apimachinery meta/v1), and
//! which kinds have one.

use super::{authorization, rbac, workloads};

/// How a field is encoded and what it becomes in JSON. Go's protobuf encoding writes
/// every non-pointer field, zero or not, where its JSON leaves a zero `omitempty` field
/// out; pointer fields are written only when set, and then kept even when zero.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    /// A string; left out when empty (as every `omitempty` string is).
    Str,
    /// A non-pointer `omitempty` bool: left out when false.
    Bool,
    /// A `*bool`: kept when false.
    OptBool,
    /// A non-pointer `omitempty` integer: left out when zero.
    Int,
    /// A pointer integer, or one JSON always writes (`containerPort`): kept when zero.
    OptInt,
    /// `metav1.Time`: `{seconds, nanos}`, an RFC 3339 string in JSON.
    Time,
    /// `metav1.FieldsV1`: raw JSON bytes.
    FieldsV1,
    /// `map<string, string>`.
    StrMap,
    /// `map<string, bytes>`; base64 values in JSON, as Go's `[]byte`.
    BytesMap,
    /// `map<string, resource.Quantity>`; the quantities' strings in JSON.
    QuantityMap,
    /// `intstr.IntOrString`: `{type, intVal, strVal}`, a number or a string in JSON.
    IntOrString,
    Msg(&'static [Field]),
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub number: u64,
    pub json: &'static str,
    pub ty: Ty,
    pub repeated: bool,
}

pub const fn one(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        repeated: false,
    }
}

pub const fn many(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        repeated: true,
    }
}

/// `runtime.Unknown`, the envelope after the `k8s\0` magic.
pub const UNKNOWN_TYPE_META: u64 = 1;
pub const UNKNOWN_RAW: u64 = 2;
pub const UNKNOWN_CONTENT_ENCODING: u64 = 3;

pub const TYPE_META: &[Field] = &[one(1, "apiVersion", Ty::Str), one(2, "kind", Ty::Str)];

const OWNER_REFERENCE: &[Field] = &[
    one(1, "kind", Ty::Str),
    one(3, "name", Ty::Str),
    one(4, "uid", Ty::Str),
    one(5, "apiVersion", Ty::Str),
    one(6, "controller", Ty::OptBool),
    one(7, "blockOwnerDeletion", Ty::OptBool),
];

const MANAGED_FIELDS_ENTRY: &[Field] = &[
    one(1, "manager", Ty::Str),
    one(2, "operation", Ty::Str),
    one(3, "apiVersion", Ty::Str),
    one(4, "time", Ty::Time),
    one(6, "fieldsType", Ty::Str),
    one(7, "fieldsV1", Ty::FieldsV1),
    one(8, "subresource", Ty::Str),
];

pub const OBJECT_META: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "generateName", Ty::Str),
    one(3, "namespace", Ty::Str),
    one(4, "selfLink", Ty::Str),
    one(5, "uid", Ty::Str),
    one(6, "resourceVersion", Ty::Str),
    one(7, "generation", Ty::Int),
    one(8, "creationTimestamp", Ty::Time),
    one(9, "deletionTimestamp", Ty::Time),
    one(10, "deletionGracePeriodSeconds", Ty::OptInt),
    many(11, "labels", Ty::StrMap),
    many(12, "annotations", Ty::StrMap),
    many(13, "ownerReferences", Ty::Msg(OWNER_REFERENCE)),
    many(14, "finalizers", Ty::Str),
    many(17, "managedFields", Ty::Msg(MANAGED_FIELDS_ENTRY)),
];

/// A `status` kube-sim ignores on create; what kubectl sends is all zero values.
pub const EMPTY_STATUS: &[Field] = &[];

pub const LOCAL_OBJECT_REFERENCE: &[Field] = &[one(1, "name", Ty::Str)];

const NAMESPACE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(&[many(1, "finalizers", Ty::Str)])),
    one(3, "status", Ty::Msg(&[one(1, "phase", Ty::Str)])),
];

const CONFIG_MAP: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "data", Ty::StrMap),
    many(3, "binaryData", Ty::BytesMap),
    one(4, "immutable", Ty::OptBool),
];

const SECRET: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "data", Ty::BytesMap),
    one(3, "type", Ty::Str),
    many(4, "stringData", Ty::StrMap),
    one(5, "immutable", Ty::OptBool),
];

const OBJECT_REFERENCE: &[Field] = &[
    one(1, "kind", Ty::Str),
    one(2, "namespace", Ty::Str),
    one(3, "name", Ty::Str),
    one(4, "uid", Ty::Str),
    one(5, "apiVersion", Ty::Str),
    one(6, "resourceVersion", Ty::Str),
    one(7, "fieldPath", Ty::Str),
];

const SERVICE_ACCOUNT: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "secrets", Ty::Msg(OBJECT_REFERENCE)),
    many(3, "imagePullSecrets", Ty::Msg(LOCAL_OBJECT_REFERENCE)),
    one(4, "automountServiceAccountToken", Ty::OptBool),
];

const SERVICE_PORT: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "protocol", Ty::Str),
    one(6, "appProtocol", Ty::Str),
    one(3, "port", Ty::OptInt),
    one(4, "targetPort", Ty::IntOrString),
    one(5, "nodePort", Ty::Int),
];

const SERVICE_SPEC: &[Field] = &[
    many(1, "ports", Ty::Msg(SERVICE_PORT)),
    many(2, "selector", Ty::StrMap),
    one(3, "clusterIP", Ty::Str),
    many(18, "clusterIPs", Ty::Str),
    one(4, "type", Ty::Str),
    many(5, "externalIPs", Ty::Str),
    one(7, "sessionAffinity", Ty::Str),
    one(8, "loadBalancerIP", Ty::Str),
    many(9, "loadBalancerSourceRanges", Ty::Str),
    one(10, "externalName", Ty::Str),
    one(11, "externalTrafficPolicy", Ty::Str),
    one(12, "healthCheckNodePort", Ty::Int),
    one(13, "publishNotReadyAddresses", Ty::Bool),
    many(19, "ipFamilies", Ty::Str),
    one(17, "ipFamilyPolicy", Ty::Str),
    one(20, "allocateLoadBalancerNodePorts", Ty::OptBool),
    one(21, "loadBalancerClass", Ty::Str),
    one(22, "internalTrafficPolicy", Ty::Str),
];

const SERVICE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(SERVICE_SPEC)),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];

/// The message of a kind (`apiVersion`, `kind`), if kube-sim decodes it from protobuf.
pub fn kind(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    match (api_version, kind) {
        ("v1", "Namespace") => Some(NAMESPACE),
        ("v1", "ConfigMap") => Some(CONFIG_MAP),
        ("v1", "Secret") => Some(SECRET),
        ("v1", "ServiceAccount") => Some(SERVICE_ACCOUNT),
        ("v1", "Service") => Some(SERVICE),
        ("v1", "Pod") => Some(workloads::POD),
        ("apps/v1", "Deployment") => Some(workloads::DEPLOYMENT),
        ("batch/v1", "Job") => Some(workloads::JOB),
        ("rbac.authorization.k8s.io/v1", "Role") => Some(rbac::ROLE),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => Some(rbac::CLUSTER_ROLE),
        ("rbac.authorization.k8s.io/v1", "RoleBinding" | "ClusterRoleBinding") => {
            Some(rbac::BINDING)
        }
        ("authentication.k8s.io/v1", "SelfSubjectReview") => {
            Some(authorization::SELF_SUBJECT_REVIEW)
        }
        ("authorization.k8s.io/v1", "SelfSubjectAccessReview") => {
            Some(authorization::SELF_SUBJECT_ACCESS_REVIEW)
        }
        ("authorization.k8s.io/v1", "SelfSubjectRulesReview") => {
            Some(authorization::SELF_SUBJECT_RULES_REVIEW)
        }
        _ => None,
    }
}

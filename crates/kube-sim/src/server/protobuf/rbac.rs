//! The protobuf messages of RBAC objects, as `kubectl create role|clusterrole|rolebinding|
//! clusterrolebinding` sends them (k8s.io/api rbac/v1 `generated.proto`).

use super::schema::{Field, OBJECT_META, Ty, many, one};
use super::workloads::LABEL_SELECTOR;

const POLICY_RULE: &[Field] = &[
    many(1, "verbs", Ty::Str),
    many(2, "apiGroups", Ty::Str),
    many(3, "resources", Ty::Str),
    many(4, "resourceNames", Ty::Str),
    many(5, "nonResourceURLs", Ty::Str),
];

const SUBJECT: &[Field] = &[
    one(1, "kind", Ty::Str),
    one(2, "apiGroup", Ty::Str),
    one(3, "name", Ty::Str),
    one(4, "namespace", Ty::Str),
];

const ROLE_REF: &[Field] = &[
    one(1, "apiGroup", Ty::Str),
    one(2, "kind", Ty::Str),
    one(3, "name", Ty::Str),
];

pub const ROLE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "rules", Ty::Msg(POLICY_RULE)),
];

pub const CLUSTER_ROLE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "rules", Ty::Msg(POLICY_RULE)),
    one(
        3,
        "aggregationRule",
        Ty::Msg(&[many(1, "clusterRoleSelectors", Ty::Msg(LABEL_SELECTOR))]),
    ),
];

/// RoleBinding and ClusterRoleBinding alike.
pub const BINDING: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "subjects", Ty::Msg(SUBJECT)),
    one(3, "roleRef", Ty::Msg(ROLE_REF)),
];

//! The protobuf messages `kubectl auth can-i` sends: SelfSubjectAccessReview and
//! SelfSubjectRulesReview (k8s.io/api authorization/v1 `generated.proto`).

use super::schema::{EMPTY_STATUS, Field, OBJECT_META, Ty, one};

const RESOURCE_ATTRIBUTES: &[Field] = &[
    one(1, "namespace", Ty::Str),
    one(2, "verb", Ty::Str),
    one(3, "group", Ty::Str),
    one(4, "version", Ty::Str),
    one(5, "resource", Ty::Str),
    one(6, "subresource", Ty::Str),
    one(7, "name", Ty::Str),
];

const NON_RESOURCE_ATTRIBUTES: &[Field] = &[one(1, "path", Ty::Str), one(2, "verb", Ty::Str)];

const ACCESS_REVIEW_SPEC: &[Field] = &[
    one(1, "resourceAttributes", Ty::Msg(RESOURCE_ATTRIBUTES)),
    one(2, "nonResourceAttributes", Ty::Msg(NON_RESOURCE_ATTRIBUTES)),
];

pub const SELF_SUBJECT_ACCESS_REVIEW: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(ACCESS_REVIEW_SPEC)),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];

pub const SELF_SUBJECT_RULES_REVIEW: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(&[one(1, "namespace", Ty::Str)])),
    one(3, "status", Ty::Msg(EMPTY_STATUS)),
];

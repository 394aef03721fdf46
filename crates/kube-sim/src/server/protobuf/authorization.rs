//! The protobuf messages `kubectl auth can-i` and `kubectl auth whoami` send:
//! SelfSubjectAccessReview, SelfSubjectRulesReview (k8s.io/api authorization/v1
//! `generated.proto`) and SelfSubjectReview (authentication/v1).

use super::schema::{EMPTY_STATUS, Field, OBJECT_META, Ty, many, one};

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

/// What a client sends is an empty `status.userInfo`; the server fills it in.
const USER_INFO: &[Field] = &[
    one(1, "username", Ty::Str),
    one(2, "uid", Ty::Str),
    many(3, "groups", Ty::Str),
];

pub const SELF_SUBJECT_REVIEW: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(
        2,
        "status",
        Ty::Msg(&[one(1, "userInfo", Ty::Msg(USER_INFO))]),
    ),
];

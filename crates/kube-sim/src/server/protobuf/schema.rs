//! The protobuf messages kube-sim decodes, by field number and JSON name, as Kubernetes'
//! `generated.proto` files define them (k8s.io/api core/v1, apimachinery meta/v1).

/// How a field is encoded and what it becomes in JSON.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Str,
    Bool,
    Int64,
    /// `metav1.Time`: `{seconds, nanos}`, an RFC 3339 string in JSON.
    Time,
    /// `metav1.FieldsV1`: raw JSON bytes.
    FieldsV1,
    /// `map<string, string>`.
    StrMap,
    /// `map<string, bytes>`; base64 values in JSON, as Go's `[]byte`.
    BytesMap,
    Msg(&'static [Field]),
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub number: u64,
    pub json: &'static str,
    pub ty: Ty,
    pub repeated: bool,
}

const fn one(number: u64, json: &'static str, ty: Ty) -> Field {
    Field {
        number,
        json,
        ty,
        repeated: false,
    }
}

const fn many(number: u64, json: &'static str, ty: Ty) -> Field {
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
    one(6, "controller", Ty::Bool),
    one(7, "blockOwnerDeletion", Ty::Bool),
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

const OBJECT_META: &[Field] = &[
    one(1, "name", Ty::Str),
    one(2, "generateName", Ty::Str),
    one(3, "namespace", Ty::Str),
    one(4, "selfLink", Ty::Str),
    one(5, "uid", Ty::Str),
    one(6, "resourceVersion", Ty::Str),
    one(7, "generation", Ty::Int64),
    one(8, "creationTimestamp", Ty::Time),
    one(9, "deletionTimestamp", Ty::Time),
    one(10, "deletionGracePeriodSeconds", Ty::Int64),
    many(11, "labels", Ty::StrMap),
    many(12, "annotations", Ty::StrMap),
    many(13, "ownerReferences", Ty::Msg(OWNER_REFERENCE)),
    many(14, "finalizers", Ty::Str),
    many(17, "managedFields", Ty::Msg(MANAGED_FIELDS_ENTRY)),
];

const NAMESPACE: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    one(2, "spec", Ty::Msg(&[many(1, "finalizers", Ty::Str)])),
    one(3, "status", Ty::Msg(&[one(1, "phase", Ty::Str)])),
];

const CONFIG_MAP: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "data", Ty::StrMap),
    many(3, "binaryData", Ty::BytesMap),
    one(4, "immutable", Ty::Bool),
];

const SECRET: &[Field] = &[
    one(1, "metadata", Ty::Msg(OBJECT_META)),
    many(2, "data", Ty::BytesMap),
    one(3, "type", Ty::Str),
    many(4, "stringData", Ty::StrMap),
    one(5, "immutable", Ty::Bool),
];

/// The message of a kind (`apiVersion`, `kind`), if kube-sim decodes it from protobuf.
pub fn kind(api_version: &str, kind: &str) -> Option<&'static [Field]> {
    match (api_version, kind) {
        ("v1", "Namespace") => Some(NAMESPACE),
        ("v1", "ConfigMap") => Some(CONFIG_MAP),
        ("v1", "Secret") => Some(SECRET),
        _ => None,
    }
}

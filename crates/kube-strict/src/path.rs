//! Field paths as structured-merge-diff models them: path elements, their order, how they
//! print in conflict messages and how they are spelled as `FieldsV1` keys.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

/// One step of a field path, ordered as structured-merge-diff orders them
/// (fields, then keyed items, then set values, then indexes).
#[derive(Clone, Debug)]
pub enum PathElement {
    Field(String),
    /// Key fields of an associative-list item, sorted by name.
    Key(Vec<(String, Value)>),
    /// A member of a set-type list.
    Value(Value),
    Index(usize),
}

pub type Path = Vec<PathElement>;

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            Self::Field(_) => 0,
            Self::Key(_) => 1,
            Self::Value(_) => 2,
            Self::Index(_) => 3,
        }
    }

    pub fn is_field(&self) -> bool {
        matches!(self, Self::Field(_))
    }

    /// The `FieldsV1` key: `f:name`, `k:{"name":"web"}`, `v:"x"`, `i:0`.
    pub fn to_key(&self) -> String {
        match self {
            Self::Field(name) => format!("f:{name}"),
            Self::Key(fields) => {
                let map: Map<String, Value> = fields.iter().cloned().collect();
                format!("k:{}", Value::Object(map))
            }
            Self::Value(v) => format!("v:{v}"),
            Self::Index(i) => format!("i:{i}"),
        }
    }

    /// Unknown prefixes yield `None` so newer formats are skipped, as the API server does.
    pub fn from_key(key: &str) -> Option<Self> {
        let (prefix, rest) = key.split_at_checked(2)?;
        match prefix {
            "f:" => Some(Self::Field(rest.to_owned())),
            "k:" => {
                let map: Map<String, Value> = serde_json::from_str(rest).ok()?;
                let mut fields: Vec<_> = map.into_iter().collect();
                fields.sort_by(|a, b| a.0.cmp(&b.0));
                Some(Self::Key(fields))
            }
            "v:" => serde_json::from_str(rest).ok().map(Self::Value),
            "i:" => rest.parse().ok().map(Self::Index),
            _ => None,
        }
    }
}

impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (Self::Field(a), Self::Field(b)) => a.cmp(b),
            (Self::Key(a), Self::Key(b)) => {
                for ((an, av), (bn, bv)) in a.iter().zip(b) {
                    let c = an.cmp(bn).then_with(|| compare_values(av, bv));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (Self::Value(a), Self::Value(b)) => compare_values(a, b),
            (Self::Index(a), Self::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// Prints as structured-merge-diff does: `.image`, `[name="web"]`, `[="x"]`, `[0]`.
impl fmt::Display for PathElement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Field(name) => write!(f, ".{name}"),
            Self::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(n, v)| format!("{n}={}", value_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            Self::Value(v) => write!(f, "[={}]", value_string(v)),
            Self::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// `.spec.template.spec.containers[name="web"].image`
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}

// Mirrors value.ToString: strings quoted, everything else bare.
fn value_string(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Null | Value::Bool(_) | Value::Number(_) => v.to_string(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(value_string).collect();
            format!("[{}]", parts.join(", "))
        }
        Value::Object(map) => {
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}={}", value_string(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
    }
}

// value.Compare's order: numbers < strings < bools < lists < maps < null.
fn compare_values(a: &Value, b: &Value) -> Ordering {
    fn rank(v: &Value) -> u8 {
        match v {
            Value::Number(_) => 0,
            Value::String(_) => 1,
            Value::Bool(_) => 2,
            Value::Array(_) => 3,
            Value::Object(_) => 4,
            Value::Null => 5,
        }
    }
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(x, y)| compare_values(x, y))
            .find(|c| c.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(x), Value::Object(y)) => {
            let (x, y): (BTreeMap<_, _>, BTreeMap<_, _>) = (x.iter().collect(), y.iter().collect());
            x.iter()
                .zip(&y)
                .map(|((xk, xv), (yk, yv))| xk.cmp(yk).then_with(|| compare_values(xv, yv)))
                .find(|c| c.is_ne())
                .unwrap_or_else(|| x.len().cmp(&y.len()))
        }
        _ => rank(a).cmp(&rank(b)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(path: &Path, want: &str) {
        assert_eq!(path_string(path), want);
    }

    #[test]
    fn paths_print_like_structured_merge_diff() {
        use PathElement::*;
        let f = |s: &str| Field(s.to_owned());
        case(&vec![f("spec"), f("replicas")], ".spec.replicas");
        case(
            &vec![
                f("spec"),
                f("containers"),
                Key(vec![("name".into(), json!("web"))]),
                f("image"),
            ],
            r#".spec.containers[name="web"].image"#,
        );
        case(
            &vec![
                f("spec"),
                f("ports"),
                Key(vec![
                    ("port".into(), json!(80)),
                    ("protocol".into(), json!("TCP")),
                ]),
            ],
            r#".spec.ports[port=80,protocol="TCP"]"#,
        );
        case(
            &vec![f("metadata"), f("finalizers"), Value(json!("a/b"))],
            r#".metadata.finalizers[="a/b"]"#,
        );
        case(&vec![f("items"), Index(2)], ".items[2]");
    }

    #[test]
    fn numeric_keys_order_numerically_not_textually() {
        let key = |p: i64| PathElement::Key(vec![("containerPort".into(), json!(p))]);
        assert!(key(80) < key(443) && key(443) < key(8080));
        assert!(PathElement::Field("z".into()) < key(1));
    }

    #[test]
    fn keys_round_trip_through_their_fields_v1_spelling() {
        for key in [
            r"f:kubectl.kubernetes.io/restartedAt",
            r#"k:{"containerPort":80,"protocol":"TCP"}"#,
            r#"v:"a/b""#,
            "i:3",
        ] {
            assert_eq!(PathElement::from_key(key).unwrap().to_key(), key);
        }
        assert!(PathElement::from_key("x:unknown").is_none());
    }
}

//! The plan of a dry run: what applying a manifest changes in the cluster, as a field-level
//! diff of the server's dry-run result against the live object. Pure (two objects in, a
//! [`Change`] out), so what counts as a change, and what is never shown, is tested without
//! a cluster.
//!
//! Both sides come from the API server, so defaults it fills in appear on both and cancel
//! out; what differs is what this field manager's apply changes. Metadata the server
//! bumps on every write (resourceVersion, generation, managedFields, ...) and `status` are
//! left out. Values are never kept where they may be secret: a Secret's `data` and
//! `stringData`, and anything whose name looks secret (see
//! [`name_looks_secret`](crate::manifest::secrets::name_looks_secret)).

use crate::manifest::secrets::name_looks_secret;
use crate::vocab::outcome::{Change, FieldChange};
use serde_json::Value;

/// What a value that must not be printed is shown as.
pub const HIDDEN: &str = "(secret)";
/// Longest value kept, in characters; a longer one is cut and ends in `…`.
pub const MAX_VALUE_CHARS: usize = 200;

/// Metadata the server writes itself: never what the manifest changes.
const SERVER_METADATA: &[&str] = &[
    "managedFields",
    "resourceVersion",
    "generation",
    "uid",
    "creationTimestamp",
    "selfLink",
];

/// Annotations written by other tools and controllers. kubectl's last-applied copy can
/// hold a whole Secret; the revision is the Deployment controller's.
const FOREIGN_ANNOTATIONS: &[&str] = &[
    "kubectl.kubernetes.io/last-applied-configuration",
    "deployment.kubernetes.io/revision",
];

/// What applying changes: `live` is the object as it stands (`None`: there is none),
/// `planned` the server's answer to the dry-run apply.
pub fn change(live: Option<&Value>, planned: &Value) -> Change {
    let Some(live) = live else {
        return Change::Created;
    };
    let secret = planned.get("kind").and_then(Value::as_str) == Some("Secret")
        && planned.get("apiVersion").and_then(Value::as_str) == Some("v1");
    let (before, after) = (comparable(live), comparable(planned));
    let mut fields = Vec::new();
    let mut path = Vec::new();
    walk(&mut path, Some(&before), Some(&after), secret, &mut fields);
    if fields.is_empty() {
        Change::Unchanged
    } else {
        Change::Changed { fields }
    }
}

/// `object` without what the server writes on its own.
fn comparable(object: &Value) -> Value {
    let mut object = object.clone();
    if let Some(map) = object.as_object_mut() {
        map.remove("status");
        if let Some(meta) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            for key in SERVER_METADATA {
                meta.remove(*key);
            }
            if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
                for key in FOREIGN_ANNOTATIONS {
                    annotations.remove(*key);
                }
            }
            // An empty map and none are the same to the server.
            for key in ["annotations", "labels"] {
                if meta
                    .get(key)
                    .and_then(Value::as_object)
                    .is_some_and(serde_json::Map::is_empty)
                {
                    meta.remove(key);
                }
            }
        }
    }
    object
}

/// One step of a field path.
#[derive(Debug, Clone)]
enum Step {
    Key(String),
    /// A list element matched by its `name`.
    Named(String),
    Index(usize),
}

fn walk(
    path: &mut Vec<Step>,
    before: Option<&Value>,
    after: Option<&Value>,
    secret: bool,
    out: &mut Vec<FieldChange>,
) {
    if before == after {
        return;
    }
    let hidden = hides(path, secret);
    match (before, after) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let keys = a.keys().chain(b.keys().filter(|k| !a.contains_key(*k)));
            for key in keys {
                path.push(Step::Key(key.clone()));
                walk(path, a.get(key), b.get(key), secret, out);
                path.pop();
            }
        }
        (Some(Value::Array(a)), Some(Value::Array(b))) => match (names(a), names(b)) {
            (Some(na), Some(nb)) => {
                let keys = na.iter().chain(nb.iter().filter(|n| !na.contains(n)));
                for name in keys {
                    path.push(Step::Named((*name).to_owned()));
                    walk(path, named(a, &na, name), named(b, &nb, name), secret, out);
                    path.pop();
                }
            }
            _ => {
                for i in 0..a.len().max(b.len()) {
                    path.push(Step::Index(i));
                    walk(path, a.get(i), b.get(i), secret, out);
                    path.pop();
                }
            }
        },
        // A map of names appearing or going as a whole is still listed key by key: a
        // Secret's data so that no value travels inside it, labels and annotations so
        // that each reads as the one change it is.
        (Some(Value::Object(a)), None) if by_key(path, hidden, secret) => {
            for (key, value) in a {
                path.push(Step::Key(key.clone()));
                walk(path, Some(value), None, secret, out);
                path.pop();
            }
        }
        (None, Some(Value::Object(b))) if by_key(path, hidden, secret) => {
            for (key, value) in b {
                path.push(Step::Key(key.clone()));
                walk(path, None, Some(value), secret, out);
                path.pop();
            }
        }
        _ => out.push(FieldChange {
            path: render_path(path),
            before: before.map(|v| shown(v, hidden)),
            after: after.map(|v| shown(v, hidden)),
        }),
    }
}

/// The element called `name`.
fn named<'a>(list: &'a [Value], names: &[&str], name: &str) -> Option<&'a Value> {
    names.iter().position(|n| *n == name).map(|i| &list[i])
}

/// The `name` of every element, when all have one and no two share it.
fn names(list: &[Value]) -> Option<Vec<&str>> {
    let names: Vec<&str> = list
        .iter()
        .map(|v| v.get("name").and_then(Value::as_str))
        .collect::<Option<_>>()?;
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    (sorted.len() == names.len()).then_some(names)
}

/// Maps whose keys are names chosen by users (or hidden values): compared key by key
/// even when one side has none.
fn by_key(path: &[Step], hidden: bool, secret: bool) -> bool {
    hidden
        || secret_data(path, secret)
        || matches!(path.last(), Some(Step::Key(k))
            if ["labels", "annotations", "data", "stringData", "binaryData", "matchLabels", "nodeSelector"]
                .contains(&k.as_str()))
}

/// Under a Secret's `data` or `stringData`.
fn secret_data(path: &[Step], secret: bool) -> bool {
    secret && matches!(path.first(), Some(Step::Key(k)) if k == "data" || k == "stringData")
}

/// Kubernetes field names that contain KEY, TOKEN or SECRET but name references, not
/// secret values.
const SCHEMA_FIELDS: &[&str] = &[
    "secretKeyRef",
    "secretRef",
    "secretName",
    "imagePullSecrets",
    "serviceAccountToken",
    "expirationSeconds",
    "keyRef",
    "key",
    "tokenRequests",
];

fn secret_key(key: &str) -> bool {
    name_looks_secret(key) && !SCHEMA_FIELDS.contains(&key)
}

/// Whether the value at `path` must not be shown: a Secret's data, a value under a key
/// whose name looks secret (a ConfigMap's `db-password`, an annotation's `vault/token`),
/// or the `value` of an element whose name does (`env[name=DB_PASSWORD].value`).
fn hides(path: &[Step], secret: bool) -> bool {
    secret_data(path, secret)
        || path.iter().enumerate().any(|(i, step)| match step {
            Step::Key(k) => secret_key(k),
            Step::Named(n) => {
                name_looks_secret(n)
                    && matches!(path.get(i + 1), Some(Step::Key(k)) if k == "value")
            }
            Step::Index(_) => false,
        })
}

/// A value as compact JSON, cut to [`MAX_VALUE_CHARS`]; [`HIDDEN`] when hidden. Values
/// inside it whose names look secret are hidden too.
fn shown(value: &Value, hidden: bool) -> String {
    if hidden {
        return HIDDEN.to_owned();
    }
    let text = serde_json::to_string(&masked(value)).unwrap_or_default();
    if text.chars().count() <= MAX_VALUE_CHARS {
        return text;
    }
    let mut cut: String = text.chars().take(MAX_VALUE_CHARS - 1).collect();
    cut.push('…');
    cut
}

/// `value` with every value under a secret-looking key, and the `value` of every element
/// with a secret-looking `name`, replaced by [`HIDDEN`].
fn masked(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let secret_name = map
                .get("name")
                .and_then(Value::as_str)
                .is_some_and(name_looks_secret);
            Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let hide = secret_key(k) || (secret_name && k == "value");
                        let v = if hide {
                            Value::String(HIDDEN.to_owned())
                        } else {
                            masked(v)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(items.iter().map(masked).collect()),
        other => other.clone(),
    }
}

/// `spec.template.spec.containers[name=web].image`; keys that are not plain words are
/// quoted: `metadata.annotations["deploy-action.io/timeout"]`.
fn render_path(path: &[Step]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) if is_plain(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Key(k) => {
                out.push('[');
                out.push_str(&serde_json::to_string(k).unwrap_or_default());
                out.push(']');
            }
            Step::Named(n) => out.push_str(&format!("[name={n}]")),
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn is_plain(key: &str) -> bool {
    !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[cfg(test)]
mod tests;

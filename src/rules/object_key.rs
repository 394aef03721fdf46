//! The identity of an object the snapshot keeps, made cheap to compare, hash and hold:
//! the snapshot and the judging loop look keys up tens of thousands of times at 2,000
//! pods, and comparing four strings each time was the largest single cost in a profile.

use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::{Arc, LazyLock, Mutex};

/// Identity of a stored object. The version is left out on purpose: a manifest written as
/// `autoscaling/v1` names the same object a watcher sees as `autoscaling/v2`.
///
/// Shared, not copied: the snapshot files every object under several indexes (by owner,
/// by involved object, by uid, as touched, per watch scope); a clone is a reference
/// count. Group, kind and namespace are interned (a deploy has a handful of each), and
/// the hash is computed once, when the key is made. Ordered by group, kind, namespace
/// (`None` first), name.
#[derive(Clone)]
pub struct ObjectKey(Arc<KeyParts>);

struct KeyParts {
    hash: u64,
    group: Arc<str>,
    kind: Arc<str>,
    namespace: Option<Arc<str>>,
    name: Box<str>,
}

impl KeyParts {
    fn parts(&self) -> (&str, &str, Option<&str>, &str) {
        (
            &self.group,
            &self.kind,
            self.namespace.as_deref(),
            &self.name,
        )
    }
}

/// The few distinct groups, kinds and namespaces of a run, shared by every key.
static INTERNED: LazyLock<Mutex<HashSet<Arc<str>>>> = LazyLock::new(Mutex::default);

pub(crate) fn intern(s: &str) -> Arc<str> {
    let mut all = INTERNED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(known) = all.get(s) {
        return known.clone();
    }
    let new: Arc<str> = Arc::from(s);
    all.insert(new.clone());
    new
}

impl ObjectKey {
    pub fn new(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        Self::in_group(group_of(api_version), kind, namespace, name)
    }

    /// A key from its API group (not an apiVersion: `apps`, not `apps/v1`). An empty
    /// namespace is none: Events name a cluster-scoped object with `"namespace": ""`.
    pub(crate) fn in_group(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        let namespace = namespace.filter(|ns| !ns.is_empty());
        let mut hasher = std::hash::DefaultHasher::new();
        (group, kind, namespace, name).hash(&mut hasher);
        ObjectKey(Arc::new(KeyParts {
            hash: hasher.finish(),
            group: intern(group),
            kind: intern(kind),
            namespace: namespace.map(intern),
            name: name.into(),
        }))
    }

    /// The key of a raw object, or `None` when it lacks apiVersion, kind or name.
    pub fn of(obj: &Value) -> Option<Self> {
        let api_version = obj.get("apiVersion")?.as_str()?;
        let kind = obj.get("kind")?.as_str()?;
        let meta = obj.get("metadata")?;
        let name = meta.get("name")?.as_str()?;
        let namespace = meta.get("namespace").and_then(Value::as_str);
        Some(ObjectKey::new(api_version, kind, namespace, name))
    }

    /// API group, empty for the core group.
    pub fn group(&self) -> &str {
        &self.0.group
    }

    pub fn kind(&self) -> &str {
        &self.0.kind
    }

    /// `None` for cluster-scoped objects.
    pub fn namespace(&self) -> Option<&str> {
        self.0.namespace.as_deref()
    }

    pub fn name(&self) -> &str {
        &self.0.name
    }
}

impl PartialEq for ObjectKey {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.0.hash == other.0.hash && self.0.parts() == other.0.parts())
    }
}

impl Eq for ObjectKey {}

impl PartialOrd for ObjectKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ObjectKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        use std::cmp::Ordering::Equal;
        // Interned parts are the same allocation when equal: no bytes compared for them.
        let interned = |a: &Arc<str>, b: &Arc<str>| {
            if Arc::ptr_eq(a, b) { Equal } else { a.cmp(b) }
        };
        let (a, b) = (&self.0, &other.0);
        if Arc::ptr_eq(a, b) {
            return Equal;
        }
        interned(&a.group, &b.group)
            .then_with(|| interned(&a.kind, &b.kind))
            .then_with(|| match (&a.namespace, &b.namespace) {
                (Some(x), Some(y)) => interned(x, y),
                (x, y) => x.is_some().cmp(&y.is_some()),
            })
            .then_with(|| a.name.cmp(&b.name))
    }
}

impl Hash for ObjectKey {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.0.hash);
    }
}

impl std::fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectKey")
            .field("group", &self.group())
            .field("kind", &self.kind())
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .finish()
    }
}

/// Hashes an [`ObjectKey`] by the hash it carries, not again.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not reached for ObjectKey; a plain FNV-1a for anything else.
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
}

/// A map keyed by [`ObjectKey`], hashed by the key's own hash.
pub type KeyMap<V> = HashMap<ObjectKey, V, BuildHasherDefault<KeyHasher>>;
/// A set of [`ObjectKey`]s, hashed by the keys' own hashes.
pub type KeySet = HashSet<ObjectKey, BuildHasherDefault<KeyHasher>>;
/// A map keyed by strings or numbers (uids, names, labels, resource ids) hashed with
/// foldhash, seeded per run: a uid is hashed for every object that arrives, and SipHash
/// was 2% of a large deploy's CPU.
pub(crate) type StrMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The group part of an apiVersion (`apps/v1` -> `apps`, `v1` -> ``).
pub fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_equal_by_what_they_name_whatever_the_version() {
        let a = ObjectKey::new("apps/v1", "Deployment", Some("shop"), "web");
        let b = ObjectKey::new("apps/v1beta1", "Deployment", Some("shop"), "web");
        assert_eq!(a, b);
        assert_eq!(a.cmp(&b), std::cmp::Ordering::Equal);
        let mut set = KeySet::default();
        set.insert(a.clone());
        assert!(set.contains(&b));
        for other in [
            ObjectKey::new("apps/v1", "Deployment", Some("blog"), "web"),
            ObjectKey::new("apps/v1", "Deployment", None, "web"),
            ObjectKey::new("apps/v1", "StatefulSet", Some("shop"), "web"),
            ObjectKey::new("v1", "Deployment", Some("shop"), "web"),
            ObjectKey::new("apps/v1", "Deployment", Some("shop"), "web2"),
        ] {
            assert_ne!(a, other, "{other:?}");
            assert!(!set.contains(&other), "{other:?}");
        }
    }

    #[test]
    fn keys_order_by_group_kind_namespace_then_name() {
        let k = |av, kind, ns, name| ObjectKey::new(av, kind, ns, name);
        let mut keys = [
            k("v1", "Pod", Some("shop"), "b"),
            k("apps/v1", "Deployment", Some("shop"), "a"),
            k("v1", "Pod", None, "z"),
            k("v1", "Pod", Some("blog"), "c"),
            k("v1", "Pod", Some("shop"), "a"),
            k("v1", "Namespace", None, "shop"),
        ];
        keys.sort();
        let names: Vec<String> = keys
            .iter()
            .map(|k| {
                format!(
                    "{}/{}/{:?}/{}",
                    k.group(),
                    k.kind(),
                    k.namespace(),
                    k.name()
                )
            })
            .collect();
        assert_eq!(
            names,
            [
                "/Namespace/None/shop",
                "/Pod/None/z",
                "/Pod/Some(\"blog\")/c",
                "/Pod/Some(\"shop\")/a",
                "/Pod/Some(\"shop\")/b",
                "apps/Deployment/Some(\"shop\")/a",
            ]
        );
    }
}

//! Field sets: the paths a manager owns, as a tree, with the set algebra ownership needs and
//! the `FieldsV1` wire format stored in `metadata.managedFields`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

pub use super::path::{Path, PathElement, path_string};

/// A set of paths stored as a tree. `members` are paths owned themselves; `children` hold
/// deeper paths. A child set is never empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

static EMPTY: FieldSet = FieldSet::new();

impl FieldSet {
    pub const fn new() -> Self {
        Self {
            members: BTreeSet::new(),
            children: BTreeMap::new(),
        }
    }

    pub fn from_paths<'a>(paths: impl IntoIterator<Item = &'a [PathElement]>) -> Self {
        let mut set = Self::new();
        for path in paths {
            set.insert(path);
        }
        set
    }

    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert(rest),
        }
    }

    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.contains(last),
            [first, rest @ ..] => self.children.get(first).is_some_and(|c| c.has(rest)),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    pub fn is_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// The subtree below `pe`, empty when there is none.
    pub fn child(&self, pe: &PathElement) -> &FieldSet {
        self.children.get(pe).unwrap_or(&EMPTY)
    }

    /// Whether `pe` is owned once named fields on the way to owned paths count as owned too
    /// (structured-merge-diff's `EnsureNamedFieldsAreMembers`, used when pruning).
    pub fn covers(&self, pe: &PathElement) -> bool {
        self.is_member(pe) || (pe.is_field() && self.children.contains_key(pe))
    }

    pub fn union(&self, other: &Self) -> Self {
        let mut out = self.clone();
        out.members.extend(other.members.iter().cloned());
        for (pe, child) in &other.children {
            let merged = out.child(pe).union(child);
            out.children.insert(pe.clone(), merged);
        }
        out
    }

    pub fn difference(&self, other: &Self) -> Self {
        // Nothing to take away (most subtrees of a write's changes): a copy, without
        // rebuilding it node by node. Child sets are never empty, so the result is the same.
        if other.is_empty() {
            return self.clone();
        }
        self.combine(other, |m, o| !o.contains(m), FieldSet::difference)
    }

    pub fn intersection(&self, other: &Self) -> Self {
        if self.is_empty() || other.is_empty() {
            return Self::new();
        }
        self.combine(other, |m, o| o.contains(m), FieldSet::intersection)
    }

    fn combine(
        &self,
        other: &Self,
        keep: impl Fn(&PathElement, &BTreeSet<PathElement>) -> bool,
        recurse: impl Fn(&Self, &Self) -> Self,
    ) -> Self {
        let members = self
            .members
            .iter()
            .filter(|m| keep(m, &other.members))
            .cloned()
            .collect();
        let children = self
            .children
            .iter()
            .map(|(pe, c)| (pe.clone(), recurse(c, other.child(pe))))
            .filter(|(_, c)| !c.is_empty())
            .collect();
        Self { members, children }
    }

    /// Every path, in structured-merge-diff's iteration order (members before deeper paths).
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Path, out: &mut Vec<Path>) {
        for m in &self.members {
            prefix.push(m.clone());
            out.push(prefix.clone());
            prefix.pop();
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// Encodes as `FieldsV1`; `"."` marks a path that is owned and also has owned children.
    pub fn to_fields_v1(&self) -> Value {
        let keys: BTreeSet<&PathElement> =
            self.members.iter().chain(self.children.keys()).collect();
        let mut out = Map::new();
        for pe in keys {
            let mut node = Map::new();
            if let Some(child) = self.children.get(pe) {
                if self.members.contains(pe) {
                    node.insert(".".to_owned(), Value::Object(Map::new()));
                }
                if let Value::Object(inner) = child.to_fields_v1() {
                    node.extend(inner);
                }
            }
            out.insert(pe.to_key(), Value::Object(node));
        }
        Value::Object(out)
    }

    pub fn from_fields_v1(fields: &Value) -> Self {
        let mut set = Self::new();
        let Value::Object(map) = fields else {
            return set;
        };
        for (key, value) in map {
            let Some(pe) = PathElement::from_key(key) else {
                continue;
            };
            let child = Self::from_fields_v1(value);
            let marked = value.as_object().is_some_and(|m| m.contains_key("."));
            if marked || child.is_empty() {
                set.members.insert(pe.clone());
            }
            if !child.is_empty() {
                set.children.insert(pe, child);
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // What kube-controller-manager records after creating a ReplicaSet's pod template.
    const REAL: &str = r#"{"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"5f3c\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}"#;

    #[test]
    fn fields_v1_round_trips_byte_for_byte() {
        let parsed = FieldSet::from_fields_v1(&serde_json::from_str(REAL).unwrap());
        assert_eq!(parsed.to_fields_v1().to_string(), REAL);
        assert!(parsed.has(&[
            PathElement::Field("metadata".into()),
            PathElement::Field("ownerReferences".into()),
            PathElement::Key(vec![("uid".into(), json!("5f3c"))]),
        ]));
    }

    #[test]
    fn difference_drops_emptied_subtrees() {
        let a = FieldSet::from_fields_v1(&json!({"f:spec": {"f:replicas": {}, "f:paused": {}}}));
        let b = FieldSet::from_fields_v1(&json!({"f:spec": {"f:replicas": {}}}));
        assert_eq!(
            a.difference(&b).to_fields_v1(),
            json!({"f:spec": {"f:paused": {}}})
        );
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.intersection(&b), b);
    }
}

//! Turning objects into field sets: the fields an apply configuration names, and which fields
//! a write added, modified or removed (structured-merge-diff's `ToFieldSet` and `Compare`).

use serde_json::{Map, Value};

use super::fieldset::{FieldSet, Path, PathElement, path_string};
use super::schema::{ListKind, Shape, index_items, item_element, shape};

/// The fields a configuration sets: leaves, atomic values and list items, but not the
/// objects on the way to them (so labels show as `f:labels:{f:app:{}}` without a `.`).
pub fn field_set(config: &Value) -> Result<FieldSet, String> {
    let mut set = FieldSet::new();
    collect(config, &mut Vec::new(), &mut Vec::new(), &mut set)?;
    Ok(set)
}

fn descend<T>(
    names: &mut Vec<String>,
    path: &mut Path,
    key: &str,
    f: impl FnOnce(&mut Vec<String>, &mut Path) -> T,
) -> T {
    names.push(key.to_owned());
    path.push(PathElement::Field(key.to_owned()));
    let out = f(names, path);
    names.pop();
    path.pop();
    out
}

fn collect(
    value: &Value,
    names: &mut Vec<String>,
    path: &mut Path,
    set: &mut FieldSet,
) -> Result<(), String> {
    match shape(value, names) {
        Shape::Map(map) => {
            for (key, child) in map {
                descend(names, path, key, |n, p| collect(child, n, p, set))?;
            }
        }
        Shape::List(items, kind) => {
            let mut seen = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let pe = item_element(&kind, item)
                    .map_err(|e| format!("{}: element {i}: {e}", path_string(path)))?;
                if seen.contains(&pe) {
                    return Err(format!(
                        "{}: duplicate entries for key {pe}",
                        path_string(path)
                    ));
                }
                seen.push(pe.clone());
                path.push(pe);
                set.insert(path);
                if let Shape::Map(fields) = shape(item, names) {
                    for (key, child) in fields {
                        descend(names, path, key, |n, p| collect(child, n, p, set))?;
                    }
                }
                path.pop();
            }
        }
        Shape::Leaf => set.insert(path),
    }
    Ok(())
}

/// What changed between two versions of an object.
#[derive(Debug, Default)]
pub struct Comparison {
    pub added: FieldSet,
    pub modified: FieldSet,
    pub removed: FieldSet,
}

impl Comparison {
    /// Fields whose value the write set: these move to the writer.
    pub fn changed(&self) -> FieldSet {
        self.added.union(&self.modified)
    }
}

pub fn compare(old: &Value, new: &Value) -> Comparison {
    differ(old, new, false)
}

/// `compare` of two stored versions with `metadata.managedFields` left out of both
/// (without copying the objects to drop it).
pub fn compare_without_managed_fields(old: &Value, new: &Value) -> Comparison {
    differ(old, new, true)
}

fn differ(old: &Value, new: &Value, skip_managed_fields: bool) -> Comparison {
    let mut differ = Differ {
        names: Vec::new(),
        path: Vec::new(),
        out: Comparison::default(),
        skip_managed_fields,
    };
    differ.node(Some(old), Some(new));
    differ.out
}

struct Differ {
    names: Vec<String>,
    path: Path,
    out: Comparison,
    skip_managed_fields: bool,
}

impl Differ {
    fn node(&mut self, old: Option<&Value>, new: Option<&Value>) {
        // Equal subtrees hold no change: one comparison instead of a walk that names
        // every field (a status write leaves the whole spec alone).
        if let (Some(o), Some(n)) = (old, new)
            && o == n
        {
            return;
        }
        let (os, ns) = (
            old.map(|v| shape(v, &self.names)),
            new.map(|v| shape(v, &self.names)),
        );
        match (os, ns) {
            (Some(Shape::Map(o)), Some(Shape::Map(n))) => self.map(Some(o), Some(n)),
            (Some(Shape::Map(o)), None) => self.map(Some(o), None),
            (None, Some(Shape::Map(n))) => self.map(None, Some(n)),
            (Some(Shape::List(o, kind)), Some(Shape::List(n, _))) => {
                self.list(Some(o), Some(n), &kind);
            }
            (Some(Shape::List(o, kind)), None) => self.list(Some(o), None, &kind),
            (None, Some(Shape::List(n, kind))) => self.list(None, Some(n), &kind),
            _ => self.leaf(old, new),
        }
    }

    fn map(&mut self, old: Option<&Map<String, Value>>, new: Option<&Map<String, Value>>) {
        // Empty on both sides compares as a leaf, keeping `{}` distinct from absent.
        if old.is_none_or(Map::is_empty) && new.is_none_or(Map::is_empty) {
            return self.presence(old.is_some(), new.is_some());
        }
        let mut keys: Vec<&String> = old.into_iter().flat_map(|m| m.keys()).collect();
        keys.extend(
            new.into_iter()
                .flat_map(|m| m.keys())
                .filter(|k| !old.is_some_and(|m| m.contains_key(*k))),
        );
        for key in keys {
            if self.skip_managed_fields && key == "managedFields" && self.names == ["metadata"] {
                continue;
            }
            self.names.push(key.clone());
            self.path.push(PathElement::Field(key.clone()));
            self.node(old.and_then(|m| m.get(key)), new.and_then(|m| m.get(key)));
            self.names.pop();
            self.path.pop();
        }
        self.presence(old.is_some(), new.is_some());
    }

    fn list(&mut self, old: Option<&[Value]>, new: Option<&[Value]>, kind: &ListKind) {
        let (oi, ni) = (
            index_items(old.unwrap_or_default(), kind),
            index_items(new.unwrap_or_default(), kind),
        );
        if oi.is_empty() && ni.is_empty() {
            return self.presence(old.is_some(), new.is_some());
        }
        let mut pes: Vec<&PathElement> = oi.iter().map(|(pe, _)| pe).collect();
        pes.extend(
            ni.iter()
                .map(|(pe, _)| pe)
                .filter(|pe| find(&oi, pe).is_none()),
        );
        for pe in pes {
            self.path.push(pe.clone());
            self.node(find(&oi, pe), find(&ni, pe));
            self.path.pop();
        }
        self.presence(old.is_some(), new.is_some());
    }

    fn leaf(&mut self, old: Option<&Value>, new: Option<&Value>) {
        match (old, new) {
            (Some(o), Some(n)) if o != n && !self.path.is_empty() => {
                self.out.modified.insert(&self.path);
            }
            _ => self.presence(old.is_some(), new.is_some()),
        }
    }

    // Objects, lists and items that appear or disappear are changes in their own right.
    fn presence(&mut self, old: bool, new: bool) {
        if self.path.is_empty() {
            return;
        }
        match (old, new) {
            (false, true) => self.out.added.insert(&self.path),
            (true, false) => self.out.removed.insert(&self.path),
            _ => {}
        }
    }
}

fn find<'a>(items: &[(PathElement, &'a Value)], pe: &PathElement) -> Option<&'a Value> {
    items.iter().find(|(p, _)| p == pe).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_set_owns_leaves_items_and_atomic_values_only() {
        let config = json!({
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [{"name": "web", "args": ["-v"], "resources": {}}]}}
            }
        });
        let set = field_set(&config).unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {"f:selector": {}, "f:template": {"f:spec": {"f:containers": {
                    "k:{\"name\":\"web\"}": {".": {}, "f:args": {}, "f:name": {}}
                }}}}
            })
        );
    }

    #[test]
    fn duplicate_keys_in_a_config_are_rejected() {
        let config = json!({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}});
        assert_eq!(
            field_set(&config).unwrap_err(),
            r#".spec.containers: duplicate entries for key [name="a"]"#
        );
    }

    #[test]
    fn compare_marks_new_objects_and_items_as_added() {
        let old = json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.26"}]}});
        let new = json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}, {"name": "log", "image": "busybox"}]}});
        let c = compare(&old, &new);
        assert_eq!(
            c.added.to_fields_v1(),
            json!({"f:metadata": {".": {}, "f:labels": {".": {}, "f:app": {}}}, "f:spec": {"f:containers": {
                "k:{\"name\":\"log\"}": {".": {}, "f:image": {}, "f:name": {}}}}})
        );
        assert_eq!(
            c.modified.to_fields_v1(),
            json!({"f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {"f:image": {}}}}})
        );
        assert!(
            compare(&new, &old)
                .removed
                .has(&[PathElement::Field("metadata".into())])
        );
    }
}

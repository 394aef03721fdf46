//! Where a value sits in an object, spelled three ways: Go's JSON field path (field names
//! only, `spec.template.spec.containers.ports`), the strict decoder's path (with indexes,
//! `spec.template.spec.containers[0].imagee`) and structured-merge-diff's
//! (`.spec.template.spec.containers[name="web"].image`).

use crate::path::{PathElement, path_string};
use crate::schema::{ListKind, item_element, list_kind};
use serde_json::Value;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A field of a struct.
    Field(String),
    /// A key of a map (`map[string]T`); Go's type errors leave it out of the field path.
    Key(String),
    Index(usize),
}

#[derive(Clone, Debug, Default)]
pub struct Location {
    pub steps: Vec<Step>,
    smd: Vec<PathElement>,
}

impl Location {
    pub fn field(&self, name: &str) -> Self {
        let mut next = self.clone();
        next.steps.push(Step::Field(name.to_owned()));
        next.smd.push(PathElement::Field(name.to_owned()));
        next
    }

    pub fn key(&self, name: &str) -> Self {
        let mut next = self.clone();
        next.steps.push(Step::Key(name.to_owned()));
        next.smd.push(PathElement::Field(name.to_owned()));
        next
    }

    /// An item of a list; structured-merge-diff names it by its keys when the list has them.
    pub fn item(&self, index: usize, item: &Value) -> Self {
        let mut next = self.clone();
        next.steps.push(Step::Index(index));
        let kind = list_kind(&self.field_names());
        let element = match kind {
            ListKind::Atomic => PathElement::Index(index),
            _ => item_element(&kind, item).unwrap_or(PathElement::Index(index)),
        };
        next.smd.push(element);
        next
    }

    fn field_names(&self) -> Vec<&str> {
        self.steps
            .iter()
            .filter_map(|s| match s {
                Step::Field(n) => Some(n.as_str()),
                _ => None,
            })
            .collect()
    }

    /// `spec.template.spec.containers.ports.containerPort`, as Go's `UnmarshalTypeError`.
    pub fn go_field(&self) -> String {
        self.field_names().join(".")
    }

    /// `spec.template.spec.containers[0].imagee`, as the strict decoder reports it.
    pub fn strict(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            match step {
                Step::Field(n) | Step::Key(n) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(n);
                }
                Step::Index(i) => out.push_str(&format!("[{i}]")),
            }
        }
        out
    }

    /// `/spec/template/spec/containers/0/imagee`, a JSON pointer (RFC 6901) to the value.
    pub fn pointer(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            out.push('/');
            match step {
                Step::Field(n) | Step::Key(n) => {
                    out.push_str(&n.replace('~', "~0").replace('/', "~1"));
                }
                Step::Index(i) => out.push_str(&i.to_string()),
            }
        }
        out
    }

    /// `.spec.replicas`, as structured-merge-diff prints a path.
    pub fn smd(&self) -> String {
        path_string(&self.smd)
    }
}

/// Remove the value at `steps` (an unknown field), as decoding into a Go struct drops it.
pub fn remove(value: &mut Value, steps: &[Step]) {
    let Some((last, parents)) = steps.split_last() else {
        return;
    };
    let mut at = value;
    for step in parents {
        let next = match step {
            Step::Field(n) | Step::Key(n) => at.get_mut(n.as_str()),
            Step::Index(i) => at.get_mut(*i),
        };
        match next {
            Some(v) => at = v,
            None => return,
        }
    }
    if let (Step::Field(n) | Step::Key(n), Some(map)) = (last, at.as_object_mut()) {
        map.shift_remove(n.as_str());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spells_paths_three_ways() {
        let container = json!({"name": "web"});
        let at = Location::default()
            .field("spec")
            .field("template")
            .field("spec")
            .field("containers")
            .item(0, &container)
            .field("imagee");
        assert_eq!(at.go_field(), "spec.template.spec.containers.imagee");
        assert_eq!(at.strict(), "spec.template.spec.containers[0].imagee");
        assert_eq!(at.pointer(), "/spec/template/spec/containers/0/imagee");
        assert_eq!(
            at.smd(),
            ".spec.template.spec.containers[name=\"web\"].imagee"
        );
        let data = Location::default().field("data").key("a");
        assert_eq!(data.go_field(), "data");
        let key = Location::default()
            .field("metadata")
            .field("annotations")
            .key("a/b~c");
        assert_eq!(key.pointer(), "/metadata/annotations/a~1b~0c");
    }

    #[test]
    fn removes_an_unknown_field_in_a_list_item() {
        let mut v = json!({"spec": {"containers": [{"name": "a", "imagee": "x"}]}});
        let at = Location::default()
            .field("spec")
            .field("containers")
            .item(0, &json!({}))
            .field("imagee");
        remove(&mut v, &at.steps);
        assert_eq!(v, json!({"spec": {"containers": [{"name": "a"}]}}));
    }
}

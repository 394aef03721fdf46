//! Turns parsed documents into `Manifest`s: one per Kubernetes object, with `List`s
//! expanded, so the rest of deploy-action deals with objects and never with files.

use crate::vocab::outcome::ResourceId;
use serde_json::Value;

use super::containers::{self, ImageLine};
use super::error::Problem;
use super::yaml::{Document, PointerLines};
use crate::pointer::Pointer;

/// One Kubernetes object from the inputs, with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The input as the user named it (`<stdin>` for `-`).
    pub file: String,
    /// 1-based line where the object starts.
    pub line: usize,
    /// 0-based document position in its file, empty documents included; items of a
    /// `List` share their list's index.
    pub doc_index: usize,
    pub object: Value,
    /// Empty when missing or not a string; validation reports that.
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub images: Vec<ImageLine>,
    /// The file this document was rendered from, as the renderer named it: helm's
    /// `# Source: chart/templates/x.yaml` comment, or kustomize's
    /// `config.kubernetes.io/origin` annotation. Lets `-f -` point at a repository file.
    pub origin: Option<String>,
    pointer_lines: PointerLines,
}

impl Manifest {
    /// Source line of the node at a JSON pointer into `object` (segments escaped per
    /// RFC 6901, e.g. `/metadata/annotations/deploy-action.io~1timeout`).
    pub fn line_of(&self, pointer: &str) -> Option<usize> {
        self.pointer_lines.get(pointer)
    }

    /// The line of `pointer`, or the object's own line when the node is not in the source.
    pub(crate) fn line_near(&self, pointer: &str) -> usize {
        self.line_of(pointer).unwrap_or(self.line)
    }

    /// The line of `pointer`, else of its nearest ancestor in the source (a missing field
    /// is said where its object is), else the object's own line.
    pub(crate) fn line_within(&self, pointer: &str) -> usize {
        let mut at = pointer;
        loop {
            if let Some(line) = self.line_of(at) {
                return line;
            }
            match at.rfind('/') {
                Some(i) => at = &at[..i],
                None => return self.line,
            }
        }
    }

    /// Which resource it is, as every outcome and event names it.
    pub fn id(&self) -> ResourceId {
        ResourceId {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
        }
    }

    /// `Kind/name` as used in messages.
    pub fn display_name(&self) -> String {
        format!("{}/{}", self.kind, self.name)
    }

    /// For a CustomResourceDefinition: the (group, kind) of the resources it defines.
    pub fn defines(&self) -> Option<(&str, &str)> {
        if self.kind != "CustomResourceDefinition" || self.group() != "apiextensions.k8s.io" {
            return None;
        }
        Some((
            self.object.at("/spec/group")?.as_str()?,
            self.object.at("/spec/names/kind")?.as_str()?,
        ))
    }

    /// The API group (`""` for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .split_once('/')
            .map_or("", |(group, _)| group)
    }

    fn new(file: &str, doc_index: usize, object: Value, lines: PointerLines) -> Manifest {
        let text = |pointer: &str| object.at(pointer).and_then(Value::as_str);
        let api_version = text("/apiVersion").unwrap_or_default().to_string();
        let kind = text("/kind").unwrap_or_default().to_string();
        let name = text("/metadata/name").unwrap_or_default().to_string();
        let namespace = text("/metadata/namespace")
            .filter(|ns| !ns.is_empty())
            .map(str::to_string);
        let images = containers::images(&api_version, &kind, &object, &lines);
        Manifest {
            file: file.to_string(),
            line: lines.get("").unwrap_or(1),
            doc_index,
            api_version,
            kind,
            name,
            namespace,
            images,
            origin: None,
            object,
            pointer_lines: lines,
        }
    }

    /// An object read from the cluster rather than a file (what `restart` restarts): no
    /// file (an empty name) and no source lines, so nothing points into a manifest.
    pub fn from_cluster(object: Value) -> Manifest {
        Manifest::new("", 0, object, PointerLines::default())
    }

    /// Lets go of what nothing reads once the object is applied: all of the object but
    /// its annotations (a Helm hook's delete policy is read from them after its verdict,
    /// `waves::delete_policy`), and the lines of its fields. What the judging and the
    /// report read (identity, file, line, the images and their lines) is in the other
    /// fields and stays. At 2,000 objects the parsed manifests were a sixth of the memory
    /// held while judging; at 5,000, the apiVersion, kind, name and namespace left in the
    /// object held 3 MB more, read by nothing once applied.
    pub(crate) fn release_applied(&mut self) {
        let annotations = (self.object.get_mut("metadata"))
            .and_then(|meta| meta.get_mut("annotations"))
            .map(Value::take)
            .filter(|a| !a.is_null());
        self.object = match annotations {
            Some(annotations) => serde_json::json!({"metadata": {"annotations": annotations}}),
            None => Value::Object(serde_json::Map::new()),
        };
        self.pointer_lines = PointerLines::default();
    }

    /// Records that the object now has `namespace`, in both the field and the object.
    pub(crate) fn set_namespace(&mut self, namespace: &str) {
        if let Some(Value::Object(meta)) = self.object.get_mut("metadata") {
            meta.insert("namespace".into(), Value::String(namespace.to_string()));
        }
        self.namespace = Some(namespace.to_string());
    }
}

/// Appends the objects of one document to `out`. Empty documents yield nothing; anything
/// that is not an object is a problem.
pub(crate) fn collect_objects(
    file: &str,
    document: Document,
    out: &mut Vec<Manifest>,
    problems: &mut Vec<Problem>,
) {
    let line = document.line;
    match document.value {
        Value::Null => {}
        Value::Object(_) => expand(
            file,
            document.index,
            document.value,
            document.lines,
            out,
            problems,
        ),
        other => problems.push(not_an_object(file, line, &other)),
    }
}

fn expand(
    file: &str,
    doc_index: usize,
    object: Value,
    lines: PointerLines,
    out: &mut Vec<Manifest>,
    problems: &mut Vec<Problem>,
) {
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let is_list = kind.ends_with("List") && object.get("items").is_some_and(Value::is_array);
    if !is_list {
        out.push(Manifest::new(file, doc_index, object, lines));
        return;
    }
    // Typed lists (`DeploymentList`) may leave kind/apiVersion off their items, as the
    // API server does; the list's own say what they are.
    let item_kind = kind.strip_suffix("List").filter(|k| !k.is_empty());
    let api_version = object.get("apiVersion").cloned();
    let Some(Value::Array(items)) = object.get("items").cloned() else {
        return;
    };
    for (i, mut item) in items.into_iter().enumerate() {
        let pointer = format!("/items/{i}");
        let item_lines = lines.subtree(&pointer);
        let Value::Object(fields) = &mut item else {
            let line = item_lines.get("").unwrap_or(1);
            problems.push(not_an_object(file, line, &item));
            continue;
        };
        if let Some(item_kind) = item_kind {
            fields
                .entry("kind")
                .or_insert_with(|| Value::String(item_kind.to_string()));
            if let Some(api_version) = &api_version {
                fields
                    .entry("apiVersion")
                    .or_insert_with(|| api_version.clone());
            }
        }
        expand(file, doc_index, item, item_lines, out, problems);
    }
}

fn not_an_object(file: &str, line: usize, value: &Value) -> Problem {
    let found = match value {
        Value::Array(_) => "a list",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        Value::Bool(_) => "a boolean",
        Value::Null | Value::Object(_) => "something else",
    };
    Problem::new(
        file,
        Some(line),
        format!("document is not an object (found {found})"),
    )
    .with_hint("each document must be one Kubernetes object with apiVersion, kind and metadata")
}

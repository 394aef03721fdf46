//! Finds the containers of workload objects, so images can be reported with their lines
//! and container mistakes caught before apply.

use crate::rules::kinds;
use serde_json::Value;

use super::yaml::PointerLines;
use crate::pointer::Pointer;

/// Container lists in the order the kubelet starts them.
const LISTS: [(&str, bool); 3] = [
    ("initContainers", true),
    ("containers", false),
    ("ephemeralContainers", false),
];

/// One container entry of a pod spec.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ContainerRef<'a> {
    /// JSON pointer of the container object.
    pub pointer: String,
    pub init: bool,
    pub value: &'a Value,
}

/// Containers of `object`, for the built-in workloads (their rows in `rules::kinds` say
/// where the pod template is) and for any other kind shaped like one
/// (`spec.template.spec.containers`, as Argo Rollouts and similar CRDs are).
pub(crate) fn containers<'a>(
    api_version: &str,
    kind: &str,
    object: &'a Value,
) -> Vec<ContainerRef<'a>> {
    let group = api_version.split_once('/').map_or("", |(group, _)| group);
    let Some(template) = kinds::pod_template(group, kind, object) else {
        return Vec::new();
    };
    let spec_pointer = format!("{template}/spec");
    let spec_pointer = spec_pointer.as_str();
    let Some(spec) = object.at(spec_pointer) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (list, init) in LISTS {
        let Some(Value::Array(items)) = spec.get(list) else {
            continue;
        };
        for (i, value) in items.iter().enumerate() {
            found.push(ContainerRef {
                pointer: format!("{spec_pointer}/{list}/{i}"),
                init,
                value,
            });
        }
    }
    found
}

/// A container image and the line it is set on.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageLine {
    pub container: String,
    pub image: String,
    pub line: usize,
    /// True for init containers.
    pub init: bool,
}

pub(crate) fn images(
    api_version: &str,
    kind: &str,
    object: &Value,
    lines: &PointerLines,
) -> Vec<ImageLine> {
    containers(api_version, kind, object)
        .into_iter()
        .filter_map(|c| {
            let image = c.value.get("image")?.as_str()?;
            let image_pointer = format!("{}/image", c.pointer);
            Some(ImageLine {
                container: c
                    .value
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                image: image.to_string(),
                line: lines
                    .get(&image_pointer)
                    .or_else(|| lines.get(&c.pointer))
                    .unwrap_or_default(),
                init: c.init,
            })
        })
        .collect()
}

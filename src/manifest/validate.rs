//! Checks that need only the manifests themselves, so mistakes are reported with their
//! file and line before anything touches the cluster.

use std::collections::HashMap;

use serde_json::Value;

use super::containers;
use super::document::Manifest;
use super::error::Problem;
use super::yaml::escape_pointer;
use crate::pointer::Pointer;
use crate::rules::health::load::{HEALTH_RULES_ANNOTATION, parse_annotation};
use crate::vocab::duration::parse_duration;
use crate::waves::{HOOK_WEIGHT_ANNOTATION, WAVE_ANNOTATIONS};

const TIMEOUT_ANNOTATIONS: [&str; 2] = [
    "deploy-action.io/timeout",
    "krane.shopify.io/timeout-override",
];
const ROLLOUT_ANNOTATIONS: [&str; 2] = [
    "deploy-action.io/required-rollout",
    "krane.shopify.io/required-rollout",
];

const BOOLEAN_ANNOTATIONS: [&str; 3] = [
    "deploy-action.io/skip-endpoint-validation",
    "krane.shopify.io/skip-endpoint-validation",
    crate::cluster::immutable::REPLACE_ANNOTATION,
];

/// All static problems of the manifests, in manifest order.
pub fn validate(manifests: &[Manifest]) -> Vec<Problem> {
    let mut problems = Vec::new();
    for manifest in manifests {
        if is_kustomization(manifest) {
            problems.push(
                Problem::new(&manifest.file, Some(manifest.line), "this is a kustomization, not a manifest to apply")
                    .with_hint(format!(
                        "render it first: kustomize build {} | deploy-action deploy -f - (or kubectl kustomize)",
                        kustomization_dir(&manifest.file)
                    )),
            );
            continue;
        }
        check_identity(manifest, &mut problems);
        check_string_maps(manifest, &mut problems);
        check_annotations(manifest, &mut problems);
        check_containers(manifest, &mut problems);
    }
    problems.extend(duplicates(as_written(manifests)));
    problems
}

fn at(manifest: &Manifest, pointer: &str, message: impl Into<String>) -> Problem {
    Problem::new(&manifest.file, Some(manifest.line_near(pointer)), message)
}

/// kustomize's own file: what it builds is the manifests, and the API server serves no
/// such kind.
fn is_kustomization(m: &Manifest) -> bool {
    let name = std::path::Path::new(&m.file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let group = m.api_version.split('/').next().unwrap_or_default();
    (group == "kustomize.config.k8s.io" && matches!(m.kind.as_str(), "Kustomization" | "Component"))
        || (m.kind.is_empty()
            && matches!(
                name,
                "kustomization.yaml" | "kustomization.yml" | "Kustomization"
            ))
}

/// The directory of a kustomization file, as `kustomize build` takes it.
fn kustomization_dir(file: &str) -> String {
    match std::path::Path::new(file)
        .parent()
        .map(|p| p.display().to_string())
    {
        Some(dir) if !dir.is_empty() => dir,
        _ => ".".to_owned(),
    }
}

fn check_identity(m: &Manifest, problems: &mut Vec<Problem>) {
    let object = &m.object;
    for (field, hint) in [
        (
            "apiVersion",
            "set apiVersion, e.g. apps/v1 for a Deployment",
        ),
        ("kind", "set kind, e.g. Deployment"),
    ] {
        let problem = match object.get(field) {
            None => format!("missing {field}"),
            Some(Value::String(s)) if s.is_empty() => format!("{field} is empty"),
            Some(Value::String(_)) => continue,
            Some(_) => format!("{field} must be a string"),
        };
        problems.push(at(m, &format!("/{field}"), problem).with_hint(hint));
    }
    let metadata = match object.get("metadata") {
        Some(Value::Object(meta)) => meta,
        Some(_) => return problems.push(at(m, "/metadata", "metadata must be a mapping")),
        None => {
            return problems
                .push(at(m, "", "missing metadata.name").with_hint("every resource needs a name"));
        }
    };
    match metadata.get("name") {
        Some(Value::String(s)) if !s.is_empty() => {}
        Some(Value::String(_)) => problems.push(at(m, "/metadata/name", "metadata.name is empty")),
        Some(_) => problems.push(at(m, "/metadata/name", "metadata.name must be a string")),
        None if metadata.contains_key("generateName") => problems.push(
            at(m, "/metadata/generateName", "metadata.generateName is not supported")
                .with_hint("apply needs a fixed metadata.name; a generated name would create a new object on every deploy"),
        ),
        None => problems.push(
            at(m, "/metadata", "missing metadata.name").with_hint("every resource needs a name"),
        ),
    }
    if let Some(ns) = metadata.get("namespace")
        && !ns.is_string()
    {
        problems.push(at(
            m,
            "/metadata/namespace",
            "metadata.namespace must be a string",
        ));
    }
}

/// Labels, annotations and ConfigMap data are string maps; an unquoted `true`, `yes` or
/// `8080` there is rejected by the API server, so say so with the line.
fn check_string_maps(m: &Manifest, problems: &mut Vec<Problem>) {
    let mut maps = vec!["/metadata/labels", "/metadata/annotations"];
    if m.kind == "ConfigMap" || m.kind == "Secret" {
        maps.extend(["/data", "/stringData", "/binaryData"]);
    }
    for pointer in maps {
        let Some(Value::Object(map)) = m.object.at(pointer) else {
            continue;
        };
        for (key, value) in map {
            // null decodes to "" on the server, so only other types are rejected there.
            if value.is_string() || value.is_null() {
                continue;
            }
            let what = match pointer {
                "/metadata/labels" => format!("label {key}"),
                "/metadata/annotations" => format!("annotation {key}"),
                _ => format!("{}.{key}", &pointer[1..]),
            };
            let entry = format!("{pointer}/{}", escape_pointer(key));
            problems.push(
                at(m, &entry, format!("{what} must be a string, found {value}"))
                    .with_hint("quote the value; unquoted true/yes/on, numbers and null are not strings in YAML"),
            );
        }
    }
}

fn check_annotations(m: &Manifest, problems: &mut Vec<Problem>) {
    let Some(Value::Object(annotations)) = m.object.at("/metadata/annotations") else {
        return;
    };
    for (key, value) in annotations {
        let Some(value) = value.as_str() else {
            continue;
        };
        let pointer = format!("/metadata/annotations/{}", escape_pointer(key));
        if TIMEOUT_ANNOTATIONS.contains(&key.as_str())
            && parse_duration(value).is_none_or(|d| d.is_zero())
        {
            problems.push(
                at(
                    m,
                    &pointer,
                    format!("invalid duration {value:?} in annotation {key}"),
                )
                .with_hint("use a positive duration like 90s, 5m, 1h30m, or plain seconds like 30"),
            );
        }
        if BOOLEAN_ANNOTATIONS.contains(&key.as_str()) && !matches!(value, "true" | "false") {
            problems.push(
                at(
                    m,
                    &pointer,
                    format!("invalid value {value:?} in annotation {key}"),
                )
                .with_hint("use \"true\" or \"false\""),
            );
        }
        let ordering = WAVE_ANNOTATIONS.contains(&key.as_str()) || key == HOOK_WEIGHT_ANNOTATION;
        if ordering && value.trim().parse::<i64>().is_err() {
            problems.push(
                at(
                    m,
                    &pointer,
                    format!("invalid value {value:?} in annotation {key}"),
                )
                .with_hint(
                    "use a whole number such as \"-1\" or \"5\": lower numbers are applied first",
                ),
            );
        }
        if key == HEALTH_RULES_ANNOTATION {
            check_health_rules(m, &pointer, value, problems);
        }
        if ROLLOUT_ANNOTATIONS.contains(&key.as_str()) && !valid_required_rollout(value) {
            problems.push(
                at(
                    m,
                    &pointer,
                    format!("invalid value {value:?} in annotation {key}"),
                )
                .with_hint("use full, none, maxUnavailable, or a percentage from 0% to 100%"),
            );
        }
    }
}

/// A CRD's health rules for its custom resources: refused here, with the line inside the
/// annotation, rather than found unreadable while its resources wait.
fn check_health_rules(m: &Manifest, pointer: &str, value: &str, problems: &mut Vec<Problem>) {
    let Some(defines) = m.defines() else {
        problems.push(
            at(m, pointer, format!("annotation {HEALTH_RULES_ANNOTATION} on a {}", m.kind))
                .with_hint("it belongs on a CustomResourceDefinition, for the kind it defines; elsewhere use --rules"),
        );
        return;
    };
    if let Err(found) = parse_annotation(value, &m.file, m.line_near(pointer), defines) {
        problems.extend(found);
    }
}

fn valid_required_rollout(value: &str) -> bool {
    match value {
        "full" | "none" | "maxUnavailable" => true,
        _ => value.strip_suffix('%').is_some_and(|n| {
            !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
                && n.parse::<u8>().is_ok_and(|n| n <= 100)
        }),
    }
}

fn check_containers(m: &Manifest, problems: &mut Vec<Problem>) {
    for container in containers::containers(&m.api_version, &m.kind, &m.object) {
        let label = match container.value.get("name").and_then(Value::as_str) {
            Some(name) => format!("container {name:?}"),
            None => "a container".to_string(),
        };
        match container.value.get("image") {
            Some(Value::String(image)) if !image.trim().is_empty() => {}
            Some(Value::String(_)) => problems.push(at(
                m,
                &format!("{}/image", container.pointer),
                format!("{label} has an empty image"),
            )),
            Some(_) => problems.push(at(
                m,
                &format!("{}/image", container.pointer),
                format!("{label} image must be a string"),
            )),
            None => problems.push(
                at(m, &container.pointer, format!("{label} has no image"))
                    .with_hint("every container needs an image"),
            ),
        }
    }
}

/// Manifests paired with the namespace they were written with.
pub(crate) fn as_written(manifests: &[Manifest]) -> impl Iterator<Item = (&Manifest, String)> {
    manifests
        .iter()
        .map(|m| (m, m.namespace.clone().unwrap_or_default()))
}

/// Duplicate objects by API group, kind, namespace (as paired) and name, each reported at
/// its later place and naming the first.
pub(crate) fn duplicates<'a>(
    entries: impl IntoIterator<Item = (&'a Manifest, String)>,
) -> Vec<Problem> {
    let mut seen: HashMap<(String, String, String, String), &Manifest> = HashMap::new();
    let mut problems = Vec::new();
    for (m, namespace) in entries {
        if m.kind.is_empty() || m.name.is_empty() {
            continue;
        }
        let key = (
            m.group().to_string(),
            m.kind.clone(),
            namespace.clone(),
            m.name.clone(),
        );
        match seen.get(&key) {
            Some(first) => {
                let scope = if namespace.is_empty() {
                    String::new()
                } else {
                    format!(" in namespace {namespace}")
                };
                problems.push(
                    Problem::new(
                        &m.file,
                        Some(m.line),
                        format!(
                            "duplicate resource {}{scope} (also defined at {})",
                            m.display_name(),
                            Problem::location(&first.file, Some(first.line)),
                        ),
                    )
                    .with_hint("each object may appear only once; remove or rename one of them"),
                );
            }
            None => {
                seen.insert(key, m);
            }
        }
    }
    problems
}

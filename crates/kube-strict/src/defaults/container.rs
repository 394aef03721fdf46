//! Container-level defaults (`SetDefaults_Container`, probes, ports, env field refs and
//! resource quantities), shared by pods and every pod template.

use serde_json::{Value, json};

use super::json::{
    Object, child, default_int, default_ptr, default_str, elements, existing, str_field,
};
use super::quantity::canonical_json;

/// Defaults one container (regular, init or ephemeral).
pub(crate) fn default_container(container: &mut Object) {
    if str_field(container, "imagePullPolicy").is_empty() {
        let policy = pull_policy_for(str_field(container, "image"));
        container.insert("imagePullPolicy".into(), Value::from(policy));
    }
    default_str(container, "terminationMessagePath", "/dev/termination-log");
    default_str(container, "terminationMessagePolicy", "File");
    for port in elements(container, "ports") {
        default_str(port, "protocol", "TCP");
    }
    for env in elements(container, "env") {
        if let Some(from) = existing(env, "valueFrom") {
            default_field_refs(from);
        }
    }
    // ResourceRequirements is a struct, not a pointer: Go always writes `resources: {}`.
    if let Some(resources) = child(container, "resources") {
        canonicalize_resource_lists(resources);
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = existing(container, probe) {
            default_probe(probe);
        }
    }
    if let Some(lifecycle) = existing(container, "lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(get) = existing(lifecycle, hook).and_then(|h| existing(h, "httpGet")) {
                default_http_get(get);
            }
        }
    }
}

/// `Always` for `:latest` or an untagged, undigested image; `IfNotPresent` otherwise,
/// including references Go fails to parse.
pub(crate) fn pull_policy_for(image: &str) -> &'static str {
    if image_tag(image).as_deref() == Some("latest") {
        "Always"
    } else {
        "IfNotPresent"
    }
}

/// The tag `parsers.ParseImageName` reports: the explicit tag, "latest" when there is
/// neither tag nor digest, "" when only a digest is given, `None` when unparseable.
fn image_tag(image: &str) -> Option<String> {
    if image.is_empty() || image.chars().any(char::is_whitespace) {
        return None;
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if !valid_repository(repository) {
        return None;
    }
    match (tag, digest) {
        (Some(tag), _) if valid_tag(tag) => Some(tag.to_string()),
        (Some(_), _) => None,
        (None, Some(_)) => Some(String::new()),
        (None, None) => Some("latest".to_string()),
    }
}

/// Docker's rule: the path after an optional registry host must be lowercase.
fn valid_repository(repository: &str) -> bool {
    if repository.is_empty() {
        return false;
    }
    let path = match repository.split_once('/') {
        Some((first, rest))
            if first.contains(['.', ':'])
                || first == "localhost"
                || first != first.to_lowercase() =>
        {
            rest
        }
        _ => repository,
    };
    !path.is_empty()
        && path.split('/').all(|component| {
            !component.is_empty()
                && component.chars().all(|c| {
                    c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-')
                })
        })
}

fn valid_tag(tag: &str) -> bool {
    let mut chars = tag.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphanumeric() || c == '_')
        && tag.len() <= 128
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// `SetDefaults_Probe` plus the handler defaults generated for it.
fn default_probe(probe: &mut Object) {
    default_int(probe, "timeoutSeconds", 1);
    default_int(probe, "periodSeconds", 10);
    default_int(probe, "successThreshold", 1);
    default_int(probe, "failureThreshold", 3);
    if let Some(get) = existing(probe, "httpGet") {
        default_http_get(get);
    }
    // GRPCAction.Service carries `+default=""` and has no omitempty.
    if let Some(grpc) = existing(probe, "grpc") {
        default_ptr(grpc, "service", json!(""));
    }
}

fn default_http_get(get: &mut Object) {
    default_str(get, "path", "/");
    default_str(get, "scheme", "HTTP");
}

/// `fieldRef.apiVersion` is defaulted; `resourceFieldRef.divisor` is a non-pointer
/// Quantity that Go always serializes, as "0" when unset.
pub(crate) fn default_field_refs(source: &mut Object) {
    if let Some(field_ref) = existing(source, "fieldRef") {
        default_str(field_ref, "apiVersion", "v1");
    }
    if let Some(resource_ref) = existing(source, "resourceFieldRef") {
        default_ptr(resource_ref, "divisor", json!("0"));
        if let Some(text) = resource_ref.get("divisor").and_then(canonical_json) {
            resource_ref.insert("divisor".into(), Value::from(text));
        }
    }
}

/// Rounds every quantity in `limits`/`requests` to milli-units and stores it in
/// canonical form, as the server does for every resource list it decodes.
pub(crate) fn canonicalize_resource_lists(resources: &mut Object) {
    for list in ["limits", "requests"] {
        if let Some(list) = existing(resources, list) {
            canonicalize_quantities(list);
        }
    }
}

pub(crate) fn canonicalize_quantities(list: &mut Object) {
    for value in list.values_mut() {
        if let Some(text) = canonical_json(value) {
            *value = Value::from(text);
        }
    }
}

//! Update validation: the new object's own validation plus the immutability rules
//! (selectors, Job templates, StatefulSet specs, cluster IPs, claim specs, immutable
//! ConfigMaps and Secrets), ordered as each registry strategy orders them.

use serde_json::{Map, Value};

use super::claim_update::claim_update;
use super::error::{Cause, Invalid};
use super::gofmt::{go_quote, label_selector, scalar, string_map, string_slice};
use super::object::{Kind, into_result, validation_causes};
use super::path::Path;

const IMMUTABLE: &str = "field is immutable";
const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// Validates `new` as a replacement of `old` (both already defaulted; for Services run
/// `preserve_service_allocations` first).
pub fn validate_update(old: &Value, new: &Value) -> Result<(), Invalid> {
    let Some(kind) = Kind::of(new) else {
        return Ok(());
    };
    let spec_of = |v: &Value| v.get("spec").cloned().unwrap_or(Value::Null);
    let (old_spec, new_spec) = (spec_of(old), spec_of(new));
    let mut causes = Vec::new();
    match kind {
        Kind::Deployment | Kind::ReplicaSet | Kind::DaemonSet => {
            causes.extend(validation_causes(new, kind));
            immutable_selector(&old_spec, &new_spec, &mut causes);
        }
        Kind::StatefulSet => {
            causes.extend(validation_causes(new, kind));
            stateful_set_update(&old_spec, &new_spec, &mut causes);
        }
        Kind::Job => {
            causes.extend(validation_causes(new, kind));
            job_update(old, &old_spec, &new_spec, &mut causes);
        }
        Kind::Service => {
            cluster_ip_changes(&old_spec, &new_spec, &mut causes);
            causes.extend(validation_causes(new, kind));
        }
        Kind::PersistentVolumeClaim => {
            causes.extend(validation_causes(new, kind));
            claim_update(old, new, &mut causes);
        }
        Kind::ConfigMap => {
            immutable_data(old, new, &["data", "binaryData"], &mut causes);
            causes.extend(validation_causes(new, kind));
        }
        Kind::Secret => {
            let type_of = |v: &Value| {
                v.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            if type_of(old) != type_of(new) {
                causes.push(Cause::invalid(
                    &Path::root("type"),
                    &go_quote(&type_of(new)),
                    IMMUTABLE,
                ));
            }
            immutable_data(old, new, &["data"], &mut causes);
            causes.extend(validation_causes(new, kind));
        }
        Kind::Pod | Kind::Namespace | Kind::CronJob => causes.extend(validation_causes(new, kind)),
    }
    into_result(new, causes)
}

/// `apiequality.Semantic.DeepEqual` on JSON: nil and empty maps/slices are equal, and so are
/// a missing field and a null one.
pub(crate) fn semantic_eq(a: &Value, b: &Value) -> bool {
    normalize(a) == normalize(b)
}

pub(crate) fn normalize(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let cleaned: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), normalize(v)))
                .filter(|(_, v)| !is_empty(v))
                .collect();
            Value::Object(cleaned)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
        other => other.clone(),
    }
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

fn field<'a>(spec: &'a Value, key: &str) -> &'a Value {
    spec.get(key).unwrap_or(&Value::Null)
}

fn immutable_selector(old_spec: &Value, new_spec: &Value, causes: &mut Vec<Cause>) {
    let (old, new) = (field(old_spec, "selector"), field(new_spec, "selector"));
    if !semantic_eq(old, new) {
        causes.push(Cause::invalid(
            &Path::root("spec").child("selector"),
            &label_selector(Some(new)),
            IMMUTABLE,
        ));
    }
}

fn stateful_set_update(old_spec: &Value, new_spec: &Value, causes: &mut Vec<Cause>) {
    const MUTABLE: [&str; 7] = [
        "replicas",
        "ordinals",
        "template",
        "updateStrategy",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
        "minReadySeconds",
    ];
    let strip = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            for key in MUTABLE {
                map.remove(key);
            }
        }
        spec
    };
    if !semantic_eq(&strip(old_spec), &strip(new_spec)) {
        causes.push(Cause::forbidden(
            &Path::root("spec"),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
}

fn job_update(old: &Value, old_spec: &Value, new_spec: &Value, causes: &mut Vec<Cause>) {
    let path = Path::root("spec");
    let (old_completions, new_completions) = (
        field(old_spec, "completions"),
        field(new_spec, "completions"),
    );
    if old_completions != new_completions {
        let indexed = field(new_spec, "completionMode").as_str() == Some("Indexed");
        if !indexed {
            causes.push(Cause::invalid(
                &path.child("completions"),
                &scalar(Some(new_completions)),
                IMMUTABLE,
            ));
        } else if !new_completions.is_null() && new_completions != field(new_spec, "parallelism") {
            causes.push(Cause::invalid(
                &path.child("completions"),
                &scalar(Some(new_completions)),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    immutable_selector(old_spec, new_spec, causes);

    // A suspended Job that never started may change its scheduling directives.
    let suspended = field(old_spec, "suspend").as_bool() == Some(true);
    let started = old
        .get("status")
        .and_then(|s| s.get("startTime"))
        .is_some_and(|t| !t.is_null());
    let mut old_template = field(old_spec, "template").clone();
    let new_template = field(new_spec, "template");
    if suspended && !started {
        allow_scheduling_changes(&mut old_template, new_template);
    }
    if !semantic_eq(&old_template, new_template) {
        causes.push(Cause::invalid(
            &path.child("template"),
            &pod_template_go(new_template),
            IMMUTABLE,
        ));
    }
    let (old_mode, new_mode) = (
        field(old_spec, "completionMode"),
        field(new_spec, "completionMode"),
    );
    if old_mode != new_mode {
        causes.push(Cause::invalid(
            &path.child("completionMode"),
            &scalar(Some(new_mode)),
            IMMUTABLE,
        ));
    }
}

/// Copies the fields a suspended, never-started Job may change from the new template
/// into the old one, so that only the other fields are compared.
fn allow_scheduling_changes(old_template: &mut Value, new_template: &Value) {
    let Some(old) = old_template.as_object_mut() else {
        return;
    };
    let new_meta = new_template.get("metadata");
    if let Some(meta) = old.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in ["labels", "annotations"] {
            let value = new_meta
                .and_then(|m| m.get(key))
                .cloned()
                .unwrap_or(Value::Null);
            meta.insert(key.into(), value);
        }
    }
    let new_spec = new_template.get("spec");
    if let Some(spec) = old.get_mut("spec").and_then(Value::as_object_mut) {
        for key in ["nodeSelector", "tolerations", "schedulingGates"] {
            let value = new_spec
                .and_then(|s| s.get(key))
                .cloned()
                .unwrap_or(Value::Null);
            spec.insert(key.into(), value);
        }
        let node_affinity = new_spec
            .and_then(|s| s.get("affinity"))
            .and_then(|a| a.get("nodeAffinity"))
            .cloned()
            .unwrap_or(Value::Null);
        let affinity = spec.entry("affinity").or_insert(Value::Object(Map::new()));
        if let Some(affinity) = affinity.as_object_mut() {
            affinity.insert("nodeAffinity".into(), node_affinity);
        }
    }
}

/// The start of Go's `%#v` of a `core.PodTemplateSpec`. The real message spells out every
/// field of the pod spec; this keeps the metadata exact and abbreviates the spec.
fn pod_template_go(template: &Value) -> String {
    let meta = template.get("metadata");
    let containers: Vec<String> = template
        .get("spec")
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            format!(
                "core.Container{{Name:{}, Image:{}, ...}}",
                go_quote(c.get("name").and_then(Value::as_str).unwrap_or("")),
                go_quote(c.get("image").and_then(Value::as_str).unwrap_or("")),
            )
        })
        .collect();
    format!(
        "core.PodTemplateSpec{{ObjectMeta:v1.ObjectMeta{{Name:\"\", GenerateName:\"\", Namespace:\"\", SelfLink:\"\", UID:\"\", ResourceVersion:\"\", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:{}, Annotations:{}, OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}}, Spec:core.PodSpec{{Containers:[]core.Container{{{}}}, ...}}}}",
        string_map(meta.and_then(|m| m.get("labels"))),
        string_map(meta.and_then(|m| m.get("annotations"))),
        containers.join(", "),
    )
}

/// `validateUpgradeDowngradeClusterIPs`: the primary address may never change.
fn cluster_ip_changes(old_spec: &Value, new_spec: &Value, causes: &mut Vec<Cause>) {
    let type_of = |s: &Value| field(s, "type").as_str().unwrap_or("").to_string();
    if type_of(old_spec) == "ExternalName" || type_of(new_spec) == "ExternalName" {
        return;
    }
    let headless = |s: &Value| field(s, "clusterIP").as_str() == Some("None");
    if headless(old_spec) && headless(new_spec) {
        return;
    }
    let ips = |s: &Value| -> Vec<String> {
        field(s, "clusterIPs")
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap_or("").to_string())
            .collect()
    };
    let (old_ips, new_ips) = (ips(old_spec), ips(new_spec));
    let rendered = string_slice(new_spec.get("clusterIPs").filter(|v| !v.is_null()));
    let path = Path::root("spec").child("clusterIPs");
    if old_ips.len() == new_ips.len() {
        for (i, ip) in old_ips.iter().enumerate() {
            if *ip != new_ips[i] {
                causes.push(Cause::invalid(
                    &path.index(i),
                    &rendered,
                    "may not change once set",
                ));
            }
        }
    } else if old_ips.len() > new_ips.len() && new_ips.is_empty() {
        causes.push(Cause::invalid(
            &path.index(0),
            &rendered,
            "primary clusterIP can not be unset",
        ));
    } else if !old_ips.is_empty() && !new_ips.is_empty() && old_ips[0] != new_ips[0] {
        causes.push(Cause::invalid(
            &path.index(0),
            &rendered,
            "may not change once set",
        ));
    }
}

/// ConfigMaps and Secrets created with `immutable: true` keep their data and the flag.
fn immutable_data(old: &Value, new: &Value, fields: &[&str], causes: &mut Vec<Cause>) {
    if old.get("immutable").and_then(Value::as_bool) != Some(true) {
        return;
    }
    if new.get("immutable").and_then(Value::as_bool) != Some(true) {
        causes.push(Cause::forbidden(
            &Path::root("immutable"),
            IMMUTABLE_WHEN_SET,
        ));
    }
    for key in fields {
        if old.get(*key) != new.get(*key) {
            causes.push(Cause::forbidden(&Path::root(key), IMMUTABLE_WHEN_SET));
        }
    }
}

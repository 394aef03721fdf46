//! StatefulSet validation. As in Go, only the template's metadata is checked here; its pod
//! spec is validated when the controller creates the pods.

use serde_json::{Map, Value};

use super::error::Cause;
use super::gofmt::{go_quote, label_selector};
use super::meta::{non_negative, validate_annotations, validate_labels};
use super::path::Path;
use super::selector::as_selector;
use super::workload::{required_selector, restart_policy_always, selector_mismatch};

pub(crate) fn validate_stateful_set_spec(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    match spec
        .get("podManagementPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "" => errs.push(Cause::required(&path.child("podManagementPolicy"), "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(Cause::invalid(
            &path.child("podManagementPolicy"),
            &go_quote(other),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy_path = path.child("updateStrategy");
    let strategy = spec.get("updateStrategy");
    let rolling = strategy
        .and_then(|s| s.get("rollingUpdate"))
        .filter(|r| !r.is_null());
    match strategy.and_then(|s| s.get("type")).and_then(Value::as_str).unwrap_or("") {
        "" => errs.push(Cause::required(&strategy_path, "")),
        "OnDelete" => {
            if rolling.is_some() {
                errs.push(Cause::invalid(
                    &strategy_path.child("rollingUpdate"),
                    "apps.RollingUpdateStatefulSetStrategy{Partition:(*int32)(nil), MaxUnavailable:(*intstr.IntOrString)(nil)}",
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(rolling) = rolling {
                non_negative(
                    rolling.get("partition"),
                    &strategy_path.children(&["rollingUpdate", "partition"]),
                    errs,
                );
            }
        }
        other => errs.push(Cause::invalid(
            &strategy_path,
            &format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateStatefulSetStrategy)(nil)}}",
                go_quote(other)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    if let Some(policy) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|p| p.is_object())
    {
        for field in ["whenDeleted", "whenScaled"] {
            let value = policy.get(field).and_then(Value::as_str).unwrap_or("");
            if value != "Retain" && value != "Delete" {
                errs.push(Cause::not_supported(
                    &path.children(&["persistentVolumeClaimRetentionPolicy", field]),
                    &go_quote(value),
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    non_negative(spec.get("replicas"), &path.child("replicas"), errs);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        errs,
    );
    if let Some(ordinals) = spec.get("ordinals") {
        non_negative(ordinals.get("start"), &path.child("ordinals.start"), errs);
    }
    required_selector(spec, &path, "statefulset", errs);
    match as_selector(spec.get("selector")) {
        Err(()) => errs.push(Cause::invalid(
            &path.child("selector"),
            &label_selector(spec.get("selector")),
            "",
        )),
        Ok(selector) => {
            // Go validates only the template's metadata here: its pod spec is checked when
            // the controller creates the pods.
            selector_mismatch(spec, &selector, &path, errs);
            let meta = spec.get("template").and_then(|t| t.get("metadata"));
            let template_path = path.child("template");
            validate_labels(
                meta.and_then(|m| m.get("labels")),
                &template_path.child("labels"),
                errs,
            );
            validate_annotations(
                meta.and_then(|m| m.get("annotations")),
                &template_path.child("annotations"),
                errs,
            );
        }
    }
    let empty = Value::Object(Map::new());
    let template = spec.get("template").unwrap_or(&empty);
    restart_policy_always(template, &path, errs);
    if template
        .get("spec")
        .and_then(|s| s.get("activeDeadlineSeconds"))
        .is_some_and(|v| !v.is_null())
    {
        errs.push(Cause::forbidden(
            &path.children(&["template", "spec", "activeDeadlineSeconds"]),
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ));
    }
}

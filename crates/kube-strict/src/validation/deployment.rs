//! Deployment and ReplicaSet validation (pkg/apis/apps/validation).

use serde_json::{Map, Value};

use super::error::Cause;
use super::gofmt::{go_quote, int_or_string, label_selector, scalar};
use super::meta::non_negative;
use super::path::Path;
use super::pod::validate_pod_template;
use super::selector::{Matcher, as_selector};
use super::workload::{
    int_or_percent_value, not_more_than_100_percent, positive_int_or_percent, required_selector,
    restart_policy_always, selector_mismatch,
};

pub(crate) fn validate_deployment_spec(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    non_negative(spec.get("replicas"), &path.child("replicas"), errs);
    required_selector(spec, &path, "deployment", errs);
    match as_selector(spec.get("selector")) {
        Err(()) => errs.push(Cause::invalid(
            &path.child("selector"),
            &label_selector(spec.get("selector")),
            "invalid label selector",
        )),
        Ok(selector) => template_for_replica_set(spec, &selector, &path, "ReplicaSet", errs),
    }
    validate_strategy(spec.get("strategy"), &path.child("strategy"), errs);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        errs,
    );
    non_negative(
        spec.get("revisionHistoryLimit"),
        &path.child("revisionHistoryLimit"),
        errs,
    );
    if let Some(deadline) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
        let deadline_path = path.child("progressDeadlineSeconds");
        non_negative(spec.get("progressDeadlineSeconds"), &deadline_path, errs);
        let min_ready = spec
            .get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if deadline <= min_ready {
            errs.push(Cause::invalid(
                &deadline_path,
                &deadline.to_string(),
                "must be greater than minReadySeconds",
            ));
        }
    }
}

pub(crate) fn validate_replica_set_spec(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    non_negative(spec.get("replicas"), &path.child("replicas"), errs);
    non_negative(
        spec.get("minReadySeconds"),
        &path.child("minReadySeconds"),
        errs,
    );
    // Go reuses the Deployment wording here.
    required_selector(spec, &path, "deployment", errs);
    match as_selector(spec.get("selector")) {
        Err(()) => errs.push(Cause::invalid(
            &path.child("selector"),
            &label_selector(spec.get("selector")),
            "invalid label selector",
        )),
        Ok(selector) => template_for_replica_set(spec, &selector, &path, "ReplicaSet", errs),
    }
}

/// `ValidatePodTemplateSpecForReplicaSet` (also used by Deployments).
fn template_for_replica_set(
    spec: &Value,
    selector: &Matcher,
    path: &Path,
    kind: &str,
    errs: &mut Vec<Cause>,
) {
    selector_mismatch(spec, selector, path, errs);
    let empty = Value::Object(Map::new());
    let template = spec.get("template").unwrap_or(&empty);
    validate_pod_template(template, &path.child("template"), errs);
    restart_policy_always(template, path, errs);
    if let Some(deadline) = template
        .get("spec")
        .and_then(|s| s.get("activeDeadlineSeconds"))
        .filter(|v| !v.is_null())
    {
        errs.push(Cause::invalid(
            &path.children(&["template", "spec", "activeDeadlineSeconds"]),
            &scalar(Some(deadline)),
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
}

fn validate_strategy(strategy: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    let empty = Value::Object(Map::new());
    let strategy = strategy.unwrap_or(&empty);
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy.get("type").and_then(Value::as_str).unwrap_or("") {
        "Recreate" => {
            if rolling.is_some() {
                errs.push(Cause::forbidden(
                    &path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match rolling {
            None => errs.push(Cause::required(
                &path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(rolling) => validate_rolling_update_deployment(rolling, &path.child("rollingUpdate"), errs),
        },
        other => errs.push(Cause::not_supported(
            path,
            &format!(
                "apps.DeploymentStrategy{{Type:{}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}}",
                go_quote(other)
            ),
            &["Recreate", "RollingUpdate"],
        )),
    }
}

fn validate_rolling_update_deployment(rolling: &Value, path: &Path, errs: &mut Vec<Cause>) {
    let unavailable = rolling.get("maxUnavailable");
    let surge = rolling.get("maxSurge");
    positive_int_or_percent(unavailable, &path.child("maxUnavailable"), errs);
    positive_int_or_percent(surge, &path.child("maxSurge"), errs);
    if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
        errs.push(Cause::invalid(
            &path.child("maxUnavailable"),
            &int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    not_more_than_100_percent(unavailable, &path.child("maxUnavailable"), errs);
}

//! batch/v1 validation (pkg/apis/batch/validation): Jobs and CronJobs.

use serde_json::{Map, Value};

use super::cron::parse_standard;
use super::error::Cause;
use super::gofmt::{go_quote, label_selector, string_map};
use super::meta::non_negative;
use super::names::dns1123_label;
use super::path::Path;
use super::pod::validate_pod_template;
use super::selector::{as_selector, validate_label_selector};

/// Extra checks on a Job's name, which ends up in pod hostnames and labels.
pub(crate) fn validate_job_name(job: &Value, errs: &mut Vec<Cause>) {
    let name = job
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    let spec = job.get("spec");
    let indexed = spec
        .and_then(|s| s.get("completionMode"))
        .and_then(Value::as_str)
        == Some("Indexed");
    let completions = spec
        .and_then(|s| s.get("completions"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if indexed && completions > 0 && !name.is_empty() {
        let hostname = format!("{name}-{}", completions - 1);
        if !dns1123_label(&hostname).is_empty() {
            errs.push(Cause::invalid(
                &Path::root("metadata").child("name"),
                &go_quote(name),
                &format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
}

/// `ValidateJobSpec`: the shared spec checks plus the selector, which a real Job always
/// has by now (generated from the uid unless `manualSelector`).
pub(crate) fn validate_job(spec: &Value, errs: &mut Vec<Cause>) {
    let path = Path::root("spec");
    validate_job_spec(spec, &path, errs);
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errs.push(Cause::required(&path.child("selector"), "")),
        Some(selector) => validate_label_selector(selector, &path.child("selector"), errs),
    }
    if let Ok(matcher) = as_selector(selector) {
        let labels = spec
            .get("template")
            .and_then(|t| t.get("metadata"))
            .and_then(|m| m.get("labels"));
        if !matcher.matches(labels) {
            errs.push(Cause::invalid(
                &path.children(&["template", "metadata", "labels"]),
                &string_map(labels),
                "`selector` does not match template `labels`",
            ));
        }
    }
}

/// `validateJobSpec`, shared by Jobs and CronJob job templates.
fn validate_job_spec(spec: &Value, path: &Path, errs: &mut Vec<Cause>) {
    for field in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        non_negative(spec.get(field), &path.child(field), errs);
    }
    if let Some(mode) = spec.get("completionMode").and_then(Value::as_str) {
        match mode {
            "NonIndexed" => {}
            "Indexed" => {
                if spec.get("completions").is_none_or(Value::is_null) {
                    errs.push(Cause::required(
                        &path.child("completions"),
                        "when completion mode is Indexed",
                    ));
                }
            }
            other => errs.push(Cause::not_supported(
                &path.child("completionMode"),
                &go_quote(other),
                &["NonIndexed", "Indexed"],
            )),
        }
    }
    let empty = Value::Object(Map::new());
    let template = spec.get("template").unwrap_or(&empty);
    validate_pod_template(template, &path.child("template"), errs);
    let restart_path = path.children(&["template", "spec", "restartPolicy"]);
    let policy = template
        .get("spec")
        .and_then(|s| s.get("restartPolicy"))
        .and_then(Value::as_str)
        .unwrap_or("");
    match policy {
        "OnFailure" | "Never" => {}
        "Always" | "" => errs.push(Cause::required(
            &restart_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        other => errs.push(Cause::not_supported(
            &restart_path,
            &go_quote(other),
            &["OnFailure", "Never"],
        )),
    }
}

pub(crate) fn validate_cron_job(cron_job: &Value, errs: &mut Vec<Cause>) {
    let name = cron_job
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    // The controller appends an 11-character suffix to name its Jobs.
    if name.len() > 52 {
        errs.push(Cause::invalid(
            &Path::root("metadata").child("name"),
            &go_quote(name),
            "must be no more than 52 characters",
        ));
    }
    let empty = Value::Object(Map::new());
    let spec = cron_job.get("spec").unwrap_or(&empty);
    let path = Path::root("spec");
    let schedule = spec.get("schedule").and_then(Value::as_str).unwrap_or("");
    if schedule.is_empty() {
        errs.push(Cause::required(&path.child("schedule"), ""));
    } else {
        if let Err(msg) = parse_standard(schedule) {
            errs.push(Cause::invalid(
                &path.child("schedule"),
                &go_quote(schedule),
                &msg,
            ));
        }
        if schedule.contains("TZ") {
            errs.push(Cause::invalid(
                &path.child("schedule"),
                &go_quote(schedule),
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    non_negative(
        spec.get("startingDeadlineSeconds"),
        &path.child("startingDeadlineSeconds"),
        errs,
    );
    match spec
        .get("concurrencyPolicy")
        .and_then(Value::as_str)
        .unwrap_or("")
    {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(Cause::required(&path.child("concurrencyPolicy"), "")),
        other => errs.push(Cause::not_supported(
            &path.child("concurrencyPolicy"),
            &go_quote(other),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    let job_path = path.child("jobTemplate");
    let job_spec = spec
        .get("jobTemplate")
        .and_then(|t| t.get("spec"))
        .unwrap_or(&empty);
    validate_job_spec(job_spec, &job_path.child("spec"), errs);
    if let Some(selector) = job_spec.get("selector").filter(|s| !s.is_null()) {
        errs.push(Cause::invalid(
            &job_path.children(&["spec", "selector"]),
            &label_selector(Some(selector)),
            "`selector` will be auto-generated",
        ));
    }
    if job_spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        errs.push(Cause::not_supported(
            &job_path.children(&["spec", "manualSelector"]),
            "true",
            &["nil", "false"],
        ));
    }
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        non_negative(spec.get(field), &path.child(field), errs);
    }
}

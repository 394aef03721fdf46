//! batch/v1 defaults (pkg/apis/batch/v1/defaults.go) and the Job selector the registry
//! generates from the uid (pkg/registry/batch/job/strategy.go `generateSelector`).

use serde_json::{Value, json};

use super::apps::initial_status;
use super::json::template_metadata;
use super::json::{Object, child, default_ptr, elements, existing, is_empty_map};
use super::pod_spec::default_pod_template;

pub(crate) fn default_job(job: &mut Object) {
    if let Some(spec) = child(job, "spec") {
        default_job_spec(spec);
        let template_labels = spec
            .get("template")
            .and_then(|t| t.get("metadata"))
            .and_then(|m| m.get("labels"))
            .filter(|l| l.is_object())
            .cloned();
        if let Some(labels) = template_labels {
            copy_labels_if_unset(job, labels);
        }
    }
    initial_status(job, json!({}));
}

/// `SetDefaults_Job` on the spec (the part that applies to real Jobs only).
fn default_job_spec(spec: &mut Object) {
    let unset = |spec: &Object, key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    default_ptr(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    default_ptr(spec, "backoffLimit", json!(backoff));
    default_ptr(spec, "completionMode", json!("NonIndexed"));
    default_ptr(spec, "suspend", json!(false));
    let has_failure_policy = !unset(spec, "podFailurePolicy");
    if let Some(policy) = existing(spec, "podFailurePolicy") {
        for rule in elements(policy, "rules") {
            for pattern in elements(rule, "onPodConditions") {
                default_ptr(pattern, "status", json!("True"));
            }
        }
    }
    let replacement = if has_failure_policy {
        "Failed"
    } else {
        "TerminatingOrFailed"
    };
    default_ptr(spec, "podReplacementPolicy", json!(replacement));
    if let Some(template) = child(spec, "template") {
        default_pod_template(template);
    }
}

/// A Job without labels of its own shows its template's labels (the defaulter copies them
/// on every decode, so they appear once the selector labels exist).
fn copy_labels_if_unset(job: &mut Object, labels: Value) {
    if let Some(meta) = child(job, "metadata")
        && is_empty_map(meta, "labels")
    {
        meta.insert("labels".into(), labels);
    }
}

pub(crate) fn default_cron_job(cron_job: &mut Object) {
    if let Some(spec) = child(cron_job, "spec") {
        if spec
            .get("concurrencyPolicy")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            spec.insert("concurrencyPolicy".into(), json!("Allow"));
        }
        default_ptr(spec, "suspend", json!(false));
        default_ptr(spec, "successfulJobsHistoryLimit", json!(3));
        default_ptr(spec, "failedJobsHistoryLimit", json!(1));
        // The job template is not a Job: only template metadata and pod spec defaults apply.
        if let Some(job_template) = child(spec, "jobTemplate") {
            template_metadata(job_template);
            if let Some(template) = child(job_template, "spec").and_then(|s| child(s, "template")) {
                default_pod_template(template);
            }
        }
    }
    initial_status(cron_job, json!({}));
}

/// The selector and pod labels the API server derives from a new Job's uid, unless the
/// Job asks for `manualSelector: true`. Call after assigning `metadata.uid`; labels the
/// user already set are kept (validation rejects conflicts).
pub fn default_job_selector(job: &mut Value, uid: &str) {
    let Some(job) = job.as_object_mut() else {
        return;
    };
    let name = job
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let Some(spec) = child(job, "spec") else {
        return;
    };
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        return;
    }
    let generated = [
        ("batch.kubernetes.io/controller-uid", uid),
        ("batch.kubernetes.io/job-name", name.as_str()),
        ("controller-uid", uid),
        ("job-name", name.as_str()),
    ];
    let labels = child(spec, "template")
        .and_then(|t| child(t, "metadata"))
        .and_then(|m| child(m, "labels"));
    let Some(labels) = labels else {
        return;
    };
    for (key, value) in generated {
        labels.entry(key).or_insert(Value::from(value));
    }
    let labels = Value::Object(labels.clone());
    if let Some(match_labels) = child(spec, "selector").and_then(|s| child(s, "matchLabels")) {
        match_labels
            .entry("batch.kubernetes.io/controller-uid")
            .or_insert(Value::from(uid));
    }
    copy_labels_if_unset(job, labels);
}

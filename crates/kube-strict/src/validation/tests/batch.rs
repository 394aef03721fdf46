//! Job and CronJob rules.

use serde_json::json;

use super::{accepted, merge, rejected};

fn job(patch: serde_json::Value) -> serde_json::Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "migrate", "namespace": "default"},
        "spec": {
            "backoffLimit": 2,
            "template": {"spec": {
                "containers": [{"name": "migrate", "image": "example/app:1.4", "command": ["./migrate", "up"]}],
                "restartPolicy": "Never",
            }},
        },
    });
    merge(&mut job["spec"], patch);
    job
}

#[test]
fn job_rules() {
    accepted(job(json!({})));
    rejected(
        job(json!({"template": {"spec": {"restartPolicy": null}}})),
        "Job.batch \"migrate\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
    );
    rejected(
        job(json!({"completions": -1, "parallelism": -2})),
        "Job.batch \"migrate\" is invalid: [spec.parallelism: Invalid value: -2: must be greater than or equal to 0, spec.completions: Invalid value: -1: must be greater than or equal to 0]",
    );
    rejected(
        job(json!({"completionMode": "Indexed", "completions": null, "parallelism": 3})),
        "Job.batch \"migrate\" is invalid: spec.completions: Required value: when completion mode is Indexed",
    );
    rejected(
        job(json!({
            "manualSelector": true,
            "selector": {"matchLabels": {"app": "migrate"}},
            "template": {"metadata": {"labels": {"app": "migration"}}},
        })),
        "Job.batch \"migrate\" is invalid: spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"migration\"}: `selector` does not match template `labels`",
    );
    let mut long = job(json!({"completionMode": "Indexed", "completions": 10}));
    long["metadata"]["name"] = json!("a".repeat(62));
    rejected(
        long,
        &format!(
            "Job.batch \"{0}\" is invalid: metadata.name: Invalid value: \"{0}\": will not able to create pod with invalid DNS label: {0}-9",
            "a".repeat(62)
        ),
    );
}

fn cron_job(schedule: &str, patch: serde_json::Value) -> serde_json::Value {
    let mut cron = json!({
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "nightly-report", "namespace": "default"},
        "spec": {
            "schedule": schedule,
            "jobTemplate": {"spec": {"template": {"spec": {
                "containers": [{"name": "report", "image": "example/report:2.0"}],
                "restartPolicy": "OnFailure",
            }}}},
        },
    });
    merge(&mut cron["spec"], patch);
    cron
}

#[test]
fn cronjob_schedules() {
    #[track_caller]
    fn case(schedule: &str, message: Option<&str>) {
        let cron = cron_job(schedule, json!({}));
        match message {
            None => {
                accepted(cron);
            }
            Some(detail) => rejected(
                cron,
                &format!(
                    "CronJob.batch \"nightly-report\" is invalid: spec.schedule: Invalid value: \"{schedule}\": {detail}"
                ),
            ),
        }
    }
    case("0 3 * * *", None);
    case("*/15 9-17 * * MON-FRI", None);
    case("0 0 1 jan,jul *", None);
    case("@daily", None);
    case("@every 1h30m", None);
    case(
        "0 3 * *",
        Some("expected exactly 5 fields, found 4: [0 3 * *]"),
    );
    case(
        "0 0 3 * * *",
        Some("expected exactly 5 fields, found 6: [0 0 3 * * *]"),
    );
    case(
        "61 * * * *",
        Some("end of range (61) above maximum (59): 61"),
    );
    case(
        "0 24 * * *",
        Some("end of range (24) above maximum (23): 24"),
    );
    case(
        "0 0 0 * *",
        Some("beginning of range (0) below minimum (1): 0"),
    );
    case(
        "*/0 * * * *",
        Some("step of range should be a positive number: */0"),
    );
    case(
        "0 9-5 * * *",
        Some("beginning of range (9) beyond end of range (5): 9-5"),
    );
    case(
        "x * * * *",
        Some("failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"),
    );
    case(
        "@fortnightly",
        Some("unrecognized descriptor: @fortnightly"),
    );
}

#[test]
fn cronjob_rules() {
    rejected(
        cron_job("", json!({})),
        "CronJob.batch \"nightly-report\" is invalid: spec.schedule: Required value",
    );
    rejected(
        cron_job(
            "0 3 * * *",
            json!({"concurrencyPolicy": "Never", "jobTemplate": {"spec": {"template": {"spec": {"restartPolicy": "Always"}}}}}),
        ),
        "CronJob.batch \"nightly-report\" is invalid: [spec.concurrencyPolicy: Unsupported value: \"Never\": supported values: \"Allow\", \"Forbid\", \"Replace\", spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"]",
    );
    rejected(
        cron_job("CRON_TZ=UTC 0 3 * * *", json!({})),
        "CronJob.batch \"nightly-report\" is invalid: spec.schedule: Invalid value: \"CRON_TZ=UTC 0 3 * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
    );
    let mut long = cron_job("0 3 * * *", json!({}));
    let name = format!("{}-report", "n".repeat(46));
    long["metadata"]["name"] = json!(name);
    rejected(
        long,
        &format!(
            "CronJob.batch \"{name}\" is invalid: metadata.name: Invalid value: \"{name}\": must be no more than 52 characters"
        ),
    );
}

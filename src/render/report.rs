//! The `--report FILE` JSON: the run as data for scripts and later CI steps. Its keys and
//! words are a contract, so they are written out here field by field rather than derived
//! from the internal types, which may change freely.

use crate::render::duration::round_tenths;
use crate::vocab::outcome::{Outcome, RunOutcome, SourceSpan};
use crate::vocab::verdict::Reason;
use serde_json::{Map, Value, json};

/// Names the report's shape; bumped on any change a script reading it would notice.
pub const SCHEMA: &str = "deploy-action/report/v1";

/// The report of a run, keys in this order:
///
/// ```json
/// {
///   "schema": "deploy-action/report/v1",
///   "result": "failure",
///   "dry_run": false,
///   "seconds": 41.2,
///   "resources": [
///     {
///       "api_version": "apps/v1",
///       "kind": "Deployment",
///       "namespace": "shop",
///       "name": "web",
///       "verdict": "failed",
///       "reason": "image_not_found",
///       "message": "image ghcr.io/acme/web:1.4.2 does not exist: ...",
///       "file": "k8s/web.yaml",
///       "line": 1,
///       "annotation": { "file": "k8s/web.yaml", "line": 21 },
///       "container": { "pod": "web-7d4b9c8f6-x2x9q", "container": "web", "image": "ghcr.io/acme/web:1.4.2" },
///       "seconds": 3.1
///     }
///   ]
/// }
/// ```
///
/// | key | type | meaning |
/// |---|---|---|
/// | `schema` | string | `deploy-action/report/v1`: the shape, described by docs/report.schema.json |
/// | `result` | string | `success`, `failure` or `timed_out` (exit code 0, 1, 70) |
/// | `started_at`, `finished_at` | string, optional | RFC 3339 times of the run, by the runner's clock |
/// | `cluster` | object, optional | `{context, server, namespace}` the run acted on (`context` may be null); absent for `check` |
/// | `dry_run` | bool | `true` when only server-side validation ran |
/// | `seconds` | number | run time, rounded to 0.1 |
/// | `images` | object, `check` only | `{images, missing, unconfirmed, looked_up}`: distinct images and what their registries said |
/// | `warnings` | array, optional | `{file, line, message}`: what changes no verdict but the manifests should say otherwise (a `replicas` an autoscaler overrides) |
/// | `resources` | array | one entry per resource, in manifest order |
/// | `.api_version`, `.kind`, `.name` | string | the resource as the manifest names it |
/// | `.namespace` | string or null | `null` for cluster-scoped kinds |
/// | `.verdict` | string | `succeeded`, `failed`, `timed_out` or `unfinished` (not waited for: fail fast, or not validated by a dry run) |
/// | `.reason` | string or null | a reason word from the vocabulary, `null` when succeeded |
/// | `.message` | string | what happened, verbatim (may be empty, may span lines) |
/// | `.file`, `.line` | string/number or null | where the resource's document starts (1-based line) |
/// | `.origin` | string, optional | the file a rendered document came from (helm's `# Source:`, kustomize's origin annotation) |
/// | `.annotation` | object, optional | `{file, line}` the failure points at (e.g. the `image:` line); present only when it differs from the document |
/// | `.container` | object, optional | `{pod, container, image}` (`image` may be null); present only when a container is known |
/// | `.wave` | string, optional | in a deploy in waves, the one it was (or would be) applied in: `wave 2 of 3: the rest` |
/// | `.seconds` | number | from the apply to the verdict, rounded to 0.1 |
///
/// Optional keys are absent rather than null, so `jq '.resources[].container.image'` still
/// works; every other key is always present.
pub fn to_json(run: &RunOutcome) -> Value {
    let mut report = json!({
        "schema": SCHEMA,
        "result": run.result.as_str(),
        "dry_run": run.dry_run,
        "seconds": round_tenths(run.seconds),
        "resources": run.outcomes.iter().map(resource).collect::<Vec<_>>(),
    });
    if let Some(started) = run.started_at {
        report["started_at"] = json!(started.to_string());
        let took = jiff::SignedDuration::from_secs_f64(run.seconds.max(0.0));
        if let Ok(finished) = started.checked_add(took) {
            report["finished_at"] = json!(finished.to_string());
        }
    }
    if let Some(c) = &run.cluster {
        report["cluster"] =
            json!({"context": c.context, "server": c.server, "namespace": c.namespace});
    }
    if !run.notices.is_empty() {
        report["warnings"] = run
            .notices
            .iter()
            .map(|n| json!({"file": n.source.file, "line": n.source.line, "message": n.message}))
            .collect();
    }
    if let Some(t) = &run.images {
        report["images"] = json!({
            "images": t.images, "missing": t.missing,
            "unconfirmed": t.unconfirmed, "looked_up": t.looked_up,
        });
    }
    report
}

fn resource(outcome: &Outcome) -> Value {
    let id = &outcome.resource;
    let source = outcome.source.as_ref();
    let mut map = Map::new();
    map.insert("api_version".into(), json!(id.api_version));
    map.insert("kind".into(), json!(id.kind));
    map.insert("namespace".into(), json!(id.namespace));
    map.insert("name".into(), json!(id.name));
    map.insert("verdict".into(), json!(outcome.verdict.to_string()));
    map.insert("reason".into(), json!(outcome.reason.map(Reason::as_str)));
    map.insert("message".into(), json!(outcome.message));
    map.insert("file".into(), json!(source.map(|s| &s.file)));
    map.insert("line".into(), json!(source.map(|s| s.line)));
    if let Some(origin) = &outcome.origin {
        map.insert("origin".into(), json!(origin));
    }
    if let Some(annotation) = outcome
        .annotation_source
        .as_ref()
        .filter(|a| Some(*a) != source)
    {
        map.insert("annotation".into(), place(annotation));
    }
    if let Some(c) = &outcome.container {
        map.insert(
            "container".into(),
            json!({ "pod": c.pod, "container": c.container, "image": c.image }),
        );
    }
    if let Some(change) = &outcome.change {
        // `{"action": "changed", "fields": [{"path", "before", "after"}]}`; values are
        // compact JSON text, `(secret)` where hidden, null where absent.
        map.insert("change".into(), json!(change));
    }
    if let Some(wave) = &outcome.wave {
        map.insert("wave".into(), json!(wave));
    }
    map.insert("seconds".into(), json!(round_tenths(outcome.seconds)));
    Value::Object(map)
}

fn place(span: &SourceSpan) -> Value {
    json!({ "file": span.file, "line": span.line })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::fixtures;

    fn keys(value: &Value) -> Vec<&str> {
        value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect()
    }

    /// The published schema (docs/report.schema.json) holds for every report the renderers
    /// are tested with, and the reason words it lists are the vocabulary's.
    #[test]
    fn every_report_meets_the_published_schema() {
        let schema: Value =
            serde_json::from_str(include_str!("../../docs/report.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let mut runs = crate::render::fixtures::all_runs();
        let mut placed = crate::render::fixtures::mixed_run();
        placed.started_at = Some("2026-12-05T10:00:00Z".parse().unwrap());
        placed.cluster = Some(crate::vocab::outcome::ClusterPlace {
            context: Some("prod".into()),
            server: "https://10.0.0.1:6443".into(),
            namespace: "shop".into(),
        });
        runs.push(placed);
        runs.push(crate::render::fixtures::dry_run_plan());
        runs.push(crate::render::fixtures::check_run());
        for run in &runs {
            let report = to_json(run);
            let errors: Vec<String> = validator
                .iter_errors(&report)
                .map(|e| format!("{e} at {}", e.instance_path()))
                .collect();
            assert!(errors.is_empty(), "{errors:#?}\n{report:#}");
        }
        let words: Vec<&str> = schema
            .pointer("/$defs/resource/properties/reason/anyOf/0/enum")
            .and_then(Value::as_array)
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let vocabulary: Vec<&str> = Reason::ALL.iter().map(|r| r.as_str()).collect();
        assert_eq!(words, vocabulary);
        // and a report off the contract is caught
        let mut off = to_json(&runs[0]);
        off["resources"][0]["verdict"] = json!("passed");
        assert!(!validator.is_valid(&off));
    }

    #[test]
    fn a_deploy_in_waves_names_each_resources_wave_and_one_wave_names_none() {
        let report = to_json(&crate::render::fixtures::waves_stopped_run());
        let waves: Vec<&Value> = report["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| &r["wave"])
            .collect();
        assert_eq!(
            waves,
            [
                &json!("wave 2 of 2: the rest"),
                &json!("wave 1 of 2: bare pods first (predeploy)"),
                &json!("wave 1 of 2: bare pods first (predeploy)")
            ]
        );
        let one = to_json(&crate::render::fixtures::mixed_run());
        assert!(
            one["resources"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r.get("wave").is_none())
        );
    }

    #[test]
    fn report_of_a_mixed_run() {
        // Named without the crate prefix so the file survives the move into deploy-action.
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("report_mixed_run", to_json(&fixtures::mixed_run()));
        });
    }

    #[test]
    fn a_dry_run_reports_its_plan_per_resource() {
        let report = to_json(&fixtures::dry_run_plan());
        insta::with_settings!({ prepend_module_to_snapshot => false }, {
            insta::assert_json_snapshot!("report_dry_run_plan", report);
        });
        let resources = report["resources"].as_array().unwrap();
        let actions: Vec<&Value> = resources.iter().map(|r| &r["change"]["action"]).collect();
        assert_eq!(
            actions,
            [
                &json!("changed"),
                &json!("changed"),
                &json!("created"),
                &json!("unchanged"),
                &Value::Null,
                &json!("pruned"),
            ]
        );
        // Not known: no `change` key at all, rather than a guess.
        assert!(resources[4].get("change").is_none());
        assert!(
            to_json(&fixtures::mixed_run())["resources"][0]
                .get("change")
                .is_none()
        );
    }

    #[test]
    fn top_level_keys_are_exactly_the_documented_ones() {
        let report = to_json(&fixtures::mixed_run());
        assert_eq!(
            keys(&report),
            ["schema", "result", "dry_run", "seconds", "resources"]
        );
        assert_eq!(report["result"], "failure");
        assert_eq!(to_json(&fixtures::timed_out_run())["result"], "timed_out");
        assert_eq!(to_json(&fixtures::all_success_run())["result"], "success");
        assert_eq!(to_json(&fixtures::dry_run_passed())["dry_run"], true);
    }

    #[track_caller]
    fn case(outcome: Outcome, expected_keys: &[&str]) {
        let run = RunOutcome::new(false, 1.0, vec![outcome]);
        let report = to_json(&run);
        assert_eq!(keys(&report["resources"][0]), expected_keys);
    }

    #[test]
    fn optional_keys_appear_only_when_they_add_something() {
        // The image line differs from the document: both places are reported.
        case(
            fixtures::missing_image(),
            &[
                "api_version",
                "kind",
                "namespace",
                "name",
                "verdict",
                "reason",
                "message",
                "file",
                "line",
                "annotation",
                "container",
                "seconds",
            ],
        );
        // The crash loop points at the document itself: no annotation.
        case(
            fixtures::crash_loop(),
            &[
                "api_version",
                "kind",
                "namespace",
                "name",
                "verdict",
                "reason",
                "message",
                "file",
                "line",
                "container",
                "seconds",
            ],
        );
        case(
            fixtures::successes()[0].clone(),
            &[
                "api_version",
                "kind",
                "namespace",
                "name",
                "verdict",
                "reason",
                "message",
                "file",
                "line",
                "seconds",
            ],
        );
    }

    #[test]
    fn words_come_from_the_vocabulary_and_times_are_rounded() {
        let report = to_json(&fixtures::mixed_run());
        let resources = report["resources"].as_array().unwrap();
        let summary: Vec<(&str, &str, Value, Value)> = resources
            .iter()
            .map(|r| {
                (
                    r["name"].as_str().unwrap(),
                    r["verdict"].as_str().unwrap(),
                    r["reason"].clone(),
                    r["seconds"].clone(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("worker", "timed_out", json!("registry_slow"), json!(300.0)),
                ("web", "failed", json!("image_not_found"), json!(3.1)),
                ("api", "failed", json!("crash_loop"), json!(48.7)),
                ("web-config", "succeeded", Value::Null, json!(0.1)),
                ("web", "succeeded", Value::Null, json!(1.0)),
                ("shop-reader", "succeeded", Value::Null, json!(0.1)),
            ]
        );
        assert_eq!(report["seconds"], json!(301.2));
    }

    #[test]
    fn cluster_scoped_resources_have_a_null_namespace() {
        let report = to_json(&fixtures::all_success_run());
        let role = &report["resources"][3];
        assert_eq!(role["kind"], "ClusterRole");
        assert_eq!(role["namespace"], Value::Null);
        assert_eq!(report["resources"][0]["namespace"], "shop");
    }

    #[test]
    fn unknown_source_is_null_and_a_lone_annotation_is_kept() {
        let mut outcome = fixtures::missing_image();
        outcome.source = None;
        let run = RunOutcome::new(false, 1.0, vec![outcome]);
        let r = &to_json(&run)["resources"][0];
        assert_eq!((&r["file"], &r["line"]), (&Value::Null, &Value::Null));
        assert_eq!(r["annotation"], json!({"file": "k8s/web.yaml", "line": 21}));
    }
}

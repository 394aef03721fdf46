//! Kinds the rules do not know (custom resources, newer built-ins): a health rule when one
//! is known (the run's, the CRD's, krane's rollout conditions, the bundled library), else
//! kstatus' generic reading of `status`.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::conditions::condition;
use crate::rules::custom::generation;
use crate::rules::custom::rollout_conditions::{crd_of, declared};
use crate::rules::health::{self, Found};
use crate::rules::kinds::is_builtin_group;
use crate::rules::snapshot::Snapshot;
use crate::rules::target::Target;
use crate::vocab::verdict::Reason;
use serde_json::Value;

pub fn assess(obj: &Value, target: &Target, snapshot: &Snapshot) -> Assessment {
    // Without its CRD the rules it declares for its instances are unknown, and kstatus'
    // "exists" would stick as a success they may not allow.
    let crd = if is_builtin_group(target.group()) {
        None
    } else {
        match crd_of(snapshot, target.group(), target.kind()) {
            Some(crd) => Some(crd),
            None if snapshot.crds_unreadable() => return without_crd(obj, target, snapshot),
            None => {
                return Assessment::not_ready(format!(
                    "its CustomResourceDefinition (group {}, kind {}) is not in the cluster's view yet",
                    target.group(),
                    target.kind()
                ));
            }
        }
    };
    let manifest = target.declared.as_deref();
    let rule = match health::user_rule(snapshot, crd.as_ref(), target.group(), target.kind()) {
        Found::Rule(rule) => Some(rule),
        Found::Unreadable(problems) => {
            return Assessment::not_ready(format!(
                "its CRD's health rule cannot be read, so nothing says when it is done: {problems}"
            ));
        }
        Found::None => None,
    };
    // An unreadable krane annotation is refused by validation before apply; here the
    // bundled rule or kstatus stands in.
    if rule.is_none()
        && let Some(Ok(conditions)) = crd.as_ref().and_then(declared)
    {
        return generation::lag(obj).unwrap_or_else(|| conditions.assess(obj));
    }
    let status_declared = crd.as_ref().map(declares_status);
    // A CRD installed without a status (an old or trimmed copy) has nothing reporting on
    // its objects: a bundled rule would wait for nothing.
    let rule = rule.or_else(|| {
        health::bundled_rule(target.group(), target.kind())
            .filter(|_| status_declared != Some(false) || has_status(obj))
    });
    match rule {
        Some(rule) => rule.assess(obj, manifest),
        None => generation::lag(obj).unwrap_or_else(|| kstatus(obj, status_declared)),
    }
}

/// What the deployer may not read says of a custom resource: the CRD list was refused, so
/// its CRD's own health rule and whether it declares a status are unknown. Its kind is
/// known from discovery (it was applied); the run's rules, the bundled ones and kstatus
/// read its status, and an object without one is not done (a controller may be about to
/// report). A success says what went unchecked.
fn without_crd(obj: &Value, target: &Target, snapshot: &Snapshot) -> Assessment {
    const UNCHECKED: &str = "its CRD could not be read (the deployer may not list \
                             CustomResourceDefinitions), so a health rule the CRD declares \
                             was not checked";
    let rule = match health::user_rule(snapshot, None, target.group(), target.kind()) {
        Found::Rule(rule) => Some(rule),
        _ => health::bundled_rule(target.group(), target.kind()),
    };
    let assessment = match rule {
        Some(rule) => rule.assess(obj, target.declared.as_deref()),
        None if !has_status(obj) => {
            return Assessment::pending(
                Reason::NotReconciled,
                format!(
                    "no controller has reported on it yet, and {UNCHECKED} nor whether one will"
                ),
            );
        }
        None => generation::lag(obj).unwrap_or_else(|| kstatus(obj, None)),
    };
    match assessment {
        Assessment::Succeeded { message } => {
            Assessment::succeeded(format!("{message}; {UNCHECKED}"))
        }
        other => other,
    }
}

/// Whether a CRD declares a status for its objects (a `status` subresource, or `status`
/// in a version's schema): then a controller is expected to write one.
fn declares_status(crd: &Value) -> bool {
    let versions = crd.at("/spec/versions").and_then(Value::as_array);
    versions.into_iter().flatten().any(|v| {
        v.at("/subresources/status").is_some()
            || v.at("/schema/openAPIV3Schema/properties/status").is_some()
    })
}

/// kstatus: Stalled=True fails, Reconciling=True waits (so does Synced that is not True,
/// Crossplane's word for a spec not yet applied), Ready decides when present. An
/// object without a status is done once it exists only when nothing is expected to report
/// on it: its CRD declares no status (`status_declared` is `None` for built-in kinds).
fn has_status(obj: &Value) -> bool {
    obj.get("status")
        .is_some_and(|s| s.as_object().is_none_or(|m| !m.is_empty()))
}

fn kstatus(obj: &Value, status_declared: Option<bool>) -> Assessment {
    if !has_status(obj) {
        return match status_declared {
            Some(true) => Assessment::pending(
                Reason::NotReconciled,
                "no controller has reported on it yet (its CRD declares a status, and it has none)",
            ),
            Some(false) => {
                Assessment::succeeded("exists (its CRD declares no status: nothing reports on it)")
            }
            None => Assessment::succeeded("exists"),
        };
    }
    if let Some(c) = condition(obj, "Stalled").filter(|c| c.is("True")) {
        return Assessment::failed(Reason::ConditionFailed, c.describe());
    }
    if let Some(c) = condition(obj, "Reconciling").filter(|c| c.is("True")) {
        return Assessment::not_ready(c.describe());
    }
    // Crossplane: Ready=True with Synced=False is the old spec still running.
    if let Some(c) = condition(obj, "Synced").filter(|c| !c.is("True")) {
        return Assessment::not_ready(c.describe());
    }
    match condition(obj, "Ready") {
        Some(c) if c.is("True") => Assessment::succeeded(c.describe()),
        Some(c) => Assessment::not_ready(c.describe()),
        None => trouble(obj)
            .unwrap_or_else(|| Assessment::succeeded("exists (no Ready condition reported)")),
    }
}

/// Phases that say the controller is still at work, or that something went wrong.
const UNSETTLED_PHASES: [&str; 16] = [
    "pending",
    "provisioning",
    "creating",
    "deploying",
    "updating",
    "upgrading",
    "initializing",
    "installing",
    "progressing",
    "reconciling",
    "deleting",
    "terminating",
    "failed",
    "error",
    "createfailed",
    "degraded",
];

/// Without a Ready condition, what else the controller may say is wrong or unfinished: a
/// `status.phase` of work or failure (`Failed`, `CreateFailed`, `Provisioning`), a
/// Degraded, Failed or NotReady (Strimzi) condition that is True, an Available condition
/// that is not. Without
/// the controller's own rule none is known to be terminal, so each only keeps the
/// resource waiting, its message naming what was said; at the deadline it times out.
fn trouble(obj: &Value) -> Option<Assessment> {
    if let Some(phase) = obj.at("/status/phase").and_then(Value::as_str)
        && UNSETTLED_PHASES.contains(&phase.to_ascii_lowercase().as_str())
    {
        let said = ["message", "reason"]
            .iter()
            .find_map(|k| obj.at(&format!("/status/{k}")).and_then(Value::as_str))
            .filter(|m| !m.trim().is_empty());
        return Some(Assessment::not_ready(match said {
            Some(m) => format!("status.phase is {phase}: {m}"),
            None => format!("status.phase is {phase}"),
        }));
    }
    let wrong = ["Degraded", "Failed", "NotReady"]
        .iter()
        .filter_map(|t| condition(obj, t))
        .find(|c| c.is("True"))
        .or_else(|| condition(obj, "Available").filter(|c| !c.is("True")));
    wrong.map(|c| Assessment::not_ready(c.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::custom::rollout_conditions::ROLLOUT_CONDITIONS_ANNOTATION;
    use serde_json::json;

    fn widget(generation: i64, status: &Value) -> Value {
        json!({
            "apiVersion": "acme.io/v1", "kind": "Widget",
            "metadata": {"name": "blue", "namespace": "shop", "uid": "f0f0f0f0-0000-4000-8000-000000000001",
                "resourceVersion": "57000", "generation": generation, "creationTimestamp": "2025-03-04T10:15:00Z"},
            "spec": {"size": 3},
            "status": status
        })
    }

    fn cond(type_: &str, status: &str, reason: &str, message: &str) -> Value {
        json!({"type": type_, "status": status, "lastTransitionTime": "2025-03-04T10:15:30Z",
            "observedGeneration": 2, "reason": reason, "message": message})
    }

    fn crd(annotation: Option<&str>) -> Value {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.acme.io", "uid": "c1c1c1c1-0000-4000-8000-000000000001",
                "resourceVersion": "56000", "generation": 1},
            "spec": {"group": "acme.io", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                "versions": [{"name": "v1", "served": true, "storage": true}]}
        });
        if let Some(a) = annotation {
            crd["metadata"]["annotations"] = json!({ROLLOUT_CONDITIONS_ANNOTATION: a});
        }
        crd
    }

    /// Judged with the CRD in view (a plain one unless `objects` bring their own).
    #[track_caller]
    fn case(mut objects: Vec<Value>, expected: (Option<Reason>, &str)) {
        if !objects
            .iter()
            .any(|o| o["kind"] == "CustomResourceDefinition")
        {
            objects.push(crd(None));
        }
        let snap = crate::rules::fixtures::snapshot(&objects);
        let target = Target::new("acme.io/v1", "Widget", Some("shop"), "blue");
        let got = assess(&objects[0], &target, &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
        assert_eq!(
            matches!(got, Assessment::Succeeded { .. }),
            expected.0.is_none()
        );
    }

    #[test]
    fn kstatus_reads_stalled_reconciling_and_ready() {
        case(
            vec![widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [
                cond("Reconciling", "False", "", ""),
                cond("Stalled", "True", "ImageNotFound", "manifest for ghcr.io/acme/widget:v9 not found")]}),
            )],
            (
                Some(Reason::ConditionFailed),
                "Stalled=True (ImageNotFound): manifest for ghcr.io/acme/widget:v9 not found",
            ),
        );
        case(
            vec![widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [
                cond("Reconciling", "True", "Progressing", "1 of 3 shards ready"),
                cond("Ready", "False", "Progressing", "1 of 3 shards ready")]}),
            )],
            (
                Some(Reason::NotReady),
                "Reconciling=True (Progressing): 1 of 3 shards ready",
            ),
        );
        case(
            vec![widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [cond("Ready", "False", "Scaling", "waiting for shards")]}),
            )],
            (
                Some(Reason::NotReady),
                "Ready=False (Scaling): waiting for shards",
            ),
        );
        case(
            vec![widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [cond("Ready", "True", "Succeeded", "3 shards ready")]}),
            )],
            (None, "Ready=True (Succeeded): 3 shards ready"),
        );
    }

    #[test]
    fn generation_lag_and_missing_status_follow_kstatus() {
        case(
            vec![widget(
                3,
                &json!({"observedGeneration": 2, "conditions": [cond("Ready", "True", "Succeeded", "ok")]}),
            )],
            (
                Some(Reason::NotReconciled),
                "waiting for the controller to observe generation 3 (status is for 2)",
            ),
        );
        // Argo Rollouts writes it as a string: a number in one counts, a hash says nothing.
        case(
            vec![widget(3, &json!({"observedGeneration": "2"}))],
            (
                Some(Reason::NotReconciled),
                "waiting for the controller to observe generation 3 (status is for 2)",
            ),
        );
        case(
            vec![widget(3, &json!({"observedGeneration": "7bcdbf7bd9"}))],
            (None, "exists (no Ready condition reported)"),
        );
        // Nothing reports on it unless its CRD declares a status.
        case(
            vec![widget(1, &json!({}))],
            (
                None,
                "exists (its CRD declares no status: nothing reports on it)",
            ),
        );
        for declared in [
            json!({"subresources": {"status": {}}}),
            json!({"schema": {"openAPIV3Schema": {"type": "object",
                "properties": {"spec": {"type": "object"}, "status": {"type": "object"}}}}}),
        ] {
            let mut crd = crd(None);
            let version = crd["spec"]["versions"][0].as_object_mut().unwrap();
            version.extend(declared.as_object().unwrap().clone());
            case(
                vec![widget(1, &json!({})), crd],
                (
                    Some(Reason::NotReconciled),
                    "no controller has reported on it yet (its CRD declares a status, and it has none)",
                ),
            );
        }
        case(
            vec![widget(1, &json!({"phase": "Provisioned"}))],
            (None, "exists (no Ready condition reported)"),
        );
    }

    #[test]
    fn without_a_ready_condition_a_failed_or_unfinished_status_is_no_success() {
        // What some controllers say outside conditions: never terminal by our reading (the
        // controller may retry), so it waits, naming what was said.
        case(
            vec![widget(
                1,
                &json!({"phase": "Failed", "message": "volume quota exceeded"}),
            )],
            (
                Some(Reason::NotReady),
                "status.phase is Failed: volume quota exceeded",
            ),
        );
        case(
            vec![widget(1, &json!({"phase": "CreateFailed"}))],
            (Some(Reason::NotReady), "status.phase is CreateFailed"),
        );
        case(
            vec![widget(1, &json!({"phase": "Provisioning"}))],
            (Some(Reason::NotReady), "status.phase is Provisioning"),
        );
        case(
            vec![widget(
                1,
                &json!({"conditions": [cond("Degraded", "True", "ReplicasUnavailable", "1/3 down")]}),
            )],
            (
                Some(Reason::NotReady),
                "Degraded=True (ReplicasUnavailable): 1/3 down",
            ),
        );
        case(
            vec![widget(
                1,
                &json!({"conditions": [cond("Available", "Degraded", "", "")]}),
            )],
            (Some(Reason::NotReady), "Available=Degraded"),
        );
        // Strimzi says it the other way round.
        case(
            vec![widget(
                1,
                &json!({"conditions": [cond("NotReady", "True", "TimeoutException", "zookeeper not ready")]}),
            )],
            (
                Some(Reason::NotReady),
                "NotReady=True (TimeoutException): zookeeper not ready",
            ),
        );
        case(
            vec![widget(
                1,
                &json!({"conditions": [cond("Available", "True", "Ok", ""), cond("Degraded", "False", "", "")]}),
            )],
            (None, "exists (no Ready condition reported)"),
        );
    }

    #[test]
    fn krane_default_rollout_conditions_on_the_crd() {
        let ready_false = json!({"observedGeneration": 2, "conditions": [cond("Ready", "False", "Pending", "not yet")]});
        case(
            vec![widget(2, &ready_false), crd(Some("true"))],
            (
                Some(Reason::NotReady),
                "waiting for $.status.conditions[?(@.type == \"Ready\")].status to be \"True\" (now \"False\")",
            ),
        );
        let failed = json!({"observedGeneration": 2, "conditions": [
            cond("Ready", "False", "Failed", "x"), cond("Failed", "True", "BadSpec", "size must be odd")]});
        case(
            vec![widget(2, &failed), crd(Some("true"))],
            (Some(Reason::ConditionFailed), "size must be odd"),
        );
        // declared conditions replace kstatus: Stalled=True is not one they name
        let stalled = json!({"observedGeneration": 2, "conditions": [cond("Stalled", "True", "X", "stuck"), cond("Ready", "False", "X", "no")]});
        case(
            vec![widget(2, &stalled), crd(Some("true"))],
            (
                Some(Reason::NotReady),
                "waiting for $.status.conditions[?(@.type == \"Ready\")].status to be \"True\" (now \"False\")",
            ),
        );
    }

    #[test]
    fn json_rollout_conditions_on_the_crd() {
        let rules = r#"{
            "success_conditions": [
                {"path": "$.status.conditions[?(@.type == \"Deployed\")].status", "value": "True"},
                {"path": "$.status.phase", "value": "Running"}],
            "failure_conditions": [
                {"path": "$.status.conditions[?(@.type == \"Deployed\")].reason", "value": "Error",
                 "error_msg_path": "$.status.conditions[?(@.type == \"Deployed\")].message"},
                {"path": "$.status.phase", "value": "Crashed", "custom_error_msg": "widget crashed"}]
        }"#;
        let deployed = |status: &str, reason: &str, phase: &str| json!({"phase": phase, "conditions": [cond("Deployed", status, reason, "quota exceeded for widgets")]});
        case(
            vec![
                widget(2, &deployed("True", "Done", "Running")),
                crd(Some(rules)),
            ],
            (
                None,
                "$.status.conditions[?(@.type == \"Deployed\")].status is \"True\", $.status.phase is \"Running\"",
            ),
        );
        case(
            vec![
                widget(2, &deployed("True", "Done", "Starting")),
                crd(Some(rules)),
            ],
            (
                Some(Reason::NotReady),
                "waiting for $.status.phase to be \"Running\" (now \"Starting\")",
            ),
        );
        case(
            vec![
                widget(2, &deployed("False", "Error", "Starting")),
                crd(Some(rules)),
            ],
            (Some(Reason::ConditionFailed), "quota exceeded for widgets"),
        );
        case(
            vec![
                widget(2, &deployed("False", "Pending", "Crashed")),
                crd(Some(rules)),
            ],
            (Some(Reason::ConditionFailed), "widget crashed"),
        );
        // an unreadable annotation falls back to kstatus (validation refuses it before apply)
        case(
            vec![
                widget(2, &deployed("False", "Pending", "Starting")),
                crd(Some("{\"success\": []}")),
            ],
            (None, "exists (no Ready condition reported)"),
        );
    }

    #[test]
    fn a_custom_resource_is_never_judged_without_its_crd() {
        // Without its CRD in view, "exists" would be a success its rollout conditions may
        // not allow; it waits instead.
        let objects = vec![widget(1, &json!({}))];
        let snap = crate::rules::fixtures::snapshot(&objects);
        let target = Target::new("acme.io/v1", "Widget", Some("shop"), "blue");
        let got = assess(&objects[0], &target, &snap);
        assert_eq!(got.reason(), Some(Reason::NotReady), "{got:?}");
        assert!(
            got.message().contains("CustomResourceDefinition"),
            "{got:?}"
        );
        // Built-in groups have no CRD to wait for.
        let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": "l", "namespace": "shop", "uid": "u-1", "resourceVersion": "1"}});
        let snap = crate::rules::fixtures::snapshot(std::slice::from_ref(&lease));
        let target = Target::new("coordination.k8s.io/v1", "Lease", Some("shop"), "l");
        assert_eq!(
            assess(&lease, &target, &snap),
            Assessment::succeeded("exists")
        );
        // Gateway API's group ends in .k8s.io, but its kinds come from CRDs.
        let gateway = json!({"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
            "metadata": {"name": "edge", "namespace": "shop", "uid": "g-1", "resourceVersion": "1"},
            "spec": {"gatewayClassName": "envoy", "listeners": [{"name": "http", "port": 80, "protocol": "HTTP"}]}});
        let snap = crate::rules::fixtures::snapshot(std::slice::from_ref(&gateway));
        let target = Target::new(
            "gateway.networking.k8s.io/v1",
            "Gateway",
            Some("shop"),
            "edge",
        );
        let got = assess(&gateway, &target, &snap);
        assert!(
            got.message().contains("CustomResourceDefinition"),
            "{got:?}"
        );
    }

    /// Judged with the CRD list refused: no CRD in view, and the snapshot knows why.
    #[track_caller]
    fn case_without_crd(obj: &Value, expected: (Option<Reason>, &str)) {
        let mut snap = crate::rules::fixtures::snapshot(std::slice::from_ref(obj));
        snap.set_crds_unreadable();
        let target = Target::new("acme.io/v1", "Widget", Some("shop"), "blue");
        let got = assess(obj, &target, &snap);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
    }

    #[test]
    fn without_a_readable_crd_the_status_decides_and_a_success_says_what_went_unchecked() {
        let unchecked = "its CRD could not be read (the deployer may not list \
                         CustomResourceDefinitions), so a health rule the CRD declares was not \
                         checked";
        // No status: a controller may be about to report; not done.
        case_without_crd(
            &widget(1, &json!({})),
            (
                Some(Reason::NotReconciled),
                &format!(
                    "no controller has reported on it yet, and {unchecked} nor whether one will"
                ),
            ),
        );
        case_without_crd(
            &widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [cond("Ready", "True", "Synced", "all good")]}),
            ),
            (None, &format!("Ready=True (Synced): all good; {unchecked}")),
        );
        case_without_crd(
            &widget(
                2,
                &json!({"observedGeneration": 2, "conditions": [cond("Stalled", "True", "Broken", "no quota")]}),
            ),
            (
                Some(Reason::ConditionFailed),
                "Stalled=True (Broken): no quota",
            ),
        );
        // An old generation's status is still not this spec's.
        case_without_crd(
            &widget(
                3,
                &json!({"observedGeneration": 2, "conditions": [cond("Ready", "True", "Synced", "all good")]}),
            ),
            (
                Some(Reason::NotReconciled),
                "waiting for the controller to observe generation 3 (status is for 2)",
            ),
        );
    }
}

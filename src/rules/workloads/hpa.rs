//! HorizontalPodAutoscalers (krane's rule): ScalingActive=True succeeds, as does scaling
//! disabled on purpose; ScalingActive=False fails unless the cause is a metrics fetch
//! (FailedGet*), which a metrics server catching up fixes.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::conditions::{conditions, parse};
use crate::vocab::verdict::Reason;
use serde_json::Value;

/// autoscaling/v1 objects carry the v2 conditions as JSON in this annotation.
const V1_CONDITIONS_ANNOTATION: &str = "autoscaling.alpha.kubernetes.io/conditions";

pub fn assess(obj: &Value) -> Assessment {
    let v1: Vec<Value> = obj
        .at("/metadata/annotations")
        .and_then(|a| a.get(V1_CONDITIONS_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or_default();
    let mut all = conditions(obj);
    if all.is_empty() {
        all = v1.iter().filter_map(parse).collect();
    }
    let find = |t: &str| all.iter().find(|c| c.type_ == t).copied();
    let able = find("AbleToScale");
    let Some(active) = find("ScalingActive") else {
        return Assessment::not_ready("waiting for the autoscaler to report ScalingActive");
    };
    let reason = active.reason.unwrap_or_default();
    if active.is("False") && reason == "ScalingDisabled" {
        return Assessment::succeeded(format!("scaling disabled: {}", active.describe()));
    }
    if active.is("False") && !reason.starts_with("FailedGet") {
        return Assessment::failed(Reason::ConditionFailed, active.describe());
    }
    match able {
        Some(a) if !a.is("True") => Assessment::not_ready(a.describe()),
        _ if active.is("True") => Assessment::succeeded(active.describe()),
        _ => Assessment::not_ready(active.describe()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn hpa(conditions: &Value) -> Value {
        json!({
            "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web", "namespace": "shop", "uid": "a1a1a1a1-2b2b-4c3c-8d4d-5e5e5e5e5e5e",
                "resourceVersion": "55000", "creationTimestamp": "2025-03-04T10:15:00Z"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                "minReplicas": 2, "maxReplicas": 10,
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]},
            "status": {"currentReplicas": 3, "desiredReplicas": 3, "conditions": conditions}
        })
    }

    fn cond(type_: &str, status: &str, reason: &str, message: &str) -> Value {
        json!({"type": type_, "status": status, "lastTransitionTime": "2025-03-04T10:15:30Z", "reason": reason, "message": message})
    }

    #[track_caller]
    fn case(obj: &Value, expected: (Option<Reason>, &str)) {
        let got = assess(obj);
        assert_eq!((got.reason(), got.message()), expected, "{got:?}");
    }

    #[test]
    fn scaling_active_decides() {
        let able = cond(
            "AbleToScale",
            "True",
            "ReadyForNewScale",
            "recommended size matches current size",
        );
        case(
            &hpa(&json!([
                able.clone(),
                cond(
                    "ScalingActive",
                    "True",
                    "ValidMetricFound",
                    "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)"
                )
            ])),
            (
                None,
                "ScalingActive=True (ValidMetricFound): the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
            ),
        );
        case(
            &hpa(&json!([
                able.clone(),
                cond(
                    "ScalingActive",
                    "False",
                    "FailedGetResourceMetric",
                    "the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API"
                )
            ])),
            (
                Some(Reason::NotReady),
                "ScalingActive=False (FailedGetResourceMetric): the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: no metrics returned from resource metrics API",
            ),
        );
        case(
            &hpa(&json!([
                able.clone(),
                cond(
                    "ScalingActive",
                    "False",
                    "InvalidSelector",
                    "the HPA target's scale is missing a selector"
                )
            ])),
            (
                Some(Reason::ConditionFailed),
                "ScalingActive=False (InvalidSelector): the HPA target's scale is missing a selector",
            ),
        );
        case(
            &hpa(&json!([
                able,
                cond(
                    "ScalingActive",
                    "False",
                    "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero"
                )
            ])),
            (
                None,
                "scaling disabled: ScalingActive=False (ScalingDisabled): scaling is disabled since the replica count of the target is zero",
            ),
        );
        case(
            &hpa(&json!(null)),
            (
                Some(Reason::NotReady),
                "waiting for the autoscaler to report ScalingActive",
            ),
        );
    }

    #[test]
    fn autoscaling_v1_objects_carry_conditions_in_an_annotation() {
        let conditions = json!([
            cond(
                "AbleToScale",
                "False",
                "FailedGetScale",
                "the HPA controller was unable to get the target's current scale: deployments/scale.apps \"web\" not found"
            ),
            cond("ScalingActive", "True", "ValidMetricFound", "ok")
        ]);
        let mut obj = hpa(&json!(null));
        obj["apiVersion"] = json!("autoscaling/v1");
        obj["metadata"]["annotations"] = json!({V1_CONDITIONS_ANNOTATION: conditions.to_string()});
        case(
            &obj,
            (
                Some(Reason::NotReady),
                "AbleToScale=False (FailedGetScale): the HPA controller was unable to get the target's current scale: deployments/scale.apps \"web\" not found",
            ),
        );
    }
}

//! The `horizontal-pod-autoscaler`: every 15 s it reads the target's scale and tries its
//! metrics. The simulated cluster has no metrics-server, so (like a fresh kind cluster)
//! every resource metric fails: ScalingActive is False with FailedGetResourceMetric and the
//! replicas only move to honour minReplicas/maxReplicas.

use super::objects::{int_at, name, namespace, set_condition, str_at};
use crate::engine::{Controller, World};
use crate::events::EventSpec;
use crate::store::{Change, ObjectKey};
use serde_json::{Map, Value, json};
use std::time::Duration;

/// `--horizontal-pod-autoscaler-sync-period`.
const SYNC_PERIOD: Duration = Duration::from_secs(15);

const NO_RESOURCE_METRICS: &str = "unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)";

/// Writes HorizontalPodAutoscaler status.
#[derive(Debug, Default)]
pub struct AutoscalerController;

fn event(world: &mut World<'_>, hpa: &Value, type_: &str, reason: &str, message: String) {
    world.event(EventSpec {
        involved: hpa,
        field_path: None,
        type_,
        reason,
        message,
        component: None,
        host: None,
    });
}

/// The metric specs, with the API default (80% CPU) when none are given; autoscaling/v1
/// objects carry a single CPU target.
fn metrics(hpa: &Value) -> Vec<Value> {
    if let Some(cpu) = int_at(hpa, "/spec/targetCPUUtilizationPercentage") {
        return vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}),
        ];
    }
    match hpa.pointer("/spec/metrics").and_then(Value::as_array) {
        Some(m) if !m.is_empty() => m.clone(),
        _ => vec![
            json!({"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}}}),
        ],
    }
}

/// (condition reason, error) for a metric the cluster cannot serve.
fn metric_failure(metric: &Value) -> (&'static str, String) {
    let usage = |source: &str| {
        let resource = str_at(metric, &format!("/{source}/name"));
        let what = if str_at(metric, &format!("/{source}/target/type")) == "AverageValue" {
            "usage"
        } else {
            "utilization"
        };
        (
            resource.to_owned(),
            format!(
                "failed to get {resource} {what}: unable to get metrics for resource {resource}: {NO_RESOURCE_METRICS}"
            ),
        )
    };
    match str_at(metric, "/type") {
        "Resource" => {
            let (resource, err) = usage("resource");
            (
                "FailedGetResourceMetric",
                format!("failed to get {resource} resource metric value: {err}"),
            )
        }
        "ContainerResource" => {
            let (resource, err) = usage("containerResource");
            (
                "FailedGetContainerResourceMetric",
                format!("failed to get {resource} container metric value: {err}"),
            )
        }
        "Pods" => {
            let metric_name = str_at(metric, "/pods/metric/name");
            (
                "FailedGetPodsMetric",
                format!(
                    "failed to get pods metric value: unable to get metric {metric_name}: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
                ),
            )
        }
        "Object" => {
            let metric_name = str_at(metric, "/object/metric/name");
            (
                "FailedGetObjectMetric",
                format!(
                    "failed to get object metric value: unable to get metric {metric_name}: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
                ),
            )
        }
        _ => {
            let metric_name = str_at(metric, "/external/metric/name");
            (
                "FailedGetExternalMetric",
                format!(
                    "failed to get external metric value: unable to get external metric {metric_name}: unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered"
                ),
            )
        }
    }
}

impl AutoscalerController {
    /// One `reconcileAutoscaler`; returns the status to write.
    fn sync(world: &mut World<'_>, hpa: &Value) -> Map<String, Value> {
        let mut status = hpa
            .get("status")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut conditions = status
            .get("conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let now = world.timestamp();
        let cond = |t: &str, s: &str, reason: &str, message: String| json!({"type": t, "status": s, "reason": reason, "message": message});
        let target_ref = hpa
            .pointer("/spec/scaleTargetRef")
            .cloned()
            .unwrap_or_default();
        let target_type = world.registry.by_kind(
            str_at(&target_ref, "/apiVersion"),
            str_at(&target_ref, "/kind"),
        );
        let target_key = target_type
            .as_ref()
            .filter(|t| t.subresources.iter().any(|s| s == "scale"))
            .map(|t| {
                ObjectKey::new(
                    &t.group,
                    &t.plural,
                    namespace(hpa),
                    str_at(&target_ref, "/name"),
                )
            });
        let target = target_key.as_ref().and_then(|k| world.get(k));
        let (Some(target_key), Some(target)) = (target_key, target) else {
            let err = match &target_type {
                Some(t) if t.group.is_empty() => {
                    format!("{} {:?} not found", t.plural, str_at(&target_ref, "/name"))
                }
                Some(t) => format!(
                    "{}.{} {:?} not found",
                    t.plural,
                    t.group,
                    str_at(&target_ref, "/name")
                ),
                None => format!(
                    "no matches for kind {:?} in group {:?}",
                    str_at(&target_ref, "/kind"),
                    str_at(&target_ref, "/apiVersion")
                ),
            };
            event(world, hpa, "Warning", "FailedGetScale", err.clone());
            let c = cond(
                "AbleToScale",
                "False",
                "FailedGetScale",
                format!("the HPA controller was unable to get the target's current scale: {err}"),
            );
            set_condition(&mut conditions, c, &now);
            status.insert("conditions".into(), json!(conditions));
            return status;
        };
        let c = cond(
            "AbleToScale",
            "True",
            "SucceededGetScale",
            "the HPA controller was able to get the target's current scale".into(),
        );
        set_condition(&mut conditions, c, &now);
        let current = int_at(&target, "/spec/replicas").unwrap_or(1);
        let min = int_at(hpa, "/spec/minReplicas").unwrap_or(1);
        let max = int_at(hpa, "/spec/maxReplicas").unwrap_or(min);
        let mut desired = status
            .get("desiredReplicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let mut rescale = None;
        if current == 0 && min != 0 {
            desired = 0;
            let c = cond(
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero".into(),
            );
            set_condition(&mut conditions, c, &now);
        } else if current > max {
            rescale = Some((max, "Current number of replicas above Spec.MaxReplicas"));
        } else if current < min {
            rescale = Some((min, "Current number of replicas below Spec.MinReplicas"));
        } else {
            let specs = metrics(hpa);
            let failures: Vec<_> = specs.iter().map(metric_failure).collect();
            for (reason, err) in &failures {
                event(
                    world,
                    hpa,
                    "Warning",
                    reason,
                    err.split_once(": ")
                        .map_or(err.as_str(), |(_, e)| e)
                        .to_owned(),
                );
            }
            let (reason, first) = &failures[0];
            let message = format!(
                "the HPA was unable to compute the replica count: {}",
                first.split_once(": ").map_or(first.as_str(), |(_, e)| e)
            );
            set_condition(
                &mut conditions,
                cond("ScalingActive", "False", reason, message),
                &now,
            );
            event(
                world,
                hpa,
                "Warning",
                "FailedComputeMetricsReplicas",
                format!(
                    "invalid metrics ({} invalid out of {}), first error is: {first}",
                    failures.len(),
                    specs.len()
                ),
            );
        }
        if let Some((to, why)) = rescale {
            let mut scaled = (*target).clone();
            scaled["spec"]["replicas"] = json!(to);
            if world.update_scale(&target_key, scaled).is_ok() {
                let c = cond(
                    "AbleToScale",
                    "True",
                    "SucceededRescale",
                    format!("the HPA controller was able to update the target scale to {to}"),
                );
                set_condition(&mut conditions, c, &now);
                event(
                    world,
                    hpa,
                    "Normal",
                    "SuccessfulRescale",
                    format!("New size: {to}; reason: {why}"),
                );
                status.insert("lastScaleTime".into(), json!(now));
                desired = to;
            }
        }
        let mut s = Map::new();
        if let Some(t) = status.get("lastScaleTime") {
            s.insert("lastScaleTime".into(), t.clone());
        }
        s.insert("currentReplicas".into(), json!(current));
        s.insert("desiredReplicas".into(), json!(desired));
        s.insert(
            "currentMetrics".into(),
            status.get("currentMetrics").cloned().unwrap_or(Value::Null),
        );
        s.insert("conditions".into(), json!(conditions));
        s
    }
}

impl Controller for AutoscalerController {
    fn name(&self) -> &'static str {
        "horizontal-pod-autoscaler"
    }

    fn keys_for(&self, change: &Change, _world: &World<'_>) -> Vec<ObjectKey> {
        let key = &change.key;
        let spec_changed = change
            .previous
            .as_ref()
            .is_none_or(|p| p.get("spec") != change.object.get("spec"));
        if key.in_collection("autoscaling", "horizontalpodautoscalers", None) && spec_changed {
            vec![key.clone()]
        } else {
            Vec::new()
        }
    }

    fn resync(&self, world: &World<'_>) -> Vec<ObjectKey> {
        world
            .list("autoscaling", "horizontalpodautoscalers", None)
            .iter()
            .map(|h| {
                ObjectKey::new(
                    "autoscaling",
                    "horizontalpodautoscalers",
                    namespace(h),
                    name(h),
                )
            })
            .collect()
    }

    fn reconcile(&mut self, key: &ObjectKey, world: &mut World<'_>) {
        let Some(hpa) = world.get(key) else {
            return;
        };
        let status = Self::sync(world, &hpa);
        let mut next = (*hpa).clone();
        next["status"] = Value::Object(status);
        let _ = world.update_status(key, next);
        world.requeue_after(key.clone(), SYNC_PERIOD);
    }
}

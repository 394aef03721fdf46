//! A Deployment's spec as the controller reads it, with the apps/v1 defaults filled in
//! for anything missing, and the surge / unavailability arithmetic of
//! `deploymentutil.ResolveFenceposts` (surge rounds up, unavailable rounds down).

use super::meta::int_at;
use super::status::DeploymentStatus;
use crate::store::ObjectKey;
use serde_json::Value;

/// An `intstr.IntOrString` that must be an integer or a percentage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum IntOrPercent {
    Int(i64),
    Percent(i64),
    /// A string that is not a percentage (validation rejects it; the controller errors).
    Invalid,
}

impl IntOrPercent {
    pub fn parse(v: Option<&Value>, default: IntOrPercent) -> Self {
        match v {
            None | Some(Value::Null) => default,
            Some(Value::Number(n)) => n.as_i64().map_or(IntOrPercent::Invalid, IntOrPercent::Int),
            Some(Value::String(s)) => s
                .strip_suffix('%')
                .and_then(|p| p.parse().ok())
                .map_or(IntOrPercent::Invalid, IntOrPercent::Percent),
            Some(_) => IntOrPercent::Invalid,
        }
    }

    /// `intstr.GetScaledValueFromIntOrPercent`.
    pub fn scaled(self, total: i32, round_up: bool) -> i32 {
        match self {
            IntOrPercent::Int(n) => n as i32,
            IntOrPercent::Percent(p) => {
                let product = p * i64::from(total);
                let v = if round_up {
                    (product + 99).div_euclid(100)
                } else {
                    product.div_euclid(100)
                };
                v as i32
            }
            IntOrPercent::Invalid => 0,
        }
    }
}

/// `spec.strategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strategy {
    Recreate,
    RollingUpdate {
        max_surge: IntOrPercent,
        max_unavailable: IntOrPercent,
    },
}

/// `spec` of a Deployment, defaulted.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct DeploymentSpec {
    pub replicas: i32,
    pub min_ready_seconds: i32,
    /// `None` means unlimited (the field set to MaxInt32).
    pub revision_history_limit: Option<i32>,
    /// `None` means no deadline (the field set to MaxInt32).
    pub progress_deadline_seconds: Option<i32>,
    pub paused: bool,
    pub strategy: Strategy,
    pub selector: Value,
    pub template: Value,
}

fn limit(v: Option<i64>, default: i32) -> Option<i32> {
    match v.unwrap_or(i64::from(default)) {
        n if n >= i64::from(i32::MAX) => None,
        n => Some(n as i32),
    }
}

impl DeploymentSpec {
    pub fn from_object(d: &Value) -> Self {
        let twenty_five = IntOrPercent::Percent(25);
        let strategy = match d.pointer("/spec/strategy/type").and_then(Value::as_str) {
            Some("Recreate") => Strategy::Recreate,
            _ => Strategy::RollingUpdate {
                max_surge: IntOrPercent::parse(
                    d.pointer("/spec/strategy/rollingUpdate/maxSurge"),
                    twenty_five,
                ),
                max_unavailable: IntOrPercent::parse(
                    d.pointer("/spec/strategy/rollingUpdate/maxUnavailable"),
                    twenty_five,
                ),
            },
        };
        DeploymentSpec {
            replicas: int_at(d, "/spec/replicas").unwrap_or(1) as i32,
            min_ready_seconds: int_at(d, "/spec/minReadySeconds").unwrap_or(0) as i32,
            revision_history_limit: limit(int_at(d, "/spec/revisionHistoryLimit"), 10),
            progress_deadline_seconds: limit(int_at(d, "/spec/progressDeadlineSeconds"), 600),
            paused: d
                .pointer("/spec/paused")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            strategy,
            selector: d.pointer("/spec/selector").cloned().unwrap_or(Value::Null),
            template: d.pointer("/spec/template").cloned().unwrap_or(Value::Null),
        }
    }

    pub fn is_rolling(&self) -> bool {
        matches!(self.strategy, Strategy::RollingUpdate { .. })
    }

    pub fn has_progress_deadline(&self) -> bool {
        self.progress_deadline_seconds.is_some()
    }

    /// `deploymentutil.MaxSurge`.
    pub fn max_surge(&self) -> i32 {
        match self.strategy {
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } => resolve_fenceposts(max_surge, max_unavailable, self.replicas).0,
            Strategy::Recreate => 0,
        }
    }

    /// `deploymentutil.MaxUnavailable`: never more than the replicas.
    pub fn max_unavailable(&self) -> i32 {
        match self.strategy {
            Strategy::RollingUpdate {
                max_surge,
                max_unavailable,
            } if self.replicas != 0 => {
                resolve_fenceposts(max_surge, max_unavailable, self.replicas)
                    .1
                    .min(self.replicas)
            }
            _ => 0,
        }
    }

    /// `maxSurge` scaled without the fencepost rule, as `NewRSNewReplicas` reads it.
    pub fn raw_max_surge(&self) -> i32 {
        match self.strategy {
            Strategy::RollingUpdate { max_surge, .. } => max_surge.scaled(self.replicas, true),
            Strategy::Recreate => 0,
        }
    }
}

/// `deploymentutil.ResolveFenceposts`: when both resolve to zero (only through rounding,
/// since validation refuses two explicit zeros) one pod may be unavailable.
pub(super) fn resolve_fenceposts(
    surge: IntOrPercent,
    unavailable: IntOrPercent,
    desired: i32,
) -> (i32, i32) {
    let surge = surge.scaled(desired, true);
    let unavailable = unavailable.scaled(desired, false);
    if surge == 0 && unavailable == 0 {
        (0, 1)
    } else {
        (surge, unavailable)
    }
}

/// The Deployment being synced: its stored object (with local edits to annotations and
/// status awaiting a write), the parsed spec, the working status, and the `metav1.Time`
/// new conditions get.
#[derive(Debug, Clone)]
pub(super) struct Dep {
    pub key: ObjectKey,
    pub obj: Value,
    pub spec: DeploymentSpec,
    pub status: DeploymentStatus,
    pub now: String,
}

impl Dep {
    pub fn new(key: ObjectKey, obj: Value, now: &str) -> Self {
        Dep {
            key,
            now: now.to_owned(),
            spec: DeploymentSpec::from_object(&obj),
            status: DeploymentStatus::from_json(obj.get("status").unwrap_or(&Value::Null)),
            obj,
        }
    }

    pub fn name(&self) -> &str {
        super::meta::name(&self.obj)
    }

    pub fn uid(&self) -> &str {
        super::meta::uid(&self.obj)
    }

    pub fn generation(&self) -> i64 {
        int_at(&self.obj, "/metadata/generation").unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(surge: &Value, unavailable: &Value, replicas: i32, want: (i32, i32)) {
        let d = json!({"spec": {"replicas": replicas, "strategy": {"type": "RollingUpdate",
            "rollingUpdate": {"maxSurge": surge, "maxUnavailable": unavailable}}}});
        let spec = DeploymentSpec::from_object(&d);
        assert_eq!(
            (spec.max_surge(), spec.max_unavailable()),
            want,
            "{surge} / {unavailable} of {replicas}"
        );
    }

    #[test]
    fn resolves_surge_up_and_unavailable_down() {
        case(&json!("25%"), &json!("25%"), 3, (1, 0));
        case(&json!("25%"), &json!("25%"), 10, (3, 2));
        case(&json!(1), &json!(0), 3, (1, 0));
        case(&json!(0), &json!(1), 3, (0, 1));
        case(&json!("0%"), &json!("10%"), 5, (0, 1));
        case(&json!(2), &json!(5), 3, (2, 3));
        case(&json!("50%"), &json!("50%"), 1, (1, 0));
        case(&json!("bogus"), &json!(1), 4, (0, 1));
        case(&json!("25%"), &json!("25%"), 0, (0, 0));
    }

    #[test]
    fn missing_fields_take_apps_v1_defaults() {
        let spec = DeploymentSpec::from_object(
            &json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}}),
        );
        assert_eq!(spec.replicas, 1);
        assert_eq!(spec.revision_history_limit, Some(10));
        assert_eq!(spec.progress_deadline_seconds, Some(600));
        assert!(spec.is_rolling() && !spec.paused);
        assert_eq!((spec.max_surge(), spec.max_unavailable()), (1, 0));
        let recreate = DeploymentSpec::from_object(&json!({"spec": {"replicas": 4,
            "strategy": {"type": "Recreate"}, "progressDeadlineSeconds": i32::MAX}}));
        assert_eq!((recreate.max_surge(), recreate.max_unavailable()), (0, 0));
        assert!(!recreate.has_progress_deadline());
    }
}

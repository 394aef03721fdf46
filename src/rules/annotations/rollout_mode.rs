//! How much of a Deployment rollout must finish before it counts (krane's
//! `required-rollout`), and Kubernetes' own arithmetic for maxUnavailable.

use crate::rules::error::RulesError;
use crate::rules::target::Target;
use k8s_openapi::api::apps::v1::DeploymentStrategy;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// Our annotation; wins over krane's when both are set.
pub const REQUIRED_ROLLOUT_ANNOTATION: &str = "deploy-action.io/required-rollout";
pub const KRANE_REQUIRED_ROLLOUT_ANNOTATION: &str = "krane.shopify.io/required-rollout";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequiredRollout {
    /// Every replica updated and available, no old pods left (the default).
    Full,
    /// Done once the new ReplicaSet exists.
    None,
    /// New ReplicaSet available >= replicas - maxUnavailable.
    MaxUnavailable,
    /// New ReplicaSet available >= ceil(N% of replicas).
    Percent(u32),
}

impl RequiredRollout {
    pub fn parse(value: &str) -> Option<Self> {
        match value.trim() {
            "full" => Some(RequiredRollout::Full),
            "none" => Some(RequiredRollout::None),
            "maxUnavailable" => Some(RequiredRollout::MaxUnavailable),
            v => v
                .strip_suffix('%')
                .and_then(|n| n.parse().ok())
                .filter(|n| *n <= 100)
                .map(RequiredRollout::Percent),
        }
    }

    /// The mode a target asks for (`full` when it asks for none).
    pub fn for_target(target: &Target) -> Result<Self, RulesError> {
        let Some((annotation, value)) = target.annotation(&[
            REQUIRED_ROLLOUT_ANNOTATION,
            KRANE_REQUIRED_ROLLOUT_ANNOTATION,
        ]) else {
            return Ok(RequiredRollout::Full);
        };
        RequiredRollout::parse(value).ok_or_else(|| RulesError::InvalidRequiredRollout {
            annotation: annotation.to_owned(),
            value: value.to_owned(),
        })
    }

    /// New-ReplicaSet pods that must be available, for the partial modes.
    pub fn min_available(
        self,
        strategy: Option<&DeploymentStrategy>,
        replicas: i32,
    ) -> Option<i32> {
        match self {
            RequiredRollout::MaxUnavailable => Some(replicas - max_unavailable(strategy, replicas)),
            RequiredRollout::Percent(p) => Some(percent_of(p.into(), replicas, true)),
            RequiredRollout::Full | RequiredRollout::None => None,
        }
    }
}

/// maxUnavailable resolved as the deployment controller does (`ResolveFenceposts`):
/// percentages of maxUnavailable round down, of maxSurge up, and if both come to zero one
/// pod may be unavailable. Recreate replaces everything at once, so nothing is spared.
pub fn max_unavailable(strategy: Option<&DeploymentStrategy>, replicas: i32) -> i32 {
    if strategy.and_then(|s| s.type_.as_deref()) == Some("Recreate") {
        return 0;
    }
    let rolling = strategy.and_then(|s| s.rolling_update.as_ref());
    let quarter = IntOrString::String("25%".to_owned());
    let surge = scaled(
        rolling
            .and_then(|r| r.max_surge.as_ref())
            .unwrap_or(&quarter),
        replicas,
        true,
    );
    let unavailable = scaled(
        rolling
            .and_then(|r| r.max_unavailable.as_ref())
            .unwrap_or(&quarter),
        replicas,
        false,
    );
    if surge == 0 && unavailable == 0 {
        1
    } else {
        unavailable.min(replicas)
    }
}

fn scaled(value: &IntOrString, total: i32, round_up: bool) -> i32 {
    match value {
        IntOrString::Int(n) => *n,
        IntOrString::String(s) => {
            let pct = s.trim_end_matches('%').parse().unwrap_or(0);
            percent_of(pct, total, round_up)
        }
    }
}

fn percent_of(pct: u64, total: i32, round_up: bool) -> i32 {
    let product = pct * u64::try_from(total).unwrap_or(0);
    let v = if round_up {
        product.div_ceil(100)
    } else {
        product / 100
    };
    i32::try_from(v).unwrap_or(i32::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::snapshot::typed;
    use serde_json::json;

    #[track_caller]
    fn case(strategy: &serde_json::Value, replicas: i32, expected_max_unavailable: i32) {
        let strategy: DeploymentStrategy = typed(strategy).unwrap();
        assert_eq!(
            max_unavailable(Some(&strategy), replicas),
            expected_max_unavailable
        );
    }

    #[test]
    fn max_unavailable_rounds_down_and_surge_up_like_kubernetes() {
        let rolling = |mu: serde_json::Value, ms: serde_json::Value| json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": mu, "maxSurge": ms}});
        case(&rolling(json!("25%"), json!("25%")), 3, 0);
        case(&rolling(json!("25%"), json!("25%")), 10, 2);
        case(&rolling(json!("50%"), json!(0)), 5, 2);
        case(&rolling(json!(2), json!(1)), 10, 2);
        // 10% of 3 rounds down to 0 and 0% surge is 0: the controller allows one.
        case(&rolling(json!("10%"), json!("0%")), 3, 1);
        case(&json!({"type": "Recreate"}), 4, 0);
        assert_eq!(max_unavailable(None, 8), 2);
    }

    #[test]
    fn modes_parse_and_percentages_round_up() {
        assert_eq!(
            RequiredRollout::parse("90%"),
            Some(RequiredRollout::Percent(90))
        );
        assert_eq!(
            RequiredRollout::parse("maxUnavailable"),
            Some(RequiredRollout::MaxUnavailable)
        );
        assert_eq!(RequiredRollout::parse("150%"), None);
        assert_eq!(RequiredRollout::parse("most"), None);
        assert_eq!(RequiredRollout::Percent(50).min_available(None, 3), Some(2));
        assert_eq!(
            RequiredRollout::Percent(100).min_available(None, 3),
            Some(3)
        );
        assert_eq!(
            RequiredRollout::MaxUnavailable.min_available(None, 10),
            Some(8)
        );
        assert_eq!(RequiredRollout::Full.min_available(None, 10), None);

        let ours = Target::new("apps/v1", "Deployment", Some("shop"), "web")
            .with_annotation(KRANE_REQUIRED_ROLLOUT_ANNOTATION, "none")
            .with_annotation(REQUIRED_ROLLOUT_ANNOTATION, "75%");
        assert_eq!(
            RequiredRollout::for_target(&ours).unwrap(),
            RequiredRollout::Percent(75)
        );
        let bad = Target::new("apps/v1", "Deployment", Some("shop"), "web")
            .with_annotation(KRANE_REQUIRED_ROLLOUT_ANNOTATION, "most");
        assert!(
            RequiredRollout::for_target(&bad)
                .unwrap_err()
                .to_string()
                .contains("\"most\"")
        );
    }
}

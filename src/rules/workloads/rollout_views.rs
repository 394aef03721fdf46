//! What the Deployment rule reads of a Deployment and its ReplicaSets, and nothing else.
//! It is the most re-assessed rule (again on every change of one of its pods), and with
//! whole metadata maps and every condition built on each pass, reading the Deployment and
//! its ReplicaSets was 5.3% of a deploy's profile samples at 10,000 pods.

use crate::rules::borrowed::Borrowed;
use k8s_openapi::api::apps::v1::{DeploymentCondition, DeploymentStrategy, ReplicaSet};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use std::fmt;

/// The annotation the Deployment controller numbers its rollouts with, on the Deployment
/// and on each ReplicaSet.
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";

/// A Deployment as the rule reads it: not its pod template (the ReplicaSets' pods tell
/// what runs), and of its conditions only the False ones, the only ones a rule reads.
#[derive(Debug, Default, serde::Deserialize)]
pub struct DeploymentView {
    #[serde(default)]
    pub metadata: MetaView,
    pub spec: Option<SpecView>,
    pub status: Option<StatusView>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpecView {
    pub replicas: Option<i32>,
    pub strategy: Option<DeploymentStrategy>,
    pub progress_deadline_seconds: Option<i32>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    pub observed_generation: Option<i64>,
    pub replicas: Option<i32>,
    pub updated_replicas: Option<i32>,
    pub available_replicas: Option<i32>,
    /// The conditions whose status is `False`.
    #[serde(default, rename = "conditions", deserialize_with = "false_conditions")]
    pub false_conditions: Vec<DeploymentCondition>,
}

/// A ReplicaSet as the rule reads it: names, revision and available replicas.
#[derive(Debug, Default, serde::Deserialize)]
pub struct ReplicaSetView {
    #[serde(default)]
    pub metadata: MetaView,
    pub status: Option<ReplicaSetStatusView>,
}

#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicaSetStatusView {
    pub available_replicas: Option<i32>,
}

/// Filed and looked up as the ReplicaSet it is read from.
impl k8s_openapi::Resource for ReplicaSetView {
    const API_VERSION: &'static str = ReplicaSet::API_VERSION;
    const GROUP: &'static str = ReplicaSet::GROUP;
    const KIND: &'static str = ReplicaSet::KIND;
    const VERSION: &'static str = ReplicaSet::VERSION;
    const URL_PATH_SEGMENT: &'static str = ReplicaSet::URL_PATH_SEGMENT;
    type Scope = <ReplicaSet as k8s_openapi::Resource>::Scope;
}

/// The metadata the rule reads: the revision annotation as a number (absent or not a
/// number reads as 0, so 10 sorts after 9 and an unnumbered set first).
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub struct MetaView {
    pub name: Option<String>,
    pub uid: Option<String>,
    pub generation: Option<i64>,
    #[serde(default, rename = "annotations", deserialize_with = "revision")]
    pub revision: u64,
}

/// The `conditions` list, keeping those whose status is `False` (`null` reads as none).
fn false_conditions<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<DeploymentCondition>, D::Error> {
    let mut all: Vec<DeploymentCondition> =
        serde::Deserialize::deserialize(d).map(Option::unwrap_or_default)?;
    all.retain(|c| c.status == "False");
    Ok(all)
}

/// The revision annotation of an `annotations` map, without keeping the map or copying
/// its keys.
fn revision<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    struct Revision;
    impl<'de> Visitor<'de> for Revision {
        type Value = u64;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a map of annotations")
        }
        fn visit_unit<E>(self) -> Result<u64, E> {
            Ok(0)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<u64, A::Error> {
            let mut revision = 0;
            while let Some(key) = map.next_key_seed(Borrowed)? {
                if key == REVISION_ANNOTATION {
                    revision = map.next_value_seed(Borrowed)?.parse().unwrap_or(0);
                } else {
                    map.next_value::<IgnoredAny>()?;
                }
            }
            Ok(revision)
        }
    }
    d.deserialize_any(Revision)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deployment_view_keeps_the_revision_and_the_false_conditions() {
        let text = json!({
            "metadata": {"name": "web", "uid": "d-1", "generation": 3,
                "annotations": {"a": "b", "deployment.kubernetes.io/revision": "12",
                    "kubectl.kubernetes.io/restartedAt": "x"},
                "labels": {"app": "web"}},
            "spec": {"replicas": 4, "progressDeadlineSeconds": 60,
                "template": {"spec": {"containers": [{"name": "web", "image": "web:1"}]}}},
            "status": {"observedGeneration": 3, "replicas": 4, "updatedReplicas": 4,
                "availableReplicas": 2, "conditions": [
                    {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                    {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
                        "message": "timed out"}]}})
        .to_string();
        let view: DeploymentView = serde_json::from_str(&text).unwrap();
        assert_eq!(view.metadata.revision, 12);
        assert_eq!(view.metadata.generation, Some(3));
        assert_eq!(view.metadata.uid.as_deref(), Some("d-1"));
        let status = view.status.unwrap();
        assert_eq!(
            (status.observed_generation, status.available_replicas),
            (Some(3), Some(2))
        );
        let kept: Vec<_> = status
            .false_conditions
            .iter()
            .map(|c| c.type_.as_str())
            .collect();
        assert_eq!(kept, ["Progressing"]);
        assert_eq!(view.spec.unwrap().progress_deadline_seconds, Some(60));
    }

    #[test]
    fn a_revision_absent_null_or_not_a_number_reads_as_0() {
        for annotations in [
            json!(null),
            json!({}),
            json!({"deployment.kubernetes.io/revision": "two"}),
        ] {
            let text =
                json!({"metadata": {"name": "rs", "annotations": annotations}, "status": null});
            let view: ReplicaSetView = serde_json::from_str(&text.to_string()).unwrap();
            assert_eq!(view.metadata.revision, 0, "{annotations}");
        }
        let view: ReplicaSetView = serde_json::from_str(r#"{"metadata":{}}"#).unwrap();
        assert_eq!((view.metadata.revision, view.status.is_none()), (0, true));
    }

    #[test]
    fn null_conditions_read_as_none() {
        let view: DeploymentView =
            serde_json::from_str(r#"{"status":{"conditions":null,"replicas":1}}"#).unwrap();
        assert!(view.status.unwrap().false_conditions.is_empty());
    }
}

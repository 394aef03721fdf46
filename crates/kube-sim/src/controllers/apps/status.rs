//! `DeploymentStatus` and its conditions as typed values, read from and written back to
//! JSON in the API server's field order (zero counts omitted, as `omitempty` does), with
//! the condition rules of `deploymentutil.SetDeploymentCondition`.

use super::meta::{int_at, str_at};
use serde_json::{Map, Value, json};

/// One `DeploymentCondition`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Condition {
    pub type_: String,
    pub status: String,
    pub last_update_time: String,
    pub last_transition_time: String,
    pub reason: String,
    pub message: String,
}

impl Condition {
    /// `deploymentutil.NewDeploymentCondition`: both times are now.
    pub fn new(
        type_: &str,
        status: &str,
        reason: &str,
        message: impl Into<String>,
        now: &str,
    ) -> Self {
        Condition {
            type_: type_.into(),
            status: status.into(),
            last_update_time: now.into(),
            last_transition_time: now.into(),
            reason: reason.into(),
            message: message.into(),
        }
    }

    fn from_json(v: &Value) -> Self {
        Condition {
            type_: str_at(v, "/type").into(),
            status: str_at(v, "/status").into(),
            last_update_time: str_at(v, "/lastUpdateTime").into(),
            last_transition_time: str_at(v, "/lastTransitionTime").into(),
            reason: str_at(v, "/reason").into(),
            message: str_at(v, "/message").into(),
        }
    }

    fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("type".into(), json!(self.type_));
        m.insert("status".into(), json!(self.status));
        for (k, v) in [
            ("lastUpdateTime", &self.last_update_time),
            ("lastTransitionTime", &self.last_transition_time),
            ("reason", &self.reason),
            ("message", &self.message),
        ] {
            if !v.is_empty() {
                m.insert(k.into(), json!(v));
            }
        }
        Value::Object(m)
    }
}

/// `apps/v1 DeploymentStatus` (terminatingReplicas is behind a gate that is off in 1.33).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct DeploymentStatus {
    pub observed_generation: i64,
    pub replicas: i32,
    pub updated_replicas: i32,
    pub ready_replicas: i32,
    pub available_replicas: i32,
    pub unavailable_replicas: i32,
    pub conditions: Vec<Condition>,
    pub collision_count: Option<i64>,
}

impl DeploymentStatus {
    pub fn from_json(v: &Value) -> Self {
        let n = |k: &str| int_at(v, &format!("/{k}")).unwrap_or(0) as i32;
        DeploymentStatus {
            observed_generation: int_at(v, "/observedGeneration").unwrap_or(0),
            replicas: n("replicas"),
            updated_replicas: n("updatedReplicas"),
            ready_replicas: n("readyReplicas"),
            available_replicas: n("availableReplicas"),
            unavailable_replicas: n("unavailableReplicas"),
            conditions: v
                .get("conditions")
                .and_then(Value::as_array)
                .map(|c| c.iter().map(Condition::from_json).collect())
                .unwrap_or_default(),
            collision_count: int_at(v, "/collisionCount"),
        }
    }

    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        if self.observed_generation != 0 {
            m.insert("observedGeneration".into(), json!(self.observed_generation));
        }
        for (k, v) in [
            ("replicas", self.replicas),
            ("updatedReplicas", self.updated_replicas),
            ("readyReplicas", self.ready_replicas),
            ("availableReplicas", self.available_replicas),
            ("unavailableReplicas", self.unavailable_replicas),
        ] {
            if v != 0 {
                m.insert(k.into(), json!(v));
            }
        }
        if !self.conditions.is_empty() {
            m.insert(
                "conditions".into(),
                self.conditions.iter().map(Condition::to_json).collect(),
            );
        }
        if let Some(c) = self.collision_count {
            m.insert("collisionCount".into(), json!(c));
        }
        Value::Object(m)
    }

    pub fn condition(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// `SetDeploymentCondition`: a condition with the same status and reason is left as is;
    /// the transition time survives a change that keeps the status; a changed condition
    /// moves to the end of the list.
    pub fn set_condition(&mut self, mut cond: Condition) {
        if let Some(current) = self.condition(&cond.type_) {
            if current.status == cond.status && current.reason == cond.reason {
                return;
            }
            if current.status == cond.status {
                cond.last_transition_time
                    .clone_from(&current.last_transition_time);
            }
        }
        self.remove_condition(&cond.type_.clone());
        self.conditions.push(cond);
    }

    pub fn remove_condition(&mut self, type_: &str) {
        self.conditions.retain(|c| c.type_ != type_);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_a_real_status_and_omits_zero_counts() {
        let real = json!({
            "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3,
            "availableReplicas": 3,
            "conditions": [
                {"type": "Available", "status": "True", "lastUpdateTime": "2026-01-01T00:00:05Z",
                 "lastTransitionTime": "2026-01-01T00:00:05Z", "reason": "MinimumReplicasAvailable",
                 "message": "Deployment has minimum availability."},
                {"type": "Progressing", "status": "True", "lastUpdateTime": "2026-01-01T00:01:05Z",
                 "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "NewReplicaSetAvailable",
                 "message": "ReplicaSet \"web-7d4b9c8f5d\" has successfully progressed."}]});
        let status = DeploymentStatus::from_json(&real);
        assert_eq!(status.unavailable_replicas, 0);
        assert_eq!(status.to_json(), real);
        assert_eq!(DeploymentStatus::default().to_json(), json!({}));
    }

    #[test]
    fn set_condition_keeps_transition_time_while_status_holds() {
        let mut s = DeploymentStatus::default();
        s.set_condition(Condition::new(
            "Progressing",
            "True",
            "NewReplicaSetCreated",
            "Created",
            "t0",
        ));
        s.set_condition(Condition::new(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "no",
            "t0",
        ));
        s.set_condition(Condition::new(
            "Progressing",
            "True",
            "NewReplicaSetCreated",
            "again",
            "t1",
        ));
        assert_eq!(s.condition("Progressing").unwrap().message, "Created");
        s.set_condition(Condition::new(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            "progressing",
            "t2",
        ));
        let p = s.condition("Progressing").unwrap();
        assert_eq!(
            (p.last_update_time.as_str(), p.last_transition_time.as_str()),
            ("t2", "t0")
        );
        assert_eq!(s.conditions.last().unwrap().type_, "Progressing");
        s.set_condition(Condition::new(
            "Progressing",
            "False",
            "ProgressDeadlineExceeded",
            "late",
            "t3",
        ));
        assert_eq!(
            s.condition("Progressing").unwrap().last_transition_time,
            "t3"
        );
        s.remove_condition("Available");
        assert_eq!(s.conditions.len(), 1);
    }
}

//! Rollout rules a CRD declares for its instances (krane's
//! `instance-rollout-conditions` annotation): `true` for krane's defaults, or JSON naming
//! success and failure paths in the instance.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::json_path::{JsonPath, text};
use crate::rules::error::RulesError;
use crate::rules::snapshot::Snapshot;
use crate::vocab::verdict::Reason;
use serde::Deserialize;
use serde_json::Value;

pub const ROLLOUT_CONDITIONS_ANNOTATION: &str = "krane.shopify.io/instance-rollout-conditions";

#[derive(Deserialize)]
struct RawConditions {
    success_conditions: Vec<RawQuery>,
    #[serde(default)]
    failure_conditions: Vec<RawQuery>,
}

#[derive(Deserialize)]
struct RawQuery {
    path: String,
    value: Value,
    error_msg_path: Option<String>,
    custom_error_msg: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Query {
    path: JsonPath,
    value: String,
    error_msg_path: Option<JsonPath>,
    custom_error_msg: Option<String>,
}

impl Query {
    fn holds(&self, obj: &Value) -> bool {
        self.path.first(obj).map(text).as_deref() == Some(self.value.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutConditions {
    success: Vec<Query>,
    failure: Vec<Query>,
}

impl RolloutConditions {
    /// krane's defaults: Ready=True succeeds, Failed=True fails with its message.
    pub fn krane_default() -> Self {
        let path = |t: &str, field: &str| {
            JsonPath::parse(&format!(
                "$.status.conditions[?(@.type == \"{t}\")].{field}"
            ))
            .expect("static path")
        };
        RolloutConditions {
            success: vec![Query {
                path: path("Ready", "status"),
                value: "True".to_owned(),
                error_msg_path: None,
                custom_error_msg: None,
            }],
            failure: vec![Query {
                path: path("Failed", "status"),
                value: "True".to_owned(),
                error_msg_path: Some(path("Failed", "message")),
                custom_error_msg: None,
            }],
        }
    }

    /// Reads the annotation value: `true`, `false` (`None`), or the JSON form.
    pub fn parse(value: &str) -> Result<Option<Self>, RulesError> {
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => return Ok(Some(RolloutConditions::krane_default())),
            "false" => return Ok(None),
            _ => {}
        }
        let raw: RawConditions =
            serde_json::from_str(value).map_err(|source| RulesError::RolloutConditionsJson {
                annotation: ROLLOUT_CONDITIONS_ANNOTATION.to_owned(),
                source,
            })?;
        let convert = |queries: Vec<RawQuery>| -> Result<Vec<Query>, RulesError> {
            queries
                .into_iter()
                .map(|q| {
                    Ok(Query {
                        path: JsonPath::parse(&q.path)?,
                        value: text(&q.value),
                        error_msg_path: q
                            .error_msg_path
                            .as_deref()
                            .map(JsonPath::parse)
                            .transpose()?,
                        custom_error_msg: q.custom_error_msg,
                    })
                })
                .collect()
        };
        Ok(Some(RolloutConditions {
            success: convert(raw.success_conditions)?,
            failure: convert(raw.failure_conditions)?,
        }))
    }

    pub fn assess(&self, obj: &Value) -> Assessment {
        if let Some(q) = self.failure.iter().find(|q| q.holds(obj)) {
            let from_path = q
                .error_msg_path
                .as_ref()
                .and_then(|p| p.first(obj))
                .map(text);
            let message = q
                .custom_error_msg
                .clone()
                .or(from_path)
                .unwrap_or_else(|| format!("{} is {:?}", q.path.as_str(), q.value));
            return Assessment::failed(Reason::ConditionFailed, message);
        }
        match self.success.iter().find(|q| !q.holds(obj)) {
            None => {
                let met: Vec<String> = self
                    .success
                    .iter()
                    .map(|q| format!("{} is {:?}", q.path.as_str(), q.value))
                    .collect();
                Assessment::succeeded(met.join(", "))
            }
            Some(q) => {
                let now = q
                    .path
                    .first(obj)
                    .map_or_else(|| "unset".to_owned(), |v| format!("{:?}", text(v)));
                Assessment::not_ready(format!(
                    "waiting for {} to be {:?} (now {now})",
                    q.path.as_str(),
                    q.value
                ))
            }
        }
    }
}

/// The CRD that defines `group`/`kind`, when the snapshot has it.
pub fn crd_of(snapshot: &Snapshot, group: &str, kind: &str) -> Option<Value> {
    snapshot
        .list_raw("apiextensions.k8s.io", "CustomResourceDefinition", None)
        .find(|c| {
            c.at("/spec/group").and_then(Value::as_str) == Some(group)
                && c.at("/spec/names/kind").and_then(Value::as_str) == Some(kind)
        })
}

/// The rollout conditions `crd` declares for its instances, if it carries the annotation.
pub fn declared(crd: &Value) -> Option<Result<RolloutConditions, RulesError>> {
    let value = crd
        .at("/metadata/annotations")?
        .get(ROLLOUT_CONDITIONS_ANNOTATION)?
        .as_str()?;
    RolloutConditions::parse(value).transpose()
}

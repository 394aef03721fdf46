//! kstatus' generation rule: a status written for an older generation says nothing about
//! the spec as applied. Applied only when the controller reports `observedGeneration`
//! (many do not, and would otherwise never finish).

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::conditions::conditions;
use crate::vocab::verdict::Reason;
use serde_json::Value;

/// A wait while `status.observedGeneration` is behind `metadata.generation`. Some
/// controllers write it as a string (Argo Rollouts): a number in a string counts, a hash
/// says nothing. The message adds what the controller last said was wrong or holding it
/// (a Ready that is not True, `ReconciliationPaused=True`), which is often about the new
/// generation already (Flux moves observedGeneration only on success).
pub fn lag(obj: &Value) -> Option<Assessment> {
    let generation = obj.at("/metadata/generation").and_then(Value::as_i64)?;
    let observed = obj.at("/status/observedGeneration").and_then(|v| {
        v.as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
    })?;
    if observed >= generation {
        return None;
    }
    let mut message = format!(
        "waiting for the controller to observe generation {generation} (status is for {observed})"
    );
    let troubles: Vec<String> = conditions(obj)
        .iter()
        .filter(|c| {
            let unwell = !c.is("True") && matches!(c.type_, "Ready" | "Available" | "Synced");
            // Being held is the likeliest reason a status stays behind.
            let held = c.is("True") && (c.type_.contains("Paused") || c.type_ == "Stalled");
            unwell || held
        })
        .map(super::conditions::Condition::describe)
        .collect();
    if !troubles.is_empty() {
        message.push_str(&format!("; it last reported {}", troubles.join("; ")));
    }
    Some(Assessment::pending(Reason::NotReconciled, message))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn waits_for_the_generation_and_says_what_was_last_reported() {
        let obj = |observed: Value, conditions: Value| {
            json!({"metadata": {"name": "podinfo", "generation": 3},
                "status": {"observedGeneration": observed, "conditions": conditions}})
        };
        assert_eq!(lag(&obj(json!(3), json!([]))), None);
        assert_eq!(lag(&obj(json!("7bcdbf7bd9"), json!([]))), None);
        assert_eq!(
            lag(&obj(
                json!("2"),
                json!([{"type": "Ready", "status": "True"}])
            )),
            Some(Assessment::pending(
                Reason::NotReconciled,
                "waiting for the controller to observe generation 3 (status is for 2)"
            ))
        );
        assert_eq!(
            lag(&obj(
                json!(2),
                json!([{"type": "Reconciling", "status": "True", "reason": "Progressing"},
                    {"type": "Ready", "status": "False", "reason": "AuthenticationFailed",
                     "message": "failed to checkout: authentication required"}])
            ))
            .unwrap()
            .message(),
            "waiting for the controller to observe generation 3 (status is for 2); it last reported Ready=False (AuthenticationFailed): failed to checkout: authentication required"
        );
        assert_eq!(
            lag(&obj(
                json!(2),
                json!([{"type": "ReconciliationPaused", "status": "True"}, {"type": "Ready", "status": "True"}])
            ))
            .unwrap()
            .message(),
            "waiting for the controller to observe generation 3 (status is for 2); it last reported ReconciliationPaused=True"
        );
        // Without a generation to compare, nothing is known to lag.
        assert_eq!(
            lag(&json!({"metadata": {"name": "x"}, "status": {"observedGeneration": 1}})),
            None
        );
    }
}

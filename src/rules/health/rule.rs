//! A health rule for one group/kind, and how it judges an object: paused-as-declared
//! first, then the generation the status is for, then failed clauses (terminal by the
//! controller's own word), waiting ones, done ones; an object none of them describes is
//! still at work, and its message says what its status shows.

use crate::pointer::Pointer;
use crate::rules::assessment::Assessment;
use crate::rules::custom::conditions::conditions;
use crate::rules::custom::generation;
use crate::rules::health::expr::{Expr, Vars};
use crate::vocab::verdict::Reason;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// One `when` with what to say when it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Clause {
    pub when: Expr,
    /// A CEL expression giving the message; without one, the `when` is quoted.
    pub message: Option<Expr>,
    /// The word the verdict carries: a failure's for failed clauses (`condition_failed`
    /// unless the rule says), a timeout's for waiting ones (`not_ready` unless it says).
    pub reason: Reason,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HealthRule {
    pub group: String,
    pub kind: String,
    /// Where the rule was written (`rules.yaml:12`, `bundled cert-manager.yaml:3`, the
    /// CRD's annotation), named when it cannot be evaluated.
    pub origin: String,
    /// Named expressions, bound as `variables.<name>` before any clause is read.
    pub variables: Vec<(String, Expr)>,
    /// Done because the manifest asks the controller to hold off (paused, suspended,
    /// hibernated): read before anything else, as a paused controller may write nothing,
    /// not even the generation it saw.
    pub paused: Vec<Clause>,
    /// Whether the object's `status.observedGeneration` must catch up before the other
    /// clauses are read.
    pub generation: Generation,
    pub failed: Vec<Clause>,
    pub waiting: Vec<Clause>,
    pub done: Vec<Clause>,
}

/// Where a controller says which generation its status is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Generation {
    /// `status.observedGeneration` (kstatus): a status behind `metadata.generation` is a
    /// wait (`not_reconciled`) before any failed, waiting or done clause is read.
    #[default]
    Status,
    /// On each condition (Flux, cert-manager): the rule's clauses compare it themselves,
    /// because `status.observedGeneration` moves only on success.
    Conditions,
}

/// How a clause list ends an assessment.
#[derive(Clone, Copy)]
enum Ending {
    Failed,
    Waiting,
    Done,
}

impl HealthRule {
    /// Judges `obj`; `manifest` is the object as this deploy declared it, when known (a
    /// rule tells "paused as declared" from "paused by the controller" with it).
    pub fn assess(&self, obj: &Value, manifest: Option<&Value>) -> Assessment {
        let mut vars = Vars::new(obj, manifest);
        vars.bind(&self.variables);
        let mut errors = Vec::new();
        for clause in &self.paused {
            match clause.when.holds(&vars) {
                Ok(true) => return clause.conclude(Ending::Done, &vars),
                Ok(false) => {}
                Err(e) => errors.push(format!("{}: {e}", clause.when.source())),
            }
        }
        if self.generation == Generation::Status
            && let Some(wait) = generation::lag(obj)
        {
            return wait;
        }
        for (clauses, ending) in [
            (&self.failed, Ending::Failed),
            (&self.waiting, Ending::Waiting),
            (&self.done, Ending::Done),
        ] {
            for clause in clauses {
                match clause.when.holds(&vars) {
                    Ok(true) => return clause.conclude(ending, &vars),
                    Ok(false) => {}
                    Err(e) => errors.push(format!("{}: {e}", clause.when.source())),
                }
            }
        }
        if !has_status(obj) {
            return Assessment::pending(
                Reason::NotReconciled,
                "no controller has reported on it yet (it has no status)",
            );
        }
        let shown = status_summary(obj);
        match errors.first() {
            // An error is usually a field the controller has not written yet: still a
            // wait, but one whose message shows the rule could not be read through.
            Some(e) if shown.is_empty() => Assessment::not_ready(format!(
                "its health rule ({}) cannot read it yet: {e}",
                self.origin
            )),
            _ if shown.is_empty() => Assessment::not_ready(format!(
                "none of its health rule's done conditions holds yet ({})",
                self.origin
            )),
            _ => Assessment::not_ready(shown),
        }
    }
}

impl Clause {
    fn conclude(&self, ending: Ending, vars: &Vars) -> Assessment {
        let message = self
            .message
            .as_ref()
            .and_then(|m| m.text(vars).ok())
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| self.when.source().to_owned());
        match ending {
            Ending::Failed => Assessment::failed(self.reason, message),
            Ending::Waiting => Assessment::pending(self.reason, message),
            Ending::Done => Assessment::succeeded(message),
        }
    }
}

fn has_status(obj: &Value) -> bool {
    obj.get("status")
        .is_some_and(|s| s.as_object().is_none_or(|m| !m.is_empty()))
}

/// What the status says, for a wait no clause describes: its conditions, else its phase.
fn status_summary(obj: &Value) -> String {
    let said: Vec<String> = conditions(obj)
        .iter()
        .map(super::super::custom::conditions::Condition::describe)
        .collect();
    if !said.is_empty() {
        return said.join("; ");
    }
    obj.at("/status/phase")
        .and_then(Value::as_str)
        .map(|p| format!("status.phase is {p}"))
        .unwrap_or_default()
}

/// Rules by group and kind; one added later replaces one for the same kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HealthRules {
    by_kind: BTreeMap<(String, String), Arc<HealthRule>>,
}

impl HealthRules {
    pub fn extend(&mut self, rules: impl IntoIterator<Item = HealthRule>) {
        for rule in rules {
            self.by_kind
                .insert((rule.group.clone(), rule.kind.clone()), Arc::new(rule));
        }
    }

    pub fn get(&self, group: &str, kind: &str) -> Option<&Arc<HealthRule>> {
        self.by_kind.get(&(group.to_owned(), kind.to_owned()))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<HealthRule>> {
        self.by_kind.values()
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::health::load::parse;
    use crate::vocab::verdict::Reason;
    use serde_json::{Value, json};

    const RULE: &str = r#"
rules:
  - group: acme.io
    kind: Widget
    variables:
      - name: ready
        expression: "status.?conditions.orValue([]).filter(c, c.type == 'Ready')"
      - name: isReady
        expression: "size(variables.ready) > 0 && variables.ready[0].status == 'True'"
    paused:
      - when: "manifest.?spec.?paused.orValue(false)"
        message: "'paused as declared'"
    failed:
      - when: "size(variables.ready) > 0 && variables.ready[0].?reason.orValue('') == 'InvalidSpec'"
        message: "describe(variables.ready[0])"
    waiting:
      - when: "has(status.shards) && status.shards < spec.shards"
        reason: readiness_failing
        message: "string(status.shards) + ' of ' + string(spec.shards) + ' shards'"
    done:
      - when: "variables.isReady"
        message: "describe(variables.ready[0])"
"#;

    fn widget(generation: i64, spec: &Value, status: &Value) -> Value {
        json!({"apiVersion": "acme.io/v1", "kind": "Widget",
            "metadata": {"name": "blue", "namespace": "shop", "generation": generation},
            "spec": spec, "status": status})
    }

    #[track_caller]
    fn judged(rules: &str, obj: &Value, manifest: Option<&Value>) -> (Option<Reason>, String) {
        let rule = parse(rules, "rules.yaml").unwrap().remove(0);
        let got = rule.assess(obj, manifest);
        (got.reason(), got.message().to_owned())
    }

    fn ready(status: &str, reason: &str) -> Value {
        json!({"type": "Ready", "status": status, "reason": reason, "message": "m"})
    }

    #[test]
    fn clauses_read_in_order_with_the_rules_variables() {
        let spec = json!({"shards": 3});
        let status = |shards: i64, c: Value| json!({"observedGeneration": 2, "shards": shards, "conditions": [c]});
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &status(3, ready("True", "Ok"))),
                None
            ),
            (None, "Ready=True (Ok): m".to_owned())
        );
        // failed comes before waiting, waiting before done
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &status(1, ready("True", "InvalidSpec"))),
                None
            ),
            (
                Some(Reason::ConditionFailed),
                "Ready=True (InvalidSpec): m".to_owned()
            )
        );
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &status(1, ready("True", "Ok"))),
                None
            ),
            (Some(Reason::ReadinessFailing), "1 of 3 shards".to_owned())
        );
        // none holds: the status is shown
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &status(3, ready("False", "Scaling"))),
                None
            ),
            (
                Some(Reason::NotReady),
                "Ready=False (Scaling): m".to_owned()
            )
        );
        // no status at all: no controller has reported
        assert_eq!(
            judged(RULE, &widget(1, &spec, &json!({})), None),
            (
                Some(Reason::NotReconciled),
                "no controller has reported on it yet (it has no status)".to_owned()
            )
        );
    }

    #[test]
    fn paused_as_declared_comes_before_the_generation_and_the_rest() {
        let spec = json!({"shards": 3, "paused": true});
        let stale = json!({"observedGeneration": 1, "conditions": [ready("False", "InvalidSpec")]});
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &stale),
                Some(&json!({"spec": spec}))
            ),
            (None, "paused as declared".to_owned())
        );
        // paused live, but not asked for by this deploy: the generation rule speaks first
        assert_eq!(
            judged(
                RULE,
                &widget(2, &spec, &stale),
                Some(&json!({"spec": {"shards": 3}}))
            )
            .0,
            Some(Reason::NotReconciled)
        );
    }

    #[test]
    fn a_rule_may_read_generations_from_its_conditions() {
        let per_condition = RULE.replace(
            "    variables:",
            "    generation: conditions\n    variables:",
        );
        let stale = json!({"observedGeneration": 1, "conditions": [ready("True", "Ok")]});
        assert_eq!(
            judged(RULE, &widget(2, &json!({}), &stale), None),
            (
                Some(Reason::NotReconciled),
                "waiting for the controller to observe generation 2 (status is for 1)".to_owned()
            )
        );
        assert_eq!(
            judged(&per_condition, &widget(2, &json!({}), &stale), None),
            (None, "Ready=True (Ok): m".to_owned())
        );
    }

    #[test]
    fn an_expression_that_cannot_be_read_is_no_verdict() {
        let rules =
            "rules:\n- group: acme.io\n  kind: Widget\n  done:\n  - when: status.ready == true\n";
        let got = judged(
            rules,
            &widget(1, &json!({}), &json!({"phase": "Provisioning"})),
            None,
        );
        assert_eq!(
            got,
            (
                Some(Reason::NotReady),
                "status.phase is Provisioning".to_owned()
            )
        );
        let got = judged(rules, &widget(1, &json!({}), &json!({"replicas": 2})), None);
        assert_eq!(
            got,
            (
                Some(Reason::NotReady),
                "its health rule (rules.yaml:2) cannot read it yet: status.ready == true: No such key: ready".to_owned()
            )
        );
    }
}

//! `x-kubernetes-validations`: a schema's CEL rules, evaluated with the field as `self` as
//! the server does when an object is created (transition rules, which read `oldSelf`, only
//! apply to updates). A rule that cannot be compiled or evaluated here (the server's CEL
//! library is larger than ours) is a warning, never a refusal the server would not make.

use super::expr::{Expr, Vars};
use super::path::Path;
use super::{Finding, Severity};
use serde_json::Value;

/// The finding of one rule on `value` (of schema type `type_`), if any.
pub(super) fn check(rule: &Value, type_: &str, value: &Value, at: &Path) -> Option<Finding> {
    let source = rule.get("rule").and_then(Value::as_str)?;
    if source.contains("oldSelf") {
        return None;
    }
    let warn = |why: String| Finding {
        pointer: at.pointer(),
        severity: Severity::Warning,
        message: format!("{}: rule {source:?} not checked: {why}", at.dotted()),
        hint: None,
    };
    let expr = match Expr::compile(source) {
        Ok(e) => e,
        Err(e) => return Some(warn(e)),
    };
    let vars = Vars::new(value);
    match expr.holds(&vars) {
        Ok(true) => None,
        Ok(false) => {
            let message = rule
                .get("messageExpression")
                .and_then(Value::as_str)
                .and_then(|m| Expr::compile(m).ok()?.text(&vars).ok())
                .or_else(|| {
                    rule.get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                })
                .unwrap_or_else(|| format!("failed rule: {source}"));
            let p = at.dotted();
            Some(Finding {
                pointer: at.pointer(),
                severity: Severity::Error,
                message: format!("{p}: Invalid value: {type_:?}: {message}"),
                hint: None,
            })
        }
        Err(e) => Some(warn(e)),
    }
}

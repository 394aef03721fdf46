//! The CEL of `x-kubernetes-validations` (`crate::cel`): a rule compiled against CEL's
//! standard library and evaluated with the field as `self`, the one variable a create's
//! rule reads.

use crate::cel::{self as strict_cel};
use cel::{Context, Program, Value as CelValue};
use serde_json::Value;

/// One compiled rule or message expression.
pub(super) struct Expr(Program);

impl Expr {
    pub(super) fn compile(source: &str) -> Result<Expr, String> {
        strict_cel::compile(
            source,
            &strict_cel::STANDARD,
            &["self"],
            "a rule reads self",
        )
        .map(Expr)
    }

    pub(super) fn holds(&self, vars: &Vars) -> Result<bool, String> {
        strict_cel::holds(&self.0, &vars.0)
    }

    /// A `messageExpression`'s text.
    pub(super) fn text(&self, vars: &Vars) -> Result<String, String> {
        strict_cel::text(&self.0, &vars.0)
    }
}

/// The variables of one evaluation: the field as `self`.
pub(super) struct Vars(Context<'static, 'static>);

impl Vars {
    pub(super) fn new(value: &Value) -> Vars {
        let mut context = Context::with_env(strict_cel::ENV.clone());
        context.add_variable_from_value("self", cel::to_value(value).unwrap_or(CelValue::Null));
        Vars(context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_with_self_and_refuses_what_cannot_exist() {
        let v = Vars::new(&json!({"min": 1, "name": "w", "items": ["a", "b"]}));
        let holds = |s: &str| Expr::compile(s).map(|e| e.holds(&v));
        assert_eq!(holds("self.min == 1"), Ok(Ok(true)));
        assert_eq!(holds("self.items.all(i, size(i) == 1)"), Ok(Ok(true)));
        assert_eq!(
            holds("self.missing == 1"),
            Ok(Err("No such key: missing".to_owned()))
        );
        assert_eq!(
            holds("self.name"),
            Ok(Err("gave String(\"w\"), not true or false".to_owned()))
        );
        assert!(holds("spec.min == 1").is_err_and(|e| e.starts_with("unknown variable \"spec\"")));
        assert!(holds("isSorted(self.items)").is_err_and(|e| e.starts_with("unknown function")));
        assert!(holds("self.min ==").is_err_and(|e| e.contains("Syntax error")));
        let text = Expr::compile("'min is ' + string(self.min)").map(|e| e.text(&v));
        assert_eq!(text, Ok(Ok("min is 1".to_owned())));
    }
}

//! One CEL expression of a health rule: compiled once at load (refused there when it does
//! not parse, or names a function or variable that cannot exist), evaluated per object.

use cel::{Context, Program, Value as CelValue};
use kube_strict::cel::{self as strict_cel, ENV};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// The variables an expression sees: the object as `self` (as in CRD validation rules),
/// its top-level fields as Flux's health checks name them, `manifest`, the object as this
/// deploy declared it (`{}` when unknown), and `variables`, the rule's named expressions
/// (as a ValidatingAdmissionPolicy's).
pub const VARIABLES: [&str; 6] = [
    "self",
    "metadata",
    "spec",
    "status",
    "manifest",
    "variables",
];

/// CEL's standard functions (`kube_strict::cel`), and ours: `describe(condition)` writes a
/// condition as every message does, `Ready=False (Reason): message`.
static FUNCTIONS: LazyLock<Vec<&str>> = LazyLock::new(|| {
    std::iter::once("describe")
        .chain(strict_cel::STANDARD)
        .collect()
});

#[derive(Debug, Clone)]
pub struct Expr {
    source: String,
    program: Arc<Program>,
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Expr {
    /// Compiles `source`, or says what is wrong with it (CEL's own words, with the
    /// column where the parser stopped).
    pub fn compile(source: &str) -> Result<Expr, String> {
        let reads = format!("an expression reads {}", VARIABLES.join(", "));
        let program = strict_cel::compile(source, &FUNCTIONS, &VARIABLES, &reads)?;
        Ok(Expr {
            source: source.to_owned(),
            program: Arc::new(program),
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates to a boolean; anything else (a missing field, a string) is an error
    /// that says so.
    pub fn holds(&self, vars: &Vars) -> Result<bool, String> {
        strict_cel::holds(&self.program, &vars.context)
    }

    /// Evaluates to a text: a string as it is, a number or boolean written out.
    pub fn text(&self, vars: &Vars) -> Result<String, String> {
        strict_cel::text(&self.program, &vars.context)
    }
}

/// The variables of one object's evaluation, bound once per assessment.
pub struct Vars {
    context: Context<'static, 'static>,
}

impl Vars {
    pub fn new(obj: &Value, manifest: Option<&Value>) -> Vars {
        let empty = Value::Object(serde_json::Map::new());
        let convert = |v: &Value| cel::to_value(v).unwrap_or(CelValue::Null);
        let field = |k: &str| convert(obj.get(k).filter(|v| !v.is_null()).unwrap_or(&empty));
        let mut context = Context::with_env(ENV.clone());
        for (name, value) in [
            ("self", convert(obj)),
            ("metadata", field("metadata")),
            ("spec", field("spec")),
            ("status", field("status")),
            ("manifest", convert(manifest.unwrap_or(&empty))),
        ] {
            context.add_variable_from_value(name, value);
        }
        context
            .add_function("describe", describe)
            .expect("describe is no standard function");
        context.add_variable_from_value(
            "variables",
            CelValue::Map(HashMap::<String, CelValue>::new().into()),
        );
        Vars { context }
    }

    /// Binds a rule's named expressions, in order (each may read those before it), as
    /// `variables.<name>`. One that cannot be evaluated is left out: a clause reading it
    /// then does not hold, and says so.
    pub fn bind(&mut self, named: &[(String, Expr)]) {
        let mut bound: HashMap<String, CelValue> = HashMap::new();
        for (name, expr) in named {
            if let Ok(value) = expr.program.execute(&self.context) {
                bound.insert(name.clone(), value);
                self.context
                    .add_variable_from_value("variables", CelValue::Map(bound.clone().into()));
            }
        }
    }
}

/// `Type=Status (Reason): message` of a condition map; `?` for what is not one.
#[expect(
    clippy::needless_pass_by_value,
    reason = "cel hands a function its arguments by value"
)]
fn describe(condition: CelValue) -> String {
    let CelValue::Map(map) = &condition else {
        return "?".to_owned();
    };
    let field = |k: &str| match map.get(&cel::objects::Key::String(Arc::new(k.to_owned()))) {
        Some(CelValue::String(s)) => Some(s.to_string()),
        _ => None,
    };
    crate::rules::custom::conditions::Condition {
        type_: field("type").as_deref().unwrap_or("?"),
        status: field("status").as_deref().unwrap_or("?"),
        reason: field("reason").as_deref(),
        message: field("message").as_deref(),
    }
    .describe()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars() -> Vars {
        Vars::new(
            &json!({"metadata": {"name": "web", "generation": 3},
                "spec": {"paused": true},
                "status": {"phase": "Paused", "currentStepIndex": 2,
                    "conditions": [{"type": "Available", "status": "False"}]}}),
            Some(&json!({"spec": {"paused": true}})),
        )
    }

    #[test]
    fn reads_the_object_as_self_and_by_its_fields() {
        let v = vars();
        let holds = |s: &str| Expr::compile(s).unwrap().holds(&v);
        assert_eq!(holds("self.status.phase == 'Paused'"), Ok(true));
        assert_eq!(holds("status.phase == 'Paused' && spec.paused"), Ok(true));
        assert_eq!(holds("manifest.spec.paused == true"), Ok(true));
        assert_eq!(
            holds("status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"),
            Ok(false)
        );
        assert_eq!(holds("status.?missing.orValue('x') == 'x'"), Ok(true));
        assert_eq!(holds("has(status.missing)"), Ok(false));
        assert_eq!(
            holds("status.missing == 1"),
            Err("No such key: missing".to_owned())
        );
        assert_eq!(
            holds("status.phase"),
            Err("gave String(\"Paused\"), not true or false".to_owned())
        );
        let text = |s: &str| Expr::compile(s).unwrap().text(&v);
        assert_eq!(
            text("'paused at step ' + string(status.currentStepIndex)"),
            Ok("paused at step 2".to_owned())
        );
        assert_eq!(text("status.currentStepIndex"), Ok("2".to_owned()));
        assert_eq!(
            text("describe(status.conditions[0])"),
            Ok("Available=False".to_owned())
        );
        let v = Vars::new(
            &json!({"status": {"conditions": [{"type": "Ready", "status": "False",
                "reason": "Pending", "message": "waiting for issuer"}]}}),
            None,
        );
        assert_eq!(
            Expr::compile("status.conditions.filter(c, c.type == 'Ready').map(c, describe(c))[0]")
                .unwrap()
                .text(&v),
            Ok("Ready=False (Pending): waiting for issuer".to_owned())
        );
    }

    #[test]
    fn a_missing_status_reads_as_empty() {
        let v = Vars::new(&json!({"metadata": {"name": "web"}}), None);
        let e = Expr::compile("has(status.conditions) || size(manifest) == 0").unwrap();
        assert_eq!(e.holds(&v), Ok(true));
    }

    #[test]
    fn refuses_what_cannot_evaluate() {
        let err = Expr::compile("status.phase ==").unwrap_err();
        assert!(err.starts_with("<input>:1:16: Syntax error"), "{err}");
        assert_eq!(
            Expr::compile("status.phase.lower() == 'x'")
                .unwrap_err()
                .split(" (")
                .next(),
            Some("unknown function lower()")
        );
        assert_eq!(
            Expr::compile("stauts.phase == 'Ready'")
                .unwrap_err()
                .split(':')
                .next(),
            Some("unknown variable \"stauts\"")
        );
        assert!(
            Expr::compile(
                "status.conditions.filter(c, c.type == 'Ready').all(x, x.status == 'True')"
            )
            .is_ok()
        );
    }

    #[test]
    fn every_listed_function_exists() {
        // A function the list names but the crate lacks would pass the load and fail
        // every evaluation: call each one once.
        let v = vars();
        for source in [
            "size([1]) == 1",
            "int('1') == 1",
            "uint(1) == 1u",
            "double(1) == 1.0",
            "string(1) == '1'",
            "bytes('a') == b'a'",
            "bool('true')",
            "type(1) == int",
            "dyn(1) == 1",
            "'abc'.contains('b')",
            "'abc'.startsWith('a')",
            "'abc'.endsWith('c')",
            "'abc'.matches('^a')",
            "has(status.phase)",
            "[1].all(x, x > 0)",
            "[1].exists(x, x > 0)",
            "[1].exists_one(x, x > 0)",
            "[1].map(x, x + 1) == [2]",
            "[1].filter(x, x > 0) == [1]",
            "status.?phase.orValue('') == 'Paused'",
            "status.?missing.or(status.?phase).value() == 'Paused'",
            "status.?phase.hasValue()",
        ] {
            let e = Expr::compile(source).unwrap_or_else(|e| panic!("{source}: {e}"));
            assert_eq!(e.holds(&v), Ok(true), "{source}");
        }
    }
}

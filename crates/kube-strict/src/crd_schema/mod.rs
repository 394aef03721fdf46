//! A custom resource held to its CRD's `openAPIV3Schema` as the API server holds it: the
//! structural-schema keywords (types, required, enums, bounds, lengths, patterns, items,
//! unknown fields) and the `x-kubernetes-validations` CEL rules, in the server's words.
//! Pure: a schema and an object in, findings (where, what) out.

mod expr;
mod path;
mod rules;
pub mod served;

use path::Path;
use serde_json::{Map, Value};

/// How the server takes a finding: it refuses the object, or only warns (an unknown field,
/// which it prunes; a rule it could not evaluate here).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One thing the schema says about the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// JSON pointer (RFC 6901) to the field, or to the object that lacks it.
    pub pointer: String,
    pub severity: Severity,
    /// As the API server words it: `spec.size: Required value`.
    pub message: String,
    pub hint: Option<String>,
}

/// Every finding of `schema` (a version's `openAPIV3Schema`) on `object`, in the order of
/// the object's fields. The object's `apiVersion`, `kind` and `metadata` are the server's
/// own and not held to the schema.
pub fn validate(schema: &Value, object: &Value) -> Vec<Finding> {
    let mut walk = Walk::default();
    let mut at = Path::default();
    if let Some(fields) = object.as_object() {
        let root: Map<String, Value> = fields
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "apiVersion" | "kind" | "metadata"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        walk.object(schema, &root, &mut at, &["apiVersion", "kind", "metadata"]);
        walk.rules(schema, object, &at);
    }
    walk.findings
}

#[derive(Default)]
struct Walk {
    findings: Vec<Finding>,
}

impl Walk {
    fn error(&mut self, at: &Path, message: String) {
        self.findings.push(Finding {
            pointer: at.pointer(),
            severity: Severity::Error,
            message,
            hint: None,
        });
    }

    /// `spec.size: Invalid value: 0: spec.size in body should be ...`
    fn invalid(&mut self, at: &Path, value: &str, detail: &str) {
        let p = at.dotted();
        self.error(
            at,
            format!("{p}: Invalid value: {value}: {p} in body {detail}"),
        );
    }

    fn value(&mut self, schema: &Value, value: &Value, at: &mut Path) {
        if value.is_null() {
            // Nullable: allowed; else the server prunes the null before validating.
            return;
        }
        if !self.typed(schema, value, at) {
            return;
        }
        if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
            && !allowed.iter().any(|a| same(a, value))
        {
            let supported: Vec<String> =
                allowed.iter().map(|a| format!("{:?}", plain(a))).collect();
            let p = at.dotted();
            self.error(
                at,
                format!(
                    "{p}: Unsupported value: {}: supported values: {}",
                    shown(value),
                    supported.join(", ")
                ),
            );
        }
        match value {
            Value::String(s) => self.string(schema, s, at),
            Value::Number(_) => self.number(schema, value, at),
            Value::Array(items) => self.array(schema, items, at),
            Value::Object(fields) => {
                let implicit: &[&str] = if flag(schema, "x-kubernetes-embedded-resource") {
                    self.embedded(fields, at);
                    &["apiVersion", "kind", "metadata"]
                } else {
                    &[]
                };
                self.object(schema, fields, at, implicit);
            }
            Value::Bool(_) | Value::Null => {}
        }
        self.rules(schema, value, at);
    }

    /// Whether the value has the schema's type; says so when not.
    fn typed(&mut self, schema: &Value, value: &Value, at: &Path) -> bool {
        let actual = type_name(value);
        let want = if flag(schema, "x-kubernetes-int-or-string") {
            "integer,string"
        } else {
            match schema.get("type").and_then(Value::as_str) {
                Some(t) => t,
                None => return true,
            }
        };
        let fits = want.split(',').any(|t| {
            t == actual
                || (t == "number" && actual == "integer")
                || (t == "integer" && whole(value))
        });
        if !fits {
            self.invalid(
                at,
                &format!("{actual:?}"),
                &format!("must be of type {want}: {actual:?}"),
            );
        }
        fits
    }

    fn string(&mut self, schema: &Value, s: &str, at: &Path) {
        let chars = s.chars().count() as u64;
        let quoted = format!("{s:?}");
        if let Some(min) = uint(schema, "minLength")
            && chars < min
        {
            self.invalid(at, &quoted, &format!("should be at least {min} chars long"));
        }
        if let Some(max) = uint(schema, "maxLength")
            && chars > max
        {
            let p = at.dotted();
            self.error(
                at,
                format!("{p}: Too long: may not be more than {max} bytes"),
            );
        }
        if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
            && let Ok(re) = regex::Regex::new(pattern)
            && !re.is_match(s)
        {
            self.invalid(at, &quoted, &format!("should match '{pattern}'"));
        }
        if schema.get("format").and_then(Value::as_str) == Some("date-time")
            && s.parse::<jiff::Timestamp>().is_err()
        {
            self.invalid(at, &quoted, &format!("must be of type date-time: {quoted}"));
        }
    }

    fn number(&mut self, schema: &Value, value: &Value, at: &Path) {
        let Some(n) = value.as_f64() else { return };
        let shown = value.to_string();
        let bound = |key: &str| schema.get(key).and_then(Value::as_f64);
        let exclusive = |key: &str| flag(schema, key);
        if let Some(min) = bound("minimum") {
            let ex = exclusive("exclusiveMinimum");
            if if ex { n <= min } else { n < min } {
                let or_equal = if ex { "" } else { " or equal to" };
                self.invalid(
                    at,
                    &shown,
                    &format!(
                        "should be greater than{or_equal} {}",
                        num(schema, "minimum")
                    ),
                );
            }
        }
        if let Some(max) = bound("maximum") {
            let ex = exclusive("exclusiveMaximum");
            if if ex { n >= max } else { n > max } {
                let or_equal = if ex { "" } else { " or equal to" };
                self.invalid(
                    at,
                    &shown,
                    &format!("should be less than{or_equal} {}", num(schema, "maximum")),
                );
            }
        }
        if let Some(step) = bound("multipleOf")
            && step > 0.0
            && (n / step).fract() != 0.0
        {
            self.invalid(
                at,
                &shown,
                &format!("should be a multiple of {}", num(schema, "multipleOf")),
            );
        }
        if schema.get("format").and_then(Value::as_str) == Some("int32")
            && whole(value)
            && (n < f64::from(i32::MIN) || n > f64::from(i32::MAX))
        {
            self.invalid(at, &shown, &format!("must be of type int32: \"{shown}\""));
        }
    }

    fn array(&mut self, schema: &Value, items: &[Value], at: &mut Path) {
        let len = items.len() as u64;
        if let Some(min) = uint(schema, "minItems")
            && len < min
        {
            self.invalid(
                at,
                &len.to_string(),
                &format!("should have at least {min} items"),
            );
        }
        if let Some(max) = uint(schema, "maxItems")
            && len > max
        {
            let p = at.dotted();
            self.error(
                at,
                format!("{p}: Too many: {len}: must have at most {max} items"),
            );
        }
        if flag(schema, "uniqueItems")
            && let Some(dup) = items
                .iter()
                .enumerate()
                .find(|(i, a)| items[..*i].iter().any(|b| same(a, b)))
        {
            let p = at.dotted();
            self.error(
                at,
                format!("{p}[{}]: Duplicate value: {}", dup.0, shown(dup.1)),
            );
        }
        if let Some(item) = schema.get("items").filter(|s| s.is_object()) {
            for (i, v) in items.iter().enumerate() {
                at.push_index(i);
                self.value(item, v, at);
                at.pop();
            }
        }
    }

    /// An object's fields: required ones present, declared ones valid, the others pruned
    /// (a warning) unless the schema keeps unknown fields or maps them all.
    fn object(
        &mut self,
        schema: &Value,
        fields: &Map<String, Value>,
        at: &mut Path,
        implicit: &[&str],
    ) {
        let properties = schema.get("properties").and_then(Value::as_object);
        let prop = |k: &str| properties.and_then(|p| p.get(k));
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let declared = prop(name);
            let present = fields
                .get(name)
                .is_some_and(|v| !v.is_null() || declared.is_some_and(|s| flag(s, "nullable")));
            // A default fills the field in before the server validates.
            if !present && declared.is_none_or(|s| s.get("default").is_none()) {
                at.push_key(name);
                let p = at.dotted();
                self.error(at, format!("{p}: Required value"));
                at.pop();
            }
        }
        let count = fields.len() as u64;
        if let Some(min) = uint(schema, "minProperties")
            && count < min
        {
            self.invalid(
                at,
                &count.to_string(),
                &format!("should have at least {min} properties"),
            );
        }
        if let Some(max) = uint(schema, "maxProperties")
            && count > max
        {
            let p = at.dotted();
            self.error(
                at,
                format!("{p}: Too many: {count}: must have at most {max} items"),
            );
        }
        let additional = schema.get("additionalProperties");
        let keeps = flag(schema, "x-kubernetes-preserve-unknown-fields")
            || additional == Some(&Value::Bool(true));
        for (name, v) in fields {
            at.push_key(name);
            if let Some(s) = prop(name) {
                self.value(s, v, at);
            } else if let Some(s) = additional.filter(|s| s.is_object()) {
                self.value(s, v, at);
            } else if !keeps && !implicit.contains(&name.as_str()) {
                let near = properties.and_then(|p| nearest(name, p.keys()));
                self.findings.push(Finding {
                    pointer: at.pointer(),
                    severity: Severity::Warning,
                    message: format!("unknown field {:?}", at.dotted()),
                    hint: near.map(|n| format!("did you mean {n:?}?")),
                });
            }
            at.pop();
        }
    }

    /// An embedded object names what it is, as a manifest does.
    fn embedded(&mut self, fields: &Map<String, Value>, at: &mut Path) {
        for key in ["apiVersion", "kind"] {
            if fields
                .get(key)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                at.push_key(key);
                let p = at.dotted();
                self.error(at, format!("{p}: Required value: must not be empty"));
                at.pop();
            }
        }
    }

    fn rules(&mut self, schema: &Value, value: &Value, at: &Path) {
        let Some(list) = schema
            .get("x-kubernetes-validations")
            .and_then(Value::as_array)
        else {
            return;
        };
        for rule in list {
            let type_ = schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("object");
            if let Some(f) = rules::check(rule, type_, value, at) {
                self.findings.push(f);
            }
        }
    }
}

fn flag(schema: &Value, key: &str) -> bool {
    schema.get(key).and_then(Value::as_bool) == Some(true)
}

fn uint(schema: &Value, key: &str) -> Option<u64> {
    schema.get(key).and_then(Value::as_u64)
}

/// A bound as the schema wrote it (`1`, not `1.0`).
fn num(schema: &Value, key: &str) -> String {
    schema.get(key).map(Value::to_string).unwrap_or_default()
}

/// The JSON type of a value, as the server names it.
fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// An integer, or a number with nothing after the point (`3.0`), as JSON decoding sees it.
fn whole(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Equal as JSON values, `3` and `3.0` included.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// A value written as the server's errors write it: strings quoted, the rest as JSON.
fn shown(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// A value as text, unquoted (`fast`, `3`), for the supported values the server quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The declared name closest to a misspelt one (`manifest::near`).
fn nearest<'a>(name: &str, declared: impl Iterator<Item = &'a String>) -> Option<&'a str> {
    crate::near::nearest(name, declared.map(String::as_str))
}

#[cfg(test)]
mod tests;

//! CEL as the API server's rules use it, over the `cel` crate: one standard environment,
//! compilation that refuses a function or variable that cannot exist (at compile, not at
//! every evaluation), and results read as a boolean or a text. CRD validation rules use
//! it here; deploy-action's health rules add their own variables and `describe()`.

use cel::{Context, Env, Program, Value as CelValue};
use std::collections::BTreeSet;
use std::sync::{Arc, LazyLock};

/// Functions and macros of CEL's standard library as the `cel` crate implements them.
/// Operators (`_&&_`, `!_`, `@in`, ...) are not listed: the parser only makes valid ones.
pub const STANDARD: [&str; 23] = [
    "size",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "type",
    "dyn",
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "has",
    "all",
    "exists",
    "exists_one",
    "map",
    "filter",
    "orValue",
    "or",
    "hasValue",
    "value",
];

/// Type names, which CEL reads as identifiers (`type(x) == string`).
const TYPES: [&str; 10] = [
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "bool",
    "list",
    "map",
    "null_type",
    "type",
];

/// CEL's standard environment, shared by every program and context.
pub static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| Arc::new(Env::stdlib()));

/// Compiles `source`, or says what is wrong with it: CEL's first error (with the column
/// where the parser stopped), else the first function not in `functions` (which the
/// message lists) or variable not in `variables` (`reads` says what an expression reads).
pub fn compile(
    source: &str,
    functions: &[&str],
    variables: &[&str],
    reads: &str,
) -> Result<Program, String> {
    let program = ENV.compile(source).map_err(|e| {
        // CEL reports each error after the first again: the first says what is wrong.
        let text = e.to_string();
        let first = text.split("\nERROR: ").next().unwrap_or(&text);
        first.strip_prefix("ERROR: ").unwrap_or(first).to_owned()
    })?;
    let refs = program.references();
    let mut unknown: Vec<&str> = refs
        .functions()
        .into_iter()
        .filter(|f| {
            !(f.starts_with('_')
                || f.starts_with('!')
                || f.starts_with('@')
                || functions.contains(f))
        })
        .collect();
    unknown.sort_unstable();
    if let Some(f) = unknown.first() {
        return Err(format!(
            "unknown function {f}() (CEL's standard functions: {})",
            functions.join(", ")
        ));
    }
    let bound = bound_names(source);
    let mut strays: Vec<&str> = refs
        .variables()
        .into_iter()
        .filter(|v| !variables.contains(v) && !TYPES.contains(v) && !bound.contains(*v))
        .collect();
    strays.sort_unstable();
    if let Some(v) = strays.first() {
        return Err(format!("unknown variable {v:?}: {reads}"));
    }
    Ok(program)
}

/// Names a comprehension binds (`c` in `conditions.exists(c, ...)`): variables too, as far
/// as CEL's reference list goes, but not the rule author's typos.
fn bound_names(source: &str) -> BTreeSet<&str> {
    let mut names = BTreeSet::new();
    for mac in ["all(", "exists(", "exists_one(", "map(", "filter("] {
        let mut rest = source;
        while let Some(at) = rest.find(mac) {
            rest = &rest[at + mac.len()..];
            if let Some((name, _)) = rest.split_once(',') {
                let name = name.trim();
                if !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_') {
                    names.insert(name);
                }
            }
        }
    }
    names
}

/// Evaluates to a boolean; anything else (a missing field, a string) is an error that
/// says so.
pub fn holds(program: &Program, context: &Context<'_, '_>) -> Result<bool, String> {
    match program.execute(context) {
        Ok(CelValue::Bool(b)) => Ok(b),
        Ok(other) => Err(format!("gave {other:?}, not true or false")),
        Err(e) => Err(e.to_string()),
    }
}

/// Evaluates to a text: a string as it is, a number or boolean written out.
pub fn text(program: &Program, context: &Context<'_, '_>) -> Result<String, String> {
    match program.execute(context) {
        Ok(CelValue::String(s)) => Ok(s.to_string()),
        Ok(CelValue::Int(i)) => Ok(i.to_string()),
        Ok(CelValue::UInt(u)) => Ok(u.to_string()),
        Ok(CelValue::Float(f)) => Ok(f.to_string()),
        Ok(CelValue::Bool(b)) => Ok(b.to_string()),
        Ok(other) => Err(format!("gave {other:?}, not a text")),
        Err(e) => Err(e.to_string()),
    }
}

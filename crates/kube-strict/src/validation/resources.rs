//! Container resource requirements: standard resource names, non-negative quantities and
//! requests not above limits (equal for resources that cannot be overcommitted).

use serde_json::Value;

use super::error::Cause;
use super::gofmt::{go_quote, quantity};
use super::names::qualified_name;
use super::path::Path;
use crate::defaults::quantity::Quantity;

/// Resources whose requests may differ from limits (everything but hugepages and
/// extended resources).
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.starts_with("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

pub(crate) fn validate_resources(resources: Option<&Value>, path: &Path, errs: &mut Vec<Cause>) {
    let Some(resources) = resources else {
        return;
    };
    let lim_path = path.child("limits");
    let req_path = path.child("requests");
    let limits = resources.get("limits").and_then(Value::as_object);
    let requests = resources.get("requests").and_then(Value::as_object);
    for (name, value) in limits.into_iter().flatten() {
        let key_path = lim_path.key(name);
        validate_resource_name(name, &key_path, errs);
        validate_quantity_value(value, &key_path, errs);
    }
    for (name, value) in requests.into_iter().flatten() {
        let key_path = req_path.key(name);
        validate_resource_name(name, &key_path, errs);
        validate_quantity_value(value, &key_path, errs);
        let limit = limits.and_then(|l| l.get(name));
        match limit {
            Some(limit) => {
                let (Some(Ok(req)), Some(Ok(lim))) =
                    (Quantity::from_json(value), Quantity::from_json(limit))
                else {
                    continue;
                };
                let ordering = req.cmp_value(&lim);
                if !ordering.is_eq() && !overcommit_allowed(name) {
                    errs.push(Cause::invalid(
                        &req_path,
                        &quantity(value),
                        &format!("must be equal to {name} limit of {}", lim.canonical()),
                    ));
                } else if ordering.is_gt() {
                    errs.push(Cause::invalid(
                        &req_path,
                        &quantity(value),
                        &format!(
                            "must be less than or equal to {name} limit of {}",
                            lim.canonical()
                        ),
                    ));
                }
            }
            None if !overcommit_allowed(name) => errs.push(Cause::required(
                &lim_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
}

/// `validateContainerResourceName`: unprefixed names must be standard container resources.
fn validate_resource_name(name: &str, path: &Path, errs: &mut Vec<Cause>) {
    for msg in qualified_name(name) {
        errs.push(Cause::invalid(path, &go_quote(name), &msg));
    }
    let standard =
        matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-");
    if !name.contains('/') && !standard {
        errs.push(Cause::invalid(
            path,
            &go_quote(name),
            "must be a standard resource for containers",
        ));
    }
}

fn validate_quantity_value(value: &Value, path: &Path, errs: &mut Vec<Cause>) {
    if let Some(Ok(q)) = Quantity::from_json(value)
        && q.is_negative()
    {
        errs.push(Cause::invalid(
            path,
            &quantity(value),
            "must be greater than or equal to 0",
        ));
    }
}

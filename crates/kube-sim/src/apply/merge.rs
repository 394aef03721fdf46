//! Combining an apply configuration with the live object: the schema-aware merge, and the
//! pruning of fields the applier stopped sending that nobody else owns.

use serde_json::{Map, Value};

use super::fieldset::{FieldSet, PathElement};
use super::schema::{ListKind, Shape, index_items, shape};

/// Structured merge: objects merge per key, keyed lists per item, everything else is replaced.
pub fn merge(live: &Value, config: &Value) -> Value {
    merge_node(Some(live), config, &mut Vec::new())
}

fn merge_node(live: Option<&Value>, config: &Value, names: &mut Vec<String>) -> Value {
    let Some(live) = live else {
        return config.clone();
    };
    match (shape(live, names), shape(config, names)) {
        (Shape::Map(lm), Shape::Map(cm)) => {
            let mut out = lm.clone();
            for (key, value) in cm {
                names.push(key.clone());
                let merged = merge_node(lm.get(key), value, names);
                names.pop();
                out.insert(key.clone(), merged);
            }
            Value::Object(out)
        }
        (Shape::List(li, kind), Shape::List(ci, _)) => {
            Value::Array(merge_list(li, ci, &kind, names))
        }
        _ => config.clone(),
    }
}

// Shared items keep the configuration's relative order; live-only items stay where they were
// (structured-merge-diff's list ordering).
fn merge_list(
    live: &[Value],
    config: &[Value],
    kind: &ListKind,
    names: &mut Vec<String>,
) -> Vec<Value> {
    let (lhs, rhs) = (index_items(live, kind), index_items(config, kind));
    let in_rhs = |pe: &PathElement| rhs.iter().any(|(p, _)| p == pe);
    let lhs_get = |pe: &PathElement| lhs.iter().find(|(p, _)| p == pe).map(|(_, v)| *v);
    let mut shared = rhs
        .iter()
        .map(|(pe, _)| pe)
        .filter(|pe| lhs_get(pe).is_some());
    let mut next = shared.next();
    let mut out = Vec::with_capacity(lhs.len().max(rhs.len()));
    let (mut l, mut r) = (0, 0);
    while l < lhs.len() || r < rhs.len() {
        if l < lhs.len() && r < rhs.len() {
            let pe = &lhs[l].0;
            if *pe == rhs[r].0 {
                out.push(merge_node(Some(lhs[l].1), rhs[r].1, names));
                (l, r, next) = (l + 1, r + 1, shared.next());
                continue;
            }
            if in_rhs(pe) && next.is_some_and(|n| n != pe) {
                l += 1;
                continue;
            }
        }
        if l < lhs.len() && !in_rhs(&lhs[l].0) {
            out.push(lhs[l].1.clone());
            l += 1;
        } else if r < rhs.len() {
            let pe = &rhs[r].0;
            out.push(merge_node(lhs_get(pe), rhs[r].1, names));
            r += 1;
            if next == Some(pe) {
                next = shared.next();
            }
        } else {
            // A live item already emitted in the configuration's order.
            l += 1;
        }
    }
    out
}

/// Removes what `last` (the applier's previous set) owned unless some manager, the applier's
/// new configuration included, still owns it. Named fields count as owned when anything below
/// them is, list items only when owned themselves.
pub fn prune(value: &mut Value, last: &FieldSet, owned: &FieldSet) {
    prune_node(value, last, owned, &mut Vec::new());
}

fn prune_node(value: &mut Value, last: &FieldSet, owned: &FieldSet, names: &mut Vec<String>) {
    let kind = match shape(value, names) {
        Shape::Map(_) => None,
        Shape::List(_, kind) => Some(kind),
        Shape::Leaf => return,
    };
    match (value, kind) {
        (Value::Object(map), None) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let pe = PathElement::Field(key.clone());
                if !last.covers(&pe) {
                    continue;
                }
                if !owned.covers(&pe) {
                    map.shift_remove(&key);
                } else if let Some(child) = map.get_mut(&key) {
                    names.push(key);
                    prune_node(child, last.child(&pe), owned.child(&pe), names);
                    names.pop();
                }
            }
        }
        (Value::Array(items), Some(kind)) => {
            let pes: Vec<PathElement> = index_items(items, &kind)
                .into_iter()
                .map(|(pe, _)| pe)
                .collect();
            let mut kept = Vec::with_capacity(items.len());
            for (i, mut item) in std::mem::take(items).into_iter().enumerate() {
                let pe = pes.get(i).cloned().unwrap_or(PathElement::Index(i));
                if last.is_member(&pe) && !owned.is_member(&pe) {
                    continue;
                }
                prune_node(&mut item, last.child(&pe), owned.child(&pe), names);
                kept.push(item);
            }
            *items = kept;
        }
        _ => {}
    }
}

/// Drops the `null`s a configuration used to clear fields: they take part in ownership and
/// conflicts, but a stored object never holds them.
pub fn strip_config_nulls(value: &mut Value, config: &Value) {
    let (Value::Object(out), Value::Object(cfg)) = (value, config) else {
        return;
    };
    for (key, c) in cfg {
        match (c, out.get_mut(key)) {
            (Value::Null, Some(Value::Null)) => {
                out.shift_remove(key);
            }
            (Value::Object(_), Some(v)) => strip_config_nulls(v, c),
            _ => {}
        }
    }
}

/// Deletes `metadata.<field>` for each named field.
pub fn remove_metadata(value: &mut Value, fields: &[&str]) {
    if let Some(Value::Object(meta)) = value.get_mut("metadata") {
        for field in fields {
            meta.shift_remove(*field);
        }
    }
}

/// Sets `metadata.<field>`, creating `metadata` when missing.
pub fn set_metadata(value: &mut Value, field: &str, v: Value) {
    if let Value::Object(obj) = value {
        let meta = obj
            .entry("metadata")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(field.to_owned(), v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[track_caller]
    fn case(live: Value, config: Value, want: Value) {
        let spec = |containers: Value| json!({"spec": {"containers": containers}});
        assert_eq!(merge(&spec(live), &spec(config)), spec(want));
    }

    #[test]
    fn keyed_lists_merge_items_and_keep_live_only_ones_in_place() {
        let c = |name: &str, image: &str| json!({"name": name, "image": image});
        case(
            json!([c("a", "1"), c("b", "1")]),
            json!([c("b", "2")]),
            json!([c("a", "1"), c("b", "2")]),
        );
        case(
            json!([c("a", "1")]),
            json!([c("b", "1")]),
            json!([c("a", "1"), c("b", "1")]),
        );
        case(
            json!([c("a", "1"), c("b", "1")]),
            json!([c("b", "2"), c("a", "2")]),
            json!([c("b", "2"), c("a", "2")]),
        );
        case(
            json!([c("x", "1"), c("a", "1")]),
            json!([c("a", "2"), c("y", "1")]),
            json!([c("x", "1"), c("a", "2"), c("y", "1")]),
        );
    }

    #[test]
    fn atomic_values_are_replaced_not_merged() {
        let live = json!({"spec": {"selector": {"matchLabels": {"app": "web", "old": "x"}},
            "template": {"spec": {"containers": [{"name": "a", "args": ["-v", "-x"]}]}}}});
        let config = json!({"spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"spec": {"containers": [{"name": "a", "args": ["-q"]}]}}}});
        assert_eq!(merge(&live, &config), config);
    }
}

//! Server-side apply and update ownership tracking, as the API server's field manager does them
//! on top of structured-merge-diff: merge, prune, detect conflicts, rewrite `managedFields`.

use serde_json::{Map, Value};

use super::compare::{compare, compare_without_managed_fields, field_set};
use super::conflict::{ApplyError, Conflict};
use super::fieldset::{FieldSet, PathElement, path_string};
use super::managed::{self, APPLY, Entry, SERVER_METADATA, UPDATE, unowned_paths};
use super::merge::{merge, prune, remove_metadata, strip_config_nulls};

/// One server-side apply request.
#[derive(Clone, Copy, Debug)]
pub struct ApplyOptions<'a> {
    /// `fieldManager`; kubectl sends `kubectl`.
    pub manager: &'a str,
    /// `force=true`: take conflicting fields over instead of failing.
    pub force: bool,
    /// The API version the request was made at, recorded in the entry.
    pub api_version: &'a str,
    /// RFC 3339 time recorded in the entry when the object changes.
    pub time: &'a str,
    pub subresource: Option<&'a str>,
    /// The kind has a status subresource, so the main resource ignores a sent `status`.
    pub reset_status: bool,
}

/// Applies `applied` over `live` (None: the object is created) and returns the object to
/// store, with `metadata.managedFields` updated.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    opts: &ApplyOptions,
) -> Result<Value, ApplyError> {
    let config = scoped_config(applied, opts)?;
    let applied_set = field_set(&config)
        .map_err(ApplyError::Invalid)?
        .difference(unowned_paths());
    let mut entries = live.map(managed::decode).unwrap_or_default();
    let live = live.map_or_else(|| Value::Object(Map::new()), without_managed_fields);
    if entries.is_empty() {
        // Objects written before ownership was tracked: the API server credits their fields
        // to this placeholder manager so applying over them still detects conflicts.
        entries.extend(update_entry(
            &Value::Object(Map::new()),
            &live,
            BEFORE_FIRST_APPLY,
            opts.api_version,
            opts.time,
        ));
    }

    let me = managed::identity(opts.manager, APPLY, opts.api_version, opts.subresource);
    let mine = entries.iter().position(|e| e.identity() == me);
    let others = |i: &usize| Some(*i) != mine;

    let mut object = merge(&live, &config);
    if let Some(last) = mine.map(|i| &entries[i].set) {
        let owned = (0..entries.len())
            .filter(others)
            .fold(applied_set.clone(), |acc, i| acc.union(&entries[i].set));
        prune(&mut object, last, &owned);
    }

    let diff = compare(&live, &object);
    let changed = diff.changed();
    let conflicts: Vec<Conflict> = (0..entries.len())
        .filter(others)
        .flat_map(|i| {
            let e = &entries[i];
            e.set
                .intersection(&changed)
                .paths()
                .into_iter()
                .map(move |p| conflict(e, &p))
        })
        .collect();
    if !conflicts.is_empty() && !opts.force {
        let mut conflicts = conflicts;
        conflicts.sort_by_key(Conflict::identity);
        return Err(ApplyError::Conflict(conflicts));
    }
    for i in (0..entries.len()).filter(others) {
        entries[i].set = entries[i]
            .set
            .difference(&changed)
            .difference(&diff.removed);
    }

    strip_config_nulls(&mut object, &config);
    let object_changed = object != live;
    match mine {
        Some(i) => {
            let e = &mut entries[i];
            e.set = applied_set;
            opts.api_version.clone_into(&mut e.api_version);
            if object_changed || e.time.is_none() {
                e.time = Some(opts.time.to_owned());
            }
        }
        None => entries.push(Entry {
            manager: opts.manager.to_owned(),
            operation: APPLY.to_owned(),
            api_version: opts.api_version.to_owned(),
            time: Some(opts.time.to_owned()),
            subresource: opts.subresource.map(str::to_owned),
            set: applied_set,
        }),
    }
    managed::store(&mut object, entries);
    Ok(object)
}

/// Records a create, update or patch by `manager`: it gains the fields it added or changed,
/// which every other manager loses (updates never conflict). `old` is None on create.
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    api_version: &str,
    time: &str,
    subresource: Option<&str>,
) {
    if !new.is_object() {
        return;
    }
    let mut entries = managed::decode_live_or_new(old, new, subresource.is_some());
    let empty = Value::Object(Map::new());
    let diff = compare_without_managed_fields(old.unwrap_or(&empty), new);
    let changed = diff.changed();
    // One pass per entry over what changed or went (the same set as two differences).
    let lost = changed.union(&diff.removed);
    for e in &mut entries {
        e.set = e.set.difference(&lost);
    }
    let gained = changed.difference(unowned_paths());
    if !gained.is_empty() {
        let me = managed::identity(manager, UPDATE, api_version, subresource);
        match entries.iter_mut().find(|e| e.identity() == me) {
            Some(e) => {
                e.set = e.set.union(&gained);
                e.time = Some(time.to_owned());
            }
            None => entries.push(Entry {
                manager: manager.to_owned(),
                operation: UPDATE.to_owned(),
                api_version: api_version.to_owned(),
                time: Some(time.to_owned()),
                subresource: subresource.map(str::to_owned),
                set: gained,
            }),
        }
    }
    managed::store(new, entries);
}

const BEFORE_FIRST_APPLY: &str = "before-first-apply";

fn update_entry(
    old: &Value,
    new: &Value,
    manager: &str,
    api_version: &str,
    time: &str,
) -> Option<Entry> {
    let set = compare(old, new).changed().difference(unowned_paths());
    (!set.is_empty()).then(|| Entry {
        manager: manager.to_owned(),
        operation: UPDATE.to_owned(),
        api_version: api_version.to_owned(),
        time: Some(time.to_owned()),
        subresource: None,
        set,
    })
}

// The part of the request body apply may act on: server metadata is dropped, and status is
// either the only thing considered (status subresource) or ignored (reset by the strategy).
fn scoped_config(applied: &Value, opts: &ApplyOptions) -> Result<Value, ApplyError> {
    if !applied.is_object() {
        return Err(ApplyError::Invalid(
            "the body must be a json object".to_owned(),
        ));
    }
    let mut config = applied.clone();
    remove_metadata(&mut config, &SERVER_METADATA);
    if let Value::Object(map) = &mut config {
        if opts.subresource == Some("status") {
            map.retain(|k, _| matches!(k.as_str(), "apiVersion" | "kind" | "metadata" | "status"));
            if let Some(Value::Object(meta)) = map.get_mut("metadata") {
                meta.retain(|k, _| k == "name" || k == "namespace");
            }
        } else if opts.reset_status {
            map.shift_remove("status");
        }
    }
    Ok(config)
}

fn without_managed_fields(object: &Value) -> Value {
    let mut out = object.clone();
    remove_metadata(&mut out, &["managedFields"]);
    out
}

fn conflict(entry: &Entry, path: &[PathElement]) -> Conflict {
    Conflict {
        manager: entry.manager.clone(),
        operation: entry.operation.clone(),
        api_version: entry.api_version.clone(),
        subresource: entry.subresource.clone(),
        path: path_string(path),
    }
}

/// The fields `manager` owns through any of its entries (test and diagnostics helper).
pub fn owned_by(object: &Value, manager: &str) -> FieldSet {
    managed::decode(object)
        .iter()
        .filter(|e| e.manager == manager)
        .fold(FieldSet::new(), |acc, e| acc.union(&e.set))
}

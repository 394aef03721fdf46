//! The steps every write passes before the store: identity checks, status and subresource
//! rules, server-filled fields, defaulting, validation, and dry run.

use super::handler::Call;
use super::read::{key, present};
use super::state::ServerState;
use super::status::ApiError;
use super::write::to_api_error;
use crate::apply::ApplyError;
use crate::store::metadata_mut;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::Ordering;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Create,
    Update,
}

/// Five characters from Kubernetes' name alphabet, derived from `n` (deterministic).
pub fn suffix(n: u64) -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(17) ^ 0x5bd1_e995;
    (0..5)
        .map(|_| {
            let c = ALPHABET[(x % ALPHABET.len() as u64) as usize] as char;
            x /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// The object in a request must be the one the URL names.
pub fn check_identity(call: &Call, obj: &Value, name: &str) -> Result<(), ApiError> {
    let want_av = call.rt.api_version();
    if let Some(av) = obj.get("apiVersion").and_then(Value::as_str)
        && av != want_av
    {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({av}) does not match the expected API version ({want_av})"
        )));
    }
    if let Some(kind) = obj.get("kind").and_then(Value::as_str)
        && kind != call.rt.kind
    {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            call.rt.kind
        )));
    }
    if let Some(n) = obj.pointer("/metadata/name").and_then(Value::as_str)
        && !name.is_empty()
        && n != name
    {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        )));
    }
    if let (Some(ns), Some(path_ns)) = (
        obj.pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty()),
        call.path.namespace.as_deref(),
    ) && call.rt.namespaced
        && ns != path_ns
    {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    Ok(())
}

/// A server-side apply failure as the API server reports it.
pub fn apply_error(call: &Call, name: &str, e: ApplyError) -> ApiError {
    match e {
        ApplyError::Conflict(conflicts) => {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|c| json!({"type": "FieldManagerConflict",
                                "message": format!("conflict with \"{}\" using {}", c.manager, c.api_version),
                                "field": c.path}))
                .collect();
            ApiError::new(409, "Conflict", ApplyError::Conflict(conflicts).to_string())
                .with_details(json!({
                    "name": name, "group": call.rt.group, "kind": call.rt.plural, "causes": causes
                }))
        }
        other @ ApplyError::Invalid(_) => ApiError::bad_request(other.to_string()),
    }
}

/// The status a kind starts with when created (status written by clients is dropped).
fn initial_status(kind: &str) -> Option<Value> {
    match kind {
        "Pod" => Some(json!({"phase": "Pending", "qosClass": "BestEffort"})),
        "Namespace" => Some(json!({"phase": "Active"})),
        "PersistentVolumeClaim" | "PersistentVolume" => Some(json!({"phase": "Pending"})),
        _ => None,
    }
}

/// Run the admission steps and store the object (unless dry run). Returns it as stored.
pub fn admit(
    state: &Arc<ServerState>,
    call: &Call,
    name: &str,
    old: Option<&Value>,
    mut obj: Value,
    op: Op,
) -> Result<Value, ApiError> {
    check_identity(call, &obj, name)?;
    let rt = &call.rt;
    let namespace = if rt.namespaced {
        call.path
            .namespace
            .clone()
            .or_else(|| {
                obj.pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or_else(|| "default".into())
    } else {
        String::new()
    };
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(rt.api_version()));
        o.insert("kind".into(), json!(rt.kind));
    }
    {
        let meta = metadata_mut(&mut obj);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            meta.insert("namespace".into(), json!(namespace));
        } else {
            meta.remove("namespace");
        }
    }
    let sub = call.path.subresource.as_deref();
    match (sub, old) {
        (Some("status"), Some(old)) => {
            let mut merged = old.clone();
            merged["status"] = obj.get("status").cloned().unwrap_or(json!({}));
            if let Some(mf) = obj.pointer("/metadata/managedFields") {
                merged["metadata"]["managedFields"] = mf.clone();
            }
            obj = merged;
        }
        (Some(_), _) => return Err(ApiError::method_not_allowed()),
        (None, Some(old)) if rt.has_status() => match old.get("status") {
            Some(s) => obj["status"] = s.clone(),
            None => {
                if let Some(o) = obj.as_object_mut() {
                    o.remove("status");
                }
            }
        },
        (None, None) if rt.has_status() => {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
            if let Some(s) = initial_status(&rt.kind) {
                obj["status"] = s;
            }
        }
        _ => {}
    }
    if op == Op::Create {
        check_namespace(state, rt.namespaced, &namespace)?;
        let meta = metadata_mut(&mut obj);
        for server_field in [
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "selfLink",
        ] {
            meta.remove(server_field);
        }
        let uid = state.store.new_uid();
        meta.insert("uid".into(), json!(uid));
        fill_server_fields(state, &mut obj, &uid);
    }
    crate::defaults::default_object(&mut obj);
    if let (Op::Update, Some(old)) = (op, old)
        && rt.kind == "Service"
        && rt.group.is_empty()
    {
        crate::defaults::preserve_service_allocations(old, &mut obj);
    }
    let validated = match old {
        Some(old) if op == Op::Update => crate::validation::validate_update(old, &obj),
        _ => crate::validation::validate(&obj),
    };
    validated.map_err(|invalid| {
        let status = invalid.to_status();
        ApiError::new(422, "Invalid", invalid.message()).with_details(status["details"].clone())
    })?;
    super::customschema::check(state, call, name, &mut obj)?;
    let k = key(rt, Some(&namespace), name);
    if let (Op::Update, Some(old)) = (op, old) {
        // A write that changes nothing keeps the resourceVersion and emits no event.
        if let Some(rv) = old.pointer("/metadata/resourceVersion") {
            obj["metadata"]["resourceVersion"] = rv.clone();
        }
        if same_ignoring_server_fields(old, &obj) {
            return Ok(present(rt, old));
        }
    }
    if call.params.dry_run() {
        let meta = metadata_mut(&mut obj);
        if op == Op::Create {
            meta.insert(
                "creationTimestamp".into(),
                json!(state.store.clock().now_rfc3339()),
            );
        }
        if op == Op::Create && obj.get("spec").is_some() {
            obj["metadata"]["generation"] = json!(1);
        }
        return Ok(present(rt, &obj));
    }
    let stored = match op {
        Op::Create => state.store.create(&k, obj),
        Op::Update => state.store.update(&k, obj, None),
    }
    .map_err(|e| to_api_error(call, name, &e))?;
    Ok(present(rt, &stored))
}

fn check_namespace(state: &ServerState, namespaced: bool, namespace: &str) -> Result<(), ApiError> {
    if !namespaced {
        return Ok(());
    }
    let ns = state
        .store
        .get(&crate::store::ObjectKey::new(
            "",
            "namespaces",
            "",
            namespace,
        ))
        .ok_or_else(|| ApiError::not_found("namespaces", namespace))?;
    if ns.pointer("/metadata/deletionTimestamp").is_some() {
        return Err(ApiError::new(
            403,
            "Forbidden",
            format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        ));
    }
    Ok(())
}

/// Fields the API server itself fills on create, in its order: defaulting, the service
/// account token volume, the default StorageClass, the Job selector (needs the uid), and
/// ClusterIP allocation.
fn fill_server_fields(state: &ServerState, obj: &mut Value, uid: &str) {
    crate::defaults::default_object(obj);
    match obj.get("kind").and_then(Value::as_str).unwrap_or_default() {
        "Pod" => {
            let n = state.names.fetch_add(1, Ordering::Relaxed);
            crate::defaults::mount_service_account_token(obj, &suffix(u64::from(n) + 7_000_000));
        }
        "PersistentVolumeClaim" => {
            let (classes, _) = state.store.list("storage.k8s.io", "storageclasses", None);
            let default = classes
                .iter()
                .find(|c| {
                    c.pointer("/metadata/annotations/storageclass.kubernetes.io~1is-default-class")
                        .and_then(Value::as_str)
                        == Some("true")
                })
                .and_then(|c| {
                    c.pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .map(str::to_owned)
                });
            crate::defaults::default_storage_class(obj, default.as_deref());
        }
        "Job" => crate::defaults::default_job_selector(obj, uid),
        "Service" => {
            let n = state.cluster_ips.fetch_add(1, Ordering::Relaxed);
            crate::defaults::allocate_cluster_ip(obj, n);
            // Only a NodePort or LoadBalancer Service takes node ports: the others need
            // no walk over every Service's ports.
            let kind = obj.pointer("/spec/type").and_then(Value::as_str);
            let services = if matches!(kind, Some("NodePort" | "LoadBalancer")) {
                state.store.list("", "services", None).0
            } else {
                Vec::new()
            };
            let in_use: Vec<u32> = services
                .iter()
                .flat_map(|s| {
                    s.pointer("/spec/ports")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default()
                })
                .filter_map(|p| {
                    p.get("nodePort")
                        .and_then(Value::as_u64)
                        .and_then(|n| u32::try_from(n).ok())
                })
                .collect();
            crate::defaults::allocate_node_ports(obj, &in_use);
        }
        _ => {}
    }
}

/// Equal except for fields only the store sets.
fn same_ignoring_server_fields(old: &Value, new: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in ["generation", "uid", "creationTimestamp"] {
                m.remove(f);
            }
        }
        v
    };
    strip(old) == strip(new)
}

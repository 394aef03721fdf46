//! create, update, patch (server-side apply, merge, JSON and strategic), delete: each goes
//! through the same admission steps (status handling, defaulting, validation, managed
//! fields) and stores nothing on `dryRun=All`.

use super::admission::{self, Op};
use super::fieldvalidation;
use super::handler::Call;
use super::protobuf;
use super::read::{key, present};
use super::state::ServerState;
use super::status::ApiError;
use crate::apply;
use crate::store::{DeleteOptions, StoreError};
use serde_json::{Value, json};
use std::sync::Arc;

fn parse_body(call: &Call) -> Result<Value, ApiError> {
    decode_body(&call.content_type, &call.body)
}

/// A request body in JSON, YAML or protobuf, by its content type.
pub(super) fn decode_body(content_type: &str, body: &[u8]) -> Result<Value, ApiError> {
    if body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    let media_type = content_type.split(';').next().unwrap_or_default().trim();
    if media_type == protobuf::MEDIA_TYPE {
        return protobuf::decode(body).map_err(|e| match e {
            protobuf::ProtobufError::Unsupported { .. }
            | protobuf::ProtobufError::UnknownField { .. } => ApiError::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml ({e})"
                ),
            ),
            other => ApiError::bad_request(other.to_string()),
        });
    }
    let yaml = content_type.contains("yaml");
    let parsed: Result<Value, String> = if yaml {
        serde_yaml_ng::from_slice(body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(body).map_err(|e| e.to_string())
    };
    parsed.map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request was in an unknown format: {e}"
        ))
    })
}

/// The field manager: `fieldManager`, else the client's program name from User-Agent.
fn manager(call: &Call) -> String {
    if let Some(manager) = call.params.get("fieldManager") {
        return manager.to_owned();
    }
    let ua = call.user_agent.split('/').next().unwrap_or_default().trim();
    if ua.is_empty() {
        "unknown".to_owned()
    } else {
        ua.to_owned()
    }
}

pub(super) fn to_api_error(call: &Call, name: &str, e: &StoreError) -> ApiError {
    let gr = call.rt.group_resource();
    match e {
        StoreError::AlreadyExists(_) => ApiError::already_exists(&gr, name),
        StoreError::NotFound(_) => ApiError::not_found(&gr, name),
        StoreError::Conflict => ApiError::conflict(&gr, name),
        StoreError::Expired { .. } => ApiError::expired(e.to_string()),
    }
}

pub fn create(state: &Arc<ServerState>, call: &Call) -> Result<(u16, Value), ApiError> {
    if call.path.subresource.is_some() {
        return Err(ApiError::method_not_allowed());
    }
    let mut obj = parse_body(call)?;
    fieldvalidation::decode_object(call, &mut obj)?;
    let name = match obj.pointer("/metadata/name").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_owned(),
        _ => match obj
            .pointer("/metadata/generateName")
            .and_then(Value::as_str)
        {
            Some(prefix) => {
                let n = state
                    .names
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                format!("{prefix}{}", admission::suffix(u64::from(n)))
            }
            None => {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    format!(
                        "{} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                        call.rt.kind
                    ),
                ));
            }
        },
    };
    obj["metadata"]["name"] = json!(name);
    let mgr = manager(call);
    let time = state.store.clock().now_rfc3339();
    let api_version = call.rt.api_version();
    apply::record_update(None, &mut obj, &mgr, &api_version, &time, None);
    let stored = admission::admit(state, call, &name, None, obj, Op::Create)?;
    Ok((201, stored))
}

pub fn update(state: &Arc<ServerState>, call: &Call) -> Result<Value, ApiError> {
    let name = call.path.name.clone().unwrap_or_default();
    let k = key(&call.rt, call.path.namespace.as_deref(), &name);
    let old = state
        .store
        .get(&k)
        .ok_or_else(|| ApiError::not_found(&call.rt.group_resource(), &name))?;
    let mut obj = parse_body(call)?;
    fieldvalidation::decode_object(call, &mut obj)?;
    let expected = obj
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(str::to_owned);
    if let Some(expected) = expected.filter(|e| !e.is_empty())
        && old
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            != Some(expected.as_str())
    {
        return Err(ApiError::conflict(&call.rt.group_resource(), &name));
    }
    let time = state.store.clock().now_rfc3339();
    apply::record_update(
        Some(&old),
        &mut obj,
        &manager(call),
        &call.rt.api_version(),
        &time,
        call.path.subresource.as_deref(),
    );
    admission::admit(state, call, &name, Some(&old), obj, Op::Update)
}

pub fn patch(state: &Arc<ServerState>, call: &Call) -> Result<(u16, Value), ApiError> {
    let name = call.path.name.clone().unwrap_or_default();
    let k = key(&call.rt, call.path.namespace.as_deref(), &name);
    let old = state.store.get(&k);
    let ct = call
        .content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim();
    let time = state.store.clock().now_rfc3339();
    let api_version = call.rt.api_version();
    if ct == "application/apply-patch+yaml" || ct == "application/apply-patch+cbor" {
        let Some(mgr) = call.params.get("fieldManager") else {
            return Err(ApiError::bad_request(
                "PATCH, application/apply-patch+yaml requests must have a fieldManager",
            ));
        };
        let applied = parse_body(call)?;
        admission::check_identity(call, &applied, &name)?;
        fieldvalidation::decode_apply(call, &applied, &name)?;
        let opts = apply::ApplyOptions {
            manager: mgr,
            force: call.params.flag("force"),
            api_version: &api_version,
            time: &time,
            subresource: call.path.subresource.as_deref(),
            reset_status: call.rt.has_status() && call.path.subresource.is_none(),
        };
        let merged = apply::apply(old.as_deref(), &applied, &opts)
            .map_err(|e| admission::apply_error(call, &name, e))?;
        return match old {
            None => {
                admission::admit(state, call, &name, None, merged, Op::Create).map(|v| (201, v))
            }
            Some(old) => admission::admit(state, call, &name, Some(&old), merged, Op::Update)
                .map(|v| (200, v)),
        };
    }
    let old = old.ok_or_else(|| ApiError::not_found(&call.rt.group_resource(), &name))?;
    let patch = parse_body(call)?;
    let base = present(&call.rt, &old);
    let mut patched = match ct {
        "application/merge-patch+json" => apply::merge_patch(&base, &patch),
        "application/json-patch+json" => apply::json_patch(&base, &patch)
            .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?,
        "application/strategic-merge-patch+json" => {
            if call.rt.custom {
                return Err(ApiError::new(
                    415,
                    "UnsupportedMediaType",
                    "strategic merge patch is not supported for custom resources",
                ));
            }
            apply::strategic_merge_patch(&base, &patch)
                .map_err(|e| ApiError::new(422, "Invalid", e.to_string()))?
        }
        other => {
            return Err(ApiError::new(
                415,
                "UnsupportedMediaType",
                format!(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json; got {other:?}"
                ),
            ));
        }
    };
    fieldvalidation::decode_patched(call, &mut patched)?;
    apply::record_update(
        Some(&old),
        &mut patched,
        &manager(call),
        &api_version,
        &time,
        call.path.subresource.as_deref(),
    );
    admission::admit(state, call, &name, Some(&old), patched, Op::Update).map(|v| (200, v))
}

pub fn delete(state: &Arc<ServerState>, call: &Call) -> Result<Value, ApiError> {
    let name = call.path.name.clone().unwrap_or_default();
    let k = key(&call.rt, call.path.namespace.as_deref(), &name);
    let body: Value = if call.body.is_empty() {
        json!({})
    } else {
        parse_body(call)?
    };
    let grace = call
        .params
        .get("gracePeriodSeconds")
        .and_then(|g| g.parse().ok())
        .or_else(|| body.get("gracePeriodSeconds").and_then(Value::as_i64));
    let dry_run = call.params.dry_run()
        || body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|d| d.iter().any(|x| x == "All"));
    if let Some(live) = state.store.get(&k) {
        check_preconditions(call, &name, &body, &live)?;
    }
    if dry_run {
        return state
            .store
            .get(&k)
            .map(|o| present(&call.rt, &o))
            .ok_or_else(|| ApiError::not_found(&call.rt.group_resource(), &name));
    }
    let obj = state
        .store
        .delete(
            &k,
            DeleteOptions {
                grace_period_seconds: grace,
            },
        )
        .map_err(|e| to_api_error(call, &name, &e))?;
    Ok(present(&call.rt, &obj))
}

/// `DeleteOptions.preconditions`: the delete applies only to the object with this uid or
/// resourceVersion (409 Conflict otherwise, in the API server's words).
fn check_preconditions(
    call: &Call,
    name: &str,
    body: &Value,
    live: &Value,
) -> Result<(), ApiError> {
    for (field, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        let Some(wanted) = body
            .pointer(&format!("/preconditions/{field}"))
            .and_then(Value::as_str)
        else {
            continue;
        };
        let found = live
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        if wanted != found {
            return Err(ApiError::new(
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {} \"{name}\": Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {found}",
                    call.rt.group_resource()
                ),
            ));
        }
    }
    Ok(())
}

pub fn delete_collection(state: &Arc<ServerState>, call: &Call) -> Result<Value, ApiError> {
    let listed = super::read::list(state, call)?;
    let mut deleted = Vec::new();
    for item in listed["items"].as_array().into_iter().flatten() {
        let name = item
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let ns = item.pointer("/metadata/namespace").and_then(Value::as_str);
        let k = key(&call.rt, ns.or(call.path.namespace.as_deref()), name);
        if !call.params.dry_run()
            && let Ok(o) = state.store.delete(&k, DeleteOptions::default())
        {
            deleted.push(present(&call.rt, &o));
            continue;
        }
        deleted.push(item.clone());
    }
    Ok(
        json!({"kind": call.rt.list_kind(), "apiVersion": call.rt.api_version(),
              "metadata": {"resourceVersion": state.store.current_rv().to_string()}, "items": deleted}),
    )
}

//! The one entry point for every request: authenticate, authorize, route, record, inject
//! faults, dispatch.

use super::access_review;
use super::authn::{Loopback, UserInfo};
use super::discovery;
use super::impersonate;
use super::params::Params;
use super::path::{self, ResourcePath, Route};
use super::rbac::{self, Attributes};
use super::recorder::RecordedCall;
use super::state::ServerState;
use super::status::ApiError;
use super::{openapi, podlog, read, watch, write};
use crate::resources::ResourceType;
use crate::scenario::Fault;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// Largest request body accepted (the real server's limit is 3 MiB per object).
const MAX_BODY: usize = 8 << 20;

/// What a resource request is, once routed.
pub struct Call {
    pub rt: ResourceType,
    pub path: ResourcePath,
    pub params: Params,
    pub content_type: String,
    pub user_agent: String,
    pub body: Vec<u8>,
    pub fault: Option<Fault>,
    /// Warnings for the client, sent as `Warning: 299 - "..."` headers.
    pub warnings: Mutex<Vec<String>>,
}

impl Call {
    pub fn warn(&self, text: String) {
        if let Ok(mut w) = self.warnings.lock() {
            w.push(text);
        }
    }
}

pub async fn handle(State(state): State<Arc<ServerState>>, req: Request) -> Response {
    match route(&state, req).await {
        Ok(resp) => resp,
        Err(e) => e.into_response(),
    }
}

fn json(value: Value) -> Response {
    axum::Json(value).into_response()
}

async fn route(state: &Arc<ServerState>, req: Request) -> Result<Response, ApiError> {
    let (parts, body) = req.into_parts();
    let params = Params::parse(parts.uri.query());
    let accept = header_str(&parts.headers, header::ACCEPT);
    let route = path::parse(parts.uri.path());
    let user = identify(state, &parts, &params, route.as_ref())?;
    let Some(route) = route else {
        return Err(ApiError::path_not_found());
    };
    let registry = &state.registry;
    if matches!(
        route,
        Route::Api | Route::Apis | Route::Group(_) | Route::GroupVersion { .. }
    ) {
        // Discovery is recorded too (verb `discover`, the path as resource), so benchmarks
        // and tests can count what a client's discovery costs.
        let call = RecordedCall::of(&parts, "discover", parts.uri.path(), None);
        state.recorder.record(call);
    }
    let resource_path = match route {
        Route::Version => return Ok(json(discovery::version(state.scenario.kubernetes_version))),
        Route::Health => return Ok("ok".into_response()),
        Route::DebugRequests => {
            let counts: Vec<Value> = state
                .recorder
                .counts()
                .into_iter()
                .map(|((verb, resource), n)| {
                    serde_json::json!({"verb": verb, "resource": resource, "count": n})
                })
                .collect();
            return Ok(json(serde_json::json!({ "requests": counts })));
        }
        Route::DebugMilestones => return Ok(json(state.milestones.report())),
        Route::OpenApiIndex => return Ok(json(openapi::index(registry))),
        Route::OpenApi(gv) => {
            return openapi::group_version(registry, &gv)
                .map(json)
                .ok_or_else(ApiError::path_not_found);
        }
        Route::Api | Route::Apis if discovery::wants_aggregated(&accept) => {
            let mut resp = json(discovery::aggregated(registry, route == Route::Api));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(discovery::AGGREGATED),
            );
            return Ok(resp);
        }
        Route::Api => return Ok(json(discovery::api_versions())),
        Route::Apis => return Ok(json(discovery::group_list(registry))),
        Route::Group(g) => {
            return discovery::group(registry, &g)
                .map(json)
                .ok_or_else(ApiError::path_not_found);
        }
        Route::GroupVersion { group, version } => {
            return discovery::resource_list(registry, &group, &version)
                .map(json)
                .ok_or_else(ApiError::path_not_found);
        }
        Route::Resource(p) => p,
    };
    if access_review::is_review(&resource_path.group, &resource_path.resource) {
        if parts.method != Method::POST || resource_path.name.is_some() {
            return Err(ApiError::method_not_allowed());
        }
        let call = RecordedCall::of(&parts, "create", &resource_path.resource, None);
        state.recorder.record(call);
        let body = to_bytes(body, MAX_BODY)
            .await
            .map_err(|e| ApiError::bad_request(format!("failed to read request body: {e}")))?;
        let content_type = header_str(&parts.headers, header::CONTENT_TYPE);
        return access_review::review(
            state,
            user.as_ref(),
            &resource_path.resource,
            &content_type,
            &body,
        )
        .map(|v| with_code(201, v));
    }
    let rt = registry
        .by_path(
            &resource_path.group,
            &resource_path.version,
            &resource_path.resource,
        )
        .ok_or_else(ApiError::path_not_found)?;
    if resource_path.namespace.is_some() && !rt.namespaced {
        return Err(ApiError::path_not_found());
    }
    let verb = verb_of(&parts.method, &resource_path, &params)?;
    let resource_label = match &resource_path.subresource {
        Some(sub) => format!("{}/{sub}", rt.plural),
        None => rt.plural.clone(),
    };
    let namespace = resource_path.namespace.clone();
    let call = RecordedCall::of(&parts, verb, &resource_label, namespace);
    state.recorder.record(call);
    if let Some(code) = state.outage.status() {
        let message = match code {
            401 => "Unauthorized".to_owned(),
            429 => "Too many requests, please try again later.".to_owned(),
            _ => format!("kube-sim outage: {verb} {resource_label}"),
        };
        let mut err = ApiError::new(code, reason_for(code), message);
        err.retry_after = (code == 429).then_some(1);
        return Err(err);
    }
    let fault = state
        .faults
        .check(verb, &resource_label, resource_path.namespace.as_deref());
    if let Some(f) = &fault {
        if let Some(latency) = f.latency {
            tokio::time::sleep(latency.0).await;
        }
        if let Some(code) = f.status {
            let mut err = ApiError::new(
                code,
                reason_for(code),
                f.message
                    .clone()
                    .unwrap_or_else(|| format!("kube-sim injected fault: {verb} {resource_label}")),
            );
            err.retry_after = f.retry_after.map(|d| d.0.as_secs_f64().ceil() as u64);
            return Err(err);
        }
    }
    let body = to_bytes(body, MAX_BODY)
        .await
        .map_err(|e| ApiError::bad_request(format!("failed to read request body: {e}")))?
        .to_vec();
    let call = Call {
        rt,
        path: resource_path,
        params,
        content_type: header_str(&parts.headers, header::CONTENT_TYPE),
        user_agent: header_str(&parts.headers, header::USER_AGENT),
        body,
        fault,
        warnings: Mutex::default(),
    };
    if verb == "watch" {
        return Ok(watch::watch(state, call));
    }
    let mut resp = match verb {
        "get" if call.path.subresource.as_deref() == Some("log") => podlog::logs(state, &call),
        "get" => read::get(state, &call).map(json),
        "list" => read::list(state, &call).map(json),
        "create" => write::create(state, &call).map(|(code, v)| with_code(code, v)),
        "update" => write::update(state, &call).map(json),
        "patch" => write::patch(state, &call).map(|(code, v)| with_code(code, v)),
        "delete" => write::delete(state, &call).map(json),
        "deletecollection" => write::delete_collection(state, &call).map(json),
        _ => Err(ApiError::method_not_allowed()),
    }
    .unwrap_or_else(IntoResponse::into_response);
    for text in call.warnings.lock().map(|w| w.clone()).unwrap_or_default() {
        if let Ok(v) = HeaderValue::from_str(&warning_header(&text)) {
            resp.headers_mut().append(header::WARNING, v);
        }
    }
    Ok(resp)
}

/// Who sent the request (`None` with authentication off), once it is authenticated,
/// impersonation applied, and authorized. This comes before routing, as in kube-apiserver:
/// an unknown path is a 401 or 403 before it is a 404. kube-sim's own `/debug` endpoints
/// are not the API and stay open.
fn identify(
    state: &ServerState,
    parts: &http::request::Parts,
    params: &Params,
    route: Option<&Route>,
) -> Result<Option<UserInfo>, ApiError> {
    if matches!(route, Some(Route::DebugRequests | Route::DebugMilestones)) {
        return Ok(None);
    }
    let loopback = parts.extensions.get::<Loopback>().is_some();
    let Some(user) = state.authn.authenticate(&parts.headers, loopback)? else {
        return Ok(None);
    };
    let user = impersonate::apply(state, user, &parts.headers)?;
    if state.rbac {
        let attrs = Attributes::of_request(
            user.clone(),
            parts.method.as_str(),
            parts.uri.path(),
            params,
        );
        let decision = rbac::authorize(&state.store, &attrs);
        if !decision.allowed {
            return Err(attrs.forbidden(&decision.reason));
        }
    }
    Ok(Some(user))
}

/// `299 - "unknown field \"spec.replica\""`: code 299, no agent, the text quoted.
fn warning_header(text: &str) -> String {
    let quoted = text.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{quoted}\"")
}

fn with_code(code: u16, value: Value) -> Response {
    let status = axum::http::StatusCode::from_u16(code).unwrap_or(axum::http::StatusCode::OK);
    (status, axum::Json(value)).into_response()
}

fn header_str(headers: &axum::http::HeaderMap, name: header::HeaderName) -> String {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned()
}

fn verb_of(method: &Method, p: &ResourcePath, params: &Params) -> Result<&'static str, ApiError> {
    Ok(match (method.as_str(), p.name.is_some()) {
        ("GET", true) => "get",
        ("GET", false) if params.flag("watch") => "watch",
        ("GET", false) => "list",
        ("POST", false) => "create",
        ("POST", true) if p.subresource.is_some() => "create",
        ("PUT", true) => "update",
        ("PATCH", true) => "patch",
        ("DELETE", true) => "delete",
        ("DELETE", false) => "deletecollection",
        _ => return Err(ApiError::method_not_allowed()),
    })
}

fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        409 => "Conflict",
        410 => "Expired",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}

/// Turn a body into a response stream (used by watch).
pub fn streaming(body: Body) -> Response {
    let mut resp = Response::new(body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    resp
}

//! API errors as `metav1.Status` bodies with the codes and reasons clients switch on.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An error answer of the API server.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Box<Value>>,
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason,
            message: message.into(),
            details: None,
            retry_after: None,
        }
    }

    pub fn not_found(group_resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{group_resource} \"{name}\" not found"),
        )
        .with_details(json!({"name": name, "kind": kind_of(group_resource)}))
    }

    pub fn already_exists(group_resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{group_resource} \"{name}\" already exists"),
        )
        .with_details(json!({"name": name, "kind": kind_of(group_resource)}))
    }

    pub fn conflict(group_resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {group_resource} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
            ),
        )
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 401: no bearer token, or one the server does not accept.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    /// The `metav1.Status` object, its fields in the order the API server writes them
    /// (`details` before `code`).
    pub fn status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        });
        // An error the API server has no reason for (StatusReasonUnknown) omits the field.
        if !self.reason.is_empty() {
            s["reason"] = json!(self.reason);
        }
        let mut details = self.details.as_deref().cloned();
        if let Some(r) = self.retry_after {
            details.get_or_insert_with(|| json!({}))["retryAfterSeconds"] = json!(r);
        }
        if let Some(d) = details {
            s["details"] = d;
        }
        s["code"] = json!(self.code);
        s
    }
}

fn kind_of(group_resource: &str) -> &str {
    group_resource.split('.').next().unwrap_or(group_resource)
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut resp = (code, axum::Json(self.status())).into_response();
        if let Some(r) = self.retry_after
            && let Ok(v) = HeaderValue::from_str(&r.to_string())
        {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
        resp
    }
}

//! Server-side apply of one manifest, with retries on the answers that mean "try again"
//! (429, 5xx), reading the live object a dry run is compared with, and waiting for a CRD
//! to be Established.

use crate::pointer::Pointer;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use kube::discovery::ApiResource;
use serde_json::Value;
use std::time::Duration;

/// The field manager deploy-action applies as.
pub const FIELD_MANAGER: &str = "deploy-action";

/// Attempts at one apply when the server says "later".
const ATTEMPTS: u32 = 4;

/// The server refused, or could not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Rejection {
    /// HTTP code when the API server answered.
    pub code: Option<u16>,
    pub message: String,
}

pub(crate) fn api_for(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, ar),
        None => Api::all_with(client.clone(), ar),
    }
}

/// The API server's text for a server-side apply whose body does not fit the kind's schema
/// (`replicas: "two"`, an undeclared field). It comes as a 500, but asking again cannot help.
const TYPED_PATCH_REFUSED: &str = "failed to create typed patch object";

fn retryable(e: &kube::Error) -> bool {
    match e {
        kube::Error::Api(s) if s.message.starts_with(TYPED_PATCH_REFUSED) => false,
        kube::Error::Api(s) => s.code == 429 || s.code >= 500,
        kube::Error::HyperError(_) | kube::Error::Service(_) => true,
        _ => false,
    }
}

/// Server-side apply with the given field manager and force, retried on the answers that
/// mean "try again".
pub async fn apply_with(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    object: &Value,
    params: PatchParams,
) -> Result<Value, Rejection> {
    let name = object
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let api = api_for(client, ar, namespace);
    let patch = Patch::Apply(object);
    let obj = retrying("apply", || api.patch(name, &params, &patch)).await?;
    Ok(stamped(&obj, ar))
}

/// `obj` as JSON, with the apiVersion and kind a server may leave out of a typed answer.
pub(crate) fn stamped(obj: &DynamicObject, ar: &ApiResource) -> Value {
    let mut v = serde_json::to_value(obj).unwrap_or_default();
    v["apiVersion"] = Value::String(ar.api_version.clone());
    v["kind"] = Value::String(ar.kind.clone());
    v
}

/// One request, bounded by the request timeout: `Err` when it did not answer in time
/// (`what` names it in the message), else the server's answer.
pub(crate) async fn timed<T>(
    what: &str,
    request: impl std::future::Future<Output = Result<T, kube::Error>>,
) -> Result<Result<T, kube::Error>, Rejection> {
    tokio::time::timeout(super::REQUEST_TIMEOUT, request)
        .await
        .map_err(|_| Rejection {
            code: None,
            message: format!(
                "the API server did not answer the {what} within {}s",
                super::REQUEST_TIMEOUT.as_secs()
            ),
        })
}

/// Send a write, again (with back-off) while the server answers "later"; each attempt is
/// bounded by the request timeout. `what` names the write in the timeout's message.
pub async fn retrying<T, F, Fut>(what: &str, mut send: F) -> Result<T, Rejection>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, kube::Error>>,
{
    let mut delay = Duration::from_millis(500);
    let mut attempt = 1;
    loop {
        match timed(what, send()).await? {
            Ok(obj) => return Ok(obj),
            Err(e) if attempt < ATTEMPTS && retryable(&e) => {
                tokio::time::sleep(delay).await;
                delay *= 2;
                attempt += 1;
            }
            Err(kube::Error::Api(s)) => {
                return Err(Rejection {
                    code: Some(s.code),
                    message: s.message,
                });
            }
            Err(e) => {
                return Err(Rejection {
                    code: None,
                    message: format!("{e:#}"),
                });
            }
        }
    }
}

/// The live object `name` (`None`: there is none), as `apply` returns objects: to compare
/// with a dry-run result.
pub async fn live(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<Value>, Rejection> {
    let api = api_for(client, ar, namespace);
    let Some(obj) = retrying("read", || api.get_opt(name)).await? else {
        return Ok(None);
    };
    Ok(Some(stamped(&obj, ar)))
}

/// The cluster's CRDs, as JSON, to read their annotations; none when they cannot be
/// listed (then every custom resource keeps the default phase).
pub async fn crds(client: &kube::Client) -> Vec<Value> {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    match tokio::time::timeout(super::REQUEST_TIMEOUT, api.list(&ListParams::default())).await {
        Ok(Ok(list)) => list
            .items
            .into_iter()
            .filter_map(|crd| serde_json::to_value(crd).ok())
            .collect(),
        _ => Vec::new(),
    }
}

/// Wait until a CRD is Established (or `timeout` passes).
pub async fn wait_established(client: &kube::Client, name: &str, timeout: Duration) -> bool {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let cond = kube::runtime::wait::conditions::is_crd_established();
    matches!(
        tokio::time::timeout(
            timeout,
            kube::runtime::wait::await_condition(api, name, cond)
        )
        .await,
        Ok(Ok(Some(_)))
    )
}

#[cfg(test)]
mod tests {
    use super::retryable;

    fn api(code: u16, message: &str) -> kube::Error {
        let status: kube::core::Status = serde_json::from_value(serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "code": code, "message": message,
        }))
        .unwrap();
        kube::Error::Api(Box::new(status))
    }

    #[test]
    fn server_errors_are_retried_but_a_body_the_schema_refuses_is_not() {
        assert!(retryable(&api(
            503,
            "the server is currently unable to handle the request"
        )));
        assert!(retryable(&api(429, "too many requests")));
        assert!(retryable(&api(500, "etcdserver: request timed out")));
        assert!(!retryable(&api(
            500,
            "failed to create typed patch object (default/web; apps/v1, Kind=Deployment): \
             .spec.replicas: expected numeric (int or float), got string"
        )));
        assert!(!retryable(&api(422, "Deployment.apps \"web\" is invalid")));
    }
}

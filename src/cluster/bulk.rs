//! Server-side apply for the bulk of a deploy: the request built once from the manifest's
//! bytes, the answer kept as text and read only for what the caller needs (nothing after a
//! dry run; the time of our apply after a real one), with [`apply::apply_with`]'s retries and
//! request timeout. `Api::patch` would parse every answer into a `DynamicObject` and turn
//! it into a `Value` again, for thousands of answers mostly thrown away.

use super::apply::{self, FIELD_MANAGER, Rejection};
use crate::pointer::Pointer;
use kube::core::DynamicObject;
use kube::discovery::ApiResource;
use serde::Deserialize;
use serde_json::Value;

/// Server-side apply `object` (forcing ownership, as a CI deployer must), or only check
/// it with `dryRun=All`; the server's answer as it came.
pub async fn apply_text(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    object: &Value,
    dry_run: bool,
) -> Result<String, Rejection> {
    let name = object
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut params = kube::api::PatchParams::apply(FIELD_MANAGER).force();
    params.dry_run = dry_run;
    let url = apply::api_for(client, ar, namespace)
        .resource_url()
        .to_owned();
    let request = kube::core::Request::new(url)
        .patch(name, &params, &kube::api::Patch::Apply(object))
        .map_err(|e| Rejection {
            code: None,
            message: format!("{e:#}"),
        })?;
    apply::retrying("apply", || client.request_text(copy(&request))).await
}

/// Another of `request`, to send again.
fn copy(request: &http::Request<Vec<u8>>) -> http::Request<Vec<u8>> {
    let mut again = http::Request::new(request.body().clone());
    *again.method_mut() = request.method().clone();
    *again.uri_mut() = request.uri().clone();
    *again.headers_mut() = request.headers().clone();
    again
}

/// An answer as [`apply::apply_with`] returns it: the object as JSON, stamped with the
/// apiVersion and kind a server may leave out.
pub fn object(text: &str, ar: &ApiResource) -> Result<Value, Rejection> {
    let obj: DynamicObject = serde_json::from_str(text).map_err(|e| Rejection {
        code: None,
        message: format!("the API server's answer could not be read: {e}"),
    })?;
    Ok(apply::stamped(&obj, ar))
}

/// The time the server recorded for our apply (`metadata.managedFields`), read without
/// parsing the rest of the answer into values.
pub fn applied_at(text: &str) -> Option<jiff::Timestamp> {
    #[derive(Deserialize)]
    struct Answer {
        metadata: Meta,
    }
    #[derive(Deserialize)]
    struct Meta {
        #[serde(default, rename = "managedFields")]
        managed_fields: Vec<Entry>,
    }
    #[derive(Deserialize)]
    struct Entry {
        manager: Option<String>,
        operation: Option<String>,
        time: Option<String>,
    }
    let answer: Answer = serde_json::from_str(text).ok()?;
    answer
        .metadata
        .managed_fields
        .into_iter()
        .find(|e| {
            e.manager.as_deref() == Some(FIELD_MANAGER) && e.operation.as_deref() == Some("Apply")
        })?
        .time?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_apply_time_is_our_managers_apply_entry() {
        let text = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a",
            "managedFields":[
              {"manager":"kubectl","operation":"Update","time":"2026-01-01T00:00:00Z"},
              {"manager":"deploy-action","operation":"Apply","time":"2026-01-02T03:04:05Z",
               "fieldsV1":{"f:data":{"f:mode":{}}}}]},
            "data":{"mode":"fast"}}"#;
        assert_eq!(
            applied_at(text),
            Some("2026-01-02T03:04:05Z".parse().unwrap())
        );
        assert_eq!(applied_at(r#"{"metadata":{"name":"a"}}"#), None);
        assert_eq!(applied_at("not json"), None);
    }
}

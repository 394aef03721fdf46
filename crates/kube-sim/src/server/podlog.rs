//! `pods/{name}/log`: container logs as text, with the kubelet's 400 answers for
//! containers that are not running yet.

use super::handler::Call;
use super::read::key;
use super::state::ServerState;
use super::status::ApiError;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use std::sync::Arc;

pub fn logs(state: &Arc<ServerState>, call: &Call) -> Result<Response, ApiError> {
    let name = call.path.name.clone().unwrap_or_default();
    let ns = call
        .path
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let pod = state
        .store
        .get(&key(&call.rt, Some(&ns), &name))
        .ok_or_else(|| ApiError::not_found("pods", &name))?;
    let names: Vec<String> = ["initContainers", "containers"]
        .iter()
        .flat_map(|f| {
            pod.pointer(&format!("/spec/{f}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    let regular: Vec<&Value> = pod
        .pointer("/spec/containers")
        .and_then(Value::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let container = match call.params.get("container") {
        Some(c) if names.iter().any(|n| n == c) => c.to_owned(),
        Some(c) => {
            return Err(ApiError::bad_request(format!(
                "container {c} is not valid for pod {name}"
            )));
        }
        None if regular.len() == 1 => regular[0]
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
        None => {
            let list: Vec<&str> = regular
                .iter()
                .filter_map(|c| c.get("name").and_then(Value::as_str))
                .collect();
            return Err(ApiError::bad_request(format!(
                "a container name must be specified for pod {name}, choose one of: [{}]",
                list.join(" ")
            )));
        }
    };
    let previous = call.params.flag("previous");
    let lines = state.logs.read(&ns, &name, &container, previous);
    let Some(mut lines) = lines else {
        return Err(if previous {
            ApiError::bad_request(format!(
                "previous terminated container \"{container}\" in pod \"{name}\" not found"
            ))
        } else {
            ApiError::bad_request(waiting_message(&pod, &name, &container))
        });
    };
    if let Some(tail) = call
        .params
        .get("tailLines")
        .and_then(|t| t.parse::<usize>().ok())
    {
        let skip = lines.len().saturating_sub(tail);
        lines.drain(..skip);
    }
    let mut text = lines.join("\n");
    if !text.is_empty() {
        text.push('\n');
    }
    let mut resp = text.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    Ok(resp)
}

/// The kubelet's wording for a container that has not started.
fn waiting_message(pod: &Value, pod_name: &str, container: &str) -> String {
    let reason = ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|f| {
            pod.pointer(&format!("/status/{f}"))
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        })
        .find(|s| s.get("name").and_then(Value::as_str) == Some(container))
        .and_then(|s| {
            s.pointer("/state/waiting/reason")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "ContainerCreating".into());
    let what = match reason.as_str() {
        "ErrImagePull" | "ImagePullBackOff" => "trying and failing to pull image".to_owned(),
        "InvalidImageName" => "InvalidImageName".to_owned(),
        other => other.to_owned(),
    };
    format!("container \"{container}\" in pod \"{pod_name}\" is waiting to start: {what}")
}

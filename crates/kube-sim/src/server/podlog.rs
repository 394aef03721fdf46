//! `pods/{name}/log`: container logs as text, with the kubelet's 400 answers for
//! containers that are not running yet; `follow=true` keeps the stream open while the
//! container instance runs and ends it when that instance exits (or the pod goes away),
//! as the kubelet does.

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
    if call.params.flag("follow") && !previous {
        let pod_key = key(&call.rt, Some(&ns), &name);
        let instance = running_instance(&pod, &container);
        return Ok(follow(state, pod_key, container, instance, text));
    }
    let mut resp = text.into_response();
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    Ok(resp)
}

/// The status of `container` (a regular or an init container) in `pod`.
fn status_of<'p>(pod: &'p Value, container: &str) -> Option<&'p Value> {
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .filter_map(|f| {
            pod.pointer(&format!("/status/{f}"))
                .and_then(Value::as_array)
        })
        .flatten()
        .find(|s| s.get("name").and_then(Value::as_str) == Some(container))
}

/// The id of the container instance running now, if one is.
fn running_instance(pod: &Value, container: &str) -> Option<String> {
    status_of(pod, container)
        .filter(|s| s.pointer("/state/running").is_some())
        .and_then(|s| {
            s.get("containerID")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
}

/// Send what the instance has written, then hold the stream open until that instance is
/// no longer the one running (it exited or was replaced) or the pod is deleted.
fn follow(
    state: &Arc<ServerState>,
    pod_key: crate::store::ObjectKey,
    container: String,
    instance: Option<String>,
    text: String,
) -> Response {
    use axum::body::{Body, Bytes};
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::convert::Infallible>>(16);
    let mut changes = state.store.subscribe();
    let store = state.store.clone();
    tokio::spawn(async move {
        if !text.is_empty() && tx.send(Ok(Bytes::from(text))).await.is_err() {
            return;
        }
        let Some(instance) = instance else {
            return;
        };
        // A change since the request was read counts: look at the pod as it is now first.
        let still = |pod: Option<&Value>| {
            pod.and_then(|p| running_instance(p, &container)).as_deref() == Some(instance.as_str())
        };
        if !still(store.get(&pod_key).as_deref()) {
            return;
        }
        loop {
            tokio::select! {
                change = changes.recv() => match change {
                    Ok(c) if c.key == pod_key => {
                        let gone = c.kind == crate::store::ChangeType::Deleted;
                        if gone || !still(Some(&c.object)) {
                            return;
                        }
                    }
                    Ok(_) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        if !still(store.get(&pod_key).as_deref()) {
                            return;
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                },
                () = tx.closed() => return,
            }
        }
    });
    let mut resp = Response::new(Body::from_stream(
        tokio_stream::wrappers::ReceiverStream::new(rx),
    ));
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
    resp
}

/// The kubelet's wording for a container that has not started.
fn waiting_message(pod: &Value, pod_name: &str, container: &str) -> String {
    let reason = status_of(pod, container)
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

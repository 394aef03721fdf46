//! The last lines of a container's log, fetched once when a verdict needs them.

use crate::vocab::outcome::LogTail;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

/// How many lines a summary shows.
pub const TAIL_LINES: i64 = 25;

/// The log tail of `container` in `pod` (the previous instance when `previous`); `None`
/// when the kubelet has none to give. Refused (403), it says so and what to grant, so a
/// summary without logs is never a mystery.
pub async fn tail(
    client: &kube::Client,
    namespace: &str,
    pod: &str,
    container: &str,
    previous: bool,
) -> Option<LogTail> {
    let api: Api<Pod> = Api::namespaced(client.clone(), namespace);
    let params = LogParams {
        container: Some(container.to_owned()),
        previous,
        tail_lines: Some(TAIL_LINES),
        ..LogParams::default()
    };
    let answer = tokio::time::timeout(super::REQUEST_TIMEOUT, api.logs(pod, &params))
        .await
        .ok()?;
    let tail = |lines: Vec<String>, unreadable: Option<String>| LogTail {
        pod: pod.to_owned(),
        container: container.to_owned(),
        previous,
        lines,
        unreadable,
    };
    match answer {
        Ok(text) => Some(tail(text.lines().map(str::to_owned).collect(), None)),
        Err(kube::Error::Api(s)) if s.code == 403 => {
            Some(tail(Vec::new(), Some(refused(&s.message, namespace))))
        }
        Err(_) => None,
    }
}

/// What a refused log read tells the reader: the API server's words and the grant missing.
fn refused(message: &str, namespace: &str) -> String {
    format!(
        "the API server refused to read them ({message}); the deployer needs `get` on \
         `pods/log` in namespace {namespace}"
    )
}

/// Whether `container` of `pod` has started (or already ended): its log can be read.
fn has_started(pod: Option<&Pod>, container: &str) -> bool {
    let Some(pod) = pod else {
        // Gone: there is nothing left to wait for.
        return true;
    };
    let status = pod.status.as_ref();
    if matches!(
        status.and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    ) {
        return true;
    }
    status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .filter(|cs| cs.name == container)
        .filter_map(|cs| cs.state.as_ref())
        .any(|s| s.running.is_some() || s.terminated.is_some())
}

/// Follow the log of `container` in `pod` (`follow=true`): wait, on a watch, until the
/// container has started, then hand over each line as the API server sends it, until it
/// ends the stream (the container exited); or why it could not.
pub async fn follow(
    pods: &Api<Pod>,
    pod: &str,
    container: &str,
    mut on_line: impl FnMut(String),
) -> Result<(), String> {
    use futures::{AsyncBufReadExt, TryStreamExt};
    let started = |p: Option<&Pod>| has_started(p, container);
    kube::runtime::wait::await_condition(pods.clone(), pod, started)
        .await
        .map_err(|e| e.to_string())?;
    let params = LogParams {
        container: Some(container.to_owned()),
        follow: true,
        ..LogParams::default()
    };
    let stream = tokio::time::timeout(super::REQUEST_TIMEOUT, pods.log_stream(pod, &params))
        .await
        .map_err(|_| "the API server did not answer the log request".to_owned())?
        .map_err(|e| match e {
            kube::Error::Api(s) => s.message,
            other => other.to_string(),
        })?;
    let mut lines = stream.lines();
    while let Some(line) = lines.try_next().await.map_err(|e| e.to_string())? {
        on_line(line);
    }
    Ok(())
}

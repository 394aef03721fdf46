//! The last lines of a container's log, fetched once when a verdict needs them.

use crate::outcome::LogTail;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};

/// How many lines a summary shows.
pub const TAIL_LINES: i64 = 25;

/// The log tail of `container` in `pod` (the previous instance when `previous`); `None`
/// when the kubelet has none to give.
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
    let text = tokio::time::timeout(super::REQUEST_TIMEOUT, api.logs(pod, &params))
        .await
        .ok()?
        .ok()?;
    Some(LogTail {
        pod: pod.to_owned(),
        container: container.to_owned(),
        previous,
        lines: text.lines().map(str::to_owned).collect(),
    })
}

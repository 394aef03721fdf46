//! Deleting one object and waiting until it is gone, so it can be created anew: Helm's
//! `before-hook-creation` (a Job's template cannot change in place).

use crate::cluster::apply::{Rejection, api_for, retrying};
use kube::discovery::ApiResource;
use kube::runtime::wait::{await_condition, conditions};
use std::time::Duration;

/// Deletes `name` (background propagation: a Job's pods are collected after it) and waits
/// up to `timeout` for it to be gone; `Ok(false)` when there was nothing to delete.
pub async fn delete_and_wait(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    name: &str,
    timeout: Duration,
) -> Result<bool, Rejection> {
    let api = api_for(client, ar, namespace);
    let Some(obj) = retrying("read", || api.get_opt(name)).await? else {
        return Ok(false);
    };
    let uid = obj.metadata.uid.clone().unwrap_or_default();
    let ns = namespace.unwrap_or_default();
    crate::prune::requests::delete(client, ar, namespace, name, &uid).await?;
    let gone = await_condition(api, name, conditions::is_deleted(&uid));
    match tokio::time::timeout(timeout, gone).await {
        Ok(Ok(_)) => Ok(true),
        Ok(Err(e)) => Err(Rejection {
            code: None,
            message: format!("waiting for {ns}/{name} to be deleted failed: {e}"),
        }),
        Err(_) => Err(Rejection {
            code: None,
            message: format!(
                "{name} was still being deleted after {}s (a finalizer may hold it)",
                timeout.as_secs()
            ),
        }),
    }
}

//! The requests `--prune` makes: read and record the ApplySet parent, list the set's
//! members by label, delete them in the background. Waiting for them to go is a watch
//! (`cluster/watch.rs`).

use crate::cluster::apply::{Rejection, api_for, apply_with, timed};
use crate::prune::applyset::PARENT_FIELD_MANAGER;
use kube::api::{DeleteParams, ListParams, PatchParams, Preconditions};
use kube::discovery::ApiResource;
use serde_json::Value;

fn rejection(e: kube::Error) -> Rejection {
    match e {
        kube::Error::Api(s) => Rejection {
            code: Some(s.code),
            message: s.message,
        },
        other => Rejection {
            code: None,
            message: crate::cluster::connect::root_cause(&other),
        },
    }
}

async fn bounded<T>(
    what: &str,
    request: impl Future<Output = Result<T, kube::Error>>,
) -> Result<T, Rejection> {
    timed(what, request).await?.map_err(rejection)
}

/// The object, or `None` when it does not exist.
pub async fn get(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: &str,
    name: &str,
) -> Result<Option<Value>, Rejection> {
    let api = api_for(client, ar, Some(namespace));
    let found = bounded("get", api.get_opt(name)).await?;
    Ok(found.map(|o| serde_json::to_value(o).unwrap_or_default()))
}

/// Record the set on its parent: server-side apply as `deploy-action-applyset`, forcing
/// only after a conflict, as kubectl does with `kubectl-applyset`.
pub async fn record_parent(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: &str,
    body: &Value,
) -> Result<(), Rejection> {
    let gentle = PatchParams::apply(PARENT_FIELD_MANAGER);
    match apply_with(client, ar, Some(namespace), body, gentle).await {
        Err(r) if r.code == Some(409) => {
            let forced = PatchParams::apply(PARENT_FIELD_MANAGER).force();
            apply_with(client, ar, Some(namespace), body, forced)
                .await
                .map(drop)
        }
        other => other.map(drop),
    }
}

/// Every object of `ar` (in `namespace`, or cluster-wide) matching `selector`.
pub async fn list_labelled(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    selector: &str,
) -> Result<Vec<Value>, Rejection> {
    let api = api_for(client, ar, namespace);
    let list = bounded("list", api.list(&ListParams::default().labels(selector))).await?;
    Ok(list
        .items
        .into_iter()
        .map(|o| serde_json::to_value(o).unwrap_or_default())
        .collect())
}

/// Delete one object with background propagation (its dependents are collected after it),
/// only if it is still the object that was listed (`uid` precondition). Gone already is fine.
pub async fn delete(
    client: &kube::Client,
    ar: &ApiResource,
    namespace: Option<&str>,
    name: &str,
    uid: &str,
) -> Result<(), Rejection> {
    let api = api_for(client, ar, namespace);
    let mut params = DeleteParams::background();
    if !uid.is_empty() {
        params.preconditions = Some(Preconditions {
            uid: Some(uid.to_owned()),
            resource_version: None,
        });
    }
    match bounded("delete", api.delete(name, &params)).await {
        Ok(_) => Ok(()),
        Err(r) if r.code == Some(404) => Ok(()),
        Err(r) => Err(r),
    }
}

//! Watch: newline-delimited JSON events from the store's change stream, with selectors
//! (an object that stops matching is DELETED), BOOKMARKs, `sendInitialEvents`,
//! `timeoutSeconds`, in-stream 410 Expired, and injected drops.

use super::handler::{Call, streaming};
use super::read::{Selectors, present, storage_of};
use super::state::ServerState;
use super::status::ApiError;
use crate::store::{Change, ChangeType, StoreError};
use axum::body::{Body, Bytes};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// How often an idle watch that allows bookmarks gets one.
const BOOKMARK_EVERY: Duration = Duration::from_secs(60);
/// The server's own cap on a watch (kube-apiserver's min-request-timeout is 1800 s).
const MAX_WATCH: Duration = Duration::from_secs(1800);

/// One watch event as it goes on the wire, borrowing the object (no copy per watcher).
#[derive(serde::Serialize)]
struct Event<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    object: &'a Value,
}

fn line(kind: &str, object: &Value) -> Bytes {
    let mut s = serde_json::to_vec(&Event { kind, object }).unwrap_or_default();
    s.push(b'\n');
    Bytes::from(s)
}

fn expired(message: &str) -> Bytes {
    line("ERROR", &ApiError::expired(message).status())
}

pub fn watch(state: &Arc<ServerState>, call: Call) -> Response {
    let selectors = match Selectors::from_call(&call) {
        Ok(s) => s,
        Err(e) => return e.into_response(),
    };
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(256);
    let state = state.clone();
    tokio::spawn(async move {
        let _ = run(&state, &call, &selectors, &tx).await;
    });
    streaming(Body::from_stream(ReceiverStream::new(rx)))
}

/// Sends events until the timeout, a drop fault, or the client going away (send error).
async fn run(
    state: &ServerState,
    call: &Call,
    selectors: &Selectors,
    tx: &mpsc::Sender<Result<Bytes, Infallible>>,
) -> Result<(), mpsc::error::SendError<Result<Bytes, Infallible>>> {
    let rt = &call.rt;
    let (group, plural) = storage_of(rt);
    let namespace = call.path.namespace.as_deref();
    let fault = call.fault.clone().unwrap_or_default();
    if fault.expired {
        return tx
            .send(Ok(expired(
                "too old resource version: injected by kube-sim",
            )))
            .await;
    }
    let bookmarks = call.params.flag("allowWatchBookmarks");
    let send_initial = call.params.flag("sendInitialEvents");
    let rv_param = call.params.get("resourceVersion").unwrap_or("0");
    let timeout = call
        .params
        .seconds("timeoutSeconds")
        .unwrap_or(MAX_WATCH)
        .min(MAX_WATCH);
    let deadline = tokio::time::Instant::now() + timeout;
    let mut budget = fault.drop_after_events.map(|n| n as usize);
    // An outage started while this watch is open ends it.
    let mut cuts = state.outage.cuts();

    let (mut rx, mut last_rv) = if send_initial || rv_param == "0" {
        if send_initial && call.params.get("resourceVersionMatch") != Some("NotOlderThan") {
            let err = ApiError::new(
                422,
                "Invalid",
                "sendInitialEvents requires resourceVersionMatch=NotOlderThan",
            );
            return tx.send(Ok(line("ERROR", &err.status()))).await;
        }
        let (items, rv, rx) = state.store.list_and_subscribe(group, plural, namespace);
        for item in items {
            let presented = present(rt, &item);
            if selectors.matches(&presented) && !emit(tx, &mut budget, "ADDED", &presented).await? {
                return Ok(());
            }
        }
        if send_initial {
            let mut bm = bookmark(rt, rv);
            bm["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
            tx.send(Ok(line("BOOKMARK", &bm))).await?;
        }
        (rx, rv)
    } else {
        let Ok(rv) = rv_param.parse::<u64>() else {
            let err = ApiError::bad_request(format!("invalid resource version: {rv_param:?}"));
            return tx.send(Ok(line("ERROR", &err.status()))).await;
        };
        match state.store.watch_from(rv) {
            Ok((past, rx)) => {
                for change in past {
                    if !forward(
                        tx,
                        &mut budget,
                        rt,
                        group,
                        plural,
                        namespace,
                        selectors,
                        &change,
                    )
                    .await?
                    {
                        return Ok(());
                    }
                }
                (rx, rv)
            }
            Err(StoreError::Expired { requested, oldest }) => {
                return tx
                    .send(Ok(expired(&format!(
                        "too old resource version: {requested} ({oldest})"
                    ))))
                    .await;
            }
            Err(e) => return tx.send(Ok(expired(&e.to_string()))).await,
        }
    };

    loop {
        tokio::select! {
            msg = rx.recv() => match msg {
                Ok(change) => {
                    if change.rv <= last_rv {
                        continue;
                    }
                    last_rv = change.rv;
                    if !forward(tx, &mut budget, rt, group, plural, namespace, selectors, &change).await? {
                        return Ok(());
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    return tx.send(Ok(expired("watch fell too far behind; relist"))).await;
                }
                Err(RecvError::Closed) => return Ok(()),
            },
            () = tokio::time::sleep(BOOKMARK_EVERY), if bookmarks => {
                tx.send(Ok(line("BOOKMARK", &bookmark(rt, state.store.current_rv())))).await?;
            }
            () = tokio::time::sleep_until(deadline) => return Ok(()),
            _ = cuts.changed() => return Ok(()),
            () = tx.closed() => return Ok(()),
        }
    }
}

fn bookmark(rt: &crate::resources::ResourceType, rv: u64) -> Value {
    json!({"kind": rt.kind, "apiVersion": rt.api_version(), "metadata": {"resourceVersion": rv.to_string()}})
}

/// Send one event; `false` once an injected drop ends the watch.
async fn emit(
    tx: &mpsc::Sender<Result<Bytes, Infallible>>,
    budget: &mut Option<usize>,
    kind: &str,
    object: &Value,
) -> Result<bool, mpsc::error::SendError<Result<Bytes, Infallible>>> {
    if *budget == Some(0) {
        return Ok(false);
    }
    tx.send(Ok(line(kind, object))).await?;
    if let Some(b) = budget.as_mut() {
        *b -= 1;
    }
    Ok(*budget != Some(0))
}

/// Translate a store change into this watch's event, if it concerns it.
#[allow(clippy::too_many_arguments)]
async fn forward(
    tx: &mpsc::Sender<Result<Bytes, Infallible>>,
    budget: &mut Option<usize>,
    rt: &crate::resources::ResourceType,
    group: &str,
    plural: &str,
    namespace: Option<&str>,
    selectors: &Selectors,
    change: &Change,
) -> Result<bool, mpsc::error::SendError<Result<Bytes, Infallible>>> {
    if !change.key.in_collection(group, plural, namespace) {
        return Ok(true);
    }
    let now = present(rt, &change.object);
    let was = change
        .previous
        .as_ref()
        .is_some_and(|p| selectors.matches(&present(rt, p)));
    let is = change.kind != ChangeType::Deleted && selectors.matches(&now);
    let kind = match (was, is) {
        (false, true) => "ADDED",
        (true, true) => "MODIFIED",
        (true, false) => "DELETED",
        (false, false) if change.kind == ChangeType::Deleted && selectors.matches(&now) => {
            "DELETED"
        }
        (false, false) => return Ok(true),
    };
    emit(tx, budget, kind, &now).await
}

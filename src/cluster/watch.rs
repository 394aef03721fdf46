//! One watch per kind and namespace (kube-runtime watchers), merged into a single stream
//! of what was seen. Watch, never poll: no request per resource per tick.

use super::raw::RawObject;
use crate::rules::head::Head;
use crate::rules::kept::{EventFields, Keep, Kept, PodFields, Whole};
use futures::StreamExt;
use kube::api::Api;
use kube::discovery::ApiResource;
use kube::runtime::watcher::{self, Event};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// What to watch: a kind, in one namespace or cluster-wide, optionally label-filtered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchScope {
    pub resource: ApiResource,
    pub namespace: Option<String>,
    pub labels: Option<String>,
}

/// What a watcher saw. Objects carry apiVersion and kind; an upserted or listed object
/// comes as the `T` the caller's `prepare` made of its compact JSON text in the watcher's
/// own task (a `Value` by default), so a parsed object need not wait in the channel.
///
/// A (re)list comes one object at a time, between [`Seen::ListBegun`] and
/// [`Seen::ListDone`], so that nobody holds a whole list of a thousand pods before keeping
/// it: each is kept (packed) as it comes.
#[derive(Debug, Clone)]
pub enum Seen<T = Value> {
    /// An object of `scope` added or changed.
    Upsert { scope: usize, object: T },
    /// An object of `scope` deleted.
    Delete { scope: usize, object: Value },
    /// A (re)list of `scope` begins; a list begun before and not done is abandoned.
    ListBegun { scope: usize },
    /// One object of the list `scope` is in the middle of.
    Listed { scope: usize, object: T },
    /// The list of `scope` is complete: anything of that scope it did not show is gone.
    ListDone { scope: usize },
    /// The watch failed and is backing off (shown, never fatal). `forbidden`: the list or
    /// the watch was refused 403, so waiting will not bring it.
    Trouble {
        scope: usize,
        message: String,
        forbidden: bool,
    },
}

/// What `prepare` makes of an object's text and its [`Head`].
fn prepare_raw<K: Kept, T>(
    prepare: fn(String, Head) -> Option<T>,
    o: RawObject<K>,
    ar: &ApiResource,
) -> Option<T> {
    let (text, head) = o.into_parts(ar);
    prepare(text, head)
}

/// A watch failure in a person's words: `list failed: 503 ServiceUnavailable: etcd ...`,
/// `watch failed: connection refused`, without the client's debug dump of the Status.
pub fn describe(error: &watcher::Error) -> String {
    let api = |e: &kube::Error| match e {
        kube::Error::Api(s) => format!("{} {}: {}", s.code, s.reason, s.message),
        other => super::connect::root_cause(other),
    };
    match error {
        watcher::Error::InitialListFailed(e) => format!("list failed: {}", api(e)),
        watcher::Error::WatchStartFailed(e) => format!("watch failed to start: {}", api(e)),
        watcher::Error::WatchFailed(e) => format!("watch failed: {}", api(e)),
        watcher::Error::WatchError(s) => {
            format!(
                "watch ended by the server: {} {}: {}",
                s.code, s.reason, s.message
            )
        }
        other @ watcher::Error::NoResourceVersion => other.to_string(),
    }
}

/// How long a scope waits before it lists again after a failure: kube-runtime's default
/// schedule (0.8 s doubling to 30 s, with jitter), restarted after every complete list.
fn relist_backoff() -> impl Iterator<Item = std::time::Duration> {
    backon::BackoffBuilder::build(
        backon::ExponentialBuilder::default()
            .with_min_delay(std::time::Duration::from_millis(800))
            .with_max_delay(std::time::Duration::from_secs(30))
            .with_jitter()
            .without_max_times(),
    )
}

/// Whether the failure is a 403: the list or the watch itself refused, so waiting will not
/// bring it.
fn refused(error: &watcher::Error) -> bool {
    matches!(
        error,
        watcher::Error::InitialListFailed(kube::Error::Api(s))
            | watcher::Error::WatchStartFailed(kube::Error::Api(s))
            | watcher::Error::WatchFailed(kube::Error::Api(s))
            if s.code == 403
    )
}

/// A complete list of `scope` holding `objects`, as a watcher delivers it (for tests that
/// script what the watches see).
#[cfg(test)]
pub(crate) fn listing<T>(scope: usize, objects: Vec<T>) -> impl Iterator<Item = Seen<T>> {
    std::iter::once(Seen::ListBegun { scope })
        .chain(
            objects
                .into_iter()
                .map(move |object| Seen::Listed { scope, object }),
        )
        .chain(std::iter::once(Seen::ListDone { scope }))
}

/// Start one watcher task per scope; they end when the receiver is dropped. `prepare`
/// turns each upserted or listed object (its compact JSON text, see `raw`, and the
/// [`Head`] gathered from it) into what is sent; objects it returns `None` for are left out.
///
/// After any failure a scope lists again from scratch (rather than resuming the watch at
/// its last resourceVersion, as kube-runtime would): what happened while it was not
/// watching (a restart, a deletion) is then in the next list, and that list's
/// [`Seen::ListDone`] is how a reader knows the scope is seen again.
///
/// Pods and Events are read into what the rules and the report read of them (see
/// `kept`); other kinds whole. The Event watches ask the API server to leave out the
/// Events whose news their object's status carries (`kept::UNWATCHED_EVENT_REASONS`).
pub fn spawn<T: Send + 'static>(
    client: &kube::Client,
    scopes: &[WatchScope],
    tx: &mpsc::Sender<Seen<T>>,
    prepare: fn(String, Head) -> Option<T>,
) -> Vec<JoinHandle<()>> {
    scopes
        .iter()
        .enumerate()
        .map(|(index, scope)| match Keep::of(&scope.resource) {
            Keep::Whole => spawn_scope::<Whole, T>(client, scope, index, tx, prepare),
            Keep::Pod => spawn_scope::<PodFields, T>(client, scope, index, tx, prepare),
            Keep::Event => spawn_scope::<EventFields, T>(client, scope, index, tx, prepare),
        })
        .collect()
}

/// The watcher task of one scope, whose objects are read keeping `K`'s fields.
fn spawn_scope<K: Kept, T: Send + 'static>(
    client: &kube::Client,
    scope: &WatchScope,
    index: usize,
    tx: &mpsc::Sender<Seen<T>>,
    prepare: fn(String, Head) -> Option<T>,
) -> JoinHandle<()> {
    let api: Api<RawObject<K>> = match &scope.namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, &scope.resource),
        None => Api::all_with(client.clone(), &scope.resource),
    };
    let mut config = watcher::Config::default();
    if let Some(l) = &scope.labels {
        config = config.labels(l);
    }
    if K::KEEP == Keep::Event {
        config = config.fields(&crate::rules::kept::event_field_selector());
    }
    let ar = scope.resource.clone();
    let tx = tx.clone();
    tokio::spawn(async move {
        let mut waits = relist_backoff();
        loop {
            let stream = watcher::watcher(api.clone(), config.clone()).boxed();
            match watch_once(stream, index, &ar, prepare, &tx).await {
                Ended::Receiver => return,
                Ended::Failed { listed } => {
                    if listed {
                        waits = relist_backoff();
                    }
                    let wait = waits.next().unwrap_or(std::time::Duration::from_secs(30));
                    tokio::time::sleep(wait).await;
                }
            }
        }
    })
}

/// Why one watcher stream stopped being read.
enum Ended {
    /// Nobody reads what is seen any more.
    Receiver,
    /// It failed (and said so); `listed`: it had delivered a complete list first.
    Failed { listed: bool },
}

/// Send what one watcher stream sees until it fails or nobody listens.
async fn watch_once<K: Kept, T>(
    mut stream: futures::stream::BoxStream<'static, Result<Event<RawObject<K>>, watcher::Error>>,
    index: usize,
    ar: &ApiResource,
    prepare: fn(String, Head) -> Option<T>,
    tx: &mpsc::Sender<Seen<T>>,
) -> Ended {
    let mut listed = false;
    while let Some(item) = stream.next().await {
        let mut failed = false;
        let seen = match item {
            Ok(Event::Apply(o)) => match prepare_raw(prepare, o, ar) {
                Some(object) => Seen::Upsert {
                    scope: index,
                    object,
                },
                None => continue,
            },
            Ok(Event::Delete(o)) => Seen::Delete {
                scope: index,
                object: o.into_value(ar),
            },
            Ok(Event::Init) => Seen::ListBegun { scope: index },
            Ok(Event::InitApply(o)) => match prepare_raw(prepare, o, ar) {
                Some(object) => Seen::Listed {
                    scope: index,
                    object,
                },
                None => continue,
            },
            Ok(Event::InitDone) => {
                listed = true;
                Seen::ListDone { scope: index }
            }
            Err(e) => {
                failed = true;
                Seen::Trouble {
                    scope: index,
                    message: describe(&e),
                    forbidden: refused(&e),
                }
            }
        };
        if tx.send(seen).await.is_err() {
            return Ended::Receiver;
        }
        if failed {
            return Ended::Failed { listed };
        }
    }
    // A watcher stream does not end by itself; treat it as a failure to list again.
    Ended::Failed { listed }
}

//! The simulated kube-apiserver over HTTP: one axum router, served on a loopback socket
//! or called in-process by a kube `Client` (no socket, so tokio's paused clock works).

mod access_review;
mod admission;
pub mod authn;
mod customschema;
mod discovery;
mod faults;
mod fieldvalidation;
mod handler;
mod impersonate;
mod milestones;
mod openapi;
mod outage;
mod pages;
mod params;
mod path;
mod podlog;
mod protobuf;
pub mod rbac;
mod read;
mod recorder;
mod selectors;
mod state;
mod status;
mod watch;
mod write;

pub use authn::UserInfo;
pub use milestones::Milestones;
pub use outage::Outage;
pub use recorder::{RecordedCall, RequestRecorder};
pub use state::ServerState;
pub use status::ApiError;

use axum::Router;
use std::sync::Arc;
use tower::ServiceExt;

/// The router serving every API path.
pub fn router(state: Arc<ServerState>) -> Router {
    Router::new().fallback(handler::handle).with_state(state)
}

/// A kube client whose requests go straight to the router, in this process. When the
/// scenario turns authentication on, it is the loopback superuser (`system:apiserver` in
/// `system:masters`), as kube-apiserver's own client is.
pub fn in_process_client(state: Arc<ServerState>) -> kube::Client {
    client_with(state, None)
}

/// An in-process kube client that sends `Authorization: Bearer TOKEN` (and nothing else
/// identifies it): it is whoever the token authenticates, or refused with 401.
pub fn in_process_client_with_token(state: Arc<ServerState>, token: &str) -> kube::Client {
    client_with(state, Some(format!("Bearer {token}")))
}

fn client_with(state: Arc<ServerState>, authorization: Option<String>) -> kube::Client {
    let router = router(state);
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let router = router.clone();
        let authorization = authorization.clone();
        async move {
            let mut req = req.map(axum::body::Body::new);
            match authorization
                .as_deref()
                .and_then(|a| http::HeaderValue::from_str(a).ok())
            {
                Some(value) => {
                    req.headers_mut().insert(http::header::AUTHORIZATION, value);
                }
                None => {
                    req.extensions_mut().insert(authn::Loopback);
                }
            }
            router.oneshot(req).await
        }
    });
    kube::Client::new(service, "default")
}

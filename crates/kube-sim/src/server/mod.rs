//! The simulated kube-apiserver over HTTP: one axum router, served on a loopback socket
//! or called in-process by a kube `Client` (no socket, so tokio's paused clock works).

mod admission;
mod discovery;
mod faults;
mod fieldvalidation;
mod handler;
mod milestones;
mod openapi;
mod outage;
mod params;
mod path;
mod podlog;
mod protobuf;
mod read;
mod recorder;
mod selectors;
mod state;
mod status;
mod watch;
mod write;

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

/// A kube client whose requests go straight to the router, in this process.
pub fn in_process_client(state: Arc<ServerState>) -> kube::Client {
    let router = router(state);
    let service = tower::service_fn(move |req: http::Request<kube::client::Body>| {
        let router = router.clone();
        async move {
            let req = req.map(axum::body::Body::new);
            router.oneshot(req).await
        }
    });
    kube::Client::new(service, "default")
}

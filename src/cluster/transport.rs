//! The kube client's HTTP stack, built as kube builds it (TLS from the kubeconfig, its auth
//! for static credentials, impersonation headers, retry of 429/503/504), with two parts of
//! our own: the connector goes through the proxy kubectl would use ([`crate::proxy`]), and
//! tokens that change during a run come from [`Credentials`] (re-read on 401).

use super::credentials::{Credentials, RefreshingAuthLayer};
use crate::proxy::{ProxyConnector, Routes};
use kube::client::ConfigExt as _;
use std::sync::Arc;
use tower::{BoxError, ServiceBuilder};

/// A client for `config`'s cluster. `config.proxy_url` is ignored: `routes` decides.
pub fn client(
    config: &kube::Config,
    routes: Routes,
    credentials: Option<Arc<Credentials>>,
) -> Result<kube::Client, kube::Error> {
    let proxied = ProxyConnector::new(routes);
    let forward_auth = proxied.forward_auth_layer();
    let https = config.rustls_https_connector_with_connector(proxied)?;
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: hyper_util::client::legacy::Client<_, kube::client::Body> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(connector);
    let retry = config
        .default_retry
        .then(|| tower::retry::RetryLayer::new(kube::client::retry::RetryPolicy::server_retry()));
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(retry)
        .option_layer(credentials.map(RefreshingAuthLayer))
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(forward_auth)
        .map_err(BoxError::from)
        .service(http);
    Ok(kube::Client::new(service, config.default_namespace.clone()))
}

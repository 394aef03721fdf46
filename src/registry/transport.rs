//! HTTP to registries: a ring-backed rustls client, the http/https choice per host, and the
//! retries (`backon`, with `Retry-After` and the lookup's deadline adjusting each wait) for
//! 429/5xx that turn what cannot be answered into `Lookup::Unreachable`.

use backon::{ExponentialBuilder, Retryable as _};
use reqwest::{RequestBuilder, Response};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;
use tokio::time::Instant;

use super::lookup::Lookup;
use super::response::{self, is_transient};

#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("failed to set up TLS with the platform's certificate roots")]
    Tls(#[source] rustls::Error),
    #[error("failed to build the HTTP client")]
    Client(#[source] reqwest::Error),
    #[error(transparent)]
    Proxy(#[from] crate::proxy::ProxyUrlError),
}

/// rustls on ring with the platform's certificate roots, offering HTTP/1.1 only (the
/// clients here are built without HTTP/2). Also GitHub's client's.
pub(crate) fn platform_tls() -> Result<rustls::ClientConfig, rustls::Error> {
    use rustls_platform_verifier::BuilderVerifierExt as _;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_platform_verifier()?
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(tls)
}

/// A reqwest client on rustls + ring. reqwest's `rustls-no-provider` would otherwise need a
/// process-wide default provider installed; a preconfigured `ClientConfig` keeps this module
/// free of global side effects and away from aws-lc-rs.
///
/// Proxies are chosen by `proxies` as for the API server (kubectl's rules, not reqwest's
/// curl-like ones: `localhost` and loopback never proxied, `NO_PROXY` ports and CIDRs).
/// reqwest is built without SOCKS: a SOCKS proxy in the environment is not used for
/// registries.
pub(crate) fn http_client(
    connect_timeout: Duration,
    proxies: &crate::proxy::ProxyEnv,
) -> Result<reqwest::Client, RegistryError> {
    let tls = platform_tls().map_err(RegistryError::Tls)?;
    let proxies = proxies.clone();
    let route = reqwest::Proxy::custom(move |url| {
        proxies
            .proxy_for(url.scheme(), url.host_str()?, url.port())
            .filter(|p| p.kind() == crate::proxy::ProxyKind::Http)
            .map(|p| p.url_with_credentials().to_owned())
    });
    reqwest::Client::builder()
        .proxy(route)
        .tls_backend_preconfigured(tls)
        .connect_timeout(connect_timeout)
        .user_agent(concat!("deploy-action/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(RegistryError::Client)
}

/// How hard to try before calling a registry unreachable.
#[derive(Debug, Clone)]
pub(crate) struct RetryPolicy {
    pub max_retries: u32,
    /// First backoff for a 5xx (or a 429 without `Retry-After`); doubles each time.
    pub base_delay: Duration,
}

impl RetryPolicy {
    /// `base_delay` doubling, uncapped (the lookup's deadline bounds it), `max_retries` times.
    fn backoff(&self) -> ExponentialBuilder {
        ExponentialBuilder::new()
            .with_min_delay(self.base_delay)
            .with_factor(2.0)
            .without_max_delay()
            .with_max_times(usize::try_from(self.max_retries).unwrap_or(usize::MAX))
    }
}

/// Why one try did not give an answer to hand back.
enum Failed {
    /// No answer at all: not retried.
    Final(Lookup),
    /// 429 or 5xx.
    Transient(Response),
}

#[derive(Debug)]
pub(crate) struct Transport {
    client: reqwest::Client,
    insecure_registries: Vec<String>,
    retry: RetryPolicy,
}

impl Transport {
    pub(crate) fn new(
        client: reqwest::Client,
        insecure_registries: &[String],
        retry: RetryPolicy,
    ) -> Self {
        let insecure_registries = insecure_registries
            .iter()
            .map(|r| r.trim().to_ascii_lowercase())
            .collect();
        Transport {
            client,
            insecure_registries,
            retry,
        }
    }

    /// `http://host` for loopback and listed insecure registries, `https://host` otherwise.
    pub(crate) fn base_url(&self, host: &str) -> String {
        let scheme = if self.allows_plain_http(host) {
            "http"
        } else {
            "https"
        };
        format!("{scheme}://{host}")
    }

    /// Loopback is always allowed (test registries, port-forwards); other hosts only when
    /// listed, by `host:port` or by bare host.
    pub(crate) fn allows_plain_http(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        let bare = bare_host(&host);
        is_loopback(bare)
            || self
                .insecure_registries
                .iter()
                .any(|r| *r == host || r == bare)
    }

    /// Sends the request built by `build`, again after 429/5xx while retries and the deadline
    /// allow. `what` names the request in details ("manifest HEAD https://...").
    pub(crate) async fn send(
        &self,
        build: impl Fn(&reqwest::Client) -> RequestBuilder,
        what: &str,
        deadline: Instant,
    ) -> Result<Response, Lookup> {
        let tries = AtomicU32::new(0);
        let (tries_ref, client, build) = (&tries, &self.client, &build);
        let result = (move || async move {
            tries_ref.fetch_add(1, Ordering::Relaxed);
            let response = build(client).send().await.map_err(|e| {
                Failed::Final(Lookup::Unreachable {
                    detail: format!("{what}: {}", describe(&e)),
                })
            })?;
            if is_transient(response.status()) {
                Err(Failed::Transient(response))
            } else {
                Ok(response)
            }
        })
        .retry(self.retry.backoff())
        .sleep(tokio::time::sleep)
        .when(|failed| matches!(failed, Failed::Transient(_)))
        .adjust(|failed, backoff| {
            let Failed::Transient(response) = failed else {
                return None;
            };
            // Out of retries first: then the answer is given up on whatever it asks.
            let backoff = backoff?;
            let wait = response::retry_after(response.headers()).unwrap_or(backoff);
            (Instant::now() + wait <= deadline).then_some(wait)
        })
        .await;
        let response = match result {
            Ok(response) => return Ok(response),
            Err(Failed::Final(lookup)) => return Err(lookup),
            Err(Failed::Transient(response)) => response,
        };
        let status = response.status();
        let tries = tries.load(Ordering::Relaxed);
        if tries > self.retry.max_retries {
            let detail =
                response::error_detail(status, &response.bytes().await.unwrap_or_default());
            return Err(Lookup::Unreachable {
                detail: format!("{what}: after {tries} tries, {detail}"),
            });
        }
        // Stopped with retries left: the wait would have run past the deadline.
        let hint = response::retry_after(response.headers())
            .map(|d| format!(", asked to retry after {}s", d.as_secs()))
            .unwrap_or_default();
        Err(Lookup::Unreachable {
            detail: format!("{what}: HTTP {status}{hint}, past the lookup timeout"),
        })
    }
}

fn bare_host(host: &str) -> &str {
    if let Some(inner) = host.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner);
    }
    host.rsplit_once(':').map_or(host, |(name, _)| name)
}

fn is_loopback(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// reqwest's top-level message is "error sending request for url"; the cause that tells DNS
/// from TLS from refused sits at the end of the source chain.
fn describe(error: &reqwest::Error) -> String {
    let mut parts = vec![error.to_string()];
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    let kind = if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "failed to connect"
    } else {
        "failed"
    };
    format!("{kind}: {}", parts.join(": "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[track_caller]
    fn case(insecure: &[&str], host: &str, expected: &str) {
        let insecure: Vec<String> = insecure
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        let retry = RetryPolicy {
            max_retries: 0,
            base_delay: Duration::ZERO,
        };
        let transport = Transport::new(
            http_client(Duration::from_secs(1), &crate::proxy::ProxyEnv::none()).unwrap(),
            &insecure,
            retry,
        );
        assert_eq!(
            transport.base_url(host),
            expected,
            "{host} with insecure {insecure:?}"
        );
    }

    #[test]
    fn back_off_doubles_from_the_base_for_each_retry_allowed() {
        let policy = RetryPolicy {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
        };
        let waits: Vec<Duration> = backon::BackoffBuilder::build(policy.backoff()).collect();
        assert_eq!(
            waits,
            [500, 1000, 2000].map(Duration::from_millis),
            "no jitter, no cap below the lookup's deadline"
        );
        let none = RetryPolicy {
            max_retries: 0,
            ..policy
        };
        assert_eq!(backon::BackoffBuilder::build(none.backoff()).count(), 0);
    }

    #[test]
    fn plain_http_only_for_loopback_and_listed_hosts() {
        case(&[], "registry-1.docker.io", "https://registry-1.docker.io");
        case(&[], "registry.local:5000", "https://registry.local:5000");
        case(&[], "127.0.0.1:5000", "http://127.0.0.1:5000");
        case(&[], "127.1.2.3", "http://127.1.2.3");
        case(&[], "localhost:5000", "http://localhost:5000");
        case(&[], "[::1]:5000", "http://[::1]:5000");
        case(&[], "10.0.0.5:5000", "https://10.0.0.5:5000");
        case(
            &["registry.local:5000"],
            "registry.local:5000",
            "http://registry.local:5000",
        );
        case(
            &["registry.local:5000"],
            "registry.local:5001",
            "https://registry.local:5001",
        );
        case(
            &["Registry.Local"],
            "registry.local:5001",
            "http://registry.local:5001",
        );
        case(&["registry.local"], "other.local", "https://other.local");
    }
}

//! The Checks API over octocrab's raw `_get/_post/_patch` (our serde types, our status
//! handling) with a retry of our own: octocrab is built without its `retry` feature, whose
//! default repeats any 5xx at once, POSTs included. A create or an annotation batch is
//! never repeated blindly: after an ambiguous failure we first look whether it landed.
//! The loop is `backon`'s, on the schedule of [`RetryPolicy::backoff`]; what GitHub asks for
//! (`Retry-After`, the quota reset) adjusts each wait.

use super::error::{GithubError, error_chain};
use super::retry::{self, Decision, Failure, RateHeaders, RetryPolicy};
use crate::render::github::context::{ActionsContext, Repository};
use crate::render::github::wire::{CheckRunInfo, CheckRunList, CreateCheckRun, UpdateCheckRun};
use crate::render::{redact, redact_json};
use backon::Retryable as _;
use octocrab::Octocrab;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

const CREATE: &str = "create the check run";
const UPDATE: &str = "update the check run";
const FIND: &str = "look up the check run";
/// Characters of GitHub's error message kept in an error.
const MESSAGE_MAX: usize = 300;

/// Where and how to talk to GitHub.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// REST API root: `https://api.github.com`, or `https://HOST/api/v3` on GHES.
    pub api_url: String,
    pub retry: RetryPolicy,
    pub connect_timeout: Option<Duration>,
    pub read_timeout: Option<Duration>,
    /// The proxies to use; `None`: those `HTTPS_PROXY`, `HTTP_PROXY` and `NO_PROXY` name
    /// (kubectl's rules, as for the API server).
    pub proxies: Option<crate::proxy::ProxyEnv>,
}

impl ClientOptions {
    pub fn new(api_url: &str) -> Self {
        ClientOptions {
            api_url: api_url.to_owned(),
            retry: RetryPolicy::default(),
            connect_timeout: Some(Duration::from_secs(10)),
            read_timeout: Some(Duration::from_secs(30)),
            proxies: None,
        }
    }
}

/// A Checks API client for one repository.
pub struct GithubClient {
    octo: Octocrab,
    api_url: String,
    repository: Repository,
    retry: RetryPolicy,
    /// The token and any other value that must never reach GitHub or an error text.
    secrets: Vec<String>,
}

impl fmt::Debug for GithubClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GithubClient")
            .field("api_url", &self.api_url)
            .field("repository", &self.repository)
            .field("retry", &self.retry)
            .field(
                "secrets",
                &format_args!("[{} redacted]", self.secrets.len()),
            )
            .finish_non_exhaustive()
    }
}

/// One answer, read fully.
struct Answer {
    status: u16,
    headers: RateHeaders,
    /// The answer's `Date`, seconds since the epoch.
    date: Option<i64>,
    body: String,
}

/// Why one attempt did not succeed.
enum Failed {
    /// Final at once: an answer that could not be read, or a look-up that failed.
    Final(GithubError),
    /// No answer: the request may or may not have been processed.
    Transport(String),
    /// A non-2xx answer, retried if [`retry::decide_after`] says so.
    Status(Answer),
}

impl Failed {
    /// Whether the request may have been processed: a rate-limited request was refused,
    /// not processed, so repeating it is safe.
    fn ambiguous(&self) -> bool {
        match self {
            Failed::Final(_) => false,
            Failed::Transport(_) => true,
            Failed::Status(a) => !retry::is_rate_limited(a.status, &a.headers, &a.body),
        }
    }
}

#[derive(Clone, Copy)]
enum Method {
    Get,
    Post,
    Patch,
}

/// Octocrab on a hyper client of ours, so that it goes through the proxies the environment
/// names ([`crate::proxy`]); its own `build()` offers no connector of our choosing, and its
/// reqwest backend would bring aws-lc-rs. The layers are those `build()` stacks: user agent,
/// base URI, bearer token.
fn octocrab_through_proxies(token: &str, options: &ClientOptions) -> Result<Octocrab, String> {
    use octocrab::service::middleware::{
        auth_header::AuthHeaderLayer, base_uri::BaseUriLayer, extra_headers::ExtraHeadersLayer,
    };
    let proxies = match &options.proxies {
        Some(p) => p.clone(),
        None => crate::proxy::ProxyEnv::from_env().map_err(|e| e.to_string())?,
    };
    let base: http::Uri = options
        .api_url
        .parse()
        .map_err(|e: http::uri::InvalidUri| format!("invalid API URL: {e}"))?;
    let mut tls = crate::registry::platform_tls().map_err(|e| e.to_string())?;
    // hyper-rustls sets ALPN itself (and refuses a config that already does).
    tls.alpn_protocols.clear();
    let proxied = crate::proxy::ProxyConnector::new(crate::proxy::Routes::Env(Box::new(proxies)));
    let forward_auth = proxied.forward_auth_layer();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_or_http()
        .enable_http1()
        .wrap_connector(proxied);
    let mut connector = hyper_timeout::TimeoutConnector::new(https);
    connector.set_connect_timeout(options.connect_timeout);
    connector.set_read_timeout(options.read_timeout);
    let http: hyper_util::client::legacy::Client<_, octocrab::OctoBody> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(connector);
    let mut bearer = http::HeaderValue::try_from(format!("Bearer {token}"))
        .map_err(|_| "the token is not a valid HTTP header value".to_owned())?;
    bearer.set_sensitive(true);
    let headers = vec![(
        http::header::USER_AGENT,
        http::HeaderValue::from_static("octocrab"),
    )];
    let upload: http::Uri = "https://uploads.github.com"
        .parse()
        .expect("a constant URI");
    octocrab::OctocrabBuilder::new_empty()
        .with_service(http)
        .with_layer(&forward_auth)
        .with_layer(&ExtraHeadersLayer::new(std::sync::Arc::new(headers)))
        .with_layer(&BaseUriLayer::new(base.clone()))
        .with_layer(&AuthHeaderLayer::new(Some(bearer), base, upload))
        .with_auth(octocrab::AuthState::None)
        .build()
        .map_err(|e| match e {})
}

impl GithubClient {
    /// A client for the context's repository and API root (GHES included).
    pub fn new(ctx: &ActionsContext, token: &str) -> Result<Self, GithubError> {
        Self::with_options(
            ctx.repository.clone(),
            token,
            ClientOptions::new(&ctx.api_url),
        )
    }

    pub fn with_options(
        repository: Repository,
        token: &str,
        options: ClientOptions,
    ) -> Result<Self, GithubError> {
        let token = token.trim();
        if token.is_empty() {
            return Err(GithubError::Setup("the token is empty".to_owned()));
        }
        // octocrab panics on a token that is not a valid header value.
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(GithubError::Setup(
                "the token contains characters not allowed in an HTTP header".to_owned(),
            ));
        }
        let secrets = vec![token.to_owned()];
        let octo = octocrab_through_proxies(token, &options)
            .map_err(|e| GithubError::Setup(redact(&e, &secrets)))?;
        Ok(GithubClient {
            octo,
            api_url: options.api_url,
            repository,
            retry: options.retry,
            secrets,
        })
    }

    /// More values to mask in everything sent to GitHub and in error texts.
    pub fn with_secrets(mut self, secrets: impl IntoIterator<Item = String>) -> Self {
        self.secrets.extend(secrets);
        self
    }

    /// The token and the registered secrets, for redacting what is rendered for GitHub.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// Creates a check run. After an ambiguous failure (5xx, no answer) the run may exist
    /// already: it is looked up by `external_id` before another create is tried.
    pub async fn create_check_run(
        &self,
        body: &CreateCheckRun,
    ) -> Result<CheckRunInfo, GithubError> {
        let path = &format!("{}/check-runs", self.repo_path());
        let value = &self.body(CREATE, body)?;
        self.retrying(CREATE, |after_ambiguous| async move {
            if after_ambiguous {
                let found = self
                    .find_check_run(&body.head_sha, &body.name, &body.external_id)
                    .await
                    .map_err(Failed::Final)?;
                if let Some(found) = found {
                    return Ok(found);
                }
            }
            self.attempt(CREATE, Method::Post, path, Some(value)).await
        })
        .await
    }

    /// Updates check run `id`. Annotations are appended by GitHub, so after an ambiguous
    /// failure the run's annotation count (`annotations_before` plus this batch if it
    /// landed) decides whether to send the batch again.
    pub async fn update_check_run(
        &self,
        id: u64,
        body: &UpdateCheckRun,
        annotations_before: usize,
    ) -> Result<CheckRunInfo, GithubError> {
        let path = &format!("{}/check-runs/{id}", self.repo_path());
        let value = &self.body(UPDATE, body)?;
        let batch = body.output.annotations.len();
        self.retrying(UPDATE, |after_ambiguous| async move {
            if after_ambiguous && batch > 0 {
                let now: CheckRunInfo = self
                    .call(FIND, Method::Get, path)
                    .await
                    .map_err(Failed::Final)?;
                if now.output.annotations_count >= annotations_before + batch {
                    return Ok(now);
                }
            }
            self.attempt(UPDATE, Method::Patch, path, Some(value)).await
        })
        .await
    }

    /// The check run named `name` on `head_sha` whose `external_id` is ours, if any.
    pub async fn find_check_run(
        &self,
        head_sha: &str,
        name: &str,
        external_id: &str,
    ) -> Result<Option<CheckRunInfo>, GithubError> {
        // `filter=all`: `latest` hides our run if a same-named one (another matrix leg)
        // was created after it.
        let path = format!(
            "{}/commits/{head_sha}/check-runs?check_name={}&filter=all&per_page=100",
            self.repo_path(),
            query_value(name)
        );
        let list: CheckRunList = self.call(FIND, Method::Get, &path).await?;
        Ok(list
            .check_runs
            .into_iter()
            .find(|run| run.external_id.as_deref() == Some(external_id)))
    }

    /// A request that may be repeated as it is (GET).
    async fn call<T: DeserializeOwned>(
        &self,
        what: &'static str,
        method: Method,
        path: &str,
    ) -> Result<T, GithubError> {
        self.retrying(what, |_| self.attempt(what, method, path, None))
            .await
    }

    /// Runs `attempt` until it succeeds, fails for good, or the policy says stop. Its
    /// argument says whether the previous attempt failed in a way that may have been
    /// processed, so it can look before repeating itself.
    async fn retrying<T, F, Fut>(
        &self,
        what: &'static str,
        mut attempt: F,
    ) -> Result<T, GithubError>
    where
        F: FnMut(bool) -> Fut,
        Fut: Future<Output = Result<T, Failed>>,
    {
        let after_ambiguous = AtomicBool::new(false);
        let too_long = Mutex::new(None);
        let result = (|| attempt(after_ambiguous.swap(false, Ordering::Relaxed)))
            .retry(self.retry.backoff())
            .sleep(tokio::time::sleep)
            .when(|failed| !matches!(failed, Failed::Final(_)))
            .adjust(|failed, backoff| {
                let (failure, now) = match failed {
                    Failed::Final(_) => return None,
                    Failed::Transport(_) => {
                        (Failure::Transport, jiff::Timestamp::now().as_second())
                    }
                    Failed::Status(answer) => (
                        Failure::Status {
                            status: answer.status,
                            headers: &answer.headers,
                            message: &answer.body,
                        },
                        answer
                            .date
                            .unwrap_or_else(|| jiff::Timestamp::now().as_second()),
                    ),
                };
                match retry::decide_after(&self.retry, failure, backoff, now) {
                    Decision::Retry(delay) => Some(delay),
                    Decision::TooLong(wait) => {
                        *too_long
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(wait);
                        None
                    }
                    Decision::GiveUp => None,
                }
            })
            .notify(|failed, _| after_ambiguous.store(failed.ambiguous(), Ordering::Relaxed))
            .await;
        match result {
            Ok(value) => Ok(value),
            Err(Failed::Final(e)) => Err(e),
            Err(Failed::Transport(detail)) => Err(GithubError::Transport { what, detail }),
            Err(Failed::Status(answer)) => {
                match *too_long
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                {
                    Some(wait) => Err(GithubError::RateLimited { what, wait }),
                    None => Err(self.status_error(what, &answer)),
                }
            }
        }
    }

    fn repo_path(&self) -> String {
        format!("/repos/{}/{}", self.repository.owner, self.repository.name)
    }

    /// The request body as JSON with every secret masked: the last line of defence.
    fn body(&self, what: &'static str, body: &impl Serialize) -> Result<Value, GithubError> {
        let value = serde_json::to_value(body).map_err(|e| GithubError::Decode {
            what,
            detail: e.to_string(),
        })?;
        Ok(redact_json(&value, &self.secrets))
    }

    /// One request, its answer decoded on success.
    async fn attempt<T: DeserializeOwned>(
        &self,
        what: &'static str,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<T, Failed> {
        let answer = self
            .send(method, path, body)
            .await
            .map_err(Failed::Transport)?;
        if !(200..300).contains(&answer.status) {
            return Err(Failed::Status(answer));
        }
        serde_json::from_str(&answer.body).map_err(|e| {
            Failed::Final(GithubError::Decode {
                what,
                detail: e.to_string(),
            })
        })
    }

    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> Result<Answer, String> {
        let response = match method {
            Method::Get => self.octo._get(path).await,
            Method::Post => self.octo._post(path, body).await,
            Method::Patch => self.octo._patch(path, body).await,
        }
        .map_err(|e| redact(&error_chain(&e), &self.secrets))?;
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        let status = response.status().as_u16();
        let headers = RateHeaders {
            retry_after: header("retry-after"),
            remaining: header("x-ratelimit-remaining"),
            reset: header("x-ratelimit-reset"),
        };
        let date = header("date").and_then(|d| retry::http_date(&d));
        let body = self
            .octo
            .body_to_string(response)
            .await
            .map_err(|e| redact(&error_chain(&e), &self.secrets))?;
        Ok(Answer {
            status,
            headers,
            date,
            body,
        })
    }

    fn status_error(&self, what: &'static str, answer: &Answer) -> GithubError {
        let message = serde_json::from_str::<Value>(&answer.body)
            .ok()
            .and_then(|v| v.get("message").and_then(Value::as_str).map(str::to_owned))
            .unwrap_or_else(|| answer.body.trim().to_owned());
        let message = if message.is_empty() {
            format!("HTTP {}", answer.status)
        } else {
            message
        };
        let message: String = redact(&message, &self.secrets)
            .chars()
            .take(MESSAGE_MAX)
            .collect();
        if answer.status == 403 && !retry::is_rate_limited(403, &answer.headers, &message) {
            GithubError::Fallback {
                what,
                status: 403,
                message,
            }
        } else {
            GithubError::Status {
                what,
                status: answer.status,
                message,
            }
        }
    }
}

/// A query-string value, percent-encoded except for unreserved characters.
fn query_value(value: &str) -> String {
    let mut out = String::new();
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(query_value("deploy"), "deploy");
        assert_eq!(
            query_value("deploy (prod) & more"),
            "deploy%20%28prod%29%20%26%20more"
        );
        assert_eq!(query_value("déploi/x"), "d%C3%A9ploi%2Fx");
    }

    fn repo() -> Repository {
        Repository {
            owner: "acme".into(),
            name: "shop".into(),
        }
    }

    #[track_caller]
    fn case_setup(token: &str, expected: &str) {
        let err =
            GithubClient::with_options(repo(), token, ClientOptions::new("https://api.github.com"))
                .unwrap_err();
        assert_eq!(err.to_string(), expected);
    }

    #[tokio::test]
    async fn bad_tokens_and_urls_are_errors_not_panics() {
        case_setup(
            "  \n",
            "failed to set up the GitHub client: the token is empty",
        );
        case_setup(
            "ghs_abc\ndef",
            "failed to set up the GitHub client: the token contains characters not allowed in an HTTP header",
        );
        let err = GithubClient::with_options(repo(), "ghs_abc", ClientOptions::new("not a url"))
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("failed to set up the GitHub client: "),
            "{err}"
        );
    }

    #[tokio::test]
    async fn the_token_never_shows_in_debug_output() {
        let token = "ghs_16C7e42F292c6912E7710c838347Ae178B4a";
        let client = GithubClient::with_options(
            repo(),
            &format!("{token}\n"),
            ClientOptions::new("https://api.github.com"),
        )
        .unwrap()
        .with_secrets(["hunter2".to_owned()]);
        let debug = format!("{client:?}");
        assert!(
            !debug.contains(token) && !debug.contains("hunter2"),
            "{debug}"
        );
        assert!(debug.contains("[2 redacted]"), "{debug}");
        assert_eq!(client.secrets(), [token.to_owned(), "hunter2".to_owned()]);
    }
}
